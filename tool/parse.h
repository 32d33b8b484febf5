/* SPDX-License-Identifier: GPL-2.0 */
/* Stream bytes -> events. A stream is bytes without separators: messages
 * are lines, and a kernel fault report ("ERROR: ..." through the blank
 * line after "Call trace:") is one event however it was split across reads.
 */
#ifndef BPFSTDERR_PARSE_H
#define BPFSTDERR_PARSE_H

#include <stdbool.h>
#include <stddef.h>

#include "../bpf/stream_ids.h"

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
	enum fault_kind kind;
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
	char *storage;		/* all strings above point in here */
};

/* Parse one report. terminated: it ended with its blank line. Returns 0 or
 * -ENOMEM; a garbled report still parses, marked incomplete.
 */
int fault__parse(const char *text, size_t len, bool terminated, struct fault *f);
void fault__fini(struct fault *f);
const char *fault_kind_name(enum fault_kind k);

enum ev_kind {
	EV_MESSAGE,
	EV_FAULT,
};

struct event {
	enum ev_kind kind;
	enum stream stream;
	const char *text;	/* the line without its '\n', or the whole report */
	size_t len;
	bool partial;		/* a message without its '\n' (cut or flushed) */
	const struct fault *fault;
};

/* Called for each event; text is valid during the call only. Non-zero
 * stops feeding and is returned by reasm__feed/flush.
 */
typedef int (*event_fn)(const struct event *ev, void *ctx);

#define REASM_LINE_MAX		(64 * 1024)	/* longer lines come in pieces */
#define REASM_REPORT_MAX	(256 * 1024)	/* longer reports end incomplete */

struct reasm;

struct reasm *reasm__new(enum stream s, event_fn fn, void *ctx);
int reasm__feed(struct reasm *r, const void *buf, size_t len);
/* The bytes held back, not yet part of an event (a line without its '\n',
 * a report without its end). Feeding exactly these to a new reasm gives one
 * in the same state: that is how another process carries on the stream.
 * Valid until the next feed or flush.
 */
void reasm__held(const struct reasm *r, const void **buf, size_t *len);
/* The stream ended (program gone, input over): emit what is held. */
int reasm__flush(struct reasm *r);
void reasm__free(struct reasm *r);

#endif
