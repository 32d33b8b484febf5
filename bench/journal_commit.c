// SPDX-License-Identifier: GPL-2.0
/* Events committed to the journal per second, by events per transaction
 * (one drain cycle is one transaction), against the least any durable
 * store must do in the same run: append the same bytes to a file and
 * fdatasync once per batch.
 *
 *   journal_commit DIR [EVENTS]
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "journal.h"

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* Every tenth event a fault report of about 1 KB, else a short message. */
static void make_event(int i, char *buf, size_t len, struct event *ev)
{
	int n;

	if (i % 10) {
		n = snprintf(buf, len, "message %d from the bench, about as long as a printk line", i);
		*ev = (struct event){ .kind = EV_MESSAGE, .stream = 1, .text = buf, .len = n };
		return;
	}
	n = snprintf(buf, len, "ERROR: Arena READ access at unmapped address 0x%x\n"
		     "CPU: 1 UID: 0 PID: %d Comm: bench\nCall trace:\n", i, i);
	while (n < 1000)
		n += snprintf(buf + n, len - n, "some_kernel_function+0x%x/0x200\n", n);
	n += snprintf(buf + n, len - n, "\n");
	*ev = (struct event){ .kind = EV_MESSAGE, .stream = STREAM_STDERR, .text = buf, .len = n };
}

static double bench_journal(const char *dir, int events, int batch)
{
	struct jprog p = { .ident = { .id = 1, .tag = "0123456789abcdef", .name = "bench" } };
	struct journal *j;
	struct timespec ts;
	struct event ev;
	char path[4096], buf[2048];
	double t0;
	int i, err;

	snprintf(path, sizeof(path), "%s/bench-%d.db", dir, batch);
	unlink(path);
	err = journal__open(&j, path);
	err = err ?: journal__begin(j);
	err = err ?: journal__prog(j, &p);
	err = err ?: journal__commit(j);
	if (err) {
		fprintf(stderr, "journal_commit: %s\n", j ? journal__error(j) : strerror(-err));
		exit(1);
	}
	t0 = now();
	for (i = 0; i < events && !err; i++) {
		if (i % batch == 0)
			err = journal__begin(j);
		make_event(i, buf, sizeof(buf), &ev);
		clock_gettime(CLOCK_REALTIME, &ts);
		err = err ?: journal__add_event(j, p.row, &ts, &ev, NULL);
		if (!err && (i % batch == batch - 1 || i == events - 1))
			err = journal__commit(j);
	}
	t0 = now() - t0;
	if (err) {
		fprintf(stderr, "journal_commit: %s\n", journal__error(j));
		exit(1);
	}
	journal__close(j);
	return events / t0;
}

static double bench_file(const char *dir, int events, int batch)
{
	char path[4096], buf[2048];
	struct event ev;
	double t0;
	int fd, i;

	snprintf(path, sizeof(path), "%s/bench-%d.raw", dir, batch);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0600);
	if (fd < 0)
		exit(1);
	t0 = now();
	for (i = 0; i < events; i++) {
		make_event(i, buf, sizeof(buf), &ev);
		if (write(fd, ev.text, ev.len) != (ssize_t)ev.len)
			exit(1);
		if (i % batch == batch - 1 || i == events - 1)
			fdatasync(fd);
	}
	t0 = now() - t0;
	close(fd);
	unlink(path);
	return events / t0;
}

int main(int argc, char **argv)
{
	static const int batches[] = { 1, 10, 100, 1000 };
	int events = argc > 2 ? atoi(argv[2]) : 20000;
	double ours, raw;
	size_t i;

	if (argc < 2) {
		fprintf(stderr, "usage: journal_commit DIR [EVENTS]\n");
		return 2;
	}
	for (i = 0; i < sizeof(batches) / sizeof(batches[0]); i++) {
		int n = batches[i] == 1 ? events / 10 : events;

		ours = bench_journal(argv[1], n, batches[i]);
		raw = bench_file(argv[1], n, batches[i]);
		printf("%5d events/commit: journal %9.0f events/s, append+fdatasync %9.0f events/s, "
		       "journal/append = %.2fx\n", batches[i], ours, raw, ours / raw);
	}
	return 0;
}
