/* SPDX-License-Identifier: GPL-2.0 */
/* Can programs on this kernel write to their streams? Measured, not
 * guessed: a probe program writes one message and we read it back.
 */
#ifndef BPFSTDERR_HEALTH_H
#define BPFSTDERR_HEALTH_H

#include <stdbool.h>

enum write_health {
	WRITE_UNTESTED,		/* probe could not run (see err) */
	WRITE_UNSUPPORTED,	/* no stream-write kfunc in this kernel */
	WRITE_WORKS,
	WRITE_ENOMEM,		/* allocator failing: everything is dropped */
	WRITE_ENOSPC,		/* stream full */
	WRITE_LOST,		/* write said 0, read returned nothing */
	WRITE_FAILS,		/* another error */
};

struct stream_health {
	enum write_health verdict;
	int printk_kfunc;	/* PRINTK_KFUNC_* */
	int write_ret;		/* what the kfunc returned */
	int read_ret;		/* bytes read back, or -errno */
	/* After a failed write: the bytes it still charged to the stream's
	 * capacity (> 0: the loss shows as leaked capacity), 0 when it left no
	 * trace, -1 when not measured. Kernels differ (design.md section 4).
	 */
	int charged;
	int err;		/* why the probe could not run */
};

int printk_kfunc_detect(void);
const char *printk_kfunc_name(int kfunc);

int stream_health__probe(struct stream_health *h);
const char *stream_health__label(const struct stream_health *h);
/* One sentence on what it means for the user. */
const char *stream_health__meaning(const struct stream_health *h);
/* Writes fail and leave no trace: no counter shows what is dropped. */
static inline bool stream_health__untraced(const struct stream_health *h)
{
	return h->verdict != WRITE_WORKS && h->verdict != WRITE_UNTESTED && !h->charged;
}

#endif
