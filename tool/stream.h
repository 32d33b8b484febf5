/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a program's stdout/stderr. Reads are destructive. */
#ifndef BPFSTDERR_STREAM_H
#define BPFSTDERR_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "streamio.h"

/* Bytes accounted to both streams together. */
static inline long long stream_accounted(const int capacity[STREAM_CNT])
{
	return (long long)capacity[stream_idx(STREAM_STDOUT)] + capacity[stream_idx(STREAM_STDERR)];
}

/* The fuller stream's bytes accounted. */
static inline int stream_fullest(const int capacity[STREAM_CNT])
{
	int out = capacity[stream_idx(STREAM_STDOUT)], err = capacity[stream_idx(STREAM_STDERR)];

	return out > err ? out : err;
}

static inline unsigned long long stream_sum(const unsigned long long v[STREAM_CNT])
{
	return v[stream_idx(STREAM_STDOUT)] + v[stream_idx(STREAM_STDERR)];
}

/* "stdout", "stderr" */
const char *stream_name(enum stream s);
/* The stream named so by stream_name(): 0, or -EINVAL. */
int stream_from_name(const char *name, enum stream *s);

enum stream_backend {
	BACKEND_NONE,
	BACKEND_UPSTREAM,	/* BPF_PROG_STREAM_READ_BY_FD, 6.17+ */
	BACKEND_RFC,		/* drain program with the RFC kfuncs (seed series) */
};

/* RFC drain kfuncs all present in the kernel's BTF. */
bool stream_rfc_kfuncs_present(void);
/* Whether this kernel has backend b. */
bool stream_backend_available(enum stream_backend b);
/* The backend to read with: the one forced (--backend) if this kernel has
 * it, else BACKEND_NONE; when none is forced, the read command where there
 * is one, else the RFC drain program where its kfuncs are.
 */
enum stream_backend stream_backend_detect(void);
const char *stream_backend_name(enum stream_backend b);
/* "upstream" or "rfc": 0, else -EINVAL. */
int stream_backend_from_name(const char *name, enum stream_backend *b);
/* --backend: read with b only (BACKEND_NONE: choose, the default). */
void stream_backend_force(enum stream_backend b);
enum stream_backend stream_backend_forced(void);
/* Why this kernel lacks backend b, for a message. */
const char *stream_backend_missing(enum stream_backend b);

struct drainer;

/* A drain program this process loaded (the rfc backend's): listings leave
 * it out, as they leave out bpfstderr's other programs (progs__own()).
 */
bool stream_own_prog(__u32 id);

int drainer__new(struct drainer **out, enum stream_backend b);
/* Empty the program's streams in mask, reading until each is empty. The
 * program is opened by id for this call only, so the observer never keeps
 * it alive. -ENOENT: the program is gone.
 */
int drainer__drain(struct drainer *d, __u32 prog_id, unsigned int mask, drain_fn fn, void *ctx);
void drainer__free(struct drainer *d);

struct fill;
struct rescue;
/* Read ahead of the drains (rescue.h): a thread that f's wakes wake reads
 * streams into memory, and drainer__drain() hands that out in turn.
 * Upstream backend only; -errno when it cannot start. f's refusal counts
 * are drainer__refused()'s either way.
 */
int drainer__rescue_start(struct drainer *d, struct fill *f);
/* The rescue started, for its own calls (rescue.h), or NULL. */
struct rescue *drainer__rescue(const struct drainer *d);
/* Pushes to the stream the kernel refused as full since the fill wake
 * was given (drainer__rescue_start()), counted by it; else 0.
 */
unsigned long long drainer__refused(struct drainer *d, __u32 id, enum stream s);
/* The fill wake given (drainer__rescue_start()), or NULL. */
struct fill *drainer__fill(const struct drainer *d);

#endif
