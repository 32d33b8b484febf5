/* SPDX-License-Identifier: GPL-2.0 */
/* A stream's identity and its raw read: what every room that reads a
 * stream needs, below the drainer (stream.h) and the rescue (rescue.h).
 */
#ifndef BPFSTDERR_STREAMIO_H
#define BPFSTDERR_STREAMIO_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "../bpf/stream_ids.h"

#ifndef BPF_PROG_STREAM_READ_BY_FD
#define BPF_PROG_STREAM_READ_BY_FD 37
#endif

#define STREAM_CNT		2	/* stdout, stderr */

/* Per-stream arrays hold STREAM_CNT values, indexed by stream_idx(). */
static inline int stream_idx(enum stream s)
{
	return s - STREAM_STDOUT;
}

#define for_each_stream(s)	for ((s) = STREAM_STDOUT; (s) <= STREAM_STDERR; (s)++)
#define STREAM_MASK(s)		(1U << (s))
#define STREAM_MASK_BOTH	(STREAM_MASK(STREAM_STDOUT) | STREAM_MASK(STREAM_STDERR))

/* bpf(BPF_PROG_STREAM_READ_BY_FD): bytes copied, 0 when empty, -errno. */
ssize_t stream_read_fd(int prog_fd, enum stream s, void *buf, size_t len);

#define STREAM_READ_BUF		(64 * 1024)

/* Bytes drained from one stream; non-zero stops the drain. */
typedef int (*drain_fn)(__u32 prog_id, enum stream s, const void *buf, size_t len, void *ctx);

#endif
