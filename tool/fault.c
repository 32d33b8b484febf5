// SPDX-License-Identifier: GPL-2.0
/* One fault report -> fields, and the format rules reassembly uses. */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fault.h"

#define ERROR_PREFIX	"ERROR: "
#define CALL_TRACE	"Call trace:"

static bool starts_with(const char *s, size_t len, const char *prefix)
{
	size_t n = strlen(prefix);

	return len >= n && !memcmp(s, prefix, n);
}

/* strncmp(s, lit, strlen(lit)) == 0 for a NUL-terminated s, inlined: the
 * parser's strncmp calls were a tenth of report --input's time. Stops at
 * s's NUL like strncmp, since lit has none.
 */
#define has_prefix(s, lit) prefix_eq((s), (lit), sizeof(lit) - 1)

static inline bool prefix_eq(const char *s, const char *lit, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (s[i] != lit[i])
			return false;
	return true;
}

/* The value of a hex digit, -1 for anything else. */
static const signed char hex_val[256] = {
	['0'] = 1, ['1'] = 2, ['2'] = 3, ['3'] = 4, ['4'] = 5,
	['5'] = 6, ['6'] = 7, ['7'] = 8, ['8'] = 9, ['9'] = 10,
	['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
	['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16,
};	/* stored plus one, so that every other byte is 0 */

static inline int hex_digit(char c)
{
	return hex_val[(unsigned char)c] - 1;
}

/* 1 to 16 hex digits at s: their value, and where they end in *end;
 * false for none or more than 16 (left to strtoull, as are signs and
 * blanks).
 */
static bool hex_run(const char *s, unsigned long long *v, const char **end)
{
	unsigned long long n = 0;
	int i, d;

	for (i = 0; i < 16 && (d = hex_digit(s[i])) >= 0; i++)
		n = n << 4 | d;
	if (!i || hex_digit(s[i]) >= 0)
		return false;
	*v = n;
	*end = s + i;
	return true;
}

/* atoi(s) (strtol's int, clamped then cast), without the call for 1 to 9
 * plain digits.
 */
static int dec_atoi(const char *s)
{
	int n = 0, i;

	for (i = 0; i < 9 && s[i] >= '0' && s[i] <= '9'; i++)
		n = n * 10 + (s[i] - '0');
	if (!i || (s[i] >= '0' && s[i] <= '9'))
		return atoi(s);
	return n;
}

const char *fault_kind_name(enum fault_kind k)
{
	static const char *const names[FAULT_KIND_CNT] = {
		[FAULT_UNKNOWN]		= "unknown",
		[FAULT_ARENA_READ]	= "arena_read",
		[FAULT_ARENA_WRITE]	= "arena_write",
		[FAULT_MAY_GOTO]	= "may_goto_timeout",
		[FAULT_LOCK_DEADLOCK]	= "lock_deadlock",
		[FAULT_LOCK_TIMEOUT]	= "lock_timeout",
	};

	return k < FAULT_KIND_CNT ? names[k] : "unknown";
}

static bool parse_hex(const char *s, unsigned long long *v)
{
	const char *fast;
	char *end;

	if (!has_prefix(s, "0x"))
		return false;
	if (hex_run(s + 2, v, &fast) && (*fast == '\0' || isspace((unsigned char)*fast)))
		return true;
	errno = 0;
	*v = strtoull(s + 2, &end, 16);
	return !errno && end != s + 2 && (*end == '\0' || isspace((unsigned char)*end));
}

static void parse_header(struct fault *f, char *h)
{
	static const char arena[] = "Arena ";
	static const char unmapped[] = " access at unmapped address ";
	static const char deadlock[] = "AA or ABBA deadlock detected for ";
	static const char timeout[] = "Timeout detected for ";
	char *p;

	f->header = h;
	f->kind = FAULT_UNKNOWN;
	if (has_prefix(h, arena) && (p = strstr(h, unmapped))) {
		if (has_prefix(h + strlen(arena), "READ"))
			f->kind = FAULT_ARENA_READ;
		else if (has_prefix(h + strlen(arena), "WRITE"))
			f->kind = FAULT_ARENA_WRITE;
		if (f->kind != FAULT_UNKNOWN && !parse_hex(p + strlen(unmapped), &f->addr))
			f->incomplete = true;
	} else if (!strcmp(h, "Timeout detected for may_goto instruction")) {
		f->kind = FAULT_MAY_GOTO;
	} else if (has_prefix(h, deadlock)) {
		f->kind = FAULT_LOCK_DEADLOCK;
		f->lock_func = h + strlen(deadlock);
	} else if (has_prefix(h, timeout) &&
		   has_prefix(h + strlen(timeout), "bpf_res_spin_lock")) {
		f->kind = FAULT_LOCK_TIMEOUT;
		f->lock_func = h + strlen(timeout);
	}
}

/* sscanf(line, "Held lock[ %d]", &idx) == 1, past "Held lock[": blanks,
 * a sign, a digit (the index itself is not kept). sscanf was a tenth of
 * the parse of a lock report.
 */
static bool held_index(const char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	if (*s == '+' || *s == '-')
		s++;
	return *s >= '0' && *s <= '9';
}

/* "key = 0x..." detail lines of lock reports. */
static bool parse_detail(struct fault *f, char *line)
{
	char *eq = strstr(line, " = ");
	unsigned long long v;

	if (!eq)
		return false;
	if (has_prefix(line, "Attempted lock")) {
		f->has_attempted = parse_hex(eq + 3, &f->attempted_lock);
	} else if (has_prefix(line, "Total held locks")) {
		f->held_cnt = dec_atoi(eq + 3);
	} else if (has_prefix(line, "Held lock[") && held_index(line + 10) && parse_hex(eq + 3, &v)) {
		if (f->held_listed < FAULT_HELD_MAX)
			f->held[f->held_listed++] = v;
	}
	return true;
}

/* "LABEL" then 1 to 9 decimal digits: a value sscanf's %d reads the same. */
static const char *task_field(const char *s, const char *label, size_t label_len, int *v)
{
	int n = 0, i;

	if (!prefix_eq(s, label, label_len))	/* stops at the line's end */
		return NULL;
	s += label_len;
	for (i = 0; i < 9 && s[i] >= '0' && s[i] <= '9'; i++)
		n = n * 10 + (s[i] - '0');
	if (!i || (s[i] >= '0' && s[i] <= '9'))
		return NULL;
	*v = n;
	return s + i;
}

/* The kernel's own spacing, "CPU: 1 UID: 0 PID: 42 Comm: x", without
 * sscanf, which was a tenth of report --input's time; anything else
 * (other blanks, signs, long numbers) goes to sscanf as before.
 */
static bool parse_task_fast(struct fault *f, char *line)
{
	const char *p = line;

	p = task_field(p, "CPU: ", 5, &f->cpu);
	p = p ? task_field(p, " UID: ", 6, &f->uid) : NULL;
	p = p ? task_field(p, " PID: ", 6, &f->pid) : NULL;
	if (!p || !has_prefix(p, " Comm: ") || !p[7] || isspace((unsigned char)p[7]))
		return false;
	f->comm = p + 7;
	return true;
}

static bool parse_task(struct fault *f, char *line)
{
	int n = 0;

	if (!has_prefix(line, "CPU: "))
		return false;
	if (!parse_task_fast(f, line)) {
		if (sscanf(line, "CPU: %d UID: %d PID: %d Comm: %n", &f->cpu, &f->uid, &f->pid, &n) != 3 || !n)
			return false;
		f->comm = line + n;
	}
	f->has_task = true;
	return true;
}

static bool is_hex_tag(const char *s)
{
	int i;

	for (i = 0; i < 16; i++)
		if (!isxdigit((unsigned char)s[i]) || isupper((unsigned char)s[i]))
			return false;
	return true;
}

/* sym_len: strlen(fr->sym), known to the caller */
static void frame_bpf(struct frame *fr, size_t sym_len)
{
	const char *s = fr->sym;

	if (sym_len < 9 + 16 || !has_prefix(s, "bpf_prog_") || !is_hex_tag(s + 9))
		return;
	if (s[25] != '\0' && s[25] != '_')
		return;
	fr->is_bpf = true;
	memcpy(fr->tag, s + 9, 16);
	fr->tag[16] = '\0';
	fr->func = s[25] ? s + 26 : s + 25;
}

/* RFC suffix ": [file.c:NN]" */
static void frame_rfc_src(struct frame *fr, char *p)
{
	char *colon, *end = strrchr(p, ']');

	if (!end || p[0] != '[')
		return;
	*end = '\0';
	colon = strrchr(p + 1, ':');
	if (!colon)
		return;
	*colon = '\0';
	fr->src_file = p + 1;
	fr->src_line = dec_atoi(colon + 1);
}

/* strtoull(s, NULL, 16), with "0x" and 1 to 16 digits (what the kernel
 * prints) done here: strtoull was a twentieth of report --input's time.
 */
static unsigned long long frame_hex(const char *s)
{
	unsigned long long v;
	const char *end;

	if (s[0] != '0' || s[1] != 'x' || !hex_run(s + 2, &v, &end))
		return strtoull(s, NULL, 16);
	return v;
}

/* sym+0xoff/0xsize [mod]   or, RFC, sym+0xoff/0xsize: [file:NN] */
static void parse_frame(struct fault *f, struct frame *fr, char *line)
{
	char *tok = line, *rest, *plus, *slash;

	memset(fr, 0, sizeof(*fr));
	if (*line == ' ')
		f->rfc_format = true;
	while (*tok == ' ')
		tok++;
	fr->raw = tok;
	rest = tok + strcspn(tok, " :");
	plus = memchr(tok, '+', rest - tok);
	slash = plus ? memchr(plus, '/', rest - plus) : NULL;
	if (!plus || !slash)
		return;		/* e.g. a bare address: kept as raw */
	if (*rest == ':') {
		*rest++ = '\0';
		while (*rest == ' ')
			rest++;
		frame_rfc_src(fr, rest);
	} else if (*rest == ' ') {
		*rest++ = '\0';
		while (*rest == ' ')
			rest++;
		if (*rest == '[' && rest[strlen(rest) - 1] == ']') {
			rest[strlen(rest) - 1] = '\0';
			fr->module = rest + 1;
		}
	}
	*plus = '\0';
	*slash = '\0';
	fr->sym = tok;
	fr->has_off = has_prefix(plus + 1, "0x") && has_prefix(slash + 1, "0x");
	fr->off = frame_hex(plus + 1);
	fr->size = frame_hex(slash + 1);
	frame_bpf(fr, plus - tok);
}

/* Upstream: "  <source text> @ file.c:NN" after a BPF frame. */
static bool parse_src(struct frame *fr, char *line)
{
	char *at, *colon;

	if (line[0] != ' ' || line[1] != ' ' || !(at = strstr(line, " @ ")))
		return false;
	while ((colon = strstr(at + 3, " @ ")))
		at = colon;	/* the source text may hold " @ " itself */
	colon = strrchr(at + 3, ':');
	if (!colon)
		return false;
	*at = '\0';
	*colon = '\0';
	fr->src_text = line + 2;
	while (*fr->src_text == ' ' || *fr->src_text == '\t')
		fr->src_text++;
	fr->src_file = at + 3;
	fr->src_line = dec_atoi(colon + 1);
	return true;
}

static int add_frame(struct fault *f, char *line)
{
	struct frame *tmp;
	int cap;

	if (f->frame_cnt == f->frame_cap) {
		cap = f->frame_cap ? f->frame_cap * 2 : 16;
		tmp = realloc(f->frame_buf, cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		f->frames = f->frame_buf = tmp;
		f->frame_cap = cap;
	}
	parse_frame(f, &f->frames[f->frame_cnt++], line);
	return 0;
}

/* Zero every field but the buffers, and make room for len bytes. */
static int reset(struct fault *f, size_t len)
{
	struct fault keep = { .storage = f->storage, .storage_cap = f->storage_cap,
			      .frames = f->frame_buf, .frame_buf = f->frame_buf,
			      .frame_cap = f->frame_cap,
			      .memo = f->memo, .no_memo = f->no_memo };
	char *tmp;

	if (keep.storage_cap < len + 1) {
		tmp = realloc(keep.storage, len + 1);
		if (!tmp)
			return -ENOMEM;
		keep.storage = tmp;
		keep.storage_cap = len + 1;
	}
	*f = keep;
	f->held_cnt = -1;
	return 0;
}

/* ---- call traces seen before ------------------------------------------
 *
 * A fault storm repeats one call trace with another CPU, task or address:
 * parsing its frames again was most of report --input's time. The trace
 * (the lines after "Call trace:") is parsed once; the next report with the
 * same bytes there gets a copy of the parsed bytes and frames.
 */
#define MEMO_WAYS	4		/* a set of slots per hash, the oldest replaced */
#define MEMO_SETS	16		/* 64 traces a stream (5 KB of slots) */
#define MEMO_SLOTS	(MEMO_WAYS * MEMO_SETS)
#define MEMO_TRACE_MAX	4096		/* longer traces are parsed each time */

struct memo_slot {
	uint64_t hash;
	uint64_t id;		/* fault.trace_id; 0: slot empty */
	size_t len;
	char *raw;		/* the trace as it came */
	char *parsed;		/* the same after parsing (NULs in place) */
	struct frame *frames;	/* pointing into parsed */
	int frame_cnt;
	bool rfc_format;
};

struct fault_memo {
	struct memo_slot slot[MEMO_SLOTS];
};

/* process-wide, so that two parsers never hand out the same id */
static uint64_t memo_ids;

/* FNV-1a over 8-byte words: only for finding the slot quickly. */
static uint64_t trace_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL ^ len, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	while (len--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h ^ h >> 29;
}

static void memo_slot_free(struct memo_slot *m)
{
	free(m->raw);
	free(m->parsed);
	free(m->frames);
	memset(m, 0, sizeof(*m));
}

static void memo_free(struct fault_memo *memo)
{
	int i;

	if (!memo)
		return;
	for (i = 0; i < MEMO_SLOTS; i++)
		memo_slot_free(&memo->slot[i]);
	free(memo);
}

/* Frame pointers from one copy of a trace's bytes to another. */
static const char *rebase(const char *p, const char *from, char *to)
{
	return p ? to + (p - from) : NULL;
}

static void copy_frames(struct frame *dst, const struct frame *src, int cnt,
			const char *from, char *to)
{
	int i;

	if (!cnt)	/* src may be NULL then */
		return;
	memcpy(dst, src, cnt * sizeof(*dst));
	for (i = 0; i < cnt; i++) {
		dst[i].sym = rebase(src[i].sym, from, to);
		dst[i].raw = rebase(src[i].raw, from, to);
		dst[i].module = rebase(src[i].module, from, to);
		dst[i].func = rebase(src[i].func, from, to);
		dst[i].src_text = rebase(src[i].src_text, from, to);
		dst[i].src_file = rebase(src[i].src_file, from, to);
	}
}

/* The trace is the slot's: its frames are lent, pointing into the slot's
 * copy, until the next fault__reparse() (the slot is replaced no sooner).
 */
static int memo_take(struct fault *f, struct memo_slot *m)
{
	f->frames = m->frames;
	f->frame_cnt = m->frame_cnt;
	f->rfc_format = m->rfc_format;
	f->trace_id = m->id;
	return 0;
}

/* Keep the trace just parsed at t (raw: what it was before). Best effort:
 * out of memory only means the next one is parsed again.
 */
static void memo_keep(struct fault *f, struct memo_slot *m, uint64_t hash,
		      const char *raw, const char *t, size_t len)
{
	memo_slot_free(m);
	m->raw = malloc(len ? len : 1);
	m->parsed = malloc(len + 1);	/* with the NUL that ends the text */
	m->frames = malloc((f->frame_cnt ? f->frame_cnt : 1) * sizeof(*m->frames));
	if (!m->raw || !m->parsed || !m->frames) {
		memo_slot_free(m);
		return;
	}
	memcpy(m->raw, raw, len);
	memcpy(m->parsed, t, len + 1);
	copy_frames(m->frames, f->frames, f->frame_cnt, t, m->parsed);
	m->frame_cnt = f->frame_cnt;
	m->rfc_format = f->rfc_format;
	m->hash = hash;
	m->len = len;
	m->id = __atomic_add_fetch(&memo_ids, 1, __ATOMIC_RELAXED);
	f->trace_id = m->id;
}

/* The slot holding this trace, else the one to replace (id 0). */
static struct memo_slot *memo_find(struct fault_memo *memo, uint64_t hash, const char *raw,
				   size_t len)
{
	struct memo_slot *set = &memo->slot[hash % MEMO_SETS * MEMO_WAYS], *old = set;
	int i;

	for (i = 0; i < MEMO_WAYS; i++) {
		if (set[i].id && set[i].hash == hash && set[i].len == len &&
		    !memcmp(set[i].raw, raw, len))
			return &set[i];
		if (set[i].id < old->id)
			old = &set[i];
	}
	memo_slot_free(old);
	return old;
}

/* The frames: the lines of [line, end), NUL-terminated at end. */
static int parse_trace(struct fault *f, char *line, char *end)
{
	char *next;
	int err;

	for (; line < end; line = next) {
		next = memchr(line, '\n', end - line);
		next = next ? next : end;
		*next++ = '\0';
		if (!*line)
			continue;
		if (f->frame_cnt && parse_src(&f->frames[f->frame_cnt - 1], line))
			continue;
		err = add_frame(f, line);
		if (err)
			return err;
	}
	return 0;
}

/* parse_trace(), through the memo when there is one: raw is the text the
 * trace at t was copied from.
 */
static int parse_trace_memo(struct fault *f, const char *raw, char *t, char *end)
{
	size_t len = end - t;
	struct memo_slot *m;
	uint64_t hash;
	int err;

	if (!f->memo || len > MEMO_TRACE_MAX)
		return parse_trace(f, t, end);
	hash = trace_hash(raw, len);
	m = memo_find(f->memo, hash, raw, len);
	if (m->id)
		return memo_take(f, m);
	err = parse_trace(f, t, end);
	if (!err)
		memo_keep(f, m, hash, raw, t, len);
	return err;
}

int fault__parse(const char *text, size_t len, bool terminated, struct fault *f)
{
	memset(f, 0, sizeof(*f));
	f->no_memo = true;	/* parsed once: nothing to remember */
	return fault__reparse(text, len, terminated, f);
}

int fault__reparse(const char *text, size_t len, bool terminated, struct fault *f)
{
	bool saw_trace = false;
	char *line, *next, *end;
	int err;

	err = reset(f, len);
	if (err)
		return err;
	if (!f->memo && !f->no_memo)
		f->memo = calloc(1, sizeof(*f->memo));	/* NULL: no memo */
	memcpy(f->storage, text, len);
	f->storage[len] = '\0';
	end = f->storage + len;
	for (line = f->storage; line < end && !saw_trace; line = next) {
		next = memchr(line, '\n', end - line);
		next = next ? next : end;
		*next++ = '\0';
		if (line == f->storage && !has_prefix(line, ERROR_PREFIX)) {
			f->stack_dump = true;	/* no header: the task line first */
			if (!parse_task(f, line))
				f->incomplete = true;
		} else if (line == f->storage) {
			parse_header(f, line + strlen(ERROR_PREFIX));
		} else if (has_prefix(line, CALL_TRACE) && !line[strlen(CALL_TRACE)]) {
			saw_trace = true;
		} else if (!parse_task(f, line) && !parse_detail(f, line) && *line) {
			f->incomplete = true;
		}
	}
	if (saw_trace && line < end) {
		err = parse_trace_memo(f, text + (line - f->storage), line, end);
		if (err) {
			fault__fini(f);
			return err;
		}
	}
	if (!terminated || !saw_trace || !f->frame_cnt || !f->has_task)
		f->incomplete = true;
	return 0;
}

void fault__fini(struct fault *f)
{
	memo_free(f->memo);
	free(f->frame_buf);
	free(f->storage);
	memset(f, 0, sizeof(*f));
}

/* ---- the report format, for reassembly --------------------------------- */

/* memmem(s, len, " c ", 3) != NULL, by the rarer middle byte: memmem's
 * set-up cost more than the search on every line of a report.
 */
static bool has_spaced(const char *s, size_t len, char c)
{
	const char *p = s, *e = s + len;

	while ((p = memchr(p, c, e - p))) {
		if (p > s && p[-1] == ' ' && p + 1 < e && p[1] == ' ')
			return true;
		p++;
	}
	return false;
}

/* memmem(s, len, ": ", 2) != NULL */
static bool has_colon_blank(const char *s, size_t len)
{
	const char *p = s, *e = s + len;

	while ((p = memchr(p, ':', e - p))) {
		if (p + 1 < e && p[1] == ' ')
			return true;
		p++;
	}
	return false;
}

bool fault_line_starts_report(const char *s, size_t len)
{
	return starts_with(s, len, ERROR_PREFIX);
}

bool fault_line_starts_stack(const char *s, size_t len)
{
	return starts_with(s, len, "CPU: ") && memmem(s, len, " PID: ", 6) &&
	       memmem(s, len, " Comm: ", 7);
}

bool fault_line_starts_trace(const char *s, size_t len)
{
	return starts_with(s, len, CALL_TRACE);
}

/* A line that can stand in a report's header: "CPU: ...", "key = value",
 * "Key: value". Anything else means this was not a report after all.
 */
bool fault_line_is_header(const char *s, size_t len)
{
	return has_spaced(s, len, '=') || has_colon_blank(s, len) ||
	       starts_with(s, len, CALL_TRACE);
}

/* "sym+0x../0x..", an RFC frame with a leading blank, a bare address, or
 * an upstream source line "  text @ file:NN".
 */
bool fault_line_is_frame(const char *s, size_t len)
{
	const char *plus;
	size_t i = 0;

	while (i < len && s[i] == ' ')
		i++;
	if (i >= 2)
		return has_spaced(s, len, '@');	/* the text may be empty */
	if (i == len)
		return false;
	plus = memchr(s + i, '+', len - i);
	return (plus && plus + 2 < s + len && plus[1] == '0' && plus[2] == 'x') ||
	       starts_with(s + i, len - i, "0x");
}
