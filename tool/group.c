// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "group.h"

struct grouper {
	struct gprog **progs;
	size_t cnt, cap;
	struct gprog *last;	/* events come in runs of one program */
};

struct strbuf {
	char *s;
	size_t len, cap;
	bool oom;
};

static void sb_add(struct strbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sb_add(struct strbuf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (b->oom)
		return;
	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s ? b->s + b->len : NULL, b->s ? b->cap - b->len : 0, fmt, ap);
		va_end(ap);
		if (n < 0) {
			b->oom = true;
			return;
		}
		if (b->s && b->len + n < b->cap)
			break;
		b->cap = (b->len + n + 1) * 2;
		b->s = realloc(b->s, b->cap);
		if (!b->s) {
			b->oom = true;
			return;
		}
	}
	b->len += n;
}

static void sig_frame(struct strbuf *b, const struct frame *fr)
{
	if (!fr->sym) {
		sb_add(b, " ?");
		return;
	}
	if (!fr->is_bpf) {
		sb_add(b, " %s%s%s", fr->sym, fr->module ? "@" : "", fr->module ? fr->module : "");
		return;
	}
	if (fr->src_file)
		sb_add(b, " %s:%s@%s:%d", fr->tag, fr->func, fr->src_file, fr->src_line);
	else
		sb_add(b, " %s:%s+0x%llx", fr->tag, fr->func, fr->off);
}

char *fault_signature(const struct fault *f)
{
	struct strbuf b = {};
	int first = -1, last = -1, i;

	for (i = 0; i < f->frame_cnt; i++) {
		if (!f->frames[i].is_bpf)
			continue;
		if (first < 0)
			first = i;
		last = i;
	}
	if (first < 0) {
		first = 0;
		last = f->frame_cnt - 1;
	}
	sb_add(&b, "%s", fault_kind_name(f->kind));
	if (f->kind == FAULT_UNKNOWN)
		sb_add(&b, "(%s)", f->header ? f->header : "");
	if (f->lock_func)
		sb_add(&b, "(%s)", f->lock_func);
	sb_add(&b, ":");
	for (i = first; i <= last; i++)
		sig_frame(&b, &f->frames[i]);
	if (b.oom) {
		free(b.s);
		return NULL;
	}
	return b.s;
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	while (*s)
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

int grouper__add_fault(struct grouper *g, struct gprog *p, const struct event *ev,
		       const struct timespec *ts)
{
	const struct fault *f = ev->fault;
	struct fgroup *grp;
	char *sig = fault_signature(f);
	uint64_t hash;

	(void)g;
	if (!sig)
		return -ENOMEM;
	hash = fnv1a(sig);
	grp = find_group(p, hash, sig);
	if (grp) {
		free(sig);
	} else {
		grp = new_group(p, sig, hash, ev);
		if (!grp) {
			free(sig);
			return -ENOMEM;
		}
		grp->first = *ts;
	}
	grp->count++;
	grp->last = *ts;
	if (f->has_task) {
		set_add(grp->pids, &grp->pid_cnt, &grp->sets_overflow, f->pid);
		set_add(grp->cpus, &grp->cpu_cnt, &grp->sets_overflow, f->cpu);
	}
	p->faults[f->kind]++;
	p->fault_total++;
	return 0;
}

void grouper__add_message(struct gprog *p, const struct event *ev)
{
	p->messages[stream_idx(ev->stream)]++;
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
		free(g->progs[i]);
	}
	free(g->progs);
	free(g);
}
