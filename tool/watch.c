// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "stream.h"
#include "watch.h"
#include "../bpf/fill.h"
#include "../bpf/progs.h"
#include "../bpf/watch.h"
#include "watch.skel.h"

/* One data page: every refresh empties the ring, and a record that finds
 * it full still moves nothing but tells, by the LOST record after it, that
 * something came or went.
 */
#define RING_PAGES	1

struct cpu_ring {
	int fd;
	struct perf_event_mmap_page *page;
};

struct watch {
	struct watch_bpf *skel;
	struct cpu_ring *rings;
	int nr_rings;
	size_t map_len;
};

static int ring_open(struct cpu_ring *r, int cpu, size_t len)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.size = sizeof(attr),
		.config = PERF_COUNT_SW_DUMMY,
		.bpf_event = 1,		/* PERF_RECORD_BPF_EVENT: load, unload */
	};
	void *m;

	r->fd = syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
	if (r->fd < 0)
		return -errno;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
	if (m == MAP_FAILED) {
		close(r->fd);
		r->fd = -1;
		return -errno;
	}
	r->page = m;
	return 0;
}

static void rings_close(struct watch *w)
{
	int i;

	for (i = 0; i < w->nr_rings; i++) {
		munmap(w->rings[i].page, w->map_len);
		close(w->rings[i].fd);
	}
	free(w->rings);
}

/* A record is written on the CPU the load or unload ran on: a ring on
 * every possible CPU, or none (a CPU without one could hide a change).
 */
static int rings_open(struct watch *w)
{
	int cpus = libbpf_num_possible_cpus(), err = 0;

	if (cpus < 0)
		return cpus;
	w->rings = calloc(cpus, sizeof(*w->rings));
	if (!w->rings)
		return -ENOMEM;
	w->map_len = (1 + RING_PAGES) * sysconf(_SC_PAGESIZE);
	for (w->nr_rings = 0; w->nr_rings < cpus; w->nr_rings++) {
		err = ring_open(&w->rings[w->nr_rings], w->nr_rings, w->map_len);
		if (err)
			break;
	}
	return err;
}

int watch__open(struct watch **out)
{
	struct watch *w = calloc(1, sizeof(*w));
	int err;

	if (!w)
		return -ENOMEM;
	w->skel = watch_bpf__open_and_load();
	if (!w->skel) {
		err = -errno;
		goto err_free;
	}
	err = rings_open(w);
	if (err)
		goto err_close;
	*out = w;
	return 0;

err_close:
	rings_close(w);
	watch_bpf__destroy(w->skel);
err_free:
	free(w);
	return err;
}

void watch__close(struct watch *w)
{
	if (!w)
		return;
	rings_close(w);
	watch_bpf__destroy(w->skel);
	free(w);
}

int watch__prog_fd(const struct watch *w)
{
	return bpf_program__fd(w->skel->progs.watch_check);
}

/* Records are not parsed: any is a change. The tail moves to the head
 * read, so a record written after it is there for the next call.
 */
bool watch__came_went(struct watch *w)
{
	struct perf_event_mmap_page *pg;
	bool any = false;
	__u64 head;
	int i;

	for (i = 0; i < w->nr_rings; i++) {
		pg = w->rings[i].page;
		head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
		if (head == pg->data_tail)
			continue;
		__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
		any = true;
	}
	return any;
}

bool watch__remember(struct watch *w, const struct prog_rec *recs, size_t cnt)
{
	struct watch_slot *s = w->skel->bss->slots;
	__u32 *busy = w->skel->bss->busy, nr_busy = 0;
	enum stream st;
	size_t i;
	int k;

	w->skel->bss->nr_slots = 0;
	if (cnt > WATCH_MAX)
		return false;
	for (i = 0; i < cnt; i++) {
		s[i].aux = recs[i].aux_addr;
		for_each_stream(st) {
			k = stream_idx(st);
			s[i].capacity[k] = recs[i].capacity[k];
			s[i].dropped_msgs[k] = recs[i].dropped_msgs[k];
		}
		if (stream_fullest(recs[i].capacity) <= 0)
			continue;
		if (nr_busy < WATCH_BUSY_MAX)
			busy[nr_busy] = i;
		nr_busy++;
	}
	w->skel->bss->nr_busy = nr_busy > WATCH_BUSY_MAX ? WATCH_BUSY_ALL : nr_busy;
	w->skel->bss->nr_slots = cnt;
	return true;
}

static int check(struct watch *w, __u32 mark, bool every)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	__u32 nr_busy = w->skel->bss->nr_busy;
	int err;

	w->skel->bss->mark = mark;
	if (every)
		w->skel->bss->nr_busy = WATCH_BUSY_ALL;
	err = bpf_prog_test_run_opts(watch__prog_fd(w), &opts);
	w->skel->bss->nr_busy = nr_busy;
	if (err)
		return -errno;
	return w->skel->bss->changed != 0;
}

int watch__changed(struct watch *w)
{
	return check(w, 0, false);
}

int watch__filling(struct watch *w, bool every)
{
	return check(w, FILL_MARK, every);
}
