// SPDX-License-Identifier: GPL-2.0
/* The ncurses screen of `bpfstderr top`: draws the model (top.h), keys go
 * through one action table, from which the help screen is made too.
 * Every string drawn has been through term_escape() already.
 */
#include <errno.h>
#include <locale.h>
#include <math.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <wchar.h>
#include <curses.h>

#include "output.h"
#include "render.h"
#include "tui.h"

#define MIN_COLS	40
#define MIN_LINES	10

enum view { VIEW_TABLE, VIEW_DETAIL, VIEW_FOLLOW, VIEW_HELP, VIEW_NOTICES };

enum pair { PAIR_HEAD = 1, PAIR_FAULT, PAIR_WARN, PAIR_OK };

struct tui {
	struct top_model *m;
	struct top_opts o;
	int (*tick)(struct top_model *m, void *ctx);
	void *ctx;
	enum view view, back;
	struct row **rows;
	size_t nrows, sel, first;
	__u32 sel_id;
	int scroll;		/* detail/follow/help: lines from the top, -1 = bottom */
	char filter[64];
	bool editing;
	bool paused;
	bool quit;
	bool color;
	int want[COL_CNT];	/* column widths the cells seen ask for */
	unsigned long long version;	/* of the model the view was built from */
	bool dirty;		/* the screen must be drawn again */
};

static volatile sig_atomic_t got_signal;
static sigset_t waited;		/* the signals that end the wait for a key */

static void on_signal(int sig)
{
	(void)sig;
	got_signal = 1;
}

/* Every signal whose default is to end the process without a core dump
 * or that a user sends to quit (SIGQUIT): each ends the loop, so that the
 * terminal leaves the alternate screen with the cursor and echo back.
 * SIGHUP included: a closed ssh session must not leave a broken tmux pane.
 */
static void catch_signals(struct sigaction *sa)
{
	static const int sigs[] = {
		SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGALRM, SIGUSR1, SIGUSR2,
	};
	size_t i;

	sigemptyset(&sa->sa_mask);
	sigemptyset(&waited);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		sigaction(sigs[i], sa, NULL);
		sigaddset(&waited, sigs[i]);
	}
	/* the caller's (top_opts.pending), and ncurses' KEY_RESIZE */
	sigaddset(&waited, SIGTSTP);
	sigaddset(&waited, SIGWINCH);
}

static void restore_terminal(void)
{
	if (!isendwin())
		endwin();
}

/* Ctrl-Z: the terminal as it was while top is stopped (shown false), the
 * screen drawn again in full once continued (doupdate() after endwin()
 * sets the terminal up again, as ncurses' own SIGTSTP handler does).
 */
static void screen(bool shown)
{
	if (!shown) {
		restore_terminal();
		return;
	}
	def_shell_mode();	/* the shell's settings made while stopped stay its */
	clearok(curscr, TRUE);
	doupdate();
}

/* ---- drawing helpers ---------------------------------------------------- */

static void style_on(struct tui *t, enum pair p, int extra)
{
	if (t->color && p)
		attron(COLOR_PAIR(p));
	if (extra)
		attron(extra);
}

static void style_off(struct tui *t, enum pair p, int extra)
{
	if (t->color && p)
		attroff(COLOR_PAIR(p));
	if (extra)
		attroff(extra);
}

/* Draw safe UTF-8 text clipped to width columns; returns columns used. */
static int put_clipped(int y, int x, const char *s, int width)
{
	mbstate_t st = {};
	int used = 0, w;
	size_t n;
	wchar_t wc;

	move(y, x);
	while (*s && used < width) {
		n = mbrtowc(&wc, s, strlen(s), &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			addch('?');
			used++;
			s++;
			memset(&st, 0, sizeof(st));
			continue;
		}
		w = wcwidth(wc);
		if (w < 0) {		/* a control character: never to the terminal */
			addch('?');
			used++;
			s += n;
			continue;
		}
		if (used + w > width)
			break;
		addnstr(s, n);
		used += w;
		s += n;
	}
	return used;
}

/* Columns of the display width of s (safe UTF-8). */
static int text_width(const char *s)
{
	mbstate_t st = {};
	int len = 0, w;
	wchar_t wc;
	size_t n;

	while (*s) {
		n = mbrtowc(&wc, s, strlen(s), &st);
		if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
			len++;
			s++;
			memset(&st, 0, sizeof(st));
			continue;
		}
		w = wcwidth(wc);
		len += w > 0 ? w : 1;
		s += n;
	}
	return len;
}

/* A cell: padded to width, or, when it does not fit, cut one column
 * short and marked as cut with CUT_MARK.
 */
static void put_cell(int y, int x, const char *s, int width, bool right)
{
	int len = text_width(s), used;

	if (width <= 0)
		return;
	if (len <= width) {
		put_clipped(y, x + (right ? width - len : 0), s, width);
		return;
	}
	used = put_clipped(y, x, s, width - 1);
	mvaddstr(y, x + used, MB_CUR_MAX > 1 ? "\u2026" : ">");
}

/* ---- the table ------------------------------------------------------------ */

/* Columns are as wide as the widest cell seen on screen (up to max), and
 * keep that width until the counts are cleared or the terminal resized, so
 * that they do not jump while scrolling. When the screen is narrow, a
 * column with a shrink width gives way down to it before any column is
 * dropped.
 */
struct col_layout {
	enum top_col col;
	bool right;
	int priority;		/* dropped first when narrow: highest number */
	int max;		/* widest it grows to content; wider cells are cut */
	int shrink;		/* narrowest before columns are dropped; 0: never cut */
};

static const struct col_layout layout[] = {
	{ COL_ID, true, 0, 10, 0 },
	{ COL_TYPE, false, 5, 24, 0 },
	{ COL_NAME, false, 0, 64, 22 },
	{ COL_OWNER, false, 10, 32, 18 },
	{ COL_OUT, true, 7, 12, 0 },
	{ COL_ERR, true, 6, 12, 0 },
	{ COL_FAULTS, true, 1, 12, 0 },
	{ COL_KINDS, false, 9, 40, 18 },
	{ COL_RATE, true, 8, 10, 0 },
	{ COL_LAST, true, 4, 6, 0 },
	{ COL_RUNS, true, 3, 12, 0 },
	{ COL_NS_RUN, true, 3, 12, 0 },
	{ COL_CPU, true, 3, 8, 0 },
	{ COL_SAT, false, 2, 32, 0 },
};
#define LAYOUT_CNT ((int)(sizeof(layout) / sizeof(layout[0])))
#define SAT_BAR_W	9	/* "[######] " */
#define SAT_BAR_MIN	18	/* a SATURATION cell this wide has the bar */

/* What the cell needs: its text, and the bar for SATURATION. */
static int cell_need(enum top_col c, const char *text)
{
	int w = text_width(text);

	if (c == COL_SAT)
		return w + SAT_BAR_W > SAT_BAR_MIN ? w + SAT_BAR_W : SAT_BAR_MIN;
	return w;
}

static int header_need(enum top_col c)
{
	return (int)strlen(top_col_name(c)) + 1;	/* and the sort mark */
}

/* Which columns fit and how wide: want[] is what their content asks for.
 * Shrinkable columns count at their shrink width, and columns are dropped
 * by priority until the row fits in COLS; space left goes to the cut
 * cells, most important column first, then to NAME.
 */
static void fit_columns(const int *want, bool stats, bool *show, int *width)
{
	int total = 0, i, p, worst, left, name = -1, more, full[LAYOUT_CNT];

	for (i = 0; i < LAYOUT_CNT; i++) {
		show[i] = stats || !top_col_is_stats(layout[i].col);
		if (!show[i]) {
			width[i] = 0;
			continue;
		}
		full[i] = want[i] < layout[i].max ? want[i] : layout[i].max;
		width[i] = layout[i].shrink && full[i] > layout[i].shrink ? layout[i].shrink : full[i];
		total += width[i] + 1;
		if (layout[i].col == COL_NAME)
			name = i;
	}
	while (total > COLS) {
		worst = -1;
		for (i = 0; i < LAYOUT_CNT; i++)
			if (show[i] && layout[i].priority &&
			    (worst < 0 || layout[i].priority > layout[worst].priority))
				worst = i;
		if (worst < 0)
			break;
		show[worst] = false;
		total -= width[worst] + 1;
	}
	if (total > COLS) {	/* only what is never dropped: NAME gives way */
		more = total - COLS;
		more = more < width[name] - 1 ? more : width[name] - 1;
		width[name] -= more;
		total -= more;
	}
	left = COLS - total;
	for (p = 0; p <= 10 && left > 0; p++) {
		for (i = 0; i < LAYOUT_CNT && left > 0; i++) {
			if (!show[i] || layout[i].priority != p || full[i] <= width[i])
				continue;
			more = full[i] - width[i] < left ? full[i] - width[i] : left;
			width[i] += more;
			left -= more;
		}
	}
	if (left > 0)
		width[name] += left;
}

static enum pair sat_pair(const struct row *r)
{
	double s = row_saturation(r);

	if (row_losing(r))
		return PAIR_FAULT;
	return s >= 0.9 ? PAIR_FAULT : s >= 0.5 ? PAIR_WARN : PAIR_OK;
}

static void draw_sat(struct tui *t, int y, int x, int w, const struct row *r, const char *text)
{
	int bar = w >= SAT_BAR_MIN ? SAT_BAR_W - 3 : 0, fill, i;
	char b[16];

	if (bar) {
		fill = (int)(row_saturation(r) * bar + 0.999);
		if (fill > bar)
			fill = bar;
		b[0] = '[';
		for (i = 0; i < bar; i++)
			b[i + 1] = i < fill ? '#' : '-';
		b[bar + 1] = ']';
		b[bar + 2] = '\0';
		style_on(t, sat_pair(r), 0);
		put_clipped(y, x, b, bar + 2);
		style_off(t, sat_pair(r), 0);
	}
	style_on(t, sat_pair(r), 0);
	put_cell(y, x + (bar ? bar + 3 : 0), text, w - (bar ? bar + 3 : 0), false);
	style_off(t, sat_pair(r), 0);
}

static void draw_row(struct tui *t, int y, const struct row *r, const bool *show, const int *width,
		     bool selected)
{
	char cell[300];
	int x = 0, i, w;
	int extra = selected ? A_REVERSE : r->unloaded ? A_DIM : 0;

	if (selected) {
		attron(A_REVERSE);
		mvhline(y, 0, ' ', COLS);
	}
	for (i = 0; i < LAYOUT_CNT; i++) {
		if (!show[i])
			continue;
		w = width[i];
		top_cell(t->m, r, layout[i].col, cell, sizeof(cell));
		if (layout[i].col == COL_SAT && !selected) {
			draw_sat(t, y, x, w, r, cell);
		} else {
			enum pair p = layout[i].col == COL_FAULTS && r->fault_total ? PAIR_FAULT : 0;

			style_on(t, selected ? 0 : p, extra);
			put_cell(y, x, cell, w, layout[i].right);
			style_off(t, selected ? 0 : p, extra);
		}
		x += w + 1;
	}
	if (selected)
		attroff(A_REVERSE);
}

static void draw_header(struct tui *t, int y, const bool *show, const int *width)
{
	char label[32];
	int x = 0, i, w;

	style_on(t, PAIR_HEAD, A_REVERSE);
	mvhline(y, 0, ' ', COLS);
	for (i = 0; i < LAYOUT_CNT; i++) {
		if (!show[i])
			continue;
		w = width[i];
		snprintf(label, sizeof(label), "%s", top_col_name(layout[i].col));
		for (char *c = label; *c; c++)
			*c = *c >= 'a' && *c <= 'z' ? *c - 32 : *c;
		if (layout[i].col == t->o.sort)
			strcat(label, t->o.reverse ? "^" : "v");
		put_cell(y, x, label, w, layout[i].right);
		x += w + 1;
	}
	style_off(t, PAIR_HEAD, A_REVERSE);
}

static void draw_status(struct tui *t)
{
	char line[512];
	int faulting = 0;
	size_t i;

	for (i = 0; i < t->m->cnt; i++)
		faulting += t->m->rows[i]->fault_total > 0;
	/* what changes the meaning of the screen first: cut at the right
	 * edge, a paused or filtered view must not pass for a live, whole one
	 */
	snprintf(line, sizeof(line),
		 "bpfstderr top%s%s%s - %zu programs, %d faulting, %llu faults, %llu messages,"
		 " %d losing reports | every %gs | sort %s%s%s%s",
		 t->paused ? " - PAUSED" : "", t->filter[0] ? " - filter: " : "", t->filter,
		 t->m->cnt, faulting, t->m->fault_total, t->m->msg_total, t->m->losing,
		 t->m->interval, top_col_name(t->o.sort), t->o.reverse ? " (reversed)" : "",
		 t->m->stats_note[0] ? " | " : "", t->m->stats_note);
	style_on(t, 0, A_BOLD);
	put_clipped(0, 0, line, COLS);
	style_off(t, 0, A_BOLD);
}

/* ---- notices: the lines under the status line ------------------------- */

/* Each fits the terminal's width: in full, or in brief (else cut) with
 * NOTICE_HINT; n shows them all in full, wrapped (VIEW_NOTICES).
 */
#define NOTICE_MAX	4
#define NOTICE_HINT	" [n: more]"

struct notice {
	char full[1100];
	char brief[300];	/* empty: the full text, cut */
	enum pair pair;
	int attr;
};

/* The first line: the journal's state when reads stopped (it changes what
 * the screen means), else what the write probe measured.
 */
static void health_notice(struct tui *t, struct notice *n)
{
	const struct stream_health *h = &t->m->health;

	n->attr = A_BOLD;
	n->pair = PAIR_WARN;
	if (t->m->notice[0]) {
		snprintf(n->full, sizeof(n->full), "%s", t->m->notice);
		return;
	}
	if (h->verdict == WRITE_WORKS) {
		n->pair = PAIR_OK;
		n->attr = 0;
		snprintf(n->full, sizeof(n->full), "stream writes work: messages and fault reports are readable");
		return;
	}
	n->pair = PAIR_FAULT;
	snprintf(n->full, sizeof(n->full), "stream writes %s%s: %s", stream_health__label(h),
		 h->verdict == WRITE_ENOMEM ? " - fault reports are being dropped by this kernel" : "",
		 stream_health__meaning(h));
	snprintf(n->brief, sizeof(n->brief), "stream writes %s: %s", stream_health__label(h),
		 h->verdict == WRITE_UNTESTED ? "whether anything shows is unknown" :
		 h->verdict == WRITE_UNSUPPORTED ? "programs cannot print" : "nothing will show here");
}

/* What the demo shows on this host, from what the write probe measured,
 * and where it runs.
 */
static void demo_notice(struct tui *t, struct notice *n)
{
	const struct stream_health *h = &t->m->health;
	const char *w = t->m->demo_where[0] ? t->m->demo_where : "this kernel";

	n->pair = PAIR_WARN;
	if (h->verdict == WRITE_WORKS) {
		snprintf(n->full, sizeof(n->full), "demo on %s: demo_* programs fault once a second and print", w);
		snprintf(n->brief, sizeof(n->brief), "demo on %s: demo_* fault and print", w);
	} else if (stream_health__untraced(h)) {
		snprintf(n->full, sizeof(n->full), "demo on %s: demo_* programs fault once a second; this "
			 "kernel drops their reports without a trace (a failed write charges nothing), so "
			 "their rows stay at 0: only the write probe shows the loss", w);
		snprintf(n->brief, sizeof(n->brief), "demo on %s: reports dropped without a trace", w);
	} else {
		snprintf(n->full, sizeof(n->full), "demo on %s: demo_* programs fault once a second; their "
			 "reports are dropped here, so their streams stay empty and SATURATION shows the "
			 "bytes each dropped report leaked", w);
		snprintf(n->brief, sizeof(n->brief), "demo on %s: reports dropped, SATURATION shows them", w);
	}
}

/* Pushes the kernel refused for lack of room, as a fill wake counted. */
static void refused_notice(struct tui *t, struct notice *n)
{
	n->pair = PAIR_FAULT;
	n->attr = A_BOLD;
	snprintf(n->full, sizeof(n->full), "%llu fault reports and messages refused for lack of room "
		 "(streams full, counted as the kernel refused them) in %zu program%s: see SATURATION",
		 t->m->refused_total, t->m->refused_rows, t->m->refused_rows == 1 ? "" : "s");
	snprintf(n->brief, sizeof(n->brief), "%llu refused for lack of room in %zu program%s",
		 t->m->refused_total, t->m->refused_rows, t->m->refused_rows == 1 ? "" : "s");
}

/* Fills n[] in the order they are drawn; returns how many. */
static int collect_notices(struct tui *t, struct notice *n)
{
	int cnt = 0;

	memset(n, 0, NOTICE_MAX * sizeof(*n));
	health_notice(t, &n[cnt++]);
	if (t->m->refused_total)
		refused_notice(t, &n[cnt++]);
	if (!t->m->demo)
		return cnt;
	demo_notice(t, &n[cnt++]);
	if (t->m->demo_refused) {
		n[cnt].pair = PAIR_WARN;
		snprintf(n[cnt++].full, sizeof(n->full), "demo: %s", t->m->demo_refused);
	}
	return cnt;
}

static void draw_notice(struct tui *t, int y, const struct notice *n)
{
	const char *s = n->brief[0] ? n->brief : n->full;
	int hint = text_width(NOTICE_HINT), room = COLS - hint, used;

	style_on(t, n->pair, n->attr);
	if (text_width(n->full) <= COLS) {
		put_clipped(y, 0, n->full, COLS);
	} else {
		if (text_width(s) > room)
			room--;	/* for the ellipsis */
		used = put_clipped(y, 0, s, room);
		if (used < text_width(s))
			addstr(MB_CUR_MAX > 1 ? "\u2026" : ">");
		addstr(NOTICE_HINT);
	}
	style_off(t, n->pair, n->attr);
}

/* Returns the lines drawn, from line 1. */
static int draw_notices(struct tui *t)
{
	struct notice n[NOTICE_MAX];
	int cnt = collect_notices(t, n), i;

	for (i = 0; i < cnt; i++)
		draw_notice(t, 1 + i, &n[i]);
	return cnt;
}

static void fold(FILE *f, const char *s, int width);

static void fill_notices(struct tui *t, FILE *f)
{
	struct notice n[NOTICE_MAX];
	int cnt = collect_notices(t, n), i;

	for (i = 0; i < cnt; i++) {
		fold(f, n[i].full, COLS);
		fprintf(f, "\n");
	}
}

static void title_notices(struct tui *t, char *buf, size_t len)
{
	(void)t;
	snprintf(buf, len, "bpfstderr top - notices in full");
}

static void draw_footer(struct tui *t)
{
	char line[256];

	if (t->editing)
		snprintf(line, sizeof(line), "filter (name, type, owner): %s_   Enter apply, Esc cancel",
			 t->filter);
	else if (t->view == VIEW_TABLE)
		snprintf(line, sizeof(line), "Enter detail  f follow  / filter  s,<,> sort  r reverse  "
			 "Space pause  c clear  S stats  h help  q quit");
	else
		snprintf(line, sizeof(line), "Up/Down scroll  q,Esc back  h help");
	style_on(t, 0, A_REVERSE);
	mvhline(LINES - 1, 0, ' ', COLS);
	put_clipped(LINES - 1, 0, line, COLS);
	style_off(t, 0, A_REVERSE);
}

static void rebuild_view(struct tui *t)
{
	size_t i;

	free(t->rows);
	t->nrows = top_model__view(t->m, t->filter, t->o.sort, t->o.reverse, &t->rows);
	t->sel = 0;
	for (i = 0; i < t->nrows; i++)
		if (t->rows[i]->ident.id == t->sel_id)
			t->sel = i;
	if (t->nrows)
		t->sel_id = t->rows[t->sel]->ident.id;
}

/* Grow each column's wanted width to the rows on screen. */
static void want_widths(struct tui *t, int height)
{
	char cell[300];
	size_t r;
	int i, w;

	for (i = 0; i < LAYOUT_CNT; i++)
		if (t->want[i] < header_need(layout[i].col))
			t->want[i] = header_need(layout[i].col);
	for (r = t->first; r < t->nrows && (int)(r - t->first) < height; r++) {
		for (i = 0; i < LAYOUT_CNT; i++) {
			top_cell(t->m, t->rows[r], layout[i].col, cell, sizeof(cell));
			w = cell_need(layout[i].col, cell);
			if (w > t->want[i])
				t->want[i] = w;
		}
	}
}

static void draw_table(struct tui *t, int y0)
{
	bool show[LAYOUT_CNT];
	int width[LAYOUT_CNT], height = LINES - 1 - (y0 + 1);
	size_t i;

	if (t->sel < t->first)
		t->first = t->sel;
	if (height > 0 && t->sel >= t->first + height)
		t->first = t->sel - height + 1;
	want_widths(t, height);
	fit_columns(t->want, t->m->stats, show, width);
	draw_header(t, y0, show, width);
	for (i = t->first; i < t->nrows && (int)(i - t->first) < height; i++)
		draw_row(t, y0 + 1 + (i - t->first), t->rows[i], show, width, i == t->sel);
	if (!t->nrows)
		put_clipped(y0 + 2, 2, t->filter[0] ? "no program matches the filter" :
			    "no BPF programs loaded", COLS - 2);
}

/* ---- text pages: detail, follow, help ------------------------------------ */

static void print_recent(FILE *f, struct symbolizer *sym, const struct row *r, int max, bool frames)
{
	int i, n = r->recent_cnt < max ? r->recent_cnt : max;
	char ts[32], who[READER_NAME_MAX];

	for (i = n; i > 0; i--) {
		const struct recent *rc = &r->recent[(r->recent_head - i + RECENT_MAX) % RECENT_MAX];
		struct fault flt;

		format_time(&rc->ts, ts, sizeof(ts), false);
		fprintf(f, "%s %s", ts, stream_name(rc->stream));
		if (rc->mirrored)	/* printable (readers.h) */
			fprintf(f, ", read by %s", reader_name(&rc->who, who, sizeof(who)));
		fputs(": ", f);
		if (rc->fault && !fault__parse(rc->text, rc->len, true, &flt)) {
			fprintf(f, "FAULT ");
			print_fault_summary(f, &flt);
			fputc('\n', f);
			if (frames)
				print_frames(f, sym, &r->ident, &flt, "    ", fault_first_frame(&flt), 0);
			fault__fini(&flt);
			continue;
		}
		fput_term(f, rc->text, rc->len);
		fputs(rc->partial ? " [no newline]\n" : "\n", f);
	}
	if (!n)
		fprintf(f, "(nothing read from this program yet)\n");
}

/* Streams another process reads: bpfstderr leaves them to it and shows
 * what it read (mirrored).
 */
static void print_mirrored(FILE *f, const struct row *r)
{
	char who[READER_NAME_MAX];
	enum stream s;
	int i;

	for_each_stream(s) {
		i = stream_idx(s);
		if (r->mirrored[i])
			fprintf(f, "%s: read by %s too: %llu events mirrored\n", stream_name(s),
				reader_name(&r->reader[i], who, sizeof(who)), r->mirrored[i]);
	}
}

static void print_saturation(FILE *f, const struct row *r)
{
	struct timespec ts;
	enum stream s;
	char at[40];
	int i;

	if (r->has_error_count)
		fprintf(f, "kernel error count %lld/%d%s\n", r->error_count, ERROR_COUNT_MAX,
			r->error_count > ERROR_COUNT_MAX ? " (reports beyond 64 hidden)" : "");
	for_each_stream(s) {
		i = stream_idx(s);
		if (!r->has_streams)
			continue;
		fprintf(f, "%s: %d of %d bytes accounted after draining", stream_name(s),
			r->capacity[i], STREAM_MAX_CAPACITY);
		if (r->leaked[i])
			fprintf(f, "; %d never readable, lost", r->leaked[i]);
		if (r->refused[i] > 0 && !r->has_drops)
			fprintf(f, "; %lld %s refused for lack of room (counted as the kernel refused them)",
				r->refused[i], s == STREAM_STDERR ? "fault reports and messages" : "messages");
		if (r->full_ns[i]) {
			ts = (struct timespec){ r->full_ns[i] / 1000000000LL, r->full_ns[i] % 1000000000LL };
			format_time(&ts, at, sizeof(at), false);
			fprintf(f, "; FULL when drained at %s", at);
			if (r->refused[i] <= 0 && !r->has_drops)
				fprintf(f, ", writes refused, how many unknown");
		}
		fprintf(f, "\n");
	}
	print_mirrored(f, r);
}

/* ---- history graphs ------------------------------------------------------- */

#define GRAPH_ROWS	2	/* lines per graph */

/* A point is a bar from the bottom, in steps: none without a sample, the
 * lowest step for 0 (a flat line), all of them for the window's max.
 */
static int graph_height(double v, double max, int steps)
{
	double h;

	if (isnan(v))
		return 0;
	if (v <= 0 || max <= 0)
		return 1;
	h = v / max * (steps - 1);
	return 1 + (int)h + (h > (int)h);	/* rounded up: any count shows */
}

/* One line of a graph, line 0 at the top. Braille where the locale has
 * UTF-8 (two points a cell, four steps a line: U+2800 + dots), else ASCII
 * (one point a cell, '.' and '|' for half and whole).
 */
static void graph_line(FILE *f, const double *pts, int n, double max, int line, bool braille)
{
	static const unsigned char dot[2][4] = { { 0x40, 0x04, 0x02, 0x01 }, { 0x80, 0x20, 0x10, 0x08 } };
	int sub = braille ? 4 : 2, steps = GRAPH_ROWS * sub, below = (GRAPH_ROWS - 1 - line) * sub;
	int i, k, h, d, dots;

	for (i = 0; i < n; i += braille ? 2 : 1) {
		if (!braille) {
			h = graph_height(pts[i], max, steps) - below;
			fputc(h <= 0 ? ' ' : h == 1 ? '.' : '|', f);
			continue;
		}
		dots = 0;
		for (k = 0; k < 2 && i + k < n; k++) {
			h = graph_height(pts[i + k], max, steps) - below;
			for (d = 0; d < h && d < sub; d++)
				dots |= dot[k][d];
		}
		if (dots)
			fprintf(f, "\xe2%c%c", 0xa0 | dots >> 6, 0x80 | (dots & 0x3f));
		else
			fputc(' ', f);
	}
	fputc('\n', f);
}

static void fmt_value(char *buf, size_t len, double v)
{
	if (v >= 1e9)
		snprintf(buf, len, "%.1fG", v / 1e9);
	else if (v >= 1e6)
		snprintf(buf, len, "%.1fM", v / 1e6);
	else if (v >= 1e4)
		snprintf(buf, len, "%.1fk", v / 1e3);
	else if (v >= 100)
		snprintf(buf, len, "%.0f", v);
	else if (v == 0 || v >= 1e-4)
		snprintf(buf, len, "%.3g", v);
	else
		snprintf(buf, len, "<0.0001");
}

static void fmt_span(char *buf, size_t len, double s)
{
	if (s < 120)
		snprintf(buf, len, "%.3gs", s);
	else if (s < 7200)
		snprintf(buf, len, "%.3gm", s / 60);
	else if (s < 2 * 86400)
		snprintf(buf, len, "%.3gh", s / 3600);
	else
		snprintf(buf, len, "%.3gd", s / 86400);
}

/* The last minutes of r, one graph a rate, as wide as the screen allows
 * and labelled with its unit, its max and the time it spans.
 */
static void print_graphs(struct tui *t, FILE *f, const struct row *r)
{
	bool braille = MB_CUR_MAX > 1;
	double pts[HIST_SLOTS], max;
	char val[32], span[32];
	enum top_graph g;
	int n, per, i, line;

	if (!t->m->sampled)
		return;
	for (g = 0; g < GRAPH_CNT; g++) {
		if (top_graph_is_stats(g) && !t->m->stats)
			continue;
		n = top_model__graph(t->m, r, g, COLS * (braille ? 2 : 1), pts, &per);
		fmt_span(span, sizeof(span), n * per * t->m->slot_sec);
		if (!g) {
			fmt_span(val, sizeof(val), per * t->m->slot_sec);
			fprintf(f, "\nHISTORY  a point per %s, newest at the right, from 0 up to the max\n", val);
		}
		for (max = -1, i = 0; i < n; i++)
			if (pts[i] > max)	/* false for NAN */
				max = pts[i];
		if (max < 0)
			snprintf(val, sizeof(val), "-");
		else
			fmt_value(val, sizeof(val), max);
		fprintf(f, "%s  max %s  last %s\n", top_graph_unit(g), val, span);
		for (line = 0; line < GRAPH_ROWS; line++)
			graph_line(f, pts, n, max, line, braille);
	}
	if (!t->m->stats)
		fprintf(f, "(runs/s and ns/run: S turns the runtime statistics on)\n");
}

static void print_detail(struct tui *t, FILE *f, struct row *r)
{
	struct gprog *gp = top_model__groups_of(t->m, r);
	char name[600], first[32], last[32];
	struct fault flt;
	int i;

	term_escape(name, sizeof(name), r->ident.name, strlen(r->ident.name));
	fprintf(f, "program %u %s  tag %s  %s  %s%s\n", r->ident.id, name, r->ident.tag, prog_type_name(r->ident.type),
		r->owner, r->unloaded ? "  UNLOADED" : "");
	fprintf(f, "messages: stdout %llu, stderr %llu; faults %llu", r->msgs[stream_idx(STREAM_STDOUT)],
		r->msgs[stream_idx(STREAM_STDERR)], r->fault_total);
	if (r->fault_total)
		fprintf(f, " (%s)", row_kinds(r, name, sizeof(name)));
	fputc('\n', f);
	print_saturation(f, r);
	print_graphs(t, f, r);
	fprintf(f, "\nFAULT GROUPS\n");
	if (symbolizer__notice(t->m->sym))
		fprintf(f, "(%s)\n", symbolizer__notice(t->m->sym));
	for (i = 0; gp && i < gp->group_cnt; i++) {
		const struct fgroup *g = &gp->groups[i];

		if (fault__parse(g->example, g->example_len, true, &flt))
			continue;
		format_time(&g->first, first, sizeof(first), false);
		format_time(&g->last, last, sizeof(last), false);
		fprintf(f, "%llux ", g->count);
		print_group_summary(f, &flt, &g->addrs);
		fprintf(f, "\n  first %.8s, last %.8s, %d task%s, %d CPU%s\n", first, last,
			g->pid_cnt, g->pid_cnt == 1 ? "" : "s", g->cpu_cnt, g->cpu_cnt == 1 ? "" : "s");
		print_frames(f, t->m->sym, &r->ident, &flt, "    ", fault_first_frame(&flt), 12);
		fault__fini(&flt);
	}
	if (!gp || !gp->group_cnt)
		fprintf(f, "(none seen)\n");
	fprintf(f, "\nRECENT MESSAGES\n");
	print_recent(f, t->m->sym, r, 30, false);
}

static void draw_text(struct tui *t, int y0, void (*fill)(struct tui *t, FILE *f));

struct action {
	int keys[4];
	const char *label;
	const char *help;
	void (*fn)(struct tui *t);
};

static const struct action *actions_table(size_t *n);

static void print_help(FILE *f)
{
	const struct action *a;
	size_t n, i;

	a = actions_table(&n);
	for (i = 0; i < n; i++)
		fprintf(f, "  %-16s %s\n", a[i].label, a[i].help);
	fprintf(f, "\nColumns: OUT/ERR messages read per stream, FAULTS reports parsed, KINDS by kind\n"
		   "(AR/AW arena read/write, MG may_goto, DL deadlock, LT lock timeout), RATE faults\n"
		   "per minute, LAST age of the last fault, SATURATION the stream capacity in use:\n"
		   "'leaked NB' is accounted but a read to the end did not return it (reports\n"
		   "dropped), 'refused N' the pushes to stderr the kernel refused for lack of\n"
		   "room as the journal counted them (record's or follow's fill wake), 'full at\n"
		   "HH:MM:SS' when a drain last found stderr full and nothing counted (how many\n"
		   "refused unknown), 'dropped N' the kernel's own count where it keeps\n"
		   "one, n/64 the RFC kernels' error count. A cell ending in\n"
		   "'%s' was cut for want of room.\n"
		   "\nS turns on the kernel's runtime statistics (BPF_ENABLE_STATS) while top\n"
		   "runs: RUN/S runs per second, NS/RUN average run time, CPU%% of one CPU over the\n"
		   "last interval. They cost every run of every program on the machine two clock\n"
		   "reads (tens of ns), and top three reads per CPU and program per refresh;\n"
		   "with kernel.bpf_stats_enabled already 1 top uses them as they are.\n"
		   "\nThe detail (Enter) graphs the program's last minutes: faults/s, messages/s\n"
		   "and, with S, runs/s and ns/run, newest at the right, each from 0 up to the\n"
		   "max in its label. 300 slots of one interval (of 1 s when -d is shorter: 5\n"
		   "minutes at -d 1); a flat line is 0, blank is before top saw the program.\n"
		   "Braille dots with UTF-8, '.' and '|' without.\n",
		MB_CUR_MAX > 1 ? "\u2026" : ">");
}

/* Render a page into lines and draw from line `scroll` (-1: the end),
 * under a title that does not scroll.
 */
static void draw_page(struct tui *t, int y0, void (*fill)(struct tui *t, FILE *f),
		      void (*title)(struct tui *t, char *buf, size_t len))
{
	char head[700];

	title(t, head, sizeof(head));
	style_on(t, PAIR_HEAD, A_BOLD);
	put_clipped(y0++, 0, head, COLS);
	style_off(t, PAIR_HEAD, A_BOLD);
	draw_text(t, y0, fill);
}

static void draw_text(struct tui *t, int y0, void (*fill)(struct tui *t, FILE *f))
{
	char *buf = NULL, *line, *nl;
	size_t len = 0;
	int height = LINES - 1 - y0, total = 0, start, i = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f)
		return;
	fill(t, f);
	fclose(f);
	for (char *c = buf; c && *c; c++)
		total += *c == '\n';
	start = t->scroll < 0 || t->scroll > total - height ? total - height : t->scroll;
	if (start < 0)
		start = 0;
	if (t->scroll >= 0)
		t->scroll = start;
	for (line = buf; line && *line; line = nl ? nl + 1 : NULL, i++) {
		nl = strchr(line, '\n');
		if (nl)
			*nl = '\0';
		if (i >= start && i - start < height)
			put_clipped(y0 + i - start, 0, line, COLS);
	}
	free(buf);
}

/* s word-wrapped at width columns (safe UTF-8: what put_clipped() draws). */
static void fold(FILE *f, const char *s, int width)
{
	const char *p, *cut;
	mbstate_t st;
	int used, w;
	wchar_t wc;
	size_t n;

	while (*s) {
		memset(&st, 0, sizeof(st));
		for (p = s, cut = NULL, used = 0; *p; p += n, used += w) {
			n = mbrtowc(&wc, p, strlen(p), &st);
			if (n == (size_t)-1 || n == (size_t)-2 || n == 0) {
				n = 1;
				memset(&st, 0, sizeof(st));
			}
			w = n > 1 && wcwidth(wc) > 0 ? wcwidth(wc) : 1;
			if (used + w > width)
				break;
			if (*p == ' ')
				cut = p;
		}
		if (*p && cut && cut > s)
			p = cut;
		fprintf(f, "%.*s\n", (int)(p - s), s);
		for (s = p; *s == ' '; s++)
			;
	}
}

static struct row *selected_row(struct tui *t)
{
	return t->nrows ? t->rows[t->sel] : NULL;
}

static void fill_detail(struct tui *t, FILE *f)
{
	struct row *r = selected_row(t);

	if (r)
		print_detail(t, f, r);
}

static void fill_follow(struct tui *t, FILE *f)
{
	struct row *r = selected_row(t);

	if (r)
		print_recent(f, t->m->sym, r, RECENT_MAX, true);
}

static void title_of(struct tui *t, char *buf, size_t len, const char *what)
{
	struct row *r = selected_row(t);
	char name[300];

	if (!r) {
		snprintf(buf, len, "%s", what);
		return;
	}
	term_escape(name, sizeof(name), r->ident.name, strlen(r->ident.name));
	snprintf(buf, len, "%s program %u %s%s", what, r->ident.id, name, r->unloaded ? " (unloaded)" : "");
}

static void title_detail(struct tui *t, char *buf, size_t len)
{
	title_of(t, buf, len, "detail of");
}

static void title_follow(struct tui *t, char *buf, size_t len)
{
	title_of(t, buf, len, "following");
}

static void title_help(struct tui *t, char *buf, size_t len)
{
	(void)t;
	snprintf(buf, len, "bpfstderr top - keys");
}

static void fill_help(struct tui *t, FILE *f)
{
	(void)t;
	print_help(f);
}

static void draw(struct tui *t)
{
	int y0;

	erase();
	if (COLS < MIN_COLS || LINES < MIN_LINES) {
		put_clipped(0, 0, "terminal too small for bpfstderr top (40x10 needed)", COLS);
		refresh();
		return;
	}
	draw_status(t);
	y0 = 1 + draw_notices(t);
	switch (t->view) {
	case VIEW_TABLE:
		draw_table(t, y0);
		break;
	case VIEW_DETAIL:
		draw_page(t, y0, fill_detail, title_detail);
		break;
	case VIEW_FOLLOW:
		draw_page(t, y0, fill_follow, title_follow);
		break;
	case VIEW_HELP:
		draw_page(t, y0, fill_help, title_help);
		break;
	case VIEW_NOTICES:
		draw_page(t, y0, fill_notices, title_notices);
		break;
	}
	draw_footer(t);
	refresh();
}

/* ---- actions ----------------------------------------------------------- */

static void move_sel(struct tui *t, long delta)
{
	long s;

	if (t->view != VIEW_TABLE) {
		t->scroll = (t->scroll < 0 ? 1000000 : t->scroll) + delta;
		if (t->scroll < 0)
			t->scroll = 0;
		return;
	}
	if (!t->nrows)
		return;
	s = (long)t->sel + delta;
	s = s < 0 ? 0 : s >= (long)t->nrows ? (long)t->nrows - 1 : s;
	t->sel = s;
	t->sel_id = t->rows[s]->ident.id;
}

static void act_up(struct tui *t) { move_sel(t, -1); }
static void act_down(struct tui *t) { move_sel(t, 1); }
static void act_pgup(struct tui *t) { move_sel(t, -(LINES - 5)); }
static void act_pgdn(struct tui *t) { move_sel(t, LINES - 5); }
static void act_home(struct tui *t) { move_sel(t, -1000000); }
static void act_end(struct tui *t) { move_sel(t, 1000000); }

static void open_view(struct tui *t, enum view v)
{
	bool page = v == VIEW_HELP || v == VIEW_NOTICES;

	if (!page && !selected_row(t))
		return;
	if (t->view != VIEW_HELP && t->view != VIEW_NOTICES)
		t->back = t->view;
	t->view = v;
	t->scroll = v == VIEW_FOLLOW ? -1 : 0;
}

static void act_detail(struct tui *t) { if (t->view == VIEW_TABLE) open_view(t, VIEW_DETAIL); }
static void act_follow(struct tui *t) { open_view(t, VIEW_FOLLOW); }
static void act_help(struct tui *t) { open_view(t, VIEW_HELP); }
static void act_notices(struct tui *t) { open_view(t, VIEW_NOTICES); }

static void act_back(struct tui *t)
{
	if (t->view == VIEW_TABLE) {
		t->quit = true;
		return;
	}
	t->view = t->view == VIEW_HELP || t->view == VIEW_NOTICES ? t->back : VIEW_TABLE;
	t->back = VIEW_TABLE;
}

static void act_filter(struct tui *t)
{
	t->view = VIEW_TABLE;
	t->editing = true;
}

static void act_sort_next(struct tui *t) { t->o.sort = (t->o.sort + 1) % COL_CNT; rebuild_view(t); }
static void act_sort_prev(struct tui *t) { t->o.sort = (t->o.sort + COL_CNT - 1) % COL_CNT; rebuild_view(t); }
static void act_reverse(struct tui *t) { t->o.reverse = !t->o.reverse; rebuild_view(t); }
static void act_pause(struct tui *t) { t->paused = !t->paused; }
static void act_clear(struct tui *t)
{
	top_model__clear_counts(t->m);
	memset(t->want, 0, sizeof(t->want));
	rebuild_view(t);
}
static void act_quit(struct tui *t) { t->quit = true; }

static void act_stats(struct tui *t)
{
	if (t->o.stats)
		t->o.stats(t->m, !t->m->stats, t->ctx);
	memset(t->want, 0, sizeof(t->want));
}

static const struct action actions[] = {
	{ { KEY_UP, 'k' }, "Up, k", "select the program above (scroll up in a page)", act_up },
	{ { KEY_DOWN, 'j' }, "Down, j", "select the program below (scroll down)", act_down },
	{ { KEY_PPAGE }, "PgUp", "a page up", act_pgup },
	{ { KEY_NPAGE }, "PgDn", "a page down", act_pgdn },
	{ { KEY_HOME, 'g' }, "Home, g", "first", act_home },
	{ { KEY_END, 'G' }, "End, G", "last", act_end },
	{ { '\n', KEY_ENTER }, "Enter", "detail: history graphs, fault groups, stacks, recent messages", act_detail },
	{ { 'f' }, "f", "follow the selected program live", act_follow },
	{ { '/' }, "/", "filter by name, type or owner (substring)", act_filter },
	{ { 's', '>' }, "s, >", "sort by the next column", act_sort_next },
	{ { '<' }, "<", "sort by the previous column", act_sort_prev },
	{ { 'r' }, "r", "reverse the sort order", act_reverse },
	{ { ' ', 'p' }, "Space, p", "pause / resume reading", act_pause },
	{ { 'c' }, "c", "clear counts, fault groups and graphs", act_clear },
	{ { 'S' }, "S", "runtime statistics on / off (run/s, ns/run, cpu%; see below)", act_stats },
	{ { 'n' }, "n", "every notice under the status line in full", act_notices },
	{ { 'h', '?' }, "h, ?", "this help", act_help },
	{ { 'q', 27 }, "q, Esc", "back, or quit from the table", act_back },
	{ { 'Q' }, "Q", "quit from anywhere", act_quit },
};

static const struct action *actions_table(size_t *n)
{
	*n = sizeof(actions) / sizeof(actions[0]);
	return actions;
}

static void edit_filter(struct tui *t, int ch)
{
	size_t len = strlen(t->filter);

	if (ch == '\n' || ch == KEY_ENTER) {
		t->editing = false;
	} else if (ch == 27) {
		t->filter[0] = '\0';
		t->editing = false;
	} else if (ch == KEY_BACKSPACE || ch == 127 || ch == 8) {
		if (len)
			t->filter[len - 1] = '\0';
	} else if (ch >= 0x20 && ch < 0x7f && len + 1 < sizeof(t->filter)) {
		t->filter[len] = ch;
		t->filter[len + 1] = '\0';
	}
	rebuild_view(t);
}

static void handle_key(struct tui *t, int ch)
{
	size_t i;
	int k;

	if (t->editing) {
		edit_filter(t, ch);
		return;
	}
	for (i = 0; i < sizeof(actions) / sizeof(actions[0]); i++)
		for (k = 0; k < 4 && actions[i].keys[k]; k++)
			if (actions[i].keys[k] == ch) {
				actions[i].fn(t);
				return;
			}
}

/* ---- the loop ------------------------------------------------------------ */

/* After a tick: the table is sorted and drawn again only when something
 * it shows moved (model version) or ages with the clock; the other views
 * (graphs that slide, the help) every tick.
 */
static void after_tick(struct tui *t)
{
	if (t->version == t->m->version && t->view == VIEW_TABLE && !top_model__clock_shown(t->m))
		return;
	t->version = t->m->version;
	rebuild_view(t);
	t->dirty = true;
}

static void init_colors(struct tui *t)
{
	t->color = !t->o.no_color && has_colors() && !(getenv("NO_COLOR") && *getenv("NO_COLOR"));
	if (!t->color)
		return;
	start_color();
	use_default_colors();
	init_pair(PAIR_HEAD, COLOR_CYAN, -1);
	init_pair(PAIR_FAULT, COLOR_RED, -1);
	init_pair(PAIR_WARN, COLOR_YELLOW, -1);
	init_pair(PAIR_OK, COLOR_GREEN, -1);
}

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The next key, or ERR when secs passed or a signal came first. The
 * signals are blocked from the look at what is there (keys ncurses holds,
 * a resize, the flags) until ppoll() lets them in, atomically: one that
 * came during a tick is not slept through, as getch()'s own wait would.
 */
static int next_key(const struct tui *t, double secs)
{
	struct timespec ts = { (time_t)secs, (long)((secs - (time_t)secs) * 1e9) };
	struct pollfd pfd = { .fd = STDIN_FILENO, .events = POLLIN };
	sigset_t open;
	int ch;

	timeout(0);
	sigprocmask(SIG_BLOCK, &waited, &open);
	ch = getch();
	if (ch == ERR && secs > 0 && !got_signal && !t->o.pending())
		ppoll(&pfd, 1, &ts, &open);
	sigprocmask(SIG_SETMASK, &open, NULL);
	return ch != ERR ? ch : getch();
}

int tui_run(struct top_model *m, const struct top_opts *o,
	    int (*tick)(struct top_model *m, void *ctx), void *ctx)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct tui t = { .m = m, .o = *o, .tick = tick, .ctx = ctx, .sel_id = 0, .version = ~0ULL };
	double next = 0, left;
	int ch, err = 0;

	catch_signals(&sa);
	setlocale(LC_ALL, "");
	if (!initscr())
		return -ENOTTY;
	atexit(restore_terminal);
	set_escdelay(25);
	cbreak();
	noecho();
	nonl();
	keypad(stdscr, TRUE);
	curs_set(0);
	init_colors(&t);
	while (!t.quit && !got_signal) {
		err = o->suspend(screen, ctx);
		if (err)
			break;
		if (now_s() >= next) {
			if (!t.paused) {
				err = tick(m, ctx);
				if (err)
					break;
			}
			after_tick(&t);
			next = now_s() + m->interval;
		}
		if (t.dirty)
			draw(&t);
		t.dirty = false;
		left = next - now_s();
		ch = next_key(&t, left > 0 ? left : 0);
		if (ch == KEY_RESIZE)
			memset(t.want, 0, sizeof(t.want));
		t.dirty = ch != ERR;
		if (ch == KEY_RESIZE || ch == ERR)
			continue;
		handle_key(&t, ch == '\r' ? '\n' : ch);
	}
	free(t.rows);
	restore_terminal();
	return err;
}
