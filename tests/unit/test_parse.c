// SPDX-License-Identifier: GPL-2.0
/* The parser and reassembler against the fixtures: the RFC reports quoted
 * in seed 001 and reports in the upstream format (see tests/fixtures/).
 * Expected values are read off the fixture text, field by field.
 */
#include <stdlib.h>
#include <json-c/json.h>

#include "reasm.h"
#include "render.h"
#include "unit.h"

#ifndef FIXTURES
#define FIXTURES "tests/fixtures"
#endif

struct rec {
	enum ev_kind kind;
	char *text;
	size_t len;
	bool partial;
	struct fault f;		/* reparsed copy, owns its storage */
};

struct recs {
	struct rec *v;
	int n;
};

static int record(const struct event *ev, void *ctx)
{
	struct recs *rs = ctx;
	struct rec *r;

	rs->v = realloc(rs->v, (rs->n + 1) * sizeof(*rs->v));
	r = &rs->v[rs->n++];
	memset(r, 0, sizeof(*r));
	r->kind = ev->kind;
	r->len = ev->len;
	r->partial = ev->partial;
	r->text = malloc(ev->len + 1);
	memcpy(r->text, ev->text, ev->len);
	r->text[ev->len] = '\0';
	if (ev->fault)
		fault__parse(ev->text, ev->len, !ev->fault->incomplete, &r->f);
	return 0;
}

static void recs_free(struct recs *rs)
{
	for (int i = 0; i < rs->n; i++) {
		free(rs->v[i].text);
		fault__fini(&rs->v[i].f);
	}
	free(rs->v);
	rs->v = NULL;
	rs->n = 0;
}

static char *slurp(const char *name, size_t *len)
{
	char path[256];
	char *buf;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", FIXTURES, name);
	f = fopen(path, "r");
	if (!f)
		return NULL;
	buf = malloc(1 << 20);
	*len = fread(buf, 1, 1 << 20, f);
	fclose(f);
	return buf;
}

/* Feed in pieces of `chunk` bytes (0: split once at `at`). */
static void run(struct recs *rs, int stream, const char *buf, size_t len, size_t chunk, size_t at)
{
	struct reasm *r = reasm__new(stream, record, rs);
	size_t off;

	if (chunk) {
		for (off = 0; off < len; off += chunk)
			reasm__feed(r, buf + off, len - off < chunk ? len - off : chunk);
	} else {
		reasm__feed(r, buf, at);
		reasm__feed(r, buf + at, len - at);
	}
	reasm__flush(r);
	reasm__free(r);
}

static void test_rfc_seed(void)
{
	struct recs rs = {};
	const struct fault *f;
	size_t len;
	char *buf = slurp("rfc-seed001.txt", &len);

	CHECK(buf != NULL, "fixture");
	if (!buf)
		return;
	run(&rs, 2, buf, len, 4096, 0);
	CHECK(rs.n == 4, "4 reports, got %d", rs.n);
	if (rs.n != 4)
		goto out;
	f = &rs.v[0].f;
	CHECK(rs.v[0].kind == EV_FAULT && f->kind == FAULT_LOCK_DEADLOCK, "deadlock kind");
	CHECK_STR(f->lock_func, "bpf_res_spin_lock");
	CHECK(f->has_attempted && f->attempted_lock == 0xff11000104a875e0ULL, "attempted lock");
	CHECK(f->held_cnt == 1 && f->held_listed == 1 && f->held[0] == 0xff11000104a875e0ULL, "held");
	CHECK(f->cpu == 5 && f->uid == 0 && f->pid == 764, "task ids");
	CHECK_STR(f->comm, "test_progs");
	CHECK(f->rfc_format && !f->incomplete, "RFC format, complete");
	CHECK(f->frame_cnt == 9, "9 frames, got %d", f->frame_cnt);
	CHECK_STR(f->frames[0].sym, "bpf_prog_stderr_dump_stack");
	CHECK(!f->frames[0].is_bpf, "bpf_prog_stderr_dump_stack is a kernel function");
	CHECK(f->frames[0].off == 0x83 && f->frames[0].size == 0xc0, "off/size");
	CHECK(f->frames[2].is_bpf, "frame 2 is BPF");
	CHECK_STR(f->frames[2].tag, "0f369a1fb6eb23d7");
	CHECK_STR(f->frames[2].func, "foo");
	CHECK_STR(f->frames[2].src_file, "stream_bpftool.c");
	CHECK(f->frames[2].src_line == 62, "line 62, got %d", f->frames[2].src_line);
	CHECK_STR(f->frames[3].func, "stream_bpftool_dump_prog_stream");
	CHECK(f->frames[3].src_line == 93, "line 93");
	CHECK_STR(f->frames[8].sym, "entry_SYSCALL_64_after_hwframe");
	CHECK_STR(f->frames[4].sym, "bpf_prog_test_run_syscall");

	f = &rs.v[1].f;
	CHECK(f->kind == FAULT_ARENA_READ && f->addr == 0xdeadbeef, "arena read 0xdeadbeef");
	CHECK(f->frame_cnt == 13, "13 frames, got %d", f->frame_cnt);
	CHECK_STR(f->frames[4].sym, "exc_page_fault");
	CHECK_STR(f->frames[3].sym, "kernelmode_fixup_or_oops.constprop.0");
	CHECK(f->frames[6].src_line == 67, "arena read at line 67");
	f = &rs.v[2].f;
	CHECK(f->kind == FAULT_ARENA_WRITE && f->addr == 0xfaceb00c, "arena write 0xfaceb00c");
	CHECK(f->frames[6].off == 0x111, "write off 0x111");
	f = &rs.v[3].f;
	CHECK(f->kind == FAULT_MAY_GOTO, "may_goto");
	CHECK(f->frames[3].src_line == 70, "may_goto at line 70");
out:
	recs_free(&rs);
	free(buf);
}

static void test_upstream(void)
{
	struct recs rs = {};
	const struct fault *f;
	size_t len;
	char *buf = slurp("upstream-6.18.txt", &len);

	CHECK(buf != NULL, "fixture");
	if (!buf)
		return;
	run(&rs, 2, buf, len, 4096, 0);
	CHECK(rs.n == 6, "6 reports, got %d", rs.n);
	if (rs.n != 6)
		goto out;
	f = &rs.v[0].f;
	CHECK(f->kind == FAULT_ARENA_READ && f->addr == 0xdeadbeef && !f->rfc_format, "upstream arena read");
	CHECK(!f->incomplete, "complete");
	CHECK(f->frame_cnt == 13, "13 frames (source lines are not frames), got %d", f->frame_cnt);
	CHECK_STR(f->frames[7].func, "arena_fault");
	CHECK_STR(f->frames[7].src_text, "val = *(volatile u64 __arena *)ptr;");
	CHECK_STR(f->frames[7].src_file, "demo.bpf.c");
	CHECK(f->frames[7].src_line == 41, "line 41");
	f = &rs.v[1].f;
	CHECK(f->kind == FAULT_ARENA_WRITE && f->addr == 0x100000000cafeULL, "arena write");
	CHECK_STR(f->frames[7].func, "poke");
	CHECK(f->frames[8].src_line == 44, "caller line 44");
	f = &rs.v[2].f;
	CHECK(f->kind == FAULT_MAY_GOTO && f->uid == 1000 && f->pid == 77, "may_goto, uid, pid");
	CHECK_STR(f->comm, "sched_ext_bin");
	f = &rs.v[3].f;
	CHECK(f->kind == FAULT_LOCK_DEADLOCK && f->held_cnt == 1, "AA deadlock");
	f = &rs.v[4].f;
	CHECK(f->kind == FAULT_LOCK_TIMEOUT, "lock timeout");
	CHECK_STR(f->lock_func, "bpf_res_spin_lock_irqsave");
	CHECK(f->held_cnt == 2 && f->held_listed == 2 && f->held[1] == 0xff11000104a875f0ULL, "2 held");
	CHECK_STR(f->comm, "swapper/3");
	CHECK_STR(f->frames[5].module, "nf_demo");
	CHECK_STR(f->frames[5].sym, "tcp_v4_rcv");
	f = &rs.v[5].f;
	CHECK(f->kind == FAULT_UNKNOWN, "unknown kind kept");
	CHECK_STR(f->header, "Stack overflow detected for bpf_future_thing");
	CHECK(f->frames[1].is_bpf && !strcmp(f->frames[1].func, ""), "nameless BPF program");
	CHECK(f->frames[2].sym == NULL, "bare address frame not symbolic");
	CHECK_STR(f->frames[2].raw, "0xffffffffc0001234");
out:
	recs_free(&rs);
	free(buf);
}

/* Same events, whatever the split: byte offsets 0..len. */
static void test_every_split(void)
{
	struct recs whole = {}, part = {};
	size_t len, at;
	char *buf = slurp("upstream-6.18.txt", &len);
	int bad = 0, i;

	if (!buf)
		return;
	run(&whole, 2, buf, len, 0, 0);
	for (at = 0; at <= len; at++) {
		run(&part, 2, buf, len, 0, at);
		if (part.n != whole.n)
			bad++;
		for (i = 0; i < part.n && i < whole.n; i++)
			if (part.v[i].len != whole.v[i].len || memcmp(part.v[i].text, whole.v[i].text, part.v[i].len))
				bad++;
		recs_free(&part);
	}
	CHECK(bad == 0, "%d splits of %zu changed the events", bad, len + 1);
	for (size_t chunk = 1; chunk <= 13; chunk += 6) {
		run(&part, 2, buf, len, chunk, 0);
		CHECK(part.n == whole.n, "chunks of %zu: %d events", chunk, part.n);
		recs_free(&part);
	}
	recs_free(&whole);
	free(buf);
}

static bool same_events(const struct recs *a, const struct recs *b)
{
	int i;

	if (a->n != b->n)
		return false;
	for (i = 0; i < a->n; i++)
		if (a->v[i].kind != b->v[i].kind || a->v[i].partial != b->v[i].partial ||
		    a->v[i].len != b->v[i].len || memcmp(a->v[i].text, b->v[i].text, a->v[i].len))
			return false;
	return true;
}

/* What the journal relies on: a reassembler stopped anywhere, whose held
 * bytes are fed to a new one that then gets the rest, gives the same
 * events as one reassembler fed everything; the held bytes alone give
 * none.
 */
static void test_resume_from_held(void)
{
	static const char tail[] = "message between\nERROR: Arena READ access at unmapped address 0x1\n"
				   "CPU: 0 UID: 0 PID: 1 Comm: cut\nCall trace:\nfoo+0x1/0x2\nlast without newline";
	struct recs whole = {}, part = {};
	size_t len, at, held_len;
	const void *held;
	struct reasm *a, *b;
	char *buf = slurp("upstream-6.18.txt", &len);
	int bad = 0, noisy = 0, n;

	if (!buf)
		return;
	memcpy(buf + len, tail, sizeof(tail) - 1);
	len += sizeof(tail) - 1;
	run(&whole, 2, buf, len, 0, 0);
	for (at = 0; at <= len; at++) {
		a = reasm__new(2, record, &part);
		reasm__feed(a, buf, at);
		reasm__held(a, &held, &held_len);
		b = reasm__new(2, record, &part);
		n = part.n;
		reasm__feed(b, held, held_len);
		noisy += part.n != n;
		reasm__free(a);
		reasm__feed(b, buf + at, len - at);
		reasm__flush(b);
		reasm__free(b);
		bad += !same_events(&part, &whole);
		recs_free(&part);
	}
	CHECK(bad == 0, "%d of %zu resumptions changed the events", bad, len + 1);
	CHECK(noisy == 0, "held bytes gave events %d times", noisy);
	recs_free(&whole);
	free(buf);
}

/* Concatenating events (messages + "\n" unless partial) gives the input. */
static void test_lossless(void)
{
	static const char in[] =
		"hello\n\x1b[2Jesc\n\xff\xfe bad utf8\nnul\0inside\n"
		"ERROR: not a report\nplain after\n"
		"ERROR: Arena READ access at unmapped address 0x10\nCPU: 0 UID: 0 PID: 1 Comm: x\n"
		"Call trace:\nfoo+0x1/0x2\n\ntail without newline";
	struct recs rs = {};
	char out[sizeof(in)];
	size_t o = 0;
	int i;

	run(&rs, 2, in, sizeof(in) - 1, 3, 0);
	for (i = 0; i < rs.n; i++) {
		memcpy(out + o, rs.v[i].text, rs.v[i].len);
		o += rs.v[i].len;
		if (rs.v[i].kind == EV_MESSAGE && !rs.v[i].partial)
			out[o++] = '\n';
	}
	CHECK(o == sizeof(in) - 1 && !memcmp(out, in, o), "reassembled %zu of %zu bytes", o, sizeof(in) - 1);
	CHECK(rs.n == 8, "8 events, got %d", rs.n);
	if (rs.n == 8) {
		CHECK(rs.v[4].kind == EV_FAULT && rs.v[4].f.incomplete, "lone ERROR: line is an incomplete report");
		CHECK(rs.v[5].kind == EV_MESSAGE, "the next line is a message again");
		CHECK(rs.v[6].kind == EV_FAULT && !rs.v[6].f.incomplete, "complete report");
		CHECK(rs.v[7].partial, "tail flushed as partial");
	}
	recs_free(&rs);
}

static void test_long_line(void)
{
	size_t len = REASM_LINE_MAX * 2 + 100;
	char *buf = malloc(len + 1);
	struct recs rs = {};
	size_t total = 0;

	memset(buf, 'a', len);
	buf[len] = '\n';
	run(&rs, 1, buf, len + 1, 1000, 0);
	for (int i = 0; i < rs.n; i++)
		total += rs.v[i].len;
	CHECK(total == len, "long line kept whole across %d pieces", rs.n);
	CHECK(rs.n == 3 && rs.v[0].partial && !rs.v[2].partial, "pieces marked");
	recs_free(&rs);
	free(buf);
}

/* bpf_stream_print_stack() (7.x): one EV_STACK event, not a fault and not
 * a dozen messages, parsed like a report's trace; on either stream, at any
 * split. Expected values are the fixture's lines.
 */
static void test_print_stack(void)
{
	struct recs rs = {}, part = {};
	const struct fault *f;
	size_t len, at;
	char *buf = slurp("print-stack-7.3.txt", &len);
	int bad = 0, stream;

	CHECK(buf != NULL, "fixture print-stack-7.3.txt");
	if (!buf)
		return;
	for (stream = 1; stream <= 2; stream++) {
		run(&rs, stream, buf, len, 0, 0);
		CHECK(rs.n == 4, "stream %d: %d events, want 4", stream, rs.n);
		if (rs.n != 4)
			goto next;
		CHECK(rs.v[0].kind == EV_MESSAGE && !strcmp(rs.v[0].text, "before the dump"), "message before");
		CHECK(rs.v[1].kind == EV_STACK, "stream %d: a stack dump, kind %d", stream, rs.v[1].kind);
		CHECK(rs.v[2].kind == EV_MESSAGE && !strcmp(rs.v[2].text, "after the dump"), "message after");
		CHECK(rs.v[3].kind == EV_MESSAGE && !strcmp(rs.v[3].text, "CPU: 2 is not a dump"),
		      "a CPU: line without a trace is a message: \"%s\"", rs.v[3].text);
		f = &rs.v[1].f;
		CHECK(f->stack_dump && !f->incomplete, "stack_dump %d incomplete %d", f->stack_dump, f->incomplete);
		CHECK(f->kind == FAULT_UNKNOWN && !f->header, "no fault kind, no header");
		CHECK(f->has_task && f->cpu == 1 && f->uid == 0 && f->pid == 4310 && !strcmp(f->comm, "st_print"),
		      "task %d %d %d %s", f->cpu, f->uid, f->pid, f->comm ? f->comm : "");
		CHECK(f->frame_cnt == 8, "%d frames, want 8", f->frame_cnt);
		if (f->frame_cnt == 8) {
			CHECK_STR(f->frames[1].sym, "bpf_stream_print_stack");
			CHECK(f->frames[2].is_bpf && !strcmp(f->frames[2].func, "print_stack") &&
			      !strcmp(f->frames[2].tag, "7a6b5c4d3e2f1a0b"), "the BPF frame");
			CHECK_STR(f->frames[2].src_file, "st.bpf.c");
			CHECK(f->frames[2].src_line == 120, "line %d", f->frames[2].src_line);
			CHECK_STR(f->frames[2].src_text, "return bpf_stream_print_stack(BPF_STDERR);");
		}
next:
		recs_free(&rs);
	}
	run(&rs, 2, buf, len, 0, 0);
	for (at = 0; at <= len; at++) {
		run(&part, 2, buf, len, 0, at);
		bad += !same_events(&rs, &part);
		recs_free(&part);
	}
	CHECK(bad == 0, "%d splits of %zu changed the events", bad, len + 1);
	recs_free(&rs);
	free(buf);
}

static void test_stdout_no_reports(void)
{
	static const char in[] = "ERROR: Timeout detected for may_goto instruction\n";
	struct recs rs = {};

	run(&rs, 1, in, sizeof(in) - 1, 64, 0);
	CHECK(rs.n == 1 && rs.v[0].kind == EV_MESSAGE, "reports come on stderr only");
	recs_free(&rs);
}

/* The task line is read by hand in the kernel's own spacing and by sscanf
 * otherwise: libc's sscanf on the same line is the oracle, for both.
 */
static void test_task_line_vs_sscanf(void)
{
	static const char *const lines[] = {
		"CPU: 1 UID: 0 PID: 4242 Comm: fault_demo",
		"CPU: 0 UID: 0 PID: 0 Comm: x",
		"CPU: 123456789 UID: 999999999 PID: 100000000 Comm: long numbers",
		"CPU: 1234567890 UID: 0 PID: 1 Comm: ten digits",
		"CPU: 99999999999 UID: 0 PID: 1 Comm: overflow",
		"CPU: -1 UID: +2 PID: 3 Comm: signs",
		"CPU:  1 UID:\t0 PID: 3 Comm: blanks",
		"CPU: 1  UID: 0 PID: 3 Comm: two blanks",
		"CPU: 1UID: 0 PID: 3 Comm: no blank",
		"CPU: 1 UID: 0 PID: 3 Comm:  two before comm",
		"CPU: 1 UID: 0 PID: 3 Comm: \tx",
		"CPU: 1 UID: 0 PID: 3 Comm: ",
		"CPU: 1 UID: 0 PID: 3 Comm:",
		"CPU: 1 UID: 0 PID: 3 Comm: x\r",
		"CPU: 1 UID: 0 PID: 3",
		"CPU: 1 UID: 0 PID: x Comm: y",
		"CPU: 01 UID: 00 PID: 0042 Comm: zeros",
		"CPU: 1 UID: 0 PID: 3 Commm: y",
		"CPU: x",
		"CPU: 1 UID",
		"CPU: 1 UID: 0 PID: 3 Com",
	};
	char text[512];
	struct fault f;
	int cpu, uid, pid, n, ok;
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(text, sizeof(text), "ERROR: Timeout detected for may_goto instruction\n%s\n"
			 "Call trace:\nfoo+0x1/0x2\n", lines[i]);
		if (fault__parse(text, strlen(text), true, &f))
			abort();
		n = 0;
		ok = sscanf(lines[i], "CPU: %d UID: %d PID: %d Comm: %n", &cpu, &uid, &pid, &n) == 3 && n;
		CHECK(f.has_task == ok, "'%s': has_task %d, sscanf %d", lines[i], f.has_task, ok);
		if (ok && f.has_task) {
			CHECK(f.cpu == cpu && f.uid == uid && f.pid == pid, "'%s': %d %d %d, sscanf %d %d %d",
			      lines[i], f.cpu, f.uid, f.pid, cpu, uid, pid);
			CHECK_STR(f.comm, lines[i] + n);
		}
		fault__fini(&f);
		/* the line last: no reading past its end (ASan build; the fuzzer
		 * found "CPU: 1 UID" there)
		 */
		snprintf(text, sizeof(text), "ERROR: x\n%s", lines[i]);
		if (fault__parse(text, strlen(text), false, &f))
			abort();
		CHECK(f.has_task == ok, "'%s' last: has_task %d, sscanf %d", lines[i], f.has_task, ok);
		fault__fini(&f);
	}
}

/* Frame offsets in the kernel's "0x" form are read by hand: strtoull is
 * the oracle, on every form, overflow included.
 */
static void test_frame_hex_vs_strtoull(void)
{
	static const char *const nums[] = {
		"0x0", "0x1f", "0xDeadBeef", "0xffffffffffffffff", "0x10000000000000000",
		"0x00000000000000001", "0x", "0xg", "12", "0x1fZ", "0x-1", "-0x1", "0",
	};
	char text[256];
	struct fault f;
	size_t i, j;

	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		j = (i + 3) % (sizeof(nums) / sizeof(nums[0]));
		snprintf(text, sizeof(text), "ERROR: Timeout detected for may_goto instruction\n"
			 "CPU: 1 UID: 0 PID: 3 Comm: x\nCall trace:\nfoo+%s/%s\n", nums[i], nums[j]);
		if (fault__parse(text, strlen(text), true, &f) || f.frame_cnt != 1)
			abort();
		CHECK(f.frames[0].off == strtoull(nums[i], NULL, 16), "off '%s': %llx", nums[i], f.frames[0].off);
		CHECK(f.frames[0].size == strtoull(nums[j], NULL, 16), "size '%s': %llx", nums[j], f.frames[0].size);
		fault__fini(&f);
	}
}

static char *fault_json_str(const struct fault *f)
{
	struct json_object *o = fault_json(NULL, NULL, f);
	char *s = strdup(json_object_to_json_string_ext(o, JSON_C_TO_STRING_PLAIN));

	json_object_put(o);
	return s;
}

/* One struct fault reparsed report after report (as reassembly does) says
 * what a fresh parse of each says: nothing left over from a larger or
 * different report before it.
 */
static void test_reparse_reuse(void)
{
	static const char *const names[] = { "upstream-6.18.txt", "rfc-seed001.txt" };
	struct recs rs = {};
	struct fault reused = {}, fresh;
	char *a, *b, *buf;
	size_t len, k;
	int i, bad = 0, pass;

	for (k = 0; k < 2; k++) {
		buf = slurp(names[k], &len);
		if (!buf)
			abort();
		run(&rs, 2, buf, len, 0, 0);
		free(buf);
	}
	for (pass = 0; pass < 2; pass++) {	/* forwards, then backwards */
		for (i = 0; i < rs.n; i++) {
			struct rec *r = &rs.v[pass ? rs.n - 1 - i : i];

			if (r->kind != EV_FAULT)
				continue;
			if (fault__reparse(r->text, r->len, !r->f.incomplete, &reused) ||
			    fault__parse(r->text, r->len, !r->f.incomplete, &fresh))
				abort();
			a = fault_json_str(&reused);
			b = fault_json_str(&fresh);
			bad += !!strcmp(a, b);
			free(a);
			free(b);
			fault__fini(&fresh);
		}
	}
	CHECK(bad == 0, "%d reparsed reports differ from a fresh parse", bad);
	fault__fini(&reused);
	recs_free(&rs);
}

/* More distinct call traces than fault__reparse() keeps, each twice in
 * another order: each reparse (remembered, evicted or new) says what a
 * fresh parse says, and one trace has one trace_id while it is kept.
 */
static void test_reparse_memo(void)
{
	struct fault reused = {}, fresh;
	unsigned long long first_id[200] = {};
	char text[512], *a, *b;
	int i, k, bad = 0, ids = 0;

	for (k = 0; k < 400; k++) {
		i = k < 200 ? k : (k * 7) % 200;
		snprintf(text, sizeof(text), "ERROR: Arena READ access at unmapped address 0x%x\n"
			 "CPU: %d UID: 0 PID: %d Comm: t\nCall trace:\n"
			 "bpf_prog_8c3f1b1a2d9e7c60_f+0x%x/0x78\n  x = 1; @ a.bpf.c:%d\n"
			 " bpf_prog_test_run_syscall+0x10f/0x1f0 [m%d]\n\n", k, k % 4, k, i, i, i % 3);
		if (fault__reparse(text, strlen(text), true, &reused) ||
		    fault__parse(text, strlen(text), true, &fresh))
			abort();
		a = fault_json_str(&reused);
		b = fault_json_str(&fresh);
		bad += !!strcmp(a, b);
		free(a);
		free(b);
		fault__fini(&fresh);
		if (k < 200)
			first_id[i] = reused.trace_id;
		else if (reused.trace_id == first_id[i])
			ids++;	/* still remembered */
	}
	CHECK(bad == 0, "%d reparsed reports differ from a fresh parse", bad);
	CHECK(ids > 0 && ids < 200, "%d of 200 traces kept their id", ids);
	fault__fini(&reused);
}

int main(void)
{
	test_print_stack();
	test_rfc_seed();
	test_upstream();
	test_every_split();
	test_resume_from_held();
	test_lossless();
	test_long_line();
	test_stdout_no_reports();
	test_task_line_vs_sscanf();
	test_frame_hex_vs_strtoull();
	test_reparse_reuse();
	test_reparse_memo();
	return unit_done();
}
