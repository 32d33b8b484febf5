/* SPDX-License-Identifier: GPL-2.0 */
/* The fill wake: a descriptor that becomes readable when a stream passes
 * FILL_MARK bytes accounted (bpf/fill.h), so that it is drained before it
 * fills and the kernel refuses reports. The kernel tells us at each push
 * (fexit programs on the functions that charge a stream, bpf/fill.bpf.c);
 * where attaching there is refused (no BPF trampolines, lockdown, an
 * older kernel) there is no fill wake, and readers fall back to the
 * watch's check (watch__filling()).
 */
#ifndef BPFSTDERR_FILL_H_USER
#define BPFSTDERR_FILL_H_USER

#include <linux/types.h>

#include "../bpf/fill.h"

/* The fallback's period, seconds: while streams are busy, readers without
 * a fill wake ask the watch this often whether one passed FILL_MARK.
 */
#define FILL_TICK	0.01
#define FILL_TICK_ALL	10	/* every tenth tick looks at every program */

struct fill;

/* 0, or -errno when the kernel refuses: then there is none. */
int fill__open(struct fill **out);
void fill__close(struct fill *f);
/* Readable (POLLIN) once a stream passed the mark since the last rearm. */
int fill__fd(const struct fill *f);
/* Empties what woke us and arms the next wake: call it before waiting
 * again, after draining.
 */
void fill__rearm(struct fill *f);
/* Each wake since the last call: whose stream passed the mark (stream:
 * enum stream). Then call fill__rearm().
 */
typedef void (*fill_fn)(__u32 prog_id, unsigned int stream, void *ctx);
void fill__consume(struct fill *f, fill_fn fn, void *ctx);
/* Arms the next wake now (fill__rearm() without consuming): a wake the
 * kernel could not deliver is not waited for forever.
 */
void fill__arm(struct fill *f);
/* Only streams of programs ids[] (sorted) in streams (STREAM_MASK_*) wake
 * us from now on; until the first call, every stream does. 0, or -errno
 * (then every stream wakes).
 */
int fill__select(struct fill *f, const __u32 *ids, size_t cnt, unsigned int streams);
/* Pushes to stream s (enum stream) of program id the kernel refused as
 * full (-ENOSPC) since open.
 */
unsigned long long fill__refused(const struct fill *f, __u32 id, unsigned int s);
/* Moves with every refused push counted: the counts did not change while
 * it did not (no syscall).
 */
unsigned long long fill__refused_seq(const struct fill *f);
/* Each program with pushes refused since open, its counts as in the map
 * (index stream_idx()); a nonzero return of fn stops the walk, and is
 * returned. 0, or -errno.
 */
typedef int (*fill_refused_fn)(__u32 id, const struct fill_refused *n, void *ctx);
int fill__each_refused(const struct fill *f, fill_refused_fn fn, void *ctx);
/* A program gone: its counts go (the map holds FILL_REFUSED_MAX). */
void fill__forget(struct fill *f, __u32 id);
/* Our programs (not shown): their descriptors. */
void fill__prog_fds(const struct fill *f, int fds[2]);

#endif
