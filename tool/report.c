// SPDX-License-Identifier: GPL-2.0
/* bpfstderr report: drain once (or read saved dumps), group, print. */
#include <argp.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <json-c/json.h>

#include "group.h"
#include "journal_cli.h"
#include "main.h"
#include "output.h"
#include "privs.h"
#include "progs.h"
#include "render.h"
#include "session.h"

/* 2: a group's faulting tasks are "task_pids" ("pids" is what list calls
 * a program's owners)
 */
#define REPORT_SCHEMA_VERSION	2
#define IDS_MAX			64
#define INPUTS_MAX		256
#define EXAMPLE_FRAMES		8

static struct report_env {
	__u32 ids[IDS_MAX];
	int id_cnt;
	const char *inputs[INPUTS_MAX];
	int input_cnt;
	bool json;
	const char *vmlinux;
	long long since_ns, until_ns;
	bool has_since, has_until;
	enum stream input_stream;	/* --stream; 0: from the file name */
} env;

struct report {
	struct grouper *g;
	bool live;
	struct journal *journal;	/* live, unless --no-journal */
	struct timespec oldest, newest;	/* of the events reported */
	struct prog_list after;		/* live: right after the drain */
	struct gprog *input_prog;
	struct timespec input_ts;	/* when the dump being read was opened */
	struct symbolizer *sym;		/* the session's, or one for the dumps */
	struct session s;		/* live */
};

enum {
	OPT_SINCE = 0x100,
	OPT_UNTIL,
	OPT_STREAM,
};

static const struct argp_option opts[] = {
	{ "prog", 'p', "ID", 0, "Only program ID (repeatable; also unloaded ones in the journal)", 0 },
	{ "input", 'i', "FILE", 0, "Read a saved dump instead of draining (repeatable; - for stdin)", 0 },
	{ "stream", OPT_STREAM, "STREAM", 0, "The stream the dumps are: stdout or stderr (default: stdout "
	  "for a file whose name has \"stdout\" in it, else stderr)", 0 },
	{ "json", 'j', NULL, 0, "Print one JSON value", 0 },
	{ "vmlinux", 'k', "PATH", 0, "vmlinux with DWARF for kernel frames (offline: trusted as given)", 0 },
	{ "since", OPT_SINCE, "TIME", 0, "Only events drained at or after TIME: \"2026-12-03 05:00[:SS]\", @EPOCH, or an age (90s, 15m, 2h, 7d)", 0 },
	{ "until", OPT_UNTIL, "TIME", 0, "Only events drained before TIME (as --since)", 0 },
	{},
};

static void add_input(struct argp_state *state, const char *arg)
{
	if (env.input_cnt == INPUTS_MAX)
		argp_error(state, "at most %d inputs", INPUTS_MAX);
	else
		env.inputs[env.input_cnt++] = arg;
}

static void parse_window_arg(struct argp_state *state, int key, const char *arg)
{
	int err = parse_time_arg(arg, key == OPT_SINCE ? &env.since_ns : &env.until_ns);

	if (err == -ERANGE)
		argp_failure(state, EXIT_USAGE, 0, "time '%s' out of range (1970 to 2262)", arg);
	else if (err)
		argp_failure(state, EXIT_USAGE, 0,
			     "invalid time '%s' (e.g. \"2026-12-03 05:00\", @1764738000, 2h)", arg);
	if (key == OPT_SINCE)
		env.has_since = true;
	else
		env.has_until = true;
}

/* A window that holds no time at all reports nothing and exits 0: that
 * reads as "no faults", so it is a usage error instead.
 */
static void check_window(struct argp_state *state)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	if (env.has_since && env.since_ns > now.tv_sec * 1000000000LL + now.tv_nsec)
		argp_failure(state, EXIT_USAGE, 0, "--since is in the future: the window is empty");
	if (env.has_until && env.until_ns <= env.since_ns)
		argp_failure(state, EXIT_USAGE, 0, "--until is not after --since: the window is empty");
}

static error_t parse_arg(int key, char *arg, struct argp_state *state)
{
	switch (key) {
	case 'p':
		if (env.id_cnt == IDS_MAX)
			argp_error(state, "at most %d -p", IDS_MAX);
		else if (parse_prog_id(arg, &env.ids[env.id_cnt++]))
			argp_error(state, "invalid program id '%s'", arg);
		break;
	case 'i':
		add_input(state, arg);
		break;
	case 'j':
		env.json = true;
		break;
	case 'k':
		env.vmlinux = arg;
		break;
	case OPT_SINCE:
	case OPT_UNTIL:
		parse_window_arg(state, key, arg);
		break;
	case OPT_STREAM:
		if (stream_from_name(arg, &env.input_stream))
			argp_error(state, "invalid stream '%s' (stdout or stderr)", arg);
		break;
	case ARGP_KEY_ARG:
		/* report FILE... reads like report --input FILE... */
		add_input(state, arg);
		break;
	case ARGP_KEY_END:
		if (env.input_cnt && env.id_cnt)
			argp_error(state, "-p selects live programs; it does not go with --input");
		if (env.input_stream && !env.input_cnt)
			argp_error(state, "--stream says which stream a dump is; it goes with --input");
		if (env.input_cnt && (env.has_since || env.has_until))
			argp_error(state, "--since and --until read the journal; they do not go with --input");
		check_window(state);
		break;
	default:
		return ARGP_ERR_UNKNOWN;
	}
	return 0;
}

/* ---- collecting ------------------------------------------------------ */

static bool selected(const struct prog *p, void *ctx)
{
	int i;

	(void)ctx;
	if (!env.id_cnt)
		return true;
	for (i = 0; i < env.id_cnt; i++)
		if (env.ids[i] == p->ident.id)
			return true;
	return false;
}

static int add_event(struct report *r, struct gprog *gp, const struct event *ev,
		     const struct timespec *ts)
{
	if (!gp)
		return -ENOMEM;
	if (!r->oldest.tv_sec || ts->tv_sec < r->oldest.tv_sec)
		r->oldest = *ts;
	if (ts->tv_sec >= r->newest.tv_sec)
		r->newest = *ts;
	if (ev->kind == EV_FAULT)
		return grouper__add_fault(r->g, gp, ev, ts);
	if (ev->kind == EV_STACK)
		return grouper__add_stack(gp, ev);
	grouper__add_message(gp, ev);
	return 0;
}

static int live_sink(const struct pipe_event *pe, void *ctx)
{
	struct report *r = ctx;
	struct gprog *gp = grouper__prog(r->g, pe->prog->ident.id, pe->prog->ident.tag, pe->prog->ident.name);

	if (gp)	/* its frames are looked up in it first (symbolize.h) */
		gp->ident.load_time_ns = pe->prog->ident.load_time_ns;
	if (gp && r->journal) {	/* what every drainer read, as of this event */
		memcpy(gp->bytes_read, pe->prog->read_bytes, sizeof(gp->bytes_read));
		memcpy(gp->full_ns, pe->prog->full_ns, sizeof(gp->full_ns));
		memcpy(gp->refused, pe->prog->refused, sizeof(gp->refused));
		gp->ident.type = pe->prog->ident.type;
		gp->has_type = true;
	}
	if (gp && pe->reader) {
		int err = grouper__add_read(gp, pe->ev, pe->reader);

		if (err)
			return err;
	}
	return add_event(r, gp, pe->ev, &pe->ts);
}

/* Other processes that read its streams: what bpfstderr mirrored of them. */
static struct json_object *reads_json(const struct gprog *gp)
{
	struct json_object *a = json_object_new_array(), *o;
	const struct gread *g;

	for (g = gp->reads; g < gp->reads + gp->read_cnt; g++) {
		o = json_object_new_object();
		json_object_object_add(o, "stream", json_object_new_string(stream_name(g->stream)));
		json_object_object_add(o, "pid", json_object_new_int64(g->who.pid));
		json_object_object_add(o, "comm", json_object_new_string(g->who.comm));
		json_add_int(o, "faults", g->faults);
		json_add_int(o, "messages", g->messages);
		json_add_int(o, "bytes", g->bytes);
		json_object_array_add(a, o);
	}
	return a;
}

static void print_reads_plain(const struct gprog *gp)
{
	char who[READER_NAME_MAX];
	const struct gread *g;

	for (g = gp->reads; g < gp->reads + gp->read_cnt; g++)	/* printable (readers.h) */
		printf("  %s read by %s too: %llu fault reports, %llu messages, %llu bytes, "
		       "mirrored\n", stream_name(g->stream), reader_name(&g->who, who, sizeof(who)),
		       g->faults, g->messages, g->bytes);
}

/* A dump is one program's output: name it after its outermost BPF frame. */
static void name_input_prog(struct gprog *gp, const struct fault *f)
{
	int i;

	if (gp->ident.tag[0])
		return;
	for (i = f->frame_cnt - 1; i >= 0; i--) {
		if (f->frames[i].is_bpf) {
			snprintf(gp->ident.tag, sizeof(gp->ident.tag), "%s", f->frames[i].tag);
			snprintf(gp->ident.name, sizeof(gp->ident.name), "%s", f->frames[i].func);
			return;
		}
	}
}

/* A dump has no times: its events all get the time it was read (taken once
 * per file; reading the clock per event was a fortieth of the time).
 */
static int input_event(const struct event *ev, void *ctx)
{
	struct report *r = ctx;

	if (ev->fault)
		name_input_prog(r->input_prog, ev->fault);
	return add_event(r, r->input_prog, ev, &r->input_ts);
}

/* --stream, else the file name's hint: "stdout" in its last component
 * (a "bpftool prog tracelog stdout" capture saved as prog-stdout.txt).
 */
static enum stream input_stream(const char *path)
{
	const char *base = strrchr(path, '/');

	if (env.input_stream)
		return env.input_stream;
	return strstr(base ? base + 1 : path, "stdout") ? STREAM_STDOUT : STREAM_STDERR;
}

static int read_input(struct report *r, const char *path)
{
	bool is_stdin = !strcmp(path, "-");
	FILE *f = is_stdin ? stdin : fopen(path, "re");
	static char buf[256 * 1024];
	struct reasm *ra;
	size_t n;
	int err = 0;

	if (!f) {
		p_err("cannot open '%s': %s", path, strerror(errno));
		return -errno;
	}
	clock_gettime(CLOCK_REALTIME, &r->input_ts);
	/* keyed by the file name until a BPF frame names the program */
	r->input_prog = grouper__prog(r->g, 0, "", path);
	if (r->input_prog)
		r->input_prog->input = path;
	ra = r->input_prog ? reasm__new(input_stream(path), input_event, r) : NULL;
	if (!ra) {
		err = -ENOMEM;
		goto out;
	}
	while (!err && (n = fread(buf, 1, sizeof(buf), f)) > 0)
		err = reasm__feed(ra, buf, n);
	if (!err && ferror(f)) {
		p_err("cannot read '%s': %s", path, strerror(errno));
		err = -EIO;
	}
	if (!err)
		err = reasm__flush(ra);
	reasm__free(ra);
out:
	if (!is_stdin)
		fclose(f);
	return err;
}

static int collect_inputs(struct report *r)
{
	int i, err;

	for (i = 0; i < env.input_cnt; i++) {
		err = read_input(r, env.inputs[i]);
		if (err)
			return err == -EIO || err == -ENOENT || err == -EACCES ? -EIO : err;
	}
	return 0;
}

/* Saved dumps: a symbolizer of their own, offline. */
static int collect_dumps(struct report *r)
{
	int rc;

	if (symbolizer__new(&r->sym, &(struct symbolizer_opts){ .vmlinux = env.vmlinux, .quiet = true }))
		return EXIT_ERROR;
	rc = collect_inputs(r);
	if (rc)
		rc = rc == -EIO ? EXIT_ERROR : exit_for_errno(rc, "report");
	return rc;
}

/* Programs with bytes no read returned, or messages the kernel counted as
 * dropped, are part of the report even when nothing was readable: on
 * kernels whose writes fail that is all there is.
 */
static bool silent_loss(const struct prog *p)
{
	enum stream st;

	if (stream_accounted(p->capacity))
		return true;
	if (!p->has_drops)
		return false;
	for_each_stream(st)
		if (p->dropped_msgs[stream_idx(st)] > 0)
			return true;
	return false;
}

static void add_silent_losses(struct report *r)
{
	const struct prog *p;
	struct gprog *gp;
	size_t i;

	for (i = 0; i < r->after.cnt; i++) {
		p = &r->after.progs[i];
		if (!selected(p, NULL) || !p->has_streams || !silent_loss(p))
			continue;
		gp = grouper__prog(r->g, p->ident.id, p->ident.tag, p->ident.name);
		if (gp) {
			gp->ident.load_time_ns = p->ident.load_time_ns;
			gp->ident.type = p->ident.type;
			gp->has_type = true;
		}
	}
}

static void note_drained(struct report *r, struct pipeline *pl)
{
	struct tracked **t;
	struct gprog *gp;
	size_t n, i;

	n = pipeline__tracked(pl, &t);
	for (i = 0; i < n; i++) {
		gp = grouper__prog(r->g, t[i]->p.ident.id, t[i]->p.ident.tag, t[i]->p.ident.name);
		if (!gp)
			continue;
		memcpy(gp->bytes_read, t[i]->bytes_read, sizeof(gp->bytes_read));
		gp->ident.load_time_ns = t[i]->p.ident.load_time_ns;
		gp->ident.type = t[i]->p.ident.type;
		gp->has_type = true;
	}
}

static bool in_journal(struct report *r, __u32 id)
{
	struct gprog **progs;
	size_t n, i;

	n = grouper__sorted(r->g, &progs);
	for (i = 0; i < n; i++)
		if (progs[i]->ident.id == id)
			return true;
	return false;
}

/* Live programs, or with a journal also programs it has events of. */
static int check_ids(struct report *r, const struct prog_list *l)
{
	int i;

	for (i = 0; i < env.id_cnt; i++) {
		if (!prog_list__find(l, env.ids[i]) && !(r->journal && in_journal(r, env.ids[i]))) {
			p_err("program %u does not exist%s", env.ids[i],
			      r->journal ? " (not loaded, no events in the journal)" : "");
			return EXIT_NOPROG;
		}
	}
	return EXIT_OK;
}

static int collect_live(struct report *r)
{
	struct session_opts o = {
		.what = "reporting on live programs",
		.sym = { .vmlinux = env.vmlinux, .live = true, .quiet = true },
		.ops = {
			.streams = STREAM_MASK_BOTH, .select = selected, .sink = live_sink, .ctx = r,
			.history = true, .since_ns = env.since_ns, .until_ns = env.until_ns,
		},
	};
	struct prog_list before = {};
	long got;
	int err, rc;

	if (!journal_cli__path() && (env.has_since || env.has_until)) {
		p_err("--since and --until read the journal; they do not go with --no-journal");
		return EXIT_USAGE;
	}
	rc = session__open(&r->s, &o);
	if (rc)
		return rc;
	r->journal = r->s.journal;
	r->sym = r->s.sym;
	err = progs__snapshot(r->s.progs, &before, 0);
	if (err) {
		rc = exit_for_errno(err, "cannot enumerate programs");
		goto out;
	}
	rc = r->journal ? EXIT_OK : check_ids(r, &before);
	if (rc)
		goto out;
	got = pipeline__cycle(r->s.pl, &before);
	err = session__end(&r->s, got < 0 ? got : 0);
	if (!err && !r->journal)
		note_drained(r, r->s.pl);
	err = err ?: progs__snapshot(r->s.progs, &r->after, 0);
	if (err) {
		rc = journal_cli__failed(r->journal, err, "cannot drain streams");
		goto out;
	}
	rc = r->journal ? check_ids(r, &r->after) : EXIT_OK;
	add_silent_losses(r);
out:
	prog_list__free(&before);
	return rc;
}

/* ---- saturation ------------------------------------------------------ */

struct saturation {
	bool known;
	int capacity[STREAM_CNT];
	/* this report's drain: what a read to the end left (leaked), and
	 * when a drain (any, with a journal) found the stream full
	 */
	int leaked[STREAM_CNT];
	long long full_ns[STREAM_CNT];
	long long refused[STREAM_CNT];	/* the fill wake's count; -1: none */
	bool has_drops;			/* the kernel's drop counters */
	long long dropped_msgs[STREAM_CNT], dropped_bytes[STREAM_CNT];
	bool has_error_count;
	long long error_count;
};

static struct saturation saturation_of(const struct report *r, const struct gprog *gp)
{
	struct saturation s = {};
	const struct tracked *t;
	const struct prog *p;
	int i;

	/* the journal's, also for programs unloaded since */
	memcpy(s.full_ns, gp->full_ns, sizeof(s.full_ns));
	memcpy(s.refused, gp->refused, sizeof(s.refused));
	if (!r->live || !(p = prog_list__find(&r->after, gp->ident.id)) || strcmp(p->ident.tag, gp->ident.tag))
		return s;
	s.known = p->has_streams;
	memcpy(s.capacity, p->capacity, sizeof(s.capacity));
	t = pipeline__find(r->s.pl, gp->ident.id);
	for (i = 0; i < STREAM_CNT; i++) {
		s.leaked[i] = t ? t->left[i] : 0;
		s.full_ns[i] = t && t->full_ns[i] > gp->full_ns[i] ? t->full_ns[i] : gp->full_ns[i];
	}
	s.has_drops = p->has_drops;
	memcpy(s.dropped_msgs, p->dropped_msgs, sizeof(s.dropped_msgs));
	memcpy(s.dropped_bytes, p->dropped_bytes, sizeof(s.dropped_bytes));
	s.has_error_count = p->has_error_count;
	s.error_count = p->error_count;
	return s;
}

/* In the journal, and no longer loaded. */
static bool unloaded(const struct report *r, const struct gprog *gp)
{
	const struct prog *p;

	if (!r->live || !gp->ident.id)
		return false;
	p = prog_list__find(&r->after, gp->ident.id);
	return !p || strcmp(p->ident.tag, gp->ident.tag);
}

/* stream_losing() on stderr, or an RFC kernel's error count past what
 * it reports.
 */
static bool reports_lost(const struct saturation *s, const struct gprog *gp)
{
	int i = stream_idx(STREAM_STDERR);

	return (s->known && stream_losing(s->has_drops, s->dropped_msgs[i], s->leaked[i], s->full_ns[i])) ||
	       (!s->known && s->full_ns[i]) ||	/* unloaded since it was found full */
	       s->refused[i] > 0 ||
	       (s->has_error_count && s->error_count > ERROR_COUNT_MAX) ||
	       (s->has_error_count && (unsigned long long)s->error_count > gp->fault_total);
}

/* ---- JSON ------------------------------------------------------------ */

static struct json_object *int_array(const int *v, int n)
{
	struct json_object *a = json_object_new_array();
	int i;

	for (i = 0; i < n; i++)
		json_object_array_add(a, json_object_new_int(v[i]));
	return a;
}

static struct json_object *time_json(const struct report *r, const struct timespec *ts)
{
	char buf[40];

	if (!r->live)
		return NULL;	/* a saved dump has no times */
	format_time(ts, buf, sizeof(buf), true);
	return json_object_new_string(buf);
}

static struct json_object *group_json(const struct report *r, const struct gprog *gp,
				       const struct fgroup *grp)
{
	struct json_object *o = json_object_new_object();
	struct fault f;

	json_object_object_add(o, "kind", json_object_new_string(fault_kind_name(grp->kind)));
	json_object_object_add(o, "count", json_object_new_int64(grp->count));
	json_object_object_add(o, "first_seen", time_json(r, &grp->first));
	json_object_object_add(o, "last_seen", time_json(r, &grp->last));
	json_object_object_add(o, "task_pids", int_array(grp->pids, grp->pid_cnt));
	json_object_object_add(o, "cpus", int_array(grp->cpus, grp->cpu_cnt));
	json_object_object_add(o, "tasks_truncated", json_object_new_boolean(grp->sets_overflow));
	json_object_object_add(o, "addresses", addr_set_json(&grp->addrs));
	json_add_bytes(o, "signature", grp->signature, strlen(grp->signature));
	if (!fault__parse(grp->example, grp->example_len, true, &f)) {
		json_object_object_add(o, "example", fault_json(r->sym, &gp->ident, &f));
		fault__fini(&f);
	}
	return o;
}

/* The program's latest bpf_stream_print_stack() dump; NULL if none. */
static struct json_object *stack_json(const struct report *r, const struct gprog *gp)
{
	struct json_object *o = NULL;
	struct fault f;

	if (gp->stack_dumps && !fault__parse(gp->stack_example, gp->stack_example_len, true, &f)) {
		o = fault_json(r->sym, &gp->ident, &f);
		fault__fini(&f);
	}
	return o;
}

static struct json_object *prog_json(const struct report *r, const struct gprog *gp)
{
	struct json_object *o = json_object_new_object(), *groups;
	struct saturation s = saturation_of(r, gp);
	int i;

	prog_ident_json(o, &gp->ident, gp->has_type);
	if (gp->input)
		json_add_bytes(o, "input", gp->input, strlen(gp->input));
	else
		json_object_object_add(o, "unloaded", json_object_new_boolean(unloaded(r, gp)));
	json_object_object_add(o, "faults", faults_json(gp->faults));
	json_add_int(o, "fault_count", gp->fault_total);
	json_object_object_add(o, "messages", per_stream_json(gp->messages));
	json_add_int(o, "stack_dumps", gp->stack_dumps);
	json_object_object_add(o, "stack_dump_example", stack_json(r, gp));
	if (!s.known && r->journal && unloaded(r, gp))	/* the journal's counts */
		json_object_object_add(o, "streams", streams_gone_json(gp->bytes_read,
				       &(struct stream_loss){ s.leaked, s.full_ns, s.refused }));
	else
		json_object_object_add(o, "streams", streams_json(s.known, s.capacity, gp->bytes_read,
				       &(struct stream_loss){ s.leaked, s.full_ns, s.refused },
				       s.has_drops ? &(struct stream_drops){ s.dropped_msgs, s.dropped_bytes } : NULL));
	json_object_object_add(o, "error_count", error_count_json(s.has_error_count, s.error_count));
	json_object_object_add(o, "reports_lost", json_object_new_boolean(reports_lost(&s, gp)));
	json_object_object_add(o, "read_by", reads_json(gp));
	groups = json_object_new_array();
	for (i = 0; i < gp->group_cnt; i++)
		json_object_array_add(groups, group_json(r, gp, &gp->groups[i]));
	json_object_object_add(o, "groups", groups);
	return o;
}

struct totals {
	unsigned long long faults, messages, groups, lost_bytes, stacks;
	unsigned long long refused;	/* as each program's refused_reports */
	int lossy, full;	/* losing reports; a stream found full */
};

/* Bytes the kernel dropped, or else bytes a read to the end left. */
static unsigned long long lost_bytes(const struct saturation *s)
{
	unsigned long long n = 0;
	enum stream st;

	for_each_stream(st)
		n += s->has_drops ? (unsigned long long)s->dropped_bytes[stream_idx(st)] :
				    (unsigned long long)s->leaked[stream_idx(st)];
	return n;
}

/* Pushes refused for lack of room: the kernel's count, or the fill wake's. */
static unsigned long long refused_of(const struct saturation *s)
{
	unsigned long long n = 0;
	enum stream st;
	int i;

	for_each_stream(st) {
		i = stream_idx(st);
		if (s->has_drops)
			n += s->dropped_msgs[i];
		else if (s->refused[i] > 0)
			n += s->refused[i];
	}
	return n;
}

/* Streams a drain found full. */
static int streams_full(const struct saturation *s)
{
	enum stream st;
	int n = 0;

	for_each_stream(st)
		n += !!s->full_ns[stream_idx(st)];
	return n;
}

static struct totals totals_of(const struct report *r, struct gprog **progs, size_t n)
{
	struct totals t = {};
	struct saturation s;
	size_t i;

	for (i = 0; i < n; i++) {
		s = saturation_of(r, progs[i]);
		t.faults += progs[i]->fault_total;
		t.messages += stream_sum(progs[i]->messages);
		t.stacks += progs[i]->stack_dumps;
		t.groups += progs[i]->group_cnt;
		if (s.known)
			t.lost_bytes += lost_bytes(&s);
		/* as each program's streams say it (full_at_drain) */
		t.full += streams_full(&s);
		t.refused += refused_of(&s);
		t.lossy += reports_lost(&s, progs[i]);
	}
	return t;
}

static int print_json(const struct report *r, struct gprog **progs, size_t n)
{
	struct json_object *o = json_object_new_object(), *arr = json_object_new_array(), *sum;
	struct totals t = totals_of(r, progs, n);
	size_t i;
	int err;

	json_object_object_add(o, "schema_version", json_object_new_int(REPORT_SCHEMA_VERSION));
	json_object_object_add(o, "source", json_object_new_string(!r->live ? "input" :
								    r->journal ? "journal" : "live"));
	if (r->journal) {
		json_add_bytes(o, "journal", journal__path(r->journal), strlen(journal__path(r->journal)));
		json_object_object_add(o, "since", ns_time_json(env.since_ns));
		json_object_object_add(o, "until", ns_time_json(env.until_ns));
	}
	sum = json_object_new_object();
	json_object_object_add(sum, "programs", json_object_new_int64(n));
	json_object_object_add(sum, "faults", json_object_new_int64(t.faults));
	json_object_object_add(sum, "groups", json_object_new_int64(t.groups));
	json_object_object_add(sum, "messages", json_object_new_int64(t.messages));
	json_object_object_add(sum, "stack_dumps", json_object_new_int64(t.stacks));
	json_object_object_add(sum, "programs_losing_reports", json_object_new_int(t.lossy));
	json_object_object_add(sum, "lost_bytes", json_object_new_int64(t.lost_bytes));
	json_object_object_add(sum, "streams_full_at_drain", json_object_new_int(t.full));
	json_object_object_add(sum, "refused_reports", json_object_new_int64(t.refused));
	json_object_object_add(o, "summary", sum);
	for (i = 0; i < n; i++)
		json_object_array_add(arr, prog_json(r, progs[i]));
	json_object_object_add(o, "programs", arr);
	err = json_print(o, stdout);
	json_object_put(o);
	return err;
}

/* ---- text ------------------------------------------------------------ */

static void put(const char *s)
{
	fput_term(stdout, s, strlen(s));
}

/* refused: pushes the fill wake counted (-1: none counted) */
static void print_full_plain(enum stream st, long long ns, long long refused)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
	const char *what = st == STREAM_STDERR ? "fault reports and messages" : "messages";
	char at[40] = "";

	if (ns)
		format_time(&ts, at, sizeof(at), false);
	if (refused > 0)
		printf("  %s: %lld %s refused for lack of room (counted as the kernel refused them)%s%s\n",
		       stream_name(st), refused, what, ns ? "; full when drained at " : "", at);
	else if (ns)
		printf("  %s: full when drained at %s: %s refused for lack of room, how many unknown\n",
		       stream_name(st), at, what);
}

static void print_saturation_plain(const struct saturation *s, const struct gprog *gp)
{
	enum stream st;
	int cap, leaked;

	for_each_stream(st) {
		cap = s->capacity[stream_idx(st)];
		if (s->known && s->has_drops && s->dropped_msgs[stream_idx(st)])
			printf("  %s: %lld messages (%lld bytes) dropped by the kernel (its counters)\n",
			       stream_name(st), s->dropped_msgs[stream_idx(st)],
			       s->dropped_bytes[stream_idx(st)]);
		if (!s->known)	/* unloaded since: the journal's fill time only */
			print_full_plain(st, s->full_ns[stream_idx(st)], s->refused[stream_idx(st)]);
		if (!s->known || s->has_drops)
			continue;
		print_full_plain(st, s->full_ns[stream_idx(st)], s->refused[stream_idx(st)]);
		leaked = s->leaked[stream_idx(st)];
		if (leaked)
			printf("  %s: %d of %d bytes accounted, %d never readable (%s)\n",
			       stream_name(st), cap, STREAM_MAX_CAPACITY, leaked,
			       st == STREAM_STDERR ? "fault reports and messages lost" : "messages lost");
	}
	if (s->has_error_count) {
		printf("  kernel error count: %lld/%d", s->error_count, ERROR_COUNT_MAX);
		if (s->error_count > ERROR_COUNT_MAX)
			printf(", %lld faults hidden (reports stop after %d)",
			       s->error_count - ERROR_COUNT_MAX, ERROR_COUNT_MAX);
		printf(", bpfstderr saw %llu\n", gp->fault_total);
	}
}

static void print_group_plain(const struct report *r, const struct gprog *gp,
			      const struct fgroup *grp)
{
	char first[32], last[32];
	struct fault f;

	printf("  %llux ", grp->count);
	if (fault__parse(grp->example, grp->example_len, true, &f))
		return;
	print_group_summary(stdout, &f, &grp->addrs);
	if (r->live) {
		format_time(&grp->first, first, sizeof(first), false);
		format_time(&grp->last, last, sizeof(last), false);
		printf("\n     first %.8s, last %.8s", first, last);
	}
	printf("; %d task%s, %d CPU%s%s\n", grp->pid_cnt, grp->pid_cnt == 1 ? "" : "s",
	       grp->cpu_cnt, grp->cpu_cnt == 1 ? "" : "s", grp->sets_overflow ? " or more" : "");
	print_frames(stdout, r->sym, &gp->ident, &f, "      ", fault_first_frame(&f), EXAMPLE_FRAMES);
	fault__fini(&f);
}

/* Stack dumps, as one block: how many, and the latest one's frames. */
static void print_stack_plain(const struct report *r, const struct gprog *gp)
{
	struct fault f;

	if (!gp->stack_dumps)
		return;
	printf("  %llux ", gp->stack_dumps);
	if (fault__parse(gp->stack_example, gp->stack_example_len, true, &f))
		return;
	print_stack_summary(stdout, &f);
	printf(gp->stack_dumps > 1 ? ", the latest\n" : "\n");
	print_frames(stdout, r->sym, &gp->ident, &f, "      ", fault_first_frame(&f), EXAMPLE_FRAMES);
	fault__fini(&f);
}

static void print_prog_plain(const struct report *r, const struct gprog *gp)
{
	struct saturation s = saturation_of(r, gp);
	bool any = false;
	int k, i;

	if (gp->ident.id)
		printf("\nprogram %u ", gp->ident.id);
	else
		printf("\nprogram ");
	put(gp->ident.name[0] ? gp->ident.name : "(no name)");
	if (gp->input && strcmp(gp->input, gp->ident.name)) {
		printf(" from ");
		put(gp->input);
	}
	if (gp->ident.tag[0])
		printf(" tag %s", gp->ident.tag);
	if (gp->has_type)
		printf(" %s", prog_type_name(gp->ident.type));
	if (unloaded(r, gp))
		printf(" (unloaded)");
	printf("\n  faults:");
	for (k = 0; k < FAULT_KIND_CNT; k++) {
		if (gp->faults[k]) {
			printf(" %s %llu", fault_kind_name(k), gp->faults[k]);
			any = true;
		}
	}
	printf("%s; messages: stdout %llu, stderr %llu", any ? "" : " none",
	       gp->messages[stream_idx(STREAM_STDOUT)], gp->messages[stream_idx(STREAM_STDERR)]);
	if (gp->stack_dumps)
		printf("; stack dumps: %llu", gp->stack_dumps);
	printf("\n");
	print_reads_plain(gp);
	print_saturation_plain(&s, gp);
	for (i = 0; i < gp->group_cnt; i++)
		print_group_plain(r, gp, &gp->groups[i]);
	print_stack_plain(r, gp);
}

static void local_time(const struct timespec *ts, char *buf, size_t len)
{
	struct tm tm;

	localtime_r(&ts->tv_sec, &tm);
	strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm);
}

/* What the journal's part of the report covers. */
static void print_span(const struct report *r)
{
	char from[32], to[32];

	if (!r->journal || !r->oldest.tv_sec)
		return;
	local_time(&r->oldest, from, sizeof(from));
	local_time(&r->newest, to, sizeof(to));
	printf("events drained %s to %s%s, from the journal ", from, to,
	       env.since_ns || env.until_ns ? " (--since/--until)" : "");
	put(journal__path(r->journal));
	printf("\n");
}

static void print_plain(const struct report *r, struct gprog **progs, size_t n)
{
	struct totals t = totals_of(r, progs, n);
	size_t i;

	printf("%llu fault%s in %llu group%s, %llu message%s, %zu program%s",
	       t.faults, t.faults == 1 ? "" : "s", t.groups, t.groups == 1 ? "" : "s",
	       t.messages, t.messages == 1 ? "" : "s", n, n == 1 ? "" : "s");
	if (t.stacks)
		printf(", %llu stack dump%s", t.stacks, t.stacks == 1 ? "" : "s");
	if (t.lossy)
		printf("; %d losing reports (%llu bytes accounted, never readable; %d stream%s found full)",
		       t.lossy, t.lost_bytes, t.full, t.full == 1 ? "" : "s");
	printf("\n");
	print_span(r);
	for (i = 0; i < n; i++)
		print_prog_plain(r, progs[i]);
}

int do_report(int argc, char **argv)
{
	static const struct argp argp = {
		.options = opts,
		.parser = parse_arg,
		.children = drain_children,
		.args_doc = "[FILE...]",
		.doc = "Drain every program's streams into the journal, then group the faults "
		       "the journal holds (all it keeps, or --since/--until) and print them; "
		       "programs unloaded since are marked so. Or read saved dumps.\v"
		       "BPF frames are looked up in the reporting program first, then by tag and "
		       "function name; differing candidates are all shown (ambiguous); where the "
		       "kernel printed its own source line and ours differs, the kernel's is "
		       "shown, marked \"(the kernel's line; line info says ...)\".\n\n"
		       "Exit status: 0 no faults and no lost reports, 1 faults in what is reported "
		       "(with the journal: all it keeps, or the --since/--until window) or reports "
		       "lost (stderr bytes a read to the end left, or stderr found full when "
		       "drained), 2 usage, 3 missing capability, 4 no BPF streams, 5 error, "
		       "6 no such program.",
	};
	struct report r = {};
	struct gprog **progs;
	struct totals t;
	size_t n;
	int err, flush, rc;

	if (argp_parse(&argp, argc, argv, 0, NULL, NULL))
		return EXIT_USAGE;
	r.g = grouper__new();
	r.live = !env.input_cnt;
	if (!r.g)
		return EXIT_ERROR;
	if (r.live)
		rc = collect_live(&r);
	else
		rc = collect_dumps(&r);
	if (rc)
		goto out;
	n = grouper__sorted(r.g, &progs);
	t = totals_of(&r, progs, n);
	/* missing debuginfo is said before the report, not inside it */
	if (t.groups && symbolizer__prepare(r.sym))
		p_err("%s", symbolizer__notice(r.sym));
	err = 0;
	if (env.json)
		err = print_json(&r, progs, n);
	else
		print_plain(&r, progs, n);
	flush = output_flush(stdout);
	err = err ?: flush;
	if (err && err != -EPIPE)
		rc = output_failed(err);
	else
		rc = t.faults || t.lossy ? EXIT_FAULTS : EXIT_OK;
out:
	prog_list__free(&r.after);
	grouper__free(r.g);
	if (r.live)
		session__close(&r.s);
	else
		symbolizer__free(r.sym);
	return rc;
}
