// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <sys/un.h>
/* CODE_FILE and the like would name this file, not the BPF program */
#define SD_JOURNAL_SUPPRESS_LOCATION
#include <systemd/sd-journal.h>

#include "journal.h"
#include "journald.h"
#include "main.h"
#include "output.h"
#include "pipeline.h"
#include "render.h"

#define SINK_NAME		"journald"
#define JOURNALD_SOCKET		"/run/systemd/journal/socket"
#define JOURNALD_VARLINK	"/run/systemd/journal/io.systemd.journal"
#define SYNC_TIMEOUT_S		10
#define ENTRY_FIELDS_MAX	24
/* How far back from the systemd journal's end to look for our last event
 * (past warnings, which carry no seq).
 */
#define RECONCILE_LOOKBACK	4096

/* MESSAGE_ID: what kind of entry, for journalctl MESSAGE_ID=... */
#define MSGID_FAULT	"a77146d7d3a24473ad018bd478856d38"
#define MSGID_MESSAGE	"d55eb863806c4cc1a7c69153f01d212b"
#define MSGID_LOSING	"9192b49fcfe54d1dbc13d11b203f04f4"
#define MSGID_PRUNED	"97e03b024faf426aa4f91be641462149"

enum {
	PRIO_ERR	= 3,	/* a fault */
	PRIO_WARNING	= 4,	/* a program losing reports, events pruned unsent */
	PRIO_INFO	= 6,	/* a message */
};

/* A program warned about: the streams it lost bytes of. */
struct warned {
	__u32 id;
	__u64 load_time_ns;
	unsigned int streams;	/* STREAM_MASK() */
};

struct journald {
	struct journal *j;
	char jid[17];			/* the journal's id, hex */
	long long sent;			/* the last seq journald took */
	long long kept;			/* the last seq kept in the journal */
	bool reconciled;		/* with the systemd journal, since start */
	sd_journal *sj;			/* until the first warnings are checked */
	bool away;			/* journald could not be reached: said so */
	int send_err;
	struct warned *warned;		/* sorted by id */
	size_t nwarned;
};

/* ---- entries ---------------------------------------------------------------- */

/* One entry's fields written into one buffer: "NAME=value" each, the
 * value escaped wherever its bytes come from outside.
 */
struct entry {
	FILE *f;
	char *buf;
	size_t len;
	long start[ENTRY_FIELDS_MAX];
	int n;
};

static int entry_begin(struct entry *e)
{
	memset(e, 0, sizeof(*e));
	e->f = open_memstream(&e->buf, &e->len);
	return e->f ? 0 : -ENOMEM;
}

/* Starts field name; its value is what is written to e->f next. */
static FILE *field(struct entry *e, const char *name)
{
	if (e->n < ENTRY_FIELDS_MAX) {
		fflush(e->f);
		e->start[e->n++] = e->len;
	}
	fprintf(e->f, "%s=", name);
	return e->f;
}

static void entry_free(struct entry *e)
{
	if (e->f)
		fclose(e->f);
	free(e->buf);
}

/* 0: journald took it; else -errno, and nothing was sent. */
static int entry_send(struct entry *e)
{
	struct iovec iov[ENTRY_FIELDS_MAX];
	bool bad = ferror(e->f);
	int i, err;

	err = fclose(e->f) || bad ? -ENOMEM : 0;
	e->f = NULL;
	if (err)
		return err;
	for (i = 0; i < e->n; i++) {
		iov[i].iov_base = e->buf + e->start[i];
		iov[i].iov_len = (i + 1 < e->n ? (size_t)e->start[i + 1] : e->len) - e->start[i];
	}
	return sd_journal_sendv(iov, e->n);
}

/* "42:name stderr: ", as follow shows an event. */
static void prog_prefix(FILE *f, const struct prog_ident *id, enum stream s)
{
	fprintf(f, "%u:", id->id);
	fput_term(f, id->name, strlen(id->name));
	fprintf(f, " %s: ", stream_name(s));
}

static void prog_fields(struct journald *js, struct entry *e, const struct prog_ident *id,
			enum stream s, const char *msgid, int prio)
{
	fprintf(field(e, "SYSLOG_IDENTIFIER"), "bpfstderr");
	fprintf(field(e, "MESSAGE_ID"), "%s", msgid);
	fprintf(field(e, "PRIORITY"), "%d", prio);
	fprintf(field(e, "BPF_PROG_ID"), "%u", id->id);
	fput_term(field(e, "BPF_PROG_NAME"), id->name, strlen(id->name));
	fprintf(field(e, "BPF_PROG_TAG"), "%s", id->tag);
	fprintf(field(e, "BPF_STREAM"), "%s", stream_name(s));
	fprintf(field(e, "BPFSTDERR_JOURNAL_ID"), "%s", js->jid);
}

/* ---- faults ------------------------------------------------------------------ */

struct site_want {
	const char *tag;
	unsigned long long off;
	const char *file;
	int line;
	char buf[PATH_MAX];
};

static int site_match(const char *tag, unsigned long long off, const struct sym_loc *loc, void *ctx)
{
	struct site_want *w = ctx;

	if (strcmp(tag, w->tag) || off != w->off || !loc->sites[0].file)
		return 0;
	snprintf(w->buf, sizeof(w->buf), "%s", loc->sites[0].file);
	w->file = w->buf;
	w->line = loc->sites[0].line;
	return 1;	/* found: stop */
}

/* The innermost BPF frame's source line: as symbolized when it was
 * drained (the journal's sites), else as the report printed it.
 */
static int fault_site(struct journald *js, const struct jevent *e, const struct fault *f,
		      struct site_want *w)
{
	const struct frame *fr = NULL;
	int i, err;

	for (i = 0; i < f->frame_cnt && !fr; i++)
		if (f->frames[i].is_bpf)
			fr = &f->frames[i];
	if (!fr)
		return 0;
	w->tag = fr->tag;
	w->off = fr->off;
	err = journal__sites(js->j, e->prog->row, site_match, w);
	if (err < 0)
		return err;
	if (!w->file && fr->src_file) {
		w->file = fr->src_file;
		w->line = fr->src_line;
	}
	return 0;
}

/* The report, line by line, each escaped. */
static void report_lines(FILE *f, const char *text, size_t len)
{
	const char *end = text + len, *nl;

	while (len && (text[len - 1] == '\n'))
		end = text + --len;
	for (; text < end; text = nl + 1) {
		nl = memchr(text, '\n', end - text) ?: end;
		fput_term(f, text, nl - text);
		if (nl < end)
			fputc('\n', f);
	}
}

static int fault_fields(struct journald *js, struct entry *e, const struct jevent *je)
{
	struct site_want w = {};
	struct fault f;
	FILE *m;
	int err;

	err = fault__parse(je->ev.text, je->ev.len, !je->incomplete, &f);
	if (err)
		return err;
	err = fault_site(js, je, &f, &w);
	if (!err) {
		m = field(e, "MESSAGE");
		prog_prefix(m, &je->prog->ident, je->ev.stream);
		fputs("FAULT ", m);
		print_fault_summary(m, &f);
		fprintf(field(e, "BPF_FAULT_KIND"), "%s", fault_kind_name(f.kind));
		if (w.file) {
			fput_term(field(e, "BPF_FAULT_SITE"), w.file, strlen(w.file));
			fprintf(e->f, ":%d", w.line);
		}
		report_lines(field(e, "BPF_FAULT_REPORT"), je->ev.text, je->ev.len);
	}
	fault__fini(&f);
	return err;
}

/* ---- events ------------------------------------------------------------------ */

/* Returned by the read callback to stop: journald did not take an entry. */
#define STOP_AWAY	1

static void say_away(struct journald *js, int err)
{
	if (js->away)
		return;
	js->away = true;
	p_err("journald does not take entries (%s: %s): events stay in the journal and are sent "
	      "when it is back", JOURNALD_SOCKET, strerror(-err));
}

static void say_back(struct journald *js)
{
	if (!js->away)
		return;
	js->away = false;
	p_err("journald takes entries again: sending what it missed");
}

static void message_fields(struct entry *e, const struct jevent *je)
{
	prog_prefix(field(e, "MESSAGE"), &je->prog->ident, je->ev.stream);
	fput_term(e->f, je->ev.text, je->ev.len);
	if (je->ev.partial)
		fprintf(field(e, "BPF_MESSAGE_PARTIAL"), "1");
}

/* The journal's retention removed events journald never took (it was
 * away): said in the systemd journal too, so that the fleet sees it.
 */
static int send_pruned(struct journald *js, long long cnt)
{
	struct entry e;
	int err = entry_begin(&e);

	if (err)
		return err;
	fprintf(field(&e, "SYSLOG_IDENTIFIER"), "bpfstderr");
	fprintf(field(&e, "MESSAGE_ID"), "%s", MSGID_PRUNED);
	fprintf(field(&e, "PRIORITY"), "%d", PRIO_WARNING);
	fprintf(field(&e, "MESSAGE"), "%lld events left bpfstderr's journal (retention) before "
		"journald could take them", cnt);
	fprintf(field(&e, "BPF_LOST_EVENTS"), "%lld", cnt);
	fprintf(field(&e, "BPFSTDERR_JOURNAL_ID"), "%s", js->jid);
	err = entry_send(&e);
	entry_free(&e);
	if (!err)
		p_err("%lld events left the journal (retention) before journald could take them", cnt);
	return err;
}

/* journald did not take an entry: STOP_AWAY, and why is kept */
static int away(struct journald *js, int err)
{
	if (!err || err == -ENOMEM)
		return err;
	js->send_err = err;
	return STOP_AWAY;
}

static int send_event(const struct jevent *je, void *ctx)
{
	bool fault = je->ev.kind == EV_FAULT;
	struct journald *js = ctx;
	struct entry e;
	int err;

	if (je->seq > js->sent + 1) {
		err = away(js, send_pruned(js, je->seq - js->sent - 1));
		if (err)
			return err;
		js->sent = je->seq - 1;	/* said once */
	}
	err = entry_begin(&e);
	if (err)
		return err;
	prog_fields(js, &e, &je->prog->ident, je->ev.stream, fault ? MSGID_FAULT : MSGID_MESSAGE,
		    fault ? PRIO_ERR : PRIO_INFO);
	fprintf(field(&e, "BPFSTDERR_SEQ"), "%lld", je->seq);
	fprintf(field(&e, "BPFSTDERR_DRAINED_USEC"), "%lld",
		(long long)je->ts.tv_sec * 1000000 + je->ts.tv_nsec / 1000);
	if (je->reader) {	/* mirrored: printable (readers.h) */
		fprintf(field(&e, "BPF_READER_PID"), "%u", je->reader->pid);
		fprintf(field(&e, "BPF_READER_COMM"), "%s", je->reader->comm);
	}
	if (fault)
		err = fault_fields(js, &e, je);
	else
		message_fields(&e, je);
	err = err ?: away(js, entry_send(&e));
	entry_free(&e);
	if (err)
		return err;
	js->sent = je->seq;
	say_back(js);
	return 0;
}

static int send_events(struct journald *js)
{
	struct jread r = { .after = js->sent };
	int err = journal__read(js->j, &r, send_event, js);

	if (err == STOP_AWAY) {
		say_away(js, js->send_err);
		return STOP_AWAY;
	}
	return err;
}

/* ---- programs losing reports ------------------------------------------------------ */

/* Sent before this recorder started (found in the systemd journal)? */
static bool losing_sent(struct journald *js, const struct prog_ident *id, enum stream s)
{
	char m[5][64 + PROG_TAG_HEX];
	int i;

	if (!js->sj)
		return false;
	snprintf(m[0], sizeof(m[0]), "MESSAGE_ID=%s", MSGID_LOSING);
	snprintf(m[1], sizeof(m[1]), "BPFSTDERR_JOURNAL_ID=%s", js->jid);
	snprintf(m[2], sizeof(m[2]), "BPF_PROG_ID=%u", id->id);
	snprintf(m[3], sizeof(m[3]), "BPF_PROG_TAG=%s", id->tag);
	snprintf(m[4], sizeof(m[4]), "BPF_STREAM=%s", stream_name(s));
	sd_journal_flush_matches(js->sj);
	for (i = 0; i < 5; i++)
		if (sd_journal_add_match(js->sj, m[i], 0) < 0)
			return false;
	/* ids are not reused until they wrap: with the tag, one program */
	return sd_journal_seek_head(js->sj) >= 0 && sd_journal_next(js->sj) > 0;
}

static int send_losing(struct journald *js, const struct tracked *t, enum stream s)
{
	int left = t->left[stream_idx(s)];
	struct entry e;
	FILE *m;
	int err;

	if (losing_sent(js, &t->p.ident, s))
		return 0;
	err = entry_begin(&e);
	if (err)
		return err;
	prog_fields(js, &e, &t->p.ident, s, MSGID_LOSING, PRIO_WARNING);
	m = field(&e, "MESSAGE");
	prog_prefix(m, &t->p.ident, s);
	fprintf(m, "losing %s: %d bytes accounted that no read returned (the kernel dropped them)",
		s == STREAM_STDERR ? "fault reports and messages" : "messages", left);
	fprintf(field(&e, "BPF_LOST_BYTES"), "%d", left);
	err = entry_send(&e);
	entry_free(&e);
	return err;
}

/* The streams of t newly losing, sent; *mask grows with what was sent. */
static int check_losing(struct journald *js, const struct tracked *t, unsigned int *mask)
{
	enum stream s;
	int err;

	for_each_stream(s) {
		if (t->left[stream_idx(s)] <= 0 || (*mask & STREAM_MASK(s)))
			continue;
		err = js->away ? -EAGAIN : send_losing(js, t, s);
		if (err == -ENOMEM)
			return err;
		if (err) {
			say_away(js, err);
			continue;	/* next time */
		}
		say_back(js);
		*mask |= STREAM_MASK(s);
	}
	return 0;
}

/* Walks the tracked programs and the warned ones, both sorted by id: the
 * warned set keeps only programs still tracked.
 */
static int send_losses(struct journald *js, struct pipeline *pl)
{
	struct warned *next, *w = js->warned, *wend = js->warned + js->nwarned;
	struct tracked **t;
	size_t n, i, o = 0;
	unsigned int mask;
	int err = 0;

	n = pipeline__tracked(pl, &t);
	next = calloc(n ? n : 1, sizeof(*next));
	if (!next)
		return -ENOMEM;
	for (i = 0; i < n && !err; i++) {
		while (w < wend && w->id < t[i]->p.ident.id)
			w++;
		mask = w < wend && w->id == t[i]->p.ident.id &&
		       w->load_time_ns == t[i]->p.ident.load_time_ns ? w->streams : 0;
		err = check_losing(js, t[i], &mask);
		if (mask)
			next[o++] = (struct warned){ t[i]->p.ident.id, t[i]->p.ident.load_time_ns, mask };
	}
	free(js->warned);
	js->warned = next;
	js->nwarned = o;
	return err;
}

/* ---- starting again ------------------------------------------------------------- */

/* Can an entry be sent now? 0, or -errno (absent, nobody listening). */
static int reachable(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNALD_SOCKET };
	int fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0), err = 0;

	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)))
		err = -errno;
	close(fd);
	return err;
}

/* Asks journald to write out what it was sent before (the call that
 * `journalctl --sync` makes, over varlink): what a killed recorder sent
 * is then in its files. Best effort: a journald without it is read as
 * its files are.
 */
static void sync_journald(void)
{
	static const char req[] = "{\"method\":\"io.systemd.Journal.Synchronize\",\"parameters\":{}}";
	struct sockaddr_un sa = { .sun_family = AF_UNIX, .sun_path = JOURNALD_VARLINK };
	struct timeval tv = { .tv_sec = SYNC_TIMEOUT_S };
	char buf[512];
	ssize_t n;
	int fd;

	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	/* a varlink message ends with a NUL byte, the reply too */
	if (!connect(fd, (struct sockaddr *)&sa, sizeof(sa)) &&
	    send(fd, req, sizeof(req), MSG_NOSIGNAL) == (ssize_t)sizeof(req))
		while ((n = read(fd, buf, sizeof(buf))) > 0 && !memchr(buf, '\0', n))
			;
	close(fd);
}

static long long entry_seq(sd_journal *sj)
{
	const void *d;
	size_t len;
	char num[32];

	if (sd_journal_get_data(sj, "BPFSTDERR_SEQ", &d, &len) < 0 || len <= 14 || len - 14 >= sizeof(num))
		return -1;
	snprintf(num, sizeof(num), "%.*s", (int)(len - 14), (const char *)d + 14);
	return strtoll(num, NULL, 10);
}

/* The last event of this journal in the systemd journal, or -1. */
static long long last_sent(sd_journal *sj, const char *jid)
{
	char m[64];
	long long seq = -1;
	int i;

	snprintf(m, sizeof(m), "BPFSTDERR_JOURNAL_ID=%s", jid);
	if (sd_journal_add_match(sj, m, 0) < 0 || sd_journal_seek_tail(sj) < 0)
		return -1;
	for (i = 0; i < RECONCILE_LOOKBACK && seq < 0 && sd_journal_previous(sj) > 0; i++)
		seq = entry_seq(sj);
	return seq;
}

/* A recorder killed after sending and before keeping its cursor: the
 * systemd journal says what it sent. STOP_AWAY while journald is away.
 */
static int reconcile(struct journald *js)
{
	long long seq;
	int err = reachable();

	if (err) {
		say_away(js, err);
		return STOP_AWAY;
	}
	sync_journald();
	err = sd_journal_open(&js->sj, SD_JOURNAL_LOCAL_ONLY);
	if (err < 0) {
		p_err("cannot read the systemd journal (%s): entries sent just before a crash "
		      "may be sent again", strerror(-err));
		js->sj = NULL;
	}
	seq = js->sj ? last_sent(js->sj, js->jid) : -1;
	if (seq > js->sent)
		js->sent = seq;
	js->reconciled = true;
	say_back(js);
	return 0;
}

/* ---- the sink --------------------------------------------------------------------- */

int journald__open(struct journald **out, struct journal *j)
{
	struct journald *js = calloc(1, sizeof(*js));
	int err;

	*out = js;
	if (!js)
		return -ENOMEM;
	js->j = j;
	snprintf(js->jid, sizeof(js->jid), "%016llx", (unsigned long long)journal__id(j));
	err = journal__sink_get(j, SINK_NAME, &js->sent);
	if (err == -ENOENT) {
		/* the first run: from now on, not the history */
		js->sent = journal__last_seq(j);
		err = journal__sink_set(j, SINK_NAME, js->sent);
	}
	js->kept = js->sent;
	return err;
}

/* Another writer holding the lock, a full file system: kept next cycle
 * (a crash until then is what the systemd journal's entries are for).
 */
static int keep_cursor(struct journald *js)
{
	int err;

	if (js->sent == js->kept)
		return 0;
	err = journal__sink_set(js->j, SINK_NAME, js->sent);
	if (!err)
		js->kept = js->sent;
	return err == -EBUSY || err == -ENOSPC ? 0 : err;
}

int journald__send(struct journald *js, struct pipeline *pl)
{
	int err = 0;

	if (!js)
		return 0;
	if (!js->reconciled)
		err = reconcile(js);
	err = err ?: send_events(js);
	if (!err && pl) {
		err = send_losses(js, pl);
		/* what was sent before the start is checked once */
		if (!err && !js->away && js->sj) {
			sd_journal_close(js->sj);
			js->sj = NULL;
		}
	}
	if (err == STOP_AWAY)
		err = 0;
	return err ?: keep_cursor(js);
}

void journald__close(struct journald *js)
{
	if (!js)
		return;
	if (js->sj)
		sd_journal_close(js->sj);
	free(js->warned);
	free(js);
}
