// SPDX-License-Identifier: GPL-2.0
/* Test program with subprograms and line info, for BPF frame symbolization. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

int counter;

static __noinline int sub_add(int x)
{
	counter += x;
	return counter * 3;
}

static __noinline int sub_mix(int x)
{
	int y = sub_add(x + 1);

	if (y > 10)
		y -= 4;
	return y ^ x;
}

SEC("syscall")
int subprogs_main(void *ctx)
{
	int a = sub_mix(2);

	a += sub_add(a);
	return a & 1;
}

char LICENSE[] SEC("license") = "GPL";
