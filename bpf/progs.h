/* SPDX-License-Identifier: GPL-2.0 */
/* Records written by the enumeration iterators (progs.bpf.c) and read by
 * tool/progs.c. Shared by the BPF and user-space sides, so plain __u types.
 */
#ifndef BPFSTDERR_PROGS_H
#define BPFSTDERR_PROGS_H

#define PROG_NAME_LEN		16	/* BPF_OBJ_NAME_LEN */
#define PROG_KSYM_LEN		256
#define PROG_TAG_LEN		8	/* BPF_TAG_SIZE */
#define TASK_COMM_LEN		16

/* prog_rec.flags */
#define PROG_REC_HAS_STREAMS	(1U << 0)	/* aux->stream[] with capacity */
#define PROG_REC_HAS_ERR_COUNT	(1U << 1)	/* aux->error_count (RFC kernels) */
#define PROG_REC_RFC_STREAMS	(1U << 2)	/* aux->stream[] without capacity */
#define PROG_REC_HAS_DROPS	(1U << 3)	/* bpf_stream.dropped_msgs/_bytes
						 * (kernel-patches/stream-drops) */
#define PROG_REC_HAS_STATS	(1U << 4)	/* run_cnt, run_time_ns summed */

/* A program's identity as the kernel holds it (struct bpf_prog and its
 * aux), read by prog_id_read() (prog_id.bpf.h): the enumeration's records
 * and the mirror's (readers.h) carry it, so a program is known after it
 * was unloaded.
 */
struct prog_id_rec {
	__u32 id;
	__u32 type;
	__u64 load_time;		/* CLOCK_BOOTTIME, ns */
	__u8 tag[PROG_TAG_LEN];
	char name[PROG_NAME_LEN];
	/* "bpf_prog_<tag>_<full name>", only when name is cut (else empty) */
	char ksym[PROG_KSYM_LEN];
};

struct prog_rec {
	struct prog_id_rec ident;
	__s64 error_count;
	__s32 capacity[2];		/* stdout, stderr; bytes accounted */
	__u32 uid;
	__u32 btf_id;
	__u32 jited_len;
	__u32 xlated_len;
	__u32 flags;
	__s64 dropped_msgs[2];		/* stdout, stderr; PROG_REC_HAS_DROPS */
	__s64 dropped_bytes[2];
	/* prog->stats summed over the possible CPUs, as bpf_prog_get_stats()
	 * does; they grow only while kernel.bpf_stats_enabled is on
	 */
	__u64 run_cnt;
	__u64 run_time_ns;
	__u64 recursion_misses;
	__u64 aux_addr;			/* struct bpf_prog_aux: tool/watch.c's check */
};

struct owner_rec {
	__u32 prog_id;
	__u32 pid;
	char comm[TASK_COMM_LEN];
};

#endif
