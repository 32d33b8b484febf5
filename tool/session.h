/* SPDX-License-Identifier: GPL-2.0 */
/* A session: what every command that drains streams sets up and tears
 * down, in one place (as perf_session is for perf): the journal, the
 * program enumeration, the symbolizer, the drainer and the pipeline, in
 * that order; and the stop flag that ending signals raise.
 */
#ifndef BPFSTDERR_SESSION_H
#define BPFSTDERR_SESSION_H

#include <stdbool.h>

#include "journal.h"
#include "pipeline.h"
#include "progs.h"
#include "stream.h"
#include "symbolize.h"

struct session_opts {
	const char *what;		/* "following programs": names the command in errors */
	bool journal_required;		/* --no-journal is a usage error (record) */
	struct symbolizer_opts sym;
	struct pipeline_ops ops;	/* .journal and .sym are the session's */
};

struct session {
	enum stream_backend backend;
	struct journal *journal;	/* NULL under --no-journal */
	struct progs *progs;
	struct symbolizer *sym;
	struct drainer *drainer;
	struct pipeline *pl;
	int rescue_err;		/* 0: not tried; the rescue's start, -EALREADY: started */
};

/* Sets everything up: EXIT_OK, or the exit code after one line on stderr.
 * session__close() frees what was set up, either way.
 */
int session__open(struct session *s, const struct session_opts *o);
void session__close(struct session *s);

/* The exit code for a run that failed with err (-errno), after one line:
 * stdout that could not be written, the journal's own failure, or the
 * kernel's (exit_for_errno). -EPIPE, a reader gone as with `| head`, and
 * output cut short by an ending signal are not failures.
 */
int session__failed(struct session *s, int err, const char *what);

/* SIGINT, SIGTERM, SIGHUP and SIGQUIT end a session the same way: the
 * command's loop sees session__stopped(), drains once more and exits 0.
 * Caught from before session__open(), so that a signal during set-up
 * still gets the last drain.
 */
void session__catch_signals(void);
bool session__stopped(void);
/* Ctrl-Z (SIGTSTP): the wait ends (session__wait(), or a screen's wait
 * that asks session__suspending()), and the command's loop calls
 * session__suspend(), which stops the rescue, drains with cycle until it
 * holds nothing, lets every read right go (pipeline__let_go()) and only
 * then stops the process; on SIGCONT the rescue reads again. A process
 * stopped holding a right kept its streams from every other (record's
 * among them) for as long as it stayed stopped. SIGSTOP cannot be caught:
 * it stops with the rights held. screen: top's (tui.c), given back to the
 * terminal (shown false) just before the stop and drawn again after it;
 * NULL: none. Caught after session__catch_signals() where that is
 * called, and before the screen starts, so that its library (ncurses)
 * leaves SIGTSTP to us. 0, or cycle's error.
 */
void session__catch_suspend(void);
bool session__suspending(void);
int session__suspend(struct session *s, int (*cycle)(struct session *s, long *drained),
		     void (*screen)(bool shown));
/* Sleeps secs, less when an ending signal comes. */
void session__sleep(double secs);
/* The wait between two drains: secs, less when an ending signal comes or
 * a stream passed FILL_MARK (bpf/fill.h) and must be drained before it
 * fills. Told by the fill wake (fill.h) where the kernel allows it,
 * through the rescue thread (rescue.h), which also reads for a drain in
 * progress; else, while busy (the last drain read bytes), by the watch's
 * check every FILL_TICK seconds; idle, one sleep.
 */
void session__wait(struct session *s, double secs, bool busy);
/* Before the last drain: nothing is read ahead after it (rescue.h), so
 * that the last drain hands out everything read.
 */
void session__quiesce(struct session *s);
/* The end of every run, after its last drain, whatever ended it (err:
 * 0, or why the run failed): the rescue stops; on success everything
 * held is emitted (pipeline__flush()); on failure, or when that fails,
 * nothing more goes to the sink and every byte read is kept
 * (pipeline__keep()): a read is destructive. The run's error, or keeping's
 * where the run's was only a reader gone (-EPIPE) or a signal (-EINTR).
 */
int session__end(struct session *s, int err);

#endif
