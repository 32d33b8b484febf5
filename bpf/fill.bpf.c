// SPDX-License-Identifier: GPL-2.0
/* The fill wake: after every push to a stream (fexit on the functions
 * that charge it: the printk kfunc, and bpf_stream_stage_commit() for
 * fault reports and stack dumps), look at the stream's accounting; past
 * FILL_MARK, wake the reader once through the ring buffer. Once: "armed"
 * is cleared by the wake and set again by the reader when it has drained,
 * so a storm costs one wake per drain, not one per report. Only the
 * streams the reader selected wake it (map "selected").
 * Attach targets are set at load time (tool/fill.c): the kfunc's name
 * differs between kernels.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "fill.h"

struct bpf_stream___f {
	atomic_t capacity;
} __attribute__((preserve_access_index));

struct bpf_prog_aux___f {
	__u32 id;
	struct bpf_stream___f stream[2];
} __attribute__((preserve_access_index));

struct bpf_prog___f {
	struct bpf_prog_aux___f *aux;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4096);
} wakes SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FILL_REFUSED_MAX);
	__type(key, __u32);
	__type(value, struct fill_refused);
} refused SEC(".maps");

/* The streams this process reads (fill__select()): program id -> mask of
 * streams (1 << stream id). Another program's push past the mark, one
 * nobody here drains, would take the only wake, and a selected storm
 * would wait out the reader's slow sleep.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, FILL_SELECTED_MAX);
	__type(key, __u32);
	__type(value, __u32);
} selected SEC(".maps");

__u64 armed;
__u32 filtering;	/* 0: every stream wakes (no selection told, or too many) */
/* one more at every refused push counted: readers look at the map only
 * when it moved
 */
__u64 refused_seq;

extern void *bpf_rdonly_cast(const void *obj, __u32 btf_id) __ksym;

/* The printk kfunc's aux is a bare pointer on some kernels: cast, its
 * fields are plain loads that cannot fault (the JIT's probe loads), not
 * a helper call each, on every push of every program.
 */
static struct bpf_prog_aux___f *aux_of(void *p)
{
	return bpf_rdonly_cast(p, bpf_core_type_id_kernel(struct bpf_prog_aux___f));
}

/* stream_id as the kernel numbers it: 1 stdout, 2 stderr. Constant
 * indices: CO-RE relocates a field's offset, not an index's stride.
 */
static int accounted(struct bpf_prog_aux___f *aux, int stream_id)
{
	if (stream_id == 1)
		return aux->stream[0].capacity.counter;
	if (stream_id == 2)
		return aux->stream[1].capacity.counter;
	return 0;
}

#define ENOSPC	28

/* A push the kernel refused because the stream was full: counted, so
 * that readers can say reports were lost although they read in time.
 */
static void count_refused(struct bpf_prog_aux___f *aux, int stream_id)
{
	struct fill_refused zero = {}, *v;
	__u32 id = aux->id;

	if (stream_id != 1 && stream_id != 2)
		return;
	v = bpf_map_lookup_elem(&refused, &id);
	if (!v) {
		bpf_map_update_elem(&refused, &id, &zero, BPF_NOEXIST);
		v = bpf_map_lookup_elem(&refused, &id);
		if (!v)
			return;
	}
	__sync_fetch_and_add(&v->n[stream_id == 2], 1);
	__sync_fetch_and_add(&refused_seq, 1);
}

static bool wanted(struct bpf_prog_aux___f *aux, int stream_id)
{
	__u32 id, *mask;

	if (!filtering)
		return true;
	id = aux->id;
	mask = bpf_map_lookup_elem(&selected, &id);
	return mask && (*mask & (1U << stream_id));
}

static void pushed(void *p, int stream_id, int ret)
{
	struct bpf_prog_aux___f *aux;
	struct fill_wake *r;

	if (!p)
		return;
	aux = aux_of(p);
	if (ret == -ENOSPC)
		count_refused(aux, stream_id);
	if (accounted(aux, stream_id) < FILL_MARK || !wanted(aux, stream_id))
		return;
	if (!__sync_lock_test_and_set(&armed, 0))
		return;
	r = bpf_ringbuf_reserve(&wakes, sizeof(*r), 0);
	if (!r) {
		/* the ring is full of wakes not consumed yet: this one is
		 * not needed, but the arm is, or no wake comes again
		 */
		__sync_lock_test_and_set(&armed, 1);
		return;
	}
	r->prog_id = aux->id;
	r->stream = stream_id;
	bpf_ringbuf_submit(r, 0);
}

/* int bpf_stream_vprintk[_impl](int stream_id, const char *fmt,
 *				  const void *args, u32 len, aux)
 */
SEC("fexit")
int BPF_PROG(fill_printk, int stream_id, const char *fmt, const void *args, __u32 len,
	     struct bpf_prog_aux___f *aux, int ret)
{
	pushed(aux, stream_id, ret);
	return 0;
}

/* int bpf_stream_stage_commit(struct bpf_stream_stage *ss,
 *			       struct bpf_prog *prog, enum bpf_stream_id id)
 */
SEC("fexit")
int BPF_PROG(fill_commit, void *ss, struct bpf_prog___f *prog, int stream_id, int ret)
{
	pushed(prog->aux, stream_id, ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
