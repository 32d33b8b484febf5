// SPDX-License-Identifier: GPL-2.0
/* The scope chain of an address in a CU, read straight from .debug_info:
 * the CU's abbrevs decoded once into an array indexed by code, attributes
 * skipped by form, subtrees that cannot hold the address skipped by
 * DW_AT_sibling. Only what libdw would need an attribute scan for is left
 * to libdw (DW_AT_ranges, indexed addresses): the answer is libdw's.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <dwarf.h>
#include <gelf.h>

#include "dwarfbits.h"
#include "kdie.h"

struct kattr {
	uint16_t name, form;
	int64_t implicit;		/* DW_FORM_implicit_const */
};

struct kabbrev {
	uint32_t tag;
	bool children;
	uint32_t first, cnt;		/* in kdie.attrs */
	/* Most DIEs (types, declarations) have only fixed-size forms and no
	 * address: skipped in one step, DW_AT_sibling read in place.
	 */
	int32_t fixed;			/* the attributes' size, or -1 */
	int32_t sib_at, sib_size;	/* where DW_AT_sibling is, or -1 */
};

/* Codes are small and dense in practice; a table that needs more is left
 * to libdw.
 */
#define ABBREV_CODES_MAX	65536

/* A CU's top-level DIEs that have code, by address: built on the first
 * frame in the CU, so that the next ones do not walk its thousands of
 * type and declaration DIEs again.
 */
struct ktop {
	uint64_t lo, hi;
	uint64_t off;
};

struct kunit {
	uint64_t cu_off;
	bool used;
	struct ktop *v;
	uint32_t cnt;
};

struct kdie {
	Dwarf *dw;
	struct kunit *units;		/* open addressing, by cu_off */
	size_t units_cap, units_cnt;
	const uint8_t *info, *abbrev;
	size_t info_len, abbrev_len;
	const uint8_t *ranges, *rnglists;	/* NULL: none */
	size_t ranges_len, rnglists_len;
	bool rel;			/* ET_REL: relocated by libdw, ranges its */
	/* the abbrevs of the last CU, reused while frames stay in it */
	uint64_t abbrev_off;
	bool abbrev_valid;
	unsigned int abbrev_shape;
	struct kabbrev *codes;
	size_t ncodes, codes_cap;
	struct kattr *attrs;
	size_t nattrs, attrs_cap;
};

struct kcu {
	const uint8_t *start, *end;	/* the unit, header included */
	unsigned int version, addr_size, off_size;
};

struct kd_die {
	uint64_t off;			/* in .debug_info */
	const uint8_t *children;	/* after the attributes */
	const struct kabbrev *ab;
	uint64_t sibling;		/* CU-relative, 0: none */
	uint64_t lo, hi;
	bool has_lo, has_hi, hi_is_addr;
	bool ask_libdw;			/* ranges or indexed address */
};

static struct kdie *kdie_fail(struct kdie *kd)
{
	free(kd);
	return NULL;
}

struct kdie *kdie__new(Dwarf *dw)
{
	struct kdie *kd = calloc(1, sizeof(*kd));
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	Elf_Data *info, *abbrev;
	GElf_Ehdr eh;

	if (!kd || !elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		return kdie_fail(kd);
	info = dwarf_section(elf, ".debug_info");
	abbrev = dwarf_section(elf, ".debug_abbrev");
	if (!info || !abbrev || !info->d_buf || !abbrev->d_buf)
		return kdie_fail(kd);
	kd->dw = dw;
	kd->info = info->d_buf;
	kd->info_len = info->d_size;
	kd->abbrev = abbrev->d_buf;
	kd->abbrev_len = abbrev->d_size;
	kd->rel = eh.e_type == ET_REL;
	info = dwarf_section(elf, ".debug_ranges");
	if (info && info->d_buf) {
		kd->ranges = info->d_buf;
		kd->ranges_len = info->d_size;
	}
	info = dwarf_section(elf, ".debug_rnglists");
	if (info && info->d_buf) {
		kd->rnglists = info->d_buf;
		kd->rnglists_len = info->d_size;
	}
	return kd;
}

void kdie__free(struct kdie *kd)
{
	if (!kd)
		return;

	size_t i;

	for (i = 0; i < kd->units_cap; i++)
		free(kd->units[i].v);
	free(kd->units);
	free(kd->codes);
	free(kd->attrs);
	free(kd);
}

static int grow(void **v, size_t *cap, size_t want, size_t size)
{
	size_t n = *cap ? *cap : 64;
	void *tmp;

	if (want <= *cap)
		return 0;
	while (n < want)
		n *= 2;
	tmp = realloc(*v, n * size);
	if (!tmp)
		return -ENOMEM;
	memset((char *)tmp + *cap * size, 0, (n - *cap) * size);
	*v = tmp;
	*cap = n;
	return 0;
}

static bool is_ref(unsigned int form)
{
	return form == DW_FORM_ref1 || form == DW_FORM_ref2 || form == DW_FORM_ref4 ||
	       form == DW_FORM_ref8 || form == DW_FORM_ref_udata;
}

/* The size of a form that has one whatever the value, else -1. */
static int form_size(const struct kcu *cu, unsigned int form)
{
	switch (form) {
	case DW_FORM_flag_present: case DW_FORM_implicit_const:
		return 0;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return 1;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		return 2;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return 3;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return 4;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		return 8;
	case DW_FORM_data16:
		return 16;
	case DW_FORM_addr:
		return cu->addr_size;
	case DW_FORM_ref_addr:
		return cu->version == 2 ? cu->addr_size : cu->off_size;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset: case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
		return cu->off_size;
	}
	return -1;
}

static void shape(const struct kcu *cu, struct kabbrev *ab, const struct kattr *attrs)
{
	uint32_t i;
	int n;

	ab->fixed = 0;
	ab->sib_at = -1;
	for (i = 0; i < ab->cnt; i++) {
		const struct kattr *a = &attrs[ab->first + i];

		n = form_size(cu, a->form);
		if (n < 0 || a->name == DW_AT_low_pc || a->name == DW_AT_high_pc ||
		    a->name == DW_AT_ranges || (a->name == DW_AT_sibling && !is_ref(a->form))) {
			ab->fixed = -1;
			return;
		}
		if (a->name == DW_AT_sibling) {
			ab->sib_at = ab->fixed;
			ab->sib_size = n;
		}
		ab->fixed += n;
	}
}

static int read_abbrevs(struct kdie *kd, const struct kcu *cu, uint64_t off)
{
	const uint8_t *p = kd->abbrev + off, *end = kd->abbrev + kd->abbrev_len;
	uint64_t code, tag, name, form;
	int64_t implicit;

	/* the shapes depend on the unit's sizes too */
	if (kd->abbrev_valid && kd->abbrev_off == off && kd->abbrev_shape == cu->version * 256 +
	    cu->addr_size * 16 + cu->off_size)
		return 0;
	kd->abbrev_valid = false;
	if (off >= kd->abbrev_len)
		return -EINVAL;
	if (kd->ncodes)
		memset(kd->codes, 0, kd->ncodes * sizeof(*kd->codes));
	kd->ncodes = 0;
	kd->nattrs = 0;
	while (uleb(&p, end, &code) && code) {
		struct kabbrev *ab;

		if (code >= ABBREV_CODES_MAX || grow((void **)&kd->codes, &kd->codes_cap, code + 1,
						     sizeof(*kd->codes)))
			return -E2BIG;
		if (!uleb(&p, end, &tag) || p >= end)
			return -EINVAL;
		if (code >= kd->ncodes)	/* first, so that the next reset clears it */
			kd->ncodes = code + 1;
		ab = &kd->codes[code];
		ab->tag = tag;
		ab->children = *p++ == DW_CHILDREN_yes;
		ab->first = kd->nattrs;
		for (;;) {
			if (!uleb(&p, end, &name) || !uleb(&p, end, &form))
				return -EINVAL;
			if (!name && !form)
				break;
			implicit = 0;
			if (form == DW_FORM_implicit_const && !sleb(&p, end, &implicit))
				return -EINVAL;
			if (grow((void **)&kd->attrs, &kd->attrs_cap, kd->nattrs + 1, sizeof(*kd->attrs)))
				return -ENOMEM;
			kd->attrs[kd->nattrs++] = (struct kattr){ name, form, implicit };
		}
		ab->cnt = kd->nattrs - ab->first;
		shape(cu, ab, kd->attrs);
	}
	kd->abbrev_off = off;
	kd->abbrev_shape = cu->version * 256 + cu->addr_size * 16 + cu->off_size;
	kd->abbrev_valid = true;
	return 0;
}

/* The unit header at off (DWARF 2 to 5). */
static int read_unit(struct kdie *kd, Dwarf_Off off, struct kcu *cu, const uint8_t **first,
		     uint64_t *abbrev_off)
{
	const uint8_t *p = kd->info + off, *end = kd->info + kd->info_len;
	uint64_t len, ver, type = DW_UT_compile, asz;

	if (off >= kd->info_len || !fixed(&p, end, 4, &len))
		return -EINVAL;
	cu->off_size = 4;
	if (len == 0xffffffff) {
		cu->off_size = 8;
		if (!fixed(&p, end, 8, &len))
			return -EINVAL;
	}
	if (len > (size_t)(end - p))
		return -EINVAL;
	cu->start = kd->info + off;
	cu->end = p + len;
	if (!fixed(&p, cu->end, 2, &ver) || ver < 2 || ver > 5)
		return -EINVAL;
	cu->version = ver;
	if (ver == 5 && (!fixed(&p, cu->end, 1, &type) || !fixed(&p, cu->end, 1, &asz) ||
			 !fixed(&p, cu->end, cu->off_size, abbrev_off)))
		return -EINVAL;
	if (ver < 5 && (!fixed(&p, cu->end, cu->off_size, abbrev_off) || !fixed(&p, cu->end, 1, &asz)))
		return -EINVAL;
	/* the units that hold code: no skeleton, split or type units */
	if ((type != DW_UT_compile && type != DW_UT_partial) || (asz != 4 && asz != 8))
		return -ENOTSUP;
	cu->addr_size = asz;
	*first = p;
	return 0;
}

/* The unit header at off, and its abbrevs. */
static int read_cu(struct kdie *kd, Dwarf_Off off, struct kcu *cu, const uint8_t **first)
{
	uint64_t abbrev_off;
	int err = read_unit(kd, off, cu, first, &abbrev_off);

	return err ? err : read_abbrevs(kd, cu, abbrev_off);
}

/* One attribute's value, as far as the walk needs values: addresses,
 * constants and references; others are skipped.
 */
static const uint8_t *attr_value(const struct kcu *cu, unsigned int form, const uint8_t *p,
				 uint64_t *v)
{
	const uint8_t *end = cu->end;
	uint64_t n;
	int64_t s;

	*v = 0;
	switch (form) {
	case DW_FORM_flag_present:
	case DW_FORM_implicit_const:
		return p;
	case DW_FORM_addr:
		return fixed(&p, end, cu->addr_size, v) ? p : NULL;
	case DW_FORM_data1: case DW_FORM_ref1: case DW_FORM_flag: case DW_FORM_strx1:
	case DW_FORM_addrx1:
		return fixed(&p, end, 1, v) ? p : NULL;
	case DW_FORM_data2: case DW_FORM_ref2: case DW_FORM_strx2: case DW_FORM_addrx2:
		return fixed(&p, end, 2, v) ? p : NULL;
	case DW_FORM_strx3: case DW_FORM_addrx3:
		return fixed(&p, end, 3, v) ? p : NULL;
	case DW_FORM_data4: case DW_FORM_ref4: case DW_FORM_strx4: case DW_FORM_addrx4:
	case DW_FORM_ref_sup4:
		return fixed(&p, end, 4, v) ? p : NULL;
	case DW_FORM_data8: case DW_FORM_ref8: case DW_FORM_ref_sig8: case DW_FORM_ref_sup8:
		return fixed(&p, end, 8, v) ? p : NULL;
	case DW_FORM_data16:
		return end - p >= 16 ? p + 16 : NULL;
	case DW_FORM_sdata:
		return sleb(&p, end, &s) ? p : NULL;
	case DW_FORM_udata: case DW_FORM_ref_udata: case DW_FORM_strx: case DW_FORM_addrx:
	case DW_FORM_loclistx: case DW_FORM_rnglistx: case DW_FORM_GNU_addr_index:
	case DW_FORM_GNU_str_index:
		return uleb(&p, end, v) ? p : NULL;
	case DW_FORM_ref_addr:
		return fixed(&p, end, cu->version == 2 ? cu->addr_size : cu->off_size, v) ? p : NULL;
	case DW_FORM_strp: case DW_FORM_line_strp: case DW_FORM_sec_offset: case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt: case DW_FORM_GNU_strp_alt:
		return fixed(&p, end, cu->off_size, v) ? p : NULL;
	case DW_FORM_string:
		p = memchr(p, 0, end - p);
		return p ? p + 1 : NULL;
	case DW_FORM_block1:
		n = 1;
		break;
	case DW_FORM_block2:
		n = 2;
		break;
	case DW_FORM_block4:
		n = 4;
		break;
	case DW_FORM_block: case DW_FORM_exprloc:
		return uleb(&p, end, &n) && n <= (size_t)(end - p) ? p + n : NULL;
	default:	/* DW_FORM_indirect and anything newer: libdw's */
		return NULL;
	}
	return fixed(&p, end, n, &n) && n <= (size_t)(end - p) ? p + n : NULL;
}

/* The forms dwarf_highpc() adds to low_pc and this reader reads itself. */
static bool is_offset(unsigned int form)
{
	return form == DW_FORM_data1 || form == DW_FORM_data2 || form == DW_FORM_data4 ||
	       form == DW_FORM_data8 || form == DW_FORM_udata || form == DW_FORM_implicit_const;
}

static void note_attr(struct kd_die *d, const struct kattr *a, uint64_t v)
{
	switch (a->name) {
	case DW_AT_sibling:
		d->sibling = is_ref(a->form) ? v : 0;
		break;
	case DW_AT_low_pc:
		d->lo = v;
		d->has_lo = true;
		d->ask_libdw |= a->form != DW_FORM_addr;
		break;
	case DW_AT_high_pc:
		d->hi = a->form == DW_FORM_implicit_const ? (uint64_t)a->implicit : v;
		d->has_hi = true;
		d->hi_is_addr = a->form == DW_FORM_addr;
		d->ask_libdw |= !d->hi_is_addr && !is_offset(a->form);
		break;
	case DW_AT_ranges:
		d->ask_libdw = true;
		break;
	}
}

/* The DIE at *p: 1, 0 for a null entry (end of siblings), -errno. */
static int read_die(struct kdie *kd, const struct kcu *cu, const uint8_t **p, struct kd_die *d)
{
	const struct kattr *a;
	uint64_t code, v;
	uint32_t i;

	d->off = *p - kd->info;
	if (!uleb(p, cu->end, &code))
		return -EINVAL;
	if (!code)
		return 0;
	if (code >= kd->ncodes || !kd->codes[code].tag)
		return -EINVAL;
	d->ab = &kd->codes[code];
	d->sibling = d->lo = d->hi = 0;
	d->has_lo = d->has_hi = d->hi_is_addr = d->ask_libdw = false;
	if (d->ab->fixed >= 0) {
		const uint8_t *q = *p + d->ab->sib_at;

		if (d->ab->fixed > cu->end - *p)
			return -EINVAL;
		if (d->ab->sib_at >= 0)
			fixed(&q, cu->end, d->ab->sib_size, &d->sibling);
		*p += d->ab->fixed;
		d->children = *p;
		return 1;
	}
	for (i = 0, a = &kd->attrs[d->ab->first]; i < d->ab->cnt; i++, a++) {
		*p = attr_value(cu, a->form, *p, &v);
		if (!*p)
			return -ENOTSUP;
		note_attr(d, a, v);
	}
	d->children = *p;
	return 1;
}

/* Does d contain pc, as dwarf_haspc() says? 1, 0, -errno. */
static int die_has(struct kdie *kd, const struct kd_die *d, Dwarf_Addr pc)
{
	Dwarf_Die die;

	if (d->ask_libdw)
		return dwarf_offdie(kd->dw, d->off, &die) ? dwarf_haspc(&die, pc) : -EINVAL;
	if (!d->has_lo || !d->has_hi)
		return 0;
	return pc >= d->lo && pc < (d->hi_is_addr ? d->hi : d->lo + d->hi);
}

/* Past d and its children: by DW_AT_sibling when it points forward. */
static const uint8_t *skip_die(struct kdie *kd, const struct kcu *cu, const struct kd_die *d)
{
	const uint8_t *p = d->children;
	struct kd_die c;
	int depth = 1, r;

	if (!d->ab->children)
		return p;
	if (d->sibling && cu->start + d->sibling > p && cu->start + d->sibling <= cu->end)
		return cu->start + d->sibling;
	while (depth > 0) {
		r = read_die(kd, cu, &p, &c);
		if (r < 0)
			return NULL;
		if (!r) {
			depth--;
			continue;
		}
		if (!c.ab->children)
			continue;
		if (c.sibling && cu->start + c.sibling > p && cu->start + c.sibling <= cu->end)
			p = cu->start + c.sibling;
		else
			depth++;
	}
	return p;
}

/* The DIEs __libdw_visit_scopes() descends into. */
static bool is_scope(uint32_t tag)
{
	switch (tag) {
	case DW_TAG_compile_unit: case DW_TAG_partial_unit: case DW_TAG_module:
	case DW_TAG_lexical_block: case DW_TAG_with_stmt: case DW_TAG_catch_block:
	case DW_TAG_try_block: case DW_TAG_entry_point: case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram: case DW_TAG_namespace: case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	}
	return false;
}

static struct kunit *unit_slot(struct kdie *kd, uint64_t cu_off)
{
	size_t i = (cu_off * 0x9e3779b97f4a7c15ULL >> 20) & (kd->units_cap - 1);

	while (kd->units[i].used && kd->units[i].cu_off != cu_off)
		i = (i + 1) & (kd->units_cap - 1);
	return &kd->units[i];
}

static int units_grow(struct kdie *kd)
{
	struct kunit *old = kd->units;
	size_t i, cap = kd->units_cap;

	if (kd->units_cnt * 2 < kd->units_cap)
		return 0;
	kd->units_cap = cap ? cap * 2 : 256;
	kd->units = calloc(kd->units_cap, sizeof(*kd->units));
	if (!kd->units) {
		kd->units = old;
		kd->units_cap = cap;
		return -ENOMEM;
	}
	for (i = 0; i < cap; i++)
		if (old[i].used)
			*unit_slot(kd, old[i].cu_off) = old[i];
	free(old);
	return 0;
}

static int top_add(struct kunit *u, uint32_t *cap, uint64_t lo, uint64_t hi, uint64_t off)
{
	struct ktop *tmp;

	if (u->cnt == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		tmp = realloc(u->v, *cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		u->v = tmp;
	}
	u->v[u->cnt++] = (struct ktop){ lo, hi, off };
	return 0;
}

/* One entry per address range (libdw's, for DW_AT_ranges), in DIE order. */
static int top_ranges(struct kdie *kd, struct kunit *u, uint32_t *cap, const struct kd_die *d)
{
	Dwarf_Addr base, lo, hi;
	Dwarf_Die die;
	ptrdiff_t r;

	if (!d->ask_libdw) {
		if (!d->has_lo || !d->has_hi)
			return 0;
		return top_add(u, cap, d->lo, d->hi_is_addr ? d->hi : d->lo + d->hi, d->off);
	}
	if (!dwarf_offdie(kd->dw, d->off, &die))
		return -EINVAL;
	for (r = 0; (r = dwarf_ranges(&die, r, &base, &lo, &hi)) > 0;)
		if (top_add(u, cap, lo, hi, d->off))
			return -ENOMEM;
	return r < 0 ? -EINVAL : 0;
}

static int unit_build(struct kdie *kd, const struct kcu *cu, const uint8_t *p, struct kunit *u)
{
	struct kd_die d;
	uint32_t cap = 0;
	int r;

	while (p < cu->end) {
		r = read_die(kd, cu, &p, &d);
		if (r <= 0)
			return r;
		if (d.ab->tag == DW_TAG_imported_unit)
			return -ENOTSUP;
		r = top_ranges(kd, u, &cap, &d);
		if (r)
			return r;
		p = skip_die(kd, cu, &d);
		if (!p)
			return -EINVAL;
	}
	return -EINVAL;
}

/* The unit's top-level index, built on first use; NULL: ask libdw. */
static const struct kunit *unit_get(struct kdie *kd, uint64_t cu_off, const struct kcu *cu,
				    const uint8_t *first)
{
	struct kunit *u;

	if (units_grow(kd))
		return NULL;
	u = unit_slot(kd, cu_off);
	if (u->used)
		return u->v || !u->cnt ? u : NULL;
	u->used = true;
	u->cu_off = cu_off;
	kd->units_cnt++;
	if (unit_build(kd, cu, first, u)) {
		free(u->v);
		u->v = NULL;
		u->cnt = 1;	/* remembered as unreadable */
		return NULL;
	}
	return u;
}

/* The first top-level DIE (in DIE order) whose ranges hold pc, or 0. */
static uint64_t top_find(const struct kunit *u, Dwarf_Addr pc)
{
	uint64_t best = 0;
	uint32_t i;

	for (i = 0; i < u->cnt; i++)
		if (pc >= u->v[i].lo && pc < u->v[i].hi && (!best || u->v[i].off < best))
			best = u->v[i].off;
	return best;
}

/* dwarf_getscopes() visits children in order, prunes those without pc and
 * stops at the first innermost match: the same walk, without the prune
 * visits.
 */
int kdie__scope_path(struct kdie *kd, Dwarf_Off cu_off, Dwarf_Addr pc, Dwarf_Off *path, int max)
{
	const struct kunit *u;
	const uint8_t *p;
	struct kd_die d;
	struct kcu cu;
	uint64_t top;
	int n = 0, r;

	r = read_cu(kd, cu_off, &cu, &p);
	if (r)
		return r;
	r = read_die(kd, &cu, &p, &d);	/* the CU's own DIE */
	if (r <= 0)
		return r < 0 ? r : -EINVAL;
	if (!d.ab->children)
		return 0;
	u = unit_get(kd, cu_off, &cu, p);
	if (!u)
		return -ENOTSUP;
	top = top_find(u, pc);
	if (!top)
		return 0;
	p = kd->info + top;
	while (p < cu.end) {
		r = read_die(kd, &cu, &p, &d);
		if (r <= 0)
			return r < 0 ? r : n;	/* no more siblings: parent is innermost */
		if (d.ab->tag == DW_TAG_imported_unit)
			return -ENOTSUP;
		r = die_has(kd, &d, pc);
		if (r < 0)
			return r;
		if (!r) {
			p = skip_die(kd, &cu, &d);
			if (!p)
				return -EINVAL;
			continue;
		}
		if (n == max)
			return -E2BIG;
		path[n++] = d.off;
		if (!d.ab->children || !is_scope(d.ab->tag))
			return n;
		p = d.children;
	}
	return -EINVAL;
}

/* ---- a CU's address ranges, as dwarf_ranges() gives them -----------------
 * The symbolizer's CU index asks every CU: through libdw that was two
 * thirds of the first frame (each CU's abbrevs loaded into a locked hash
 * for one DIE).
 */

struct cu_attrs {
	uint64_t low, high, entry, ranges;
	unsigned int low_form, high_form, entry_form, ranges_form;	/* 0: absent */
	bool other;		/* abstract_origin, specification: libdw's */
};

/* The abbrev of code in the table at off, without decoding the others
 * (one DIE of the CU is read): its tag, and where its attributes are.
 */
static const uint8_t *find_abbrev(struct kdie *kd, uint64_t off, uint64_t code, uint64_t *tag)
{
	const uint8_t *p = kd->abbrev + off, *end = kd->abbrev + kd->abbrev_len;
	uint64_t c, name, form;
	int64_t implicit;

	if (off >= kd->abbrev_len)
		return NULL;
	while (uleb(&p, end, &c) && c) {
		if (!uleb(&p, end, tag) || p >= end)
			return NULL;
		p++;	/* DW_CHILDREN_* */
		if (c == code)
			return p;
		do {
			if (!uleb(&p, end, &name) || !uleb(&p, end, &form) ||
			    (form == DW_FORM_implicit_const && !sleb(&p, end, &implicit)))
				return NULL;
		} while (name || form);
	}
	return NULL;
}

static int cu_die_attrs(struct kdie *kd, const struct kcu *cu, const uint8_t *p,
			uint64_t abbrev_off, struct cu_attrs *ca)
{
	const uint8_t *a, *aend = kd->abbrev + kd->abbrev_len;
	uint64_t code, tag, name, form, v;
	int64_t implicit;

	memset(ca, 0, sizeof(*ca));
	if (!uleb(&p, cu->end, &code) || !code || !(a = find_abbrev(kd, abbrev_off, code, &tag)))
		return -EINVAL;
	if (tag != DW_TAG_compile_unit && tag != DW_TAG_partial_unit)
		return -ENOTSUP;
	for (;;) {
		if (!uleb(&a, aend, &name) || !uleb(&a, aend, &form))
			return -EINVAL;
		if (!name && !form)
			return 0;
		implicit = 0;
		if (form == DW_FORM_implicit_const && !sleb(&a, aend, &implicit))
			return -EINVAL;
		p = attr_value(cu, form, p, &v);
		if (!p)
			return -ENOTSUP;
		if (form == DW_FORM_implicit_const)
			v = implicit;
		switch (name) {
		case DW_AT_low_pc:
			ca->low = v;
			ca->low_form = form;
			break;
		case DW_AT_high_pc:
			ca->high = v;
			ca->high_form = form;
			break;
		case DW_AT_entry_pc:
			ca->entry = v;
			ca->entry_form = form;
			break;
		case DW_AT_ranges:
			ca->ranges = v;
			ca->ranges_form = form;
			break;
		case DW_AT_abstract_origin:
		case DW_AT_specification:
			ca->other = true;
			break;
		}
	}
}

static int range_add(struct kdie_ranges *r, uint64_t lo, uint64_t hi)
{
	if (grow((void **)&r->v, &r->cap, r->cnt + 1, sizeof(*r->v)))
		return -ENOMEM;
	r->v[r->cnt++] = (struct kdie_range){ lo, hi };
	return 0;
}

/* DWARF 5 .debug_rnglists from off: the entries without .debug_addr. */
static int read_rnglist(struct kdie *kd, const struct kcu *cu, uint64_t off, uint64_t base,
			struct kdie_ranges *r)
{
	const uint8_t *p = kd->rnglists + off, *end = kd->rnglists + kd->rnglists_len;
	unsigned int w = cu->addr_size;
	uint64_t b, e;

	for (;;) {
		if (p >= end)
			return -ENOTSUP;
		switch (*p++) {
		case DW_RLE_end_of_list:
			return 0;
		case DW_RLE_offset_pair:
			if (p >= end || !uleb(&p, end, &b) || p >= end || !uleb(&p, end, &e))
				return -ENOTSUP;
			b += base;
			e += base;
			break;
		case DW_RLE_base_address:
			if (!fixed(&p, end, w, &base))
				return -ENOTSUP;
			continue;
		case DW_RLE_start_end:
			if (!fixed(&p, end, w, &b) || !fixed(&p, end, w, &e))
				return -ENOTSUP;
			break;
		case DW_RLE_start_length:
			if (!fixed(&p, end, w, &b) || p >= end || !uleb(&p, end, &e))
				return -ENOTSUP;
			e += b;
			break;
		default:	/* the x forms read .debug_addr: libdw's */
			return -ENOTSUP;
		}
		if (range_add(r, b, e))
			return -ENOMEM;
	}
}

/* DWARF 2 to 4 .debug_ranges from off. */
static int read_ranges(struct kdie *kd, const struct kcu *cu, uint64_t off, uint64_t base,
		       struct kdie_ranges *r)
{
	const uint8_t *p = kd->ranges + off, *end = kd->ranges + kd->ranges_len;
	unsigned int w = cu->addr_size;
	uint64_t b, e, escape = w == 8 ? UINT64_MAX : UINT32_MAX;

	for (;;) {
		if (!fixed(&p, end, w, &b) || !fixed(&p, end, w, &e))
			return -ENOTSUP;
		if (b == escape) {
			if (e == escape)
				return -ENOTSUP;
			base = e;
			continue;
		}
		if (!b && !e)
			return 0;
		if (range_add(r, b + base, e + base))
			return -ENOMEM;
	}
}

/* dwarf_ranges() of a CU DIE: low_pc and high_pc, else DW_AT_ranges from
 * the CU's base address (low_pc, else entry_pc, else 0).
 */
static int cu_ranges(struct kdie *kd, const struct kcu *cu, const struct cu_attrs *ca,
		     struct kdie_ranges *r)
{
	uint64_t base = 0;
	bool v5 = cu->version >= 5;

	if ((ca->low_form && ca->low_form != DW_FORM_addr) ||
	    (ca->high_form && ca->high_form != DW_FORM_addr && !is_offset(ca->high_form)) ||
	    (!ca->low_form && ca->entry_form && ca->entry_form != DW_FORM_addr) || ca->other)
		return -ENOTSUP;	/* .debug_addr, odd forms: libdw's */
	if (ca->low_form && ca->high_form)
		return range_add(r, ca->low, ca->high_form == DW_FORM_addr ? ca->high :
				 ca->low + ca->high);
	if (!ca->ranges_form)
		return 0;
	if (ca->ranges_form != DW_FORM_sec_offset)
		return -ENOTSUP;
	if (ca->low_form)
		base = ca->low;
	else if (ca->entry_form)
		base = ca->entry;
	if (v5 && kd->rnglists && ca->ranges < kd->rnglists_len)
		return read_rnglist(kd, cu, ca->ranges, base, r);
	if (!v5 && kd->ranges && ca->ranges < kd->ranges_len)
		return read_ranges(kd, cu, ca->ranges, base, r);
	return -ENOTSUP;
}

int kdie__cu_ranges(struct kdie *kd, Dwarf_Off hdr_off, struct kdie_ranges *r)
{
	size_t cnt = r->cnt;
	struct cu_attrs ca;
	uint64_t abbrev_off;
	const uint8_t *p;
	struct kcu cu;
	int err;

	if (kd->rel)	/* relocated addresses: libdw tells them apart */
		return -ENOTSUP;
	err = read_unit(kd, hdr_off, &cu, &p, &abbrev_off);
	if (!err)
		err = cu_die_attrs(kd, &cu, p, abbrev_off, &ca);
	if (!err)
		err = cu_ranges(kd, &cu, &ca, r);
	if (err)
		r->cnt = cnt;	/* nothing from a list libdw is to read */
	return err;
}

/* ---- reading ahead ---------------------------------------------------------
 * The CU index reads every CU's header and first DIE, its abbrevs and its
 * ranges: a few pages each, scattered over hundreds of MB. From a file
 * not in the page cache, one at a time, that was most of the first
 * frame. Asking for them all at once lets the reads overlap. Only a hint:
 * .debug_aranges says where the CUs are, nothing is taken from it.
 */
static void will_need(const void *p, size_t len)
{
	long page = sysconf(_SC_PAGESIZE);
	uintptr_t a = (uintptr_t)p & ~(uintptr_t)(page - 1);

	if (p && len)
		madvise((void *)a, (uintptr_t)p + len - a, MADV_WILLNEED);
}

void kdie__prefetch(struct kdie *kd)
{
	Elf *elf = dwarf_getelf(kd->dw);
	Elf_Data *ar = elf ? dwarf_section(elf, ".debug_aranges") : NULL;
	const uint8_t *p, *end, *next;
	uint64_t len, ver, off;

	will_need(kd->abbrev, kd->abbrev_len);
	will_need(kd->rnglists, kd->rnglists_len);
	will_need(kd->ranges, kd->ranges_len);
	if (!ar || !ar->d_buf)
		return;
	p = ar->d_buf;
	end = p + ar->d_size;
	while (fixed(&p, end, 4, &len) && len < 0xfffffff0 && len <= (size_t)(end - p)) {
		next = p + len;
		if (fixed(&p, next, 2, &ver) && fixed(&p, next, 4, &off) && off < kd->info_len)
			will_need(kd->info + off, kd->info_len - off < 8192 ? kd->info_len - off : 8192);
		p = next;
	}
}
