/* SPDX-License-Identifier: GPL-2.0 */
/* The screen of `bpfstderr top` (ncurses): a table of the model's rows, a
 * detail pane, a follow view, help; one key table. It reads the model and
 * calls tick() once per interval to refresh it.
 */
#ifndef BPFSTDERR_TUI_H
#define BPFSTDERR_TUI_H

#include <stdbool.h>

#include "top_model.h"

struct top_opts {
	double interval;
	enum top_col sort;
	bool reverse;
	bool no_color;
	/* runtime statistics on or off (key S); sets m->stats, m->stats_note */
	int (*stats)(struct top_model *m, bool on, void *ctx);
	/* Ctrl-Z (SIGTSTP, caught by the caller: session.h): pending() says
	 * one came, which ends the wait for a key; suspend(), called on every
	 * pass of the loop, stops top if one did, the screen given back to
	 * the terminal meanwhile (screen(false)) and drawn again after
	 * (screen(true)). 0, or -errno: top ends.
	 */
	bool (*pending)(void);
	int (*suspend)(void (*screen)(bool shown), void *ctx);
};
int tui_run(struct top_model *m, const struct top_opts *o,
	    int (*tick)(struct top_model *m, void *ctx), void *ctx);

#endif
