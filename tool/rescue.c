// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <bpf/bpf.h>

#include "fill.h"
#include "ids.h"
#include "rescue.h"

/* The thread reads at most this much of a stream per wake, then lets the
 * lock go: a drain takes chunks meanwhile, and the next wake reads on.
 */
#define DRAIN_BATCH	(1 << 20)
/* One drain of a stream hands out at most this much; then the next. */
#define DRAIN_MAX	(8 << 20)
/* Held bytes live in chunks, never in one buffer grown and moved: under a
 * storm a big realloc or free (mremap, munmap) stalled this thread for up
 * to 0.7 s in the lab, four times what a stream holds. Chunks handed out
 * are kept for reuse (faulted in already, and no free while a storm
 * goes on) until a cycle finds nothing held.
 */
/* A stream another process reads: the main thread tries for its right
 * this often while it storms.
 */
#define LEAVE_RETRY_NS	(100 * 1000 * 1000LL)
/* A right is kept this long after the last wake of its stream: a storm
 * has lulls, and the drain that claims it again comes late.
 */
#define KEEP_NS		(1000 * 1000 * 1000LL)
/* A read goes into the last chunk held while it has this much room. */
#define CHUNK_ROOM_MIN	(STREAM_READ_BUF / 4)

/* One read's bytes. */
struct chunk {
	struct chunk *next;
	size_t len;
	char data[STREAM_READ_BUF];
};

/* One stream the thread knows of: what it holds of it, and what it does
 * when that stream passes the mark. A slot goes when it holds nothing and
 * the stream is RESCUE_ASK's.
 */
struct held {
	__u32 id;
	enum stream s;
	enum rescue_claim claim;
	long long woke_ns;		/* CLOCK_MONOTONIC ns of the last read on a wake */
	long long left_ns;		/* RESCUE_LEAVE: when the main thread was last asked */
	struct chunk *head, *tail;	/* held, oldest first */
	size_t len;
};

struct rescue {
	pthread_mutex_t lock;		/* everything below, and every read */
	struct held *h;
	size_t nh;
	size_t bytes;			/* held, all streams */
	struct chunk *spare;		/* for reuse */
	__u32 *ids;			/* rescue__allow() */
	size_t nids;
	unsigned int streams;
	bool room;
	bool anytime;			/* every allowed stream is RESCUE_READ's */
	/* the stream a drain is handing out (rescue__drain()): the thread
	 * reads it, in that drain's transaction, whatever its claim
	 */
	bool draining;
	__u32 drain_id;
	enum stream drain_s;
	/* the thread's own */
	struct fill *fill;
	pthread_t thread;
	int stop_fd;
	int notify_fd;			/* readable: a selected stream passed the mark */
	bool asked;			/* notified, rescue__notified() not called since */
	bool running;
};

static struct held *held_find(struct rescue *r, __u32 id, enum stream s)
{
	size_t i;

	for (i = 0; i < r->nh; i++)
		if (r->h[i].id == id && r->h[i].s == s)
			return &r->h[i];
	return NULL;
}

static struct held *held_get(struct rescue *r, __u32 id, enum stream s)
{
	struct held *h = held_find(r, id, s), *tmp;

	if (h)
		return h;
	tmp = realloc(r->h, (r->nh + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	r->h = tmp;
	h = &r->h[r->nh++];
	memset(h, 0, sizeof(*h));
	h->id = id;
	h->s = s;
	return h;
}

static struct chunk *chunk_get(struct rescue *r)
{
	struct chunk *c = r->spare;

	if (!c)
		return malloc(sizeof(*c));
	r->spare = c->next;
	return c;
}

static void chunk_put(struct rescue *r, struct chunk *c)
{
	if (!c)
		return;
	c->next = r->spare;
	r->spare = c;
}

static void chunks_free(struct chunk *c)
{
	struct chunk *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
}

/* Read stream s into h until it is empty or h holds up to: room for a
 * whole read is had before each read, so that nothing is read that
 * cannot be kept. 0, or -errno (-ENOMEM: not read, no room).
 */
static int held_fill(struct rescue *r, struct held *h, int fd, size_t upto)
{
	struct chunk *c;
	bool fresh;
	ssize_t n;

	while (h->len < upto) {
		/* the last chunk's room first: a storm's reads after the
		 * first are small, and a chunk each would hold a fraction
		 */
		c = h->tail;
		fresh = !c || sizeof(c->data) - c->len < CHUNK_ROOM_MIN;
		if (fresh && !(c = chunk_get(r)))
			return -ENOMEM;
		if (fresh)
			c->len = 0;
		do
			n = stream_read_fd(fd, h->s, c->data + c->len, sizeof(c->data) - c->len);
		while (n == -EINTR);
		if (n <= 0) {
			if (fresh)
				chunk_put(r, c);
			return n;
		}
		c->len += n;
		if (fresh) {
			c->next = NULL;
			if (h->tail)
				h->tail->next = c;
			else
				h->head = c;
			h->tail = c;
		}
		h->len += n;
		r->bytes += n;
	}
	return 0;
}

/* The oldest chunk held for one stream, taken out. */
static struct chunk *held_pop(struct rescue *r, struct held *h)
{
	struct chunk *c = h->head;

	if (!c)
		return NULL;
	h->head = c->next;
	if (!h->head)
		h->tail = NULL;
	h->len -= c->len;
	r->bytes -= c->len;
	return c;
}

/* A slot with nothing held and nothing to remember goes: idle streams
 * keep no buffer.
 */
static void held_drop_empty(struct rescue *r, struct held *h)
{
	if (h->len || h->claim != RESCUE_ASK)
		return;
	*h = r->h[--r->nh];
}

static bool allowed(const struct rescue *r, __u32 id, enum stream s)
{
	return r->room && (r->streams & STREAM_MASK(s)) &&
	       ids_find(r->ids, r->nids, id);
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* May the thread read stream s of program id now? */
static bool readable(const struct rescue *r, const struct held *h, __u32 id, enum stream s)
{
	return r->anytime || (h && h->claim == RESCUE_READ) ||
	       (r->draining && r->drain_id == id && r->drain_s == s);
}

static void notify(int fd)
{
	__u64 one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one)) {
		/* a full counter is a pending wake already */
	}
}

/* Reads stream s of program id into what is held, a batch at most: the
 * bytes read.
 */
static size_t rescue_read(struct rescue *r, __u32 id, enum stream s)
{
	int fd = bpf_prog_get_fd_by_id(id);
	struct held *h;
	size_t got = 0;

	if (fd < 0)
		return 0;
	h = held_get(r, id, s);
	if (h) {
		got = h->len;
		held_fill(r, h, fd, h->len + DRAIN_BATCH);
		got = h->len - got;
		if (got)
			h->woke_ns = mono_ns();	/* a read of no bytes keeps no right */
		held_drop_empty(r, h);
	}
	close(fd);
	return got;
}

/* Wakes the main thread, for a drain. 1 when it was woken already and
 * has not drained since: this wake is of no use.
 */
static int ask(struct rescue *r)
{
	if (r->asked)
		return 1;
	r->asked = true;
	notify(r->notify_fd);
	return 0;
}

/* A wake. A stream the thread may read (readable()) is read now, a batch
 * at a time, and the main thread is woken to hand it on; any other
 * selected stream wakes the main thread, whose drain claims its right;
 * a stream another process holds the right of is left to it, but the
 * main thread tries again every LEAVE_RETRY_NS while it storms (that
 * process may have let go). 1 when the wake was of no use to us (a
 * stream not selected or left, no room, RESCUE_MAX held, the main thread
 * asked already): the caller slows down, and never spins.
 */
static int wake_one(struct rescue *r, __u32 id, enum stream s)
{
	struct held *h;
	long long now;
	int idle = 1;

	pthread_mutex_lock(&r->lock);
	h = held_find(r, id, s);
	if (!allowed(r, id, s)) {
		/* not ours */
	} else if (h && h->claim == RESCUE_LEAVE) {
		now = mono_ns();
		if (now - h->left_ns > LEAVE_RETRY_NS) {
			h->left_ns = now;
			ask(r);
		}
	} else if (!readable(r, h, id, s)) {
		idle = ask(r);
	} else if (r->bytes < RESCUE_MAX && rescue_read(r, id, s)) {
		/* only a read that returned bytes is of use: a stream whose
		 * accounting stays past the mark (capacity the kernel leaked,
		 * pushes it refuses) wakes us at every push, with nothing to
		 * read, and must not keep this thread, or its right, busy
		 */
		notify(r->notify_fd);
		idle = 0;
	}
	pthread_mutex_unlock(&r->lock);
	return idle;
}

struct wakes {
	struct rescue *r;
	int useful;
};

static void on_wake(__u32 id, unsigned int stream, void *ctx)
{
	struct wakes *w = ctx;

	if (stream == STREAM_STDOUT || stream == STREAM_STDERR)
		w->useful += !wake_one(w->r, id, stream);
}

static void *rescue_main(void *arg)
{
	struct rescue *r = arg;
	struct pollfd p[2] = {
		{ .fd = fill__fd(r->fill), .events = POLLIN },
		{ .fd = r->stop_fd, .events = POLLIN },
	};
	struct timespec slow = { 0, 10 * 1000 * 1000 };
	struct wakes w = { .r = r };
	struct sched_param rt = { .sched_priority = 1 };

	/* refused without CAP_SYS_NICE, or by the service's sandbox: then
	 * it competes like any thread
	 */
	pthread_setschedparam(pthread_self(), SCHED_FIFO, &rt);
	fill__rearm(r->fill);
	for (;;) {
		if (poll(p, 2, -1) < 0 && errno != EINTR)
			break;
		if (p[1].revents)
			break;
		w.useful = 0;
		fill__consume(r->fill, on_wake, &w);
		/* woken only by streams we do not read: they would take every
		 * wake at their push rate
		 */
		if (!w.useful)
			nanosleep(&slow, NULL);
		fill__rearm(r->fill);
	}
	return NULL;
}

static int spawn(struct rescue *r)
{
	sigset_t all, old;
	int err;

	/* signals are the main thread's: its ppoll() is what they end */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&r->thread, NULL, rescue_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	r->running = !err;
	return err;
}

int rescue__start(struct rescue **out, struct fill *f)
{
	struct rescue *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	pthread_mutex_init(&r->lock, NULL);
	r->fill = f;
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_fd < 0) {
		err = -errno;
		goto err_free;
	}
	r->notify_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (r->notify_fd < 0) {
		err = -errno;
		goto err_close;
	}
	err = spawn(r);
	if (err)
		goto err_close_notify;
	/* No transparent huge pages for this process: khugepaged collapses
	 * a process's memory into them under its mm's locks, and a fault of
	 * ours in that range waits. In the lab (one vCPU under qemu, THP
	 * "always") a collapse held this thread for 0.26 s mid-storm, when a
	 * stream fills in 16 ms at 10,000 reports a second. Our memory gains
	 * nothing from huge pages. Best effort.
	 */
	prctl(PR_SET_THP_DISABLE, 1UL, 0UL, 0UL, 0UL);
	*out = r;
	return 0;

err_close_notify:
	close(r->notify_fd);
err_close:
	close(r->stop_fd);
err_free:
	pthread_mutex_destroy(&r->lock);
	free(r);
	return err;
}

void rescue__stop(struct rescue *r)
{
	__u64 one = 1;
	ssize_t got;

	if (!r || !r->running)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) == sizeof(one)) {
		pthread_join(r->thread, NULL);
		/* read back, so that a thread started again does not stop at
		 * once; a stop left asked, rescue__resume() finds and says
		 */
		got = read(r->stop_fd, &one, sizeof(one));
		(void)got;
	} else {
		pthread_cancel(r->thread), pthread_join(r->thread, NULL);
	}
	r->running = false;
}

int rescue__resume(struct rescue *r)
{
	struct pollfd p = { .fd = r ? r->stop_fd : -1, .events = POLLIN };

	if (!r || r->running)
		return 0;
	if (poll(&p, 1, 0) != 0)
		return -EIO;	/* the stop still asked */
	return spawn(r);
}

void rescue__free(struct rescue *r)
{
	size_t i;

	if (!r)
		return;
	rescue__stop(r);
	for (i = 0; i < r->nh; i++)
		chunks_free(r->h[i].head);
	chunks_free(r->spare);
	free(r->h);
	free(r->ids);
	close(r->notify_fd);
	close(r->stop_fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int rescue__allow(struct rescue *r, const __u32 *ids, size_t cnt, unsigned int streams, bool room,
		  bool anytime)
{
	__u32 *copy;

	if (!r)
		return 0;
	copy = malloc((cnt ? cnt : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, ids, cnt * sizeof(*copy));
	pthread_mutex_lock(&r->lock);
	free(r->ids);
	r->ids = copy;
	r->nids = cnt;
	r->streams = streams;
	r->room = room;
	r->anytime = anytime;
	/* once per cycle: with nothing held, the storm is over */
	if (!r->bytes && !r->draining) {
		chunks_free(r->spare);
		r->spare = NULL;
	}
	pthread_mutex_unlock(&r->lock);
	/* only the streams we read wake the thread; and the wake is armed
	 * once a cycle whatever happened to the last one
	 */
	fill__select(r->fill, ids, cnt, streams);
	fill__arm(r->fill);
	return 0;
}

int rescue__claim(struct rescue *r, __u32 id, enum stream s, enum rescue_claim c)
{
	struct held *h;
	int err = 0;

	if (!r)
		return 0;
	pthread_mutex_lock(&r->lock);
	h = c == RESCUE_ASK ? held_find(r, id, s) : held_get(r, id, s);
	if (h) {
		h->claim = c;
		h->woke_ns = 0;	/* kept only once the thread reads it */
		held_drop_empty(r, h);
	} else if (c != RESCUE_ASK) {
		err = -ENOMEM;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

bool rescue__keep(struct rescue *r, __u32 id, enum stream s)
{
	struct held *h;
	bool keep;

	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	h = held_find(r, id, s);
	keep = h && h->claim == RESCUE_READ && (h->len || mono_ns() - h->woke_ns < KEEP_NS);
	if (h) {
		if (!keep && h->claim == RESCUE_READ)
			h->claim = RESCUE_ASK;
		held_drop_empty(r, h);
	}
	pthread_mutex_unlock(&r->lock);
	return keep;
}

bool rescue__holds(struct rescue *r, __u32 id, unsigned int mask)
{
	bool any = false;
	size_t i;

	if (!r)
		return false;
	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->nh && !any; i++)
		any = r->h[i].len && (!mask || (r->h[i].id == id && (mask & STREAM_MASK(r->h[i].s))));
	pthread_mutex_unlock(&r->lock);
	return any;
}

/* The oldest chunk held for (id, s) or, when none is, one read of the
 * stream (fd >= 0); done goes back for reuse. NULL: nothing more, and
 * the drain ends. One read at most: the thread's reads of a stream in a
 * storm wait for this lock, and the stream refills as fast as it is read.
 */
static struct chunk *take(struct rescue *r, struct chunk *done, int fd, __u32 id, enum stream s,
			  int *err)
{
	struct chunk *c = NULL;
	struct held *h;

	pthread_mutex_lock(&r->lock);
	if (done)
		chunk_put(r, done);
	r->draining = true;
	r->drain_id = id;
	r->drain_s = s;
	h = fd >= 0 ? held_get(r, id, s) : held_find(r, id, s);
	if (!h && fd >= 0)
		*err = -ENOMEM;
	if (h && !h->head && fd >= 0)
		*err = held_fill(r, h, fd, 1);
	if (h) {
		c = held_pop(r, h);
		held_drop_empty(r, h);
	}
	if (!c)
		r->draining = false;
	pthread_mutex_unlock(&r->lock);
	return c;
}

static void drain_end(struct rescue *r, struct chunk *done)
{
	pthread_mutex_lock(&r->lock);
	chunk_put(r, done);
	r->draining = false;
	pthread_mutex_unlock(&r->lock);
}

int rescue__drain(struct rescue *r, int fd, __u32 id, enum stream s, drain_fn fn, void *ctx)
{
	struct chunk *c = NULL;
	size_t total = 0;
	int err, rerr = 0;

	for (;;) {
		/* a storm does not keep one drain (and its transaction) going:
		 * the rest is the next drain's, which the notify brings at once;
		 * a program gone has what is held, and no next drain
		 */
		if (fd >= 0 && total >= DRAIN_MAX) {
			drain_end(r, c);
			notify(r->notify_fd);
			return 0;
		}
		c = take(r, c, fd, id, s, &rerr);
		if (!c)
			return rerr;
		total += c->len;
		/* fn has the chunk's bytes even when it stops: what stays
		 * held is the chunks after it
		 */
		err = fn(id, s, c->data, c->len, ctx);
		if (err) {
			drain_end(r, c);
			return err;
		}
	}
}

int rescue__drain_held(struct rescue *r, __u32 id, enum stream s, drain_fn fn, void *ctx)
{
	return r ? rescue__drain(r, -1, id, s, fn, ctx) : 0;
}

int rescue__notify_fd(struct rescue *r)
{
	return r ? r->notify_fd : -1;
}

void rescue__notified(struct rescue *r)
{
	__u64 n;

	if (!r)
		return;
	/* under the lock: an ask() between the two would be lost */
	pthread_mutex_lock(&r->lock);
	if (read(r->notify_fd, &n, sizeof(n)) < 0) {
		/* nothing pending (EAGAIN) */
	}
	r->asked = false;
	pthread_mutex_unlock(&r->lock);
}
