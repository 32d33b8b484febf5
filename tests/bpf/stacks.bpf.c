// SPDX-License-Identifier: GPL-2.0
/* Two shapes of kernel output that only a real kernel shows, for the lab
 * (tests/vm/guest/stacks.sh):
 *
 * stacks_print dumps its own stack to stderr with bpf_stream_print_stack()
 * (7.x); user space sets has_print_stack from the kernel's BTF, and where
 * the kernel has no such kfunc the verifier drops the call.
 *
 * stacks_timer starts a bpf_timer whose callback takes an arena fault
 * (no arena page is ever allocated). With timer_ns 0 it then spins, so
 * that the timer's interrupt lands inside this very program; with a
 * delay and no spin (spin_for 0), it lands wherever the CPU is then. The
 * report's interrupted frames differ between the two, while the place of
 * the fault does not.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "can_loop.h"
#include "stream_ids.h"
#include "fault_arena.h"

#define CLOCK_MONOTONIC	1

struct timed {
	struct bpf_timer timer;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, struct timed);
	__uint(max_entries, 1);
} timers SEC(".maps");

/* 7.x: the program's aux is an implicit argument */
extern int bpf_stream_print_stack(int stream_id) __weak __ksym;

const volatile bool has_print_stack;
__u64 callbacks;
__u64 seen;
__u64 spins;
__u64 spin_for = 200000;	/* a global: the verifier does not walk each turn */
__u64 timer_ns;

SEC("syscall")
int stacks_print(void *ctx)
{
	if (!has_print_stack)
		return -1;
	return bpf_stream_print_stack(STREAM_STDERR);
}

static int timer_fault(void *map, int *key, struct timed *t)
{
	arena_ref = &arena;
	callbacks++;
	seen += *(volatile __u64 __arena *)arena_addr;
	return 0;
}

SEC("syscall")
int stacks_timer(void *ctx)
{
	struct timed *t;
	__u64 end;
	int key = 0;

	t = bpf_map_lookup_elem(&timers, &key);
	if (!t)
		return 1;
	bpf_timer_init(&t->timer, &timers, CLOCK_MONOTONIC);	/* -EBUSY after the first run */
	bpf_timer_set_callback(&t->timer, timer_fault);
	if (bpf_timer_start(&t->timer, timer_ns, 0))
		return 2;
	end = spins + spin_for;
	while (spins < end && can_loop)
		spins++;
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
