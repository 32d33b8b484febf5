/* SPDX-License-Identifier: GPL-2.0 */
/* What the accounting check (watch.bpf.c) compares, filled by tool/watch.c
 * from the last walk over every program. Plain __u types: both sides.
 */
#ifndef BPFSTDERR_WATCH_H
#define BPFSTDERR_WATCH_H

#define WATCH_MAX	32768	/* programs; more: every refresh walks */
/* The fill check (mark set) looks only at the slots whose streams had
 * bytes accounted at the walk: at most this many, else at every slot.
 */
#define WATCH_BUSY_MAX	1024
#define WATCH_BUSY_ALL	0xffffffffu

struct watch_slot {
	__u64 aux;		/* the program's struct bpf_prog_aux, a kernel address */
	__s32 capacity[2];	/* stdout, stderr, as the walk read them */
	__s64 dropped_msgs[2];	/* likewise, on kernels with the drop counters */
};

#endif
