// SPDX-License-Identifier: GPL-2.0
/* Bench only (bench/cost.sh's floor phase): empty fexit programs on the
 * three functions bpfstderr's own fexit programs watch (the fill wake's
 * two, bpf/fill.bpf.c; the readers', bpf/readers.bpf.c). What they cost
 * is what any fexit observer there costs, the trampoline: bpfstderr's
 * programs cannot cost less.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

/* the printk kfunc's name differs by kernel: set before load */
SEC("fexit")
int BPF_PROG(floor_printk)
{
	return 0;
}

SEC("fexit/bpf_stream_stage_commit")
int BPF_PROG(floor_commit)
{
	return 0;
}

SEC("fexit/bpf_prog_stream_read")
int BPF_PROG(floor_read)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
