/* SPDX-License-Identifier: GPL-2.0 */
/* The one path for stream data: drain -> reassemble/parse -> sinks.
 * Views (follow, report, top) supply a selection and a sink.
 */
#ifndef BPFSTDERR_PIPELINE_H
#define BPFSTDERR_PIPELINE_H

#include <time.h>

#include "journal.h"
#include "reasm.h"
#include "progs.h"
#include "readers.h"
#include "stream.h"
#include "symbolize.h"

struct kept;

/* A program the pipeline follows: identity and what this process read. */
/* Unseen reader: another process that reads a stream where the kernel
 * refuses tracing its reads (readers.h: no readers), so neither its name
 * nor what it read can be known. Its reads show only as accounting
 * (capacity) that left the stream between two looks at it (snapshots)
 * beyond what every bpfstderr read meanwhile: at least that many bytes
 * were read elsewhere. Bytes written and read between two looks do not
 * show. Without the read-ahead thread only (rescue.h): its reads come at
 * any time, and only drains read here between two looks.
 */
struct unseen {
	int cap;			/* capacity at the last look */
	/* bytes read by bpfstderr (this process; with a journal, every one
	 * sharing it) by some moment before that look (base), and by the
	 * end of this process's drain after it (end)
	 */
	unsigned long long base, end, obs;
	bool has_cap, has_base, has_end;
	unsigned long long bytes;	/* read elsewhere, at least */
	time_t at;			/* CLOCK_MONOTONIC s of the last such look */
	bool left;			/* left to it, and said */
};

struct tracked {
	struct jprog p;				/* p.row: 0 until the journal has it */
	int capacity[STREAM_CNT];		/* as of the last snapshot */
	/* of that, what this process's last drain did not read: never
	 * readable (messages and reports the kernel dropped); 0 when the
	 * stream was not read
	 */
	int left[STREAM_CNT];
	/* CLOCK_REALTIME ns of the last drain that found the stream full
	 * (stream_full() of the capacity before its read), 0: none; full:
	 * the last drain did
	 */
	long long full_ns[STREAM_CNT];
	bool full[STREAM_CNT];
	/* pushes the kernel refused as full, as the rescue counted them at
	 * the last drain (drainer__refused()): more since is a stream found
	 * full, which the rescue's early reads keep drains from seeing
	 */
	unsigned long long refused[STREAM_CNT];
	unsigned long long bytes_read[STREAM_CNT];
	struct reasm *reasm[STREAM_CNT];	/* journal: only during a drain */
	size_t held_before[STREAM_CNT];		/* journal: the tail it started from */
	struct kept *log[STREAM_CNT];		/* journal: this cycle's bytes */
	/* the last read found nothing: the gen of the list whose accounting
	 * it was (0: none) and when (CLOCK_MONOTONIC s); yielded: a read of
	 * the stream ever gave bytes (see stream_dry())
	 */
	unsigned long long dry_gen[STREAM_CNT];
	time_t dry_at[STREAM_CNT];
	bool yielded[STREAM_CNT];
	/* journal: this process holds the stream's read right (journal.h),
	 * claimed by a drain and kept while the rescue reads the stream
	 */
	bool claimed[STREAM_CNT];
	/* the stream is left to another process (readers.h), said for the
	 * reader with this pid + 1 (0: not left)
	 */
	__u32 left_to[STREAM_CNT];
	struct unseen unseen[STREAM_CNT];
	struct pipeline *pl;
};

struct pipe_event {
	const struct event *ev;
	const struct jprog *prog;
	struct timespec ts;		/* CLOCK_REALTIME when drained */
	/* another process read it, and it was mirrored (readers.h); NULL:
	 * a bpfstderr read it
	 */
	const struct reader_id *reader;
};

/* A sink's "not now" (pipeline_ops.sink). */
#define PIPE_SINK_LATER	JOURNAL_LATER

struct pipeline_ops {
	unsigned int streams;		/* STREAM_MASK_* */
	/* which programs to drain and, with a journal, whose events to show;
	 * programs from the journal come with id, type, load time, tag and
	 * names only
	 */
	bool (*select)(const struct prog *p, void *ctx);
	/* 0, -errno, or with a journal PIPE_SINK_LATER: not now (its output
	 * waits for room), the journal keeps it and a later cycle hands it
	 * out again, while cycles go on draining
	 */
	int (*sink)(const struct pipe_event *pe, void *ctx);	/* NULL: none */
	void (*gone)(const struct tracked *t, void *ctx);	/* after its events */
	void *ctx;
	/* when set, BPF line info is cached for every fault before the sink
	 * sees it (and, with a journal, stored there): once a program is
	 * unloaded its line info is gone
	 */
	struct symbolizer *sym;
	/* NULL: events go straight to the sink, and reads are this process's
	 * alone. Else drained events are committed to the journal first and
	 * the sink sees what the journal has, whoever drained it.
	 */
	struct journal *journal;
	bool history;			/* journal: start from its oldest event */
	/* journal: what changed in the pipeline's state ("no room: reads
	 * stopped", "reading again"), said once each; NULL: a line on stderr
	 */
	void (*notice)(const char *msg, void *ctx);
	long long since_ns, until_ns;	/* journal: event time window, 0: open */
	/* other readers (readers.h): a stream another live process reads is
	 * left to it, and said once; steal: read anyway. What they read is
	 * mirrored: its events come to the sink (and the journal) marked with
	 * the reader, before what this cycle reads. NULL: none seen.
	 */
	struct readers *readers;
	bool steal;
};

struct pipeline;

/* A loaded program's identity and names, as the journal keeps them. */
struct jprog jprog_of(const struct prog *p);

int pipeline__new(struct pipeline **out, struct drainer *d, const struct pipeline_ops *ops);
/* ops.select for views of every program (top, record). */
bool pipeline_select_all(const struct prog *p, void *ctx);
/* One cycle over a fresh snapshot: programs that went away are flushed and
 * forgotten, then every selected program with bytes accounted is drained.
 * Returns the bytes drained, or -errno.
 */
long pipeline__cycle(struct pipeline *pl, const struct prog_list *now);
/* pipeline__cycle over progs__refresh() (no owners): with the list of the
 * last cycle unchanged, only its active programs are looked at.
 */
long pipeline__cycle_fresh(struct pipeline *pl, struct progs *progs);
/* Tell the drainer's rescue (rescue.h) what it may read: the programs
 * tracked now and their streams, while the journal has room. Each cycle
 * does; call it once the rescue started. 0, or -ENOMEM.
 */
int pipeline__allow_rescue(struct pipeline *pl);
/* Read rights (journal.h) this process keeps past its commits, while its
 * rescue reads their streams: other processes leave those streams alone
 * meanwhile, so a cycle comes at least every PIPELINE_RIGHT_WAIT seconds,
 * to let each go soon after its stream is quiet (the rescue keeps one 1 s
 * past its stream's last wake: KEEP_NS in rescue.c).
 */
#define PIPELINE_RIGHT_WAIT	1.0
bool pipeline__claims(const struct pipeline *pl);
/* The rescue stopped and drained: every read right whose stream it holds
 * nothing of, and nothing read waits for a commit, goes now (a process
 * about to stop, SIGTSTP: other processes read its streams meanwhile).
 */
void pipeline__let_go(struct pipeline *pl);
/* The rescue holds bytes read ahead, for any program: a drain hands out
 * DRAIN_MAX of a stream at most (rescue.c), so a last drain after a storm
 * repeats the cycle while this is true and the cycle drained bytes (the
 * rescue stopped first); pipeline__flush() keeps, or spills, the rest.
 */
bool pipeline__holds(struct pipeline *pl);
/* Journal: the events a sink said later for (PIPE_SINK_LATER), handed
 * out now (for the end of a run, with a sink that now waits). 0, or -errno.
 */
int pipeline__catch_up(struct pipeline *pl);
/* Streams found empty are read again at the next cycle, whatever the
 * watch says: before a last drain, so that nothing another reader's race
 * (stream_dry() in pipeline.c) left waiting stays behind.
 */
void pipeline__forget_dry(struct pipeline *pl);
/* Emit everything held, as at the end of every stream. With a journal,
 * held bytes stay there for the next drainer (or are emitted once stale);
 * bytes read but not committed yet (the journal was full) get one more
 * commit, else go to a spill file that the error (journal__error()) names.
 * Call it before exiting.
 */
int pipeline__flush(struct pipeline *pl);
/* After a run failed (the sink, the journal, a signal mid-write): nothing
 * more goes to the sink, and every byte read is kept. What the rescue
 * holds (stop it first) and what waits for a commit are committed to the
 * journal, else spilled as by pipeline__flush(); without a journal they
 * go to a spill file named on stderr. 0, or -errno.
 */
int pipeline__keep(struct pipeline *pl);
/* Tracked programs, sorted by id; valid until the next cycle. */
size_t pipeline__tracked(struct pipeline *pl, struct tracked ***out);
/* The tracked program with this id, or NULL. */
struct tracked *pipeline__find(struct pipeline *pl, __u32 id);
void pipeline__free(struct pipeline *pl);

#endif
