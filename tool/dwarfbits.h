/* SPDX-License-Identifier: GPL-2.0 */
/* What the two raw DWARF readers (kdie.c: .debug_info, kline.c: line
 * programs) both need, read as libdw reads it: a section as libdw left
 * it, LEB128 and fixed-size numbers.
 */
#ifndef BPFSTDERR_DWARFBITS_H
#define BPFSTDERR_DWARFBITS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>
#include <gelf.h>

/* The section named name, or NULL; still compressed means libdw did not
 * use it as is: NULL too.
 */
static inline Elf_Data *dwarf_section(Elf *elf, const char *name)
{
	size_t shstrndx;
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *n;

		if (!gelf_getshdr(scn, &sh) || !(n = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(n, name))
			return sh.sh_flags & SHF_COMPRESSED ? NULL : elf_getdata(scn, NULL);
	}
	return NULL;
}

/* libdw reads LEB128 into 64 bits from at most 10 bytes. */
static inline bool uleb(const uint8_t **p, const uint8_t *end, uint64_t *v)
{
	unsigned int shift = 0;

	if (*p < end && !(**p & 0x80)) {	/* most are one byte */
		*v = *(*p)++;
		return true;
	}
	*v = 0;
	while (*p < end && shift < 70) {
		uint8_t b = *(*p)++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/* An n-byte number; little-endian only: the kernels read are x86-64
 * (kline__new() and ksym.c check).
 */
static inline bool fixed(const uint8_t **p, const uint8_t *end, unsigned int n, uint64_t *v)
{
	if ((size_t)(end - *p) < n)
		return false;
	*v = 0;
	memcpy(v, *p, n);
	*p += n;
	return true;
}

static inline bool sleb(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	unsigned int shift = 0;
	uint64_t u = 0;
	uint8_t b;

	while (*p < end && shift < 70) {
		b = *(*p)++;
		if (shift < 64)
			u |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80)) {
			if (shift < 64 && (b & 0x40))
				u |= ~0ULL << shift;
			*v = (int64_t)u;
			return true;
		}
	}
	return false;
}

#endif
