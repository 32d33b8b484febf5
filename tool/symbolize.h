/* SPDX-License-Identifier: GPL-2.0 */
/* Frames of fault reports -> source locations.
 *
 * BPF frames (bpf_prog_<tag>_<func>+off/size): the program and subprogram
 * by tag, then its jited line info, as the kernel does it: the last line
 * entry whose jited address is below the address. Programs are looked up at
 * drain time (symbolizer__warm) and cached by (id, load time), because
 * their line info goes with them when they are unloaded.
 *
 * Kernel frames (symbol+off/size [module]): by name in the vmlinux (or
 * module) ELF, never by runtime address, so KASLR and kptr_restrict do not
 * matter; names defined more than once are told apart by /size (the
 * distance to the next symbol, as kallsyms counts it), else every
 * candidate is listed. A frame right after an exception entry (asm_exc_*,
 * asm_sysvec_*, asm_common_interrupt) is the instruction that trapped and
 * is looked up as is; every other frame is a return address and is looked
 * up at address - 1, the call. DWARF gives file:line and the inline chain.
 */
#ifndef BPFSTDERR_SYMBOLIZE_H
#define BPFSTDERR_SYMBOLIZE_H

#include <stdbool.h>

#include "fault.h"

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
};

struct symbolizer_opts {
	const char *vmlinux;		/* --vmlinux, trusted as given */
	bool live;			/* refuse a vmlinux of another kernel */
	bool quiet;			/* keep the notice for symbolizer__notice() */
};

struct symbolizer;

int symbolizer__new(struct symbolizer **out, const struct symbolizer_opts *o);
/* At drain time: remember the line info of the programs in f's frames. */
void symbolizer__warm(struct symbolizer *s, const struct fault *f);
/* Frame i of f; strings live as long as the symbolizer. 0 or -ENOENT. */
int symbolizer__frame(struct symbolizer *s, const struct fault *f, int i, struct sym_loc *loc);
/* A BPF frame resolved elsewhere while its program was still loaded (the
 * journal keeps them): used before the live programs, and after they are
 * gone. Strings are copied. 0 or -ENOMEM.
 */
int symbolizer__learn_bpf(struct symbolizer *s, const char *tag, unsigned long long off,
			  const struct sym_loc *loc);
bool symbolizer__knows_bpf(struct symbolizer *s, const char *tag, unsigned long long off);
/* Is frame i a trapping instruction (looked up as is)? */
bool frame_is_exact(const struct fault *f, int i);
/* The one notice about missing or refused debuginfo, or NULL. */
const char *symbolizer__notice(const struct symbolizer *s);
/* Looks for the vmlinux now rather than at the first kernel frame, and
 * returns the notice about it (or NULL), so that a view says it before
 * its first report instead of in the middle of one.
 */
const char *symbolizer__prepare(struct symbolizer *s);
void symbolizer__free(struct symbolizer *s);

#endif
