// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "output.h"
#include "top_model.h"

static double ts_diff(const struct timespec *a, const struct timespec *b)
{
	return (a->tv_sec - b->tv_sec) + (a->tv_nsec - b->tv_nsec) / 1e9;
}

int top_model__init(struct top_model *m)
{
	memset(m, 0, sizeof(*m));
	m->groups = grouper__new();
	return m->groups ? 0 : -ENOMEM;
}

static void recent_free(struct row *r)
{
	int i;

	for (i = 0; r->recent && i < RECENT_MAX; i++)
		free(r->recent[i].text);
	free(r->recent);
	r->recent = NULL;
	r->recent_head = r->recent_cnt = 0;
}

static void row_free(struct row *r)
{
	recent_free(r);
	free(r->owners);
	free(r->hist.slot);
	free(r);
}

void top_model__fini(struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->cnt; i++)
		row_free(m->rows[i]);
	free(m->rows);
	free(m->ids);
	free(m->changed);
	grouper__free(m->groups);
}

static int cmp_row_id(const void *a, const void *b)
{
	const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;

	return x->ident.id < y->ident.id ? -1 : x->ident.id > y->ident.id;
}

struct row *top_model__find(struct top_model *m, __u32 id)
{
	struct row key = { .ident.id = id }, *kp = &key, **r;
	const __u32 *at;

	if (!m->ids) {		/* no room for them: through the rows */
		r = bsearch(&kp, m->rows, m->cnt, sizeof(*m->rows), cmp_row_id);
		return r ? *r : NULL;
	}
	at = prog_ids_find(m->ids, m->cnt, id);
	return at ? m->rows[at - m->ids] : NULL;
}

/* The rows sorted by id again, and their ids. */
static void sort_rows(struct top_model *m)
{
	__u32 *ids;
	size_t i;

	qsort(m->rows, m->cnt, sizeof(*m->rows), cmp_row_id);
	ids = realloc(m->ids, (m->cnt ? m->cnt : 1) * sizeof(*ids));
	if (!ids) {
		free(m->ids);
		m->ids = NULL;
		return;
	}
	m->ids = ids;
	for (i = 0; i < m->cnt; i++)
		ids[i] = m->rows[i]->ident.id;
}

struct gprog *top_model__groups_of(struct top_model *m, const struct row *r)
{
	return grouper__prog(m->groups, r->ident.id, r->ident.tag, r->ident.name);
}

/* The owners as the list has them; kept when they are the same. */
static void set_owner(struct row *r, const struct prog *p)
{
	struct prog_owner *copy;
	char comm[40];

	if (r->owner_cnt != p->owner_cnt ||
	    (p->owner_cnt && memcmp(r->owners, p->owners, p->owner_cnt * sizeof(*p->owners)))) {
		copy = p->owner_cnt ? malloc(p->owner_cnt * sizeof(*copy)) : NULL;
		if (p->owner_cnt && !copy)
			return;		/* no room: the owners shown stay */
		if (copy)
			memcpy(copy, p->owners, p->owner_cnt * sizeof(*copy));
		free(r->owners);
		r->owners = copy;
		r->owner_cnt = p->owner_cnt;
	}
	r->owner[0] = '\0';
	if (!p->owner_cnt)
		return;
	term_escape(comm, sizeof(comm), p->owners[0].comm, strlen(p->owners[0].comm));
	if (p->owner_cnt > 1)
		snprintf(r->owner, sizeof(r->owner), "%s(%d)+%d", comm, p->owners[0].pid, p->owner_cnt - 1);
	else
		snprintf(r->owner, sizeof(r->owner), "%s(%d)", comm, p->owners[0].pid);
}

static struct row *row_new(const struct jprog *jp)
{
	struct row *r = calloc(1, sizeof(*r));

	if (!r)
		return NULL;
	r->ident = jp->ident;
	r->refused[0] = r->refused[1] = -1;
	return r;
}

/* A program the journal has events of, unloaded before this top saw it. */
static struct row *row_from_journal(const struct jprog *jp)
{
	struct row *r = row_new(jp);

	if (!r)
		return NULL;
	r->unloaded = true;
	clock_gettime(CLOCK_REALTIME, &r->gone_at);
	memcpy(r->bytes_read, jp->read_bytes, sizeof(r->bytes_read));
	return r;
}

static int add_row(struct top_model *m, struct row *r)
{
	struct row **tmp = realloc(m->rows, (m->cnt + 1) * sizeof(*tmp));

	if (!tmp)
		return -ENOMEM;
	m->rows = tmp;
	m->rows[m->cnt++] = r;
	sort_rows(m);
	return 0;
}

static void row_update(struct top_model *m, struct row *r, const struct prog *p, double dt)
{
	double inst;

	r->unloaded = false;
	set_owner(r, p);
	r->has_streams = p->has_streams;
	memcpy(r->capacity, p->capacity, sizeof(r->capacity));
	r->has_drops = p->has_drops;
	memcpy(r->dropped_msgs, p->dropped_msgs, sizeof(r->dropped_msgs));
	memcpy(r->dropped_bytes, p->dropped_bytes, sizeof(r->dropped_bytes));
	r->has_error_count = p->has_error_count;
	r->error_count = p->error_count;
	if (dt > 0) {
		inst = (r->fault_total - r->faults_at_last_tick) / dt * 60;
		r->rate = r->rate * 0.6 + inst * 0.4;
		if (r->rate < 0.01)
			r->rate = 0;
	}
	r->faults_at_last_tick = r->fault_total;
	r->has_rates = p->has_stats && r->has_stats && dt > 0 && p->run_cnt >= r->runs;
	if (r->has_rates) {
		double runs = p->run_cnt - r->runs, ns = p->run_time_ns - r->run_ns;

		r->runs_per_s = runs / dt;
		r->ns_per_run = runs ? ns / runs : 0;
		r->cpu_pct = ns / (dt * 1e9) * 100;
	}
	if (r->runs != p->run_cnt || r->run_ns != p->run_time_ns)
		top_model__row_changed(m, r);
	r->has_stats = p->has_stats;
	r->runs = p->run_cnt;
	r->run_ns = p->run_time_ns;
}

/* An active row of an unchanged list: in the same gen only what the
 * kernel accounts can differ (owners and statistics come with a new gen).
 */
static void row_update_active(struct top_model *m, struct row *r, const struct prog *p, double dt)
{
	if (memcmp(r->capacity, p->capacity, sizeof(r->capacity)) ||
	    memcmp(r->dropped_msgs, p->dropped_msgs, sizeof(r->dropped_msgs)) ||
	    memcmp(r->dropped_bytes, p->dropped_bytes, sizeof(r->dropped_bytes)) ||
	    r->error_count != p->error_count)
		m->version++;
	row_update(m, r, p, dt);
}

/* The totals, and how many rows show a fault's age, are unloaded or have
 * a rate (refresh_same() looks at those only), again only when a row may
 * have changed since they were counted; when the totals differ, the
 * screen must show them. A row the journal's events add (unloaded) is
 * counted at the next refresh: it goes a tick later at worst.
 */
static void count_totals(struct top_model *m)
{
	unsigned long long faults = 0, msgs = 0;
	size_t i, clock_rows = 0, unloaded = 0, rates = 0;
	unsigned long long refused = 0;
	size_t refused_rows = 0;
	int losing = 0;

	if (m->counted && m->counted_version == m->version)
		return;
	for (i = 0; i < m->cnt; i++) {
		refused += row_refused(m->rows[i]);
		refused_rows += row_refused(m->rows[i]) > 0;
		faults += m->rows[i]->fault_total;
		msgs += stream_sum(m->rows[i]->msgs);
		losing += !m->rows[i]->unloaded && row_losing(m->rows[i]);
		clock_rows += m->rows[i]->has_last_fault;
		unloaded += m->rows[i]->unloaded;
		rates += m->rows[i]->rate != 0;
	}
	if (faults != m->fault_total || msgs != m->msg_total || losing != m->losing ||
	    clock_rows != m->clock_rows || refused != m->refused_total)
		m->version++;
	m->refused_total = refused;
	m->refused_rows = refused_rows;
	m->fault_total = faults;
	m->msg_total = msgs;
	m->losing = losing;
	m->clock_rows = clock_rows;
	m->unloaded_rows = unloaded;
	m->rate_rows = rates;
	m->counted = true;
	m->counted_version = m->version;
}

void top_model__count(struct top_model *m)
{
	count_totals(m);
}

/* The list merged last tick, unchanged (progs__refresh()): every loaded
 * row is in it (the merge of that gen made them so), rows go only by
 * time, and only rows with a rate to decay or faults to count, and the
 * active programs (what the drain read comes off their capacity), need
 * an update. False when the whole merge is needed.
 */
static bool refresh_same(struct top_model *m, const struct prog_list *l, const struct timespec *now,
			 double dt)
{
	struct row *r;
	size_t i;

	if (!l->gen || l->gen != m->gen)
		return false;
	for (i = 0; m->unloaded_rows && i < m->cnt; i++) {
		r = m->rows[i];
		if (r->unloaded && !r->fault_total && ts_diff(now, &r->gone_at) > UNLOADED_KEEP_SEC)
			return false;
	}
	/* new faults come with a new version */
	for (i = 0; (m->rate_rows || m->version != m->counted_version) && i < m->cnt; i++) {
		r = m->rows[i];
		if (!r->unloaded && (r->rate || r->fault_total != r->faults_at_last_tick)) {
			row_update(m, r, prog_list__find(l, r->ident.id), dt);
			m->version++;
		}
	}
	for (i = 0; i < l->cnt_active; i++) {
		r = top_model__find(m, l->progs[l->active[i]].ident.id);
		if (r && !r->unloaded)
			row_update_active(m, r, &l->progs[l->active[i]], dt);
	}
	return true;
}

/* Merge the snapshot into the rows: new programs appear, gone ones are
 * marked unloaded and, unless they had faults (the journal keeps those),
 * dropped after UNLOADED_KEEP_SEC.
 */
void top_model__refresh(struct top_model *m, const struct prog_list *l)
{
	struct row **next;
	struct timespec now;
	size_t i = 0, j = 0, n = 0;
	double dt;

	clock_gettime(CLOCK_REALTIME, &now);
	dt = m->now.tv_sec ? ts_diff(&now, &m->now) : 0;
	if (refresh_same(m, l, &now, dt)) {
		m->now = now;
		count_totals(m);
		return;
	}
	next = malloc((m->cnt + l->cnt + 1) * sizeof(*next));
	if (!next)
		return;
	m->now = now;
	m->gen = l->gen;
	m->version++;
	m->sample_all = true;	/* rows come and go: the changed list may dangle */
	while (i < m->cnt || j < l->cnt) {
		struct row *r = i < m->cnt ? m->rows[i] : NULL;
		const struct prog *p = j < l->cnt ? &l->progs[j] : NULL;

		if (r && (!p || r->ident.id < p->ident.id ||
			  (r->ident.id == p->ident.id && !prog_ident__same(&r->ident, &p->ident)))) {
			if (!r->unloaded) {
				r->unloaded = true;
				r->gone_at = now;
			}
			i++;
			if (!r->fault_total && ts_diff(&now, &r->gone_at) > UNLOADED_KEEP_SEC) {
				row_free(r);
				continue;
			}
			next[n++] = r;
			continue;
		}
		if (r && r->ident.id == p->ident.id) {
			i++;
		} else {
			struct jprog jp = jprog_of(p);

			r = row_new(&jp);
			if (!r) {
				j++;
				continue;
			}
		}
		row_update(m, r, p, dt);
		next[n++] = r;
		j++;
	}
	free(m->rows);
	m->rows = next;
	m->cnt = n;
	sort_rows(m);
	count_totals(m);
}

/* The ring of recent events comes with the first one: an idle row stays
 * small (a few cache lines, not RECENT_MAX entries).
 */
static void remember(struct row *r, const struct pipe_event *pe)
{
	struct recent *rc;
	char *copy;

	if (!r->recent && !(r->recent = calloc(RECENT_MAX, sizeof(*r->recent))))
		return;
	rc = &r->recent[r->recent_head];
	copy = malloc(pe->ev->len ? pe->ev->len : 1);
	if (!copy)
		return;
	memcpy(copy, pe->ev->text, pe->ev->len);
	free(rc->text);
	rc->text = copy;
	rc->len = pe->ev->len;
	rc->stream = pe->ev->stream;
	rc->fault = pe->ev->kind == EV_FAULT;
	rc->partial = pe->ev->partial;
	rc->ts = pe->ts;
	rc->mirrored = pe->reader;
	if (pe->reader)
		rc->who = *pe->reader;
	r->recent_head = (r->recent_head + 1) % RECENT_MAX;
	if (r->recent_cnt < RECENT_MAX)
		r->recent_cnt++;
}

int top_model__event(struct top_model *m, const struct pipe_event *pe)
{
	struct row *r = top_model__find(m, pe->prog->ident.id);
	struct gprog *gp;
	int i;

	/* not in the last snapshot: from the journal, or loaded since (the
	 * next refresh finds it loaded)
	 */
	if (!r && (!(r = row_from_journal(pe->prog)) || add_row(m, r))) {
		free(r);
		return -ENOMEM;
	}
	remember(r, pe);
	m->version++;
	if (pe->reader) {
		r->mirrored[stream_idx(pe->ev->stream)]++;
		r->reader[stream_idx(pe->ev->stream)] = *pe->reader;
	}
	for (i = 0; i < STREAM_CNT; i++) {	/* the journal's: any drainer's */
		if (pe->prog->full_ns[i] > r->full_ns[i])
			r->full_ns[i] = pe->prog->full_ns[i];
		if (pe->prog->refused[i] > r->refused[i])	/* the journal's */
			r->refused[i] = pe->prog->refused[i];
	}
	top_model__row_changed(m, r);
	if (pe->ev->kind == EV_STACK) {
		r->stack_dumps++;
		return 0;
	}
	if (pe->ev->kind != EV_FAULT) {
		r->msgs[stream_idx(pe->ev->stream)]++;
		return 0;
	}
	r->faults[pe->ev->fault->kind]++;
	r->fault_total++;
	r->last_fault = pe->ts;
	r->has_last_fault = true;
	gp = top_model__groups_of(m, r);
	return gp ? grouper__add_fault(m->groups, gp, pe->ev, &pe->ts) : -ENOMEM;
}

void top_model__baseline(struct top_model *m)
{
	size_t i;

	for (i = 0; i < m->cnt; i++)
		m->rows[i]->faults_at_last_tick = m->rows[i]->fault_total;
	m->version++;
}

bool top_model__clock_shown(const struct top_model *m)
{
	return m->clock_rows;
}

/* ---- history ---------------------------------------------------------- */

static void hist_counters(const struct row *r, unsigned long long *cur)
{
	cur[HV_FAULTS] = r->fault_total;
	cur[HV_MSGS] = stream_sum(r->msgs);
	cur[HV_RUNS] = r->runs;
	cur[HV_RUN_NS] = r->run_ns;
}

/* History from at on (0: from the next sample), counters as they are now. */
static void hist_restart(struct hist *h, double at, const struct row *r)
{
	free(h->slot);
	memset(h, 0, sizeof(*h));
	h->start = h->last = at;
	hist_counters(r, h->seen);
	h->seen_stats = r->has_stats;
}

/* The slot of time t (CLOCK_MONOTONIC: never negative, so no floor()). */
static long long slot_of(double t, double len)
{
	return (long long)(t / len);
}

/* Make slot k the newest: the slots it passes over start empty. */
static void hist_advance(struct hist *h, long long k)
{
	long long i = k - h->newest > HIST_SLOTS ? k - HIST_SLOTS + 1 : h->newest + 1;

	for (; i <= k; i++)
		memset(&h->slot[i % HIST_SLOTS], 0, sizeof(h->slot[0]));
	if (k > h->newest)
		h->newest = k;
}

/* Share what a sample counted over [t0, t1] among the slots of len
 * seconds it covers, in proportion to the time it spends in each: the
 * counts of a refresh longer than a slot (a pause, -d 5) or that
 * straddles two slots are where their time was.
 */
static void hist_spread(struct hist *h, double len, double t0, double t1, const double *d, bool stats)
{
	long long k1 = slot_of(t1, len), k = slot_of(t0, len);
	double lo, hi;
	int v;

	if (t1 <= t0)
		return;
	if (k < k1 - HIST_SLOTS + 1)
		k = k1 - HIST_SLOTS + 1;
	hist_advance(h, k1);
	for (; k <= k1; k++) {
		struct hist_slot *s = &h->slot[k % HIST_SLOTS];

		lo = t0 > k * len ? t0 : k * len;
		hi = t1 < (k + 1) * len ? t1 : (k + 1) * len;
		if (hi <= lo)
			continue;
		for (v = 0; v < HV_CNT; v++)
			s->v[v] += d[v] * (hi - lo) / (t1 - t0);
		s->secs += hi - lo;
		if (stats)
			s->stats_secs += hi - lo;
	}
}

/* The ring comes with the first count: a program that never did
 * anything costs no slots (its graph is 0 wherever [start, last] covers).
 * A row not sampled since h->last did not move until prev, the model's
 * last sample: [last, prev] is zeros, and the counts since are [prev, now].
 */
static void hist_sample(struct hist *h, double len, double prev, double now,
			const unsigned long long *cur, bool stats)
{
	static const double zero[HV_CNT];
	double d[HV_CNT] = {};
	bool both = stats && h->seen_stats && cur[HV_RUNS] >= h->seen[HV_RUNS] &&
		    cur[HV_RUN_NS] >= h->seen[HV_RUN_NS];
	int v;

	if (h->last < prev) {
		if (h->slot)
			hist_spread(h, len, h->last, prev, zero, false);
		h->last = prev;
	}

	for (v = 0; v < HV_CNT; v++)
		if (cur[v] > h->seen[v] && (both || (v != HV_RUNS && v != HV_RUN_NS)))
			d[v] = cur[v] - h->seen[v];
	if (!h->slot && (both || d[HV_FAULTS] || d[HV_MSGS])) {
		h->slot = calloc(HIST_SLOTS, sizeof(*h->slot));
		if (h->slot) {
			h->newest = slot_of(h->start, len);
			hist_spread(h, len, h->start, h->last, zero, false);
		} else {
			h->start = now;		/* no room: what was is not shown */
		}
	}
	if (h->slot)
		hist_spread(h, len, h->last, now, d, both);
	memcpy(h->seen, cur, sizeof(h->seen));
	h->seen_stats = stats;
	h->last = now;
}

void top_model__row_changed(struct top_model *m, struct row *r)
{
	struct row **tmp;
	size_t cap;

	if (r->hist_changed || m->sample_all)
		return;
	if (m->changed_cnt == m->changed_cap) {
		cap = m->changed_cap ? 2 * m->changed_cap : 64;
		tmp = realloc(m->changed, cap * sizeof(*tmp));
		if (!tmp) {
			m->sample_all = true;
			return;
		}
		m->changed = tmp;
		m->changed_cap = cap;
	}
	m->changed[m->changed_cnt++] = r;
	r->hist_changed = true;
}

static void sample_row(struct top_model *m, struct row *r, double now)
{
	unsigned long long cur[HV_CNT];

	/* new since the last sample: its counts so far are since then
	 * (at the first sample: the journal's past, no history)
	 */
	if (!r->hist.start) {
		r->hist.start = r->hist.last = m->sampled ? m->sampled : now;
		if (!m->sampled)
			hist_counters(r, r->hist.seen);
	}
	hist_counters(r, cur);
	hist_sample(&r->hist, m->slot_sec, m->sampled, now, cur, r->has_stats);
	r->hist_changed = false;
}

/* Every row when the list changed (new rows start their history), at the
 * first sample, and with statistics on or just switched (an idle row's
 * runs count 0 only where a sample saw statistics on); else only the
 * rows that changed.
 */
void top_model__sample(struct top_model *m, double now)
{
	size_t i;

	if (!m->sampled)
		m->slot_sec = m->interval > HIST_SLOT_MIN ? m->interval : HIST_SLOT_MIN;
	if (!m->sampled || m->sample_all || m->stats || m->stats != m->sampled_stats) {
		for (i = 0; i < m->cnt; i++)
			sample_row(m, m->rows[i], now);
	} else {
		for (i = 0; i < m->changed_cnt; i++)
			sample_row(m, m->changed[i], now);
	}
	m->changed_cnt = 0;
	m->sample_all = false;
	m->sampled_stats = m->stats;
	m->sampled = now;
}

/* Slot k of h: the ring's, or what the time [start, last] implies when h
 * has no ring; either way, from h->last to the model's last sample (to)
 * the row was not sampled because nothing moved: covered, all zeros.
 */
static struct hist_slot hist_slot(const struct hist *h, double len, long long k, double to)
{
	struct hist_slot s = {};
	double lo, hi, from = h->slot ? h->last : h->start;

	if (k < 0 || !h->start)	/* before boot: a long window on a young machine */
		return s;
	if (h->slot && k <= h->newest && k > h->newest - HIST_SLOTS)
		s = h->slot[k % HIST_SLOTS];
	if (to < h->last)
		to = h->last;
	lo = from > k * len ? from : k * len;
	hi = to < (k + 1) * len ? to : (k + 1) * len;
	if (hi > lo)
		s.secs += hi - lo;
	return s;
}

static double graph_value(enum top_graph g, const struct hist_slot *s)
{
	switch (g) {
	case GRAPH_FAULTS:
		return s->secs > 0 ? s->v[HV_FAULTS] / s->secs : NAN;
	case GRAPH_MSGS:
		return s->secs > 0 ? s->v[HV_MSGS] / s->secs : NAN;
	case GRAPH_RUNS:
		return s->stats_secs > 0 ? s->v[HV_RUNS] / s->stats_secs : NAN;
	case GRAPH_NS_RUN:
		return s->stats_secs > 0 && s->v[HV_RUNS] > 0 ? s->v[HV_RUN_NS] / s->v[HV_RUNS] : NAN;
	default:
		return NAN;
	}
}

int top_model__graph(const struct top_model *m, const struct row *r, enum top_graph g,
		     int max, double *out, int *per)
{
	long long newest, k;
	int n, i, j, v;

	if (max < 1)
		return 0;
	*per = max >= HIST_SLOTS ? 1 : (HIST_SLOTS + max - 1) / max;
	n = HIST_SLOTS / *per;
	newest = m->sampled ? slot_of(m->sampled, m->slot_sec) : 0;
	for (i = 0; i < n; i++) {
		struct hist_slot sum = {};

		for (j = 0; j < *per && m->sampled; j++) {
			struct hist_slot s;

			k = newest - (long long)(n - 1 - i) * *per - j;
			s = hist_slot(&r->hist, m->slot_sec, k, m->sampled);
			for (v = 0; v < HV_CNT; v++)
				sum.v[v] += s.v[v];
			sum.secs += s.secs;
			sum.stats_secs += s.stats_secs;
		}
		out[i] = graph_value(g, &sum);
	}
	return n;
}

const char *top_graph_unit(enum top_graph g)
{
	static const char *const unit[GRAPH_CNT] = {
		[GRAPH_FAULTS] = "faults/s", [GRAPH_MSGS] = "messages/s",
		[GRAPH_RUNS] = "runs/s", [GRAPH_NS_RUN] = "ns/run",
	};

	return unit[g];
}

bool top_graph_is_stats(enum top_graph g)
{
	return g == GRAPH_RUNS || g == GRAPH_NS_RUN;
}

void top_model__clear_counts(struct top_model *m)
{
	size_t i;

	m->version++;
	for (i = 0; i < m->cnt; i++) {
		struct row *r = m->rows[i];

		memset(r->msgs, 0, sizeof(r->msgs));
		memset(r->faults, 0, sizeof(r->faults));
		r->fault_total = r->faults_at_last_tick = 0;
		r->rate = 0;
		r->has_last_fault = false;
		recent_free(r);
		hist_restart(&r->hist, m->sampled, r);
	}
	grouper__free(m->groups);
	m->groups = grouper__new();
	m->fault_total = m->msg_total = 0;
}

/* ---- columns ----------------------------------------------------------- */

static const char *const col_names[COL_CNT] = {
	[COL_ID] = "id", [COL_TYPE] = "type", [COL_NAME] = "name", [COL_OWNER] = "owner",
	[COL_OUT] = "out", [COL_ERR] = "err", [COL_FAULTS] = "faults", [COL_KINDS] = "kinds",
	[COL_RATE] = "rate", [COL_LAST] = "last", [COL_RUNS] = "run/s", [COL_NS_RUN] = "ns/run",
	[COL_CPU] = "cpu%", [COL_SAT] = "saturation",
};

bool top_col_is_stats(enum top_col c)
{
	return c == COL_RUNS || c == COL_NS_RUN || c == COL_CPU;
}

const char *top_col_name(enum top_col c)
{
	return col_names[c];
}

int top_col_from_name(const char *s)
{
	int c;

	for (c = 0; c < COL_CNT; c++)
		if (!strcasecmp(s, col_names[c]))
			return c;
	return -1;
}

bool row_losing(const struct row *r)
{
	int i = stream_idx(STREAM_STDERR);

	return r->has_streams && (stream_losing(r->has_drops, r->dropped_msgs[i], r->leaked[i],
						r->full_ns[i]) || r->refused[i] > 0);
}

unsigned long long row_refused(const struct row *r)
{
	unsigned long long n = 0;
	int i;

	for (i = 0; i < STREAM_CNT; i++)
		n += r->refused[i] > 0 ? r->refused[i] : 0;
	return n;
}


double row_saturation(const struct row *r)
{
	if (r->has_error_count)
		return r->error_count >= ERROR_COUNT_MAX ? 1 : (double)r->error_count / ERROR_COUNT_MAX;
	if (!r->has_streams)
		return 0;
	return (double)stream_fullest(r->capacity) / STREAM_MAX_CAPACITY;
}

const char *row_kinds(const struct row *r, char *buf, size_t len)
{
	static const char *const abbrev[FAULT_KIND_CNT] = {
		[FAULT_UNKNOWN] = "?", [FAULT_ARENA_READ] = "AR", [FAULT_ARENA_WRITE] = "AW",
		[FAULT_MAY_GOTO] = "MG", [FAULT_LOCK_DEADLOCK] = "DL", [FAULT_LOCK_TIMEOUT] = "LT",
	};
	size_t o = 0;
	int k;

	buf[0] = '\0';
	for (k = 1; k <= FAULT_KIND_CNT && o < len; k++) {
		int kind = k % FAULT_KIND_CNT;	/* unknown last */

		if (r->faults[kind])
			o += snprintf(buf + o, len - o, "%s%s:%llu", o ? " " : "", abbrev[kind],
				      r->faults[kind]);
	}
	return buf;
}

static void fmt_age(const struct top_model *m, const struct row *r, char *buf, size_t len)
{
	double age;

	if (!r->has_last_fault) {
		snprintf(buf, len, "-");
		return;
	}
	age = ts_diff(&m->now, &r->last_fault);
	if (age < 0)
		age = 0;
	if (age < 60)
		snprintf(buf, len, "%ds", (int)age);
	else if (age < 3600)
		snprintf(buf, len, "%dm", (int)(age / 60));
	else
		snprintf(buf, len, "%dh", (int)(age / 3600));
}

/* HH:MM:SS of a CLOCK_REALTIME ns, local time. */
static void ns_clock(long long ns, char *buf, size_t len)
{
	time_t t = ns / 1000000000LL;
	struct tm tm;

	if (!localtime_r(&t, &tm) || !strftime(buf, len, "%H:%M:%S", &tm))
		snprintf(buf, len, "?");
}

static void fmt_saturation(const struct row *r, char *buf, size_t len)
{
	int err = stream_idx(STREAM_STDERR);
	char at[16];

	if (r->has_error_count) {
		snprintf(buf, len, "%lld/%d%s", r->error_count, ERROR_COUNT_MAX,
			 r->error_count > ERROR_COUNT_MAX ? " hidden" : "");
	} else if (!r->has_streams) {
		snprintf(buf, len, "-");
	} else if (r->has_drops && r->dropped_msgs[err]) {
		snprintf(buf, len, "dropped %lld", r->dropped_msgs[err]);
	} else if (r->refused[err] > 0 && !r->has_drops) {
		/* as the fill wake counted them */
		snprintf(buf, len, "refused %lld", r->refused[err]);
	} else if (r->full_ns[err] && !r->has_drops) {
		/* found full at a drain: reports may have been refused then */
		ns_clock(r->full_ns[err], at, sizeof(at));
		snprintf(buf, len, "full at %s", at);
	} else if (r->leaked[err] && !r->has_drops) {
		snprintf(buf, len, "leaked %dB", r->leaked[err]);
	} else if (r->refused[stream_idx(STREAM_STDOUT)] > 0 && !r->has_drops) {
		snprintf(buf, len, "stdout refused %lld", r->refused[stream_idx(STREAM_STDOUT)]);
	} else if (r->full_ns[stream_idx(STREAM_STDOUT)] && !r->has_drops) {
		snprintf(buf, len, "stdout full");
	} else {
		snprintf(buf, len, "ok");
	}
}

void top_cell(const struct top_model *m, const struct row *r, enum top_col c, char *buf, size_t len)
{
	switch (c) {
	case COL_ID:
		snprintf(buf, len, "%u", r->ident.id);
		break;
	case COL_TYPE:
		snprintf(buf, len, "%s", prog_type_name(r->ident.type));
		break;
	case COL_NAME:
		term_escape(buf, len, r->ident.name, strlen(r->ident.name));
		break;
	case COL_OWNER:
		snprintf(buf, len, "%s", r->unloaded ? "(unloaded)" : r->owner);
		break;
	case COL_OUT:
		snprintf(buf, len, "%llu", r->msgs[stream_idx(STREAM_STDOUT)]);
		break;
	case COL_ERR:
		snprintf(buf, len, "%llu", r->msgs[stream_idx(STREAM_STDERR)]);
		break;
	case COL_FAULTS:
		snprintf(buf, len, "%llu", r->fault_total);
		break;
	case COL_KINDS:
		row_kinds(r, buf, len);
		break;
	case COL_RATE:
		snprintf(buf, len, "%.1f", r->rate);
		break;
	case COL_LAST:
		fmt_age(m, r, buf, len);
		break;
	case COL_RUNS:
		snprintf(buf, len, r->has_rates ? "%.0f" : "-", r->runs_per_s);
		break;
	case COL_NS_RUN:
		snprintf(buf, len, r->has_rates ? "%.0f" : "-", r->ns_per_run);
		break;
	case COL_CPU:
		snprintf(buf, len, r->has_rates ? "%.2f" : "-", r->cpu_pct);
		break;
	case COL_SAT:
		fmt_saturation(r, buf, len);
		break;
	default:
		buf[0] = '\0';
	}
}

/* ---- the view ---------------------------------------------------------- */

static enum top_col sort_col;
static bool sort_rev;

static int cmp_num(double a, double b)
{
	return a < b ? -1 : a > b;
}

static int cmp_view(const void *a, const void *b)
{
	const struct row *x = *(struct row *const *)a, *y = *(struct row *const *)b;
	int out = stream_idx(STREAM_STDOUT), err = stream_idx(STREAM_STDERR);
	int c = 0;

	switch (sort_col) {
	case COL_ID: c = cmp_num(x->ident.id, y->ident.id); break;
	case COL_TYPE: c = strcmp(prog_type_name(x->ident.type), prog_type_name(y->ident.type)); break;
	case COL_NAME: c = strcmp(x->ident.name, y->ident.name); break;
	case COL_OWNER: c = strcmp(x->owner, y->owner); break;
	case COL_OUT: c = cmp_num(x->msgs[out], y->msgs[out]); break;
	case COL_ERR: c = cmp_num(x->msgs[err], y->msgs[err]); break;
	case COL_FAULTS: case COL_KINDS: c = cmp_num(x->fault_total, y->fault_total); break;
	case COL_RATE: c = cmp_num(x->rate, y->rate); break;
	case COL_LAST:
		c = cmp_num(x->has_last_fault ? x->last_fault.tv_sec + x->last_fault.tv_nsec / 1e9 : 0,
			    y->has_last_fault ? y->last_fault.tv_sec + y->last_fault.tv_nsec / 1e9 : 0);
		break;
	case COL_RUNS: c = cmp_num(x->has_rates ? x->runs_per_s : -1, y->has_rates ? y->runs_per_s : -1); break;
	case COL_NS_RUN: c = cmp_num(x->has_rates ? x->ns_per_run : -1, y->has_rates ? y->ns_per_run : -1); break;
	case COL_CPU: c = cmp_num(x->has_rates ? x->cpu_pct : -1, y->has_rates ? y->cpu_pct : -1); break;
	case COL_SAT: c = cmp_num(row_saturation(x), row_saturation(y)); break;
	default: break;
	}
	/* numbers read best largest first; text and ids ascending */
	if (sort_col != COL_ID && sort_col != COL_TYPE && sort_col != COL_NAME && sort_col != COL_OWNER)
		c = -c;
	if (!c)
		c = cmp_num(x->ident.id, y->ident.id);
	return sort_rev ? -c : c;
}

static bool matches(const struct row *r, const char *filter)
{
	if (!filter || !*filter)
		return true;
	return strcasestr(r->ident.name, filter) || strcasestr(prog_type_name(r->ident.type), filter) ||
	       strcasestr(r->owner, filter);
}

size_t top_model__view(struct top_model *m, const char *filter, enum top_col sort,
		       bool reverse, struct row ***out)
{
	struct row **v = malloc((m->cnt + 1) * sizeof(*v));
	size_t i, n = 0;

	if (!v) {
		*out = NULL;
		return 0;
	}
	for (i = 0; i < m->cnt; i++)
		if (matches(m->rows[i], filter))
			v[n++] = m->rows[i];
	sort_col = sort;
	sort_rev = reverse;
	qsort(v, n, sizeof(*v), cmp_view);
	*out = v;
	return n;
}
