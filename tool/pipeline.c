// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>

#include "pipeline.h"

struct pipeline {
	struct pipeline_ops ops;
	struct drainer *drainer;
	struct tracked **t;		/* sorted by id */
	size_t cnt;
	int err;			/* first sink error */
};

static int on_event(const struct event *ev, void *ctx)
{
	struct tracked *t = ctx;
	struct pipe_event pe = { .ev = ev, .prog = t };

	clock_gettime(CLOCK_REALTIME, &pe.ts);
	if (ev->kind == EV_FAULT && t->pl->ops.sym)
		symbolizer__warm(t->pl->ops.sym, ev->fault);
	if (ev->kind == EV_FAULT)
		t->faults[ev->fault->kind]++;
	else
		t->messages[ev->stream - 1]++;
	return t->pl->ops.sink(&pe, t->pl->ops.ctx);
}

static struct tracked *tracked_new(struct pipeline *pl, const struct prog *p)
{
	struct tracked *t = calloc(1, sizeof(*t));
	int s;

	if (!t)
		return NULL;
	t->pl = pl;
	t->id = p->id;
	t->type = p->type;
	t->load_time_ns = p->load_time_ns;
	memcpy(t->tag, p->tag, sizeof(t->tag));
	snprintf(t->name, sizeof(t->name), "%s", p->full_name);
	for (s = 0; s < STREAM_CNT; s++) {
		t->reasm[s] = reasm__new(s + 1, on_event, t);
		if (!t->reasm[s])
			goto err;
	}
	return t;
err:
	for (s = 0; s < STREAM_CNT; s++)
		reasm__free(t->reasm[s]);
	free(t);
	return NULL;
}

static int tracked_flush(struct tracked *t)
{
	int s, err = 0;

	for (s = 0; s < STREAM_CNT; s++)
		err = err ?: reasm__flush(t->reasm[s]);
	return err;
}

static void tracked_free(struct tracked *t)
{
	int s;

	for (s = 0; s < STREAM_CNT; s++)
		reasm__free(t->reasm[s]);
	free(t);
}

int pipeline__new(struct pipeline **out, struct drainer *d, const struct pipeline_ops *ops)
{
	struct pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return -ENOMEM;
	pl->ops = *ops;
	pl->drainer = d;
	*out = pl;
	return 0;
}

/* Same id, same program: ids can come back after wrapping. */
static bool same_prog(const struct tracked *t, const struct prog *p)
{
	return t->id == p->id && t->load_time_ns == p->load_time_ns && !strcmp(t->tag, p->tag);
}

static void forget(struct pipeline *pl, struct tracked *t)
{
	int err = tracked_flush(t);

	if (err && !pl->err)
		pl->err = err;
	if (pl->ops.gone)
		pl->ops.gone(t, pl->ops.ctx);
	tracked_free(t);
}

static int on_bytes(__u32 id, int stream, const void *buf, size_t len, void *ctx)
{
	struct tracked *t = ctx;

	(void)id;
	t->bytes_read[stream - 1] += len;
	return reasm__feed(t->reasm[stream - 1], buf, len);
}

/* Only streams with bytes accounted are read: idle programs cost nothing.
 * Kernels without accounting (RFC) are read every cycle.
 */
static unsigned int streams_to_read(const struct pipeline *pl, const struct prog *p)
{
	unsigned int mask = 0;
	int s;

	if (!p->has_streams)
		return pl->ops.streams;
	for (s = 0; s < STREAM_CNT; s++)
		if (p->capacity[s] > 0)
			mask |= 1U << (s + 1);
	return mask & pl->ops.streams;
}

static long drain_one(struct pipeline *pl, struct tracked *t, const struct prog *p)
{
	unsigned long long before = t->bytes_read[0] + t->bytes_read[1];
	unsigned int mask = streams_to_read(pl, p);
	int err;

	memcpy(t->capacity, p->capacity, sizeof(t->capacity));
	if (!mask)
		return 0;
	err = drainer__drain(pl->drainer, p->id, mask, on_bytes, t);
	if (err == -ENOENT)
		err = 0;	/* unloaded since the snapshot: flushed next cycle */
	if (err)
		return err;
	return t->bytes_read[0] + t->bytes_read[1] - before;
}

long pipeline__cycle(struct pipeline *pl, const struct prog_list *now)
{
	struct tracked **next = calloc(now->cnt ? now->cnt : 1, sizeof(*next));
	size_t i, o = 0, n = 0;
	long total = 0, got;

	if (!next)
		return -ENOMEM;
	for (i = 0; i < now->cnt; i++) {
		const struct prog *p = &now->progs[i];
		struct tracked *t = NULL;

		while (o < pl->cnt && pl->t[o]->id < p->id)
			forget(pl, pl->t[o++]);
		if (o < pl->cnt && pl->t[o]->id == p->id) {
			t = pl->t[o++];
			if (!same_prog(t, p)) {
				forget(pl, t);
				t = NULL;
			}
		}
		if (!t && !pl->ops.select(p, pl->ops.ctx))
			continue;
		if (!t)
			t = tracked_new(pl, p);
		if (!t)
			continue;
		next[n++] = t;
		got = drain_one(pl, t, p);
		if (got < 0 && !pl->err)
			pl->err = got;
		total += got > 0 ? got : 0;
	}
	while (o < pl->cnt)
		forget(pl, pl->t[o++]);
	free(pl->t);
	pl->t = next;
	pl->cnt = n;
	return pl->err ? pl->err : total;
}

int pipeline__flush(struct pipeline *pl)
{
	size_t i;
	int err = 0;

	for (i = 0; i < pl->cnt; i++)
		err = err ?: tracked_flush(pl->t[i]);
	return err;
}

size_t pipeline__tracked(struct pipeline *pl, struct tracked ***out)
{
	*out = pl->t;
	return pl->cnt;
}

void pipeline__free(struct pipeline *pl)
{
	size_t i;

	if (!pl)
		return;
	for (i = 0; i < pl->cnt; i++)
		tracked_free(pl->t[i]);
	free(pl->t);
	free(pl);
}
