// SPDX-License-Identifier: GPL-2.0
/*
 * What the RFC's drain design buys (issue 37): N programs with one message
 * each on stderr, drained once by the read command as bpfstderr's upstream
 * backend does (BPF_PROG_GET_FD_BY_ID, BPF_PROG_STREAM_READ_BY_FD until
 * empty, close: per program and stream), and once by one run of
 * bpf/rfc_drain_many.bpf.c (the ids in, every message out in a ring
 * buffer, no program fd). Needs a kernel with kernel-patches/rfc-drain/.
 *
 * Usage: rfc_many [N [REPS]]   (N default 1000, at most MANY_MAX; REPS
 *                              default 5: each drain pair done REPS times)
 * Prints per method and repetition: messages drained, wall ms, syscalls
 * made, CPU ms (user + system of this process); then the medians' ratios.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "health.h"
#include "streamio.h"
#include "../bpf/rfc_many.h"
#include "writer.skel.h"
#include "writer.v4.skel.h"
#include "rfc_drain_many.skel.h"

struct run {
	long msgs;
	long syscalls;
	double wall_ms;
	double cpu_ms;
};

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static double cpu_ms(void)
{
	struct rusage ru;

	getrusage(RUSAGE_SELF, &ru);
	return (ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e3 +
	       (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e3;
}

/* One message, "m I\n", to each writer's stderr. */
static int write_all(struct writer_bpf **w, int n)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int i;

	for (i = 0; i < n; i++) {
		w[i]->data->stream_id = STREAM_STDERR;
		w[i]->bss->count = 1;
		snprintf(w[i]->bss->msg, sizeof(w[i]->bss->msg), "m %d\n", i);
		if (bpf_prog_test_run_opts(bpf_program__fd(w[i]->progs.writer), &opts) ||
		    w[i]->bss->ret[0]) {
			fprintf(stderr, "rfc_many: write %d failed (%d)\n", i, w[i]->bss->ret[0]);
			return -1;
		}
	}
	return 0;
}

static void by_read_command(const __u32 *ids, int n, struct run *r)
{
	static char buf[65536];
	enum stream s;
	ssize_t got;
	int i, fd;

	for (i = 0; i < n; i++) {
		fd = bpf_prog_get_fd_by_id(ids[i]);
		r->syscalls++;
		if (fd < 0)
			continue;
		for_each_stream(s) {
			do {
				got = stream_read_fd(fd, s, buf, sizeof(buf));
				r->syscalls++;
				if (got > 0)
					r->msgs++;	/* one message each, read whole */
			} while (got > 0);
		}
		close(fd);
		r->syscalls++;
	}
}

static int count_rec(void *ctx, void *data __attribute__((unused)), size_t len __attribute__((unused)))
{
	(*(long *)ctx)++;
	return 0;
}

static int by_one_run(struct rfc_drain_many_bpf *m, struct ring_buffer *rb, const __u32 *ids,
		      int n, struct run *r)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);

	memcpy(m->bss->ids, ids, n * sizeof(*ids));
	m->bss->nr_ids = n;
	do {
		if (bpf_prog_test_run_opts(bpf_program__fd(m->progs.rfc_drain_many), &opts))
			return -errno;
		r->syscalls++;
		ring_buffer__consume(rb);	/* reads the mmapped ring: no syscall */
	} while (opts.retval == 11);
	return opts.retval;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static void print_run(const char *name, const struct run *r)
{
	printf("%-14s %6ld msgs %9.2f ms wall %7ld syscalls %9.2f ms cpu\n",
	       name, r->msgs, r->wall_ms, r->syscalls, r->cpu_ms);
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 1000, reps = argc > 2 ? atoi(argv[2]) : 5, i, k, err;
	double rc_wall[64], rc_cpu[64], run_wall[64], run_cpu[64];
	int ok = 1;
	struct rfc_drain_many_bpf *m;
	struct run rc = {}, run = {};
	struct writer_bpf **w;
	struct ring_buffer *rb;
	struct bpf_prog_info info;
	__u32 *ids, len;
	double t, c;

	if (n < 1 || n > MANY_MAX || reps < 1 || reps > 64) {
		fprintf(stderr, "usage: rfc_many [N [REPS]], N 1 to %d, REPS 1 to 64\n", MANY_MAX);
		return 2;
	}
	/* the writers stay loaded, five fds each: this harness's, not the drains' */
	struct rlimit nofile;

	if (!getrlimit(RLIMIT_NOFILE, &nofile)) {
		nofile.rlim_cur = nofile.rlim_max;
		setrlimit(RLIMIT_NOFILE, &nofile);
	}
	w = calloc(n, sizeof(*w));
	ids = calloc(n, sizeof(*ids));
	if (!w || !ids)
		return 1;
	m = rfc_drain_many_bpf__open();
	if (!m || bpf_program__set_flags(m->progs.rfc_drain_many, BPF_F_SLEEPABLE) ||
	    rfc_drain_many_bpf__load(m)) {
		fprintf(stderr, "rfc_many: the drain program does not load here (%s): "
			"a kernel with kernel-patches/rfc-drain/ is needed\n", strerror(errno));
		return 4;
	}
	rb = ring_buffer__new(bpf_map__fd(m->maps.msgs), count_rec, &run.msgs, NULL);
	if (!rb)
		return 1;
	for (i = 0; i < n; i++) {
		w[i] = printk_skel_open(writer);
		if (!w[i] || writer_bpf__load(w[i])) {
			fprintf(stderr, "rfc_many: writer %d does not load\n", i);
			return 1;
		}
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		if (bpf_obj_get_info_by_fd(bpf_program__fd(w[i]->progs.writer), &info, &len))
			return 1;
		ids[i] = info.id;
	}
	printf("# rfc_many: %d programs, one message each on stderr, each drain %d times\n",
	       n, reps);
	for (k = 0; k < reps; k++) {
		memset(&rc, 0, sizeof(rc));
		memset(&run, 0, sizeof(run));
		if (write_all(w, n))
			return 1;
		t = now_ms();
		c = cpu_ms();
		by_read_command(ids, n, &rc);
		rc.wall_ms = now_ms() - t;
		rc.cpu_ms = cpu_ms() - c;

		if (write_all(w, n))
			return 1;
		t = now_ms();
		c = cpu_ms();
		err = by_one_run(m, rb, ids, n, &run);
		run.wall_ms = now_ms() - t;
		run.cpu_ms = cpu_ms() - c;
		if (err)
			fprintf(stderr, "rfc_many: the drain run returned %d\n", err);
		print_run("read command", &rc);
		print_run("one run", &run);
		ok &= rc.msgs == n && run.msgs == n;
		rc_wall[k] = rc.wall_ms;
		rc_cpu[k] = rc.cpu_ms;
		run_wall[k] = run.wall_ms;
		run_cpu[k] = run.cpu_ms;
	}
	printf("medians        read command %.2f ms wall %.2f ms cpu %ld syscalls; "
	       "one run %.2f ms wall %.2f ms cpu %ld syscalls\n",
	       median(rc_wall, reps), median(rc_cpu, reps), rc.syscalls,
	       median(run_wall, reps), median(run_cpu, reps), run.syscalls);
	printf("ratio          wall %.1fx, syscalls %.0fx, cpu %.1fx (read command / one run)\n",
	       median(rc_wall, reps) / median(run_wall, reps),
	       (double)rc.syscalls / run.syscalls, median(rc_cpu, reps) / median(run_cpu, reps));
	for (i = 0; i < n; i++)
		writer_bpf__destroy(w[i]);
	ring_buffer__free(rb);
	rfc_drain_many_bpf__destroy(m);
	return ok ? 0 : 1;
}
