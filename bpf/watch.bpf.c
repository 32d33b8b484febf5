// SPDX-License-Identifier: GPL-2.0
/* Has any program's stream accounting changed since the last walk over
 * every program (progs.bpf.c)? Run on demand (BPF_PROG_TEST_RUN): two
 * reads per program at addresses the walk gave, instead of the kernel's
 * walk over its program table. Programs that come or go are told by perf
 * (tool/watch.c), so every address here is of a program that was loaded
 * at the walk; one freed since reads as whatever is there now, which at
 * worst asks for a walk the perf record asks for anyway.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "watch.h"

struct bpf_stream___w {
	atomic_t capacity;
	atomic64_t dropped_msgs;	/* kernel-patches/stream-drops */
} __attribute__((preserve_access_index));

struct bpf_prog_aux___w {
	struct bpf_stream___w stream[2];
} __attribute__((preserve_access_index));

struct watch_slot slots[WATCH_MAX];
__u32 nr_slots;
__u32 mark;		/* in: 0, or look for a stream at or past it (fill.h) */
__u32 busy[WATCH_BUSY_MAX];	/* in: the slots the fill check looks at */
__u32 nr_busy;		/* in: how many, or WATCH_BUSY_ALL: every slot */
__u32 changed;		/* out: index + 1 of the first slot that differs, or 0 */

/* Constant indices: CO-RE relocates a field's offset, not the size of a
 * local type an index would be multiplied by.
 */
static bool accounting_changed(struct bpf_prog_aux___w *aux, const struct watch_slot *s)
{
	if (BPF_CORE_READ(aux, stream[0].capacity.counter) != s->capacity[0] ||
	    BPF_CORE_READ(aux, stream[1].capacity.counter) != s->capacity[1])
		return true;
	if (!bpf_core_field_exists(aux->stream[0].dropped_msgs))
		return false;
	return BPF_CORE_READ(aux, stream[0].dropped_msgs.counter) != s->dropped_msgs[0] ||
	       BPF_CORE_READ(aux, stream[1].dropped_msgs.counter) != s->dropped_msgs[1];
}

static bool filling(struct bpf_prog_aux___w *aux)
{
	return BPF_CORE_READ(aux, stream[0].capacity.counter) >= mark ||
	       BPF_CORE_READ(aux, stream[1].capacity.counter) >= mark;
}

static long check_one(__u32 i, void *ctx)
{
	struct bpf_prog_aux___w *aux;
	struct watch_slot *s;

	if (i >= WATCH_MAX)
		return 1;
	s = &slots[i];
	aux = (void *)s->aux;
	if (mark ? !filling(aux) : !accounting_changed(aux, s))
		return 0;
	changed = i + 1;
	return 1;	/* one is enough: the caller walks */
}

/* A stream that is filling had bytes at the walk, or the accounting
 * changed and the next refresh walks anyway: only those slots are read.
 */
static long fill_one(__u32 i, void *ctx)
{
	__u32 k;

	if (i >= WATCH_BUSY_MAX)
		return 1;
	k = busy[i];
	if (k >= WATCH_MAX)
		return 1;
	if (!filling((void *)slots[k].aux))
		return 0;
	changed = k + 1;
	return 1;
}

SEC("syscall")
int watch_check(void *ctx)
{
	changed = 0;
	if (mark && nr_busy != WATCH_BUSY_ALL)
		bpf_loop(nr_busy, fill_one, NULL, 0);
	else
		bpf_loop(nr_slots, check_one, NULL, 0);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
