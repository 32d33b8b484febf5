// SPDX-License-Identifier: GPL-2.0
/* Spinning twins for the kernel lab (tests/vm/guest/twins.sh): spin_a and
 * spin_b.bpf.c both have twin_spin, the same code at other lines, so one
 * tag and one name; each run ends in a real may_goto timeout report in
 * its own stderr. Only the report's own program tells them apart.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "can_loop.h"

SEC("syscall")
int twin_spin(void *ctx)
{
	__u64 i = 0;

	while (can_loop)
		i++;	/* spin_a: the loop */
	return i & 1;
}

char LICENSE[] SEC("license") = "GPL";
