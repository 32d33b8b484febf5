// SPDX-License-Identifier: GPL-2.0
/* doctor's stream-write probe: one message to its own stdout, and the
 * write's return value for user space to judge.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "stream_printk.h"

#define PROBE_MSG "bpfstderr stream probe\n"

int write_ret = 1;	/* 1: never ran */

SEC("syscall")
int stream_probe(void *ctx)
{
	__u64 args[1] = {};

	write_ret = stream_vprintk(STREAM_STDOUT, PROBE_MSG, args, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
