/* SPDX-License-Identifier: GPL-2.0 */
/* Rescue: stream bytes read ahead of the pipeline while it is busy. A
 * drain hands a stream's bytes to parsing, the journal and the output a
 * batch at a time, and a storm fills a 100000-byte stream in milliseconds
 * meanwhile, and between two drains too: the kernel drops what does not
 * fit. So a thread that the fill wake (fill.h) wakes reads such a stream
 * into memory at once, and drains take those bytes in turn.
 *
 * What the thread may read: the stream a drain is handing out (inside
 * that drain's journal transaction, which orders the reads of every
 * process sharing the journal), and the streams whose read right this
 * process keeps past its commits (journal.h: RESCUE_READ). A selected
 * stream it may not read makes the notify descriptor readable, for a
 * drain of its own, which claims the right. Without a journal there is
 * nobody to keep order with: it reads every selected stream (anytime),
 * but those left to another reader (RESCUE_LEAVE, readers.h). Only
 * selected streams wake it (fill__select()).
 * The thread asks for real-time priority (SCHED_FIFO 1) where it may: it
 * only copies bytes and sleeps, and a reader that waits for a busy CPU is
 * a reader that comes too late.
 *
 * Held: bytes read from the kernel and not yet handed to the pipeline.
 * Every read of a stream, the thread's and the drain's, appends to that
 * stream's held bytes under one lock, and a drain hands out what is held
 * before anything newer: the kernel's order is kept. Never more than
 * RESCUE_MAX bytes held in all: past that the kernel keeps, and drops,
 * what comes.
 */
#ifndef BPFSTDERR_RESCUE_H
#define BPFSTDERR_RESCUE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "streamio.h"

#define RESCUE_MAX	(64 << 20)	/* bytes held, all streams */

struct rescue;
struct fill;

/* A stream past the mark: what the thread does with it. */
enum rescue_claim {
	RESCUE_ASK,	/* wake the main thread, for a drain (the default) */
	RESCUE_READ,	/* read it: this process holds its read right (journal.h) */
	RESCUE_LEAVE,	/* nothing: another process holds its read right, or reads
			 * the stream itself (readers.h)
			 */
};

/* Every call but rescue__start() takes a NULL rescue (none started): it
 * holds nothing, reads nothing, and its notify descriptor is -1.
 */

/* The thread takes f's wakes (nobody else may wait on fill__fd() then). */
int rescue__start(struct rescue **out, struct fill *f);
/* Stops and joins the thread: the held bytes stay, for the last drains. */
void rescue__stop(struct rescue *r);
/* The thread again after rescue__stop(), with what it holds. 0, -errno. */
int rescue__resume(struct rescue *r);
/* Held bytes not handed out are lost: drain first. */
void rescue__free(struct rescue *r);
/* What the thread may read: programs ids[] (sorted), streams (mask), and
 * only while there is room for what it reads downstream (room); anytime:
 * every one of them, whatever its claim.
 */
int rescue__allow(struct rescue *r, const __u32 *ids, size_t cnt, unsigned int streams, bool room,
		  bool anytime);
/* What the thread does with stream s of program id when it passes the
 * mark.
 */
int rescue__claim(struct rescue *r, __u32 id, enum stream s, enum rescue_claim c);
/* After a commit, for a RESCUE_READ stream: does the thread hold bytes of
 * it, or did it pass the mark since the last call? If not, it is
 * RESCUE_ASK's again, and the right may go.
 */
bool rescue__keep(struct rescue *r, __u32 id, enum stream s);
/* Holds bytes of program id's streams in mask (any, with mask 0: any program). */
bool rescue__holds(struct rescue *r, __u32 id, unsigned int mask);
/* One drain of stream s of program id: what is held, then the stream read
 * to its end (fd >= 0; fd < 0: the program is gone, only what is held),
 * handed to fn in order, at most STREAM_READ_BUF at a time.
 */
int rescue__drain(struct rescue *r, int fd, __u32 id, enum stream s, drain_fn fn, void *ctx);
/* Only what is held of stream s of program id, handed to fn: the stream
 * is not read.
 */
int rescue__drain_held(struct rescue *r, __u32 id, enum stream s, drain_fn fn, void *ctx);
/* Readable when a selected stream other than the one being drained passed
 * the mark, or a drain stopped at its limit with bytes left: drain again.
 * rescue__notified() empties it.
 */
int rescue__notify_fd(struct rescue *r);
void rescue__notified(struct rescue *r);

#endif
