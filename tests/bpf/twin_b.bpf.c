// SPDX-License-Identifier: GPL-2.0
/* The other twin (see twin_a.bpf.c): the same body, as twin_two and as
 * twin_one, each at lines of its own.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

/* Blank lines keep these bodies' lines apart from twin_a.bpf.c's. */




SEC("syscall")
int twin_two(int *ctx)
{
	int a = ctx[0];

	a = a * 7 + 3;
	if (a > 100)
		a -= ctx[1];
	return a ^ 5;
}




SEC("syscall")
int twin_one(int *ctx)
{
	int a = ctx[0];

	a = a * 7 + 3;
	if (a > 100)
		a -= ctx[1];
	return a ^ 5;
}

char LICENSE[] SEC("license") = "GPL";
