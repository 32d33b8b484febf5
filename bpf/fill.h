/* SPDX-License-Identifier: GPL-2.0 */
/* The fill wake (fill.bpf.c, tool/fill.c): shared by both sides.
 *
 * Mark: the bytes accounted to one stream past which it is drained now,
 * not at the next interval. A quarter of BPF_STREAM_MAX_CAPACITY: at
 * 10,000 fault reports a second (~6 MB/s) the other three quarters last
 * about 12 ms, the time a reader has to be woken and read.
 */
#ifndef BPFSTDERR_FILL_H
#define BPFSTDERR_FILL_H

#define FILL_MARK	25000

/* Pushes the kernel refused with -ENOSPC (the stream was full), per
 * program (map "refused", by program id) and stream (index: stream - 1),
 * since the fill wake was attached.
 */
struct fill_refused {
	__u64 n[2];
};

/* Programs the map "refused" counts at once: readers forget the unloaded
 * ones (fill__forget()).
 */
#define FILL_REFUSED_MAX	16384

/* Programs the reader can select for wakes (map "selected"): with more,
 * every stream wakes it.
 */
#define FILL_SELECTED_MAX	16384

/* One wake: whose stream passed the mark (stream: enum stream). */
struct fill_wake {
	__u32 prog_id;
	__u32 stream;
};

#endif
