// SPDX-License-Identifier: GPL-2.0
/* The storm bench's two halves (bench/storm.sh runs them in the lab):
 *
 *   storm gen SOURCE PROGRAM RATE SECS
 *	loads SOURCE's fault programs (tool/faultsrc.h: may_goto, arena, ...)
 *	and prints "prog ID" of PROGRAM (e.g. demo_may_goto); on a line on
 *	stdin, runs it RATE times a second (0: as fast as it can) for SECS,
 *	one report per run, and prints "runs N secs S"; then holds the
 *	program until the next line (or EOF), so that readers can drain it.
 *
 *   storm naive ID INTERVAL_MS
 *	the naive reader: every INTERVAL_MS, BPF_PROG_STREAM_READ_BY_FD on
 *	program ID's stderr until it is empty; counts the reports read (the
 *	lines that start with "ERROR: ", the first line of every fault report)
 *	and, on SIGTERM or SIGINT, reads once more and prints
 *	"reports N bytes B".
 *
 *   storm cost ROUNDS [floor]
 *	what watching costs a printing program and a reader beside it
 *	(bench/cost.sh): loads the print source's demo_print (two prints a
 *	run), and ROUNDS times runs it 20 times (BPF_PROG_TEST_RUN, timed
 *	around each call) then reads its two streams to the end in 4096-byte
 *	reads (timed around each read); prints "run_ns R read_ns B empty_ns E
 *	reads N bytes T": the mean of a run, of a read that returned bytes,
 *	and of one that found the stream empty. With "floor", empty fexit
 *	programs (tests/bpf/cost_floor.bpf.c) are attached where bpfstderr's
 *	are, meanwhile: what the trampolines alone cost.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "faultsrc.h"
#include "stream.h"
#include "cost_floor.skel.h"

static volatile sig_atomic_t stop;

static void on_stop(int sig)
{
	(void)sig;
	stop = 1;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static int source_by_name(const char *name)
{
	int s;

	for (s = 0; s < FAULT_SRC_CNT; s++)
		if (!strcmp(fault_src__name(s), name))
			return s;
	return -1;
}

static int prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? -1 : (int)info.id;
}

/* RATE runs a second, paced against the clock (a late start catches up
 * at once), or back to back when rate is 0. It stops at SECS even when
 * behind: on a machine slower than RATE, catching up past SECS made a
 * phase last up to four times SECS.
 */
static long storm(int fd, double rate, double secs)
{
	double t0 = now(), t;
	long runs = 0, due;

	while ((t = now() - t0) < secs) {
		due = rate > 0 ? (long)(t * rate) + 1 : runs + 1;
		if (runs >= due) {
			usleep(200);
			continue;
		}
		for (; runs < due && now() - t0 < secs; runs++) {
			LIBBPF_OPTS(bpf_test_run_opts, opts);

			if (bpf_prog_test_run_opts(fd, &opts))
				return -errno;
		}
	}
	return runs;
}

static int do_gen(char **argv)
{
	struct fault_refusal why = {};
	struct fault_progs *fp;
	struct bpf_program *p;
	double rate = atof(argv[2]), secs = atof(argv[3]), t0;
	char line[64];
	long runs;
	int src = source_by_name(argv[0]);

	if (src < 0) {
		fprintf(stderr, "storm: no fault source '%s'\n", argv[0]);
		return 2;
	}
	if (fault_progs__load(src, &fp, &why)) {
		printf("refused %s %s\n", argv[0], strerror(-why.err));
		return 3;
	}
	p = bpf_object__find_program_by_name(fault_progs__obj(fp), argv[1]);
	if (!p || bpf_program__fd(p) < 0) {
		printf("refused %s no program %s\n", argv[0], argv[1]);
		fault_progs__free(fp);
		return 3;
	}
	printf("prog %d\n", prog_id_of(bpf_program__fd(p)));
	fflush(stdout);
	if (fgets(line, sizeof(line), stdin)) {
		t0 = now();
		runs = storm(bpf_program__fd(p), rate, secs);
		printf("runs %ld secs %.3f\n", runs, now() - t0);
		fflush(stdout);
		if (fgets(line, sizeof(line), stdin)) {
			/* held until the readers are done */
		}
	}
	fault_progs__free(fp);
	return 0;
}

/* Report headers: lines starting "ERROR: ", across reads. */
struct counter {
	long reports;
	long long bytes;
	size_t matched;		/* bytes of "ERROR: " matched at a line start */
	int at_start;
};

static void count(struct counter *c, const char *buf, size_t len)
{
	static const char head[] = "ERROR: ";
	size_t i;

	c->bytes += len;
	for (i = 0; i < len; i++) {
		if (c->at_start && c->matched < sizeof(head) - 1 && buf[i] == head[c->matched]) {
			if (++c->matched == sizeof(head) - 1) {
				c->reports++;
				c->at_start = 0;
			}
			continue;
		}
		c->matched = 0;
		c->at_start = buf[i] == '\n';
	}
}

static int drain(int fd, struct counter *c)
{
	static char buf[STREAM_READ_BUF];
	ssize_t n;

	while ((n = stream_read_fd(fd, STREAM_STDERR, buf, sizeof(buf))) > 0)
		count(c, buf, n);
	return n < 0 ? (int)n : 0;
}

static int do_naive(char **argv)
{
	struct counter c = { .at_start = 1 };
	struct timespec ts;
	long ms = atol(argv[1]);
	int fd, err;

	fd = bpf_prog_get_fd_by_id(atoi(argv[0]));
	if (fd < 0) {
		fprintf(stderr, "storm: program %s: %s\n", argv[0], strerror(errno));
		return 1;
	}
	signal(SIGTERM, on_stop);
	signal(SIGINT, on_stop);
	ts.tv_sec = ms / 1000;
	ts.tv_nsec = ms % 1000 * 1000000L;
	while (!stop) {
		err = drain(fd, &c);
		if (err) {
			fprintf(stderr, "storm: read: %s\n", strerror(-err));
			return 1;
		}
		nanosleep(&ts, NULL);
	}
	err = drain(fd, &c);
	printf("reports %ld bytes %lld\n", c.reports, c.bytes);
	close(fd);
	return err ? 1 : 0;
}

static double elapsed_ns(const struct timespec *a, const struct timespec *b)
{
	return (b->tv_sec - a->tv_sec) * 1e9 + (b->tv_nsec - a->tv_nsec);
}

struct cost {
	double run_ns, read_ns, empty_ns;
	long runs, reads, empties;
	long long bytes;
};

/* One stream to its end, each read timed. */
static int cost_read(int fd, enum stream s, struct cost *c)
{
	struct timespec a, b;
	char buf[4096];
	ssize_t n;

	do {
		clock_gettime(CLOCK_MONOTONIC, &a);
		n = stream_read_fd(fd, s, buf, sizeof(buf));
		clock_gettime(CLOCK_MONOTONIC, &b);
		if (n < 0)
			return (int)n;
		if (n) {
			c->read_ns += elapsed_ns(&a, &b);
			c->reads++;
			c->bytes += n;
		} else {
			c->empty_ns += elapsed_ns(&a, &b);
			c->empties++;
		}
	} while (n);
	return 0;
}

static int cost_round(int fd, struct cost *c)
{
	struct timespec a, b;
	int i, err;

	for (i = 0; i < 20; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		clock_gettime(CLOCK_MONOTONIC, &a);
		if (bpf_prog_test_run_opts(fd, &opts))
			return -errno;
		clock_gettime(CLOCK_MONOTONIC, &b);
		c->run_ns += elapsed_ns(&a, &b);
		c->runs++;
	}
	err = cost_read(fd, STREAM_STDOUT, c);
	return err ?: cost_read(fd, STREAM_STDERR, c);
}

/* The printk kfunc's names, as tool/fill.c tries them: only the one with
 * a body takes a trampoline.
 */
static struct cost_floor_bpf *floor_attach(int *err)
{
	const char *const printk[] = { "bpf_stream_vprintk_impl", "bpf_stream_vprintk" };
	struct cost_floor_bpf *s;
	size_t i;

	for (i = 0; i < sizeof(printk) / sizeof(printk[0]); i++) {
		s = cost_floor_bpf__open();
		if (!s) {
			*err = -errno;
			return NULL;
		}
		*err = bpf_program__set_attach_target(s->progs.floor_printk, 0, printk[i]) ?:
		       cost_floor_bpf__load(s) ?: cost_floor_bpf__attach(s);
		if (!*err)
			return s;
		cost_floor_bpf__destroy(s);
	}
	return NULL;
}

static int do_cost(char **argv, bool floor)
{
	struct cost_floor_bpf *fl = NULL;
	struct fault_refusal why = {};
	struct fault_progs *fp;
	struct bpf_program *p;
	struct cost c = {};
	long rounds = atol(argv[0]), i;
	int err = 0;

	if (fault_progs__load(FAULT_SRC_PRINT, &fp, &why)) {
		printf("refused print %s\n", strerror(-why.err));
		return 3;
	}
	p = bpf_object__find_program_by_name(fault_progs__obj(fp), "demo_print");
	if (!p || bpf_program__fd(p) < 0) {
		printf("refused print no program demo_print\n");
		fault_progs__free(fp);
		return 3;
	}
	if (floor && !(fl = floor_attach(&err))) {
		printf("refused floor %s\n", strerror(-err));
		fault_progs__free(fp);
		return 3;
	}
	for (i = 0; i < rounds && !err; i++)
		err = cost_round(bpf_program__fd(p), &c);
	cost_floor_bpf__destroy(fl);
	if (err)
		fprintf(stderr, "storm: cost: %s\n", strerror(-err));
	else
		printf("run_ns %.0f read_ns %.0f empty_ns %.0f reads %ld bytes %lld\n", c.run_ns / c.runs,
		       c.reads ? c.read_ns / c.reads : 0, c.empties ? c.empty_ns / c.empties : 0, c.reads,
		       c.bytes);
	fault_progs__free(fp);
	return err ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (argc == 6 && !strcmp(argv[1], "gen"))
		return do_gen(argv + 2);
	if (argc == 4 && !strcmp(argv[1], "naive"))
		return do_naive(argv + 2);
	if (argc == 3 && !strcmp(argv[1], "cost"))
		return do_cost(argv + 2, false);
	if (argc == 4 && !strcmp(argv[1], "cost") && !strcmp(argv[3], "floor"))
		return do_cost(argv + 2, true);
	fprintf(stderr, "usage: storm gen SOURCE PROGRAM RATE SECS | storm naive ID INTERVAL_MS | "
		"storm cost ROUNDS [floor]\n");
	return 2;
}
