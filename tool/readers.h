/* SPDX-License-Identifier: GPL-2.0 */
/* Other readers: processes other than bpfstderr that read programs'
 * streams themselves (a sched_ext scheduler reads its own stderr and
 * stops on an error report; bpftool prog tracelog). The kernel gives each
 * byte to one reader, so a stream another process reads is left to it:
 * bpfstderr reading it too would take reports that process relies on.
 * Seen by an fexit program on the read command (bpf/readers.bpf.c), from
 * each process's first read after open; where the kernel refuses it
 * (no BPF trampolines, lockdown, no streams) there is none, and nobody
 * else is seen.
 *
 * Live: a process seen reading the stream within READERS_LIVE_NS, still
 * running. bpfstderr processes are never others: they share a journal,
 * whose read rights order their reads (journal.h), or read alone.
 */
#ifndef BPFSTDERR_READERS_H_USER
#define BPFSTDERR_READERS_H_USER

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "../bpf/readers.h"
#include "progs.h"
#include "stream.h"

/* A watcher that reads once a second, with room for a slow machine. */
#define READERS_LIVE_NS	(10 * 1000 * 1000 * 1000LL)

struct readers;

/* A process other than bpfstderr that read a stream. */
struct reader_id {
	__u32 pid;		/* in our pid namespace; 0: outside it */
	char comm[TASK_COMM_LEN];	/* printable */
};

/* "comm(pid)", or "comm (outside our pid namespace)": how a reader is named. */
#define READER_NAME_MAX	64
const char *reader_name(const struct reader_id *id, char *buf, size_t len);

struct reader {
	struct reader_id id;
	unsigned long long reads, bytes;
};

/* What a read of another process returned, or part of it (struct
 * mirror_rec): mirrored, in the order the reads ended.
 */
struct mirrored {
	struct prog_ident prog;	/* perhaps unloaded since */
	char kname[PROG_KNAME_MAX];
	enum stream stream;
	unsigned long long ns;	/* CLOCK_MONOTONIC when the read ended */
	unsigned int off;	/* of these bytes in what the read returned */
	struct reader_id who;
	const void *buf;
	size_t len;
	size_t missed;		/* bytes after these that were not copied */
	/* reads of the stream before this one were lost whole (the ring was
	 * full): what is held of it ends before these bytes
	 */
	bool gap;
};

/* Called for each piece; non-zero stops and is returned: that piece is
 * gone (the ring moved past it), the ones after it stay for the next call.
 */
typedef int (*mirror_fn)(const struct mirrored *m, void *ctx);

/* 0, or -errno when the kernel refuses: then there is none. */
int readers__open(struct readers **out);
void readers__close(struct readers *r);
/* Our program (not shown): its descriptor. */
int readers__prog_fd(const struct readers *r);
/* Is stream s of program id read by a live other process? true, and *rd
 * says which; false: nobody else (or no readers: r NULL).
 */
bool readers__live(struct readers *r, __u32 id, enum stream s, struct reader *rd);
/* Hands out what other processes' reads returned since the last call
 * (fn's return, or 0; nothing without readers). The ring's descriptor
 * is readable when there is something: poll it to show reads at once.
 */
int readers__mirror(struct readers *r, mirror_fn fn, void *ctx);
int readers__mirror_fd(const struct readers *r);
/* Reads of which not even the end could be told (the ring was full). */
unsigned long long readers__mirror_lost(const struct readers *r);

#endif
