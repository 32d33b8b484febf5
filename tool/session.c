// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "fill.h"
#include "journal_cli.h"
#include "main.h"
#include "output.h"
#include "rescue.h"
#include "readers.h"
#include "session.h"

static volatile sig_atomic_t stopped, suspend, continued;
static sigset_t ending;		/* the signals that end a session's wait */

static void on_signal(int sig)
{
	if (sig == SIGTSTP) {
		suspend = 1;
	} else if (sig == SIGCONT) {	/* continued before it could stop: not later */
		suspend = 0;
		continued++;
	} else {
		stopped = 1;
	}
}

/* No SA_RESTART: a write blocked on a reader that does not read is cut
 * short too, so the signal always ends the command.
 */
void session__catch_signals(void)
{
	static const int sigs[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };
	struct sigaction sa = { .sa_handler = on_signal };
	size_t i;

	sigemptyset(&sa.sa_mask);
	sigemptyset(&ending);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], &sa, NULL);
		sigaddset(&ending, sigs[i]);
	}
	signal(SIGPIPE, SIG_IGN);	/* a closed reader is an EPIPE to handle */
	output_ending(&stopped);
}

bool session__stopped(void)
{
	return stopped;
}

/* SA_RESTART: a write blocked on a reader that does not read goes on
 * waiting (no journal: nothing else keeps its events), not cut short.
 */
void session__catch_suspend(void)
{
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGTSTP, &sa, NULL);
	sigaction(SIGCONT, &sa, NULL);
	sigaddset(&ending, SIGTSTP);
}

bool session__suspending(void)
{
	return suspend;
}

/* Stopped for real, as SIGTSTP's default action does; back on SIGCONT.
 * The screen, if any, is the terminal's meanwhile. A job in the
 * background that gives the terminal back is stopped there (SIGTTOU);
 * continued while it did (fg), it is not stopped once more.
 */
static void stop_here(void (*screen)(bool shown))
{
	struct sigaction dfl = { .sa_handler = SIG_DFL }, old;
	sig_atomic_t since = continued;

	if (screen)
		screen(false);
	sigemptyset(&dfl.sa_mask);
	sigaction(SIGTSTP, &dfl, &old);
	if (!screen || continued == since)
		raise(SIGTSTP);
	sigaction(SIGTSTP, &old, NULL);
	if (screen)
		screen(true);
}

int session__suspend(struct session *s, int (*cycle)(struct session *s, long *drained),
		     void (*screen)(bool shown))
{
	long drained;
	int err = 0;

	if (!suspend)
		return 0;
	suspend = 0;
	session__quiesce(s);
	pipeline__forget_dry(s->pl);
	do
		err = cycle(s, &drained);
	while (!err && drained > 0 && pipeline__holds(s->pl));
	if (!err)
		pipeline__let_go(s->pl);
	fflush(stdout);
	stop_here(screen);
	/* the rescue reads again: at the next wait, as at the first */
	if (drainer__rescue(s->drainer) && rescue__resume(drainer__rescue(s->drainer)))
		s->rescue_err = -EIO;
	return err;
}

/* The ending signals are blocked from the check of the flag until ppoll()
 * lets them in, atomically: one that comes just before the sleep is not
 * slept through. A descriptor < 0 is none (ppoll() skips it): with both,
 * only the time and the signals. other: other processes' reads to mirror
 * (readers.h), shown as soon as they are made. Room on standard output for
 * what waits there (output_defer()) ends the wait too.
 */
static void wait_fds(int fd, int other, double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	struct pollfd pfd[3] = {
		{ .fd = fd, .events = POLLIN },
		{ .fd = other, .events = POLLIN },
		{ .fd = output_deferred_fd(), .events = POLLOUT },
	};
	sigset_t open;

	sigprocmask(SIG_BLOCK, &ending, &open);
	if (!stopped && !suspend)
		ppoll(pfd, 3, &ts, &open);
	sigprocmask(SIG_SETMASK, &open, NULL);
}

static void wait_fd(int fd, double secs)
{
	wait_fds(fd, -1, secs);
}

void session__sleep(double secs)
{
	wait_fd(-1, secs);
}

static double mono_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* No fill wake: ask the watch every FILL_TICK while streams are busy,
 * about the programs that had bytes at the walk, and about every program
 * every FILL_TICK_ALL ticks (one that starts a storm between two walks).
 * Idle (the last cycle drained nothing) the wait is one sleep, as before.
 */
static void wait_ticking(struct session *s, double secs)
{
	double end = mono_now() + secs, left;
	unsigned int tick = 0;

	while (!stopped && !suspend && (left = end - mono_now()) > 0) {
		wait_fd(-1, left < FILL_TICK ? left : FILL_TICK);
		if (progs__filling(s->progs, ++tick % FILL_TICK_ALL == 0) > 0)
			return;
	}
}

/* The fill wake's wakes go to the rescue thread (rescue.h), started at
 * the first wait, which wakes this thread for a drain or reads for the
 * drain in progress; where it cannot run, they go to this thread's wait.
 */
static bool rescuing(struct session *s)
{
	if (!drainer__rescue(s->drainer) && !s->rescue_err) {
		s->rescue_err = drainer__rescue_start(s->drainer, progs__fill(s->progs)) ?:
				pipeline__allow_rescue(s->pl) ?: -EALREADY;
	}
	return drainer__rescue(s->drainer);
}

void session__wait(struct session *s, double secs, bool busy)
{
	int fd = progs__fill_fd(s->progs), filling;
	struct readers *r = progs__readers(s->progs);
	int other = r ? readers__mirror_fd(r) : -1;

	if (fd >= 0 && rescuing(s)) {
		if (pipeline__claims(s->pl) && secs > PIPELINE_RIGHT_WAIT)
			secs = PIPELINE_RIGHT_WAIT;
		wait_fds(rescue__notify_fd(drainer__rescue(s->drainer)), other, secs);
		rescue__notified(drainer__rescue(s->drainer));
		return;
	}
	if (fd >= 0) {
		progs__fill_rearm(s->progs);
		wait_fds(fd, other, secs);
		return;
	}
	filling = busy && secs > FILL_TICK ? progs__filling(s->progs, true) : -ENOENT;
	if (filling == 0)
		wait_ticking(s, secs);
	else if (filling < 0)
		wait_fds(-1, other, secs);
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
		/* from the start: a reader is seen from its first read after */
		ops.readers = progs__readers(s->progs);
		ops.steal = journal_cli__steal();
		err = pipeline__new(&s->pl, s->drainer, &ops);
	}
	if (err) {
		char what[128];

		snprintf(what, sizeof(what), "cannot set up %s", o->what);
		return exit_for_errno(err, what);
	}
	return EXIT_OK;
}

void session__quiesce(struct session *s)
{
	rescue__stop(drainer__rescue(s->drainer));
}

int session__end(struct session *s, int err)
{
	int kerr;

	session__quiesce(s);
	err = err ?: pipeline__flush(s->pl);
	if (!err)
		return 0;
	/* a reader gone or a failed write must not lose what was read */
	kerr = pipeline__keep(s->pl);
	return kerr && (err == -EPIPE || err == -EINTR) ? kerr : err;
}

void session__close(struct session *s)
{
	/* no read ahead while the pipeline goes */
	session__quiesce(s);
	pipeline__free(s->pl);
	drainer__free(s->drainer);
	symbolizer__free(s->sym);
	progs__close(s->progs);
	journal__close(s->journal);
	memset(s, 0, sizeof(*s));
}

int session__failed(struct session *s, int err, const char *what)
{
	/* a reader gone (| head), or output cut short by an ending signal */
	if (err == -EPIPE || (err == -EINTR && stopped)) {
		clearerr(stdout);
		return EXIT_OK;
	}
	if (ferror(stdout))
		return output_failed(err);
	return journal_cli__failed(s->journal, err, what);
}
