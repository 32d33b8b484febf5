// SPDX-License-Identifier: GPL-2.0
/* Stream reassembly: bytes, however they were cut into reads, back into
 * messages (lines) and whole fault reports (fault.h says where one ends).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "reasm.h"

enum rep_state {
	REP_NONE,
	REP_HEADER,	/* ERROR: line seen, before "Call trace:" */
	REP_TRACE,	/* frames */
	REP_STACK,	/* a stack dump's "CPU: " line seen, "Call trace:" next */
};

#define REP_HEADER_LINES_MAX 40

struct reasm {
	enum stream stream;
	event_fn fn;
	void *ctx;
	char *buf;
	size_t len, cap;
	size_t line;		/* first byte not yet looked at as a line */
	size_t rep;		/* where the open report starts */
	enum rep_state state;
	bool stack;		/* the open report is a stack dump */
	int header_lines;
	struct fault fault;	/* reused: no allocation per report */
};

struct reasm *reasm__new(enum stream stream, event_fn fn, void *ctx)
{
	struct reasm *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->stream = stream;
	r->fn = fn;
	r->ctx = ctx;
	return r;
}

void reasm__free(struct reasm *r)
{
	if (!r)
		return;
	fault__fini(&r->fault);
	free(r->buf);
	free(r);
}

static int emit_message(struct reasm *r, size_t start, size_t end, bool partial)
{
	struct event ev = {
		.kind = EV_MESSAGE, .stream = r->stream,
		.text = r->buf + start, .len = end - start, .partial = partial,
	};

	return r->fn(&ev, r->ctx);
}

static int emit_report(struct reasm *r, size_t end, bool terminated)
{
	struct event ev = {
		.kind = r->stack ? EV_STACK : EV_FAULT, .stream = r->stream,
		.text = r->buf + r->rep, .len = end - r->rep,
	};
	int err;

	r->state = REP_NONE;
	err = fault__reparse(ev.text, ev.len, terminated, &r->fault);
	if (err)
		return err;
	ev.fault = &r->fault;
	return r->fn(&ev, r->ctx);
}

static int start_report(struct reasm *r, size_t start, bool stack)
{
	r->rep = start;
	r->state = stack ? REP_STACK : REP_HEADER;
	r->stack = stack;
	r->header_lines = 0;
	return 0;
}

static int handle_line(struct reasm *r, size_t s, size_t e);

/* A "CPU: " line not followed by "Call trace:" was a message after all. */
static int not_stack(struct reasm *r, size_t s, size_t e)
{
	int err;

	r->state = REP_NONE;
	err = emit_message(r, r->rep, s - 1, false);
	return err ? err : handle_line(r, s, e);
}

/* The open report ends before line s, which is then looked at afresh. */
static int cut_report(struct reasm *r, size_t s, size_t e)
{
	int err = emit_report(r, s, false);

	return err ? err : handle_line(r, s, e);
}

/* Line [s, e), e is the '\n'. */
static int handle_line(struct reasm *r, size_t s, size_t e)
{
	const char *p = r->buf + s;
	size_t n = e - s;
	/* the kernel reports faults to stderr only */
	bool error_line = r->stream == STREAM_STDERR && fault_line_starts_report(p, n);
	int err;

	switch (r->state) {
	case REP_NONE:
		if (error_line)
			return start_report(r, s, false);
		/* bpf_stream_print_stack() writes to either stream */
		if (fault_line_starts_stack(p, n))
			return start_report(r, s, true);
		for (; e - s > REASM_LINE_MAX; s += REASM_LINE_MAX) {
			err = emit_message(r, s, s + REASM_LINE_MAX, true);
			if (err)
				return err;
		}
		return emit_message(r, s, e, false);
	case REP_HEADER:
		if (!n)
			return emit_report(r, e + 1, true);
		if (error_line || !fault_line_is_header(p, n) || ++r->header_lines > REP_HEADER_LINES_MAX)
			return cut_report(r, s, e);
		if (fault_line_starts_trace(p, n))
			r->state = REP_TRACE;
		return 0;
	case REP_STACK:
		if (!fault_line_starts_trace(p, n) || n != strlen("Call trace:"))
			return not_stack(r, s, e);
		r->state = REP_TRACE;
		return 0;
	case REP_TRACE:
		if (!n)
			return emit_report(r, e + 1, true);
		if (error_line || !fault_line_is_frame(p, n))
			return cut_report(r, s, e);
		return 0;
	}
	return 0;
}

static int reserve(struct reasm *r, size_t more)
{
	size_t cap = r->cap ? r->cap : 4096;
	char *tmp;

	while (cap < r->len + more)
		cap *= 2;
	if (cap == r->cap)
		return 0;
	tmp = realloc(r->buf, cap);
	if (!tmp)
		return -ENOMEM;
	r->buf = tmp;
	r->cap = cap;
	return 0;
}

/* Drop what no event needs any more. */
static void compact(struct reasm *r)
{
	size_t keep = r->state != REP_NONE ? r->rep : r->line;

	if (!keep)
		return;
	memmove(r->buf, r->buf + keep, r->len - keep);
	r->len -= keep;
	r->line -= keep;
	if (r->state != REP_NONE)
		r->rep -= keep;
}

/* Over-long lines and reports: no unbounded growth, nothing lost. */
static int enforce_limits(struct reasm *r)
{
	int err;

	if (r->state != REP_NONE && r->len - r->rep > REASM_REPORT_MAX)
		return emit_report(r, r->line, false);
	while (r->state == REP_NONE && r->len - r->line > REASM_LINE_MAX) {
		err = emit_message(r, r->line, r->line + REASM_LINE_MAX, true);
		if (err)
			return err;
		r->line += REASM_LINE_MAX;
	}
	return 0;
}

int reasm__feed(struct reasm *r, const void *buf, size_t len)
{
	char *nl;
	int err;

	err = reserve(r, len);
	if (err)
		return err;
	memcpy(r->buf + r->len, buf, len);
	r->len += len;
	while ((nl = memchr(r->buf + r->line, '\n', r->len - r->line))) {
		size_t e = nl - r->buf, s = r->line;

		r->line = e + 1;
		err = handle_line(r, s, e);
		if (err)
			return err;
	}
	err = enforce_limits(r);
	compact(r);
	return err;
}

void reasm__held(const struct reasm *r, const void **buf, size_t *len)
{
	*buf = r->buf;
	*len = r->len;
}

int reasm__flush(struct reasm *r)
{
	int err = 0;

	if (r->state == REP_STACK) {	/* a lone "CPU: " line: a message */
		r->state = REP_NONE;
		err = emit_message(r, r->rep, r->line - 1, false);
	}
	if (!err && r->state != REP_NONE)
		err = emit_report(r, r->len, false);
	else if (!err && r->line < r->len)
		err = emit_message(r, r->line, r->len, true);
	r->len = r->line = r->rep = 0;
	r->state = REP_NONE;
	return err;
}
