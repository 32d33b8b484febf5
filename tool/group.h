/* SPDX-License-Identifier: GPL-2.0 */
/* Fault groups: the same kind at the same place.
 *
 * A group's signature is the fault kind, the lock function for lock
 * faults, and the stretch of the call trace from the innermost to the
 * outermost BPF frame that called it: BPF frames by tag, function and
 * source line (the jited offset when there is no line info), kernel frames
 * within that stretch (kfuncs, helpers, callbacks) by name without offset.
 * Frames of the reporting machinery above the innermost BPF frame (stack
 * dump, report helpers, exception handling) and everything below the
 * outermost BPF frame (test run, syscall or attach point) are left out,
 * and so is everything from an interrupt or exception entry (asm_*, arm64
 * el1h_64_*) on: what an interrupt interrupted (a timer callback's
 * interrupt landing in kernel code or in another BPF frame) is not the
 * place. So one fault from different CPUs, tasks, callers and interrupted
 * code is one group, and the same kind at another source line is another.
 * A report without BPF frames uses its kernel frames by name.
 */
#ifndef BPFSTDERR_GROUP_H
#define BPFSTDERR_GROUP_H

#include <stdint.h>
#include <time.h>

#include "reasm.h"
#include "progs.h"
#include "readers.h"

#define GROUP_SET_MAX 64	/* distinct pids/cpus remembered per group */

/* The addresses of a group's arena faults: exact range, the first one,
 * and how many distinct (counted up to GROUP_SET_MAX).
 */
struct addr_set {
	unsigned long long v[GROUP_SET_MAX];
	int cnt;
	bool overflow;			/* more than GROUP_SET_MAX distinct */
	unsigned long long first, min, max;
};

struct fgroup {
	uint64_t hash;
	char *signature;
	enum fault_kind kind;
	unsigned long long count;
	struct timespec first, last;
	int pids[GROUP_SET_MAX], pid_cnt;
	int cpus[GROUP_SET_MAX], cpu_cnt;
	bool sets_overflow;
	struct addr_set addrs;		/* arena faults only: cnt 0 otherwise */
	char *example;		/* the first report's text */
	size_t example_len;
};

/* What bpfstderr saw of one program. */
/* Events of one stream another process read, mirrored (readers.h). */
struct gread {
	struct reader_id who;
	enum stream stream;
	unsigned long long faults, messages;	/* stack dumps count as messages */
	unsigned long long bytes;	/* of their text, a message's newline included */
};

struct gprog {
	struct prog_ident ident;	/* id 0: from --input, keyed by tag and name */
	bool has_type;
	const char *input;	/* the dump it was read from (--input) */
	unsigned long long faults[FAULT_KIND_CNT];
	unsigned long long fault_total;
	unsigned long long messages[STREAM_CNT];
	/* bpf_stream_print_stack() dumps: not faults, not messages */
	unsigned long long stack_dumps;
	char *stack_example;	/* the latest dump's text */
	size_t stack_example_len;
	unsigned long long bytes_read[STREAM_CNT];
	long long full_ns[STREAM_CNT];	/* a drain found it full (jprog.full_ns) */
	long long refused[STREAM_CNT];	/* jprog.refused; -1: none counted */
	struct fgroup *groups;
	int group_cnt;
	struct gread *reads;	/* by reader and stream, in the order first seen */
	int read_cnt;
};

struct grouper;

struct grouper *grouper__new(void);
/* The program an event belongs to; created on first use. */
struct gprog *grouper__prog(struct grouper *g, __u32 id, const char *tag, const char *name);
int grouper__add_fault(struct grouper *g, struct gprog *p, const struct event *ev,
		       const struct timespec *ts);
void grouper__add_message(struct gprog *p, const struct event *ev);
/* An event another process read (who), counted for it: 0 or -ENOMEM. */
int grouper__add_read(struct gprog *p, const struct event *ev, const struct reader_id *who);
/* An EV_STACK event: counted, and kept as the program's latest dump. */
int grouper__add_stack(struct gprog *p, const struct event *ev);
/* Programs, and each one's groups, sorted for display: most faults first. */
size_t grouper__sorted(struct grouper *g, struct gprog ***out);
void grouper__free(struct grouper *g);

/* The signature of a fault, as documented above; caller frees. */
char *fault_signature(const struct fault *f);

#endif
