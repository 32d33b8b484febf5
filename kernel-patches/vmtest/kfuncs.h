/* SPDX-License-Identifier: GPL-2.0 */
/* kfuncs the stream_drop selftest calls: the tree's bpftool puts these in
 * vmlinux.h; Debian 12's bpftool 7.1 does not, so they are added here. */
#ifndef STREAM_DROP_KFUNCS
#define STREAM_DROP_KFUNCS
extern int bpf_stream_vprintk(int stream_id, const char *fmt__str, const void *args,
			      __u32 len__sz) __attribute__((section(".ksyms")));
extern int bpf_res_spin_lock(struct bpf_res_spin_lock *lock) __attribute__((section(".ksyms")));
extern void bpf_res_spin_unlock(struct bpf_res_spin_lock *lock) __attribute__((section(".ksyms")));
#endif
