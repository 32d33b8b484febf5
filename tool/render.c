// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "group.h"
#include "output.h"
#include "render.h"
#include "symbolize.h"

bool want_color(FILE *out, bool no_color_opt)
{
	const char *nc = getenv("NO_COLOR");

	return !no_color_opt && !(nc && *nc) && isatty(fileno(out));
}


void format_time(const struct timespec *ts, char *buf, size_t len, bool date)
{
	struct tm tm;
	size_t n;

	/* JSON carries UTC; a person reading text wants local time */
	if (date)
		gmtime_r(&ts->tv_sec, &tm);
	else
		localtime_r(&ts->tv_sec, &tm);
	n = strftime(buf, len, date ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
	snprintf(buf + n, len - n, ".%06d%s", (int)(ts->tv_nsec / 1000 % 1000000), date ? "Z" : "");
}

static void add_str(struct json_object *o, const char *key, const char *s)
{
	json_add_bytes(o, key, s, strlen(s));
}

void prog_ident_json(struct json_object *o, const struct prog_ident *id, bool has_type)
{
	if (id->id)
		json_add_int(o, "id", id->id);
	else
		json_add_null(o, "id");
	add_str(o, "name", id->name);
	json_add_str(o, "tag", id->tag[0] ? id->tag : NULL);
	json_add_str(o, "type", has_type ? prog_type_name(id->type) : NULL);
}

struct json_object *owners_json(const struct prog_owner *owners, int cnt)
{
	struct json_object *arr = json_object_new_array(), *o;
	int i;

	for (i = 0; i < cnt; i++) {
		o = json_object_new_object();
		json_object_object_add(o, "pid", json_object_new_int(owners[i].pid));
		json_add_bytes(o, "comm", owners[i].comm, strnlen(owners[i].comm, sizeof(owners[i].comm)));
		json_object_array_add(arr, o);
	}
	return arr;
}

struct json_object *per_stream_json(const unsigned long long v[STREAM_CNT])
{
	struct json_object *o = json_object_new_object();
	enum stream s;

	for_each_stream(s)
		json_add_int(o, stream_name(s), v[stream_idx(s)]);
	return o;
}

struct json_object *ns_time_json(long long ns)
{
	struct timespec ts = { ns / 1000000000LL, ns % 1000000000LL };
	char buf[40];

	if (!ns)
		return NULL;
	format_time(&ts, buf, sizeof(buf), true);
	return json_object_new_string(buf);
}

static struct json_object *stream_json(int capacity, const unsigned long long *read,
				       const struct stream_loss *loss,
				       const struct stream_drops *dropped, int i)
{
	struct json_object *o = json_object_new_object();

	json_add_int(o, "capacity", capacity);
	json_add_int(o, "limit", STREAM_MAX_CAPACITY);
	json_add_bool(o, "full", stream_full(capacity));
	if (read)
		json_add_int(o, "read_bytes", *read);
	else
		json_add_null(o, "read_bytes");
	if (loss) {
		json_add_int(o, "lost_bytes", loss->leaked[i]);
		json_add_bool(o, "full_at_drain", loss->full_ns[i] != 0);
		json_object_object_add(o, "full_at", ns_time_json(loss->full_ns[i]));
	} else {
		json_add_null(o, "lost_bytes");
		json_add_null(o, "full_at_drain");
		json_add_null(o, "full_at");
	}
	if (dropped)
		json_add_int(o, "refused_reports", dropped->msgs[i]);
	else if (loss && loss->refused && loss->refused[i] >= 0)
		json_add_int(o, "refused_reports", loss->refused[i]);
	else
		json_add_null(o, "refused_reports");
	if (dropped) {
		json_add_int(o, "dropped_messages", dropped->msgs[i]);
		json_add_int(o, "dropped_bytes", dropped->bytes[i]);
	} else {
		json_add_null(o, "dropped_messages");
		json_add_null(o, "dropped_bytes");
	}
	return o;
}

struct json_object *streams_json(bool has_streams, const int capacity[STREAM_CNT],
				 const unsigned long long *read, const struct stream_loss *loss,
				 const struct stream_drops *dropped)
{
	struct json_object *o;
	enum stream s;
	int i;

	if (!has_streams)
		return NULL;
	o = json_object_new_object();
	for_each_stream(s) {
		i = stream_idx(s);
		json_object_object_add(o, stream_name(s),
				       stream_json(capacity[i], read ? &read[i] : NULL, loss, dropped, i));
	}
	return o;
}

/* Of a program no longer loaded: the same keys, null where only the
 * kernel could say (its accounting, its drop counters, a read to the end).
 */
static struct json_object *stream_gone_json(const unsigned long long *read,
					    const struct stream_loss *loss, int i)
{
	struct json_object *o = json_object_new_object();

	json_add_null(o, "capacity");
	json_add_int(o, "limit", STREAM_MAX_CAPACITY);
	json_add_null(o, "full");
	json_add_int(o, "read_bytes", read[i]);
	json_add_null(o, "lost_bytes");
	json_add_bool(o, "full_at_drain", loss->full_ns[i] != 0);
	json_object_object_add(o, "full_at", ns_time_json(loss->full_ns[i]));
	if (loss->refused[i] >= 0)
		json_add_int(o, "refused_reports", loss->refused[i]);
	else
		json_add_null(o, "refused_reports");
	json_add_null(o, "dropped_messages");
	json_add_null(o, "dropped_bytes");
	return o;
}

struct json_object *streams_gone_json(const unsigned long long *read, const struct stream_loss *loss)
{
	struct json_object *o = json_object_new_object();
	enum stream s;

	for_each_stream(s)
		json_object_object_add(o, stream_name(s), stream_gone_json(read, loss, stream_idx(s)));
	return o;
}

struct json_object *faults_json(const unsigned long long faults[FAULT_KIND_CNT])
{
	struct json_object *o = json_object_new_object();
	int k;

	for (k = 0; k < FAULT_KIND_CNT; k++)
		if (faults[k])
			json_add_int(o, fault_kind_name(k), faults[k]);
	return o;
}

struct json_object *error_count_json(bool has_error_count, long long count)
{
	struct json_object *o;

	if (!has_error_count)
		return NULL;
	o = json_object_new_object();
	json_add_int(o, "count", count);
	json_add_int(o, "max", ERROR_COUNT_MAX);
	json_add_int(o, "hidden", count > ERROR_COUNT_MAX ? count - ERROR_COUNT_MAX : 0);
	return o;
}

static struct json_object *hex_json(unsigned long long v)
{
	char buf[24];

	snprintf(buf, sizeof(buf), "0x%llx", v);
	return json_object_new_string(buf);
}

static struct json_object *site_json(const struct sym_site *site)
{
	struct json_object *o = json_object_new_object();

	if (site->func)
		add_str(o, "function", site->func);
	if (site->file)
		add_str(o, "file", site->file);
	json_object_object_add(o, "line", json_object_new_int(site->line));
	json_object_object_add(o, "column", json_object_new_int(site->col));
	return o;
}

static void add_symbolized(struct json_object *o, const struct sym_loc *loc)
{
	struct json_object *sites = json_object_new_array(), *cands;
	int i;

	/* candidates that differ: none of them is the frame's own */
	if (loc->sites[0].file && loc->candidates <= 1) {
		add_str(o, "file", loc->sites[0].file);
		json_object_object_add(o, "line", json_object_new_int(loc->sites[0].line));
		json_object_object_add(o, "column", json_object_new_int(loc->sites[0].col));
	}
	if (loc->src_text)
		add_str(o, "source", loc->src_text);
	if (loc->candidates > 1) {
		cands = json_object_new_array();
		for (i = 0; i < loc->site_cnt; i++)
			json_object_array_add(cands, site_json(&loc->sites[i]));
		json_object_object_add(o, "ambiguous", cands);
		json_object_put(sites);
		return;
	}
	if (loc->kernel_line) {
		json_object_object_add(o, "line_from", json_object_new_string("kernel"));
		if (loc->ours.file)
			json_object_object_add(o, "line_info_says", site_json(&loc->ours));
		else
			json_add_null(o, "line_info_says");
	}
	for (i = 0; i < loc->site_cnt; i++)
		json_object_array_add(sites, site_json(&loc->sites[i]));
	json_object_object_add(o, "sites", sites);
	json_object_object_add(o, "exact", json_object_new_boolean(loc->exact));
}

static struct json_object *frame_json(struct symbolizer *sym, const struct prog_ident *owner,
				      const struct fault *f, int i)
{
	const struct frame *fr = &f->frames[i];
	struct json_object *o = json_object_new_object();
	struct sym_loc loc;

	json_object_object_add(o, "kind", json_object_new_string(fr->is_bpf ? "bpf" : "kernel"));
	if (!fr->sym) {
		add_str(o, "raw", fr->raw);
		return o;
	}
	add_str(o, "symbol", fr->sym);
	json_object_object_add(o, "offset", json_object_new_int64(fr->off));
	json_object_object_add(o, "size", json_object_new_int64(fr->size));
	if (fr->module)
		add_str(o, "module", fr->module);
	if (fr->is_bpf) {
		json_object_object_add(o, "tag", json_object_new_string(fr->tag));
		add_str(o, "func", fr->func);
	}
	if (sym && !symbolizer__frame(sym, owner, f, i, &loc)) {
		if (fr->is_bpf && !loc.kernel_line && loc.candidates <= 1)
			json_object_object_add(o, "line_from",
					       json_object_new_string("line_info"));
		add_symbolized(o, &loc);
		return o;
	}
	if (fr->src_file) {
		add_str(o, "file", fr->src_file);
		json_object_object_add(o, "line", json_object_new_int(fr->src_line));
	}
	if (fr->src_text)
		add_str(o, "source", fr->src_text);
	return o;
}

static struct json_object *lock_json(const struct fault *f)
{
	struct json_object *o = json_object_new_object(), *held = json_object_new_array();
	int i;

	add_str(o, "func", f->lock_func);
	if (f->has_attempted)
		json_object_object_add(o, "attempted", hex_json(f->attempted_lock));
	if (f->held_cnt >= 0)
		json_object_object_add(o, "held_count", json_object_new_int(f->held_cnt));
	for (i = 0; i < f->held_listed; i++)
		json_object_array_add(held, hex_json(f->held[i]));
	json_object_object_add(o, "held", held);
	return o;
}

struct json_object *fault_json(struct symbolizer *sym, const struct prog_ident *owner,
			       const struct fault *f)
{
	struct json_object *o = json_object_new_object(), *frames, *task;
	int i;

	json_object_object_add(o, "kind", json_object_new_string(f->stack_dump ? "stack_dump" :
								  fault_kind_name(f->kind)));
	if (f->stack_dump)
		json_add_null(o, "header");
	else
		add_str(o, "header", f->header ? f->header : "");
	json_object_object_add(o, "format", json_object_new_string(f->rfc_format ? "rfc" : "upstream"));
	json_object_object_add(o, "incomplete", json_object_new_boolean(f->incomplete));
	if (f->kind == FAULT_ARENA_READ || f->kind == FAULT_ARENA_WRITE)
		json_object_object_add(o, "addr", hex_json(f->addr));
	if (f->lock_func)
		json_object_object_add(o, "lock", lock_json(f));
	if (f->has_task) {
		task = json_object_new_object();
		json_object_object_add(task, "cpu", json_object_new_int(f->cpu));
		json_object_object_add(task, "uid", json_object_new_int(f->uid));
		json_object_object_add(task, "pid", json_object_new_int(f->pid));
		add_str(task, "comm", f->comm);
		json_object_object_add(o, "task", task);
	}
	frames = json_object_new_array();
	for (i = 0; i < f->frame_cnt; i++)
		json_object_array_add(frames, frame_json(sym, owner, f, i));
	json_object_object_add(o, "frames", frames);
	return o;
}

const char *event_kind_name(enum ev_kind k)
{
	return k == EV_FAULT ? "fault" : k == EV_STACK ? "stack" : "message";
}

struct json_object *event_json(struct symbolizer *sym, const struct pipe_event *pe)
{
	struct json_object *o = json_object_new_object(), *prog = json_object_new_object();
	const struct event *ev = pe->ev;
	char ts[40];

	format_time(&pe->ts, ts, sizeof(ts), true);
	json_object_object_add(o, "schema_version", json_object_new_int(EVENT_SCHEMA_VERSION));
	json_object_object_add(o, "time", json_object_new_string(ts));
	prog_ident_json(prog, &pe->prog->ident, true);
	json_object_object_add(o, "prog", prog);
	json_object_object_add(o, "stream", json_object_new_string(stream_name(ev->stream)));
	json_object_object_add(o, "kind", json_object_new_string(event_kind_name(ev->kind)));
	json_add_bytes(o, "text", ev->text, ev->len);
	if (ev->kind == EV_MESSAGE)
		json_object_object_add(o, "partial", json_object_new_boolean(ev->partial));
	else
		json_object_object_add(o, ev->kind == EV_STACK ? "stack" : "fault",
				       fault_json(sym, &pe->prog->ident, ev->fault));
	return o;
}

static void put(FILE *out, const char *s)
{
	fput_term(out, s, strlen(s));
}

struct json_object *addr_set_json(const struct addr_set *a)
{
	struct json_object *o;

	if (!a->cnt)
		return NULL;
	o = json_object_new_object();
	json_object_object_add(o, "distinct", json_object_new_int(a->cnt));
	json_object_object_add(o, "distinct_truncated", json_object_new_boolean(a->overflow));
	json_object_object_add(o, "first", hex_json(a->first));
	json_object_object_add(o, "min", hex_json(a->min));
	json_object_object_add(o, "max", hex_json(a->max));
	return o;
}

/* " (CPU n, UID n, PID n comm)" and " [incomplete]", where they apply. */
static void task_suffix(FILE *out, const struct fault *f)
{
	if (f->has_task) {
		fprintf(out, " (CPU %d, UID %d, PID %d ", f->cpu, f->uid, f->pid);
		put(out, f->comm);
		fputc(')', out);
	}
	if (f->incomplete)
		fputs(" [incomplete]", out);
}

static void summary(FILE *out, const struct fault *f, const struct addr_set *a)
{
	fputs(fault_kind_name(f->kind), out);
	if (a && (a->cnt > 1 || a->overflow))
		fprintf(out, " at %s%d addresses 0x%llx-0x%llx, first 0x%llx", a->overflow ? ">" : "",
			a->cnt, a->min, a->max, a->first);
	else if (f->kind == FAULT_ARENA_READ || f->kind == FAULT_ARENA_WRITE)
		fprintf(out, " at 0x%llx", f->addr);
	if (f->lock_func) {
		fputs(" in ", out);
		put(out, f->lock_func);
		if (f->has_attempted)
			fprintf(out, ", lock 0x%llx", f->attempted_lock);
		if (f->held_cnt >= 0)
			fprintf(out, ", %d held", f->held_cnt);
	}
	if (f->kind == FAULT_UNKNOWN) {
		fputs(": ", out);
		put(out, f->header ? f->header : "");
	}
	task_suffix(out, f);
}

void print_fault_summary(FILE *out, const struct fault *f)
{
	if (f->stack_dump) {
		print_stack_summary(out, f);
		return;
	}
	summary(out, f, NULL);
}

void print_stack_summary(FILE *out, const struct fault *f)
{
	fputs("stack dump", out);
	task_suffix(out, f);
}

void print_group_summary(FILE *out, const struct fault *f, const struct addr_set *a)
{
	summary(out, f, a);
}

int fault_first_frame(const struct fault *f)
{
	int i;

	for (i = 0; i < f->frame_cnt; i++)
		if (f->frames[i].is_bpf)
			return i ? i - 1 : 0;
	return 0;
}

static void print_site(FILE *out, const struct sym_site *site)
{
	if (!site->file)
		return;
	fputc(' ', out);
	put(out, site->file);
	fprintf(out, ":%d", site->line);
}

/* decode_stacktrace.sh style: "func+0x1e/0x30 file.c:123", then one
 * indented line per inlined call, innermost first.
 */
static void print_symbolized(FILE *out, const struct sym_loc *loc, const char *indent)
{
	int i;

	if (loc->candidates > 1) {
		fprintf(out, " ambiguous, %d candidates:", loc->candidates);
		for (i = 0; i < loc->site_cnt; i++)
			print_site(out, &loc->sites[i]);
		fputc('\n', out);
		return;
	}
	print_site(out, &loc->sites[0]);
	if (loc->src_text) {
		fputs("  ", out);
		fput_source(out, loc->src_text, strlen(loc->src_text));
	}
	if (loc->kernel_line) {
		fputs("  (the kernel's line; line info says", out);
		if (loc->ours.file)
			print_site(out, &loc->ours);
		else
			fputs(" none", out);
		fputc(')', out);
	}
	fputc('\n', out);
	for (i = 0; i + 1 < loc->site_cnt; i++) {
		fprintf(out, "%s    ", indent);
		put(out, loc->sites[i].func ? loc->sites[i].func : "??");
		fputs(" inlined in ", out);
		put(out, loc->sites[i + 1].func ? loc->sites[i + 1].func : "??");
		fputs(" at", out);
		print_site(out, &loc->sites[i + 1]);
		fputc('\n', out);
	}
}

/* Where a cut at max frames from first may start: never before the
 * outermost BPF frame's end, so that only the tail (test run, syscall,
 * attach point) is cut. f->frame_cnt: nothing cut.
 */
static int frames_end(const struct fault *f, int first, int max)
{
	int end = first + max, i;

	if (!max || end >= f->frame_cnt)
		return f->frame_cnt;
	for (i = f->frame_cnt - 1; i >= end; i--)
		if (f->frames[i].is_bpf)
			return i + 1;
	return end;
}

void print_frames(FILE *out, struct symbolizer *sym, const struct prog_ident *owner,
		  const struct fault *f, const char *indent, int first, int max)
{
	int end = frames_end(f, first, max), i;
	const struct frame *fr;
	struct sym_loc loc;

	if (first)
		fprintf(out, "%s(%d frames of the report machinery)\n", indent, first);
	for (i = first; i < end; i++) {
		fr = &f->frames[i];
		fputs(indent, out);
		if (!fr->sym) {
			put(out, fr->raw);
			fputc('\n', out);
			continue;
		}
		put(out, fr->sym);
		fprintf(out, "+0x%llx/0x%llx", fr->off, fr->size);
		if (fr->module) {
			fputs(" [", out);
			put(out, fr->module);
			fputc(']', out);
		}
		if (sym && !symbolizer__frame(sym, owner, f, i, &loc)) {
			print_symbolized(out, &loc, indent);
			continue;
		}
		if (fr->src_file) {
			fputc(' ', out);
			put(out, fr->src_file);
			fprintf(out, ":%d", fr->src_line);
		}
		if (fr->src_text) {
			fputs("  ", out);
			fput_source(out, fr->src_text, strlen(fr->src_text));
		}
		fputc('\n', out);
	}
	if (end < f->frame_cnt)
		fprintf(out, "%s... %d more\n", indent, f->frame_cnt - end);
}
