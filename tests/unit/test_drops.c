// SPDX-License-Identifier: GPL-2.0
/* Kernels with the drop counters (kernel-patches/stream-drops) say what a
 * stream dropped; bpfstderr then shows that count instead of inferring
 * loss from capacity no read gives back. No kernel here has them, so the
 * values are injected into the snapshot the iterator would produce (the
 * iterator itself still loads here: test_live_progs, list_matches_bpftool).
 * Oracle: the values injected, and json-c parsing what we print.
 */
#include <stdlib.h>
#include <json-c/json.h>

#include "render.h"
#include "top_model.h"
#include "unit.h"

static struct prog prog(__u32 id, bool has_drops, long long dropped, int leaked)
{
	struct prog p = { .ident = { .id = id, .load_time_ns = id }, .has_streams = true,
			  .has_drops = has_drops };

	snprintf(p.ident.tag, sizeof(p.ident.tag), "%016x", id);
	snprintf(p.ident.name, sizeof(p.ident.name), "p%u", id);
	p.capacity[stream_idx(STREAM_STDERR)] = leaked;
	p.dropped_msgs[stream_idx(STREAM_STDERR)] = dropped;
	p.dropped_bytes[stream_idx(STREAM_STDERR)] = dropped * 87;
	return p;
}

static void test_top(void)
{
	struct prog v[] = { prog(1, true, 3, 0), prog(2, true, 0, 0), prog(3, false, 0, 261) };
	struct prog_list l = { .progs = v, .cnt = 3 };
	struct top_model m;
	char cell[128];
	struct row *r;

	if (top_model__init(&m))
		abort();
	top_model__refresh(&m, &l);
	top_cell(&m, top_model__find(&m, 1), COL_SAT, cell, sizeof(cell));
	CHECK(strstr(cell, "dropped 3") != NULL, "counted drops shown: '%s'", cell);
	CHECK(row_losing(top_model__find(&m, 1)), "counted drops: losing reports");
	CHECK(!row_losing(top_model__find(&m, 2)), "counters at 0: not losing");
	/* issue 27 item 3: bytes accounted in a snapshot are not lost until a
	 * read that ran to its end left them (the pipeline's tracked->left,
	 * which top copies into the row after its drain)
	 */
	r = top_model__find(&m, 3);
	top_cell(&m, r, COL_SAT, cell, sizeof(cell));
	CHECK(!strcmp(cell, "ok"), "no counters, not drained yet: '%s'", cell);
	CHECK(!row_losing(r), "bytes accounted and not read yet are no loss");
	top_model__count(&m);
	CHECK(m.losing == 1, "%d programs losing reports before the drain", m.losing);
	r->leaked[stream_idx(STREAM_STDERR)] = 261;
	m.version++;
	top_model__count(&m);
	top_cell(&m, r, COL_SAT, cell, sizeof(cell));
	CHECK(strstr(cell, "leaked 261B") != NULL, "no counters: leaked capacity: '%s'", cell);
	CHECK(row_losing(top_model__find(&m, 3)), "no counters: leaked capacity is loss");
	CHECK(m.losing == 2, "%d programs losing reports", m.losing);
	/* issue 27 item 6: found full at a drain, the read emptied it */
	r->leaked[stream_idx(STREAM_STDERR)] = 0;
	r->full_ns[stream_idx(STREAM_STDERR)] = 1700000000LL * 1000000000LL;
	m.version++;
	top_model__count(&m);
	top_cell(&m, r, COL_SAT, cell, sizeof(cell));
	CHECK(!strncmp(cell, "full at ", 8), "found full at a drain: '%s'", cell);
	CHECK(row_losing(r), "found full at a drain: losing reports");
	CHECK(m.losing == 2, "%d programs losing reports", m.losing);
	top_model__fini(&m);
}

static void test_json(void)
{
	struct prog with = prog(1, true, 3, 0), without = prog(3, false, 0, 261);
	struct stream_drops d = { with.dropped_msgs, with.dropped_bytes };
	struct json_object *o, *err;
	const char *s;

	o = streams_json(true, with.capacity, NULL, NULL, &d);
	s = json_object_to_json_string(o);
	err = json_tokener_parse(s);
	CHECK(err != NULL, "valid JSON: %s", s);
	CHECK(json_object_get_int64(json_object_object_get(json_object_object_get(err, "stderr"),
							   "dropped_messages")) == 3, "%s", s);
	CHECK(json_object_get_int64(json_object_object_get(json_object_object_get(err, "stderr"),
							   "dropped_bytes")) == 261, "%s", s);
	/* issue 27 item 6: with the counters the refused count is exact */
	CHECK(json_object_get_int64(json_object_object_get(json_object_object_get(err, "stderr"),
							   "refused_reports")) == 3, "%s", s);
	json_object_put(err);
	json_object_put(o);
	o = streams_json(true, without.capacity, NULL, NULL, NULL);
	s = json_object_to_json_string(o);
	CHECK(strstr(s, "\"dropped_messages\": null") || strstr(s, "\"dropped_messages\":null"),
	      "no counters: null: %s", s);
	json_object_put(o);
}

int main(void)
{
	test_top();
	test_json();
	return unit_done();
}
