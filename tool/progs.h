/* SPDX-License-Identifier: GPL-2.0 */
/* Every loaded BPF program, read through one BPF iterator per refresh.
 * No program fd is opened here, so nothing observed is kept alive.
 */
#ifndef BPFSTDERR_PROGS_H_USER
#define BPFSTDERR_PROGS_H_USER

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <time.h>
#include <linux/types.h>

#define STREAM_CNT		2	/* stdout, stderr */
#define STREAM_MAX_CAPACITY	100000	/* BPF_STREAM_MAX_CAPACITY */
#define ERROR_COUNT_MAX		64	/* RFC BPF_PROG_ERROR_COUNT_MAX */
#define STREAM_MSG_MAX		1024	/* MAX_BPRINTF_BUF: longest single write */

/* Full: a write of the longest message would be refused (-ENOSPC). */
static inline bool stream_full(int capacity)
{
	return capacity + STREAM_MSG_MAX >= STREAM_MAX_CAPACITY;
}

struct prog_owner {
	pid_t pid;
	char comm[16];
};

struct prog {
	__u32 id;
	__u32 type;
	__u32 uid;
	__u32 btf_id;
	__u32 jited_len;
	__u32 xlated_len;
	__u64 load_time_ns;		/* CLOCK_BOOTTIME */
	time_t loaded_at;		/* wall clock, seconds */
	char tag[17];			/* hex */
	char name[16];			/* the kernel's, cut at 15 */
	char full_name[256];		/* BTF name when cut, else name */
	bool has_streams;		/* upstream accounting available */
	bool has_error_count;		/* RFC kernels */
	int capacity[STREAM_CNT];	/* bytes accounted per stream */
	long long error_count;
	struct prog_owner *owners;
	int owner_cnt;
};

struct prog_list {
	struct prog *progs;
	size_t cnt;
	struct timespec taken;		/* CLOCK_REALTIME, before the read */
};

struct progs;

int progs__open(struct progs **out);
#define PROGS_OWNERS	(1U << 0)	/* also find owning processes (costlier) */

/* One refresh: every program loaded now, sorted by id. */
int progs__snapshot(struct progs *p, struct prog_list *out, unsigned int flags);
void progs__close(struct progs *p);

const struct prog *prog_list__find(const struct prog_list *l, __u32 id);
void prog_list__free(struct prog_list *l);

const char *prog_type_name(__u32 type);

#endif
