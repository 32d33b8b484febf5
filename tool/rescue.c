// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <bpf/bpf.h>

#include "fill.h"
#include "progs.h"
#include "rescue.h"

/* A drain hands out what it read once this much is held for the stream:
 * the pipeline's memory stays bounded while a storm goes on.
 */
#define DRAIN_BATCH	(1 << 20)
/* One drain of a stream hands out at most this much; then the next. */
#define DRAIN_MAX	(8 << 20)

struct held {
	__u32 id;
	enum stream s;
	char *buf;
	size_t len, cap;
};

struct rescue {
	pthread_mutex_t lock;		/* everything below, and every read */
	struct held *h;
	size_t nh;
	size_t bytes;			/* held, all streams */
	__u32 *ids;			/* rescue__allow() */
	size_t nids;
	unsigned int streams;
	bool room;
	/* the stream a drain is handing out (rescue__drain()): the only one
	 * the thread reads, so that held bytes never outlive that drain
	 */
	bool draining;
	__u32 drain_id;
	enum stream drain_s;
	/* the thread's own */
	struct fill *fill;
	pthread_t thread;
	int stop_fd;
	int notify_fd;			/* readable: a selected stream passed the mark */
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

/* Read stream s into h until it is empty or h holds up to: room for a
 * whole read is made before each read, so that nothing is read that
 * cannot be kept. 0, or -errno (-ENOMEM: not read, no room).
 */
static int held_fill(struct rescue *r, struct held *h, int fd, size_t upto)
{
	ssize_t n;
	char *tmp;

	while (h->len < upto) {
		if (h->cap - h->len < STREAM_READ_BUF) {
			tmp = realloc(h->buf, h->len + STREAM_READ_BUF);
			if (!tmp)
				return -ENOMEM;
			h->buf = tmp;
			h->cap = h->len + STREAM_READ_BUF;
		}
		n = stream_read_fd(fd, h->s, h->buf + h->len, STREAM_READ_BUF);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			return n;
		h->len += n;
		r->bytes += n;
	}
	return 0;
}

/* Everything held for one stream, taken out: the caller frees it. */
static char *held_take(struct rescue *r, struct held *h, size_t *len)
{
	char *buf = h->buf;

	*len = h->len;
	r->bytes -= h->len;
	h->buf = NULL;
	h->len = h->cap = 0;
	return buf;
}

/* A slot with nothing held goes: idle streams keep no buffer. */
static void held_drop_empty(struct rescue *r, struct held *h)
{
	if (h->len)
		return;
	free(h->buf);
	*h = r->h[--r->nh];
}

/* Bytes handed out that the pipeline did not take (it stopped): back in
 * front of what is held, so that the next drain starts with them.
 */
static int held_unget(struct rescue *r, __u32 id, enum stream s, const char *buf, size_t len)
{
	struct held *h;
	char *tmp;
	int err = -ENOMEM;

	pthread_mutex_lock(&r->lock);
	h = held_get(r, id, s);
	tmp = h ? malloc(len + h->len) : NULL;
	if (tmp) {
		memcpy(tmp, buf, len);
		if (h->len)
			memcpy(tmp + len, h->buf, h->len);
		free(h->buf);
		h->buf = tmp;
		h->len += len;
		h->cap = h->len;
		r->bytes += len;
		err = 0;
	}
	pthread_mutex_unlock(&r->lock);
	return err;
}

static bool allowed(const struct rescue *r, __u32 id, enum stream s)
{
	return r->room && (r->streams & STREAM_MASK(s)) &&
	       prog_ids_find(r->ids, r->nids, id);
}

static void notify(int fd)
{
	__u64 one = 1;

	if (write(fd, &one, sizeof(one)) != sizeof(one)) {
		/* a full counter is a pending wake already */
	}
}

/* A wake. The stream a drain is handing out is read now, a batch at a
 * time (the drain takes it in turn); any other selected stream wakes the
 * main thread for a drain of its own. 1 when the wake was of no use to
 * us (a stream not selected, or no room): the caller slows down.
 */
static int wake_one(struct rescue *r, __u32 id, enum stream s)
{
	struct held *h;
	int fd, idle = 0;

	pthread_mutex_lock(&r->lock);
	if (!allowed(r, id, s)) {
		idle = 1;
	} else if (!r->draining || r->drain_id != id || r->drain_s != s) {
		notify(r->notify_fd);
	} else if (r->bytes < RESCUE_MAX) {
		fd = bpf_prog_get_fd_by_id(id);
		h = fd >= 0 ? held_get(r, id, s) : NULL;
		if (h) {
			held_fill(r, h, fd, h->len + DRAIN_BATCH);
			held_drop_empty(r, h);
		}
		if (fd >= 0)
			close(fd);
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

int rescue__start(struct rescue **out, struct fill *f)
{
	struct rescue *r = calloc(1, sizeof(*r));
	sigset_t all, old;
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
	/* signals are the main thread's: its ppoll() is what they end */
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&r->thread, NULL, rescue_main, r);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		goto err_close_notify;
	r->running = true;
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

	if (!r || !r->running)
		return;
	if (write(r->stop_fd, &one, sizeof(one)) == sizeof(one))
		pthread_join(r->thread, NULL);
	else
		pthread_cancel(r->thread), pthread_join(r->thread, NULL);
	r->running = false;
}

void rescue__free(struct rescue *r)
{
	size_t i;

	if (!r)
		return;
	rescue__stop(r);
	for (i = 0; i < r->nh; i++)
		free(r->h[i].buf);
	free(r->h);
	free(r->ids);
	close(r->notify_fd);
	close(r->stop_fd);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

int rescue__allow(struct rescue *r, const __u32 *ids, size_t cnt, unsigned int streams, bool room)
{
	__u32 *copy = malloc((cnt ? cnt : 1) * sizeof(*copy));

	if (!copy)
		return -ENOMEM;
	memcpy(copy, ids, cnt * sizeof(*copy));
	pthread_mutex_lock(&r->lock);
	free(r->ids);
	r->ids = copy;
	r->nids = cnt;
	r->streams = streams;
	r->room = room;
	pthread_mutex_unlock(&r->lock);
	return 0;
}

bool rescue__holds(struct rescue *r, __u32 id, unsigned int mask)
{
	bool any = false;
	size_t i;

	pthread_mutex_lock(&r->lock);
	for (i = 0; i < r->nh && !any; i++)
		any = r->h[i].len && (!mask || (r->h[i].id == id && (mask & STREAM_MASK(r->h[i].s))));
	pthread_mutex_unlock(&r->lock);
	return any;
}

/* Held bytes for (id, s), after reading the stream into them (fd >= 0). */
static char *take(struct rescue *r, int fd, __u32 id, enum stream s, size_t *len, int *err)
{
	struct held *h;
	char *buf = NULL;

	*len = 0;
	pthread_mutex_lock(&r->lock);
	r->draining = true;
	r->drain_id = id;
	r->drain_s = s;
	h = fd >= 0 ? held_get(r, id, s) : held_find(r, id, s);
	if (!h && fd >= 0)
		*err = -ENOMEM;
	if (h && fd >= 0)
		*err = held_fill(r, h, fd, h->len + DRAIN_BATCH);
	if (h && h->len)
		buf = held_take(r, h, len);
	if (h)
		held_drop_empty(r, h);
	if (!buf)	/* the drain ends here: nothing more is read for it */
		r->draining = false;
	pthread_mutex_unlock(&r->lock);
	return buf;
}

static void drain_end(struct rescue *r)
{
	pthread_mutex_lock(&r->lock);
	r->draining = false;
	pthread_mutex_unlock(&r->lock);
}

int rescue__drain(struct rescue *r, int fd, __u32 id, enum stream s, drain_fn fn, void *ctx)
{
	size_t len, off, n, total = 0;
	int err, rerr = 0;
	char *buf;

	for (;;) {
		/* a storm does not keep one drain (and its transaction) going:
		 * the rest is the next drain's, which the notify brings at once
		 */
		if (total >= DRAIN_MAX) {
			drain_end(r);
			notify(r->notify_fd);
			return 0;
		}
		buf = take(r, fd, id, s, &len, &rerr);
		if (!buf)
			return rerr;
		total += len;
		for (err = 0, off = 0; off < len && !err; off += n) {
			n = len - off < STREAM_READ_BUF ? len - off : STREAM_READ_BUF;
			err = fn(id, s, buf + off, n, ctx);
		}
		/* what fn did not get stays held; memory failing here loses it */
		if (off < len && held_unget(r, id, s, buf + off, len - off))
			err = err ?: -ENOMEM;
		free(buf);
		if (err || rerr || fd < 0) {
			drain_end(r);
			return err ?: rerr;
		}
	}
}

int rescue__notify_fd(struct rescue *r)
{
	return r->notify_fd;
}

void rescue__notified(struct rescue *r)
{
	__u64 n;

	if (read(r->notify_fd, &n, sizeof(n)) < 0) {
		/* nothing pending (EAGAIN) */
	}
}
