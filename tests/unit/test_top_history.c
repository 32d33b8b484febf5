// SPDX-License-Identifier: GPL-2.0
/* The history behind top's graphs: samples shared among time slots, the
 * ring, and the points a graph of any width is drawn from. Oracle: the
 * rate each sample implies, integrated millisecond by millisecond over
 * each point's time here (sample times sit on that grid, so the sums are
 * exact), not the product's overlap arithmetic.
 */
#include <math.h>
#include <stdlib.h>

#include "top_model.h"
#include "unit.h"

#define T0_MS		1000000LL	/* monotonic time of the first sample, ms */
#define MAX_SAMPLES	4096

/* What a row's counters were at each sample: the test's own record. */
struct trace {
	long long ms[MAX_SAMPLES];
	double faults[MAX_SAMPLES], runs[MAX_SAMPLES], run_ns[MAX_SAMPLES];
	bool stats[MAX_SAMPLES];
	int n;
};

static struct prog prog(__u32 id, __u64 load_time)
{
	struct prog p = { .ident = { .id = id, .load_time_ns = load_time } };

	snprintf(p.ident.tag, sizeof(p.ident.tag), "%016llx", (unsigned long long)load_time);
	snprintf(p.ident.name, sizeof(p.ident.name), "p%u", id);
	return p;
}

static void model(struct top_model *m, double interval, struct prog *v, size_t cnt)
{
	struct prog_list l = { .progs = v, .cnt = cnt };

	if (top_model__init(m))
		abort();
	m->interval = interval;
	top_model__refresh(m, &l);
}

/* The row's counters as the pipeline and the snapshot set them (and say
 * so, as the model's own updates do), then a sample, recorded in tr.
 */
static void sample(struct top_model *m, struct row *r, struct trace *tr, long long ms,
		   unsigned long long faults, bool stats, unsigned long long runs,
		   unsigned long long run_ns)
{
	r->fault_total = faults;
	r->has_stats = stats;
	r->runs = runs;
	r->run_ns = run_ns;
	top_model__row_changed(m, r);
	top_model__sample(m, ms / 1000.0);
	if (!tr || tr->n >= MAX_SAMPLES)
		return;
	tr->ms[tr->n] = ms;
	tr->faults[tr->n] = faults;
	tr->runs[tr->n] = runs;
	tr->run_ns[tr->n] = run_ns;
	tr->stats[tr->n] = stats;
	tr->n++;
}

/* The oracle: graph g over [lo_ms, hi_ms), from the trace alone. */
static double expect(const struct trace *tr, enum top_graph g, long long lo_ms, long long hi_ms)
{
	double count = 0, covered = 0, stats_covered = 0, runs = 0, ns = 0, span;
	long long t;
	int i = 1;

	for (t = lo_ms; t < hi_ms; t++) {
		while (i < tr->n && tr->ms[i] <= t)
			i++;
		if (i >= tr->n || t < tr->ms[0])
			continue;
		/* millisecond [t, t + 1) lies in sample i's span */
		span = tr->ms[i] - tr->ms[i - 1];

		covered += 1;
		count += (tr->faults[i] - tr->faults[i - 1]) / span;
		if (tr->stats[i] && tr->stats[i - 1]) {
			stats_covered += 1;
			runs += (tr->runs[i] - tr->runs[i - 1]) / span;
			ns += (tr->run_ns[i] - tr->run_ns[i - 1]) / span;
		}
	}
	switch (g) {
	case GRAPH_FAULTS:
		return covered ? count / covered * 1000 : NAN;
	case GRAPH_RUNS:
		return stats_covered ? runs / stats_covered * 1000 : NAN;
	case GRAPH_NS_RUN:
		return runs > 0 ? ns / runs : NAN;
	default:
		return NAN;
	}
}

static bool same(double got, double want)
{
	if (isnan(want) || isnan(got))
		return isnan(want) && isnan(got);
	return fabs(got - want) <= 1e-4 * (fabs(want) > 1 ? fabs(want) : 1);
}

/* Every point of graph g at a width of max points against the oracle,
 * the window ending with the slot of the last sample.
 */
static void check_graph(const struct top_model *m, const struct row *r, const struct trace *tr,
			enum top_graph g, int max, long long slot_ms, const char *what)
{
	double pts[HIST_SLOTS], want;
	long long newest = tr->ms[tr->n - 1] / slot_ms, lo;
	int n, per, i, bad = 0;

	n = top_model__graph(m, r, g, max, pts, &per);
	CHECK(per == (max >= HIST_SLOTS ? 1 : (HIST_SLOTS + max - 1) / max), "%s: %d slots a point at %d points", what, per, max);
	CHECK(n == HIST_SLOTS / per && n <= max, "%s: %d points at most %d", what, n, max);
	for (i = 0; i < n; i++) {
		lo = (newest - (long long)(n - i) * per + 1) * slot_ms;
		want = expect(tr, g, lo, lo + per * slot_ms);
		if (!same(pts[i], want) && bad++ < 3)
			CHECK(0, "%s, %s at %d points: point %d of %d (from %lld ms): got %g, want %g",
			      what, top_graph_unit(g), max, i, n, lo, pts[i], want);
	}
	if (!bad)
		CHECK(1, "%s", what);
}

/* Irregular refreshes (0.3 to 2.7 s) and counts: every point at three
 * widths, for -d 1 (1 s slots) and -d 0.25 (several refreshes a slot).
 */
static void test_irregular(double interval)
{
	struct prog v[] = { prog(1, 1) };
	struct top_model m;
	struct trace tr = {};
	unsigned long long faults = 0;
	long long t = T0_MS + 371;
	struct row *r;
	int i;

	model(&m, interval, v, 1);
	r = top_model__find(&m, 1);
	srand(7);
	for (i = 0; i < 250; i++) {
		sample(&m, r, &tr, t, faults, false, 0, 0);
		t += 300 + rand() % 2400;
		faults += rand() % 21;
	}
	CHECK(m.slot_sec == 1.0, "interval %g: 1 s slots, got %g", interval, m.slot_sec);
	check_graph(&m, r, &tr, GRAPH_FAULTS, 400, 1000, "irregular, 1 slot a point");
	check_graph(&m, r, &tr, GRAPH_FAULTS, 160, 1000, "irregular, 80 braille cells");
	check_graph(&m, r, &tr, GRAPH_FAULTS, 80, 1000, "irregular, 80 ASCII cells");
	check_graph(&m, r, &tr, GRAPH_FAULTS, 7, 1000, "irregular, 7 points");
	top_model__fini(&m);
}

/* At -d 5 a slot is 5 s and the window 25 minutes; a pause (one sample
 * of 60 s) is shared evenly over its slots.
 */
static void test_long_interval(void)
{
	struct prog v[] = { prog(1, 1) };
	double pts[HIST_SLOTS];
	struct top_model m;
	struct trace tr = {};
	long long t = T0_MS + 2000;
	struct row *r;
	int i, n, per;

	model(&m, 5, v, 1);
	r = top_model__find(&m, 1);
	for (i = 0; i <= 40; i++)
		sample(&m, r, &tr, t + i * 5003LL, i * 7ULL, false, 0, 0);
	t += 40 * 5003LL + 60000;
	sample(&m, r, &tr, t, 40 * 7 + 600, false, 0, 0);
	CHECK(m.slot_sec == 5.0, "-d 5: 5 s slots, got %g", m.slot_sec);
	check_graph(&m, r, &tr, GRAPH_FAULTS, 300, 5000, "-d 5");
	check_graph(&m, r, &tr, GRAPH_FAULTS, 100, 5000, "-d 5, 100 points");
	n = top_model__graph(&m, r, GRAPH_FAULTS, 300, pts, &per);
	/* the 60 s pause: 600 faults, 10 a second in each slot it covers whole */
	CHECK(same(pts[n - 2], 10.0) && same(pts[n - 11], 10.0), "pause shared evenly: %g %g",
	      pts[n - 2], pts[n - 11]);
	top_model__fini(&m);
}

/* 12 minutes of 1 s refreshes: only the last 300 slots remain, the ring
 * reused in place.
 */
static void test_wrap(void)
{
	struct prog v[] = { prog(1, 1) };
	double pts[HIST_SLOTS];
	struct top_model m;
	struct trace tr = {};
	struct row *r;
	int i, n, per;

	model(&m, 1, v, 1);
	r = top_model__find(&m, 1);
	for (i = 0; i < 720; i++)	/* 1 fault/s, then 5/s for the last 100 s */
		sample(&m, r, &tr, T0_MS + 500 + i * 1000LL, i < 620 ? i : 620 + (i - 620) * 5,
		       false, 0, 0);
	check_graph(&m, r, &tr, GRAPH_FAULTS, 300, 1000, "wrapped ring");
	n = top_model__graph(&m, r, GRAPH_FAULTS, 300, pts, &per);
	CHECK(same(pts[0], 1.0) && same(pts[n - 2], 5.0), "wrapped: oldest %g, newest %g", pts[0],
	      pts[n - 2]);
	top_model__fini(&m);
}

/* The first sample sets where history starts (the journal's past is no
 * rate); a program seen later counts from the sample before it; a program
 * that never did anything has no ring and a flat graph where it was seen.
 */
static void test_start_and_quiet(void)
{
	struct prog v[] = { prog(1, 1), prog(2, 2) }, w[] = { prog(1, 1), prog(2, 2), prog(3, 3) };
	struct prog_list l = { .progs = w, .cnt = 3 };
	double pts[HIST_SLOTS];
	struct top_model m;
	struct trace tr = {};
	struct row *r, *quiet, *late;
	int n, per, i, flat = 0, none = 0;

	model(&m, 1, v, 2);
	r = top_model__find(&m, 1);
	quiet = top_model__find(&m, 2);
	sample(&m, r, &tr, T0_MS + 200, 50, false, 0, 0);	/* 50 from the journal */
	tr.faults[0] = 0;
	tr.n = 1;
	r->fault_total = 50;
	for (i = 1; i <= 10; i++)
		sample(&m, r, &tr, T0_MS + 200 + i * 1000LL, 50 + 4ULL * i, false, 0, 0);
	for (i = 0; i < tr.n; i++)
		tr.faults[i] = i * 4;	/* the oracle never saw the 50 */
	check_graph(&m, r, &tr, GRAPH_FAULTS, 300, 1000, "journal's past not counted");
	CHECK(!quiet->hist.slot, "a quiet program has no ring");
	n = top_model__graph(&m, quiet, GRAPH_FAULTS, 300, pts, &per);
	for (i = 0; i < n; i++) {
		flat += pts[i] == 0;
		none += isnan(pts[i]);
	}
	CHECK(flat == 11 && none == n - 11, "quiet: 0 in the 11 slots seen, nothing before: %d %d", flat, none);
	CHECK(quiet->hist.last == (T0_MS + 200) / 1000.0, "a quiet row is not sampled after the first (last %.3f)",
	      quiet->hist.last);

	top_model__refresh(&m, &l);
	late = top_model__find(&m, 3);
	late->fault_total = 6;		/* read in the tick that found it */
	top_model__row_changed(&m, late);
	sample(&m, r, NULL, T0_MS + 200 + 11 * 1000LL, 50 + 44, false, 0, 0);
	n = top_model__graph(&m, late, GRAPH_FAULTS, 300, pts, &per);
	CHECK(same(pts[n - 1] * 0.2 + pts[n - 2] * 0.8, 6.0), "a program seen later: 6 faults over the last second: %g %g",
	      pts[n - 2], pts[n - 1]);
	CHECK(isnan(pts[n - 3]), "nothing before it was seen");

	quiet->fault_total = 3;		/* its first count: the ring, zeros kept */
	top_model__row_changed(&m, quiet);
	sample(&m, r, NULL, T0_MS + 200 + 12 * 1000LL, 50 + 48, false, 0, 0);
	n = top_model__graph(&m, quiet, GRAPH_FAULTS, 300, pts, &per);
	CHECK(quiet->hist.slot && pts[n - 5] == 0 && pts[n - 12] == 0 && isnan(pts[n - 14]),
	      "ring made at the first count keeps the zeros before: %g %g %g", pts[n - 5], pts[n - 12], pts[n - 14]);
	CHECK(same(pts[n - 2] + pts[n - 1] * 0.2, 3.0), "then its count: %g %g", pts[n - 2], pts[n - 1]);

	/* idle again: not sampled, yet 0 where the model's samples cover it;
	 * its next count lands in the last interval only
	 */
	for (i = 13; i <= 17; i++)
		sample(&m, r, NULL, T0_MS + 200 + i * 1000LL, 50 + 4ULL * i, false, 0, 0);
	n = top_model__graph(&m, quiet, GRAPH_FAULTS, 300, pts, &per);
	CHECK(quiet->hist.last == (T0_MS + 200 + 12000) / 1000.0, "idle ring not sampled (last %.3f)", quiet->hist.last);
	CHECK(pts[n - 1] == 0 && pts[n - 2] == 0 && pts[n - 5] == 0 && same(pts[n - 6], 0.6),
	      "idle seconds are zeros: %g %g %g %g", pts[n - 1], pts[n - 2], pts[n - 5], pts[n - 6]);
	quiet->fault_total = 5;
	top_model__row_changed(&m, quiet);
	sample(&m, r, NULL, T0_MS + 200 + 18 * 1000LL, 50 + 72, false, 0, 0);
	n = top_model__graph(&m, quiet, GRAPH_FAULTS, 300, pts, &per);
	CHECK(pts[n - 3] == 0 && same(pts[n - 2] + pts[n - 1] * 0.2, 2.0),
	      "after idle, the count is in its own second: %g %g %g", pts[n - 3], pts[n - 2], pts[n - 1]);
	top_model__fini(&m);
}

/* Runs count only between two samples with statistics on: the counters
 * the kernel kept before they were shown are not a rate.
 */
static void test_stats(void)
{
	struct prog v[] = { prog(1, 1) };
	double pts[HIST_SLOTS];
	struct top_model m;
	struct trace tr = {};
	unsigned long long runs = 1000000, ns = 5000000000ULL;
	long long t = T0_MS + 640;
	struct row *r;
	int i, n, per;

	model(&m, 1, v, 1);
	r = top_model__find(&m, 1);
	srand(11);
	for (i = 0; i < 60; i++) {
		bool on = i >= 10 && i < 40;

		sample(&m, r, &tr, t, 0, on, on ? runs : 0, on ? ns : 0);
		t += 700 + rand() % 900;
		runs += rand() % 500;
		ns += rand() % 200000;
	}
	check_graph(&m, r, &tr, GRAPH_RUNS, 300, 1000, "runs/s");
	check_graph(&m, r, &tr, GRAPH_NS_RUN, 300, 1000, "ns/run");
	check_graph(&m, r, &tr, GRAPH_RUNS, 75, 1000, "runs/s, 75 points");
	check_graph(&m, r, &tr, GRAPH_NS_RUN, 75, 1000, "ns/run, 75 points");
	n = top_model__graph(&m, r, GRAPH_RUNS, 300, pts, &per);
	CHECK(isnan(pts[n - 1]), "statistics off: no runs/s (%g)", pts[n - 1]);
	top_model__fini(&m);
}

/* A program replaced under the same id starts a new history; c (clear)
 * starts every history again.
 */
static void test_replaced_and_clear(void)
{
	struct prog v[] = { prog(1, 1) }, w[] = { prog(1, 99) };
	struct prog_list l = { .progs = w, .cnt = 1 };
	double pts[HIST_SLOTS];
	struct top_model m;
	struct row *old, *r = NULL;
	size_t i;
	int n, per, k;

	model(&m, 1, v, 1);
	old = top_model__find(&m, 1);
	for (k = 0; k < 5; k++)
		sample(&m, old, NULL, T0_MS + 500 + k * 1000LL, k * 10ULL, false, 0, 0);
	top_model__refresh(&m, &l);
	for (i = 0; i < m.cnt; i++)
		if (m.rows[i]->ident.load_time_ns == 99)
			r = m.rows[i];
	CHECK(r && r != old, "the replaced program is a row of its own");
	if (!r)
		goto out;
	r->fault_total = 2;
	top_model__row_changed(&m, r);
	sample(&m, old, NULL, T0_MS + 5500, 40, false, 0, 0);
	n = top_model__graph(&m, r, GRAPH_FAULTS, 300, pts, &per);
	CHECK(isnan(pts[n - 3]) && same(pts[n - 2] * 0.5 + pts[n - 1] * 0.5, 2.0),
	      "new history: nothing before, its own 2 faults: %g %g %g", pts[n - 3], pts[n - 2], pts[n - 1]);
	n = top_model__graph(&m, old, GRAPH_FAULTS, 300, pts, &per);
	CHECK(same(pts[n - 3], 10.0), "the old program keeps its history: %g", pts[n - 3]);

	top_model__clear_counts(&m);
	sample(&m, old, NULL, T0_MS + 6500, 3, false, 0, 0);
	n = top_model__graph(&m, old, GRAPH_FAULTS, 300, pts, &per);
	CHECK(isnan(pts[n - 3]) && same(pts[n - 2] * 0.5 + pts[n - 1] * 0.5, 3.0),
	      "after c: history from the clear on: %g %g %g", pts[n - 3], pts[n - 2], pts[n - 1]);
out:
	top_model__fini(&m);
}

int main(void)
{
	test_irregular(1);
	test_irregular(0.25);
	test_long_interval();
	test_wrap();
	test_start_and_quiet();
	test_stats();
	test_replaced_and_clear();
	return unit_done();
}
