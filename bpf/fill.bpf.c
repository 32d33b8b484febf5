// SPDX-License-Identifier: GPL-2.0
/* The fill wake: after every push to a stream (fexit on the functions
 * that charge it: the printk kfunc, and bpf_stream_stage_commit() for
 * fault reports and stack dumps), look at the stream's accounting; past
 * FILL_MARK, wake the reader once through the ring buffer. Once: "armed"
 * is cleared by the wake and set again by the reader when it has drained,
 * so a storm costs one wake per drain, not one per report.
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

__u64 armed;
__u64 nr_wakes;		/* out: wakes sent, for doctor and tests */

/* stream_id as the kernel numbers it: 1 stdout, 2 stderr. Constant
 * indices: CO-RE relocates a field's offset, not an index's stride.
 */
static int accounted(struct bpf_prog_aux___f *aux, int stream_id)
{
	if (stream_id == 1)
		return BPF_CORE_READ(aux, stream[0].capacity.counter);
	if (stream_id == 2)
		return BPF_CORE_READ(aux, stream[1].capacity.counter);
	return 0;
}

static void pushed(struct bpf_prog_aux___f *aux, int stream_id)
{
	struct fill_wake *r;

	if (!aux || accounted(aux, stream_id) < FILL_MARK)
		return;
	if (!__sync_lock_test_and_set(&armed, 0))
		return;
	r = bpf_ringbuf_reserve(&wakes, sizeof(*r), 0);
	if (!r)
		return;
	r->prog_id = BPF_CORE_READ(aux, id);
	r->stream = stream_id;
	bpf_ringbuf_submit(r, 0);
	__sync_fetch_and_add(&nr_wakes, 1);
}

/* int bpf_stream_vprintk[_impl](int stream_id, const char *fmt,
 *				  const void *args, u32 len, aux)
 */
SEC("fexit")
int BPF_PROG(fill_printk, int stream_id, const char *fmt, const void *args, __u32 len,
	     struct bpf_prog_aux___f *aux, int ret)
{
	pushed(aux, stream_id);
	return 0;
}

/* int bpf_stream_stage_commit(struct bpf_stream_stage *ss,
 *			       struct bpf_prog *prog, enum bpf_stream_id id)
 */
SEC("fexit")
int BPF_PROG(fill_commit, void *ss, struct bpf_prog___f *prog, int stream_id, int ret)
{
	pushed(BPF_CORE_READ(prog, aux), stream_id);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
