/* SPDX-License-Identifier: GPL-2.0 */
/* Whether the kernel's program list changed since the last walk over it,
 * without walking: programs that come or go are told by perf
 * (PERF_RECORD_BPF_EVENT, on every CPU), and the stream accounting of
 * those the walk saw is compared with what it saw by one BPF program run
 * (bpf/watch.bpf.c). Where either is refused there is no watch, and
 * progs__refresh() walks every time.
 */
#ifndef BPFSTDERR_WATCH_H_USER
#define BPFSTDERR_WATCH_H_USER

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

struct watch;
struct prog_rec;

int watch__open(struct watch **out);
void watch__close(struct watch *w);
/* The check program: ours, not shown. */
int watch__prog_fd(const struct watch *w);
/* Did a program come or go since the last call? */
bool watch__came_went(struct watch *w);
/* What a walk saw, for watch__changed(); false when there are more
 * programs than the check holds (then the caller walks every time).
 */
bool watch__remember(struct watch *w, const struct prog_rec *recs, size_t cnt);
/* 1: a remembered program's accounting is not what the walk saw; 0: every
 * one is; -errno.
 */
int watch__changed(struct watch *w);
/* 1: a remembered program has a stream at or past FILL_MARK bytes
 * accounted (drain it now); 0: none has; -errno. The fill wake's fallback
 * (tool/fill.h), one check like watch__changed(), over the programs with
 * bytes accounted at the walk only, or over every one (every).
 */
int watch__filling(struct watch *w, bool every);

#endif
