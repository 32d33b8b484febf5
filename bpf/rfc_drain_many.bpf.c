// SPDX-License-Identifier: GPL-2.0
/* Many programs' streams in one BPF_PROG_TEST_RUN (the RFC's design, issue
 * 37): the ids go in (ids[], nr_ids), every message comes out in the ring
 * buffer behind a struct many_hdr that names its program and stream, and
 * no program fd is opened. A stream with more than PER_STREAM messages
 * keeps the rest of its batch in the stash for the next run (EAGAIN). For
 * kernels with the RFC drain kfuncs (kernel-patches/rfc-drain/); the
 * prototypes and opaque types are rfc_kfuncs.h's.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#include "rfc_many.h"

#define EAGAIN 11
#define PER_STREAM 64

#include "rfc_kfuncs.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 16 * 1024 * 1024);
} msgs SEC(".maps");

struct pending {
	struct bpf_stream_elem_batch __attribute__((btf_type_tag("kptr"))) *batch;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, __u32);
	__type(value, struct pending);
	__uint(max_entries, MANY_MAX * 2);
} stash SEC(".maps");

__u32 ids[MANY_MAX];
__u32 nr_ids;
__u64 copied_msgs;
__u64 copied_bytes;
__u32 left;

static void copy_elem(struct bpf_stream_elem___rfc *elem, __u32 id, __u32 s)
{
	struct many_hdr h = { .prog_id = id, .stream = s };
	__u32 len = BPF_CORE_READ(elem, mem_slice.len);
	struct bpf_dynptr src, dst;
	int err;

	err = bpf_dynptr_from_mem_slice(&elem->mem_slice, 0, &src);
	if (bpf_ringbuf_reserve_dynptr(&msgs, sizeof(h) + len, 0, &dst)) {
		bpf_ringbuf_discard_dynptr(&dst, 0);
		return;
	}
	err = err ?: bpf_dynptr_write(&dst, 0, &h, sizeof(h), 0);
	err = err ?: bpf_dynptr_copy(&dst, sizeof(h), &src, 0, len);
	if (err) {
		bpf_ringbuf_discard_dynptr(&dst, 0);
		return;
	}
	bpf_ringbuf_submit_dynptr(&dst, 0);
	copied_msgs++;
	copied_bytes += len;
}

static void drain_stream(__u32 slot, __u32 id, __u32 s)
{
	struct bpf_stream_elem_batch *batch;
	struct bpf_stream_elem___rfc *elem;
	struct bpf_stream *stream;
	__u32 key = slot * 2 + s - 1;
	struct pending *p;
	int n;

	p = bpf_map_lookup_elem(&stash, &key);
	if (!p)
		return;
	batch = bpf_kptr_xchg(&p->batch, NULL);
	if (!batch) {
		stream = bpf_prog_stream_get(s, id);
		if (!stream)
			return;
		batch = bpf_stream_next_elem_batch(stream);
		bpf_prog_stream_put(stream);
		if (!batch)
			return;
	}
	for (n = 0; n < PER_STREAM; n++) {
		elem = bpf_stream_next_elem(batch);
		if (!elem) {
			bpf_stream_free_elem_batch(batch);
			return;
		}
		copy_elem(elem, id, s);
		bpf_stream_free_elem(elem);
	}
	batch = bpf_kptr_xchg(&p->batch, batch);
	if (batch)
		bpf_stream_free_elem_batch(batch);
	left++;
}

static long drain_slot(__u64 i, void *ctx)
{
	__u32 slot = i;

	if (slot >= MANY_MAX)
		return 1;
	drain_stream(slot, ids[slot], 1);
	drain_stream(slot, ids[slot], 2);
	return 0;
}

SEC("syscall")
int rfc_drain_many(void *ctx)
{
	copied_msgs = 0;
	copied_bytes = 0;
	left = 0;
	bpf_loop(nr_ids < MANY_MAX ? nr_ids : MANY_MAX, drain_slot, NULL, 0);
	return left ? EAGAIN : 0;
}

char LICENSE[] SEC("license") = "GPL";
