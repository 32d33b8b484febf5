// SPDX-License-Identifier: GPL-2.0
/* The RFC series' way to read a stream (seeds 006, 010): a syscall program
 * pulls the stream's message batch with the RFC kfuncs and copies each
 * message into a ring buffer. Built everywhere, loaded only on kernels
 * whose BTF has these kfuncs (the RFC's, or 7.3 with kernel-patches/rfc-drain/,
 * whose prototypes these are). Uses only uapi types, because the kernel's
 * own struct bpf_stream_elem differs between the RFC and upstream.
 */
#include <stdbool.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>

#define EAGAIN 11
#define ENOENT 2
#define EFAULT 14
#define DRAIN_MAX_MSGS 512	/* a bounded loop the verifier walks */
#define MSG_MAX 1024		/* MAX_BPRINTF_BUF: no message is longer */

#include "rfc_kfuncs.h"

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 * 1024 * 1024);
} msgs SEC(".maps");

/* A batch that did not fit in the ring buffer waits here for the next run. */
struct pending {
	struct bpf_stream_elem_batch __attribute__((btf_type_tag("kptr"))) *batch;
};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__type(key, int);
	__type(value, struct pending);
	__uint(max_entries, 1);
} stash SEC(".maps");

__u32 prog_id;
int stream_id;
__u32 copied_msgs;
__u64 copied_bytes;

/* A message popped from the batch cannot be put back: make sure the next
 * one fits before popping it.
 */
static bool room_for_one(void)
{
	struct bpf_dynptr probe;
	bool ok = !bpf_ringbuf_reserve_dynptr(&msgs, MSG_MAX, 0, &probe);

	bpf_ringbuf_discard_dynptr(&probe, 0);
	return ok;
}

static int copy_one(struct bpf_stream_elem___rfc *elem)
{
	struct bpf_dynptr src, dst;
	__u32 len = BPF_CORE_READ(elem, mem_slice.len);
	int err = 0;

	if (bpf_dynptr_from_mem_slice(&elem->mem_slice, 0, &src))
		return -EFAULT;
	if (bpf_ringbuf_reserve_dynptr(&msgs, len, 0, &dst)) {
		bpf_ringbuf_discard_dynptr(&dst, 0);
		return -EFAULT;
	}
	if (bpf_dynptr_copy(&dst, 0, &src, 0, len))
		err = -EFAULT;
	bpf_ringbuf_submit_dynptr(&dst, 0);
	copied_msgs++;
	copied_bytes += len;
	return err;
}

SEC("syscall")
int rfc_drain(void *ctx)
{
	struct bpf_stream_elem_batch *batch;
	struct bpf_stream_elem___rfc *elem;
	struct bpf_stream *stream;
	struct pending *p;
	int i, ret = 0, zero = 0;

	stream = bpf_prog_stream_get(stream_id, prog_id);
	if (!stream)
		return ENOENT;
	p = bpf_map_lookup_elem(&stash, &zero);
	if (!p) {
		bpf_prog_stream_put(stream);
		return EFAULT;
	}
	batch = bpf_kptr_xchg(&p->batch, NULL);
	if (!batch)
		batch = bpf_stream_next_elem_batch(stream);
	bpf_prog_stream_put(stream);
	if (!batch)
		return 0;
	for (i = 0; i < DRAIN_MAX_MSGS; i++) {
		if (!room_for_one()) {
			ret = -EAGAIN;
			break;
		}
		elem = bpf_stream_next_elem(batch);
		if (!elem)
			break;
		ret = copy_one(elem);
		bpf_stream_free_elem(elem);
		if (ret)
			break;
	}
	if (ret == -EAGAIN || i == DRAIN_MAX_MSGS) {
		batch = bpf_kptr_xchg(&p->batch, batch);
		if (batch)
			bpf_stream_free_elem_batch(batch);
		return EAGAIN;
	}
	bpf_stream_free_elem_batch(batch);
	return ret ? EFAULT : 0;
}

char LICENSE[] SEC("license") = "GPL";
