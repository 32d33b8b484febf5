/* SPDX-License-Identifier: GPL-2.0 */
/* Can programs on this kernel write to their streams? Measured, not
 * guessed: a probe program writes one message and we read it back.
 */
#ifndef BPFSTDERR_HEALTH_H
#define BPFSTDERR_HEALTH_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>

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
	char cause[256];	/* what refused the probe, when known */
};

int printk_kfunc_detect(void);
const char *printk_kfunc_name(int kfunc);

struct bpf_object;
struct bpf_object_skeleton;
/* Point a printing object's skeleton at the build this kernel takes: the
 * 4-argument one (V4_BYTES, from NAME_v4_bpf) on 7.x, its own otherwise.
 */
void printk_skel_pick(struct bpf_object_skeleton *s, const void *(*v4_bytes)(size_t *sz));
/* When OBJ's kfunc externs do not match this kernel's BTF (libbpf then
 * refuses the whole object with EINVAL): says which in CAUSE, returns true.
 */
bool printk_externs_mismatch(struct bpf_object *obj, char *cause, size_t len);

/* NAME_bpf__open() for an object that prints (bpf/stream_printk.h): the
 * build of it that this kernel's print kfunc takes, printk_kfunc set.
 * Include both NAME.skel.h and NAME.v4.skel.h. NULL and errno on failure.
 */
#define printk_skel_open(name) ({						\
	struct name##_bpf *o__ = calloc(1, sizeof(*o__));			\
	int e__ = o__ ? name##_bpf__create_skeleton(o__) : -ENOMEM;		\
										\
	_Static_assert(sizeof(struct name##_bpf) == sizeof(struct name##_v4_bpf), \
		       #name ": the two builds' skeletons differ");		\
	_Static_assert(sizeof(*o__->rodata) ==					\
		       sizeof(*((struct name##_v4_bpf *)NULL)->rodata),	\
		       #name ": the two builds' rodata differ");		\
	if (!e__) {								\
		printk_skel_pick(o__->skeleton, name##_v4_bpf__elf_bytes);	\
		e__ = bpf_object__open_skeleton(o__->skeleton, NULL);		\
	}									\
	if (!e__)								\
		o__->rodata->printk_kfunc = printk_kfunc_detect();		\
	if (e__ && o__) {							\
		name##_bpf__destroy(o__);					\
		o__ = NULL;							\
	}									\
	if (e__)								\
		errno = e__ < 0 ? -e__ : e__;					\
	o__;									\
})

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
