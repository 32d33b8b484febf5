// SPDX-License-Identifier: GPL-2.0
/* bpfstderr record: drain every program into the journal, in the
 * foreground, until SIGTERM. For systemd (contrib/bpfstderr-record.service).
 */
#include <argp.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "journal_cli.h"
#include "main.h"
#include "pipeline.h"
#include "progs.h"
#include "stream.h"
#include "symbolize.h"

static struct record_env {
	double interval;
	struct retention ret;
} env = {
	.interval = 1.0,
	.ret = { .max_age = JOURNAL_DEFAULT_MAX_AGE, .max_size = JOURNAL_DEFAULT_MAX_SIZE },
};

static volatile sig_atomic_t stop;

enum {
	OPT_MAX_AGE = 0x100,
	OPT_MAX_SIZE,
};

static const struct argp_option opts[] = {
	{ "interval", 'd', "SECS", 0, "Drain every SECS (default 1, 0.01 to 3600)", 0 },
	{ "max-age", OPT_MAX_AGE, "AGE", 0, "Drop events older than AGE: 30s, 15m, 12h, 7d, 2w; 0 keeps all (default 7d, at most 100000d)", 0 },
	{ "max-size", OPT_MAX_SIZE, "SIZE", 0, "Keep the database under SIZE: 1M, 64M, 1G; 0 for no limit (default 128M, least 1M)", 0 },
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
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static bool select_all(const struct prog *p, void *ctx)
{
	(void)p;
	(void)ctx;
	return true;
}

static void on_signal(int sig)
{
	(void)sig;
	stop = 1;
}

static int cycle(struct progs *progs, struct pipeline *pl, struct journal *j)
{
	long got = pipeline__cycle_fresh(pl, progs);
	int err;

	if (got < 0)
		return got;
	/* idle cycles commit nothing: age limits still apply; a full file
	 * system stops reads (the pipeline said so) and not the recorder
	 */
	err = journal__prune(j);
	return err == -ENOSPC ? 0 : err;
}

static int run(struct progs *progs, struct pipeline *pl, struct journal *j)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct timespec ts = {
		(time_t)env.interval, (long)((env.interval - (time_t)env.interval) * 1e9),
	};
	int err = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	while (!stop && !err) {
		err = cycle(progs, pl, j);
		if (!err && !stop)
			nanosleep(&ts, NULL);	/* a signal cuts it short */
	}
	/* one last drain: what was written before the signal is kept; bytes
	 * the journal had no room for go to a spill file
	 */
	err = err ?: cycle(progs, pl, j);
	return err ?: pipeline__flush(pl);
}

int do_record(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.children = journal_children,
		.doc = "Drain every loaded program into the journal at an interval, in the "
		       "foreground, with retention by age and size. Quiet unless something fails; "
		       "SIGTERM or SIGINT: a last drain, then exit 0.\v"
		       "Views (follow, report, top) read the journal, so they show what record "
		       "drained. The limits are stored in the journal and every writer applies them. "
		       "While the journal's file system is full, nothing is read (the kernel keeps "
		       "the bytes) and record says so once, then carries on when there is room.",
	};
	struct pipeline_ops ops = { .streams = STREAM_MASK_BOTH, .select = select_all };
	struct symbolizer *sym = NULL;
	struct drainer *drainer = NULL;
	struct journal *journal = NULL;
	struct pipeline *pl = NULL;
	struct progs *progs = NULL;
	enum stream_backend backend;
	int err, rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	rc = journal_cli__require("recording", true, &backend, &journal);
	if (rc)
		return rc;
	err = journal__set_retention(journal, &env.ret);
	if (err) {
		rc = journal_cli__failed(journal, err, "record");
		goto out;
	}
	/* BPF frames only, at drain time: no kernel debuginfo is loaded */
	err = symbolizer__new(&sym, &(struct symbolizer_opts){ .live = true, .quiet = true });
	ops.sym = sym;
	ops.journal = journal;
	err = err ?: progs__open(&progs);
	err = err ?: drainer__new(&drainer, backend);
	err = err ?: pipeline__new(&pl, drainer, &ops);
	if (err) {
		rc = exit_for_errno(err, "cannot set up recording");
		goto out;
	}
	err = run(progs, pl, journal);
	if (err)
		rc = journal_cli__failed(journal, err, "record");
out:
	pipeline__free(pl);
	drainer__free(drainer);
	progs__close(progs);
	symbolizer__free(sym);
	journal__close(journal);
	return rc;
}
