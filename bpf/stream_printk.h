/* SPDX-License-Identifier: GPL-2.0 */
/* Writing to a program's own stream from BPF, on every kernel that has one.
 * 6.17 named the kfunc bpf_stream_vprintk (5 args), 6.18 renamed it
 * bpf_stream_vprintk_impl. Both are weak; user space sets printk_kfunc
 * from the kernel's BTF before load, and the verifier drops the branch
 * that is not taken, unresolved call included.
 */
#ifndef BPFSTDERR_STREAM_PRINTK_H
#define BPFSTDERR_STREAM_PRINTK_H

#include "stream_ids.h"

extern int bpf_stream_vprintk_impl(int stream_id, const char *fmt__str, const void *args,
				   __u32 len__sz, void *aux__prog) __weak __ksym;
extern int bpf_stream_vprintk(int stream_id, const char *fmt__str, const void *args,
			      __u32 len__sz, void *aux__prog) __weak __ksym;

const volatile int printk_kfunc = PRINTK_KFUNC_NONE;

static __always_inline int stream_vprintk(int stream, const char *fmt, const void *args,
					  __u32 len)
{
	if (printk_kfunc == PRINTK_KFUNC_IMPL)
		return bpf_stream_vprintk_impl(stream, fmt, args, len, NULL);
	if (printk_kfunc == PRINTK_KFUNC_617)
		return bpf_stream_vprintk(stream, fmt, args, len, NULL);
	return -95;	/* -EOPNOTSUPP */
}

#endif
