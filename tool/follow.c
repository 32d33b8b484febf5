// SPDX-License-Identifier: GPL-2.0
/* bpfstderr follow: tail -f of programs' stdout/stderr. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "journal_cli.h"
#include "main.h"
#include "output.h"
#include "render.h"
#include "session.h"

#define IDS_MAX		64
#define MATCH_MAX	16
#define INTERVAL_MIN_MS	50	/* while data flows */
#define INTERVAL_MAX_MS	1000	/* idle: one cheap iterator read a second */

#define C_RESET		"\033[0m"
#define C_DIM		"\033[2m"
#define C_STDERR	"\033[33m"
#define C_FAULT		"\033[1;31m"	/* arena faults, unknown kinds */
#define C_LOCK		"\033[1;35m"	/* lock deadlocks and timeouts */
#define C_TIMEOUT	"\033[1;33m"	/* may_goto timeouts */

static struct follow_env {
	__u32 ids[IDS_MAX];
	bool id_live[IDS_MAX];
	int id_cnt;
	const char *names[MATCH_MAX];
	int name_cnt;
	const char *tags[MATCH_MAX];
	int tag_cnt;
	bool all;
	unsigned int streams;
	bool errors_only;
	bool all_frames;
	bool json;
	bool no_color;
	long interval_ms;	/* 0: adaptive */
	bool color;
	const char *vmlinux;
	struct symbolizer *sym;
	long long started_ns;	/* CLOCK_REALTIME */
	/* events wait in the journal while output waits for room (output.h),
	 * so that follow goes on cycling; false: the sink waits for room
	 */
	bool later;
} env;

/* Output waiting for room past this: events wait in the journal. */
#define DEFERRED_MAX	(1 << 20)

enum {
	OPT_STDOUT = 0x100,
	OPT_STDERR,
	OPT_NO_COLOR,
	OPT_NAME,
	OPT_TAG,
	OPT_ALL_FRAMES,
};

static const struct argp_option opts[] = {
	{ "prog", 'p', "ID", 0, "Follow program ID (repeatable)", 0 },
	{ "name", OPT_NAME, "NAME", 0, "Follow every program named NAME, also ones loaded later", 0 },
	{ "tag", OPT_TAG, "TAG", 0, "Follow every program with tag TAG, also ones loaded later", 0 },
	{ "all", 'a', NULL, 0, "Follow every program, also ones loaded later", 0 },
	{ "stdout", OPT_STDOUT, NULL, 0, "Only stdout", 0 },
	{ "stderr", OPT_STDERR, NULL, 0, "Only stderr", 0 },
	{ "errors-only", 'e', NULL, 0, "Only fault reports, and stack dumps (bpf_stream_print_stack) on stderr", 0 },
	{ "all-frames", OPT_ALL_FRAMES, NULL, 0, "Also the frames of the kernel's report machinery (collapsed to one line by default)", 0 },
	{ "json", 'j', NULL, 0, "One JSON object per event (NDJSON)", 0 },
	{ "interval", 'd', "SECS", 0, "Poll every SECS, 0.01 to 3600 (default: adaptive, 0.05 to 1 s); a stream past 25000 bytes is drained at once", 0 },
	{ "no-color", OPT_NO_COLOR, NULL, 0, "No colours (also: NO_COLOR set)", 0 },
	{ "vmlinux", 'k', "PATH", 0, "vmlinux with DWARF for kernel frames", 0 },
	{},
};

/* A tag that no program can have would make follow wait forever. */
static bool is_tag(const char *s)
{
	size_t n = strspn(s, "0123456789abcdefABCDEF");

	return n == 16 && !s[n];
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	double secs;

	switch (key) {
	case 'p':
		if (env.id_cnt == IDS_MAX)
			argp_error(state, "at most %d -p", IDS_MAX);
		if (parse_prog_id(arg, &env.ids[env.id_cnt]))
			argp_error(state, "invalid program id '%s'", arg);
		env.id_live[env.id_cnt++] = true;
		break;
	case OPT_NAME:
		if (!*arg)
			argp_failure(state, EXIT_USAGE, 0, "--name needs a program name");
		if (env.name_cnt == MATCH_MAX)
			argp_error(state, "at most %d --name", MATCH_MAX);
		env.names[env.name_cnt++] = arg;
		break;
	case OPT_ALL_FRAMES:
		env.all_frames = true;
		break;
	case OPT_TAG:
		if (!is_tag(arg))
			argp_failure(state, EXIT_USAGE, 0,
				     "invalid tag '%s' (16 hex digits, as bpftool prog shows)", arg);
		if (env.tag_cnt == MATCH_MAX)
			argp_error(state, "at most %d --tag", MATCH_MAX);
		env.tags[env.tag_cnt++] = arg;
		break;
	case 'a':
		env.all = true;
		break;
	case OPT_STDOUT:
		env.streams |= STREAM_MASK(STREAM_STDOUT);
		break;
	case OPT_STDERR:
		env.streams |= STREAM_MASK(STREAM_STDERR);
		break;
	case 'e':
		env.errors_only = true;
		break;
	case 'j':
		env.json = true;
		break;
	case 'd':
		if (parse_interval(arg, &secs))
			argp_failure(state, EXIT_USAGE, 0, "invalid interval '%s' (" INTERVAL_RANGE ")", arg);
		env.interval_ms = secs * 1000;
		break;
	case OPT_NO_COLOR:
		env.no_color = true;
		break;
	case 'k':
		env.vmlinux = arg;
		break;
	case ARGP_KEY_ARG:
		argp_error(state, "unexpected argument '%s'", arg);
		break;
	case ARGP_KEY_END:
		if (!env.id_cnt && !env.name_cnt && !env.tag_cnt && !env.all)
			argp_error(state, "nothing to follow: give -p ID, --name, --tag or --all");
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

static int id_index(__u32 id)
{
	int i;

	for (i = 0; i < env.id_cnt; i++)
		if (env.ids[i] == id)
			return i;
	return -1;
}

static bool selected(const struct prog *p, void *ctx)
{
	int i;

	(void)ctx;
	if (env.all)
		return true;
	i = id_index(p->ident.id);
	if (i >= 0 && env.id_live[i])
		return true;
	for (i = 0; i < env.name_cnt; i++)
		if (!strcmp(p->ident.name, env.names[i]) || !strcmp(p->kname, env.names[i]))
			return true;
	for (i = 0; i < env.tag_cnt; i++)
		if (!strcasecmp(p->ident.tag, env.tags[i]))
			return true;
	return false;
}

static void print_label(FILE *out, const struct pipe_event *pe)
{
	char ts[32];

	format_time(&pe->ts, ts, sizeof(ts), false);
	fprintf(out, "%s%s%s %u:", env.color ? C_DIM : "", ts, env.color ? C_RESET : "", pe->prog->ident.id);
	fput_term(out, pe->prog->ident.name, strlen(pe->prog->ident.name));
	fprintf(out, " %s", stream_name(pe->ev->stream));
	if (pe->reader) {	/* mirrored: printable (readers.h) */
		char who[READER_NAME_MAX];

		fprintf(out, ", read by %s", reader_name(pe->reader, who, sizeof(who)));
	}
	fputs(": ", out);
}

/* Mirrored: who read it ("reader": {"pid", "comm"}; pid 0: outside our
 * pid namespace). Events bpfstderr read have none.
 */
static void reader_json(struct json_object *o, const struct pipe_event *pe)
{
	struct json_object *r;

	if (!pe->reader)
		return;
	r = json_object_new_object();
	json_object_object_add(r, "pid", json_object_new_int64(pe->reader->pid));
	json_object_object_add(r, "comm", json_object_new_string(pe->reader->comm));
	json_object_object_add(o, "reader", r);
}

static const char *fault_color(enum fault_kind k)
{
	switch (k) {
	case FAULT_LOCK_DEADLOCK:
	case FAULT_LOCK_TIMEOUT:
		return C_LOCK;
	case FAULT_MAY_GOTO:
		return C_TIMEOUT;
	default:
		return C_FAULT;
	}
}

static void print_text(FILE *out, const struct pipe_event *pe)
{
	const struct event *ev = pe->ev;
	bool err = ev->stream == STREAM_STDERR;

	print_label(out, pe);
	if (ev->kind == EV_FAULT) {
		fprintf(out, "%sFAULT ", env.color ? fault_color(ev->fault->kind) : "");
		print_fault_summary(out, ev->fault);
		fprintf(out, "%s\n", env.color ? C_RESET : "");
		print_frames(out, env.sym, &pe->prog->ident, ev->fault, "    ",
			     env.all_frames ? 0 : fault_first_frame(ev->fault), 0);
		return;
	}
	if (ev->kind == EV_STACK) {	/* not a fault: no fault colour */
		fputs("STACK ", out);
		print_stack_summary(out, ev->fault);
		fputc('\n', out);
		print_frames(out, env.sym, &pe->prog->ident, ev->fault, "    ",
			     env.all_frames ? 0 : fault_first_frame(ev->fault), 0);
		return;
	}
	if (env.color && err)
		fputs(C_STDERR, out);
	fput_term(out, ev->text, ev->len);
	if (env.color && err)
		fputs(C_RESET, out);
	fputs(ev->partial ? " [no newline]\n" : "\n", out);
}

/* Missing debuginfo is said once, before the first report: never in the
 * middle of a report's lines (the symbolizer is quiet).
 */
static void say_notice_once(void)
{
	static bool said;
	const char *notice;

	if (said)
		return;
	said = true;
	notice = symbolizer__prepare(env.sym);
	if (notice)
		p_err("%s", notice);
}

/* --errors-only: fault reports, and a program's own stack dumps when it
 * wrote them to stderr (as an error; to stdout they are output).
 */
static bool is_error(const struct event *ev)
{
	return ev->kind == EV_FAULT || (ev->kind == EV_STACK && ev->stream == STREAM_STDERR);
}

/* When each program's streams were last found full, and how many pushes
 * the kernel refused as counted, as said so far.
 */
struct full_seen {
	__u32 id;
	__u64 load_time_ns;
	long long full_ns[STREAM_CNT];
	unsigned long long refused[STREAM_CNT];
	unsigned long long own[STREAM_CNT];	/* this process's wake's, then */
	bool looked;		/* its first event was seen */
};

static struct full_seen *full_seen_of(const struct prog_ident *id)
{
	static struct full_seen *seen;
	static size_t cnt;
	struct full_seen *tmp;
	size_t i;

	for (i = 0; i < cnt; i++)
		if (seen[i].id == id->id && seen[i].load_time_ns == id->load_time_ns)
			return &seen[i];
	tmp = realloc(seen, (cnt + 1) * sizeof(*seen));
	if (!tmp)
		return NULL;
	seen = tmp;
	seen[cnt] = (struct full_seen){ .id = id->id, .load_time_ns = id->load_time_ns };
	return &seen[cnt++];
}

/* Pushes to stream i of jp the kernel refused as full, as counted: the
 * journal's (its keeper's fill wake, pipeline.c), else this process's fill
 * wake's since it started; -1: none counted (no fill wake: the kernel
 * refuses fexit).
 */
static long long refused_count(const struct session *s, const struct jprog *jp, int i)
{
	const struct tracked *t;

	if (!drainer__fill(s->drainer))
		return s->journal ? jp->refused[i] : -1;
	if (s->journal)
		return jp->refused[i] > 0 ? jp->refused[i] : 0;
	t = pipeline__find(s->pl, jp->ident.id);
	return t ? (long long)t->refused[i] : 0;
}

/* refused: the count so far, or -1 (how many unknown) */
static void print_full(FILE *out, const struct pipe_event *pe, enum stream s, long long ns,
		       long long refused)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
	const char *what = s == STREAM_STDERR ? "fault reports and messages" : "messages";
	struct json_object *o, *prog;
	char at[40];

	if (env.json) {
		o = json_object_new_object();
		prog = json_object_new_object();
		format_time(&ts, at, sizeof(at), true);
		json_object_object_add(o, "schema_version", json_object_new_int(EVENT_SCHEMA_VERSION));
		json_object_object_add(o, "time", json_object_new_string(at));
		prog_ident_json(prog, &pe->prog->ident, true);
		json_object_object_add(o, "prog", prog);
		json_object_object_add(o, "stream", json_object_new_string(stream_name(s)));
		json_object_object_add(o, "kind", json_object_new_string("stream_full"));
		json_object_object_add(o, "refused_reports",
				       refused >= 0 ? json_object_new_int64(refused) : NULL);
		json_print(o, out);
		json_object_put(o);
		return;
	}
	format_time(&ts, at, sizeof(at), false);
	fprintf(out, "%s%s%s %u:", env.color ? C_DIM : "", at, env.color ? C_RESET : "",
		pe->prog->ident.id);
	fput_term(out, pe->prog->ident.name, strlen(pe->prog->ident.name));
	if (refused >= 0)
		fprintf(out, " %s: %sFULL: %lld %s refused for lack of room so far (counted as the kernel refused them)%s\n",
			stream_name(s), env.color ? C_FAULT : "", refused, what, env.color ? C_RESET : "");
	else
		fprintf(out, " %s: %sFULL when drained: the kernel refused what did not fit (%s lost, how many unknown)%s\n",
			stream_name(s), env.color ? C_FAULT : "", what, env.color ? C_RESET : "");
}

/* At a program's first event, refusals of a stream last found full
 * before follow started are report's to say, not follow's.
 */
static void skip_older(struct full_seen *f, const struct session *ss, const struct jprog *jp)
{
	enum stream s;
	int i;

	if (f->looked)
		return;
	f->looked = true;
	for_each_stream(s) {
		i = stream_idx(s);
		if (ss->journal && jp->full_ns[i] && jp->full_ns[i] < env.started_ns &&
		    jp->refused[i] > 0)
			f->refused[i] = jp->refused[i];
	}
}

/* A drain (ours or, through the journal, anyone's) found a stream full:
 * reports were refused then, and the bytes read never say so. Said
 * before the first event that comes with it: where a fill wake counts
 * them, once each time the count grows, with the count so far; a fill
 * no count explains (no fill wake, or refused before any counted), once
 * per time the stream filled, how many unknown.
 */
static void say_full(const struct session *ss, const struct pipe_event *pe)
{
	struct full_seen *f = full_seen_of(&pe->prog->ident);
	unsigned int mask = env.streams ?: STREAM_MASK_BOTH;
	const struct tracked *t = pipeline__find(ss->pl, pe->prog->ident.id);
	unsigned long long own;
	long long n, ns;
	bool filled;
	enum stream s;
	int i;

	if (!f)
		return;
	skip_older(f, ss, pe->prog);
	for_each_stream(s) {
		i = stream_idx(s);
		if (!(mask & STREAM_MASK(s)))
			continue;
		n = refused_count(ss, pe->prog, i);
		own = t ? t->refused[i] : 0;
		/* a fill from before follow started is report's to say */
		filled = pe->prog->full_ns[i] > f->full_ns[i] && pe->prog->full_ns[i] >= env.started_ns;
		ns = filled ? pe->prog->full_ns[i] : pe->ts.tv_sec * 1000000000LL + pe->ts.tv_nsec;
		if (filled)
			f->full_ns[i] = pe->prog->full_ns[i];
		if (n >= 0 && (unsigned long long)n > f->refused[i]) {
			f->refused[i] = n;
			print_full(stdout, pe, s, ns, n);
		} else if (!filled) {
			continue;
		} else if (own <= f->own[i]) {	/* refused before any count */
			print_full(stdout, pe, s, ns, -1);
		}
		/* else this process's wake counted refusals the journal's
		 * keeper has not added yet: said with the count, when it comes
		 */
		f->own[i] = own;
	}
}

static int sink(const struct pipe_event *pe, void *ctx)
{
	struct json_object *o;
	int err = 0, flush;

	if (output_deferred() >= DEFERRED_MAX) {
		if (env.later)
			return PIPE_SINK_LATER;
		err = output_deferred_flush(true);
		if (err)
			return err;
	}
	say_full(ctx, pe);
	if (env.errors_only && !is_error(pe->ev))
		return 0;
	if (pe->ev->fault)
		say_notice_once();
	if (env.json) {
		o = event_json(env.sym, pe);
		reader_json(o, pe);
		err = json_print(o, stdout);
		json_object_put(o);
	} else {
		print_text(stdout, pe);
	}
	flush = output_flush(stdout);
	return err ?: flush;
}

static void gone(const struct tracked *t, void *ctx)
{
	int i = id_index(t->p.ident.id);

	(void)ctx;
	if (i < 0 || !env.id_live[i])
		return;
	env.id_live[i] = false;
	fflush(stdout);
	fprintf(stderr, "%s: program %u (", bin_name, t->p.ident.id);
	fput_term(stderr, t->p.ident.name, strlen(t->p.ident.name));
	fprintf(stderr, ") unloaded\n");
}

/* Explicit -p ids are followed until they are all gone; name, tag and
 * --all selections wait for programs loaded later.
 */
static bool nothing_left(void)
{
	int i;

	if (env.all || env.name_cnt || env.tag_cnt)
		return false;
	for (i = 0; i < env.id_cnt; i++)
		if (env.id_live[i])
			return false;
	return true;
}

static int check_ids_exist(struct progs *progs)
{
	struct prog_list l = {};
	int i, err;

	err = progs__snapshot(progs, &l, 0);
	if (err)
		return exit_for_errno(err, "cannot enumerate programs");
	for (i = 0; i < env.id_cnt; i++) {
		if (!prog_list__find(&l, env.ids[i])) {
			p_err("program %u does not exist", env.ids[i]);
			prog_list__free(&l);
			return EXIT_NOPROG;
		}
	}
	prog_list__free(&l);
	return EXIT_OK;
}

static int cycle(struct session *s, long *drained)
{
	*drained = pipeline__cycle_fresh(s->pl, s->progs);
	return *drained < 0 ? *drained : 0;
}

static int run(struct session *s)
{
	long interval = env.interval_ms ?: INTERVAL_MIN_MS, drained = 0;
	int err = 0;

	while (!session__stopped() && !nothing_left()) {
		err = session__suspend(s, cycle, NULL) ?: output_deferred_flush(false) ?:
		      cycle(s, &drained);
		if (err)
			break;
		if (nothing_left())
			break;
		if (!env.interval_ms)
			interval = drained ? INTERVAL_MIN_MS :
				   (interval * 2 > INTERVAL_MAX_MS ? INTERVAL_MAX_MS : interval * 2);
		session__wait(s, interval / 1000.0, drained > 0);
	}
	/* one last drain, then everything held is emitted, waiting for room */
	env.later = false;
	session__quiesce(s);
	pipeline__forget_dry(s->pl);
	while (!err && !nothing_left()) {
		err = cycle(s, &drained);
		if (!drained || !pipeline__holds(s->pl))
			break;
	}
	err = err ?: pipeline__catch_up(s->pl);
	err = session__end(s, err);
	return err ?: output_deferred_flush(true);
}

int do_follow(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.children = drain_children,
		.doc = "Print what programs write to their stdout and stderr, as they write it.\v"
		       "Fault reports are shown parsed; reports the kernel refused for lack of room "
		       "are said, FULL, with their count each time it grows where the fill wake "
		       "counts them, else once per time a drain found the stream full (how many "
		       "unknown). BPF frames are looked up "
		       "in the reporting program first, then by tag and function name; differing "
		       "candidates are all shown (ambiguous); where the kernel printed its own "
		       "source line and ours differs, the kernel's is shown, marked \"(the kernel's "
		       "line; line info says ...)\". Events come through the journal, so every "
		       "bpfstderr running shows every event. Ends on SIGINT, SIGTERM, SIGHUP or SIGQUIT (after a last drain; "
		       "output then waits a second at most for a reader that does not read) "
		       "or, with -p only, when every followed program is unloaded (exit 0). Into a "
		       "pipe whose reader does not read for now (| less, the pager held), up to "
		       "1 MiB of output waits in memory and events in the journal, while follow "
		       "goes on draining, so it keeps no stream from a record sharing the journal. "
		       "Ctrl-Z (SIGTSTP) stops it after a last drain, its read rights let go.",
	};
	struct session_opts o = {
		.what = "following programs",
		.ops = { .select = selected, .sink = sink, .gone = gone },
	};
	struct timespec now;
	struct session s;
	int err, rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	o.ops.ctx = &s;		/* the sink's: the counts of refusals */
	o.ops.streams = env.streams ?: STREAM_MASK_BOTH;
	o.sym = (struct symbolizer_opts){ .vmlinux = env.vmlinux, .live = true, .quiet = true };
	env.color = !env.json && want_color(stdout, env.no_color);
	clock_gettime(CLOCK_REALTIME, &now);
	env.started_ns = now.tv_sec * 1000000000LL + now.tv_nsec;
	session__catch_signals();
	session__catch_suspend();
	rc = session__open(&s, &o);
	if (rc)
		goto out;
	env.sym = s.sym;
	/* a reader that does not read must not stop the cycles (output.h) */
	env.later = s.journal && output_defer();
	rc = check_ids_exist(s.progs);
	if (rc)
		goto out;
	err = run(&s);
	if (err)
		rc = session__failed(&s, err, "follow");
out:
	session__close(&s);
	return rc;
}
