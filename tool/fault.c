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
	char *end;

	if (strncmp(s, "0x", 2))
		return false;
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
	if (!strncmp(h, arena, strlen(arena)) && (p = strstr(h, unmapped))) {
		if (!strncmp(h + strlen(arena), "READ", 4))
			f->kind = FAULT_ARENA_READ;
		else if (!strncmp(h + strlen(arena), "WRITE", 5))
			f->kind = FAULT_ARENA_WRITE;
		if (f->kind != FAULT_UNKNOWN && !parse_hex(p + strlen(unmapped), &f->addr))
			f->incomplete = true;
	} else if (!strcmp(h, "Timeout detected for may_goto instruction")) {
		f->kind = FAULT_MAY_GOTO;
	} else if (!strncmp(h, deadlock, strlen(deadlock))) {
		f->kind = FAULT_LOCK_DEADLOCK;
		f->lock_func = h + strlen(deadlock);
	} else if (!strncmp(h, timeout, strlen(timeout)) &&
		   !strncmp(h + strlen(timeout), "bpf_res_spin_lock", 17)) {
		f->kind = FAULT_LOCK_TIMEOUT;
		f->lock_func = h + strlen(timeout);
	}
}

/* "key = 0x..." detail lines of lock reports. */
static bool parse_detail(struct fault *f, char *line)
{
	char *eq = strstr(line, " = ");
	unsigned long long v;
	int idx;

	if (!eq)
		return false;
	if (!strncmp(line, "Attempted lock", 14)) {
		f->has_attempted = parse_hex(eq + 3, &f->attempted_lock);
	} else if (!strncmp(line, "Total held locks", 16)) {
		f->held_cnt = atoi(eq + 3);
	} else if (!strncmp(line, "Held lock[", 10) && sscanf(line, "Held lock[ %d]", &idx) == 1 &&
		   parse_hex(eq + 3, &v)) {
		if (f->held_listed < FAULT_HELD_MAX)
			f->held[f->held_listed++] = v;
	}
	return true;
}

static bool parse_task(struct fault *f, char *line)
{
	int n = 0;

	if (strncmp(line, "CPU: ", 5) ||
	    sscanf(line, "CPU: %d UID: %d PID: %d Comm: %n", &f->cpu, &f->uid, &f->pid, &n) != 3 || !n)
		return false;
	f->comm = line + n;
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

static void frame_bpf(struct frame *fr)
{
	const char *s = fr->sym;

	if (strncmp(s, "bpf_prog_", 9) || strlen(s) < 9 + 16 || !is_hex_tag(s + 9))
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
	fr->src_line = atoi(colon + 1);
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
	fr->has_off = !strncmp(plus + 1, "0x", 2) && !strncmp(slash + 1, "0x", 2);
	fr->off = strtoull(plus + 1, NULL, 16);
	fr->size = strtoull(slash + 1, NULL, 16);
	frame_bpf(fr);
}

/* Upstream: "  <source text> @ file.c:NN" after a BPF frame. */
static bool parse_src(struct frame *fr, char *line)
{
	char *at, *colon;

	if (strncmp(line, "  ", 2) || !(at = strstr(line, " @ ")))
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
	fr->src_line = atoi(colon + 1);
	return true;
}

static int add_frame(struct fault *f, char *line, int *cap)
{
	struct frame *tmp;

	if (f->frame_cnt == *cap) {
		*cap = *cap ? *cap * 2 : 16;
		tmp = realloc(f->frames, *cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		f->frames = tmp;
	}
	parse_frame(f, &f->frames[f->frame_cnt++], line);
	return 0;
}

int fault__parse(const char *text, size_t len, bool terminated, struct fault *f)
{
	bool in_trace = false, saw_trace = false;
	char *line, *next, *end;
	int cap = 0, err;

	memset(f, 0, sizeof(*f));
	f->held_cnt = -1;
	f->storage = malloc(len + 1);
	if (!f->storage)
		return -ENOMEM;
	memcpy(f->storage, text, len);
	f->storage[len] = '\0';
	end = f->storage + len;
	for (line = f->storage; line < end; line = next) {
		next = memchr(line, '\n', end - line);
		next = next ? next : end;
		*next++ = '\0';
		if (line == f->storage) {
			parse_header(f, line + strlen(ERROR_PREFIX));
		} else if (!in_trace) {
			if (!strcmp(line, CALL_TRACE))
				in_trace = saw_trace = true;
			else if (!parse_task(f, line) && !parse_detail(f, line) && *line)
				f->incomplete = true;
		} else if (*line) {
			if (f->frame_cnt && parse_src(&f->frames[f->frame_cnt - 1], line))
				continue;
			err = add_frame(f, line, &cap);
			if (err) {
				fault__fini(f);
				return err;
			}
		}
	}
	if (!terminated || !saw_trace || !f->frame_cnt || !f->has_task)
		f->incomplete = true;
	return 0;
}

void fault__fini(struct fault *f)
{
	free(f->frames);
	free(f->storage);
	memset(f, 0, sizeof(*f));
}

/* ---- the report format, for reassembly --------------------------------- */

bool fault_line_starts_report(const char *s, size_t len)
{
	return starts_with(s, len, ERROR_PREFIX);
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
	return memmem(s, len, " = ", 3) || memmem(s, len, ": ", 2) ||
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
		return memmem(s, len, " @ ", 3) != NULL;	/* the text may be empty */
	if (i == len)
		return false;
	plus = memchr(s + i, '+', len - i);
	return (plus && plus + 2 < s + len && plus[1] == '0' && plus[2] == 'x') ||
	       starts_with(s + i, len - i, "0x");
}
