/* SPDX-License-Identifier: GPL-2.0 */
/* Strings that live as long as their pool: what the symbolizer hands out
 * (file and function names, source lines) outlives the DWARF, BTF and
 * program info it was read from.
 */
#ifndef BPFSTDERR_STRPOOL_H
#define BPFSTDERR_STRPOOL_H

#include <stddef.h>

struct strpool {
	char **v;
	size_t cnt, cap;
};

/* A copy of s that lives until strpool__fini(); NULL for NULL or ENOMEM. */
const char *strpool__keep(struct strpool *st, const char *s);
void strpool__fini(struct strpool *st);

#endif
