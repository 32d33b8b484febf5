// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>

#include "fill.h"
#include "pipeline.h"
#include "rescue.h"

/* Programs whose recorded BPF frame locations the symbolizer has learned,
 * and up to which event.
 */
struct learned_row {
	long long row, upto_seq;
};

/* Bytes of one stream read in this cycle, or read and never committed:
 * a failed commit keeps them, and the next transaction feeds them again
 * before anything new is read.
 */
struct kept {
	struct kept *next;
	struct jprog p;
	enum stream stream;
	char *buf;
	size_t len, cap;
};

/* Returned by the drain callback to stop reading: no room in the journal. */
#define STOP_NO_ROOM	1

/* A stream found empty is read again after this at the latest (stream_dry()). */
#define DRY_MAX_AGE_SEC	30
/* The journal's generation (journal__generation()) is trusted to mean
 * "nothing new" once it has not moved for JOURNAL_SETTLE_SEC (a write is
 * told before its commit shows: the fsync between them may be slow) and
 * was looked at less than JOURNAL_RECHECK_SEC ago (a commit slower than
 * that is seen then).
 */
#define JOURNAL_SETTLE_SEC	5
#define JOURNAL_RECHECK_SEC	30

/* What another process's read returned (readers.h), queued from the
 * mirror ring until it is kept. It names its program whole, so a program
 * unloaded since is still known (mirror_feed()).
 */
struct mirq {
	struct mirq *next;
	struct prog prog;		/* identity and names only */
	enum stream stream;
	struct reader_id who;
	size_t missed;
	bool gap;
	bool fed;
	int waits;
	size_t len;
	char buf[];
};

/* Mirrored bytes queued at most (a journal locked for long): past it,
 * pieces are dropped and said once.
 */
#define MIRQ_MAX	(16 << 20)

struct pipeline {
	struct pipeline_ops ops;
	struct drainer *drainer;
	struct tracked **t;		/* sorted by id */
	__u32 *ids;			/* t[i]'s id: a lookup touches no tracked */
	size_t cnt;
	unsigned long long gen;		/* of the last list drained (progs__refresh) */
	struct tracked **gone;		/* forgotten this cycle */
	size_t ngone;
	const struct prog_list *now;	/* during a cycle */
	struct jread cursor;
	struct learned_row *learned;
	size_t nlearned;
	int err;			/* first sink error */
	struct kept *log;		/* journal: this cycle's reads, then the kept ones */
	struct kept *spare;		/* a committed log's largest buffer, for the next */
	long long room;			/* journal: bytes the file system can still take */
	time_t mono_sec;		/* CLOCK_MONOTONIC at the cycle's start */
	bool no_room, said_no_room;	/* journal: reads stopped for want of room */
	bool said_locked;		/* journal: another process's lock stops reads */
	bool said_no_rights;		/* journal: its file system gives no read rights */
	size_t nclaimed;		/* tracked streams whose read right is ours */
	/* journal: its generation and since when (CLOCK_MONOTONIC s) */
	unsigned long long jgen;
	time_t jgen_at;
	/* journal: its shared state (held tails, programs it has as loaded)
	 * needed nothing with the list of gen quiet_gen (0: not known) when
	 * looked at, at quiet_at, until quiet_until (CLOCK_REALTIME ns: the
	 * first held tail due); next_due: that tail, while listing them
	 */
	unsigned long long quiet_gen;
	time_t quiet_at;
	long long quiet_until, next_due;
	time_t read_at;			/* journal: the last read of its events */
	bool behind;			/* journal: the sink said later (PIPE_SINK_LATER) */
	struct mirq *mq, **mq_tail;	/* mirrored reads to keep, in order */
	size_t mq_bytes;
	/* during a feed of mirrored bytes: who read them (NULL: ours) */
	const struct reader_id *feeding;
	bool mirroring;			/* journal: this process holds the mirror right */
	/* refusals the fill wake counted (keep_refusals()): the counts
	 * already in the journal, by program id (sorted), and those this
	 * cycle's transaction adds; the fill's refused_seq they are of, and
	 * the list the map was last pruned with
	 */
	struct refusals *rkept, *rnew;
	size_t nrkept, nrnew;
	unsigned long long rseq, rseq_new;
	bool rseq_known, rkeeper, rwalked;
	bool rpending;			/* counts of a program not listed yet */
	unsigned long long rpruned_gen;
	bool unseen_due;		/* journal: a look at the accounting is due */
	unsigned long long mirror_dropped, mirror_lost;	/* pieces, reads: said */
	int sink_err;			/* no journal: the sink failed; not shown since */
};

static long long ns_of(const struct timespec *ts)
{
	return ts->tv_sec * 1000000000LL + ts->tv_nsec;
}

struct refusals {
	__u32 id;
	unsigned long long n[STREAM_CNT];
};

struct jprog jprog_of(const struct prog *p)
{
	struct jprog j = { .ident = p->ident, .refused = { -1, -1 } };

	memcpy(j.kname, p->kname, sizeof(j.kname));
	return j;
}

/* ---- events, as they come out of reassembly ---------------------------- */

/* Where each BPF frame is, while the program is still there to ask: what
 * the line info says (the kernel's own line stays in the event's text).
 * A frame whose programs differ keeps no site: they are asked again. A
 * site already written is not asked for (a storm repeats its frames).
 */
static int record_sites(struct tracked *t, const struct fault *f)
{
	struct journal *j = t->pl->ops.journal;
	const struct frame *fr;
	struct sym_loc loc;
	int i, err = 0;

	for (i = 0; i < f->frame_cnt && !err; i++) {
		fr = &f->frames[i];
		if (journal__site_written(j, t->p.row, fr->tag, fr->off) ||
		    symbolizer__bpf_line_info(t->pl->ops.sym, &t->p.ident, fr, &loc) ||
		    loc.candidates > 1)
			continue;
		err = journal__add_site(j, t->p.row, fr->tag, fr->off, &loc);
	}
	return err;
}

static int kept_add(struct pipeline *pl, struct tracked *t, enum stream s, const void *buf, size_t len);

/* No journal: once the sink failed (a reader gone, output cut short by a
 * signal), the event it failed on and every later one of the bytes read
 * are kept (pipeline__keep() spills them), not dropped. Reassembly goes
 * on to the read's end, so that what it holds after is the stream's.
 */
static int show(struct tracked *t, const struct pipe_event *pe)
{
	struct pipeline *pl = t->pl;
	const struct event *ev = pe->ev;
	int err;

	if (pl->feeding)	/* another reader's: not ours to keep */
		return pl->ops.sink(pe, pl->ops.ctx);
	err = pl->sink_err ? 0 : pl->ops.sink(pe, pl->ops.ctx);
	if (!err && !pl->sink_err)
		return 0;
	if (!pl->sink_err)
		pl->sink_err = err;
	err = kept_add(pl, t, ev->stream, ev->text, ev->len);
	if (!err && ev->kind == EV_MESSAGE && !ev->partial)
		err = kept_add(pl, t, ev->stream, "\n", 1);
	return err;
}

static int on_event(const struct event *ev, void *ctx)
{
	struct tracked *t = ctx;
	struct pipeline *pl = t->pl;
	struct pipe_event pe = { .ev = ev, .prog = &t->p, .reader = pl->feeding };
	int err;

	clock_gettime(CLOCK_REALTIME, &pe.ts);
	if (ev->fault && pl->ops.sym)	/* faults and stack dumps */
		symbolizer__warm(pl->ops.sym, ev->fault);
	if (!pl->ops.journal)
		return show(t, &pe);
	err = journal__add_event(pl->ops.journal, t->p.row, &pe.ts, ev, pl->feeding);
	if (!err && ev->fault && pl->ops.sym)
		err = record_sites(t, ev->fault);
	return err;
}

/* ---- tracked programs ------------------------------------------------------ */

static void tracked_free(struct tracked *t)
{
	int i;

	for (i = 0; i < STREAM_CNT; i++)
		reasm__free(t->reasm[i]);
	free(t);
}

static struct tracked *tracked_new(struct pipeline *pl, const struct jprog *p)
{
	struct tracked *t = calloc(1, sizeof(*t));
	enum stream s;

	if (!t)
		return NULL;
	t->pl = pl;
	t->p = *p;
	if (pl->ops.journal)
		return t;	/* the journal holds the reassembly state */
	for_each_stream(s) {
		t->reasm[stream_idx(s)] = reasm__new(s, on_event, t);
		if (!t->reasm[stream_idx(s)])
			goto err_free;
	}
	return t;
err_free:
	tracked_free(t);
	return NULL;
}

static int tracked_flush(struct tracked *t)
{
	int i, err = 0;

	for (i = 0; i < STREAM_CNT; i++)
		if (t->reasm[i])
			err = err ?: reasm__flush(t->reasm[i]);
	return err;
}

bool pipeline_select_all(const struct prog *p, void *ctx)
{
	(void)p;
	(void)ctx;
	return true;
}

int pipeline__new(struct pipeline **out, struct drainer *d, const struct pipeline_ops *ops)
{
	struct pipeline *pl = calloc(1, sizeof(*pl));

	if (!pl)
		return -ENOMEM;
	pl->ops = *ops;
	pl->drainer = d;
	pl->mq_tail = &pl->mq;
	pl->cursor.since_ns = ops->since_ns;
	pl->cursor.until_ns = ops->until_ns;
	if (ops->journal && !ops->history)
		pl->cursor.after = journal__last_seq(ops->journal);
	else if (ops->journal && ops->since_ns)
		pl->cursor.after = journal__cursor_at(ops->journal, ops->since_ns);
	*out = pl;
	return 0;
}


/* The drainer's read-ahead (rescue.h), or NULL: every rescue__ call
 * takes that.
 */
static struct rescue *rescue_of(const struct pipeline *pl)
{
	return drainer__rescue(pl->drainer);
}

/* ---- read rights (journal.h) ------------------------------------------------ */

static void release(struct pipeline *pl, struct tracked *t, enum stream s)
{
	journal__release(pl->ops.journal, t->p.ident.id, s);
	t->claimed[stream_idx(s)] = false;
	pl->nclaimed--;
}

static void say(struct pipeline *pl, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Said once: without rights, bytes held past a commit could reach the
 * journal out of order, so nothing is read ahead.
 */
static void say_no_rights(struct pipeline *pl)
{
	int why = journal__no_rights(pl->ops.journal);

	if (!why || pl->said_no_rights)
		return;
	say(pl, "journal %s: its file system gives no read rights (%s: %s): each stream is read "
	    "inside a drain's transaction only, nothing is read ahead, and a storm may fill "
	    "streams between drains", journal__path(pl->ops.journal),
	    why == -ENOLCK ? "ENOLCK" : "no OFD locks", strerror(-why));
	pl->said_no_rights = true;
}

/* A stream is read only with its right: those of the streams in mask are
 * claimed; another process holds the right of the ones left out of what
 * is returned, and the rescue leaves them to it.
 */
static unsigned int claim_rights(struct pipeline *pl, struct tracked *t, unsigned int mask)
{
	enum rescue_claim c;
	enum stream s;
	int i, rc;

	if (!pl->ops.journal)
		return mask;
	for_each_stream(s) {
		i = stream_idx(s);
		if (!(mask & STREAM_MASK(s)) || t->claimed[i])
			continue;
		rc = journal__claim(pl->ops.journal, t->p.ident.id, s);
		if (rc == -EBUSY)
			mask &= ~STREAM_MASK(s);
		t->claimed[i] = rc > 0;
		pl->nclaimed += rc > 0;
		if (!rc)
			say_no_rights(pl);
		c = rc == -EBUSY ? RESCUE_LEAVE : rc > 0 ? RESCUE_READ : RESCUE_ASK;
		if (rescue__claim(rescue_of(pl), t->p.ident.id, s, c)) {
			/* no memory to say so: the rescue asks, as by default */
		}
	}
	return mask;
}

/* Nothing read is waiting for a commit: the rights of the streams the
 * rescue reads no more go, for other processes to read them.
 */
static void release_rights(struct pipeline *pl)
{
	struct tracked *t;
	enum stream s;
	size_t i;

	for (i = 0; i < pl->cnt && pl->nclaimed; i++) {
		t = pl->t[i];
		for_each_stream(s)
			if (t->claimed[stream_idx(s)] &&
			    !rescue__keep(rescue_of(pl), t->p.ident.id, s))
				release(pl, t, s);
	}
}

void pipeline__let_go(struct pipeline *pl)
{
	struct tracked *t;
	enum stream s;
	size_t i;

	for (i = 0; i < pl->cnt && pl->nclaimed && !pl->log; i++) {
		t = pl->t[i];
		for_each_stream(s) {
			if (!t->claimed[stream_idx(s)] ||
			    rescue__holds(rescue_of(pl), t->p.ident.id, STREAM_MASK(s)))
				continue;
			rescue__claim(rescue_of(pl), t->p.ident.id, s, RESCUE_ASK);
			release(pl, t, s);
		}
	}
}

/* A program forgotten: its rights go, and the rescue forgets it. */
static void release_all(struct pipeline *pl, struct tracked *t)
{
	enum stream s;

	if (!pl->ops.journal)
		return;
	for_each_stream(s) {
		/* the rescue stops reading before the right goes */
		rescue__claim(rescue_of(pl), t->p.ident.id, s, RESCUE_ASK);
		if (t->claimed[stream_idx(s)])
			release(pl, t, s);
	}
}

/* Direct: what it holds is emitted now. The journal's sweep does that for
 * journal pipelines, in the same cycle. Its gone callback comes after.
 */
static void forget(struct pipeline *pl, struct tracked *t)
{
	struct tracked **tmp;
	int err = tracked_flush(t);

	release_all(pl, t);
	if (err && !pl->err)
		pl->err = err;
	tmp = realloc(pl->gone, (pl->ngone + 1) * sizeof(*tmp));
	if (!tmp) {
		tracked_free(t);
		return;
	}
	pl->gone = tmp;
	pl->gone[pl->ngone++] = t;
}

static void call_gone(struct pipeline *pl)
{
	size_t i;

	for (i = 0; i < pl->ngone; i++) {
		if (pl->ops.gone)
			pl->ops.gone(pl->gone[i], pl->ops.ctx);
		tracked_free(pl->gone[i]);
	}
	pl->ngone = 0;
}

/* ---- bytes read and not committed ---------------------------------------- */

/* A kept buffer: from malloc while small (a cycle of many programs with a
 * message each costs no syscall), a mapping from KEPT_MAPPED on, which
 * grows by mremap(2): page tables move, not the bytes of a storm.
 */
#define KEPT_MAPPED	(1 << 20)

static void kept_buf_free(char *buf, size_t cap)
{
	if (cap >= KEPT_MAPPED)
		munmap(buf, cap);
	else
		free(buf);
}

static int kept_grow(struct kept *k, size_t need)
{
	size_t cap = need * 2;
	char *tmp;

	if (cap < KEPT_MAPPED) {
		tmp = realloc(k->buf, cap);
		if (!tmp)
			return -ENOMEM;
	} else if (k->cap >= KEPT_MAPPED) {
		cap = (cap + KEPT_MAPPED - 1) & ~(size_t)(KEPT_MAPPED - 1);
		tmp = mremap(k->buf, k->cap, cap, MREMAP_MAYMOVE);
		if (tmp == MAP_FAILED)
			return -ENOMEM;
	} else {
		cap = (cap + KEPT_MAPPED - 1) & ~(size_t)(KEPT_MAPPED - 1);
		tmp = mmap(NULL, cap, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (tmp == MAP_FAILED)
			return -ENOMEM;
		if (k->len)
			memcpy(tmp, k->buf, k->len);
		free(k->buf);
	}
	k->buf = tmp;
	k->cap = cap;
	return 0;
}

static void kept_free(struct kept *k)
{
	struct kept *next;

	for (; k; k = next) {
		next = k->next;
		kept_buf_free(k->buf, k->cap);
		free(k);
	}
}

static size_t kept_bytes(const struct kept *k)
{
	size_t n = 0;

	for (; k; k = k->next)
		n += k->len;
	return n;
}

/* After a commit: the log goes, but its largest buffer (up to KEPT_SPARE_MAX)
 * stays for the next cycle's, so that a storm's cycles neither grow a
 * buffer by copies nor fault its pages in again.
 */
#define KEPT_SPARE_MAX	(8 << 20)

static void kept_recycle(struct pipeline *pl)
{
	struct kept **best = NULL, **k;

	for (k = &pl->log; *k; k = &(*k)->next)
		if ((*k)->cap <= KEPT_SPARE_MAX && (!best || (*k)->cap > (*best)->cap))
			best = k;
	if (best && (!pl->spare || (*best)->cap > pl->spare->cap)) {
		kept_free(pl->spare);
		pl->spare = *best;
		*best = pl->spare->next;
		pl->spare->next = NULL;
	}
	kept_free(pl->log);
	pl->log = NULL;
}

/* In the order read: a stream's kept bytes come before its new ones. */
static struct kept *kept_entry(struct pipeline *pl, struct tracked *t, enum stream s)
{
	struct kept **tail = &pl->log, *k;

	if (t->log[stream_idx(s)])
		return t->log[stream_idx(s)];
	k = pl->spare ?: calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	pl->spare = NULL;
	k->len = 0;
	k->p = t->p;
	k->p.row = 0;
	k->stream = s;
	while (*tail)
		tail = &(*tail)->next;
	*tail = k;
	t->log[stream_idx(s)] = k;
	return k;
}

static int kept_add(struct pipeline *pl, struct tracked *t, enum stream s, const void *buf, size_t len)
{
	struct kept *k = kept_entry(pl, t, s);

	if (!k)
		return -ENOMEM;
	if (k->len + len > k->cap && kept_grow(k, k->len + len))
		return -ENOMEM;
	if (!len)
		return 0;
	memcpy(k->buf + k->len, buf, len);
	k->len += len;
	return 0;
}

static void say(struct pipeline *pl, const char *fmt, ...)
{
	char msg[PATH_MAX + 512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (pl->ops.notice)
		pl->ops.notice(msg, pl->ops.ctx);
	else
		fprintf(stderr, "bpfstderr: %s\n", msg);
}

static int write_all(int fd, const void *buf, size_t len)
{
	ssize_t n;

	for (; len; buf = (const char *)buf + n, len -= n) {
		n = write(fd, buf, len);
		if (n < 0 && errno == EINTR)
			n = 0;
		else if (n < 0)
			return -errno;
	}
	return 0;
}

/* One header line per stream, then its bytes exactly as read. */
static int spill_to(int fd, const struct kept *k)
{
	char head[512];
	int err = 0;

	for (; k && !err; k = k->next) {
		snprintf(head, sizeof(head), "bpfstderr spill: prog %u tag %s load_time_ns %llu stream %s "
			 "bytes %zu\n", k->p.ident.id, k->p.ident.tag, (unsigned long long)k->p.ident.load_time_ns,
			 stream_name(k->stream), k->len);
		err = write_all(fd, head, strlen(head)) ?: write_all(fd, k->buf, k->len) ?:
		      write_all(fd, "\n", 1);
	}
	return err;
}

/* Beside the journal, else in $TMPDIR or /tmp (the journal's file system
 * may be the full one): 0600, as the journal.
 */
static int spill_file(struct pipeline *pl, char *path, size_t len)
{
	const char *jpath = pl->ops.journal ? journal__path(pl->ops.journal) : NULL;
	const char *slash = jpath ? strrchr(jpath, '/') : NULL;
	const char *tmp = getenv("TMPDIR") ?: "/tmp";
	int i, fd, dlen;

	for (i = jpath ? 0 : 1; i < 2; i++) {
		dlen = i ? (int)strlen(tmp) : slash ? (int)(slash - jpath) : 1;
		snprintf(path, len, "%.*s/bpfstderr-spill-%d-%lld", dlen, i ? tmp : slash ? jpath : ".",
			 (int)getpid(), (long long)time(NULL));
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0)
			continue;
		if (!spill_to(fd, pl->log) && !fsync(fd)) {
			if (!close(fd))
				return 0;
		} else {
			close(fd);
		}
		unlink(path);
	}
	return -EIO;
}

/* The journal could not keep what was read: it goes to a spill file, or
 * failing that to stderr, and the journal's error says which.
 */
static int spill(struct pipeline *pl, int err)
{
	size_t n = kept_bytes(pl->log);
	char path[PATH_MAX + 64];

	if (!pl->log)
		return err;
	if (!spill_file(pl, path, sizeof(path))) {
		journal__add_error(pl->ops.journal, "; the %zu bytes read and not kept are in %s", n, path);
	} else {
		journal__add_error(pl->ops.journal, "; no spill file could be written: the %zu bytes read "
				   "and not kept are on stderr above", n);
		fprintf(stderr, "bpfstderr: the journal could not keep these bytes:\n");
		spill_to(STDERR_FILENO, pl->log);
	}
	kept_free(pl->log);
	pl->log = NULL;
	return err;
}

/* ---- draining ------------------------------------------------------------------ */

/* Journal: carry on from the bytes the last drainer, any process, held. */
static int stream_open(struct tracked *t, enum stream s)
{
	struct journal *j = t->pl->ops.journal;
	int i = stream_idx(s), err;
	void *held;
	size_t len;

	err = t->p.row ? 0 : journal__prog(j, &t->p);
	err = err ?: journal__pending_get(j, t->p.row, s, &held, &len);
	if (err)
		return err;
	t->reasm[i] = reasm__new(s, on_event, t);
	t->held_before[i] = len;
	err = !t->reasm[i] ? -ENOMEM : len ? reasm__feed(t->reasm[i], held, len) : 0;
	free(held);
	return err;
}

/* Journal: what is held now goes back for the next drainer. */
static int stream_close(struct tracked *t, enum stream s, unsigned long long got)
{
	struct journal *j = t->pl->ops.journal;
	int i = stream_idx(s), err;
	struct timespec now;
	const void *held;
	size_t len;

	reasm__held(t->reasm[i], &held, &len);
	clock_gettime(CLOCK_REALTIME, &now);
	err = len || t->held_before[i] ? journal__pending_put(j, t->p.row, s, held, len, &now) : 0;
	if (!err && got)
		err = journal__add_read(j, t->p.row, s, got);
	reasm__free(t->reasm[i]);
	t->reasm[i] = NULL;
	return err;
}

/* Journal: a read's bytes, also logged until the commit. */
static int take_bytes(struct tracked *t, enum stream s, const void *buf, size_t len)
{
	int err;

	/* logged first: read is read, and a stream_open() that fails
	 * (the journal full, an I/O error) must find the bytes kept
	 */
	err = kept_add(t->pl, t, s, buf, len);
	if (!err && !t->reasm[stream_idx(s)])
		err = stream_open(t, s);
	return err ?: reasm__feed(t->reasm[stream_idx(s)], buf, len);
}

/* Is there room for one more read? Asked before every read. */
static bool room_for_read(struct pipeline *pl)
{
	return pl->room >= 2LL * STREAM_READ_BUF;
}

static int on_bytes(__u32 id, enum stream s, const void *buf, size_t len, void *ctx)
{
	struct tracked *t = ctx;
	struct pipeline *pl = t->pl;
	int err;

	(void)id;
	t->bytes_read[stream_idx(s)] += len;
	if (!pl->ops.journal)	/* no more reads once the sink failed */
		return reasm__feed(t->reasm[stream_idx(s)], buf, len) ?: pl->sink_err;
	err = take_bytes(t, s, buf, len);
	pl->room -= 2LL * len;
	if (!err && !room_for_read(pl)) {
		pl->no_room = true;
		return STOP_NO_ROOM;	/* the rest stays in the kernel */
	}
	return err;
}

/* Bytes accounted and nothing to read: capacity that a failed write
 * charged and never gave back (design.md: leaked). A read that found a
 * stream empty is not repeated while the list is the same gen, that is
 * while the watch says every program's accounting is what the walk (or
 * check) just before that read saw: a read takes off the accounting what
 * it returns and a write adds at least what it leaves readable, so with
 * the accounting unchanged since the empty read nothing is readable now.
 * A write of the same size as another reader's read leaves nothing
 * either. What it cannot tell: another reader (outside the journal's
 * transaction) that drained the stream between that check and our read,
 * then writes of as many bytes; those are read DRY_MAX_AGE_SEC after the
 * empty read at the latest. Walking every cycle (no watch,
 * BPFSTDERR_FULL_WALK) gives a new gen every cycle: every stream with
 * bytes accounted is read every cycle. Only streams that never gave this
 * process a byte count: all that the injected test shim serves comes
 * with no change to the kernel's accounting.
 */
static bool stream_dry(const struct pipeline *pl, const struct tracked *t, enum stream s)
{
	int i = stream_idx(s);

	return t && !t->yielded[i] && t->dry_gen[i] && t->dry_gen[i] == pl->now->gen &&
	       pl->mono_sec - t->dry_at[i] < DRY_MAX_AGE_SEC;
}

/* Only streams with bytes accounted and not found empty at this
 * accounting are read: idle programs cost nothing. Kernels without
 * accounting (RFC) are read every cycle.
 */
static unsigned int streams_to_read(const struct pipeline *pl, const struct prog *p,
				    const struct tracked *t)
{
	unsigned int mask = 0;
	enum stream s;

	if (!p->has_streams)
		return pl->ops.streams;
	for_each_stream(s)
		if ((p->capacity[stream_idx(s)] > 0 && !stream_dry(pl, t, s)) ||
		    rescue__holds(rescue_of(pl), p->ident.id, STREAM_MASK(s)))
			mask |= STREAM_MASK(s);
	return mask & pl->ops.streams;
}

/* After a read of the streams in mask that ran to its end (err 0): which
 * were found empty (before is bytes_read before it). Lists without a gen
 * mark none.
 */
static void mark_dry(struct pipeline *pl, struct tracked *t, const struct prog *p, unsigned int mask,
		     const unsigned long long *before, int err)
{
	enum stream s;
	int i;

	for_each_stream(s) {
		i = stream_idx(s);
		if (!(mask & STREAM_MASK(s)))
			continue;
		t->dry_gen[i] = 0;
		if (t->bytes_read[i] != before[i])
			t->yielded[i] = true;
		else if (!err && p->has_streams && pl->now->gen) {
			t->dry_gen[i] = pl->now->gen;
			t->dry_at[i] = pl->mono_sec;
		}
	}
}

/* Bytes written after the snapshot may be read too: what is left is at
 * least 0.
 */
static int left_after(int capacity, unsigned long long read)
{
	return (unsigned long long)capacity > read ? capacity - (int)read : 0;
}

/* A stream full before the read (stream_full()) may have refused
 * reports: what comes off it now never says so. Kept with the time, and
 * in the journal, for every view and process. A read runs to the end of
 * the stream: each drain that finds it full found a fill of its own.
 * With the rescue reading ahead, drains seldom see a full stream: pushes
 * the kernel refused since the last drain (counted by the fill wake) say
 * it was.
 */
static int note_full(struct pipeline *pl, struct tracked *t, const struct prog *p)
{
	struct journal *j = pl->ops.journal;
	unsigned long long refused;
	struct timespec now;
	enum stream s;
	int i, err = 0;

	clock_gettime(CLOCK_REALTIME, &now);
	for_each_stream(s) {
		i = stream_idx(s);
		refused = drainer__refused(pl->drainer, t->p.ident.id, s);
		t->full[i] = (p->has_streams && stream_full(p->capacity[i])) || refused > t->refused[i];
		t->refused[i] = refused;
		if (!t->full[i])
			continue;
		t->full_ns[i] = now.tv_sec * 1000000000LL + now.tv_nsec;
		t->p.full_ns[i] = t->full_ns[i];	/* what sinks see without a journal */
		if (j && !err)
			err = (t->p.row ? 0 : journal__prog(j, &t->p)) ?:
			      journal__set_full(j, t->p.row, s, t->full_ns[i]);
	}
	return err;
}

/* Pushes refused since the last drain of a stream whose right is kept:
 * the rescue read what came, so no drain may find anything left to read,
 * and the stream was full all the same (note_full()).
 */
static bool refused_new(struct pipeline *pl, const struct tracked *t)
{
	enum stream s;
	int i;

	for_each_stream(s) {
		i = stream_idx(s);
		if (t->claimed[i] && drainer__refused(pl->drainer, t->p.ident.id, s) > t->refused[i])
			return true;
	}
	return false;
}

/* Inside the transaction, after the drains: a stream whose right is kept
 * and that had refusals no drain saw (nothing was left to read) was full.
 */
static int note_refusals(struct pipeline *pl)
{
	struct tracked *t;
	size_t i;
	int err = 0;

	for (i = 0; i < pl->cnt && pl->nclaimed && !err; i++) {
		t = pl->t[i];
		if (refused_new(pl, t)) {
			struct prog p = { .ident = t->p.ident };	/* refusals only */

			err = note_full(pl, t, &p);
		}
	}
	return err;
}

/* ---- unseen readers (pipeline.h) ------------------------------------------------ */

/* Inferred only where tracing is refused (no readers) and no read-ahead
 * thread reads between two looks.
 */
static bool unseen_infers(struct pipeline *pl)
{
	return !pl->ops.readers && !rescue_of(pl);
}

/* Bytes bpfstderr read of stream s so far: this process's, or with a
 * journal (inside a transaction: nobody else reads now) every drainer's.
 */
static int unseen_reads(struct pipeline *pl, struct tracked *t, enum stream s,
			unsigned long long *bytes)
{
	int err;

	if (!pl->ops.journal) {
		*bytes = t->bytes_read[stream_idx(s)];
		return 0;
	}
	err = t->p.row ? 0 : journal__prog(pl->ops.journal, &t->p);
	return err ?: journal__reads(pl->ops.journal, t->p.row, s, bytes);
}

static void say_unseen(struct pipeline *pl, const struct tracked *t, enum stream s,
		       unsigned long long bytes)
{
	say(pl, "program %u (%s) %s: %llu bytes left it without a read of bpfstderr's: "
	    "another process reads it, which this kernel does not let bpfstderr see "
	    "(tracing refused: no name, no content); left to it while it reads; "
	    "--steal reads it anyway", t->p.ident.id, t->p.ident.name, stream_name(s), bytes);
}

/* A look at the accounting before a drain (inside its transaction): what
 * left a stream since the last look, beyond bpfstderr's reads, another
 * process read.
 */
static int unseen_look(struct pipeline *pl, struct tracked *t, const struct prog *p)
{
	unsigned long long j;
	struct unseen *u;
	enum stream s;
	long long gone;
	int err;

	if (!unseen_infers(pl) || !p->has_streams)
		return 0;
	for_each_stream(s) {
		u = &t->unseen[stream_idx(s)];
		if (u->has_cap && !u->cap && !p->capacity[stream_idx(s)])
			continue;	/* idle: the last look stands */
		err = unseen_reads(pl, t, s, &j);
		if (err)
			return err;
		gone = (long long)u->cap - p->capacity[stream_idx(s)] - (long long)(j - u->base);
		if (u->has_cap && u->has_base && gone > 0) {
			u->bytes += gone;
			u->at = pl->mono_sec;
			if (!u->left && !pl->ops.steal)
				say_unseen(pl, t, s, u->bytes);
			u->left = !pl->ops.steal;
		}
		u->cap = p->capacity[stream_idx(s)];
		u->has_cap = true;
		/* without a journal nothing of ours was read since the look */
		u->base = pl->ops.journal ? u->end : j;
		u->has_base = !pl->ops.journal || u->has_end;
		u->obs = j;
		u->has_end = false;
	}
	return 0;
}

/* After the drain: what bpfstderr had read by its end. With a journal,
 * looks come only inside transactions: bytes accounted at this look make
 * the next cycle one, so that it looks again.
 */
static void unseen_drained(struct pipeline *pl, struct tracked *t, const unsigned long long *before)
{
	struct unseen *u;
	int i;

	for (i = 0; i < STREAM_CNT; i++) {
		u = &t->unseen[i];
		if (!u->has_cap)
			continue;
		u->end = u->obs + (t->bytes_read[i] - before[i]);
		u->has_end = true;
		if (u->cap > 0)
			pl->unseen_due = true;
	}
}

/* A failed commit: the journal's counts are not what was read. */
static void unseen_forget(struct pipeline *pl)
{
	size_t i;

	for (i = 0; i < pl->cnt; i++)
		memset(pl->t[i]->unseen, 0, sizeof(pl->t[i]->unseen));
}

/* A stream an unseen reader took bytes of within the last
 * READERS_LIVE_NS is left to it; then read again.
 */
static unsigned int leave_to_unseen(struct pipeline *pl, struct tracked *t, unsigned int mask)
{
	struct unseen *u;
	enum stream s;

	if (!unseen_infers(pl) || pl->ops.steal)
		return mask;
	for_each_stream(s) {
		u = &t->unseen[stream_idx(s)];
		if (!u->left)
			continue;
		if ((pl->mono_sec - u->at) * 1000000000LL < READERS_LIVE_NS) {
			mask &= ~STREAM_MASK(s);
			continue;
		}
		say(pl, "program %u (%s) %s: nothing left it unread for %lld s: read again",
		    t->p.ident.id, t->p.ident.name, stream_name(s), READERS_LIVE_NS / 1000000000LL);
		u->left = false;
	}
	return mask;
}

static void say_left(struct pipeline *pl, const struct tracked *t, enum stream s,
		     const struct reader *rd)
{
	char who[READER_NAME_MAX];

	say(pl, "program %u (%s) %s: read by %s too: left to it, which reads what it would "
	    "without bpfstderr; what it reads is shown here, marked with its name (mirrored); "
	    "--steal reads it anyway", t->p.ident.id, t->p.ident.name, stream_name(s),
	    reader_name(&rd->id, who, sizeof(who)));
}

/* Streams another live process reads (readers.h) are left to it: not
 * read, and not read ahead; said once per reader. What the rescue read
 * of one before the other reader was seen is still handed out.
 */
static unsigned int leave_to_others(struct pipeline *pl, struct tracked *t, unsigned int mask)
{
	__u32 id = t->p.ident.id;
	struct reader rd;
	enum stream s;
	int i;

	if (!pl->ops.readers || pl->ops.steal)
		return mask;
	for_each_stream(s) {
		i = stream_idx(s);
		if (!(mask & STREAM_MASK(s)))
			continue;
		if (!readers__live(pl->ops.readers, id, s, &rd)) {
			if (t->left_to[i])	/* gone: ours again */
				rescue__claim(rescue_of(pl), id, s, RESCUE_ASK);
			t->left_to[i] = 0;
			continue;
		}
		if (t->left_to[i] != rd.id.pid + 1)
			say_left(pl, t, s, &rd);
		t->left_to[i] = rd.id.pid + 1;
		rescue__claim(rescue_of(pl), id, s, RESCUE_LEAVE);
		if (!rescue__holds(rescue_of(pl), id, STREAM_MASK(s)))
			mask &= ~STREAM_MASK(s);
	}
	return mask;
}

static long drain_one(struct pipeline *pl, struct tracked *t, const struct prog *p)
{
	unsigned long long before[STREAM_CNT];
	unsigned int mask = streams_to_read(pl, p, t);
	enum stream s;
	long got = 0;
	bool whole;
	int i, err;

	memcpy(t->capacity, p->capacity, sizeof(t->capacity));
	memcpy(before, t->bytes_read, sizeof(before));
	for_each_stream(s)	/* a stream found empty keeps what it left */
		if (!stream_dry(pl, t, s))
			t->left[stream_idx(s)] = 0;
	err = unseen_look(pl, t, p);
	if (err)
		return err;
	mask = leave_to_unseen(pl, t, mask);
	if (!mask)
		goto out_drained;
	if (pl->ops.journal && !room_for_read(pl)) {
		pl->no_room = true;
		goto out_drained;
	}
	mask = leave_to_others(pl, t, mask);
	mask = claim_rights(pl, t, mask);
	if (!mask)
		goto out_drained;
	err = note_full(pl, t, p);
	if (err)
		return err;
	err = drainer__drain(pl->drainer, p->ident.id, mask, on_bytes, t);
	unseen_drained(pl, t, before);
	mark_dry(pl, t, p, mask, before, err);
	/* read to the end: what is left was never readable */
	whole = !err;
	if (err == -ENOENT || err == STOP_NO_ROOM)
		err = 0;	/* unloaded since the snapshot: flushed next cycle */
	for_each_stream(s) {
		i = stream_idx(s);
		got += t->bytes_read[i] - before[i];
		if (mask & STREAM_MASK(s) && whole)
			t->left[i] = left_after(t->capacity[i], t->bytes_read[i] - before[i]);
		if (pl->ops.journal && t->reasm[i]) {
			int cerr = stream_close(t, s, t->bytes_read[i] - before[i]);

			err = err ?: cerr;
		}
	}
	return err ? err : got;
out_drained:
	unseen_drained(pl, t, before);
	return 0;
}

/* The list drained last cycle, unchanged (progs__refresh()): the same
 * programs are tracked, and only the active ones have anything to read.
 */
static bool same_list(const struct pipeline *pl, const struct prog_list *now)
{
	return now->gen && now->gen == pl->gen;
}

/* The i-th program a cycle looks at: every one, or the active ones. */
static const struct prog *nth_prog(const struct prog_list *now, bool active, size_t i)
{
	return &now->progs[active ? now->active[i] : i];
}

/* A tracked program's turn in a cycle: this cycle's log emptied, its
 * streams read unless reads are not allowed or stopped at an error.
 */
static void drain_turn(struct pipeline *pl, struct tracked *t, const struct prog *p, bool may_read,
		       long *total, long *err)
{
	long got;

	memset(t->log, 0, sizeof(t->log));
	if (!may_read || *err)
		return;
	got = drain_one(pl, t, p);
	if (got < 0)
		*err = got;
	else
		*total += got;
}

static long drain_active(struct pipeline *pl, const struct prog_list *now, bool may_read)
{
	long total = 0, err = 0;
	const struct prog *p;
	struct tracked *t;
	size_t i;

	for (i = 0; i < now->cnt_active; i++) {
		p = nth_prog(now, true, i);
		t = pipeline__find(pl, p->ident.id);
		if (t)	/* else not selected */
			drain_turn(pl, t, p, may_read, &total, &err);
	}
	return err ?: total;
}

/* A program gone since the last cycle, with bytes the rescue read ahead
 * (rescue.h): they are its last, drained before it is forgotten. false:
 * some are still held (no room, no transaction this cycle), and it stays
 * tracked until they are handed out.
 */
static bool drain_gone(struct pipeline *pl, struct tracked *t, bool may_read, long *total, long *err)
{
	struct prog p = { .ident = t->p.ident, .has_streams = true };

	if (rescue__holds(rescue_of(pl), t->p.ident.id, STREAM_MASK_BOTH))
		drain_turn(pl, t, &p, may_read, total, err);
	if (rescue__holds(rescue_of(pl), t->p.ident.id, STREAM_MASK_BOTH))
		return false;
	forget(pl, t);
	return true;
}

static void keep_gone(struct pipeline *pl, struct tracked *t, bool may_read, struct tracked **next,
		      __u32 *ids, size_t *n, long *total, long *err)
{
	if (drain_gone(pl, t, may_read, total, err))
		return;
	ids[*n] = t->p.ident.id;
	next[(*n)++] = t;
}

/* The drain itself: programs gone since the last cycle are forgotten,
 * every selected one with bytes accounted (or held by the rescue) is read
 * (when may_read). After an error nothing more is read: with a journal,
 * its transaction is lost.
 */
static long drain_all(struct pipeline *pl, const struct prog_list *now, bool may_read)
{
	struct tracked **next;
	size_t i, o = 0, n = 0;
	long total = 0, err = 0;
	__u32 *ids;

	/* held bytes can be a quiet program's: only the whole list has it */
	if (same_list(pl, now) && !rescue__holds(rescue_of(pl), 0, 0))
		return drain_active(pl, now, may_read);
	/* room for the gone ones kept (drain_gone()) */
	next = calloc(now->cnt + pl->cnt + 1, sizeof(*next));
	ids = calloc(now->cnt + pl->cnt + 1, sizeof(*ids));
	if (!next || !ids) {
		free(next);
		free(ids);
		return -ENOMEM;
	}
	pl->gen = now->gen;
	for (i = 0; i < now->cnt; i++) {
		const struct prog *p = &now->progs[i];
		struct tracked *t = NULL;
		struct jprog ident;

		while (o < pl->cnt && pl->ids[o] < p->ident.id)
			keep_gone(pl, pl->t[o++], may_read, next, ids, &n, &total, &err);
		if (o < pl->cnt && pl->ids[o] == p->ident.id) {
			t = pl->t[o++];
			if (!prog_ident__same(&t->p.ident, &p->ident)) {
				forget(pl, t);
				t = NULL;
			}
		}
		if (!t && !pl->ops.select(p, pl->ops.ctx))
			continue;
		if (!t) {
			ident = jprog_of(p);
			t = tracked_new(pl, &ident);
		}
		if (!t)
			continue;
		ids[n] = t->p.ident.id;
		next[n++] = t;
		drain_turn(pl, t, p, may_read, &total, &err);
	}
	while (o < pl->cnt)
		keep_gone(pl, pl->t[o++], may_read, next, ids, &n, &total, &err);
	free(pl->t);
	free(pl->ids);
	pl->t = next;
	pl->ids = ids;
	pl->cnt = n;
	return err ?: total;
}

/* ---- mirrored reads (readers.h) ---------------------------------------------- */

/* A piece dropped (too much waits, or no memory) is still queued as a
 * cut, its bytes missed: what is held of its stream ends there, and is
 * not joined to the next piece's.
 */
static int mirq_take(const struct mirrored *m, void *ctx)
{
	struct pipeline *pl = ctx;
	size_t len = m->len;
	struct mirq *q;

	if (pl->mq_bytes + len > MIRQ_MAX || !(q = malloc(sizeof(*q) + len))) {
		pl->mirror_dropped++;
		len = 0;
		q = malloc(sizeof(*q));
		if (!q)
			return 0;
	}
	q->next = NULL;
	memset(&q->prog, 0, sizeof(q->prog));
	q->prog.ident = m->prog;
	memcpy(q->prog.kname, m->kname, sizeof(q->prog.kname));
	q->stream = m->stream;
	q->who = m->who;
	q->missed = m->missed + m->len - len;
	q->gap = m->gap;
	q->fed = false;
	q->waits = 0;
	q->len = len;
	memcpy(q->buf, m->buf, len);
	*pl->mq_tail = q;
	pl->mq_tail = &q->next;
	pl->mq_bytes += len;
	return 0;
}

/* Pieces fed or dropped go; those waiting stay. */
static void mirq_done(struct pipeline *pl, bool all)
{
	struct mirq **pp = &pl->mq, *q;

	while ((q = *pp)) {
		if (all || q->fed) {
			*pp = q->next;
			pl->mq_bytes -= q->len;
			free(q);
		} else {
			pp = &q->next;
		}
	}
	pl->mq_tail = pp;
}

static void say_mirror_loss(struct pipeline *pl)
{
	unsigned long long lost = readers__mirror_lost(pl->ops.readers);

	if (pl->mirror_dropped)
		say(pl, "%llu pieces of other processes' reads were not mirrored (more than %d MiB "
		    "waited to be kept): those processes have them, bpfstderr does not show them",
		    pl->mirror_dropped, MIRQ_MAX >> 20);
	if (lost > pl->mirror_lost)
		say(pl, "%llu reads of other processes were not mirrored (the mirror ring was full): "
		    "those processes have them, bpfstderr does not show them", lost - pl->mirror_lost);
	pl->mirror_dropped = 0;
	pl->mirror_lost = lost;
}

/* A piece into its stream's reassembly, as if read here, the events
 * marked with its reader. Reads lost before it (gap), and what its read
 * returned past it and was not copied (missed), cut the stream: what is
 * held ends there.
 */
static int mirror_feed_one(struct pipeline *pl, struct tracked *t, const struct mirq *q)
{
	int i = stream_idx(q->stream), err = 0;

	if (pl->ops.journal)
		err = stream_open(t, q->stream);
	pl->feeding = &q->who;
	if (!err && q->gap)
		err = reasm__flush(t->reasm[i]);
	err = err ?: reasm__feed(t->reasm[i], q->buf, q->len);
	if (!err && q->missed)
		err = reasm__flush(t->reasm[i]);
	pl->feeding = NULL;
	if (pl->ops.journal && t->reasm[i]) {
		int cerr = stream_close(t, q->stream, 0);

		err = err ?: cerr;
	}
	return err;
}

/* A program not tracked: fed through a tracked of its own, as
 * replay_kept() does. With a journal the journal holds its stream's tail;
 * without one the program is gone (mirror_feed()), and what it held is
 * its last.
 */
static int mirror_feed_untracked(struct pipeline *pl, const struct mirq *q)
{
	struct jprog jp = jprog_of(&q->prog);
	struct tracked *t = tracked_new(pl, &jp);
	int err;

	if (!t)
		return -ENOMEM;
	err = mirror_feed_one(pl, t, q);
	if (!pl->ops.journal)
		err = err ?: tracked_flush(t);
	tracked_free(t);
	return err;
}

/* Where piece q goes: its program's tracked, or NULL: fed on its own
 * (*own), or left (*wait: for a later cycle; else dropped, not this
 * view's). With a journal, the holder of the mirror right keeps what
 * other processes read of every program and stream, whatever its own
 * view selects (a follow -p holds it as well as record). Without one, a
 * selected program loaded since the snapshot is tracked by this cycle's
 * drain, and one that is in no snapshot a cycle later was unloaded.
 */
static struct tracked *mirror_dest(struct pipeline *pl, struct mirq *q, bool *own, bool *wait)
{
	struct tracked *t = pipeline__find(pl, q->prog.ident.id);

	*own = *wait = false;
	if (t && prog_ident__same(&t->p.ident, &q->prog.ident))
		return pl->ops.journal || (pl->ops.streams & STREAM_MASK(q->stream)) ? t : NULL;
	if (pl->ops.journal) {
		*own = true;
		return NULL;
	}
	if (!(pl->ops.streams & STREAM_MASK(q->stream)) || !pl->ops.select(&q->prog, pl->ops.ctx))
		return NULL;
	if (pl->now && prog_list__find(pl->now, q->prog.ident.id))
		*wait = true;		/* tracked by this cycle's drain */
	else if (!q->waits++)
		*wait = true;		/* loaded since the snapshot? */
	else
		*own = true;		/* unloaded */
	return NULL;
}

/* Before this cycle's reads: what other processes read came first. */
static int mirror_feed(struct pipeline *pl)
{
	struct tracked *t;
	struct mirq *q;
	bool own, wait;
	int err = 0;

	for (q = pl->mq; q && !err; q = q->next) {
		if (q->fed)
			continue;
		t = mirror_dest(pl, q, &own, &wait);
		if (wait)
			continue;
		if (t)
			err = mirror_feed_one(pl, t, q);
		else if (own)
			err = mirror_feed_untracked(pl, q);
		q->fed = !err;	/* fed, or dropped */
	}
	return err;
}

/* A commit failed: what was fed is in no journal, and is fed again. */
static void mirq_unfeed(struct pipeline *pl)
{
	struct mirq *q;

	for (q = pl->mq; q; q = q->next)
		q->fed = false;
}

/* The pieces a process that does not mirror sees: the holder keeps them. */
static int mirq_skip(const struct mirrored *m, void *ctx)
{
	(void)m;
	(void)ctx;
	return 0;
}

/* With a journal, one process keeps what other processes read: the
 * holder of the mirror right (journal.h). Every process sees every read,
 * and one that takes the right over keeps the reads from its next take
 * on: a read between the last take of the process that let it go (by
 * exiting) and this one is not mirrored.
 */
static bool mirror_mine(struct pipeline *pl)
{
	if (!pl->ops.journal)
		return true;
	if (!pl->mirroring)
		pl->mirroring = journal__claim_mirror(pl->ops.journal) != -EBUSY;
	return pl->mirroring;
}

/* The ring into the queue; nothing without readers. */
static int mirror_take(struct pipeline *pl)
{
	int err;

	if (!pl->ops.readers)
		return 0;
	if (!mirror_mine(pl))
		return readers__mirror(pl->ops.readers, mirq_skip, pl);
	err = readers__mirror(pl->ops.readers, mirq_take, pl);
	say_mirror_loss(pl);
	return err;
}

/* ---- refusals the fill wake counted (fill.h) ----------------------------------- */

/* Every bpfstderr's fill wake counts every push the kernel refuses on the
 * host, so one process per journal adds the counts to it: the holder of
 * the refusal right (journal.h). The others follow their own counts, so
 * that one which takes the right over adds what its wake counts from its
 * take on: what was refused between the last cycle of the process that
 * let go (by exiting) and that take is not counted.
 */
static bool refusals_moved(const struct pipeline *pl)
{
	struct fill *f = drainer__fill(pl->drainer);

	return f && (!pl->rseq_known || pl->rpending || fill__refused_seq(f) != pl->rseq);
}

/* The largest id listed: programs loaded since have larger ones. */
static __u32 listed_max(const struct pipeline *pl)
{
	return pl->now && pl->now->cnt ? pl->now->progs[pl->now->cnt - 1].ident.id : 0;
}

static int cmp_refusals(const void *a, const void *b)
{
	const struct refusals *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
}

static const struct refusals *refusals_find(const struct pipeline *pl, __u32 id)
{
	struct refusals key = { .id = id };

	return pl->nrkept ? bsearch(&key, pl->rkept, pl->nrkept, sizeof(key), cmp_refusals) : NULL;
}

static int refusals_put(struct pipeline *pl, __u32 id, const unsigned long long *n)
{
	struct refusals *tmp;

	if (!(pl->nrnew & (pl->nrnew + 1))) {	/* 0, 1, 3, 7...: full */
		tmp = realloc(pl->rnew, (2 * pl->nrnew + 2) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		pl->rnew = tmp;
	}
	tmp = &pl->rnew[pl->nrnew++];
	tmp->id = id;
	memcpy(tmp->n, n, sizeof(tmp->n));
	return 0;
}

/* The row refusals of program id go to: tracked, or listed; NULL: not
 * known yet (loaded after the list was read), counted next cycle.
 */
static int refusals_row(struct pipeline *pl, __u32 id, long long *row)
{
	struct tracked *t = pipeline__find(pl, id);
	const struct prog *p;
	struct jprog jp;
	int err;

	if (t) {
		err = t->p.row ? 0 : journal__prog(pl->ops.journal, &t->p);
		*row = t->p.row;
		return err;
	}
	p = pl->now ? prog_list__find(pl->now, id) : NULL;
	if (!p)
		return -ENOENT;
	jp = jprog_of(p);
	err = journal__prog(pl->ops.journal, &jp);
	*row = jp.row;
	return err;
}

/* One program's counts: the keeper adds what is new since it last added. */
static int keep_one(__u32 id, const struct fill_refused *v, void *ctx)
{
	struct pipeline *pl = ctx;
	const struct refusals *k = refusals_find(pl, id);
	unsigned long long n[STREAM_CNT] = { v->n[0], v->n[1] }, delta;
	enum stream s;
	long long row = 0;
	int err;

	if (!pl->rkeeper || (k && !memcmp(k->n, n, sizeof(n))))
		return refusals_put(pl, id, n);
	err = refusals_row(pl, id, &row);
	if (err == -ENOENT && id > listed_max(pl)) {	/* next cycle, listed */
		pl->rpending = true;
		return refusals_put(pl, id, k ? k->n : (unsigned long long[STREAM_CNT]){ 0 });
	}
	if (err == -ENOENT)	/* loaded and unloaded between two lists: no row */
		return refusals_put(pl, id, n);
	for_each_stream(s) {
		delta = n[stream_idx(s)] - (k ? k->n[stream_idx(s)] : 0);
		if (!err && delta)
			err = journal__add_refused(pl->ops.journal, row, s, delta);
	}
	return err ?: refusals_put(pl, id, n);
}

/* Inside the transaction: the counts since the last commit. A process
 * that takes the right starts from the counts its wake has now.
 */
static int keep_refusals(struct pipeline *pl)
{
	struct fill *f = drainer__fill(pl->drainer);
	bool taken;
	int err;

	if (!refusals_moved(pl))
		return 0;
	pl->rseq_new = fill__refused_seq(f);
	taken = !pl->rkeeper && journal__claim_refusals(pl->ops.journal) != -EBUSY;
	pl->nrnew = 0;
	pl->rpending = false;
	err = fill__each_refused(f, keep_one, pl);
	pl->rkeeper |= taken;
	if (err)
		return err;
	qsort(pl->rnew, pl->nrnew, sizeof(*pl->rnew), cmp_refusals);
	pl->rwalked = true;
	return 0;
}

/* After the transaction: what a commit added is what is kept. */
static void refusals_done(struct pipeline *pl, bool committed)
{
	struct refusals *tmp;

	if (!pl->rwalked)
		return;
	pl->rwalked = false;
	if (!committed) {
		pl->rpending = true;	/* walked again */
		return;
	}
	tmp = pl->rkept;
	pl->rkept = pl->rnew;
	pl->nrkept = pl->nrnew;
	pl->rnew = tmp;
	pl->nrnew = 0;
	pl->rseq = pl->rseq_new;
	pl->rseq_known = true;
}

static int prune_one(__u32 id, const struct fill_refused *v, void *ctx)
{
	struct pipeline *pl = ctx;

	(void)v;
	if (id < listed_max(pl) && !prog_list__find(pl->now, id))
		fill__forget(drainer__fill(pl->drainer), id);
	return 0;
}

/* The counts of programs unloaded since go from the map (it holds
 * FILL_REFUSED_MAX programs), once the journal has them: when the list
 * changed, and every count is kept. A program loaded after the list was
 * read has a larger id than any listed.
 */
static void prune_refusals(struct pipeline *pl)
{
	struct fill *f = drainer__fill(pl->drainer);

	if (!f || !pl->now || !pl->now->gen || pl->now->gen == pl->rpruned_gen ||
	    (pl->ops.journal && refusals_moved(pl)))
		return;
	if (!fill__each_refused(f, prune_one, pl))
		pl->rpruned_gen = pl->now->gen;
}

/* ---- the journal's shared state ------------------------------------------------ */

/* Gone for sure: the journal knew it before the snapshot, which lacks it.
 * (A program loaded after the snapshot may be in the journal already.)
 */
static bool unloaded_now(const struct pipeline *pl, const struct jprog *jp)
{
	const struct prog *p = prog_list__find(pl->now, jp->ident.id);

	return jp->first_ns < ns_of(&pl->now->taken) && !(p && prog_ident__same(&jp->ident, &p->ident));
}

static int mark_unloaded(const struct jprog *jp, void *ctx)
{
	struct pipeline *pl = ctx;

	if (!unloaded_now(pl, jp))
		return 0;
	return journal__set_unloaded(pl->ops.journal, jp->row, &pl->now->taken);
}

/* A held tail whose program is gone, or that no write completed for
 * JOURNAL_STALE_NS, is emitted as it stands.
 */
static bool tail_due(const struct pipeline *pl, const struct jprog *jp, long long since)
{
	struct timespec now;

	clock_gettime(CLOCK_REALTIME, &now);
	return ns_of(&now) - since > JOURNAL_STALE_NS || unloaded_now(pl, jp);
}

static int flush_tail(const struct jprog *jp, enum stream s, long long since, void *ctx)
{
	struct pipeline *pl = ctx;
	struct tracked *t = pipeline__find(pl, jp->ident.id);
	bool ours = t && t->claimed[stream_idx(s)];
	int err, right = 0;

	if (!tail_due(pl, jp, since))
		return 0;
	/* the process with the right may hold what follows the tail: this
	 * one too, read ahead and not handed out yet
	 */
	if (ours && rescue__holds(rescue_of(pl), jp->ident.id, STREAM_MASK(s)))
		return 0;
	if (!ours && (right = journal__claim(pl->ops.journal, jp->ident.id, s)) == -EBUSY)
		return 0;
	t = tracked_new(pl, jp);
	if (t) {
		err = stream_open(t, s) ?: reasm__flush(t->reasm[stream_idx(s)]);
		err = err ?: stream_close(t, s, 0);
		tracked_free(t);
	} else {
		err = -ENOMEM;
	}
	if (right > 0)
		journal__release(pl->ops.journal, jp->ident.id, s);
	return err;
}

/* For journal_work(): non-zero stops the listing at the first one. */
static int stops_at_due_tail(const struct jprog *jp, enum stream s, long long since, void *ctx)
{
	struct pipeline *pl = ctx;

	(void)s;
	if (tail_due(pl, jp, since))
		return 1;
	if (since + JOURNAL_STALE_NS + 1 < pl->next_due)
		pl->next_due = since + JOURNAL_STALE_NS + 1;
	return 0;
}

static int stops_at_unloaded(const struct jprog *jp, void *ctx)
{
	return unloaded_now(ctx, jp);
}

static long long realtime_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return ns_of(&ts);
}

/* The journal's generation now; jgen_at: since when it is what it is. */
static void journal_gen(struct pipeline *pl)
{
	unsigned long long g = journal__generation(pl->ops.journal);

	if (g != pl->jgen) {
		pl->jgen = g;
		pl->jgen_at = pl->mono_sec;
	}
}

/* Did a look at the journal at time at see everything committed so far:
 * taken JOURNAL_SETTLE_SEC after its generation last moved, and less
 * than JOURNAL_RECHECK_SEC ago?
 */
static bool journal_seen_at(const struct pipeline *pl, time_t at)
{
	return at >= pl->jgen_at + JOURNAL_SETTLE_SEC && pl->mono_sec - at < JOURNAL_RECHECK_SEC;
}

/* The journal's shared state needs nothing yet: it needed nothing with
 * this very list (a program that went changes the list) at a look that
 * saw every commit so far, and no held tail has come due since. An idle
 * cycle then runs no query at all.
 */
static bool journal_quiet(struct pipeline *pl, const struct prog_list *now)
{
	journal_gen(pl);
	return now->gen && pl->quiet_gen == now->gen && journal_seen_at(pl, pl->quiet_at) &&
	       realtime_ns() < pl->quiet_until;
}

static bool shared_work(struct pipeline *pl, const struct prog_list *now)
{
	int tails, gone;

	if (journal_quiet(pl, now))
		return false;
	pl->next_due = LLONG_MAX;
	tails = journal__pending_list(pl->ops.journal, stops_at_due_tail, pl);
	gone = tails ? 0 : journal__live_progs(pl->ops.journal, stops_at_unloaded, pl);
	if (tails || gone) {
		pl->quiet_gen = 0;
		return tails > 0 || gone > 0;
	}
	pl->quiet_gen = now->gen;
	pl->quiet_at = pl->mono_sec;
	pl->quiet_until = pl->next_due;
	return false;
}

/* Inside the transaction: held tails that came due are emitted, programs
 * gone are marked unloaded; not even looked at when the cycle wrote
 * nothing (a stream read again found it empty) and they were quiet.
 */
static int shared_update(struct pipeline *pl, const struct prog_list *now, bool wrote_nothing)
{
	struct journal *j = pl->ops.journal;

	if (wrote_nothing && journal_quiet(pl, now))
		return 0;
	pl->quiet_gen = 0;
	return journal__pending_list(j, flush_tail, pl) ?: journal__live_progs(j, mark_unloaded, pl);
}

/* Is there anything to write? Reads only, so an idle cycle takes no lock. */
static bool journal_work(struct pipeline *pl, const struct prog_list *now)
{
	bool active = now->gen;	/* from progs__refresh(): active is indexed */
	bool same = same_list(pl, now);	/* tracked as listed: dry streams known */
	const struct prog *p;
	size_t i;

	if (rescue__holds(rescue_of(pl), 0, 0))	/* read ahead, maybe of a quiet program */
		return true;
	if (refusals_moved(pl))
		return true;
	if (pl->unseen_due)	/* the look after a drain (unseen_drained()) */
		return true;
	for (i = 0; i < pl->cnt && pl->nclaimed; i++)
		if (refused_new(pl, pl->t[i]))
			return true;
	for (i = 0; i < (active ? now->cnt_active : now->cnt); i++) {
		p = nth_prog(now, active, i);
		if (streams_to_read(pl, p, same ? pipeline__find(pl, p->ident.id) : NULL) &&
		    pl->ops.select(p, pl->ops.ctx))
			return true;
	}
	return shared_work(pl, now);
}

/* The rows of a rolled-back transaction are gone: look them up again. */
static void forget_rows(struct pipeline *pl)
{
	size_t i;

	for (i = 0; i < pl->cnt; i++)
		pl->t[i]->p.row = 0;
}

/* Bytes kept from a failed commit go first, as read, ahead of anything new. */
static int replay_kept(struct pipeline *pl)
{
	struct kept *old = pl->log, *k;
	struct tracked *t;
	int err = 0;

	pl->log = NULL;
	for (k = old; k && !err; k = k->next) {
		t = tracked_new(pl, &k->p);
		if (!t) {
			err = -ENOMEM;
			break;
		}
		err = take_bytes(t, k->stream, k->buf, k->len);
		if (t->reasm[stream_idx(k->stream)]) {
			int cerr = stream_close(t, k->stream, k->len);

			err = err ?: cerr;
		}
		tracked_free(t);
	}
	if (err) {
		kept_free(pl->log);
		pl->log = old;
		return err;
	}
	kept_free(old);
	return 0;
}

/* Room for this cycle's writes, measured before any read: without it
 * nothing is read, and the kernel keeps the bytes. A checkpoint gives the
 * WAL's space back first, while there is room for it: it grows the
 * database by up to the WAL's size, and a WAL grown into the last of the
 * room (16 KiB pages fill it faster than the bytes read) would never be
 * checkpointed, nor anything read again.
 */
static void measure_room(struct pipeline *pl)
{
	struct journal *j = pl->ops.journal;
	long long free = journal__fs_free(journal__path(j));
	long long want = 2LL * kept_bytes(pl->log);
	long long wal = journal__wal_bytes(j);

	if (free >= 0 && free - wal - JOURNAL_ROOM_SLACK - want < 2LL * STREAM_READ_BUF) {
		journal__checkpoint(j);
		free = journal__fs_free(journal__path(j));
	}
	pl->room = free < 0 ? LLONG_MAX / 2 : free - JOURNAL_ROOM_SLACK - want;
	pl->no_room = !room_for_read(pl);
}

static void say_room(struct pipeline *pl)
{
	if (pl->no_room && !pl->said_no_room)
		say(pl, "journal %s: no room on its file system for what streams hold: stopped "
		    "reading them (the kernel keeps up to %d bytes per stream) until there is room",
		    journal__path(pl->ops.journal), STREAM_MAX_CAPACITY);
	else if (!pl->no_room && pl->said_no_room && !pl->log)
		say(pl, "journal %s: room again: reading streams", journal__path(pl->ops.journal));
	else
		return;
	pl->said_no_room = pl->no_room;
}

/* Another process holds the journal's write lock past our wait (a sqlite3
 * shell in a transaction, a backup): nothing is read meanwhile, said once,
 * and once more when a commit goes through again.
 */
static void say_locked(struct pipeline *pl, bool locked)
{
	const char *path = journal__path(pl->ops.journal);
	char who[JOURNAL_HOLDER_MAX];

	if (locked == pl->said_locked)
		return;
	pl->said_locked = locked;
	if (!locked) {
		say(pl, "journal %s: unlocked: reading streams", path);
		return;
	}
	journal__lock_holder(pl->ops.journal, who, sizeof(who));
	say(pl, "journal %s: locked by another process (%s): stopped reading streams (the kernel "
	    "keeps up to %d bytes per stream) until it lets go", path,
	    who[0] ? who : "a sqlite3 shell or a backup?", STREAM_MAX_CAPACITY);
}

/* A commit failed after reads: retry what can be retried (no space, a
 * busy lock), keeping the bytes; anything else spills them.
 */
static long commit_failed(struct pipeline *pl, int err)
{
	journal__rollback(pl->ops.journal);
	forget_rows(pl);
	mirq_unfeed(pl);
	unseen_forget(pl);
	if (err == -ENOSPC)
		pl->no_room = true;
	if (err == -EBUSY)
		say_locked(pl, true);
	if (err == -ENOSPC || err == -EBUSY)
		return 0;
	return spill(pl, err);
}

/* One transaction from before the first destructive read to after the
 * last event: other bpfstderr processes wait for it, so the journal has
 * every event once, in the kernel's order. A kill before the commit loses
 * what this cycle read, and nothing else. New bytes are read only when
 * nothing is kept from a failed commit, so what waits in memory is at
 * most one cycle's reads.
 */
static long journal_cycle_once(struct pipeline *pl, const struct prog_list *now)
{
	struct journal *j = pl->ops.journal;
	bool retry = pl->log;
	long got;
	int err;

	if (!retry && !pl->mq && !journal_work(pl, now))
		return drain_all(pl, now, false);	/* no statfs either */
	measure_room(pl);
	if (retry && pl->room < 0)
		return drain_all(pl, now, false);
	err = journal__begin(j);
	if (err == -EBUSY) {
		say_locked(pl, true);
		return drain_all(pl, now, false);	/* the next cycle reads */
	}
	if (err)
		return err;
	pl->unseen_due = false;
	err = retry ? replay_kept(pl) : 0;
	err = err ?: mirror_feed(pl);
	err = err ?: keep_refusals(pl);	/* gone programs still tracked */
	got = drain_all(pl, now, !retry && !err);
	err = err ?: got < 0 ? got : note_refusals(pl);
	err = err ?: shared_update(pl, now, !retry && !got);
	err = err ?: journal__commit(j);
	refusals_done(pl, !err);
	if (err)
		return commit_failed(pl, err);
	say_locked(pl, false);
	kept_recycle(pl);
	mirq_done(pl, false);
	return got;
}

/* Rights are let go only when nothing read waits for a commit. */
static long journal_cycle(struct pipeline *pl, const struct prog_list *now)
{
	long got = journal_cycle_once(pl, now);

	if (!pl->log)
		release_rights(pl);
	return got;
}

/* ---- delivery from the journal ------------------------------------------------- */

static struct learned_row *learned_row(struct pipeline *pl, long long row)
{
	struct learned_row *tmp;
	size_t i;

	for (i = 0; i < pl->nlearned; i++)
		if (pl->learned[i].row == row)
			return &pl->learned[i];
	tmp = realloc(pl->learned, (pl->nlearned + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	pl->learned = tmp;
	tmp[pl->nlearned] = (struct learned_row){ .row = row };
	return &tmp[pl->nlearned++];
}

struct learn_ctx {
	struct symbolizer *sym;
	const struct prog_ident *owner;
};

static int learn_site(const char *tag, unsigned long long off, const struct sym_loc *loc, void *ctx)
{
	struct learn_ctx *lc = ctx;

	return symbolizer__learn_bpf(lc->sym, lc->owner, tag, off, loc);
}

/* The BPF frames of this fault as they were resolved at drain time, which
 * may have been by another process, and before the program was unloaded.
 */
static int learn_sites(struct pipeline *pl, const struct jevent *e, const struct fault *f)
{
	struct learn_ctx lc = { .sym = pl->ops.sym, .owner = &e->prog->ident };
	struct learned_row *lr;
	int i;

	for (i = 0; i < f->frame_cnt; i++)
		if (f->frames[i].is_bpf &&
		    !symbolizer__knows_bpf(pl->ops.sym, lc.owner, f->frames[i].tag, f->frames[i].off))
			break;
	if (i == f->frame_cnt)
		return 0;
	lr = learned_row(pl, e->prog->row);
	if (!lr || lr->upto_seq >= e->seq)
		return 0;	/* nothing was recorded for that frame */
	lr->upto_seq = journal__last_seq(pl->ops.journal);
	return journal__sites(pl->ops.journal, e->prog->row, learn_site, &lc);
}

static struct prog prog_of(const struct jprog *jp)
{
	struct prog p = { .ident = jp->ident };

	memcpy(p.kname, jp->kname, sizeof(p.kname));
	return p;
}

static int deliver(const struct jevent *e, void *ctx)
{
	struct pipeline *pl = ctx;
	struct pipe_event pe = { .ev = &e->ev, .prog = e->prog, .ts = e->ts, .reader = e->reader };
	struct prog p = prog_of(e->prog);
	struct event ev = e->ev;
	struct fault f;
	int err;

	/* others may have drained streams this view does not show */
	if (!(pl->ops.streams & (1U << ev.stream)) || !pl->ops.select(&p, pl->ops.ctx))
		return 0;
	if (ev.kind == EV_MESSAGE)
		return pl->ops.sink(&pe, pl->ops.ctx);
	err = fault__parse(ev.text, ev.len, !e->incomplete, &f);
	if (err)
		return err;
	ev.fault = &f;
	pe.ev = &ev;
	err = pl->ops.sym ? learn_sites(pl, e, &f) : 0;
	err = err ?: pl->ops.sink(&pe, pl->ops.ctx);
	fault__fini(&f);
	return err;
}

/* Events may have come since the last read, unless that read saw every
 * commit so far (journal_seen_at()). An idle top reads nothing.
 */
static bool read_due(struct pipeline *pl)
{
	if (pl->behind)
		return true;
	journal_gen(pl);
	return !journal_seen_at(pl, pl->read_at);
}

static int read_events(struct pipeline *pl)
{
	int err;

	pl->read_at = pl->mono_sec;
	err = journal__read(pl->ops.journal, &pl->cursor, deliver, pl);
	pl->behind = err == JOURNAL_LATER;
	return pl->behind ? 0 : err;
}

int pipeline__catch_up(struct pipeline *pl)
{
	return pl->behind ? read_events(pl) : 0;
}

/* ---- the cycle ------------------------------------------------------------------ */

/* The rescue reads for the programs tracked now, while there is room. */
int pipeline__allow_rescue(struct pipeline *pl)
{
	return rescue__allow(rescue_of(pl), pl->ids, pl->cnt, pl->ops.streams, !pl->no_room,
				     !pl->ops.journal);
}

long pipeline__cycle(struct pipeline *pl, const struct prog_list *now)
{
	struct timespec mono;
	long got;
	int err = 0;

	clock_gettime(CLOCK_MONOTONIC, &mono);
	pl->mono_sec = mono.tv_sec;
	pl->now = now;
	err = mirror_take(pl);
	if (!err && !pl->ops.journal) {
		err = mirror_feed(pl);
		mirq_done(pl, false);
	}
	if (err)
		return err;
	got = pl->ops.journal ? journal_cycle(pl, now) : drain_all(pl, now, true);
	if (pl->ops.journal)
		say_room(pl);
	if (got >= 0 && pl->ops.journal && pl->ops.sink && read_due(pl))
		err = read_events(pl);
	prune_refusals(pl);
	call_gone(pl);
	pl->now = NULL;
	if (!err)
		err = pipeline__allow_rescue(pl);
	if (got < 0)
		return got;
	if (err && !pl->err)
		pl->err = err;
	return pl->err ? pl->err : got;
}

long pipeline__cycle_fresh(struct pipeline *pl, struct progs *progs)
{
	const struct prog_list *l;
	int err;

	err = progs__refresh(progs, &l, 0);
	return err ?: pipeline__cycle(pl, l);
}

bool pipeline__claims(const struct pipeline *pl)
{
	return pl->nclaimed;
}

bool pipeline__holds(struct pipeline *pl)
{
	return rescue__holds(rescue_of(pl), 0, 0);
}

void pipeline__forget_dry(struct pipeline *pl)
{
	size_t i;

	for (i = 0; i < pl->cnt; i++)
		memset(pl->t[i]->dry_gen, 0, sizeof(pl->t[i]->dry_gen));
}

/* Bytes kept from a failed commit get one more transaction of their own. */
static int flush_kept(struct pipeline *pl)
{
	struct journal *j = pl->ops.journal;
	int err;

	if (!pl->log)
		return 0;
	measure_room(pl);
	if (pl->room < 0) {
		journal__add_error(j, "%sno room on the file system of %s", journal__error(j) ? "; " : "",
				   journal__path(j));
		return spill(pl, -ENOSPC);
	}
	pl->quiet_gen = 0;
	err = journal__begin(j) ?: replay_kept(pl) ?: journal__commit(j);
	if (!err) {
		kept_free(pl->log);
		pl->log = NULL;
		return 0;
	}
	journal__rollback(j);
	return spill(pl, err);
}

static int keep_bytes(__u32 id, enum stream s, const void *buf, size_t len, void *ctx)
{
	struct tracked *t = ctx;

	(void)id;
	return kept_add(t->pl, t, s, buf, len);
}

/* What the rescue still holds at the end (the last drains could not hand
 * it out: no room, the journal busy) joins what waits for a commit, which
 * flush_kept() commits, or spills and says where.
 */
static int keep_held(struct pipeline *pl)
{
	struct tracked *t;
	enum stream s;
	size_t i;
	int err = 0;

	for (i = 0; i < pl->cnt && !err; i++) {
		t = pl->t[i];
		memset(t->log, 0, sizeof(t->log));	/* the last cycle's, committed */
		for_each_stream(s)
			if (!err && rescue__holds(rescue_of(pl), t->p.ident.id, STREAM_MASK(s)))
				err = rescue__drain_held(rescue_of(pl), t->p.ident.id, s, keep_bytes, t);
	}
	return err;
}

/* No journal: what was read and not shown goes to a spill file, named
 * on stderr, or to stderr itself.
 */
static int spill_unshown(struct pipeline *pl)
{
	size_t n = kept_bytes(pl->log);
	char path[PATH_MAX + 64];
	int err = 0;

	if (!pl->log)
		return 0;
	if (!spill_file(pl, path, sizeof(path))) {
		fprintf(stderr, "bpfstderr: the %zu bytes read and not shown are in %s\n", n, path);
	} else {
		fprintf(stderr, "bpfstderr: no spill file could be written: the %zu bytes read and "
			"not shown follow\n", n);
		err = spill_to(STDERR_FILENO, pl->log);
	}
	kept_free(pl->log);
	pl->log = NULL;
	return err;
}

/* No journal: what reassembly holds (a line without its end, a report
 * cut short), before what the rescue holds: they come in that order.
 */
static int keep_reasm(struct pipeline *pl)
{
	const void *held;
	struct tracked *t;
	size_t i, len;
	enum stream s;
	int err = 0;

	for (i = 0; i < pl->cnt && !err && !pl->ops.journal; i++) {
		t = pl->t[i];
		for_each_stream(s) {
			if (err || !t->reasm[stream_idx(s)])
				continue;
			reasm__held(t->reasm[stream_idx(s)], &held, &len);
			err = len ? kept_add(pl, t, s, held, len) : 0;
		}
	}
	return err;
}

int pipeline__keep(struct pipeline *pl)
{
	int err = keep_reasm(pl) ?: keep_held(pl), kerr;

	kerr = pl->ops.journal ? flush_kept(pl) : spill_unshown(pl);
	return err ?: kerr;
}

int pipeline__flush(struct pipeline *pl)
{
	size_t i;
	int err = 0;

	for (i = 0; i < pl->cnt; i++)
		err = err ?: tracked_flush(pl->t[i]);
	err = err ?: pl->sink_err;	/* no journal: pipeline__keep() spills */
	return err ?: pl->ops.journal ? keep_held(pl) ?: flush_kept(pl) : 0;
}

struct tracked *pipeline__find(struct pipeline *pl, __u32 id)
{
	const __u32 *at = prog_ids_find(pl->ids, pl->cnt, id);

	return at ? pl->t[at - pl->ids] : NULL;
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
	free(pl->ids);
	free(pl->gone);
	free(pl->learned);
	free(pl->rkept);
	free(pl->rnew);
	kept_free(pl->log);
	kept_free(pl->spare);
	mirq_done(pl, true);
	free(pl);
}
