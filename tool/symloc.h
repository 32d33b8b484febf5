/* SPDX-License-Identifier: GPL-2.0 */
/* What a frame is symbolized to, and the symbolizer's options: the types
 * the symbolizer (symbolize.c) shares with its halves (ksym.c, bpfsym.c)
 * and the cache (symcache.c), which sit below it and never call up.
 */
#ifndef BPFSTDERR_SYMLOC_H
#define BPFSTDERR_SYMLOC_H

#include <stdbool.h>

#define SYM_INLINE_MAX		16
#define SYM_CANDIDATES_MAX	8

struct sym_site {
	const char *func;
	const char *file;
	int line, col;
};

struct sym_loc {
	bool found;
	unsigned long long addr;	/* the address looked up */
	bool exact;			/* trapping instruction, not addr - 1 */
	/* innermost first: sites[0] is where addr is, sites[i>0] the calls
	 * that inlined sites[i-1] (kernel frames with DWARF)
	 */
	struct sym_site sites[SYM_INLINE_MAX];
	int site_cnt;
	const char *src_text;		/* BPF: the source line from BTF */
	int candidates;			/* > 1: the name is ambiguous */
	unsigned long long cand_addr[SYM_CANDIDATES_MAX];
	/* BPF: the kernel printed a line under the frame that our line info
	 * does not give (or gives among others): sites[0] and src_text are
	 * the kernel's; ours is what the line info said (file NULL: nothing).
	 */
	bool kernel_line;
	struct sym_site ours;
};

struct symbolizer_opts {
	const char *vmlinux;		/* --vmlinux, trusted as given */
	bool live;			/* refuse a vmlinux of another kernel */
	bool quiet;			/* keep the notice for symbolizer__notice() */
};

#endif
