/* SPDX-License-Identifier: GPL-2.0 */
/* Writing to a program's own stream from BPF, on every kernel that has one.
 * 6.17 named the kfunc bpf_stream_vprintk (5 args), 6.18 renamed it
 * bpf_stream_vprintk_impl, 7.x went back to bpf_stream_vprintk with 4 args
 * (no aux__prog) and _impl is no longer a kfunc.
 *
 * libbpf refuses a whole object whose kfunc extern's prototype differs
 * from the kernel's, weak or not, and libbpf 1.1 does not resolve
 * ___flavour kfunc names. So each object that prints is built twice: as
 * is (5 args: 6.17, 6.18) and with -DSTREAM_PRINTK_V4 (4 args: 7.x); user
 * space opens the build the running kernel takes (printk_skel_open() in
 * tool/health.h) and sets printk_kfunc from the kernel's BTF, and the
 * verifier drops the branch that is not taken, unresolved call included.
 */
#ifndef BPFSTDERR_STREAM_PRINTK_H
#define BPFSTDERR_STREAM_PRINTK_H

#include "stream_ids.h"

#ifdef STREAM_PRINTK_V4
extern int bpf_stream_vprintk(int stream_id, const char *fmt__str, const void *args,
			      __u32 len__sz) __weak __ksym;
#else
extern int bpf_stream_vprintk_impl(int stream_id, const char *fmt__str, const void *args,
				   __u32 len__sz, void *aux__prog) __weak __ksym;
extern int bpf_stream_vprintk(int stream_id, const char *fmt__str, const void *args,
			      __u32 len__sz, void *aux__prog) __weak __ksym;
#endif

const volatile int printk_kfunc = PRINTK_KFUNC_NONE;

static __always_inline int stream_vprintk(int stream, const char *fmt, const void *args,
					  __u32 len)
{
#ifdef STREAM_PRINTK_V4
	if (printk_kfunc == PRINTK_KFUNC_V4)
		return bpf_stream_vprintk(stream, fmt, args, len);
#else
	if (printk_kfunc == PRINTK_KFUNC_IMPL)
		return bpf_stream_vprintk_impl(stream, fmt, args, len, NULL);
	if (printk_kfunc == PRINTK_KFUNC_617)
		return bpf_stream_vprintk(stream, fmt, args, len, NULL);
#endif
	return -95;	/* -EOPNOTSUPP */
}

#endif
