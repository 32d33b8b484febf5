// SPDX-License-Identifier: GPL-2.0
/* Test oracle, independent of bpfstderr's iterator: pinned with
 * `bpftool iter pin` and read with cat, one line per program:
 * "ID STDOUT_CAPACITY STDERR_CAPACITY".
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

SEC("iter/bpf_prog")
int capacity(struct bpf_iter__bpf_prog *ctx)
{
	struct bpf_prog *prog = ctx->prog;

	if (!prog)
		return 0;
	BPF_SEQ_PRINTF(ctx->meta->seq, "%u %d %d\n", prog->aux->id,
		       prog->aux->stream[0].capacity.counter,
		       prog->aux->stream[1].capacity.counter);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
