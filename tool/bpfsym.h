/* SPDX-License-Identifier: GPL-2.0 */
/* The symbolizer's BPF half: frames bpf_prog_<tag>_<func>+off/size to the
 * program's source line, through its jited line info (see symbolize.h for
 * the rule). Used by symbolize.c only.
 */
#ifndef BPFSTDERR_BPFSYM_H
#define BPFSTDERR_BPFSYM_H

#include <stdbool.h>

#include "fault.h"
#include "progs.h"
#include "strpool.h"
#include "symloc.h"

struct bpfsym;

/* Strings handed out live in st. NULL on ENOMEM. */
struct bpfsym *bpfsym__new(struct strpool *st);
/* Cache the line info of the programs in f's frames while they are loaded. */
void bpfsym__warm(struct bpfsym *s, const struct fault *f);
/* owner: the program whose report named the frame (symbolize.h) */
int bpfsym__learn(struct bpfsym *s, const struct prog_ident *owner, const char *tag,
		  unsigned long long off, const struct sym_loc *loc);
bool bpfsym__knows(struct bpfsym *s, const struct prog_ident *owner, const char *tag,
		   unsigned long long off);
/* 0, or -ENOENT when neither learned nor cached. loc->candidates > 1:
 * programs of that tag and name differ at that offset, all in sites[].
 */
int bpfsym__frame(struct bpfsym *s, const struct prog_ident *owner, const struct frame *fr,
		  struct sym_loc *loc);
void bpfsym__free(struct bpfsym *s);

#endif
