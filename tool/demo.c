// SPDX-License-Identifier: GPL-2.0
/* `top --demo`: load each fault source this host allows (faultsrc.c) and
 * run its programs once a second from a thread, so top has faults to
 * show. The may_goto program spins a quarter second per run, which is why
 * this is not done from the screen's loop. Unloaded by demo__stop().
 */
#include <errno.h>
#include <stdbool.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "demo.h"
#include "faultsrc.h"

struct demo {
	struct fault_progs *progs[FAULT_SRC_CNT];	/* NULL: refused */
	char notice[1024];
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool started;
};

static void run_all(struct demo *d)
{
	int s;

	for (s = 0; s < FAULT_SRC_CNT; s++)
		if (d->progs[s])
			fault_progs__run(d->progs[s]);
}

static void *demo_thread(void *arg)
{
	struct demo *d = arg;
	struct timespec until;

	pthread_mutex_lock(&d->lock);
	while (!d->stop) {
		pthread_mutex_unlock(&d->lock);
		run_all(d);
		pthread_mutex_lock(&d->lock);
		clock_gettime(CLOCK_REALTIME, &until);
		until.tv_sec += 1;
		while (!d->stop && pthread_cond_timedwait(&d->cond, &d->lock, &until) != ETIMEDOUT)
			;
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

/* Short, for one screen line; `bpfstderr doctor` gives the whole cause
 * of a fault kind's refusal.
 */
static void note_refusal(struct demo *d, enum fault_src s, const struct fault_refusal *why)
{
	size_t off = strlen(d->notice);

	snprintf(d->notice + off, sizeof(d->notice) - off, "%s%s (%s: %s)",
		 off ? ", " : "this host refuses ", fault_src__name(s), why->step,
		 strerrorname_np(-why->err) ?: strerror(-why->err));
}

static void end_notice(struct demo *d, bool fault_refused)
{
	size_t off = strlen(d->notice);

	if (fault_refused)
		snprintf(d->notice + off, sizeof(d->notice) - off, "; `bpfstderr doctor` says why");
}

/* Each source on its own: one refusal must not take the others down. */
static int load_sources(struct demo *d)
{
	struct fault_refusal why;
	bool fault_refused = false;
	int s, loaded = 0, first = 0;

	for (s = 0; s < FAULT_SRC_CNT; s++) {
		if (fault_progs__load(s, &d->progs[s], &why)) {
			d->progs[s] = NULL;
			note_refusal(d, s, &why);
			fault_refused |= s != FAULT_SRC_PRINT;
			first = first ?: why.err;
			continue;
		}
		loaded++;
	}
	end_notice(d, fault_refused);
	return loaded ? 0 : first;
}

static void unload_sources(struct demo *d)
{
	int s;

	for (s = 0; s < FAULT_SRC_CNT; s++)
		fault_progs__free(d->progs[s]);
}

/* Signals are the main thread's to take: it is the one that sleeps
 * waiting for them.
 */
static int start_thread(struct demo *d)
{
	sigset_t all, old;
	int err;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	err = -pthread_create(&d->thread, NULL, demo_thread, d);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	return err;
}

int demo__start(struct demo **out, char *why, size_t len)
{
	struct demo *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	err = load_sources(d);
	snprintf(why, len, "%s", d->notice);
	if (err)
		goto err_unload;
	err = start_thread(d);
	if (err)
		goto err_unload;
	d->started = true;
	*out = d;
	return 0;

err_unload:
	unload_sources(d);
	free(d);
	return err;
}

const char *demo__notice(const struct demo *d)
{
	return d && d->notice[0] ? d->notice : NULL;
}

void demo__stop(struct demo *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	d->stop = true;
	pthread_cond_signal(&d->cond);
	pthread_mutex_unlock(&d->lock);
	if (d->started)
		pthread_join(d->thread, NULL);
	unload_sources(d);
	free(d);
}
