/* SPDX-License-Identifier: GPL-2.0 */
/* Stream bytes -> events. A stream is bytes without separators: messages
 * are lines, and a kernel fault report is one event however it was split
 * across reads.
 */
#ifndef BPFSTDERR_REASM_H
#define BPFSTDERR_REASM_H

#include <stdbool.h>
#include <stddef.h>

#include "../bpf/stream_ids.h"
#include "fault.h"

enum ev_kind {
	EV_MESSAGE,
	EV_FAULT,
	EV_STACK,	/* bpf_stream_print_stack(): fault has stack_dump set */
};

struct event {
	enum ev_kind kind;
	enum stream stream;
	const char *text;	/* the line without its '\n', or the whole report */
	size_t len;
	bool partial;		/* a message without its '\n' (cut or flushed) */
	const struct fault *fault;	/* EV_FAULT and EV_STACK */
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
