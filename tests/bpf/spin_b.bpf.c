// SPDX-License-Identifier: GPL-2.0
/* The other spinning twin (see spin_a.bpf.c). */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "can_loop.h"

/* Blank lines keep this body's lines apart from spin_a.bpf.c's. */






SEC("syscall")
int twin_spin(void *ctx)
{
	__u64 i = 0;

	while (can_loop)
		i++;	/* spin_b: the loop */
	return i & 1;
}

char LICENSE[] SEC("license") = "GPL";
