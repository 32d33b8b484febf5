/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal reader of .debug_info for one question: which DIEs, from a CU
 * down, contain an address (what dwarf_getscopes() answers). libdw 0.188
 * answers it by walking the CU's DIEs twice with a locked abbrev lookup
 * per DIE; on a distribution vmlinux that was 80% of the symbolizer's time.
 * This reader decodes the CU's abbrevs once into an array and skips
 * subtrees by DW_AT_sibling. Used by ksym.c only.
 */
#ifndef BPFSTDERR_KDIE_H
#define BPFSTDERR_KDIE_H

#include <elfutils/libdw.h>

#define KDIE_DEPTH_MAX	64

struct kdie;

/* The raw sections of dw (after libdw has decompressed and, for ET_REL,
 * relocated them); NULL when they cannot be read as they are.
 */
struct kdie *kdie__new(Dwarf *dw);
/* The offsets of the DIEs containing pc (dwarf_haspc), outermost first,
 * from the first child of the CU whose header is at cu_off down to the
 * innermost: the chain dwarf_getscopes() + dwarf_getscopes_die() give.
 * Returns their number (0: none), or -errno when this reader cannot tell
 * (unknown form, malformed data): the caller then asks libdw.
 */
int kdie__scope_path(struct kdie *kd, Dwarf_Off cu_off, Dwarf_Addr pc, Dwarf_Off *path, int max);
/* The address ranges dwarf_ranges() gives for the CU whose header is at
 * hdr_off, appended to r; -errno (r as it was) when this reader cannot
 * tell: the caller then asks libdw.
 */
struct kdie_range {
	uint64_t lo, hi;
};

struct kdie_ranges {
	struct kdie_range *v;
	size_t cnt, cap;
};

int kdie__cu_ranges(struct kdie *kd, Dwarf_Off hdr_off, struct kdie_ranges *r);
/* Ask the kernel to read, all at once, what the CU index is to read: each
 * CU's first pages (where .debug_aranges says the CUs are), the abbrevs
 * and range lists.
 */
void kdie__prefetch(struct kdie *kd);
void kdie__free(struct kdie *kd);

#endif
