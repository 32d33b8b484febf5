/* SPDX-License-Identifier: GPL-2.0 */
/* Fault sources: the bundled programs (bpf/demo.bpf.c) that make the
 * kernel report each kind of fault, loaded one source at a time.
 *
 * Loading a source is also the probe of whether this host can produce
 * that kind of fault: BTF says what the kernel can report, not what the
 * host lets a program do (an arena map may be refused with EPERM although
 * every BPF capability is held). doctor, top --demo and the tests load
 * through here, so what they say about a host agrees.
 */
#ifndef BPFSTDERR_FAULTSRC_H
#define BPFSTDERR_FAULTSRC_H

#include <stdbool.h>

/* libbpf 1.1 does not set arenas up: their user address is ours to pick
 * (bpf_map__set_map_extra() before load; every arena program we load).
 */
#define ARENA_USER_ADDR		0x7f0000000000ULL

enum fault_src {
	FAULT_SRC_ARENA,	/* arena page faults: needs an arena map */
	FAULT_SRC_MAY_GOTO,	/* may_goto timeouts: a timed loop */
	FAULT_SRC_RES_SPIN_LOCK,/* bpf_res_spin_lock deadlocks */
	FAULT_SRC_PRINT,	/* no fault: the demo's own messages */
	FAULT_SRC_CNT,
};

/* Why a source could not be loaded. */
struct fault_refusal {
	int err;		/* 0: loaded; else -errno */
	const char *step;	/* what the kernel refused, e.g. "creating an arena map" */
	char cause[320];	/* the likely cause, from what was measured */
};

struct fault_progs;
struct bpf_object;

/* "arena", "may_goto", "res_spin_lock", "print" */
const char *fault_src__name(enum fault_src src);
/* Does the kernel write a report for this source's faults (from BTF)? */
bool fault_src__kernel_reports(enum fault_src src);

/* Load one source's programs. On failure, *why says what was refused. */
int fault_progs__load(enum fault_src src, struct fault_progs **out, struct fault_refusal *why);
/* Load and unload: can this host produce this source's faults? */
int fault_src__probe(enum fault_src src, struct fault_refusal *why);
struct bpf_object *fault_progs__obj(const struct fault_progs *fp);
/* Run each loaded program once: one fault each (print: two messages). */
void fault_progs__run(struct fault_progs *fp);
void fault_progs__free(struct fault_progs *fp);

#endif
