// SPDX-License-Identifier: GPL-2.0
/* Programs that misbehave on purpose, for `top --demo` and the live tests:
 * each run makes the kernel report one fault to the program's stderr.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include "stream_printk.h"
#include "can_loop.h"
#include "fault_arena.h"

struct locked {
	struct bpf_res_spin_lock lock;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, struct locked);
	__uint(max_entries, 1);
} locks SEC(".maps");

/* weak: a kernel without them fails the deadlock source alone */
extern int bpf_res_spin_lock(struct bpf_res_spin_lock *lock) __weak __ksym;
extern void bpf_res_spin_unlock(struct bpf_res_spin_lock *lock) __weak __ksym;


int deadlock_ret;
__u64 spins;
__u64 prints;

SEC("syscall")
int demo_arena_read(void *ctx)
{
	arena_ref = &arena;
	return *(volatile __u64 __arena *)arena_addr;
}

SEC("syscall")
int demo_arena_write(void *ctx)
{
	arena_ref = &arena;
	*(volatile __u64 __arena *)(arena_addr + 8) = 1;
	return 0;
}

int second_key;	/* 0 at run time: the verifier cannot tell both keys match */

/* Taking a held lock again through a second pointer: -EDEADLK and an AA
 * report. The same pointer twice is refused by the verifier at load.
 */
SEC("syscall")
int demo_deadlock(void *ctx)
{
	struct locked *v1, *v2;
	int zero = 0;

	v1 = bpf_map_lookup_elem(&locks, &zero);
	v2 = bpf_map_lookup_elem(&locks, &second_key);
	if (!v1 || !v2)
		return 0;
	if (bpf_res_spin_lock(&v1->lock))
		return 0;
	deadlock_ret = bpf_res_spin_lock(&v2->lock);
	if (!deadlock_ret)
		bpf_res_spin_unlock(&v2->lock);
	bpf_res_spin_unlock(&v1->lock);
	return 0;
}

/* Spins until the timed may_goto gives up (a quarter second). */
SEC("syscall")
int demo_may_goto(void *ctx)
{
	__u64 i = 0;

	while (can_loop)
		i++;
	spins = i;
	return 0;
}

SEC("syscall")
int demo_print(void *ctx)
{
	__u64 args[1] = { ++prints };

	stream_vprintk(STREAM_STDOUT, "demo: hello from stdout, run %llu\n", args, sizeof(args));
	stream_vprintk(STREAM_STDERR, "demo: warning on stderr\n", args, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
