/* SPDX-License-Identifier: GPL-2.0 */
/* Other readers (readers.bpf.c, tool/readers.c): shared by both sides.
 *
 * The kernel gives each byte of a stream to one reader: a process that
 * reads a program's stream itself (a sched_ext scheduler's stream
 * watcher, bpftool prog tracelog) takes what bpfstderr does not, and the
 * other way round. An fexit program on the read command's kernel function
 * sees every read by another process: map "readers" holds, per program
 * and stream, the last one, and ring "mirror" a copy of what each read
 * returned (mirrored: bpfstderr keeps and shows what the other process
 * took, which still gets every byte).
 */
#ifndef BPFSTDERR_READERS_H
#define BPFSTDERR_READERS_H

#include "progs.h"	/* struct prog_id_rec, TASK_COMM_LEN */

#define READERS_MAX	4096	/* (program, stream) pairs remembered, least recent go */
#define MIRROR_CHUNK	4096	/* bytes of a read per mirror record */
/* A read returns at most what the stream holds (about 100 KB, and one
 * message more): 32 records cover it; what a longer one returned past
 * them is counted (missed), not copied.
 */
#define MIRROR_CHUNKS	32
#define MIRROR_RING	(2 << 20)	/* bytes */

struct reader_key {
	__u32 prog_id;
	__u32 stream;		/* enum stream */
};

/* The last read of another process. */
struct reader_rec {
	__u64 last_ns;		/* bpf_ktime_get_ns(): CLOCK_MONOTONIC */
	__u64 reads;		/* reads seen, empty ones included */
	__u64 bytes;		/* bytes they returned */
	__u32 pid;		/* in bpfstderr's pid namespace; 0: outside it */
	/* the kernel's own (initial namespace) tgid: a read by the process
	 * that read last is told by it alone, its pid and name kept
	 */
	__u32 tgid;
	__u32 peer;		/* another bpfstderr: not mirrored */
	__u32 gap;		/* a read was lost since the last mirrored piece */
	char comm[TASK_COMM_LEN];	/* the reading thread's */
};

/* A piece of what a read of another process returned: its bytes from
 * off, len of them. missed: bytes from off + len on that were not copied
 * (the ring was full, or past MIRROR_CHUNKS). gap: on a read's first
 * piece, reads of the stream before it were lost whole (not even a header
 * fitted: mirror_lost). The pieces of one read
 * share ns, and come in order. The program's whole identity comes along:
 * it may be unloaded before bpfstderr takes the piece (a scheduler that
 * read its last report and exits).
 */
struct mirror_rec {
	__u64 ns;		/* bpf_ktime_get_ns() when the read ended */
	struct prog_id_rec prog;
	__u32 stream;		/* enum stream */
	__u32 pid;		/* as in struct reader_rec */
	__u32 off;
	__u32 len;
	__u32 missed;
	__u32 gap;
	char comm[TASK_COMM_LEN];
	char data[MIRROR_CHUNK];
};

#endif
