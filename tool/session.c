// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "journal_cli.h"
#include "main.h"
#include "output.h"
#include "session.h"

static volatile sig_atomic_t stopped;
/* The mask while asleep: the ending signals are blocked at any other
 * time, so one that comes during a cycle is taken by the next sleep at
 * once instead of slipping in just before it and being slept through.
 */
static sigset_t sleep_mask;

static void on_signal(int sig)
{
	(void)sig;
	stopped = 1;
}

void session__catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_signal };
	sigset_t block;
	size_t i;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&block);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&block, sigs[i]);
	}
	sigprocmask(SIG_BLOCK, &block, &sleep_mask);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		sigdelset(&sleep_mask, sigs[i]);
	signal(SIGPIPE, SIG_IGN);	/* a closed reader is an EPIPE to handle */
}

bool session__stopped(void)
{
	return stopped;
}

void session__sleep(double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };

	if (!stopped)
		ppoll(NULL, 0, &ts, &sleep_mask);	/* an ending signal cuts it short */
}

int session__open(struct session *s, const struct session_opts *o)
{
	struct pipeline_ops ops = o->ops;
	int rc, err;

	memset(s, 0, sizeof(*s));
	rc = journal_cli__require(o->what, o->journal_required, &s->backend, &s->journal);
	if (rc)
		return rc;
	err = progs__open(&s->progs);
	err = err ?: symbolizer__new(&s->sym, &o->sym);
	err = err ?: drainer__new(&s->drainer, s->backend);
	if (!err) {
		ops.journal = s->journal;
		ops.sym = s->sym;
		err = pipeline__new(&s->pl, s->drainer, &ops);
	}
	if (err) {
		char what[128];

		snprintf(what, sizeof(what), "cannot set up %s", o->what);
		return exit_for_errno(err, what);
	}
	return EXIT_OK;
}

void session__close(struct session *s)
{
	pipeline__free(s->pl);
	drainer__free(s->drainer);
	symbolizer__free(s->sym);
	progs__close(s->progs);
	journal__close(s->journal);
	memset(s, 0, sizeof(*s));
}

int session__failed(struct session *s, int err, const char *what)
{
	if (err == -EPIPE) {
		clearerr(stdout);
		return EXIT_OK;
	}
	if (ferror(stdout))
		return output_failed(err);
	return journal_cli__failed(s->journal, err, what);
}
