/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a program's stdout/stderr. Reads are destructive. */
#ifndef BPFSTDERR_STREAM_H
#define BPFSTDERR_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "../bpf/stream_ids.h"

#ifndef BPF_PROG_STREAM_READ_BY_FD
#define BPF_PROG_STREAM_READ_BY_FD 37
#endif

#define STREAM_CNT		2	/* stdout, stderr */

/* Per-stream arrays hold STREAM_CNT values, indexed by stream_idx(). */
static inline int stream_idx(enum stream s)
{
	return s - STREAM_STDOUT;
}

/* Bytes accounted to both streams together. */
static inline long long stream_accounted(const int capacity[STREAM_CNT])
{
	return (long long)capacity[0] + capacity[1];
}

/* The fuller stream's bytes accounted. */
static inline int stream_fullest(const int capacity[STREAM_CNT])
{
	return capacity[0] > capacity[1] ? capacity[0] : capacity[1];
}

static inline unsigned long long stream_sum(const unsigned long long v[STREAM_CNT])
{
	return v[0] + v[1];
}

#define for_each_stream(s)	for ((s) = STREAM_STDOUT; (s) <= STREAM_STDERR; (s)++)
#define STREAM_MASK(s)		(1U << (s))
#define STREAM_MASK_BOTH	(STREAM_MASK(STREAM_STDOUT) | STREAM_MASK(STREAM_STDERR))

/* "stdout", "stderr" */
const char *stream_name(enum stream s);
/* The stream named so by stream_name(): 0, or -EINVAL. */
int stream_from_name(const char *name, enum stream *s);

/* bpf(BPF_PROG_STREAM_READ_BY_FD): bytes copied, 0 when empty, -errno. */
ssize_t stream_read_fd(int prog_fd, enum stream s, void *buf, size_t len);

enum stream_backend {
	BACKEND_NONE,
	BACKEND_UPSTREAM,	/* BPF_PROG_STREAM_READ_BY_FD, 6.17+ */
	BACKEND_RFC,		/* drain program with the RFC kfuncs (seed series) */
};

/* RFC drain kfuncs all present in the kernel's BTF. */
bool stream_rfc_kfuncs_present(void);
enum stream_backend stream_backend_detect(void);
const char *stream_backend_name(enum stream_backend b);

#define STREAM_READ_BUF		(64 * 1024)

/* Bytes drained from one stream; non-zero stops the drain. */
typedef int (*drain_fn)(__u32 prog_id, enum stream s, const void *buf, size_t len, void *ctx);

struct drainer;

int drainer__new(struct drainer **out, enum stream_backend b);
/* Empty the program's streams in mask, reading until each is empty. The
 * program is opened by id for this call only, so the observer never keeps
 * it alive. -ENOENT: the program is gone.
 */
int drainer__drain(struct drainer *d, __u32 prog_id, unsigned int mask, drain_fn fn, void *ctx);
void drainer__free(struct drainer *d);

struct fill;
/* Read ahead of the drains (rescue.h): a thread that f's wakes wake reads
 * streams into memory, and drainer__drain() hands that out in turn. Upstream backend only; -errno when it cannot start. f's
 * refusal counts are drainer__refused()'s either way.
 */
int drainer__rescue_start(struct drainer *d, struct fill *f);
/* The thread stops (before a last drain: nothing is read after it). */
void drainer__rescue_stop(struct drainer *d);
bool drainer__rescuing(const struct drainer *d);
/* rescue__notify_fd(), or -1 without a rescue; rescue__notified(). */
int drainer__rescue_fd(struct drainer *d);
void drainer__rescue_notified(struct drainer *d);
/* What the thread may read (rescue__allow()); nothing without a rescue. */
int drainer__rescue_allow(struct drainer *d, const __u32 *ids, size_t cnt, unsigned int streams,
			  bool room, bool anytime);
/* A stream past the mark: what the rescue's thread does with it. */
enum rescue_claim {
	RESCUE_ASK,	/* wake the main thread, for a drain (the default) */
	RESCUE_READ,	/* read it: this process holds its read right (journal.h) */
	RESCUE_LEAVE,	/* nothing: another process holds its read right, or reads
			 * the stream itself (readers.h)
			 */
};
/* rescue__claim(); 0 without a rescue. */
int drainer__rescue_claim(struct drainer *d, __u32 id, enum stream s, enum rescue_claim c);
/* rescue__keep(); false without a rescue. */
bool drainer__rescue_keep(struct drainer *d, __u32 id, enum stream s);
/* Only what the rescue holds of stream s of program id, handed to fn; the
 * stream is not read.
 */
int drainer__drain_held(struct drainer *d, __u32 id, enum stream s, drain_fn fn, void *ctx);
/* Bytes held for program id's streams in mask (mask 0: for any program). */
bool drainer__held(struct drainer *d, __u32 id, unsigned int mask);
/* Pushes to the stream the kernel refused as full since the fill wake
 * was given (drainer__rescue_start()), counted by it; else 0.
 */
unsigned long long drainer__refused(struct drainer *d, __u32 id, enum stream s);

#endif
