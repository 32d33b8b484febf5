// SPDX-License-Identifier: GPL-2.0
/* `top --demo`: load the bundled misbehaving programs (bpf/demo.bpf.c) and
 * run each once a second from a thread, so top has faults to show. The
 * may_goto program spins a quarter second per run, which is why this is
 * not done from the screen's loop. Unloaded by demo__stop().
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "demo.skel.h"
#include "health.h"
#include "top.h"

#define DEMO_ARENA_USER_ADDR 0x7f0000000000ULL

struct demo {
	struct demo_bpf *skel;
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool stop;
	bool started;
};

static void run_all(struct demo *d)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, d->skel->obj) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		bpf_prog_test_run_opts(bpf_program__fd(p), &opts);
	}
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

int demo__start(struct demo **out)
{
	struct demo *d = calloc(1, sizeof(*d));
	int err;

	if (!d)
		return -ENOMEM;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->cond, NULL);
	d->skel = demo_bpf__open();
	if (!d->skel) {
		err = -errno;
		goto err_free;
	}
	d->skel->rodata->printk_kfunc = printk_kfunc_detect();
	/* libbpf 1.1 does not set arenas up: their user address is ours to pick */
	bpf_map__set_map_extra(d->skel->maps.arena, DEMO_ARENA_USER_ADDR);
	err = demo_bpf__load(d->skel);
	if (err)
		goto err_destroy;
	err = -pthread_create(&d->thread, NULL, demo_thread, d);
	if (err)
		goto err_destroy;
	d->started = true;
	*out = d;
	return 0;

err_destroy:
	demo_bpf__destroy(d->skel);
err_free:
	free(d);
	return err;
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
	demo_bpf__destroy(d->skel);
	free(d);
}
