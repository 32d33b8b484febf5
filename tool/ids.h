/* SPDX-License-Identifier: GPL-2.0 */
/* Sorted arrays of program ids: the one lookup every room uses. */
#ifndef BPFSTDERR_IDS_H
#define BPFSTDERR_IDS_H

#include <stddef.h>
#include <linux/types.h>

/* id's place in ids[cnt], sorted ascending, or NULL. */
static inline const __u32 *ids_find(const __u32 *ids, size_t cnt, __u32 id)
{
	size_t lo = 0, hi = cnt, mid;

	while (ids && lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (ids[mid] == id)
			return &ids[mid];
		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

#endif
