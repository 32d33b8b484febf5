/* SPDX-License-Identifier: GPL-2.0 */
/* One kernel fault report -> its fields: kind, address or lock, task,
 * and frames. A report is "ERROR: ..." through the blank line after
 * "Call trace:" (the kernel's format; seeds 006-009).
 */
#ifndef BPFSTDERR_FAULT_H
#define BPFSTDERR_FAULT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum fault_kind {
	FAULT_UNKNOWN,		/* an ERROR: header this version does not know */
	FAULT_ARENA_READ,
	FAULT_ARENA_WRITE,
	FAULT_MAY_GOTO,
	FAULT_LOCK_DEADLOCK,	/* AA or ABBA deadlock */
	FAULT_LOCK_TIMEOUT,
	FAULT_KIND_CNT,
};

struct frame {
	const char *sym;	/* as printed; NULL when the line did not parse */
	const char *raw;	/* the frame line, leading blanks stripped */
	unsigned long long off, size;
	bool has_off;
	const char *module;	/* " [mod]"; NULL for vmlinux */
	bool is_bpf;		/* bpf_prog_<16 hex tag>_<func> */
	char tag[17];
	const char *func;	/* BPF: the name after the tag */
	const char *src_text;	/* upstream: "  <source> @ file:NN" */
	const char *src_file;	/* upstream and RFC (": [file:NN]") */
	int src_line;
};

#define FAULT_HELD_MAX 32

struct fault {
	enum fault_kind kind;	/* FAULT_UNKNOWN for a stack dump */
	/* bpf_stream_print_stack() (7.x): "CPU: ...", "Call trace:", frames,
	 * no "ERROR:" header. Not a fault: a program's own dump of its stack.
	 */
	bool stack_dump;
	const char *header;	/* the text after "ERROR: " */
	bool rfc_format;	/* frames with a leading blank, ": [file:NN]" */
	bool incomplete;	/* truncated or garbled; kept all the same */
	unsigned long long addr;		/* arena faults */
	const char *lock_func;			/* bpf_res_spin_lock[_irqsave] */
	bool has_attempted;
	unsigned long long attempted_lock;
	int held_cnt;				/* "Total held locks", -1 if absent */
	int held_listed;
	unsigned long long held[FAULT_HELD_MAX];
	bool has_task;
	int cpu, uid, pid;
	const char *comm;
	struct frame *frames;
	int frame_cnt;
	/* Non-zero: the frames are those of every other fault with this id
	 * (the same call trace, byte for byte), parsed once by
	 * fault__reparse(). 0: not known.
	 */
	uint64_t trace_id;
	char *storage;		/* all strings above point in here */
	size_t storage_cap;	/* kept by fault__reparse() */
	struct frame *frame_buf;	/* frames, unless lent by the memo */
	int frame_cap;
	struct fault_memo *memo;	/* traces seen by fault__reparse() */
	bool no_memo;		/* fault__parse(): no memo */
};

/* Parse one report. terminated: it ended with its blank line. Returns 0 or
 * -ENOMEM; a garbled report still parses, marked incomplete.
 */
int fault__parse(const char *text, size_t len, bool terminated, struct fault *f);
/* The same into a struct fault that was zeroed or parsed before, reusing
 * its buffers: no allocation per report once they are large enough (the
 * --input path parses millions). fault__fini() frees as usual.
 */
int fault__reparse(const char *text, size_t len, bool terminated, struct fault *f);
void fault__fini(struct fault *f);
const char *fault_kind_name(enum fault_kind k);

/* The report format, for reassembly (reasm.c) to tell where one ends. */
bool fault_line_starts_report(const char *s, size_t len);	/* "ERROR: " */
/* "CPU: N UID: N PID: N Comm: X": how a stack dump starts */
bool fault_line_starts_stack(const char *s, size_t len);
bool fault_line_starts_trace(const char *s, size_t len);	/* "Call trace:" */
/* "CPU: ...", "key = value", "Key: value", "Call trace:" */
bool fault_line_is_header(const char *s, size_t len);
/* a frame "sym+0x../0x..", an RFC frame, a bare address, a source line */
bool fault_line_is_frame(const char *s, size_t len);

#endif
