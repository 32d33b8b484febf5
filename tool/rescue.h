/* SPDX-License-Identifier: GPL-2.0 */
/* Rescue: stream bytes read ahead of the pipeline. A reader that is busy
 * processing what it read last (parsing, symbolizing, committing) does not
 * read, and a storm fills a 100000-byte stream in milliseconds: the kernel
 * drops what does not fit. So a thread that the fill wake (fill.h) wakes
 * reads a stream that passed FILL_MARK into memory at once.
 *
 * Held: bytes read from the kernel and not yet handed to the pipeline.
 * Every read of a stream, the thread's and the drain's, appends to that
 * stream's held bytes under one lock, and a drain hands out what is held
 * before anything newer: the kernel's order is kept. The thread reads
 * only what it may (rescue__allow()), and never more than RESCUE_MAX bytes
 * held in all: past that the kernel keeps, and drops, what comes.
 */
#ifndef BPFSTDERR_RESCUE_H
#define BPFSTDERR_RESCUE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "stream.h"

#define RESCUE_MAX	(64 << 20)	/* bytes held, all streams */

struct rescue;
struct fill;

/* The thread takes f's wakes (nobody else may wait on fill__fd() then). */
int rescue__start(struct rescue **out, struct fill *f);
/* Stops and joins the thread: the held bytes stay, for the last drains. */
void rescue__stop(struct rescue *r);
/* Held bytes not handed out are lost: drain first. */
void rescue__free(struct rescue *r);
/* What the thread may read: programs ids[] (sorted), streams (mask), and
 * only while there is room for what it reads downstream (room).
 */
int rescue__allow(struct rescue *r, const __u32 *ids, size_t cnt, unsigned int streams, bool room);
/* Holds bytes of program id's streams in mask (any, with mask 0: any program). */
bool rescue__holds(struct rescue *r, __u32 id, unsigned int mask);
/* One drain of stream s of program id: what is held, then the stream read
 * to its end (fd >= 0; fd < 0: the program is gone, only what is held),
 * handed to fn in order, at most STREAM_READ_BUF at a time.
 */
int rescue__drain(struct rescue *r, int fd, __u32 id, enum stream s, drain_fn fn, void *ctx);
/* Bytes the thread read since start. */
unsigned long long rescue__rescued(struct rescue *r);

#endif
