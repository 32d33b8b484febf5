// SPDX-License-Identifier: GPL-2.0
/* The pipeline's merge rules, without a journal: each cycle's snapshot is
 * merged with the programs it tracks. A program whose id is gone, or
 * whose id now names another program (another load time or tag: ids come
 * back), is forgotten: its gone callback runs once, after the cycle's
 * events; a new one is tracked only if the view selects it. No stream is
 * read here (no bytes are accounted), so no kernel is involved.
 */
#include <stdlib.h>

#include "pipeline.h"
#include "unit.h"

struct seen {
	char gone[256];		/* "id:tag:load_time " per gone call, in order */
	int rejected;		/* id the view does not select */
};

static bool select_prog(const struct prog *p, void *ctx)
{
	struct seen *s = ctx;

	return (int)p->ident.id != s->rejected;
}

static void gone(const struct tracked *t, void *ctx)
{
	struct seen *s = ctx;
	size_t n = strlen(s->gone);

	snprintf(s->gone + n, sizeof(s->gone) - n, "%u:%s:%llu ", t->p.ident.id, t->p.ident.tag,
		 (unsigned long long)t->p.ident.load_time_ns);
}

static struct prog prog(__u32 id, const char *tag, __u64 load_time)
{
	struct prog p = { .ident = { .id = id, .load_time_ns = load_time }, .has_streams = true };

	snprintf(p.ident.tag, sizeof(p.ident.tag), "%s", tag);
	snprintf(p.ident.name, sizeof(p.ident.name), "prog%u", id);
	return p;
}

/* One cycle over these programs; the tracked ones as "id:tag:load_time ". */
static void cycle(struct pipeline *pl, struct prog *v, size_t n, char *tracked, size_t len)
{
	struct prog_list l = { .progs = v, .cnt = n };
	struct tracked **t;
	size_t i, m, off = 0;

	CHECK(pipeline__cycle(pl, &l) == 0, "a cycle without bytes reads nothing");
	m = pipeline__tracked(pl, &t);
	tracked[0] = '\0';
	for (i = 0; i < m; i++)
		off += snprintf(tracked + off, len - off, "%u:%s:%llu ", t[i]->p.ident.id,
				t[i]->p.ident.tag, (unsigned long long)t[i]->p.ident.load_time_ns);
}

int main(void)
{
	struct seen s = { .rejected = 4 };
	struct pipeline_ops ops = {
		.streams = STREAM_MASK_BOTH, .select = select_prog, .gone = gone, .ctx = &s,
	};
	struct drainer *d;
	struct pipeline *pl;
	char tracked[512];
	struct prog a[] = { prog(1, "aa", 100), prog(2, "bb", 100), prog(3, "cc", 100) };
	struct prog b[] = { prog(1, "aa", 100), prog(3, "cc", 100) };
	/* id 1 loaded again (another load time); id 3 another program (tag) */
	struct prog c[] = { prog(1, "aa", 200), prog(3, "dd", 100), prog(4, "ee", 100) };

	if (drainer__new(&d, BACKEND_UPSTREAM) || pipeline__new(&pl, d, &ops))
		return 1;
	cycle(pl, a, 3, tracked, sizeof(tracked));
	CHECK_STR(tracked, "1:aa:100 2:bb:100 3:cc:100 ");
	CHECK_STR(s.gone, "");

	cycle(pl, b, 2, tracked, sizeof(tracked));
	CHECK_STR(tracked, "1:aa:100 3:cc:100 ");
	CHECK_STR(s.gone, "2:bb:100 ");

	s.gone[0] = '\0';
	cycle(pl, c, 3, tracked, sizeof(tracked));
	CHECK_STR(tracked, "1:aa:200 3:dd:100 ");
	CHECK_STR(s.gone, "1:aa:100 3:cc:100 ");

	s.gone[0] = '\0';
	cycle(pl, NULL, 0, tracked, sizeof(tracked));
	CHECK_STR(tracked, "");
	CHECK_STR(s.gone, "1:aa:200 3:dd:100 ");

	pipeline__free(pl);
	drainer__free(d);
	return unit_done();
}
