/* SPDX-License-Identifier: GPL-2.0 */
/* Other readers (readers.bpf.c, tool/readers.c): shared by both sides.
 *
 * The kernel gives each byte of a stream to one reader: a process that
 * reads a program's stream itself (a sched_ext scheduler's stream
 * watcher, bpftool prog tracelog) takes what bpfstderr does not, and the
 * other way round. An fexit program on the read command's kernel function
 * sees every read by another process: map "readers" holds, per program
 * and stream, the last one.
 */
#ifndef BPFSTDERR_READERS_H
#define BPFSTDERR_READERS_H

#ifndef TASK_COMM_LEN
#define TASK_COMM_LEN	16
#endif

#define READERS_MAX	4096	/* (program, stream) pairs remembered, least recent go */

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
	char comm[TASK_COMM_LEN];	/* the reading thread's */
};

#endif
