// SPDX-License-Identifier: GPL-2.0
/* What top's history graphs cost each refresh, against the model's own
 * refresh (top_model__refresh: merging a snapshot into the rows) of the
 * same rows measured in the same run; and the memory of the rings. No
 * kernel: the snapshot is made up, so neither side pays the iterator,
 * which dominates a real refresh (bench/drain_cycle.sh).
 *
 *   top_history [N] [TICKS]	N programs (5000), TICKS refreshes (600)
 *
 * Three cases: every program idle (no rings), 1 in 10 faulting, and
 * runtime statistics on (every program runs: a ring each).
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "top_model.h"

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static double cpu_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static void run(const char *label, size_t n, int ticks, int faulting_every, bool stats)
{
	struct prog *v = calloc(n, sizeof(*v));
	struct prog_list l = { .progs = v, .cnt = n };
	double refresh = 0, sample = 0, t, t0 = now_s();
	struct top_model m;
	size_t i, rings = 0;
	int k;

	if (!v || top_model__init(&m))
		exit(1);
	m.interval = 1;
	for (i = 0; i < n; i++) {
		v[i].ident.id = i + 1;
		v[i].ident.load_time_ns = i + 1;
		v[i].has_streams = true;
		v[i].has_stats = stats;
	}
	for (k = 0; k < ticks; k++) {
		for (i = 0; stats && i < n; i++) {
			v[i].run_cnt += 1 + i % 7;
			v[i].run_time_ns += 1000 + i % 300;
		}
		t = cpu_s();
		top_model__refresh(&m, &l);
		refresh += cpu_s() - t;
		for (i = 0; faulting_every && i < m.cnt; i += faulting_every)
			m.rows[i]->fault_total += 1 + k % 3;
		t = cpu_s();
		top_model__sample(&m, t0 + k);	/* one refresh a second */
		sample += cpu_s() - t;
	}
	for (i = 0; i < m.cnt; i++)
		rings += m.rows[i]->hist.slot != NULL;
	printf("%-34s refresh %7.1f us, history %6.1f us a tick (%.3fx); %zu rings, %.1f MB"
	       " (a row is %zu B, a ring %zu B)\n", label, refresh / ticks * 1e6,
	       sample / ticks * 1e6, sample / refresh, rings,
	       rings * HIST_SLOTS * sizeof(struct hist_slot) / 1e6, sizeof(struct row),
	       HIST_SLOTS * sizeof(struct hist_slot));
	top_model__fini(&m);
	free(v);
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 10) : 5000;
	int ticks = argc > 2 ? atoi(argv[2]) : 600;
	char label[64];

	if (!n || ticks < 1) {
		fprintf(stderr, "usage: top_history [N] [TICKS]\n");
		return 2;
	}
	snprintf(label, sizeof(label), "%zu programs, idle", n);
	run(label, n, ticks, 0, false);
	snprintf(label, sizeof(label), "%zu programs, 1 in 10 faulting", n);
	run(label, n, ticks, 10, false);
	snprintf(label, sizeof(label), "%zu programs, statistics on", n);
	run(label, n, ticks, 0, true);
	return 0;
}
