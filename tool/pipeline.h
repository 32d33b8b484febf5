/* SPDX-License-Identifier: GPL-2.0 */
/* The one path for stream data: drain -> reassemble/parse -> sinks.
 * Views (follow, report, top) supply a selection and a sink.
 */
#ifndef BPFSTDERR_PIPELINE_H
#define BPFSTDERR_PIPELINE_H

#include <time.h>

#include "parse.h"
#include "progs.h"
#include "stream.h"
#include "symbolize.h"

/* A program the pipeline follows: identity and what bpfstderr has seen. */
struct tracked {
	__u32 id;
	__u32 type;
	__u64 load_time_ns;
	char tag[17];
	char name[256];
	int capacity[STREAM_CNT];		/* as of the last snapshot */
	unsigned long long bytes_read[STREAM_CNT];
	unsigned long long messages[STREAM_CNT];
	unsigned long long faults[FAULT_KIND_CNT];
	struct reasm *reasm[STREAM_CNT];
	struct pipeline *pl;
};

struct pipe_event {
	const struct event *ev;
	const struct tracked *prog;
	struct timespec ts;		/* CLOCK_REALTIME when drained */
};

struct pipeline_ops {
	unsigned int streams;		/* STREAM_MASK_* */
	bool (*select)(const struct prog *p, void *ctx);
	int (*sink)(const struct pipe_event *pe, void *ctx);
	void (*gone)(const struct tracked *t, void *ctx);	/* after its flush */
	void *ctx;
	/* when set, BPF line info is cached for every fault before the sink
	 * sees it: once a program is unloaded its line info is gone
	 */
	struct symbolizer *sym;
};

struct pipeline;

int pipeline__new(struct pipeline **out, struct drainer *d, const struct pipeline_ops *ops);
/* One cycle over a fresh snapshot: programs that went away are flushed and
 * forgotten, then every selected program with bytes accounted is drained.
 * Returns the bytes drained, or -errno.
 */
long pipeline__cycle(struct pipeline *pl, const struct prog_list *now);
/* Emit everything held, as at the end of every stream. */
int pipeline__flush(struct pipeline *pl);
/* Tracked programs, sorted by id; valid until the next cycle. */
size_t pipeline__tracked(struct pipeline *pl, struct tracked ***out);
void pipeline__free(struct pipeline *pl);

#endif
