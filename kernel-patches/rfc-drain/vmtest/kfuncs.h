/* SPDX-License-Identifier: GPL-2.0 */
/* kfuncs of 7.3.4 that the stream_consume selftest calls without declaring
 * them (the tree's bpftool puts them in vmlinux.h; Debian 12's bpftool 7.1
 * does not). The series' own kfuncs are declared by the selftest.
 */
#ifndef STREAM_CONSUME_KFUNCS
#define STREAM_CONSUME_KFUNCS
extern int bpf_stream_vprintk(int stream_id, const char *fmt__str, const void *args,
			      __u32 len__sz) __attribute__((section(".ksyms")));
extern int bpf_dynptr_copy(const struct bpf_dynptr *dst_ptr, __u64 dst_off,
			   const struct bpf_dynptr *src_ptr, __u64 src_off,
			   __u64 size) __attribute__((section(".ksyms")));
#endif
