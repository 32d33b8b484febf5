// SPDX-License-Identifier: GPL-2.0
/* bpfstderr record: drain every program into the journal, in the
 * foreground, until SIGTERM. For systemd (contrib/bpfstderr-record.service).
 */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "journal_cli.h"
#include "journald.h"
#include "main.h"
#include "metrics.h"
#include "session.h"

static struct record_env {
	double interval;
	struct retention ret;
	struct metrics_opts metrics;	/* served when addr.port is set */
	struct metrics *m;
	bool journald;
	struct journald *jsink;		/* sends what the journal has, before retention prunes it */
} env = {
	.interval = 1.0,
	.ret = { .max_age = JOURNAL_DEFAULT_MAX_AGE, .max_size = JOURNAL_DEFAULT_MAX_SIZE },
	.metrics = { .keep = METRICS_DEFAULT_KEEP },
};

enum {
	OPT_MAX_AGE = 0x100,
	OPT_MAX_SIZE,
	OPT_METRICS_ADDRESS,
	OPT_METRICS_KEEP,
	OPT_JOURNALD,
};

static const struct argp_option opts[] = {
	{ "interval", 'd', "SECS", 0, "Drain every SECS (default 1, 0.01 to 3600), and a stream past 25000 bytes at once", 0 },
	{ "max-age", OPT_MAX_AGE, "AGE", 0, "Drop events older than AGE: 30s, 15m, 12h, 7d, 2w; 0 keeps all (default 7d, at most 100000d)", 0 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0, "Keep the database under SIZE: 1M, 64M, 1G; 0 for no limit (default 128M, least 1M)", 0 },
	{ "metrics-address", OPT_METRICS_ADDRESS, "HOST:PORT", 0, "Serve Prometheus metrics at http://HOST:PORT/metrics ([IPV6]:PORT; 0.0.0.0 for every interface)", 0 },
	{ "metrics-keep", OPT_METRICS_KEEP, "AGE", 0, "An unloaded program's series stay AGE, then leave: 30s, 10m, 1h; 0: at once (default 10m)", 0 },
	{ "journald", OPT_JOURNALD, NULL, 0, "Also send each fault and message to the systemd journal, once; new events only on a journal's first run", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'd':
		if (parse_interval(arg, &env.interval))
			argp_failure(state, EXIT_USAGE, 0, "invalid interval '%s' (" INTERVAL_RANGE ")", arg);
		break;
	case OPT_MAX_AGE:
		if (parse_duration(arg, &env.ret.max_age))
			argp_failure(state, EXIT_USAGE, 0,
				     "invalid age '%s' (e.g. 90m, 12h, 7d; 0 keeps all; at most 100000d)", arg);
		break;
	case OPT_MAX_SIZE:
		if (parse_size(arg, &env.ret.max_size) ||
		    (env.ret.max_size && env.ret.max_size < JOURNAL_MIN_MAX_SIZE))
			argp_failure(state, EXIT_USAGE, 0,
				     "invalid size '%s' (at least 1M, e.g. 64M, 1G; 0: no limit)", arg);
		break;
	case OPT_METRICS_ADDRESS:
		if (metrics_addr_parse(arg, &env.metrics.addr))
			argp_failure(state, EXIT_USAGE, 0,
				     "invalid metrics address '%s' (HOST:PORT or [IPV6]:PORT, port 1 to 65535)", arg);
		break;
	case OPT_METRICS_KEEP:
		if (parse_duration(arg, &env.metrics.keep))
			argp_failure(state, EXIT_USAGE, 0, "invalid age '%s' (e.g. 30s, 10m, 1h; 0: at once)", arg);
		break;
	case OPT_JOURNALD:
		env.journald = true;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* One drain; *drained: the bytes it read. */
static int cycle(struct session *s, long *drained)
{
	const struct prog_list *now;
	struct timespec start;
	long got;
	int err;

	clock_gettime(CLOCK_MONOTONIC, &start);
	got = progs__refresh(s->progs, &now, 0);
	got = got ?: pipeline__cycle(s->pl, now);
	if (got >= 0 && env.m)	/* before pruning: the cycle's events are there */
		got = metrics__update(env.m, s->journal, now, s->pl, &start);
	if (got < 0)
		return got;
	*drained = got;
	err = journald__send(env.jsink, s->pl);
	if (err)
		return err;
	/* idle cycles commit nothing: age limits still apply; a full file
	 * system or a journal locked by another process stops reads (the
	 * pipeline says so) and not the recorder: pruning waits too
	 */
	err = journal__prune(s->journal);
	return err == -ENOSPC || err == -EBUSY ? 0 : err;
}

static int run(struct session *s)
{
	long drained = 0;
	int err = 0;

	while (!session__stopped() && !err) {
		err = session__suspend(s, cycle, NULL) ?: cycle(s, &drained);
		if (!err)
			session__wait(s, env.interval, drained > 0);
	}
	/* one last drain: what was written before the signal is kept; bytes
	 * the journal had no room for go to a spill file
	 */
	session__quiesce(s);
	pipeline__forget_dry(s->pl);
	do
		err = err ?: cycle(s, &drained);
	while (!err && drained > 0 && pipeline__holds(s->pl));
	err = session__end(s, err);
	return err ?: journald__send(env.jsink, NULL);
}

static bool lock_waited;

static void say_locked(const char *path, const char *holder)
{
	p_err("journal %s: locked by another process (%s): waiting for it to let go before "
	      "reading any stream", path, holder ?: "a sqlite3 shell or a backup?");
	lock_waited = true;
}

/* A journal another process holds write-locked at the start: nothing can
 * be kept, so nothing is read; said once, and record starts when the lock
 * goes, or ends (exit 0) on an ending signal meanwhile.
 */
static const struct journal_lock_wait lock_wait = {
	.locked = say_locked, .stop = session__stopped,
};

/* The start is done: what waits for locks from now on is the pipeline's. */
static void started(struct session *s)
{
	if (journal__wait_locks_end(s->journal))
		p_err("journal %s: unlocked: reading streams", journal__path(s->journal));
}

int do_record(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.children = drain_children,
		.doc = "Drain every loaded program into the journal at an interval, in the "
		       "foreground, with retention by age and size. Quiet unless something fails; "
		       "SIGTERM, SIGINT, SIGHUP or SIGQUIT: a last drain, then exit 0.\v"
		       "Views (follow, report, top) read the journal, so they show what record "
		       "drained. The limits are stored in the journal and every writer applies them "
		       "(a record that cannot start stores none). "
		       "While the journal's file system is full, nothing is read (the kernel keeps "
		       "the bytes) and record says so once, then carries on when there is room. "
		       "Started while another process holds the journal write-locked (a sqlite3 "
		       "shell in a transaction), record says so once, naming it, reads nothing and "
		       "starts when the lock goes; SIGTERM or SIGINT meanwhile: exit 0. "
		       "With --metrics-address, Prometheus metrics at /metrics: see METRICS in "
		       "bpfstderr(8).",
	};
	struct session_opts o = {
		.what = "recording", .journal_required = true,
		/* BPF frames only, at drain time: no kernel debuginfo is loaded */
		.sym = { .live = true, .quiet = true },
		.ops = { .streams = STREAM_MASK_BOTH, .select = pipeline_select_all },
	};
	struct session s;
	int err, rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	session__catch_signals();
	session__catch_suspend();
	journal__wait_locks(&lock_wait);
	rc = session__open(&s, &o);
	if (rc && lock_waited && session__stopped())
		rc = EXIT_OK;	/* stopped while waiting: nothing was read */
	if (rc)
		goto out;
	/* every sink first: a record that cannot start writes nothing to
	 * the journal, least of all retention limits the recorder already
	 * running would prune to
	 */
	if (env.metrics.addr.port[0] && metrics__open(&env.m, &env.metrics, s.journal)) {
		rc = EXIT_ERROR;	/* it said why */
		goto out;
	}
	err = env.journald ? journald__open(&env.jsink, s.journal) : 0;
	err = err ?: journal__set_retention(s.journal, &env.ret);
	if (!err)
		started(&s);
	err = err ?: run(&s);
	if (err)
		rc = session__failed(&s, err, "record");
out:
	journal__wait_locks_end(NULL);
	journald__close(env.jsink);
	metrics__close(env.m);
	session__close(&s);
	return rc;
}
