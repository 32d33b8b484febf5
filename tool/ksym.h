/* SPDX-License-Identifier: GPL-2.0 */
/* The symbolizer's kernel half: frames symbol+off/size [module] to file,
 * line and inline chain, by name in the vmlinux or module ELF with DWARF
 * (see symbolize.h for the rule). Used by symbolize.c only.
 */
#ifndef BPFSTDERR_KSYM_H
#define BPFSTDERR_KSYM_H

#include "fault.h"
#include "strpool.h"
#include "symloc.h"

struct ksyms;

/* Objects are opened on first use; strings handed out live in st. */
struct ksyms *ksyms__new(const struct symbolizer_opts *o, struct strpool *st);
/* Frame i of f (a kernel frame): 0, or -ENOENT. */
int ksyms__frame(struct ksyms *s, const struct fault *f, int i, struct sym_loc *loc);
/* The one notice about missing or refused debuginfo, or NULL. */
const char *ksyms__notice(const struct ksyms *s);
/* Finds (and checks) the vmlinux now instead of at the first frame. */
void ksyms__prepare(struct ksyms *s);
void ksyms__free(struct ksyms *s);

#endif
