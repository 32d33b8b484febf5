// SPDX-License-Identifier: GPL-2.0
/* Prometheus metrics: see metrics.h. */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/socket.h>
#include <microhttpd.h>

#include "fault.h"
#include "main.h"
#include "metrics.h"
#include "output.h"

/* One program's series. Counters come from the journal's events; gauges
 * from the last snapshot, while the program is loaded.
 */
/* Events of a program another process read, mirrored (readers.h), by
 * that process's name: the first MREADERS_MAX - 1 names each have their
 * own series, later ones are counted under "(other)".
 */
#define MREADERS_MAX	8
struct mreader {
	char comm[TASK_COMM_LEN];
	unsigned long long n[STREAM_CNT];
};

struct mprog {
	__u32 id;
	char tag[PROG_TAG_HEX];
	char name[PROG_NAME_MAX];
	unsigned long long faults[FAULT_KIND_CNT];
	unsigned long long messages[STREAM_CNT];
	bool loaded, has_streams, has_error_count;
	long long accounted[STREAM_CNT], lost[STREAM_CNT], error_count;
	long long full_ns[STREAM_CNT];	/* a drain last found it full; 0: never */
	long long refused[STREAM_CNT];	/* jprog.refused, the latest seen; -1: none */
	bool losing;			/* stream_losing() on stderr */
	long long gone_ns;	/* CLOCK_MONOTONIC when first seen unloaded; 0 while loaded */
	struct mreader readers[MREADERS_MAX];
	int nreaders;
};

/* What the pipeline had read from a program by the last cycle. */
struct mread {
	__u32 id;
	__u64 load_time_ns;
	unsigned long long read[STREAM_CNT];
	int left[STREAM_CNT];		/* struct tracked's: leaked */
	long long full_ns[STREAM_CNT];
};

/* Upper bounds of the drain cycle histogram, in seconds, as exposed. */
static const char *const cycle_le[] = {
	"0.001", "0.0025", "0.005", "0.01", "0.025", "0.05", "0.1", "0.25", "0.5", "1.0",
	"2.5", "5.0", "10.0",
};
#define CYCLE_BUCKETS	(sizeof(cycle_le) / sizeof(cycle_le[0]))

struct mhist {
	unsigned long long count[CYCLE_BUCKETS + 1];	/* per bucket, the last +Inf */
	double sum;
};

/* What a scrape renders: a copy, built by record's thread. */
struct mview {
	struct mprog *progs;
	size_t cnt;
	size_t loaded;
	struct mhist cycle;
};

struct metrics {
	long long keep_ns;
	struct jread cursor;
	struct fault fault;		/* reparsed for each fault event */
	struct mprog **progs;		/* sorted by (id, tag, name) */
	size_t cnt, cap;
	struct mread *reads;		/* sorted by id */
	size_t read_cnt;
	size_t loaded;
	struct mhist cycle;
	long long now_ns;
	int fd;				/* the listening socket, until the server has it */
	struct MHD_Daemon *httpd;
	pthread_mutex_t lock;
	struct mview *view;		/* under lock */
};

static long long clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* ---- the address ------------------------------------------------------------ */

int metrics_addr_parse(const char *s, struct metrics_addr *out)
{
	const char *colon, *host = s, *end;
	char *num_end;
	long port;

	if (*s == '[') {
		host = s + 1;
		end = strchr(host, ']');
		if (!end || end[1] != ':')
			return -EINVAL;
		colon = end + 1;
	} else {
		colon = strrchr(s, ':');
		if (!colon || memchr(s, ':', colon - s))
			return -EINVAL;	/* an IPv6 address needs its brackets */
		end = colon;
	}
	if (end == host || (size_t)(end - host) >= sizeof(out->host))
		return -EINVAL;
	errno = 0;
	port = strtol(colon + 1, &num_end, 10);
	if (colon[1] < '0' || colon[1] > '9' || *num_end || errno || port < 1 || port > 65535)
		return -EINVAL;
	snprintf(out->host, sizeof(out->host), "%.*s", (int)(end - host), host);
	snprintf(out->port, sizeof(out->port), "%ld", port);
	return 0;
}

/* Resolved and listening now, so that a bad address fails before any read. */
static int listen_on(struct metrics *m, const struct metrics_addr *a)
{
	struct addrinfo hints = {
		.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
		.ai_flags = AI_PASSIVE | AI_NUMERICSERV,
	}, *res;
	int rc, one = 1, err;

	rc = getaddrinfo(a->host, a->port, &hints, &res);
	if (rc) {
		p_err("cannot resolve the metrics address '%s': %s", a->host,
		      rc == EAI_SYSTEM ? strerror(errno) : gai_strerror(rc));
		return -EADDRNOTAVAIL;
	}
	m->fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (m->fd < 0)
		goto err_free;
	/* a restarted record gets its port back from TIME_WAIT; a port some
	 * process listens on is still refused
	 */
	setsockopt(m->fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(m->fd, res->ai_addr, res->ai_addrlen) || listen(m->fd, 64))
		goto err_free;
	freeaddrinfo(res);
	return 0;
err_free:
	err = -errno;
	freeaddrinfo(res);
	p_err("cannot listen on %s%s%s:%s for metrics: %s", strchr(a->host, ':') ? "[" : "", a->host,
	      strchr(a->host, ':') ? "]" : "", a->port, strerror(-err));
	return err;
}

/* ---- the series ------------------------------------------------------------- */

static int key_cmp(const struct mprog *p, __u32 id, const char *tag, const char *name)
{
	int c;

	if (p->id != id)
		return p->id < id ? -1 : 1;
	c = strcmp(p->tag, tag);
	return c ? c : strcmp(p->name, name);
}

/* The index of the program, or where it goes (*found false). */
static size_t find(const struct metrics *m, const struct prog_ident *id, bool *found)
{
	size_t lo = 0, hi = m->cnt, mid;
	int c;

	*found = false;
	while (lo < hi) {
		mid = (lo + hi) / 2;
		c = key_cmp(m->progs[mid], id->id, id->tag, id->name);
		if (!c) {
			*found = true;
			return mid;
		}
		if (c < 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct mprog *get(struct metrics *m, const struct prog_ident *id, bool add)
{
	struct mprog **grown, *p;
	bool found;
	size_t i = find(m, id, &found);

	if (found || !add)
		return found ? m->progs[i] : NULL;
	if (m->cnt == m->cap) {
		grown = realloc(m->progs, (m->cap ? m->cap * 2 : 64) * sizeof(*grown));
		if (!grown)
			return NULL;
		m->progs = grown;
		m->cap = m->cap ? m->cap * 2 : 64;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->id = id->id;
	snprintf(p->tag, sizeof(p->tag), "%s", id->tag);
	snprintf(p->name, sizeof(p->name), "%s", id->name);
	p->gone_ns = m->now_ns;	/* until a snapshot has it */
	p->refused[0] = p->refused[1] = -1;
	memmove(m->progs + i + 1, m->progs + i, (m->cnt - i) * sizeof(*m->progs));
	m->progs[i] = p;
	m->cnt++;
	return p;
}

static struct mreader *mreader_of(struct mprog *p, const char *comm)
{
	struct mreader *r;
	int i;

	for (i = 0; i < p->nreaders; i++)
		if (!strcmp(p->readers[i].comm, comm))
			return &p->readers[i];
	if (p->nreaders == MREADERS_MAX)	/* "(other)" is the last */
		return &p->readers[MREADERS_MAX - 1];
	r = &p->readers[p->nreaders++];
	snprintf(r->comm, sizeof(r->comm), "%s", p->nreaders < MREADERS_MAX ? comm : "(other)");
	return r;
}

static void count_mirrored(struct mprog *p, const char *comm, enum stream s, unsigned long long n)
{
	mreader_of(p, comm)->n[stream_idx(s)] += n;
}

/* The journal's count of refused pushes, as of the row read last. */
static void count_refused(struct mprog *p, const struct jprog *jp)
{
	int s;

	for (s = 0; s < STREAM_CNT; s++)
		if (jp->refused[s] > p->refused[s])
			p->refused[s] = jp->refused[s];
}

static int count_event(const struct jevent *e, void *ctx)
{
	struct metrics *m = ctx;
	struct mprog *p = get(m, &e->prog->ident, true);
	int err;

	if (!p)
		return -ENOMEM;
	count_refused(p, e->prog);
	if (e->reader)
		count_mirrored(p, e->reader->comm, e->ev.stream, 1);
	if (e->ev.kind != EV_FAULT) {
		p->messages[stream_idx(e->ev.stream)]++;
		return 0;
	}
	/* the kind as report names it: the same parse of the same text */
	err = fault__reparse(e->ev.text, e->ev.len, !e->incomplete, &m->fault);
	if (err)
		return err;
	p->faults[m->fault.kind]++;
	return 0;
}

static enum fault_kind kind_named(const char *name)
{
	int k;

	for (k = 0; k < FAULT_KIND_CNT; k++)
		if (!strcmp(fault_kind_name(k), name))
			return k;
	return FAULT_UNKNOWN;
}

/* At start: counters from the journal's totals, which retention never
 * lowers. A program the journal saw unload keeps its series only for
 * what is left of keep_ns; one unloaded longer ago gets none.
 */
static int count_total(const struct jtotal *t, void *ctx)
{
	struct metrics *m = ctx;
	long long ago = t->unloaded_ns ? clock_ns(CLOCK_REALTIME) - t->unloaded_ns : 0;
	struct mprog *p;

	if (t->unloaded_ns && ago >= m->keep_ns)
		return 0;
	p = get(m, &t->prog->ident, true);
	if (!p)
		return -ENOMEM;
	if (t->unloaded_ns)
		p->gone_ns = m->now_ns - (ago > 0 ? ago : 0);
	count_refused(p, t->prog);
	if (t->reader)
		count_mirrored(p, t->reader, t->stream, t->n);
	else if (*t->fault_kind)
		p->faults[kind_named(t->fault_kind)] += t->n;
	else
		p->messages[stream_idx(t->stream)] += t->n;
	return 0;
}

static int reads_cmp(const void *a, const void *b)
{
	const struct mread *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct mread *reads_find(const struct mread *v, size_t cnt, __u32 id)
{
	struct mread key = { .id = id };

	return cnt ? bsearch(&key, v, cnt, sizeof(*v), reads_cmp) : NULL;	/* v may be NULL */
}

/* The pipeline's counts of bytes read, by program, as of this cycle. */
static struct mread *take_reads(struct pipeline *pl, size_t *cnt)
{
	struct tracked **t;
	struct mread *v;
	size_t n = pipeline__tracked(pl, &t), i;

	v = calloc(n ? n : 1, sizeof(*v));
	if (!v)
		return NULL;
	for (i = 0; i < n; i++) {
		v[i].id = t[i]->p.ident.id;
		v[i].load_time_ns = t[i]->p.ident.load_time_ns;
		memcpy(v[i].read, t[i]->bytes_read, sizeof(v[i].read));
		memcpy(v[i].left, t[i]->left, sizeof(v[i].left));
		memcpy(v[i].full_ns, t[i]->full_ns, sizeof(v[i].full_ns));
	}
	*cnt = n;
	return v;
}

/* Lost as top and report say it (stream_losing()): the drop counters
 * where the kernel has them, else what the pipeline's last read to the
 * end of the stream left (never bytes written since), and when a drain
 * last found the stream full.
 */
static void set_gauges(struct mprog *mp, const struct prog *p, const struct mread *cur)
{
	int s, e = stream_idx(STREAM_STDERR);

	mp->has_streams = p->has_streams;
	mp->has_error_count = p->has_error_count;
	mp->error_count = p->error_count;
	for (s = 0; s < STREAM_CNT; s++) {
		mp->accounted[s] = p->capacity[s];
		mp->lost[s] = p->has_drops ? p->dropped_bytes[s] : cur ? cur->left[s] : 0;
		if (cur && cur->full_ns[s] > mp->full_ns[s])
			mp->full_ns[s] = cur->full_ns[s];
	}
	mp->losing = p->has_streams && stream_losing(p->has_drops, p->dropped_msgs[e],
						     cur ? cur->left[e] : 0, mp->full_ns[e]);
}

static int mark_loaded(struct metrics *m, const struct prog_list *now, const struct mread *reads,
		       size_t read_cnt)
{
	const struct mread *cur;
	const struct prog *p;
	struct mprog *mp;
	bool active;
	size_t i;

	for (i = 0; i < m->cnt; i++)
		m->progs[i]->loaded = false;
	for (i = 0; i < now->cnt; i++) {
		p = &now->progs[i];
		/* idle programs have no series: only those that wrote or
		 * faulted, which bounds the scrape
		 */
		active = stream_accounted(p->capacity) > 0 || p->error_count > 0;
		mp = get(m, &p->ident, active);
		if (!mp && active)
			return -ENOMEM;
		if (!mp)
			continue;
		cur = reads_find(reads, read_cnt, p->ident.id);
		if (cur && cur->load_time_ns != p->ident.load_time_ns)
			cur = NULL;
		mp->loaded = true;
		mp->gone_ns = 0;
		set_gauges(mp, p, cur);
	}
	m->loaded = now->cnt;
	return 0;
}

/* Unloaded programs' series stay keep_ns, then leave. */
static void expire(struct metrics *m)
{
	size_t i, o = 0;

	for (i = 0; i < m->cnt; i++) {
		struct mprog *p = m->progs[i];

		if (!p->loaded && !p->gone_ns)
			p->gone_ns = m->now_ns;
		if (!p->loaded && m->now_ns - p->gone_ns >= m->keep_ns)
			free(p);
		else
			m->progs[o++] = p;
	}
	m->cnt = o;
}

/* ---- the view a scrape renders ---------------------------------------------- */

static void view_free(struct mview *v)
{
	if (v)
		free(v->progs);
	free(v);
}

static int publish(struct metrics *m)
{
	struct mview *v = calloc(1, sizeof(*v)), *old;
	size_t i;

	if (v)
		v->progs = calloc(m->cnt ? m->cnt : 1, sizeof(*v->progs));
	if (!v || !v->progs) {
		view_free(v);
		return -ENOMEM;
	}
	for (i = 0; i < m->cnt; i++)
		v->progs[i] = *m->progs[i];
	v->cnt = m->cnt;
	v->loaded = m->loaded;
	v->cycle = m->cycle;
	pthread_mutex_lock(&m->lock);
	old = m->view;
	m->view = v;
	pthread_mutex_unlock(&m->lock);
	view_free(old);
	return 0;
}

static int start_server(struct metrics *m);

int metrics__update(struct metrics *m, struct journal *j, const struct prog_list *now,
		    struct pipeline *pl, const struct timespec *started)
{
	struct mread *reads;
	size_t read_cnt, b;
	double secs;
	int err;

	m->now_ns = clock_ns(CLOCK_MONOTONIC);
	secs = (m->now_ns - (started->tv_sec * 1000000000LL + started->tv_nsec)) / 1e9;
	for (b = 0; b < CYCLE_BUCKETS && secs > strtod(cycle_le[b], NULL); b++)
		;
	m->cycle.count[b]++;
	m->cycle.sum += secs;
	err = journal__read(j, &m->cursor, count_event, m);
	if (err)
		return err;
	reads = take_reads(pl, &read_cnt);
	if (!reads)
		return -ENOMEM;
	err = mark_loaded(m, now, reads, read_cnt);
	free(m->reads);
	m->reads = reads;
	m->read_cnt = read_cnt;
	if (err)
		return err;
	expire(m);
	err = publish(m);
	/* scrapes wait in the listen backlog until the first cycle's view:
	 * never a bpfstderr_programs 0 of a record that has not looked yet
	 */
	return err ?: m->httpd ? 0 : start_server(m);
}

/* ---- rendering: the text format 0.0.4 and OpenMetrics 1.0.0 ------------------ */

enum mtype { M_COUNTER, M_GAUGE, M_HISTOGRAM, M_INFO };

/* HELP and TYPE. OpenMetrics names a counter's family without _total and
 * an info's without _info; the text format has no info type.
 */
static void family(FILE *f, bool om, const char *name, enum mtype t, const char *help)
{
	static const char *const types[] = { "counter", "gauge", "histogram", "info" };
	int len = strlen(name);

	if (om && t == M_COUNTER)
		len -= strlen("_total");
	else if (om && t == M_INFO)
		len -= strlen("_info");
	else if (t == M_INFO)
		t = M_GAUGE;
	fprintf(f, "# HELP %.*s %s\n# TYPE %.*s %s\n", len, name, help, len, name, types[t]);
}

static void sample(FILE *f, const char *name, const struct mprog *p, const char *label,
		   const char *value, long long v)
{
	fprintf(f, "%s{prog_id=\"%u\",prog_name=\"", name, p->id);
	fput_label_value(f, p->name, strlen(p->name));
	fprintf(f, "\",prog_tag=\"");
	fput_label_value(f, p->tag, strlen(p->tag));
	fprintf(f, "\"");
	if (label)
		fprintf(f, ",%s=\"%s\"", label, value);
	fprintf(f, "} %lld\n", v);
}

static void mirrored_samples(FILE *f, const struct mprog *p)
{
	const struct mreader *r;
	enum stream st;

	for (r = p->readers; r < p->readers + p->nreaders; r++)
		for_each_stream(st) {
			if (!r->n[stream_idx(st)])
				continue;
			fprintf(f, "bpfstderr_mirrored_total{prog_id=\"%u\",prog_name=\"", p->id);
			fput_label_value(f, p->name, strlen(p->name));
			fprintf(f, "\",prog_tag=\"");
			fput_label_value(f, p->tag, strlen(p->tag));
			fprintf(f, "\",stream=\"%s\",reader=\"", stream_name(st));
			fput_label_value(f, r->comm, strlen(r->comm));
			fprintf(f, "\"} %llu\n", r->n[stream_idx(st)]);
		}
}

static void render_counters(FILE *f, bool om, const struct mview *v)
{
	enum stream st;
	size_t i;
	int k;

	family(f, om, "bpfstderr_faults_total", M_COUNTER,
	       "Fault reports the journal ever took, by program and kind.");
	for (i = 0; i < v->cnt; i++)
		for (k = 0; k < FAULT_KIND_CNT; k++)
			sample(f, "bpfstderr_faults_total", &v->progs[i], "kind", fault_kind_name(k),
			       v->progs[i].faults[k]);
	family(f, om, "bpfstderr_messages_total", M_COUNTER,
	       "Messages the journal ever took, by program and stream.");
	for (i = 0; i < v->cnt; i++)
		for_each_stream(st)
			sample(f, "bpfstderr_messages_total", &v->progs[i], "stream",
			       stream_name(st), v->progs[i].messages[stream_idx(st)]);
	family(f, om, "bpfstderr_mirrored_total", M_COUNTER,
	       "Of those events, the ones another process read and bpfstderr mirrored, by program, "
	       "stream and that process's name.");
	for (i = 0; i < v->cnt; i++)
		mirrored_samples(f, &v->progs[i]);
	family(f, om, "bpfstderr_refused_total", M_COUNTER,
	       "Pushes (messages and fault reports) the kernel refused because the stream was full, "
	       "as the fill wake counted them, by program and stream; no sample where none was counted.");
	for (i = 0; i < v->cnt; i++)
		for_each_stream(st)
			if (v->progs[i].refused[stream_idx(st)] >= 0)
				sample(f, "bpfstderr_refused_total", &v->progs[i], "stream",
				       stream_name(st), v->progs[i].refused[stream_idx(st)]);
}

enum sgauge { SG_ACCOUNTED, SG_LOST, SG_FULL_AT };

static long long sgauge_value(const struct mprog *p, enum sgauge g, int s)
{
	switch (g) {
	case SG_LOST:
		return p->lost[s];
	case SG_FULL_AT:
		return p->full_ns[s] / 1000000000LL;
	default:
		return p->accounted[s];
	}
}

/* A gauge per stream of each loaded program the kernel accounts streams of. */
static void stream_gauge(FILE *f, const char *name, const struct mview *v, enum sgauge g)
{
	const struct mprog *p;
	enum stream st;
	size_t i;

	for (i = 0; i < v->cnt; i++) {
		p = &v->progs[i];
		if (!p->loaded || !p->has_streams)
			continue;
		for_each_stream(st)
			sample(f, name, p, "stream", stream_name(st), sgauge_value(p, g, stream_idx(st)));
	}
}

static size_t losing_count(const struct mview *v)
{
	size_t i, n = 0;

	for (i = 0; i < v->cnt; i++)
		n += v->progs[i].loaded && v->progs[i].losing;
	return n;
}

static void render_streams(FILE *f, bool om, const struct mview *v)
{
	size_t i;

	family(f, om, "bpfstderr_stream_accounted_bytes", M_GAUGE,
	       "Bytes the kernel accounts to a loaded program's stream (its limit is 100000).");
	stream_gauge(f, "bpfstderr_stream_accounted_bytes", v, SG_ACCOUNTED);
	family(f, om, "bpfstderr_stream_lost_bytes", M_GAUGE,
	       "Bytes accounted to a stream that a read to its end did not return: messages and fault reports the kernel dropped.");
	stream_gauge(f, "bpfstderr_stream_lost_bytes", v, SG_LOST);
	family(f, om, "bpfstderr_stream_full_at_drain_timestamp_seconds", M_GAUGE,
	       "When a drain last found the stream full (reports refused for lack of room); 0: never.");
	stream_gauge(f, "bpfstderr_stream_full_at_drain_timestamp_seconds", v, SG_FULL_AT);
	family(f, om, "bpfstderr_programs_losing_reports", M_GAUGE,
	       "Loaded programs losing fault reports, as top and report count them.");
	fprintf(f, "bpfstderr_programs_losing_reports %zu\n", losing_count(v));
	/* samples only on kernels that count errors (RFC series) */
	family(f, om, "bpfstderr_error_count", M_GAUGE,
	       "Faults the kernel counted for a program; reports stop after 64.");
	for (i = 0; i < v->cnt; i++)
		if (v->progs[i].loaded && v->progs[i].has_error_count)
			sample(f, "bpfstderr_error_count", &v->progs[i], NULL, NULL, v->progs[i].error_count);
}

static void render_cycle(FILE *f, bool om, const struct mhist *h)
{
	unsigned long long n = 0;
	size_t b;

	family(f, om, "bpfstderr_drain_cycle_seconds", M_HISTOGRAM,
	       "How long record's drain cycles take: enumerate, drain, commit.");
	for (b = 0; b <= CYCLE_BUCKETS; b++) {
		n += h->count[b];
		fprintf(f, "bpfstderr_drain_cycle_seconds_bucket{le=\"%s\"} %llu\n",
			b < CYCLE_BUCKETS ? cycle_le[b] : "+Inf", n);
	}
	fprintf(f, "bpfstderr_drain_cycle_seconds_sum %.9f\n", h->sum);
	fprintf(f, "bpfstderr_drain_cycle_seconds_count %llu\n", n);
}

static void render(FILE *f, bool om, const struct mview *v)
{
	family(f, om, "bpfstderr_build_info", M_INFO, "The bpfstderr that serves these metrics.");
	fprintf(f, "bpfstderr_build_info{version=\"%s\"} 1\n", BPFSTDERR_VERSION);
	family(f, om, "bpfstderr_programs", M_GAUGE, "BPF programs loaded.");
	fprintf(f, "bpfstderr_programs %zu\n", v->loaded);
	render_counters(f, om, v);
	render_streams(f, om, v);
	render_cycle(f, om, &v->cycle);
	if (om)
		fputs("# EOF\n", f);
}

/* ---- content negotiation: Accept's media ranges ------------------------------- */

/* What we serve, and how well a media range matches it (spec): 0 not
 * at all, then any type, any subtype of the type, the type and subtype,
 * those with the version served.
 */
struct offer {
	const char *type, *subtype, *version;
	int spec;
	double q;
};

static const char *skip_ows(const char *s, const char *end)
{
	while (s < end && (*s == ' ' || *s == '\t'))
		s++;
	return s;
}

/* [s, end) without surrounding blanks and quotes, equal to want (case
 * insensitive when fold).
 */
static bool token_is(const char *s, const char *end, const char *want, bool fold)
{
	size_t len;

	s = skip_ows(s, end);
	while (end > s && (end[-1] == ' ' || end[-1] == '\t'))
		end--;
	if (end - s >= 2 && *s == '"' && end[-1] == '"')
		s++, end--;
	len = end - s;
	return len == strlen(want) && !(fold ? strncasecmp(s, want, len) : strncmp(s, want, len));
}

/* One parameter "name=value" of a range: the version must be the offer's;
 * q is the range's weight (0 to 1, at most 3 decimals; else the range
 * counts for nothing).
 */
static int range_param(const char *s, const char *end, const struct offer *o, double *q)
{
	const char *eq = memchr(s, '=', end - s);
	char num[8], *num_end;

	if (!eq)
		return -EINVAL;
	if (token_is(s, eq, "q", true)) {
		eq = skip_ows(eq + 1, end);
		while (end > eq && (end[-1] == ' ' || end[-1] == '\t'))
			end--;
		if (end - eq < 1 || end - eq >= (long)sizeof(num) || (*eq != '0' && *eq != '1'))
			return -EINVAL;
		snprintf(num, sizeof(num), "%.*s", (int)(end - eq), eq);
		*q = strtod(num, &num_end);
		return *num_end || *q > 1 ? -EINVAL : 0;
	}
	if (token_is(s, eq, "version", true))
		return token_is(eq + 1, end, o->version, false) ? 1 : -ENOENT;
	return 0;
}

/* How well the range [s, end) matches the offer; its q in *q. */
static int range_match(const char *s, const char *end, const struct offer *o, double *q)
{
	const char *semi = memchr(s, ';', end - s) ?: end, *slash = memchr(s, '/', semi - s), *next;
	int spec, versioned = 0, rc;

	*q = 1;
	if (!slash)
		return 0;
	if (token_is(s, slash, "*", false) && token_is(slash + 1, semi, "*", false))
		spec = 1;
	else if (!token_is(s, slash, o->type, true))
		return 0;
	else if (token_is(slash + 1, semi, "*", false))
		spec = 2;
	else if (token_is(slash + 1, semi, o->subtype, true))
		spec = 3;
	else
		return 0;
	for (s = semi; s < end; s = next) {
		s++;
		next = memchr(s, ';', end - s) ?: end;
		rc = range_param(s, next, o, q);
		if (rc < 0)
			return 0;	/* another version, or a bad weight */
		versioned |= rc;
	}
	return spec + versioned;
}

/* The q of the offer's most specific matching range (RFC 9110 12.5.1). */
static void weigh(const char *accept, struct offer *o)
{
	const char *s = accept, *end, *comma;
	double q;
	int spec;

	o->spec = 0;
	o->q = 0;
	for (; *s; s = *comma ? comma + 1 : comma) {
		comma = strchr(s, ',') ?: s + strlen(s);
		end = comma;
		spec = range_match(s, end, o, &q);
		if (spec > o->spec) {
			o->spec = spec;
			o->q = q;
		}
	}
}

bool metrics_wants_openmetrics(const char *accept)
{
	struct offer om = { .type = "application", .subtype = "openmetrics-text", .version = "1.0.0" },
		     text = { .type = "text", .subtype = "plain", .version = "0.0.4" };

	if (!accept)
		return false;
	weigh(accept, &om);
	weigh(accept, &text);
	/* the text format unless OpenMetrics is preferred, or named where
	 * the text format is only a wildcard's
	 */
	return om.q > 0 && (om.q > text.q || (om.q == text.q && om.spec > text.spec));
}

/* ---- the server (its own thread) ---------------------------------------------- */

#define CT_TEXT		"text/plain; version=0.0.4; charset=utf-8"
#define CT_OPENMETRICS	"application/openmetrics-text; version=1.0.0; charset=utf-8"

static enum MHD_Result reply(struct MHD_Connection *c, unsigned int status, const char *type,
			     char *body, size_t len)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(len, body, MHD_RESPMEM_MUST_FREE);
	enum MHD_Result ret;

	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, type);
	if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

static enum MHD_Result reply_text(struct MHD_Connection *c, unsigned int status, const char *msg)
{
	char *body = strdup(msg);

	return body ? reply(c, status, "text/plain; charset=utf-8", body, strlen(body)) : MHD_NO;
}

static enum MHD_Result serve(void *cls, struct MHD_Connection *c, const char *url, const char *method,
			     const char *version, const char *upload, size_t *upload_size, void **req)
{
	struct metrics *m = cls;
	const char *accept;
	char *body = NULL;
	size_t len = 0;
	bool om;
	FILE *f;

	(void)version, (void)upload, (void)upload_size, (void)req;
	if (strcmp(method, MHD_HTTP_METHOD_GET) && strcmp(method, MHD_HTTP_METHOD_HEAD))
		return reply_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "only GET /metrics\n");
	if (strcmp(url, "/metrics"))
		return reply_text(c, MHD_HTTP_NOT_FOUND, "not found: the metrics are at /metrics\n");
	accept = MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_ACCEPT);
	om = metrics_wants_openmetrics(accept);
	f = open_memstream(&body, &len);
	if (!f)
		return MHD_NO;
	pthread_mutex_lock(&m->lock);
	render(f, om, m->view);
	pthread_mutex_unlock(&m->lock);
	if (fclose(f)) {
		free(body);
		return reply_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
	}
	return reply(c, MHD_HTTP_OK, om ? CT_OPENMETRICS : CT_TEXT, body, len);
}

/* The server's thread takes no signal: the ending signals must reach
 * record's thread, which sleeps until one comes. Its own thread polls
 * (epoll where there is one). A few clients must not take every
 * connection: each address gets METRICS_PER_IP_CONNECTIONS of
 * METRICS_CONNECTIONS, and a connection idle METRICS_IDLE_SECS goes (a
 * slow client's every byte restarts that clock: only the per-address
 * limit keeps it from the others).
 */
static int start_server(struct metrics *m)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	m->httpd = MHD_start_daemon(MHD_USE_AUTO_INTERNAL_THREAD, 0, NULL, NULL, serve, m,
				    MHD_OPTION_LISTEN_SOCKET, m->fd,
				    MHD_OPTION_CONNECTION_LIMIT, (unsigned int)METRICS_CONNECTIONS,
				    MHD_OPTION_PER_IP_CONNECTION_LIMIT, (unsigned int)METRICS_PER_IP_CONNECTIONS,
				    MHD_OPTION_CONNECTION_TIMEOUT, (unsigned int)METRICS_IDLE_SECS,
				    MHD_OPTION_END);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (!m->httpd) {
		p_err("cannot start the metrics server (libmicrohttpd)");
		return -EIO;
	}
	m->fd = -1;	/* the server's now: it closes it */
	return 0;
}

int metrics__open(struct metrics **out, const struct metrics_opts *o, struct journal *j)
{
	struct metrics *m = calloc(1, sizeof(*m));
	int err;

	*out = NULL;
	if (!m)
		return -ENOMEM;
	m->fd = -1;
	m->keep_ns = o->keep * 1000000000LL;
	m->now_ns = clock_ns(CLOCK_MONOTONIC);
	pthread_mutex_init(&m->lock, NULL);
	err = listen_on(m, &o->addr);
	/* counters start from every event the journal ever took */
	if (!err && (err = journal__totals(j, count_total, m, &m->cursor.after)))
		p_err("cannot count the journal's events for metrics: %s",
		      journal__error(j) ?: strerror(-err));
	if (err) {
		metrics__close(m);
		return err;
	}
	*out = m;
	return 0;
}

void metrics__close(struct metrics *m)
{
	size_t i;

	if (!m)
		return;
	if (m->httpd)
		MHD_stop_daemon(m->httpd);
	if (m->fd >= 0)
		close(m->fd);
	for (i = 0; i < m->cnt; i++)
		free(m->progs[i]);
	free(m->progs);
	free(m->reads);
	fault__fini(&m->fault);
	view_free(m->view);
	pthread_mutex_destroy(&m->lock);
	free(m);
}
