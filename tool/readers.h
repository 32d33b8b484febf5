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
#include <linux/types.h>

#include "../bpf/readers.h"
#include "stream.h"

/* A watcher that reads once a second, with room for a slow machine. */
#define READERS_LIVE_NS	(10 * 1000 * 1000 * 1000LL)

struct readers;

struct reader {
	__u32 pid;		/* in our pid namespace; 0: outside it */
	char comm[TASK_COMM_LEN];	/* printable */
	unsigned long long reads, bytes;
};

/* 0, or -errno when the kernel refuses: then there is none. */
int readers__open(struct readers **out);
void readers__close(struct readers *r);
/* Our program (not shown): its descriptor. */
int readers__prog_fd(const struct readers *r);
/* Is stream s of program id read by a live other process? true, and *rd
 * says which; false: nobody else (or no readers: r NULL).
 */
bool readers__live(struct readers *r, __u32 id, enum stream s, struct reader *rd);

#endif
