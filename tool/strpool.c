// SPDX-License-Identifier: GPL-2.0
#include <stdlib.h>
#include <string.h>

#include "strpool.h"

const char *strpool__keep(struct strpool *st, const char *s)
{
	char **tmp, *copy;

	if (!s)
		return NULL;
	if (st->cnt == st->cap) {
		tmp = realloc(st->v, (st->cap ? st->cap * 2 : 64) * sizeof(*tmp));
		if (!tmp)
			return NULL;
		st->v = tmp;
		st->cap = st->cap ? st->cap * 2 : 64;
	}
	copy = strdup(s);
	if (copy)
		st->v[st->cnt++] = copy;
	return copy;
}

void strpool__fini(struct strpool *st)
{
	size_t i;

	for (i = 0; i < st->cnt; i++)
		free(st->v[i]);
	free(st->v);
	st->v = NULL;
	st->cnt = st->cap = 0;
}
