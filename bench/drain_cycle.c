// SPDX-License-Identifier: GPL-2.0
/* CPU cost of one drain cycle over N idle programs: bpfstderr (the
 * program list walked only when the watch says it changed, then only
 * streams with bytes accounted), bpfstderr walking every cycle
 * (BPFSTDERR_FULL_WALK, as where the watch is refused), against what a
 * naive tool does (every program opened by id, both streams read), in the
 * same run; then bpfstderr with its journal, whose idle cost is what the
 * journal adds to every cycle. Prints per-cycle CPU time (user + system)
 * and the ratios. Programs others load or unload meanwhile make cycles
 * walk: the number of cycles that did is printed.
 *
 *   drain_cycle N [CYCLES [JOURNAL_DIR]]
 *   drain_cycle naive-1hz SECS	(the naive reader once a second over the
 *				 programs loaded now: its share of a core)
 *   drain_cycle churn SECS	(for each of SECS seconds, 1 when a program
 *				 was loaded or unloaded in it: what makes a
 *				 cycle walk, else 0)
 */
#include <errno.h>
#include <string.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/bpf.h>

#include "pipeline.h"
#include "progs.h"
#include "stream.h"
#include "watch.h"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int load_idle(int n, int *fds)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};
	int i;

	for (i = 0; i < n; i++) {
		fds[i] = bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, "bench_idle", "GPL",
				       insns, 2, NULL);
		if (fds[i] < 0)
			return -errno;
	}
	return 0;
}

static void naive_cycle(void)
{
	static char buf[STREAM_READ_BUF];
	__u32 id = 0;
	int fd;

	while (!bpf_prog_get_next_id(id, &id)) {
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		stream_read_fd(fd, STREAM_STDOUT, buf, sizeof(buf));
		stream_read_fd(fd, STREAM_STDERR, buf, sizeof(buf));
		close(fd);
	}
}

static int discard(const struct pipe_event *pe, void *ctx)
{
	(void)pe;
	(void)ctx;
	return 0;
}

static double time_cycles(struct progs *progs, struct pipeline *pl, int cycles);

static int walked;	/* cycles that read a new list */

/* pipeline__cycle_fresh(), and whether the list was read again */
static int ours_cycle(struct progs *progs, struct pipeline *pl)
{
	static unsigned long long gen;
	const struct prog_list *l;
	long got;
	int err;

	err = progs__refresh(progs, &l, 0);
	if (err)
		return err;
	walked += l->gen != gen;
	gen = l->gen;
	got = pipeline__cycle(pl, l);
	return got < 0 ? got : 0;
}

static double time_cycles(struct progs *progs, struct pipeline *pl, int cycles)
{
	double t0 = cpu_now();
	int i;

	walked = 0;
	for (i = 0; i < cycles; i++)
		ours_cycle(progs, pl);
	return (cpu_now() - t0) / cycles;
}

/* The same cycles by another observer that walks every time. */
static double walk_cycles(struct drainer *drainer, int cycles)
{
	struct pipeline_ops ops = { .streams = STREAM_MASK_BOTH, .select = pipeline_select_all, .sink = discard };
	struct pipeline *pl;
	struct progs *progs;
	double t;

	setenv("BPFSTDERR_FULL_WALK", "1", 1);
	if (progs__open(&progs) || progs__watch(progs) != -ECANCELED || pipeline__new(&pl, drainer, &ops))
		exit(1);
	unsetenv("BPFSTDERR_FULL_WALK");
	ours_cycle(progs, pl);
	t = time_cycles(progs, pl, cycles);
	pipeline__free(pl);
	progs__close(progs);
	return t;
}

/* One line a second: 1 when a program came or went in it, else 0. */
static int churn(int secs)
{
	struct watch *w;
	int i;

	if (watch__open(&w))
		return 1;
	watch__came_went(w);
	for (i = 0; i < secs; i++) {
		sleep(1);
		printf("%d\n", watch__came_went(w));
		fflush(stdout);
	}
	watch__close(w);
	return 0;
}

/* The same cycles through a journal in dir. */
static double journal_cycles(struct progs *progs, struct drainer *drainer, const char *dir,
			     int cycles)
{
	struct pipeline_ops ops = { .streams = STREAM_MASK_BOTH, .select = pipeline_select_all, .sink = discard };
	struct pipeline *pl;
	struct journal *j;
	char path[4096];
	double t;

	snprintf(path, sizeof(path), "%s/drain_cycle.db", dir);
	unlink(path);
	if (journal__open(&j, path)) {
		fprintf(stderr, "drain_cycle: %s\n", journal__error(j) ?: "cannot open the journal");
		exit(1);
	}
	ops.journal = j;
	if (pipeline__new(&pl, drainer, &ops))
		exit(1);
	ours_cycle(progs, pl);
	t = time_cycles(progs, pl, cycles);
	pipeline__free(pl);
	journal__close(j);
	unlink(path);
	return t;
}

static int naive_1hz(int secs)
{
	struct rlimit rl = { 65536, 65536 };
	int i;

	setrlimit(RLIMIT_NOFILE, &rl);
	for (i = 0; i < secs; i++) {
		naive_cycle();
		sleep(1);
	}
	printf("%.3f\n", cpu_now() / secs * 100);
	return 0;
}

int main(int argc, char **argv)
{
	struct pipeline_ops ops = { .streams = STREAM_MASK_BOTH, .select = pipeline_select_all, .sink = discard };
	int n = argc > 1 ? atoi(argv[1]) : 1000, cycles = argc > 2 ? atoi(argv[2]) : 20;
	struct rlimit rl = { n + 256, n + 256 };
	struct drainer *drainer;
	struct pipeline *pl;
	struct progs *progs;
	const char *dir = argc > 3 ? argv[3] : "/var/tmp";
	double t0, ours, walk, naive, journal;
	int *fds, i, err, ours_walked;

	if (argc > 2 && !strcmp(argv[1], "naive-1hz"))
		return naive_1hz(atoi(argv[2]));
	if (argc > 2 && !strcmp(argv[1], "churn"))
		return churn(atoi(argv[2]));
	setrlimit(RLIMIT_NOFILE, &rl);
	fds = calloc(n, sizeof(*fds));
	err = load_idle(n, fds);
	if (err || progs__open(&progs) || drainer__new(&drainer, BACKEND_UPSTREAM) ||
	    pipeline__new(&pl, drainer, &ops)) {
		fprintf(stderr, "drain_cycle: set-up failed: %s\n", strerror(-err ?: errno));
		return 1;
	}
	ours_cycle(progs, pl);		/* warm up both */
	naive_cycle();
	ours = time_cycles(progs, pl, cycles);
	ours_walked = walked;
	walk = walk_cycles(drainer, cycles);
	journal = journal_cycles(progs, drainer, dir, cycles);
	t0 = cpu_now();
	for (i = 0; i < cycles; i++)
		naive_cycle();
	naive = (cpu_now() - t0) / cycles;
	printf("%6d idle programs: bpfstderr %8.3f ms/cycle (program list: %s, walked in %d of %d cycles), "
	       "naive open+read %8.3f ms/cycle, naive/bpfstderr = %.1fx\n", n, ours * 1e3,
	       progs__mode(progs), ours_walked, cycles, naive * 1e3, naive / ours);
	printf("%6d idle programs: bpfstderr walking every cycle %8.3f ms/cycle, naive/walking = %.1fx\n",
	       n, walk * 1e3, naive / walk);
	printf("%6d idle programs: with the journal %8.3f ms/cycle, journal/without = %.2fx "
	       "(the journal's share of an idle cycle: %.0f%%)\n", n, journal * 1e3, journal / ours,
	       100 * (journal - ours) / journal);
	pipeline__free(pl);
	drainer__free(drainer);
	progs__close(progs);
	return 0;
}
