// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "fill.h"
#include "ids.h"
#include "streamio.h"
#include "kbtf.h"
#include "fill.skel.h"

struct fill {
	struct fill_bpf *skel;
	struct ring_buffer *rb;
	fill_fn fn;		/* during fill__consume() */
	void *ctx;
	/* what the map "selected" holds (fill__select()), sorted */
	__u32 *sel;
	size_t nsel;
	unsigned int sel_streams;
};

/* The printk kfunc's names: renamed in 6.18 (an implicit last argument);
 * since 7.x both are in BTF, and only the one with a body (the BPF-facing
 * name) can be attached to: each is tried, in this order.
 */
static const char *const printk_kfuncs[] = { "bpf_stream_vprintk_impl", "bpf_stream_vprintk" };

static int on_wake(void *ctx, void *data, size_t len)
{
	struct fill *f = ctx;
	const struct fill_wake *w = data;

	if (f->fn && len >= sizeof(*w))
		f->fn(w->prog_id, w->stream, f->ctx);
	return 0;
}

static int load_for(struct fill *f, const char *printk)
{
	struct fill_bpf *s;
	int err;

	s = fill_bpf__open();
	if (!s)
		return -errno;
	err = bpf_program__set_attach_target(s->progs.fill_printk, 0, printk) ?:
	      bpf_program__set_attach_target(s->progs.fill_commit, 0, "bpf_stream_stage_commit");
	err = err ?: fill_bpf__load(s);
	if (err) {
		fill_bpf__destroy(s);
		return err;
	}
	f->skel = s;
	return 0;
}

static int fill_load(struct fill *f)
{
	int err = -EOPNOTSUPP;	/* no streams, or not the functions we know */
	size_t i;

	if (!kbtf_has_func("bpf_stream_stage_commit"))
		return err;
	for (i = 0; i < sizeof(printk_kfuncs) / sizeof(printk_kfuncs[0]); i++) {
		if (!kbtf_has_func(printk_kfuncs[i]))
			continue;
		err = load_for(f, printk_kfuncs[i]);
		if (err != -ENOENT && err != -ESRCH)
			break;
	}
	err = err ?: fill_bpf__attach(f->skel);
	if (err)
		return err;
	f->rb = ring_buffer__new(bpf_map__fd(f->skel->maps.wakes), on_wake, f, NULL);
	if (!f->rb)
		return -errno;
	f->skel->bss->armed = 1;
	return 0;
}

int fill__open(struct fill **out)
{
	struct fill *f = calloc(1, sizeof(*f));
	int err;

	if (!f)
		return -ENOMEM;
	err = fill_load(f);
	if (err) {
		fill__close(f);
		return err;
	}
	*out = f;
	return 0;
}

void fill__close(struct fill *f)
{
	if (!f)
		return;
	ring_buffer__free(f->rb);
	fill_bpf__destroy(f->skel);
	free(f->sel);
	free(f);
}

int fill__fd(const struct fill *f)
{
	return ring_buffer__epoll_fd(f->rb);
}

void fill__consume(struct fill *f, fill_fn fn, void *ctx)
{
	f->fn = fn;
	f->ctx = ctx;
	ring_buffer__consume(f->rb);
	f->fn = NULL;
}

void fill__rearm(struct fill *f)
{
	ring_buffer__consume(f->rb);
	__atomic_store_n(&f->skel->bss->armed, 1, __ATOMIC_RELEASE);
}

unsigned long long fill__refused(const struct fill *f, __u32 id, unsigned int s)
{
	struct fill_refused v;

	if (s < STREAM_STDOUT || s > STREAM_STDERR)
		return 0;
	if (bpf_map__lookup_elem(f->skel->maps.refused, &id, sizeof(id), &v, sizeof(v), 0))
		return 0;
	return v.n[stream_idx(s)];
}

unsigned long long fill__refused_seq(const struct fill *f)
{
	return __atomic_load_n(&f->skel->bss->refused_seq, __ATOMIC_ACQUIRE);
}

int fill__each_refused(const struct fill *f, fill_refused_fn fn, void *ctx)
{
	int fd = bpf_map__fd(f->skel->maps.refused);
	struct fill_refused v;
	__u32 key, next;
	void *prev = NULL;
	int err;

	while (!bpf_map_get_next_key(fd, prev, &next)) {
		key = next;
		prev = &key;
		if (bpf_map_lookup_elem(fd, &key, &v))
			continue;	/* pruned meanwhile */
		err = fn(key, &v, ctx);
		if (err)
			return err;
	}
	return errno == ENOENT ? 0 : -errno;
}

void fill__forget(struct fill *f, __u32 id)
{
	bpf_map_delete_elem(bpf_map__fd(f->skel->maps.refused), &id);
}

void fill__prog_fds(const struct fill *f, int fds[2])
{
	fds[0] = bpf_program__fd(f->skel->progs.fill_printk);
	fds[1] = bpf_program__fd(f->skel->progs.fill_commit);
}

void fill__arm(struct fill *f)
{
	__atomic_store_n(&f->skel->bss->armed, 1, __ATOMIC_RELEASE);
}

/* The map follows the selection by its changes: a cycle of an unchanged
 * selection costs no syscall.
 */
static int select_update(struct fill *f, const __u32 *ids, size_t cnt, unsigned int streams)
{
	int fd = bpf_map__fd(f->skel->maps.selected);
	size_t i;
	int err;

	for (i = 0; i < f->nsel; i++)
		if (!ids_find(ids, cnt, f->sel[i]))
			bpf_map_delete_elem(fd, &f->sel[i]);
	for (i = 0; i < cnt; i++) {
		if (streams == f->sel_streams && ids_find(f->sel, f->nsel, ids[i]))
			continue;
		err = bpf_map_update_elem(fd, &ids[i], &streams, BPF_ANY);
		if (err)
			return err;
	}
	return 0;
}

int fill__select(struct fill *f, const __u32 *ids, size_t cnt, unsigned int streams)
{
	__u32 *copy;
	int err;

	if (cnt == f->nsel && streams == f->sel_streams &&
	    (!cnt || !memcmp(ids, f->sel, cnt * sizeof(*ids))))
		return 0;
	copy = malloc((cnt ? cnt : 1) * sizeof(*copy));
	if (!copy)
		return -ENOMEM;
	memcpy(copy, ids, cnt * sizeof(*copy));
	err = cnt > FILL_SELECTED_MAX ? -E2BIG : select_update(f, ids, cnt, streams);
	/* a selection the map cannot hold: every stream wakes, as before */
	__atomic_store_n(&f->skel->bss->filtering, !err, __ATOMIC_RELEASE);
	free(f->sel);
	f->sel = copy;
	f->nsel = cnt;
	f->sel_streams = streams;
	return err;
}
