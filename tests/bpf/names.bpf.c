// SPDX-License-Identifier: GPL-2.0
/* Test program whose name the kernel cuts at 15 characters. */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>

SEC("socket")
int a_program_name_longer_than_fifteen(struct __sk_buff *skb)
{
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
