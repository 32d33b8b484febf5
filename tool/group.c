// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"

struct strbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

/* A fault whose call trace was seen before (fault.trace_id) is in the
 * same group as the last one with that trace, kind, lock and header: the
 * signature is made of nothing else. Building and comparing it was a
 * seventh of report --input's time.
 */
#define SIG_MEMO_WAYS	4	/* a set per hash, the oldest replaced */
#define SIG_MEMO_SETS	64
#define SIG_MEMO_SLOTS	(SIG_MEMO_WAYS * SIG_MEMO_SETS)

struct sig_memo {
	const struct gprog *prog;
	uint64_t trace_id;		/* 0: empty */
	enum fault_kind kind;
	char *lock_func;		/* NULL when the fault has none */
	char *header;			/* FAULT_UNKNOWN's header, else NULL */
	int group;			/* index in prog->groups */
	uint64_t age;			/* when kept: the oldest is replaced */
};

struct grouper {
	struct gprog **progs;
	size_t cnt, cap;
	struct gprog *last;	/* events come in runs of one program */
	struct strbuf sig;	/* the signature being looked up */
	struct sig_memo memo[SIG_MEMO_SLOTS];
	uint64_t memo_age;
};

/* Signatures are built with plain appends, not vsnprintf: formatting
 * them was a quarter of report --input's time.
 */
static void sb_put(struct strbuf *b, const char *s, size_t n)
{
	size_t cap;
	char *tmp;

	if (b->oom)
		return;
	if (b->len + n + 1 > b->cap) {
		cap = (b->len + n + 1) * 2;
		tmp = realloc(b->s, cap);
		if (!tmp) {
			b->oom = true;
			return;
		}
		b->s = tmp;
		b->cap = cap;
	}
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = '\0';
}

static void sb_str(struct strbuf *b, const char *s)
{
	sb_put(b, s, strlen(s));
}

static void sb_int(struct strbuf *b, int v)
{
	char buf[16], *p = buf + sizeof(buf);
	long long n = v < 0 ? -(long long)v : v;

	do
		*--p = '0' + n % 10;
	while (n /= 10);
	if (v < 0)
		*--p = '-';
	sb_put(b, p, buf + sizeof(buf) - p);
}

static void sb_hex(struct strbuf *b, unsigned long long v)
{
	char buf[20], *p = buf + sizeof(buf);

	do
		*--p = "0123456789abcdef"[v & 0xf];
	while (v >>= 4);
	sb_put(b, p, buf + sizeof(buf) - p);
}

static void sig_frame(struct strbuf *b, const struct frame *fr)
{
	if (!fr->sym) {
		sb_str(b, " ?");
		return;
	}
	sb_str(b, " ");
	if (!fr->is_bpf) {
		sb_str(b, fr->sym);
		if (fr->module) {
			sb_str(b, "@");
			sb_str(b, fr->module);
		}
		return;
	}
	sb_str(b, fr->tag);
	sb_str(b, ":");
	sb_str(b, fr->func);
	if (fr->src_file) {
		sb_str(b, "@");
		sb_str(b, fr->src_file);
		sb_str(b, ":");
		sb_int(b, fr->src_line);
	} else {
		sb_str(b, "+0x");
		sb_hex(b, fr->off);
	}
}

/* An interrupt or exception entry (x86 idtentry stubs, arm64 vectors):
 * the frames past it are whatever the interrupt interrupted.
 */
static bool frame_is_entry(const struct frame *fr)
{
	static const char *const prefixes[] = { "asm_", "el1h_64_", "el0t_64_" };
	size_t i;

	if (!fr->sym || fr->is_bpf)
		return false;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(fr->sym, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

/* The stretch from the faulting (innermost) BPF frame to the outermost
 * BPF frame that called it, stopping at an interrupt entry: a BPF
 * callback run from an interrupt (a bpf_timer's) is keyed on itself, not
 * on the code, BPF or not, that the interrupt landed in.
 */
static void bpf_stretch(const struct fault *f, int *first, int *last)
{
	int i;

	*first = *last = -1;
	for (i = 0; i < f->frame_cnt; i++) {
		if (*first >= 0 && frame_is_entry(&f->frames[i]))
			break;
		if (!f->frames[i].is_bpf)
			continue;
		if (*first < 0)
			*first = i;
		*last = i;
	}
	if (*first < 0) {
		*first = 0;
		*last = f->frame_cnt - 1;
	}
}

/* Into b, from its start; false when out of memory. */
static bool build_signature(struct strbuf *b, const struct fault *f)
{
	int first, last, i;

	b->len = 0;
	b->oom = false;
	bpf_stretch(f, &first, &last);
	sb_str(b, fault_kind_name(f->kind));
	if (f->kind == FAULT_UNKNOWN) {
		sb_str(b, "(");
		sb_str(b, f->header ? f->header : "");
		sb_str(b, ")");
	}
	if (f->lock_func) {
		sb_str(b, "(");
		sb_str(b, f->lock_func);
		sb_str(b, ")");
	}
	sb_str(b, ":");
	for (i = first; i <= last; i++)
		sig_frame(b, &f->frames[i]);
	return !b->oom;
}

char *fault_signature(const struct fault *f)
{
	struct strbuf b = {};

	if (!build_signature(&b, f)) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

/* FNV-1a over 8-byte words: only for telling groups apart quickly. */
static uint64_t sig_hash(const char *s, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ULL, w;

	for (; len >= 8; s += 8, len -= 8) {
		memcpy(&w, s, 8);
		h = (h ^ w) * 0x100000001b3ULL;
	}
	while (len--)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ULL;
	return h;
}

struct grouper *grouper__new(void)
{
	return calloc(1, sizeof(struct grouper));
}

static bool prog_matches(const struct gprog *p, __u32 id, const char *tag, const char *name)
{
	if (p->ident.id != id || strcmp(p->ident.tag, tag))
		return false;
	return id || !strcmp(p->ident.name, name);
}

struct gprog *grouper__prog(struct grouper *g, __u32 id, const char *tag, const char *name)
{
	struct gprog *p, **tmp;
	size_t i;

	if (g->last && prog_matches(g->last, id, tag, name))
		return g->last;
	for (i = 0; i < g->cnt; i++)
		if (prog_matches(g->progs[i], id, tag, name))
			return g->last = g->progs[i];
	if (g->cnt == g->cap) {
		tmp = realloc(g->progs, (g->cap ? g->cap * 2 : 16) * sizeof(*tmp));
		if (!tmp)
			return NULL;
		g->progs = tmp;
		g->cap = g->cap ? g->cap * 2 : 16;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->ident.id = id;
	p->refused[0] = p->refused[1] = -1;
	snprintf(p->ident.tag, sizeof(p->ident.tag), "%s", tag);
	snprintf(p->ident.name, sizeof(p->ident.name), "%s", name);
	g->progs[g->cnt++] = p;
	return g->last = p;
}

static void set_add(int *set, int *cnt, bool *overflow, int v)
{
	int i;

	for (i = 0; i < *cnt; i++)
		if (set[i] == v)
			return;
	if (*cnt == GROUP_SET_MAX) {
		*overflow = true;
		return;
	}
	set[(*cnt)++] = v;
}

static void addr_add(struct addr_set *a, unsigned long long v)
{
	int i;

	if (!a->cnt && !a->overflow) {
		a->first = a->min = a->max = v;
	} else {
		if (v < a->min)
			a->min = v;
		if (v > a->max)
			a->max = v;
	}
	for (i = 0; i < a->cnt; i++)
		if (a->v[i] == v)
			return;
	if (a->cnt == GROUP_SET_MAX) {
		a->overflow = true;
		return;
	}
	a->v[a->cnt++] = v;
}

static bool same_str(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

/* The fields of a fault besides its frames that its signature holds. */
static const char *sig_header(const struct fault *f)
{
	return f->kind == FAULT_UNKNOWN ? (f->header ? f->header : "") : NULL;
}

static struct sig_memo *memo_set(struct grouper *g, const struct gprog *p, const struct fault *f)
{
	uint64_t h = (f->trace_id ^ (uintptr_t)p >> 4) * 0x9e3779b97f4a7c15ULL ^ f->kind;

	return &g->memo[(h >> 32) % SIG_MEMO_SETS * SIG_MEMO_WAYS];
}

static bool memo_matches(const struct sig_memo *m, const struct gprog *p, const struct fault *f)
{
	return m->trace_id == f->trace_id && m->prog == p && m->kind == f->kind &&
	       same_str(m->lock_func, f->lock_func) && same_str(m->header, sig_header(f));
}

static struct fgroup *memo_find(struct grouper *g, struct gprog *p, const struct fault *f)
{
	struct sig_memo *set;
	int i;

	if (!f->trace_id)
		return NULL;
	set = memo_set(g, p, f);
	for (i = 0; i < SIG_MEMO_WAYS; i++)
		if (memo_matches(&set[i], p, f))
			return &p->groups[set[i].group];
	return NULL;
}

static void memo_clear(struct sig_memo *m)
{
	free(m->lock_func);
	free(m->header);
	memset(m, 0, sizeof(*m));
}

/* Best effort: out of memory only means the signature is built again. */
static void memo_keep(struct grouper *g, struct gprog *p, const struct fault *f,
		      const struct fgroup *grp)
{
	struct sig_memo *m, *set;
	int i;

	if (!f->trace_id)
		return;
	set = memo_set(g, p, f);
	for (i = 0, m = set; i < SIG_MEMO_WAYS; i++)
		if (set[i].age < m->age)
			m = &set[i];
	memo_clear(m);
	m->age = ++g->memo_age;
	m->lock_func = f->lock_func ? strdup(f->lock_func) : NULL;
	m->header = sig_header(f) ? strdup(sig_header(f)) : NULL;
	if ((f->lock_func && !m->lock_func) || (sig_header(f) && !m->header)) {
		memo_clear(m);
		return;
	}
	m->prog = p;
	m->trace_id = f->trace_id;
	m->kind = f->kind;
	m->group = grp - p->groups;
}

static struct fgroup *find_group(struct gprog *p, uint64_t hash, const char *sig)
{
	int i;

	for (i = 0; i < p->group_cnt; i++)
		if (p->groups[i].hash == hash && !strcmp(p->groups[i].signature, sig))
			return &p->groups[i];
	return NULL;
}

static struct fgroup *new_group(struct gprog *p, char *sig, uint64_t hash, const struct event *ev)
{
	struct fgroup *tmp, *grp;

	tmp = realloc(p->groups, (p->group_cnt + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	p->groups = tmp;
	grp = &p->groups[p->group_cnt];
	memset(grp, 0, sizeof(*grp));
	grp->example = malloc(ev->len ? ev->len : 1);
	if (!grp->example)
		return NULL;
	memcpy(grp->example, ev->text, ev->len);
	grp->example_len = ev->len;
	grp->signature = sig;
	grp->hash = hash;
	grp->kind = ev->fault->kind;
	p->group_cnt++;
	return grp;
}

/* The signature is built in the grouper's own buffer and copied only when
 * it starts a group: no allocation per fault once the groups exist.
 */
int grouper__add_fault(struct grouper *g, struct gprog *p, const struct event *ev,
		       const struct timespec *ts)
{
	const struct fault *f = ev->fault;
	struct fgroup *grp = memo_find(g, p, f);
	uint64_t hash;
	char *sig;

	if (grp)
		goto found;
	if (!build_signature(&g->sig, f))
		return -ENOMEM;
	hash = sig_hash(g->sig.s, g->sig.len);
	grp = find_group(p, hash, g->sig.s);
	if (!grp) {
		sig = strdup(g->sig.s);
		grp = sig ? new_group(p, sig, hash, ev) : NULL;
		if (!grp) {
			free(sig);
			return -ENOMEM;
		}
		grp->first = *ts;
	}
	memo_keep(g, p, f, grp);
found:
	grp->count++;
	grp->last = *ts;
	if (f->has_task) {
		set_add(grp->pids, &grp->pid_cnt, &grp->sets_overflow, f->pid);
		set_add(grp->cpus, &grp->cpu_cnt, &grp->sets_overflow, f->cpu);
	}
	if (f->kind == FAULT_ARENA_READ || f->kind == FAULT_ARENA_WRITE)
		addr_add(&grp->addrs, f->addr);
	p->faults[f->kind]++;
	p->fault_total++;
	return 0;
}

int grouper__add_read(struct gprog *p, const struct event *ev, const struct reader_id *who)
{
	struct gread *r, *tmp;
	int i;

	for (i = 0; i < p->read_cnt; i++) {
		r = &p->reads[i];
		if (r->stream == ev->stream && r->who.pid == who->pid && !strcmp(r->who.comm, who->comm))
			break;
	}
	if (i == p->read_cnt) {
		tmp = realloc(p->reads, (p->read_cnt + 1) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		p->reads = tmp;
		p->reads[p->read_cnt] = (struct gread){ .who = *who, .stream = ev->stream };
		i = p->read_cnt++;
	}
	r = &p->reads[i];
	if (ev->kind == EV_FAULT)
		r->faults++;
	else
		r->messages++;
	r->bytes += ev->len + (ev->kind == EV_MESSAGE && !ev->partial);
	return 0;
}

void grouper__add_message(struct gprog *p, const struct event *ev)
{
	p->messages[stream_idx(ev->stream)]++;
}

int grouper__add_stack(struct gprog *p, const struct event *ev)
{
	char *tmp = realloc(p->stack_example, ev->len ? ev->len : 1);

	if (!tmp)
		return -ENOMEM;
	memcpy(tmp, ev->text, ev->len);
	p->stack_example = tmp;
	p->stack_example_len = ev->len;
	p->stack_dumps++;
	return 0;
}

static int cmp_group(const void *a, const void *b)
{
	const struct fgroup *x = a, *y = b;

	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	return strcmp(x->signature, y->signature);
}

static int cmp_prog(const void *a, const void *b)
{
	const struct gprog *x = *(struct gprog *const *)a, *y = *(struct gprog *const *)b;

	if (x->fault_total != y->fault_total)
		return x->fault_total > y->fault_total ? -1 : 1;
	if (x->ident.id != y->ident.id)
		return x->ident.id < y->ident.id ? -1 : 1;
	return strcmp(x->ident.name, y->ident.name);
}

size_t grouper__sorted(struct grouper *g, struct gprog ***out)
{
	size_t i;

	for (i = 0; i < SIG_MEMO_SLOTS; i++)	/* the groups move */
		memo_clear(&g->memo[i]);
	for (i = 0; i < g->cnt; i++)
		if (g->progs[i]->group_cnt)
			qsort(g->progs[i]->groups, g->progs[i]->group_cnt,
			      sizeof(struct fgroup), cmp_group);
	if (g->cnt)
		qsort(g->progs, g->cnt, sizeof(*g->progs), cmp_prog);
	g->last = NULL;
	*out = g->progs;
	return g->cnt;
}

void grouper__free(struct grouper *g)
{
	size_t i;
	int j;

	if (!g)
		return;
	for (i = 0; i < g->cnt; i++) {
		for (j = 0; j < g->progs[i]->group_cnt; j++) {
			free(g->progs[i]->groups[j].signature);
			free(g->progs[i]->groups[j].example);
		}
		free(g->progs[i]->groups);
		free(g->progs[i]->stack_example);
		free(g->progs[i]->reads);
		free(g->progs[i]);
	}
	for (i = 0; i < SIG_MEMO_SLOTS; i++)
		memo_clear(&g->memo[i]);
	free(g->progs);
	free(g->sig.s);
	free(g);
}
