// SPDX-License-Identifier: GPL-2.0
/* Twins, for BPF frame symbolization: twin_b.bpf.c has the same function
 * body twice, as twin_two and again as twin_one, at other lines. The
 * instructions are equal, so all three programs have one tag; only the
 * report's own program, the symbol's name and the kernel's line tell
 * them apart. No maps: nothing in the instructions differs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

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
