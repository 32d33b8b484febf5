/* SPDX-License-Identifier: GPL-2.0 */
/* Constants both sides agree on. */
#ifndef BPFSTDERR_STREAM_IDS_H
#define BPFSTDERR_STREAM_IDS_H

/* A program's stream, by the kernel's id (enum bpf_stream_id). User space
 * indexes per-stream arrays with stream_idx() (tool/stream.h).
 */
enum stream {
	STREAM_STDOUT = 1,	/* BPF_STDOUT */
	STREAM_STDERR = 2,	/* BPF_STDERR */
};

/* Which stream-write kfunc the kernel has (see stream_printk.h). */
#define PRINTK_KFUNC_NONE	0
#define PRINTK_KFUNC_IMPL	1	/* 6.18+: bpf_stream_vprintk_impl */
#define PRINTK_KFUNC_617	2	/* 6.17: bpf_stream_vprintk, 5 args */
#define PRINTK_KFUNC_V4		3	/* 7.x: bpf_stream_vprintk, 4 args */

#endif
