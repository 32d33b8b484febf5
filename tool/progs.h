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

#include "streamio.h"

#define STREAM_MAX_CAPACITY	100000	/* BPF_STREAM_MAX_CAPACITY */
#define ERROR_COUNT_MAX		64	/* RFC BPF_PROG_ERROR_COUNT_MAX */
/* The longest push to a stream: a message is at most 1024 B
 * (MAX_BPRINTF_BUF), but a fault report is charged whole, at once, by
 * bpf_stream_stage_commit(), and may be longer. 6.17's
 * res_spin_lock report lists up to 31 held locks (RES_NR_HELD, 35 B a
 * line) and its held-lock table is not emptied after a deadlock: its
 * reports grew from 615 B to 1631 B in the lab, a burst leaving 1063 B
 * free that no report fitted in. 2048: that, and a deeper stack.
 */
#define STREAM_PUSH_MAX		2048

/* Full: a push of the longest message or report would be refused
 * (-ENOSPC).
 */
static inline bool stream_full(int capacity)
{
	return capacity + STREAM_PUSH_MAX >= STREAM_MAX_CAPACITY;
}

/* Losing reports: the one definition every view uses. With the kernel's
 * drop counters, what it counted. Without them, bytes accounted that a
 * read which ran to its end did not return (leaked; never bytes written
 * since that read), or a stream a drain found full before its read (the
 * kernel refuses what does not fit: how many, nothing says).
 */
static inline bool stream_losing(bool has_drops, long long dropped_msgs, int leaked,
				 long long full_ns)
{
	if (has_drops)
		return dropped_msgs > 0;
	return leaked > 0 || full_ns;
}

struct prog_owner {
	pid_t pid;
	char comm[16];
};

#define PROG_TAG_HEX		17	/* 16 hex digits and a NUL */
#define PROG_NAME_MAX		256
#define PROG_KNAME_MAX		16	/* BPF_OBJ_NAME_LEN */

/* Who a program is, for every part of bpfstderr. An id can come back
 * after its program is unloaded, so (id, load time, tag) is the identity,
 * compared by prog_ident__same() alone; the journal keys on it too.
 */
struct prog_ident {
	__u32 id;
	__u32 type;
	__u64 load_time_ns;		/* CLOCK_BOOTTIME */
	char tag[PROG_TAG_HEX];		/* hex */
	char name[PROG_NAME_MAX];	/* full name: BTF's when the kernel's is cut */
};

bool prog_ident__same(const struct prog_ident *a, const struct prog_ident *b);
struct prog_id_rec;
/* An identity as a BPF program read it (bpf/progs.h): kname gets the
 * kernel's name, id->name the full one where the kernel's is cut.
 */
void prog_ident_of(struct prog_ident *id, char kname[PROG_KNAME_MAX], const struct prog_id_rec *r);

struct prog {
	struct prog_ident ident;
	char kname[PROG_KNAME_MAX];	/* the kernel's, cut at 15 */
	__u32 uid;
	__u32 btf_id;
	__u32 jited_len;
	__u32 xlated_len;
	time_t loaded_at;		/* wall clock, seconds */
	bool has_streams;		/* upstream accounting available */
	bool has_error_count;		/* RFC kernels */
	int capacity[STREAM_CNT];	/* bytes accounted per stream */
	/* Kernels with the drop counters (kernel-patches/stream-drops): what
	 * each stream refused, messages and fault reports alike. Without
	 * them, loss shows only as capacity no read gives back.
	 */
	bool has_drops;
	long long dropped_msgs[STREAM_CNT];
	long long dropped_bytes[STREAM_CNT];
	long long error_count;
	/* the kernel's runtime statistics, summed over CPUs in the same
	 * iterator read; they count only while kernel.bpf_stats_enabled is on
	 */
	bool has_stats;
	unsigned long long run_cnt, run_time_ns, recursion_misses;
	struct prog_owner *owners;
	int owner_cnt;
};

struct prog_list {
	struct prog *progs;
	size_t cnt;
	struct timespec taken;		/* CLOCK_REALTIME, before the read */
	/* progs__refresh() only (0 in a snapshot): a new gen whenever the
	 * list was read again or its owners changed; the same gen, the same
	 * list, unchanged. active: indices of the programs with bytes
	 * accounted or no accounting to tell, which a drain reads.
	 */
	unsigned long long gen;
	size_t *active;
	size_t cnt_active;
};

struct progs;

int progs__open(struct progs **out);
#define PROGS_OWNERS	(1U << 0)	/* also find owning processes (costlier) */

/* One refresh: every program loaded now, sorted by id. */
int progs__snapshot(struct progs *p, struct prog_list *out, unsigned int flags);
/* The list as it is now, kept by p and valid until the next refresh or
 * close. With the watch (progs__watch()), the kernel's list is walked only
 * when a program came or went or a stream's accounting may have changed
 * since the last refresh; without it, every refresh walks. Owners (when
 * asked) are looked up when programs came or went, when a process that
 * owned one exited (a pidfd each, up to OWNER_EXITS_MAX processes), and
 * at least every PROGS_OWNERS_MAX_AGE seconds (a process that took an fd
 * of a program: the kernel tells nobody); every
 * PROGS_OWNERS_UNWATCHED_AGE seconds when exits cannot be watched. The
 * lookup walks every process's files: its cost grows with the machine's
 * processes, not its programs.
 */
int progs__refresh(struct progs *p, const struct prog_list **out, unsigned int flags);
#define PROGS_OWNERS_MAX_AGE		30	/* seconds */
#define PROGS_OWNERS_UNWATCHED_AGE	5	/* seconds */
#define OWNER_EXITS_MAX			128
/* Tests shorten PROGS_OWNERS_MAX_AGE. */
void progs__owners_max_age(struct progs *p, int secs);
/* Watch the kernel's program list for progs__refresh() (watch.h: perf's
 * program load and unload events, and one run of bpf/watch.bpf.c over the
 * accounting the last walk saw); tried once. 0, or why not (-ECANCELED:
 * BPFSTDERR_FULL_WALK is set).
 */
int progs__watch(struct progs *p);
const char *progs__mode(const struct progs *p);	/* "watch" or "walk (...)" */
/* The fill wake (fill.h), opened at the first call of either (tried
 * once): its descriptor for a reader's wait, or -1 without one; rearm it
 * after each drain.
 */
int progs__fill_fd(struct progs *p);
void progs__fill_rearm(struct progs *p);
struct fill *progs__fill(struct progs *p);	/* NULL: none */
/* 0, or why there is no fill wake (-ECANCELED: BPFSTDERR_NO_FILL_WAKE). */
int progs__fill_err(struct progs *p);
/* Other readers (readers.h), opened at the first call of either: NULL
 * when the kernel refuses it, and why (-errno).
 */
struct readers *progs__readers(struct progs *p);
int progs__readers_err(struct progs *p);
/* Without a fill wake: has a stream the last walk saw passed FILL_MARK
 * (watch__filling(): of the programs with bytes at the walk, or of every
 * one)? 1, 0, -errno (-ENOENT: no watch to ask).
 */
int progs__filling(struct progs *p, bool every);
/* One of p's own programs (iterators, the watch's check): lists leave them out. */
bool progs__own(const struct progs *p, __u32 id);
void progs__close(struct progs *p);
/* Sum each program's runtime statistics in the snapshots (prog.has_stats):
 * three reads per possible CPU and program, so only while they are shown.
 */
void progs__want_stats(struct progs *p, bool on);

const struct prog *prog_list__find(const struct prog_list *l, __u32 id);
/* Where id is in ids (sorted), or NULL: the index other lists keep beside
 * their entries, so that a lookup touches none of them.
 */
const __u32 *prog_ids_find(const __u32 *ids, size_t cnt, __u32 id);
void prog_list__free(struct prog_list *l);

const char *prog_type_name(__u32 type);

#endif
