// SPDX-License-Identifier: GPL-2.0
/* bpfstderr top: every program's stream activity, live. */
#include <argp.h>
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <json-c/json.h>

#include "demo.h"
#include "journal_cli.h"
#include "main.h"
#include "output.h"
#include "privs.h"
#include "render.h"
#include "session.h"
#include "tui.h"

/* 2: streams and error_count as in list and report (see bpfstderr(8)) */
#define TOP_SCHEMA_VERSION 2

static struct top_env {
	struct top_opts o;
	bool batch;
	long iterations;	/* batch: 0 = until interrupted */
	bool json;
	bool demo;
	bool stats;
	const char *vmlinux;
} env = { .o = { .interval = 1.0, .sort = COL_FAULTS } };

enum { OPT_NO_COLOR = 0x100, OPT_DEMO, OPT_STATS };

static const struct argp_option opts[] = {
	{ "interval", 'd', "SECS", 0, "Refresh every SECS (default 1, 0.01 to 3600)", 0 },
	{ "delay", 'd', NULL, OPTION_ALIAS | OPTION_HIDDEN, NULL, 0 },	/* its old name */
	{ "sort", 's', "COL", 0, "Sort by COL: id type name owner out err faults kinds rate "
				 "last run/s ns/run cpu% saturation (default faults)", 0 },
	{ "stats", OPT_STATS, NULL, 0, "Runtime statistics (run/s, ns/run, cpu%): turns on "
	  "BPF_ENABLE_STATS while top runs, which costs every program run two clock reads", 0 },
	{ "reverse", 'r', NULL, 0, "Reverse the sort order", 0 },
	{ "batch", 'b', NULL, 0, "Batch mode: print snapshots, no screen (columns sized to each snapshot's cells)", 0 },
	{ "iterations", 'n', "N", 0, "Batch mode: N snapshots, then exit", 0 },
	{ "json", 'j', NULL, 0, "Batch mode: one JSON object per snapshot (NDJSON)", 0 },
	{ "demo", OPT_DEMO, NULL, 0, "Load the bundled faulting programs this host allows, trigger them every second", 0 },
	{ "no-color", OPT_NO_COLOR, NULL, 0, "No colours (also: NO_COLOR set)", 0 },
	{ "vmlinux", 'k', "PATH", 0, "vmlinux with DWARF for kernel frames", 0 },
	{},
};

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	char *end;
	int col;

	switch (key) {
	case 'd':
		if (parse_interval(arg, &env.o.interval))
			argp_failure(state, EXIT_USAGE, 0, "invalid delay '%s' (" INTERVAL_RANGE ")", arg);
		break;
	case 's':
		col = top_col_from_name(arg);
		if (col < 0)
			argp_error(state, "unknown column '%s'", arg);
		env.o.sort = col;
		break;
	case 'r':
		env.o.reverse = true;
		break;
	case 'b':
		env.batch = true;
		break;
	case 'n':
		errno = 0;
		env.iterations = strtol(arg, &end, 10);
		if (errno || *end || end == arg || env.iterations < 1 || !isdigit((unsigned char)arg[0]))
			argp_failure(state, EXIT_USAGE, 0, "invalid count '%s' (1 to %ld)", arg, LONG_MAX);
		break;
	case 'j':
		env.json = true;
		break;
	case OPT_DEMO:
		env.demo = true;
		break;
	case OPT_STATS:
		env.stats = true;
		break;
	case OPT_NO_COLOR:
		env.o.no_color = true;
		break;
	case 'k':
		env.vmlinux = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if ((env.json || env.iterations) && !env.batch)
			argp_error(state, "--json and -n go with -b (batch mode)");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

struct top_ctx {
	struct top_model *m;
	struct session *s;
	bool ticked;
	int stats_fd;		/* BPF_ENABLE_STATS: on while it is open; -1 */
	unsigned long long gen;	/* of the last tick's list (progs__refresh) */
};

/* kernel.bpf_stats_enabled: 1 when anyone has the statistics on */
static bool stats_enabled_already(void)
{
	FILE *f = fopen("/proc/sys/kernel/bpf_stats_enabled", "r");
	int v = 0;

	if (!f)
		return false;
	if (fscanf(f, "%d", &v) != 1)
		v = 0;
	fclose(f);
	return v == 1;
}

/* Runtime statistics on: the kernel's, if someone already turned them on
 * (sysctl or another holder), else ours through BPF_ENABLE_STATS, held
 * only as long as the fd (that is, while top runs or until S again).
 */
static int set_stats(struct top_model *m, bool on, void *ctx)
{
	struct top_ctx *c = ctx;
	union bpf_attr attr;
	int fd, err;

	if (!on) {
		if (c->stats_fd >= 0)
			close(c->stats_fd);
		c->stats_fd = -1;
		progs__want_stats(c->s->progs, false);
		m->stats = false;
		m->stats_note[0] = '\0';
		return 0;
	}
	if (stats_enabled_already()) {
		snprintf(m->stats_note, sizeof(m->stats_note),
			 "stats: kernel.bpf_stats_enabled was already 1, used as it is");
	} else {
		memset(&attr, 0, sizeof(attr));
		attr.enable_stats.type = BPF_STATS_RUN_TIME;
		fd = syscall(__NR_bpf, BPF_ENABLE_STATS, &attr, sizeof(attr));
		if (fd < 0) {
			err = -errno;
			snprintf(m->stats_note, sizeof(m->stats_note),
				 "stats: BPF_ENABLE_STATS refused: %s", strerror(-err));
			return err;
		}
		c->stats_fd = fd;
		snprintf(m->stats_note, sizeof(m->stats_note), "stats on (BPF_ENABLE_STATS, until top ends)");
	}
	progs__want_stats(c->s->progs, true);
	m->stats = true;
	return 0;
}

static int sink(const struct pipe_event *pe, void *ctx)
{
	struct top_ctx *c = ctx;

	return top_model__event(c->m, pe);
}

/* The journal's notices go on the status line: stderr would tear the
 * curses screen. Batch mode has no status line.
 */
static void notice(const char *msg, void *ctx)
{
	struct top_ctx *c = ctx;

	snprintf(c->m->notice, sizeof(c->m->notice), "%s", msg);
	c->m->version++;
	if (env.batch)
		fprintf(stderr, "bpfstderr: %s\n", msg);
}

/* The snapshot's capacity was taken before the drain; what the drain read
 * comes off it. What is lost is the pipeline's to say (leaked, found
 * full): bytes written after the snapshot are still accounted here.
 */
static void account_one(struct top_ctx *c, const struct tracked *t)
{
	struct row *r = top_model__find(c->m, t->p.ident.id);
	int s;

	for (s = 0; r && s < STREAM_CNT; s++) {
		if (r->leaked[s] != t->left[s] || r->full_ns[s] < t->full_ns[s])
			c->m->version++;
		r->leaked[s] = t->left[s];
		if (r->full_ns[s] < t->full_ns[s])
			r->full_ns[s] = t->full_ns[s];
		long long left = r->capacity[s] - (long long)(t->bytes_read[s] - r->bytes_read[s]);

		if (r->capacity[s] != (left > 0 ? left : 0))
			c->m->version++;
		r->capacity[s] = left > 0 ? left : 0;
		r->bytes_read[s] = t->bytes_read[s];
	}
}

/* With the list of the last tick unchanged, only its active programs can
 * have been read.
 */
static void account_drained(struct top_ctx *c, const struct prog_list *l)
{
	struct tracked **t, *one;
	size_t n, i;

	if (!l->gen || l->gen != c->gen) {
		n = pipeline__tracked(c->s->pl, &t);
		for (i = 0; i < n; i++)
			account_one(c, t[i]);
		c->gen = l->gen;
		return;
	}
	for (i = 0; i < l->cnt_active; i++) {
		one = pipeline__find(c->s->pl, l->progs[l->active[i]].ident.id);
		if (one)
			account_one(c, one);
	}
}

/* The programs listed again and drained, the model fed (sink()): the
 * bytes read, or -errno.
 */
static long drain(struct top_ctx *c)
{
	const struct prog_list *l;
	long got;
	int err;

	err = progs__refresh(c->s->progs, &l, PROGS_OWNERS);
	if (err)
		return err;
	top_model__refresh(c->m, l);
	got = pipeline__cycle(c->s->pl, l);
	if (got < 0)
		return got;
	account_drained(c, l);
	top_model__count(c->m);	/* after the drain's events: one snapshot */
	return got;
}

static int tick(struct top_model *m, void *ctx)
{
	struct top_ctx *c = ctx;
	struct timespec now;
	long got = drain(c);

	if (got < 0)
		return got;
	if (!c->ticked)
		top_model__baseline(m);	/* the journal's history is no rate */
	c->ticked = true;
	clock_gettime(CLOCK_MONOTONIC, &now);
	top_model__sample(m, now.tv_sec + now.tv_nsec / 1e9);
	return 0;
}

/* ---- Ctrl-Z (session.h) ------------------------------------------------- */

static struct top_ctx *suspended;	/* the cycle below is given the session only */

/* The drains before the stop: a tick's, without a history sample (what
 * they read counts at the first tick after SIGCONT).
 */
static int cycle(struct session *s, long *drained)
{
	(void)s;
	*drained = drain(suspended);
	return *drained < 0 ? *drained : 0;
}

/* A last drain, every read right let go, then stopped until SIGCONT, as
 * follow is; screen: the terminal's meanwhile (NULL in batch mode).
 */
static int suspend(void (*screen)(bool shown), void *ctx)
{
	struct top_ctx *c = ctx;

	suspended = c;
	return session__suspend(c->s, cycle, screen);
}

/* ---- batch mode -------------------------------------------------------- */

static const enum top_col batch_cols[] = {
	COL_ID, COL_TYPE, COL_NAME, COL_OWNER, COL_OUT, COL_ERR, COL_FAULTS, COL_KINDS,
	COL_RATE, COL_LAST, COL_RUNS, COL_NS_RUN, COL_CPU, COL_SAT,
};
#define BATCH_COLS ((int)(sizeof(batch_cols) / sizeof(batch_cols[0])))
/* Narrowest width of each column (negative: left-aligned), and widest:
 * a wider cell is cut one column short and ends in BATCH_CUT_MARK.
 */
static const int batch_min[BATCH_COLS] = { 7, -16, -24, -20, 6, 6, 6, -18, 6, 5, 9, 9, 6, -16 };
static const int batch_max[BATCH_COLS] = { 10, 24, 64, 32, 12, 12, 12, 40, 10, 6, 12, 12, 8, 32 };
#define BATCH_CUT_MARK ">"

/* Columns of a cell: one per character (cells are escaped UTF-8). */
static int cell_width(const char *s)
{
	int n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

/* Cut s to width columns, the last one the mark, at a character's start. */
static void cell_cut(char *s, int width)
{
	int n = 0;
	char *p;

	for (p = s; *p; p++) {
		if (((unsigned char)*p & 0xc0) == 0x80)
			continue;
		if (++n == width)
			break;
	}
	strcpy(p, BATCH_CUT_MARK);
}

static bool batch_shown(const struct top_model *m, int c)
{
	return !top_col_is_stats(batch_cols[c]) || m->stats;
}

static void batch_header(const struct top_model *m, const int *width)
{
	char cell[32], *p;
	int c;

	for (c = 0; c < BATCH_COLS; c++) {
		if (!batch_shown(m, c))
			continue;
		snprintf(cell, sizeof(cell), "%s", top_col_name(batch_cols[c]));
		for (p = cell; *p; p++)
			*p = *p >= 'a' && *p <= 'z' ? *p - 32 : *p;
		printf("%s%*s", c ? " " : "", width[c], cell);
	}
	printf("\n");
}

/* Every column as wide as its widest cell in this snapshot (within its
 * narrowest and widest), so that a long name never shifts its row.
 */
static void batch_widths(const struct top_model *m, struct row **rows, size_t n, int *width)
{
	char cell[300];
	int c, w, lo;
	size_t i;

	for (c = 0; c < BATCH_COLS; c++) {
		lo = abs(batch_min[c]);
		w = (int)strlen(top_col_name(batch_cols[c]));
		w = w > lo ? w : lo;
		for (i = 0; i < n; i++) {
			top_cell(m, rows[i], batch_cols[c], cell, sizeof(cell));
			if (cell_width(cell) > w)
				w = cell_width(cell);
		}
		w = w < batch_max[c] ? w : batch_max[c];
		width[c] = batch_min[c] < 0 ? -w : w;
	}
}

static void batch_row(const struct top_model *m, const struct row *r, const int *width)
{
	char cell[300];
	int c, w, pad;

	for (c = 0; c < BATCH_COLS; c++) {
		if (!batch_shown(m, c))
			continue;
		top_cell(m, r, batch_cols[c], cell, sizeof(cell));
		w = abs(width[c]);
		if (cell_width(cell) > w)
			cell_cut(cell, w);
		/* printf pads bytes, not characters */
		pad = w - cell_width(cell);
		printf("%s%*s%s%*s", c ? " " : "", width[c] > 0 ? pad : 0, "", cell,
		       width[c] < 0 ? pad : 0, "");
	}
	printf("\n");
}

static void print_batch_plain(struct top_model *m)
{
	int width[BATCH_COLS];
	struct row **rows;
	size_t n, i;

	n = top_model__view(m, NULL, env.o.sort, env.o.reverse, &rows);
	printf("%zu programs, %llu faults, %llu messages, %d losing reports; stream writes %s\n",
	       m->cnt, m->fault_total, m->msg_total, m->losing, stream_health__label(&m->health));
	batch_widths(m, rows, n, width);
	batch_header(m, width);
	for (i = 0; i < n; i++)
		batch_row(m, rows[i], width);
	printf("\n");
	free(rows);
}

/* Per stream: null, or the last other process whose reads were mirrored
 * and how many events were.
 */
static struct json_object *mirrored_json(const struct row *r)
{
	struct json_object *o = json_object_new_object(), *m;
	enum stream s;
	int i;

	for_each_stream(s) {
		i = stream_idx(s);
		m = NULL;
		if (r->mirrored[i]) {
			m = json_object_new_object();
			json_object_object_add(m, "pid", json_object_new_int64(r->reader[i].pid));
			json_object_object_add(m, "comm", json_object_new_string(r->reader[i].comm));
			json_add_int(m, "events", r->mirrored[i]);
		}
		json_object_object_add(o, stream_name(s), m);
	}
	return o;
}

static struct json_object *row_json(const struct row *r)
{
	struct json_object *o = json_object_new_object();
	char buf[64];

	prog_ident_json(o, &r->ident, true);
	json_add_bytes(o, "owner", r->owner, strlen(r->owner));
	json_object_object_add(o, "pids", r->unloaded ? json_object_new_array() :
			       owners_json(r->owners, r->owner_cnt));
	json_add_bool(o, "unloaded", r->unloaded);
	json_object_object_add(o, "messages", per_stream_json(r->msgs));
	json_add_int(o, "stack_dumps", r->stack_dumps);
	json_object_object_add(o, "faults", faults_json(r->faults));
	json_add_int(o, "fault_count", r->fault_total);
	json_object_object_add(o, "fault_rate_per_min", json_object_new_double(r->rate));
	if (r->has_last_fault)
		format_time(&r->last_fault, buf, sizeof(buf), true);
	json_add_str(o, "last_fault", r->has_last_fault ? buf : NULL);
	json_object_object_add(o, "streams", streams_json(r->has_streams, r->capacity, r->bytes_read,
			       &(struct stream_loss){ r->leaked, r->full_ns, r->refused },
			       r->has_drops ? &(struct stream_drops){ r->dropped_msgs, r->dropped_bytes } : NULL));
	json_object_object_add(o, "error_count", error_count_json(r->has_error_count, r->error_count));
	json_object_object_add(o, "mirrored", mirrored_json(r));
	/* runtime statistics: null unless on; rates null until two snapshots */
	json_object_object_add(o, "runs", r->has_stats ? json_object_new_uint64(r->runs) : NULL);
	json_object_object_add(o, "run_time_ns", r->has_stats ? json_object_new_uint64(r->run_ns) : NULL);
	json_object_object_add(o, "runs_per_sec", r->has_rates ? json_object_new_double(r->runs_per_s) : NULL);
	json_object_object_add(o, "ns_per_run", r->has_rates && r->runs_per_s > 0 ?
			       json_object_new_double(r->ns_per_run) : NULL);
	json_object_object_add(o, "cpu_percent", r->has_rates ? json_object_new_double(r->cpu_pct) : NULL);
	return o;
}

static int print_batch_json(struct top_model *m)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array();
	struct timespec now;
	struct row **rows;
	char ts[40];
	size_t n, i;
	int err;

	clock_gettime(CLOCK_REALTIME, &now);
	format_time(&now, ts, sizeof(ts), true);
	n = top_model__view(m, NULL, env.o.sort, env.o.reverse, &rows);
	json_object_object_add(o, "schema_version", json_object_new_int(TOP_SCHEMA_VERSION));
	json_object_object_add(o, "time", json_object_new_string(ts));
	json_object_object_add(o, "stream_writes", json_object_new_string(stream_health__label(&m->health)));
	json_object_object_add(o, "stats", m->stats ? json_object_new_string(m->stats_note) : NULL);
	for (i = 0; i < n; i++)
		json_object_array_add(arr, row_json(rows[i]));
	json_object_object_add(o, "programs", arr);
	err = json_print(o, stdout);
	json_object_put(o);
	free(rows);
	return err;
}

static int run_batch(struct top_model *m, struct top_ctx *c)
{
	long i;
	int err, flush;

	for (i = 0; !session__stopped() && (!env.iterations || i < env.iterations); i++) {
		if (i) {
			session__sleep(m->interval);
			if (session__stopped())
				break;
		}
		err = suspend(NULL, c) ?: tick(m, c);
		if (err)
			return err;
		if (env.json)
			err = print_batch_json(m);
		else
			print_batch_plain(m);
		flush = output_flush(stdout);
		err = err ?: flush;
		if (err == -EPIPE)
			clearerr(stdout);	/* the reader went away (| head): done */
		if (err)
			return err == -EPIPE ? 0 : err;
	}
	return 0;
}

/* Nothing loadable at all is the only failure; a partial refusal is a
 * notice (on the screen, or on stderr in batch mode).
 */
static int start_demo(struct demo **demo)
{
	char why[1024];
	int err = demo__start(demo, why, sizeof(why));

	if (err) {
		p_err("cannot load the demo programs: %s", why[0] ? why : strerror(-err));
		return privs__is_refusal(err) ? EXIT_NOPERM : EXIT_ERROR;
	}
	if (why[0] && env.batch)
		p_err("demo: %s", why);
	return EXIT_OK;
}

/* The first line of a small file, without its newline; empty if none. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (!fgets(buf, len, f))
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Where the demo runs, measured: a distribution's kernel by its own
 * version ("Debian 7.3.4", from /proc/version), else the release; under
 * QEMU when the firmware says so (DMI).
 */
static void demo_where(char *buf, size_t len)
{
	char version[512], vendor[64], ver[64];
	struct utsname u;
	const char *d;

	read_line("/proc/version", version, sizeof(version));
	read_line("/sys/class/dmi/id/sys_vendor", vendor, sizeof(vendor));
	d = strstr(version, " Debian ");
	if (d && sscanf(d, " Debian %63[0-9.]", ver) == 1)
		snprintf(buf, len, "Debian %s", ver);
	else if (!uname(&u))
		snprintf(buf, len, "Linux %s", u.release);
	else
		snprintf(buf, len, "this kernel");
	if (strstr(vendor, "QEMU"))
		snprintf(buf + strlen(buf), len - strlen(buf), " under QEMU");
}

int do_top(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.children = drain_children,
		.doc = "Every loaded BPF program with its stream activity: messages, faults by kind, "
		       "fault rate, last fault, saturation (leaked bytes; reports refused for lack of "
		       "room, as the journal counted them, else a stream found full when drained, "
		       "how many unknown); programs unloaded with faults in the "
		       "journal stay, marked. OWNER is looked up when programs come or go, when an "
		       "owner exits, and at least every 30 seconds. Interactive unless -b.\v"
		       "Keys: arrows/j/k move, Enter detail (graphs of the last minutes, fault groups), f follow, / filter, s < > sort, r reverse, "
		       "Space/p pause, c clear, S runtime statistics, n notices in full, h/? help, q/Esc back "
		       "or quit. The status line shows PAUSED and the filter first; each notice under it "
		       "fits the width, shortened with [n: more] when it must be. q and every signal that ends top "
		       "(SIGHUP, SIGINT, SIGQUIT, SIGTERM, ...) give the terminal back as it was. "
		       "Ctrl-Z (SIGTSTP) stops it after a last drain, its read rights let go and the "
		       "terminal given back; fg draws the screen again.",
	};
	struct top_model m;
	struct session s;
	struct top_ctx c = { .m = &m, .s = &s, .stats_fd = -1 };
	struct session_opts o = {
		.what = "top",
		.sym = { .vmlinux = env.vmlinux, .live = true, .quiet = true },
		.ops = {
			.streams = STREAM_MASK_BOTH, .select = pipeline_select_all, .sink = sink,
			.history = true, .notice = notice, .ctx = &c,
		},
	};
	struct demo *demo = NULL;
	int err, rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	if (!env.batch && !isatty(STDOUT_FILENO)) {
		p_err("top needs a terminal; use -b for batch mode");
		return EXIT_USAGE;
	}
	if (top_model__init(&m))
		return EXIT_ERROR;
	if (env.batch)
		session__catch_signals();	/* the screen has its own (tui.c) */
	session__catch_suspend();	/* before the screen: ncurses leaves it to us */
	rc = session__open(&s, &o);
	if (rc)
		goto out;
	m.sym = s.sym;
	m.interval = env.o.interval;
	m.demo = env.demo;
	stream_health__probe(&m.health);
	if (env.demo) {
		rc = start_demo(&demo);
		if (rc)
			goto out;
	}
	m.demo_refused = demo__notice(demo);
	if (env.demo)
		demo_where(m.demo_where, sizeof(m.demo_where));
	env.o.stats = set_stats;
	env.o.pending = session__suspending;
	env.o.suspend = suspend;
	if (env.stats) {
		err = set_stats(&m, true, &c);
		if (err) {
			p_err("%s", m.stats_note);
			rc = privs__is_refusal(err) ? EXIT_NOPERM : EXIT_ERROR;
			goto out;
		}
	}
	err = env.batch ? run_batch(&m, &c) : tui_run(&m, &env.o, tick, &c);
	/* what was read is kept (or spilled), whatever ended top */
	err = session__end(&s, err);
	if (err)
		rc = session__failed(&s, err, "top");
out:
	if (c.stats_fd >= 0)
		close(c.stats_fd);
	demo__stop(demo);
	session__close(&s);
	top_model__fini(&m);
	return rc;
}
