/* SPDX-License-Identifier: GPL-2.0 */
/* The model behind `bpfstderr top`: one row per program, refreshed from
 * the enumeration and the stream pipeline; the screen (tui.c) and batch
 * mode (top.c) only read it.
 */
#ifndef BPFSTDERR_TOP_MODEL_H
#define BPFSTDERR_TOP_MODEL_H

#include <stdbool.h>
#include <time.h>

#include "group.h"
#include "health.h"
#include "reasm.h"
#include "pipeline.h"
#include "progs.h"
#include "symbolize.h"

#define RECENT_MAX		256	/* events kept per program for the views */
#define UNLOADED_KEEP_SEC	60	/* unloaded rows stay this long, dimmed */
/* History for the detail pane's graphs: HIST_SLOTS slots of the refresh
 * interval, or of HIST_SLOT_MIN when the interval is shorter (several
 * refreshes then share a slot): 5 minutes at -d 1 or less, 300 intervals
 * beyond.
 */
#define HIST_SLOTS		300
#define HIST_SLOT_MIN		1.0	/* seconds */

struct recent {
	char *text;		/* raw bytes: a message line or a whole report */
	size_t len;
	enum stream stream;
	bool fault;
	bool partial;
	struct timespec ts;
	bool mirrored;		/* another process read it: who */
	struct reader_id who;
};

/* What a history slot sums. */
enum hist_val { HV_FAULTS, HV_MSGS, HV_RUNS, HV_RUN_NS, HV_CNT };

struct hist_slot {
	float v[HV_CNT];	/* counts; a sample straddling slots is shared by time */
	float secs;		/* seconds of the slot samples cover */
	float stats_secs;	/* of those, with runtime statistics on at both ends */
};

/* A program's history: a ring of HIST_SLOTS slots indexed by absolute
 * slot number (time / slot length); NULL while everything was 0.
 */
struct hist {
	struct hist_slot *slot;
	long long newest;		/* absolute number of the newest slot */
	double start, last;		/* CLOCK_MONOTONIC s covered; start 0: none yet */
	unsigned long long seen[HV_CNT];	/* counters at the last sample */
	bool seen_stats;
};

/* The graphs of the detail pane, each a rate over the slots it covers. */
enum top_graph { GRAPH_FAULTS, GRAPH_MSGS, GRAPH_RUNS, GRAPH_NS_RUN, GRAPH_CNT };

struct row {
	struct prog_ident ident;
	char owner[64];			/* "comm(pid)" of the first owner, +N */
	struct prog_owner *owners;	/* all of them (owner_cnt) */
	int owner_cnt;
	unsigned long long msgs[STREAM_CNT];
	unsigned long long stack_dumps;	/* bpf_stream_print_stack(): no fault, no message */
	unsigned long long faults[FAULT_KIND_CNT];
	unsigned long long fault_total;
	unsigned long long faults_at_last_tick;
	double rate;			/* faults per minute, smoothed */
	struct timespec last_fault;
	bool has_last_fault;
	bool has_streams, has_error_count;
	int capacity[STREAM_CNT];	/* the snapshot's, less what our drain read */
	/* the pipeline's (struct tracked): accounted bytes our last read to
	 * the end did not return; the last drain (by anyone, with a
	 * journal) that found the stream full, CLOCK_REALTIME ns
	 */
	int leaked[STREAM_CNT];
	long long full_ns[STREAM_CNT];
	/* pushes the kernel refused as full, as the journal counted them
	 * (the fill wake of record or follow, its keeper: top runs none);
	 * -1: none counted (how many unknown)
	 */
	long long refused[STREAM_CNT];
	bool has_drops;			/* the kernel counts what it drops */
	long long dropped_msgs[STREAM_CNT];
	long long dropped_bytes[STREAM_CNT];
	unsigned long long bytes_read[STREAM_CNT];	/* by this top, so far */
	/* events another process read, mirrored (readers.h), and the last
	 * such process
	 */
	unsigned long long mirrored[STREAM_CNT];
	struct reader_id reader[STREAM_CNT];
	long long error_count;
	bool unloaded;
	struct timespec gone_at;
	/* runtime statistics: totals, and rates over the last interval */
	bool has_stats, has_rates;
	unsigned long long runs, run_ns;
	double runs_per_s, ns_per_run, cpu_pct;
	struct recent *recent;		/* RECENT_MAX, from the first event on */
	int recent_head, recent_cnt;
	struct hist hist;
	bool hist_changed;		/* in top_model's changed list */
};

enum top_col {
	COL_ID, COL_TYPE, COL_NAME, COL_OWNER, COL_OUT, COL_ERR, COL_FAULTS,
	COL_KINDS, COL_RATE, COL_LAST, COL_RUNS, COL_NS_RUN, COL_CPU, COL_SAT, COL_CNT,
};

struct top_model {
	struct row **rows;		/* sorted by id */
	__u32 *ids;			/* rows[i]'s id: a lookup touches no row */
	size_t cnt;
	struct grouper *groups;		/* fault groups of every program */
	struct symbolizer *sym;
	struct stream_health health;
	char notice[512];		/* the journal's state when it matters (no room) */
	bool demo;
	const char *demo_refused;	/* sources the host refused, or NULL */
	char demo_where[128];		/* the kernel and machine the demo runs on */
	double interval;		/* seconds */
	unsigned long long fault_total, msg_total;
	int losing;			/* programs whose stderr lost bytes */
	/* pushes refused as counted (row.refused), every row's, and the rows
	 * with some
	 */
	unsigned long long refused_total;
	size_t refused_rows;
	struct timespec now;
	unsigned long long gen;		/* of the last list merged (progs__refresh) */
	/* bumped by whatever may change a row or total shown, or the rows
	 * themselves: the screen is drawn again only when it moved or
	 * top_model__clock_shown()
	 */
	unsigned long long version;
	unsigned long long counted_version;	/* of the totals (count_totals) */
	bool counted;
	size_t clock_rows;		/* rows showing a fault's age */
	size_t unloaded_rows, rate_rows;	/* unloaded; with a fault rate */
	bool stats;			/* runtime statistics shown */
	char stats_note[256];		/* how they were enabled, or why not */
	double slot_sec;		/* history slot length, set by the first sample */
	double sampled;			/* CLOCK_MONOTONIC s of the last sample; 0: none */
	/* Rows whose history counters moved since the last sample: only they
	 * are sampled (an idle row's history is covered up to m->sampled
	 * without being touched: on a large machine, touching a thousand
	 * idle rows a second is most of top's idle CPU). sample_all: the
	 * list cannot be trusted (rows freed, statistics switched, no room).
	 */
	struct row **changed;
	size_t changed_cnt, changed_cap;
	bool sample_all, sampled_stats;
};

/* The statistics columns show only while m->stats is on. */
bool top_col_is_stats(enum top_col c);

int top_model__init(struct top_model *m);
/* Apply one snapshot (after the pipeline cycle fed the events). */
void top_model__refresh(struct top_model *m, const struct prog_list *l);
/* The header's totals, counted again from the rows as they are now:
 * after the tick's drain, so that header and rows are one snapshot.
 */
void top_model__count(struct top_model *m);
int top_model__event(struct top_model *m, const struct pipe_event *pe);
/* A cell shown changes with the clock alone (a fault's age). */
bool top_model__clock_shown(const struct top_model *m);
/* Faults so far are history: rates count from the next tick. */
void top_model__baseline(struct top_model *m);
void top_model__clear_counts(struct top_model *m);
void top_model__fini(struct top_model *m);
/* r's history counters (faults, messages, runs, run time) moved: the
 * next sample looks at it. The model's own updates call it; so must
 * whoever else sets those counters.
 */
void top_model__row_changed(struct top_model *m, struct row *r);
/* One history sample at now (CLOCK_MONOTONIC seconds), after the tick's
 * reads: what the counters grew by since the last sample, for the rows
 * that changed; every other row's history is 0 up to now. The first
 * sample only sets where the history starts.
 */
void top_model__sample(struct top_model *m, double now);
/* Graph g of r: the history window in at most max points, oldest first,
 * each the rate over *per slots (NAN where no sample covers it); returns
 * the number of points. Points are whole slots: fewer than max at times.
 */
int top_model__graph(const struct top_model *m, const struct row *r, enum top_graph g,
		     int max, double *out, int *per);
const char *top_graph_unit(enum top_graph g);
bool top_graph_is_stats(enum top_graph g);
struct row *top_model__find(struct top_model *m, __u32 id);
struct gprog *top_model__groups_of(struct top_model *m, const struct row *r);

/* Rows to show: filtered and sorted; *out is malloc'd. */
size_t top_model__view(struct top_model *m, const char *filter, enum top_col sort,
		       bool reverse, struct row ***out);

const char *top_col_name(enum top_col c);
int top_col_from_name(const char *s);
/* Column text, terminal-safe; buf at least 128 bytes. */
void top_cell(const struct top_model *m, const struct row *r, enum top_col c, char *buf, size_t len);
/* Is the program losing reports? Counted by the kernel when it has the
 * drop counters, else bytes accounted and never readable.
 */
bool row_losing(const struct row *r);
/* Pushes to the row's streams refused as counted (row.refused > 0). */
unsigned long long row_refused(const struct row *r);
/* 0..1 of the stream limit, for the saturation bar. */
double row_saturation(const struct row *r);
const char *row_kinds(const struct row *r, char *buf, size_t len);

#endif
