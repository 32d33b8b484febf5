/* SPDX-License-Identifier: GPL-2.0 */
/* Frames of fault reports -> source locations.
 *
 * BPF frames (bpf_prog_<tag>_<func>+off/size): a tag is a hash of the
 * instructions, so programs built from the same code in different objects
 * share it. The function is looked for in the report's own program (the
 * stream it came from) and its subprograms first, by tag and name; then
 * among every program with that tag and name. Then its jited line info, as
 * the kernel does it: the last line entry whose jited address is below the
 * address. Candidates that still differ are all listed, none picked.
 * Programs are looked up at drain time (symbolizer__warm) and cached by
 * (id, load time), because their line info goes with them when they are
 * unloaded. Where the kernel printed its own "  <line> @ file:NN" under the
 * frame (6.17+), it is the authority: ours agrees with it or gives way.
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
#include "progs.h"
#include "symloc.h"

struct symbolizer;

int symbolizer__new(struct symbolizer **out, const struct symbolizer_opts *o);
/* owner: the program whose stream carried the report; NULL or id 0 when
 * not known (report --input).
 */
/* At drain time: remember the line info of the programs in f's frames. */
void symbolizer__warm(struct symbolizer *s, const struct fault *f);
/* Frame i of f; strings live as long as the symbolizer. 0 or -ENOENT. */
int symbolizer__frame(struct symbolizer *s, const struct prog_ident *owner, const struct fault *f,
		      int i, struct sym_loc *loc);
/* A BPF frame as the line info alone places it, the kernel's line not
 * heeded: what the journal keeps. 0 or -ENOENT.
 */
int symbolizer__bpf_line_info(struct symbolizer *s, const struct prog_ident *owner,
			      const struct frame *fr, struct sym_loc *loc);
/* A BPF frame of owner's reports resolved elsewhere while its program was
 * still loaded (the journal keeps them): used before the live programs,
 * and after they are gone. Strings are copied. 0 or -ENOMEM.
 */
int symbolizer__learn_bpf(struct symbolizer *s, const struct prog_ident *owner, const char *tag,
			  unsigned long long off, const struct sym_loc *loc);
bool symbolizer__knows_bpf(struct symbolizer *s, const struct prog_ident *owner, const char *tag,
			   unsigned long long off);
/* The one notice about missing or refused debuginfo, or NULL. */
const char *symbolizer__notice(const struct symbolizer *s);
/* Looks for the vmlinux now rather than at the first kernel frame, and
 * returns the notice about it (or NULL), so that a view says it before
 * its first report instead of in the middle of one.
 */
const char *symbolizer__prepare(struct symbolizer *s);
void symbolizer__free(struct symbolizer *s);

#endif
