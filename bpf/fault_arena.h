/* SPDX-License-Identifier: GPL-2.0 */
/* An arena with no page in it, for programs that fault on purpose: every
 * access at arena_addr faults, and the kernel reports it to the program's
 * stderr. libbpf 1.1 knows no arena maps: user space sets map_extra (the
 * arena's user address, ARENA_USER_ADDR in tool/faultsrc.h) before load.
 * A program that accesses the arena first stores &arena in arena_ref: the
 * verifier then knows which arena the program's accesses are in.
 */
#ifndef BPFSTDERR_FAULT_ARENA_H
#define BPFSTDERR_FAULT_ARENA_H

#define __arena __attribute__((address_space(1)))

struct {
	__uint(type, BPF_MAP_TYPE_ARENA);
	__uint(map_flags, BPF_F_MMAPABLE);
	__uint(max_entries, 1);
} arena SEC(".maps");

void *arena_ref;
__u64 arena_addr = 0xdead0000;

#endif
