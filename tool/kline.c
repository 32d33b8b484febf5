// SPDX-License-Identifier: GPL-2.0
/* One CU's line program, run once for one address: the row libdw 0.188's
 * dwarf_getsrc_die() picks, without building and sorting the table
 * (libdw/dwarf_getsrclines.c and dwarf_getsrc_die.c are the reference:
 * the same checks, the same file names). Where libdw would fail or this
 * reader does not follow it exactly, -ENOTSUP sends the caller to libdw.
 */
#include <errno.h>
#include <gelf.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <dwarf.h>

#include "dwarfbits.h"
#include "kline.h"

struct kfile {
	const char *name;
	uint64_t dir;		/* index in dirs; NO_DIR: the name as it is */
};

#define NO_DIR UINT64_MAX

struct ksec {
	const uint8_t *p;
	size_t len;
};

struct kline {
	struct ksec line, line_str, str;
	const char **dirs;	/* [0]: DW_AT_comp_dir before DWARF 5, may be NULL */
	size_t ndirs, dirs_cap;
	struct kfile *files;
	size_t nfiles, files_cap;
	char *name;		/* kline__file()'s answer */
	size_t name_cap;
	struct kcuidx *idx;	/* by table offset, through slots */
	size_t nidx, idx_cap;
	uint32_t *slots;	/* open addressing, UINT32_MAX: empty */
	size_t slots_cap;
};

/* The line program's registers (DWARF 5, 6.2.2), as libdw keeps them. */
struct lstate {
	uint64_t addr;
	uint32_t file, column, isa, discriminator;
	int64_t line;
	unsigned int is_stmt;
};

/* The row libdw's sort then binary search end on: the greatest
 * (address, not end_sequence, order) at or below pc; and the greatest of
 * all, which libdw marks end_sequence.
 */
struct pick {
	bool set, normal;
	uint64_t addr, seq;
	struct kline_row row;
};

/* A stretch of a CU's program, for its index: up to CHUNK_ROWS rows, and
 * the registers it starts with.
 */
#define CHUNK_ROWS 64

struct kchunk {
	const uint8_t *start, *end;	/* its opcodes */
	struct lstate st;	/* the registers at start */
	uint64_t lo, hi;	/* its rows' lowest and highest address */
	uint64_t seq0;		/* the CU's row count before it */
	uint64_t rows;
	struct pick max;	/* its greatest row */
};

enum { IDX_NEW, IDX_READY, IDX_WHOLE, IDX_FAILED };

struct kcuidx {
	uint64_t off;		/* the table's offset in .debug_line */
	int state;
	bool whole;		/* DW_LNE_define_file: run it whole each time */
	struct kchunk *chunks;
	size_t nchunks, chunks_cap;
	struct pick top;	/* the greatest row of all */
};

struct lprog {
	const uint8_t *p, *end;
	int version;
	unsigned int addr_size;
	uint8_t min_len, default_is_stmt, line_range, opcode_base;
	int8_t line_base;
	const uint8_t *std_len;	/* [op] for 1 <= op < opcode_base */
	/* what each special opcode adds to the line and the address: the
	 * division per row was a third of the decoding
	 */
	int line_adv[256];
	uint32_t addr_adv[256];
};

static void sec_get(Elf *elf, const char *name, struct ksec *s)
{
	Elf_Data *d = dwarf_section(elf, name);

	if (d && d->d_buf) {
		s->p = d->d_buf;
		s->len = d->d_size;
	}
}

struct kline *kline__new(Dwarf *dw)
{
	struct kline *kl = calloc(1, sizeof(*kl));
	Elf *elf = dw ? dwarf_getelf(dw) : NULL;
	GElf_Ehdr eh;

	if (!kl || !elf || !gelf_getehdr(elf, &eh) || eh.e_ident[EI_DATA] != ELFDATA2LSB)
		goto fail;
	sec_get(elf, ".debug_line", &kl->line);
	sec_get(elf, ".debug_line_str", &kl->line_str);
	sec_get(elf, ".debug_str", &kl->str);
	if (!kl->line.p)
		goto fail;
	return kl;
fail:
	free(kl);
	return NULL;
}

void kline__free(struct kline *kl)
{
	size_t i;

	if (!kl)
		return;
	for (i = 0; i < kl->nidx; i++)
		free(kl->idx[i].chunks);
	free(kl->idx);
	free(kl->slots);
	free(kl->dirs);
	free(kl->files);
	free(kl->name);
	free(kl);
}

/* A ULEB128 libdw keeps in an unsigned int: larger ones are not followed. */
static inline bool uleb32(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	uint64_t w;

	if (*p >= end || !uleb(p, end, &w) || w > UINT32_MAX)
		return false;
	*v = w;
	return true;
}

static bool sleb_int(const uint8_t **p, const uint8_t *end, int64_t *v)
{
	return sleb(p, end, v) && *v >= INT_MIN && *v <= INT_MAX;	/* libdw: an int */
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
	*v = tmp;
	*cap = n;
	return 0;
}

static int add_dir(struct kline *kl, const char *dir)
{
	if (grow((void **)&kl->dirs, &kl->dirs_cap, kl->ndirs + 1, sizeof(*kl->dirs)))
		return -ENOMEM;
	kl->dirs[kl->ndirs++] = dir;
	return 0;
}

static int add_file(struct kline *kl, const char *name, uint64_t dir)
{
	if (grow((void **)&kl->files, &kl->files_cap, kl->nfiles + 1, sizeof(*kl->files)))
		return -ENOMEM;
	kl->files[kl->nfiles++] = (struct kfile){ name, dir };
	return 0;
}

/* A NUL-terminated string at p within [p, end). */
static const char *cstr(const uint8_t **p, const uint8_t *end)
{
	const uint8_t *nul = memchr(*p, '\0', end - *p);
	const char *s = (const char *)*p;

	if (!nul)
		return NULL;
	*p = nul + 1;
	return s;
}

static const char *sec_str(const struct ksec *s, uint64_t off)
{
	if (!s->p || off >= s->len || !memchr(s->p + off, '\0', s->len - off))
		return NULL;
	return (const char *)s->p + off;
}

/* DWARF 5 entry formats: the forms this reader knows how to skip, and
 * what dwarf_formstring()/dwarf_formudata() give for them.
 */
static int form_value(struct kline *kl, unsigned int form, const uint8_t **p, const uint8_t *end,
		      const char **str, uint64_t *num)
{
	uint64_t v;

	*str = NULL;
	switch (form) {
	case DW_FORM_string:
		*str = cstr(p, end);
		return *str ? 0 : -ENOTSUP;
	case DW_FORM_line_strp:
	case DW_FORM_strp:
		if (!fixed(p, end, 4, &v))
			return -ENOTSUP;
		*str = sec_str(form == DW_FORM_strp ? &kl->str : &kl->line_str, v);
		return *str ? 0 : -ENOTSUP;
	case DW_FORM_udata:
		return uleb(p, end, num) ? 0 : -ENOTSUP;
	case DW_FORM_data1:
		return fixed(p, end, 1, num) ? 0 : -ENOTSUP;
	case DW_FORM_data2:
		return fixed(p, end, 2, num) ? 0 : -ENOTSUP;
	case DW_FORM_data4:
		return fixed(p, end, 4, num) ? 0 : -ENOTSUP;
	case DW_FORM_data8:
		return fixed(p, end, 8, num) ? 0 : -ENOTSUP;
	case DW_FORM_data16:
		if (end - *p < 16)
			return -ENOTSUP;
		*p += 16;
		*num = UINT64_MAX;	/* not a number to dwarf_formudata */
		return 0;
	case DW_FORM_block:
		if (!uleb(p, end, &v) || v > (uint64_t)(end - *p))
			return -ENOTSUP;
		*p += v;
		*num = UINT64_MAX;
		return 0;
	}
	return -ENOTSUP;
}

struct lformat {
	unsigned int cnt;
	uint16_t form[256];
	int path, dir;		/* which entry is DW_LNCT_path, ..._directory_index */
};

/* The forms form_value() reads: libdw refuses a format with a form it
 * does not know even for no entries; this reader leaves any other to it.
 */
static bool known_form(uint64_t form)
{
	switch (form) {
	case DW_FORM_string: case DW_FORM_line_strp: case DW_FORM_strp:
	case DW_FORM_udata: case DW_FORM_data1: case DW_FORM_data2:
	case DW_FORM_data4: case DW_FORM_data8: case DW_FORM_data16:
	case DW_FORM_block:
		return true;
	}
	return false;
}

static int read_format(const uint8_t **p, const uint8_t *end, struct lformat *f)
{
	uint64_t desc, form;
	unsigned int i;

	if (*p >= end)
		return -ENOTSUP;
	f->cnt = *(*p)++;
	f->path = f->dir = -1;
	for (i = 0; i < f->cnt; i++) {
		if (*p >= end || !uleb(p, end, &desc) || *p >= end || !uleb(p, end, &form) ||
		    desc > 0xffff || !known_form(form))
			return -ENOTSUP;
		f->form[i] = form;
		if (desc == DW_LNCT_path)
			f->path = i;
		else if (desc == DW_LNCT_directory_index)
			f->dir = i;
	}
	return 0;
}

/* One DWARF 5 directory or file entry. */
static int read_entry(struct kline *kl, const struct lformat *f, const uint8_t **p,
		      const uint8_t *end, const char **path, uint64_t *dir)
{
	const char *s;
	uint64_t n;
	unsigned int m;
	int err;

	*path = NULL;
	*dir = UINT64_MAX;
	for (m = 0; m < f->cnt; m++) {
		n = UINT64_MAX;
		err = form_value(kl, f->form[m], p, end, &s, &n);
		if (err)
			return err;
		if ((int)m == f->path)
			*path = s;
		else if ((int)m == f->dir)
			*dir = n;
	}
	return 0;
}

static int read_tables_v5(struct kline *kl, struct lprog *lp)
{
	struct lformat f;
	uint64_t n, i, dir;
	const char *path;
	int err;

	if ((err = read_format(&lp->p, lp->end, &f)) || (f.cnt && f.path < 0) ||
	    lp->p >= lp->end || !uleb(&lp->p, lp->end, &n) || (!f.cnt && n) ||
	    (f.cnt && n > (uint64_t)(lp->end - lp->p) / f.cnt))
		return -ENOTSUP;
	for (i = 0; i < n; i++) {
		if ((err = read_entry(kl, &f, &lp->p, lp->end, &path, &dir)))
			return err;
		if (!path)
			return -ENOTSUP;
		if (add_dir(kl, path))
			return -ENOMEM;
	}
	if ((err = read_format(&lp->p, lp->end, &f)) || (f.cnt && (f.path < 0 || f.dir < 0)) ||
	    !uleb(&lp->p, lp->end, &n) || (!f.cnt && n) ||
	    (f.cnt && n > (uint64_t)(lp->end - lp->p) / f.cnt))
		return -ENOTSUP;
	if (!n && add_file(kl, "???", NO_DIR))	/* libdw's file 0 then */
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		if ((err = read_entry(kl, &f, &lp->p, lp->end, &path, &dir)))
			return err;
		if (!path || dir == UINT64_MAX || dir >= kl->ndirs)
			return -ENOTSUP;
		if (add_file(kl, path, *path == '/' ? NO_DIR : dir))
			return -ENOMEM;
	}
	return 0;
}

static int read_tables_v4(struct kline *kl, struct lprog *lp, const char *comp_dir)
{
	const char *s;
	uint64_t dir, w;

	if (add_dir(kl, comp_dir) || add_file(kl, "???", NO_DIR))
		return -ENOMEM;
	while (lp->p < lp->end && *lp->p) {
		if (!(s = cstr(&lp->p, lp->end)) || add_dir(kl, s))
			return -ENOTSUP;
	}
	if (lp->p >= lp->end)
		return -ENOTSUP;
	lp->p++;
	if (lp->p >= lp->end)
		return -ENOTSUP;
	while (lp->p < lp->end && *lp->p) {
		if (!(s = cstr(&lp->p, lp->end)) || lp->p >= lp->end ||
		    !uleb(&lp->p, lp->end, &dir) || dir >= kl->ndirs ||
		    lp->p >= lp->end || !uleb(&lp->p, lp->end, &w) ||
		    lp->p >= lp->end || !uleb(&lp->p, lp->end, &w))
			return -ENOTSUP;
		if (add_file(kl, s, *s == '/' ? NO_DIR : dir))
			return -ENOMEM;
	}
	if (lp->p >= lp->end)
		return -ENOTSUP;
	lp->p++;
	return 0;
}

/* The header up to the program, as libdw reads it; -ENOTSUP where libdw
 * would refuse the table or this reader does not follow it.
 */
static int read_header(struct kline *kl, struct lprog *lp, uint64_t off, const char *comp_dir)
{
	const uint8_t *end = kl->line.p + kl->line.len, *hdr;
	uint64_t unit_len, hdr_len, v;
	int err;

	lp->p = kl->line.p + off;
	if (!fixed(&lp->p, end, 4, &unit_len) || unit_len >= 0xfffffff0 ||
	    unit_len > (uint64_t)(end - lp->p))	/* 64-bit DWARF: libdw's */
		return -ENOTSUP;
	lp->end = lp->p + unit_len;
	if (!fixed(&lp->p, lp->end, 2, &v) || v < 2 || v > 5)
		return -ENOTSUP;
	lp->version = v;
	if (lp->version >= 5) {
		if (lp->end - lp->p < 2 || lp->p[0] != lp->addr_size || lp->p[1])
			return -ENOTSUP;
		lp->p += 2;
	}
	if (!fixed(&lp->p, lp->end, 4, &hdr_len))
		return -ENOTSUP;
	hdr = lp->p;
	if (lp->end - lp->p < 6)
		return -ENOTSUP;
	lp->min_len = *lp->p++;
	if (lp->version >= 4 && *lp->p++ != 1)	/* VLIW op_index: libdw's */
		return -ENOTSUP;
	lp->default_is_stmt = *lp->p++;
	lp->line_base = (int8_t)*lp->p++;
	lp->line_range = *lp->p++;
	lp->opcode_base = *lp->p++;
	/* is_stmt is one bit in libdw; set_discriminator's check reads
	 * std_len[4]: only the usual opcode bases
	 */
	if (lp->default_is_stmt > 1 || lp->opcode_base < 10 ||
	    lp->end - lp->p < lp->opcode_base - 1)
		return -ENOTSUP;
	lp->std_len = lp->p - 1;
	lp->p += lp->opcode_base - 1;
	for (v = lp->opcode_base; lp->line_range && v < 256; v++) {
		lp->line_adv[v] = lp->line_base + (int)((v - lp->opcode_base) % lp->line_range);
		lp->addr_adv[v] = (uint32_t)(lp->min_len * (uint32_t)((v - lp->opcode_base) /
								    lp->line_range));
	}
	kl->ndirs = kl->nfiles = 0;
	err = lp->version >= 5 ? read_tables_v5(kl, lp) : read_tables_v4(kl, lp, comp_dir);
	if (err)
		return err;
	/* libdw's consistency check (and its CUBIN case, not followed) */
	return lp->p == hdr + hdr_len ? 0 : -ENOTSUP;
}

/* A run of the program (or of one sequence of it) for one pc. */
struct lrun {
	Dwarf_Addr pc;
	uint64_t seq;		/* rows so far, in the CU */
	struct pick best, top;
	const uint8_t *stop;	/* where to stop: the end, or a chunk's */
	struct kcuidx *rec;	/* the CU's index being built, or NULL */
	struct kchunk cur;	/* the chunk being indexed */
	bool chunk_full;	/* to close after this opcode */
};

static inline bool key_above(const struct pick *pk, uint64_t addr, bool normal)
{
	return !pk->set || addr > pk->addr || (addr == pk->addr && normal >= pk->normal);
}

static inline void keep_row(struct pick *pk, const struct lstate *st, bool normal, uint64_t seq)
{
	pk->set = true;
	pk->normal = normal;
	pk->addr = st->addr;
	pk->seq = seq;
	pk->row.file = st->file;
	pk->row.line = st->line;
	pk->row.col = st->column;
}

/* libdw stores a row in bitfields and fails the table on overflow. */
static inline bool row_fits(const struct lstate *st)
{
	return (uint64_t)(st->line - INT_MIN) <= UINT32_MAX && st->column <= USHRT_MAX &&
	       st->isa <= 0xff && st->discriminator < 1u << 24;
}

static void index_row(struct lrun *r, const struct lstate *st, bool normal)
{
	struct kchunk *c = &r->cur;

	if (!c->rows) {
		c->lo = c->hi = st->addr;
		c->seq0 = r->seq;
	}
	c->lo = st->addr < c->lo ? st->addr : c->lo;
	c->hi = st->addr > c->hi ? st->addr : c->hi;
	if (key_above(&c->max, st->addr, normal))
		keep_row(&c->max, st, normal, r->seq);
	r->chunk_full = ++c->rows == CHUNK_ROWS || !normal;	/* or its sequence ends */
}

/* A row: the best at or below pc, the greatest, and the index. */
static inline int emit(struct lrun *r, const struct lstate *st, bool normal)
{
	if (!row_fits(st))
		return -ENOTSUP;
	if (key_above(&r->top, st->addr, normal)) {
		r->top.set = true;
		r->top.normal = normal;
		r->top.addr = st->addr;
		r->top.seq = r->seq;
	}
	if (st->addr <= r->pc && key_above(&r->best, st->addr, normal))
		keep_row(&r->best, st, normal, r->seq);
	if (r->rec)
		index_row(r, st, normal);
	r->seq++;
	return 0;
}

static void reset_state(struct lstate *st, const struct lprog *lp)
{
	memset(st, 0, sizeof(*st));
	st->file = 1;
	st->line = 1;
	st->is_stmt = lp->default_is_stmt;
}

/* unsigned int arithmetic, as libdw's (max_ops_per_instr is 1 here) */
static void advance_pc(struct lstate *st, const struct lprog *lp, uint32_t adv)
{
	st->addr += (uint32_t)(lp->min_len * adv);
}

static int close_chunk(struct lrun *r, const uint8_t *next, const struct lstate *st);

static int extended_op(struct kline *kl, struct lprog *lp, struct lstate *st, struct lrun *r)
{
	uint8_t len, op;
	uint64_t v, w;
	uint32_t dir;
	const char *s;
	int err;

	if (lp->end - lp->p < 2)
		return -ENOTSUP;
	len = *lp->p++;
	if ((size_t)(lp->end - lp->p) < len)
		return -ENOTSUP;
	op = *lp->p++;
	switch (op) {
	case DW_LNE_end_sequence:
		err = emit(r, st, false);
		reset_state(st, lp);
		return err;
	case DW_LNE_set_address:
		if (!fixed(&lp->p, lp->end, lp->addr_size, &v))
			return -ENOTSUP;
		st->addr = v;
		return 0;
	case DW_LNE_define_file:
		if (!(s = cstr(&lp->p, lp->end)) || !uleb32(&lp->p, lp->end, &dir) ||
		    dir >= kl->ndirs || lp->p >= lp->end || !uleb(&lp->p, lp->end, &w) ||
		    lp->p >= lp->end || !uleb(&lp->p, lp->end, &w))
			return -ENOTSUP;
		if (r->rec)	/* the table grows as the program runs */
			r->rec->whole = true;
		return add_file(kl, s, *s == '/' ? NO_DIR : dir);
	case DW_LNE_set_discriminator:
		if (lp->std_len[op] != 1 || !uleb32(&lp->p, lp->end, &st->discriminator))
			return -ENOTSUP;
		return 0;
	case DW_LNE_NVIDIA_inlined_call:
	case DW_LNE_NVIDIA_set_function_name:
		return -ENOTSUP;
	}
	if (!len || (size_t)(lp->end - (lp->p - 1)) < len)
		return -ENOTSUP;
	lp->p += len - 1;
	return 0;
}

/* Standard opcodes 1 to 12, each with the operand count libdw insists on. */
static int standard_op(struct lprog *lp, struct lstate *st, uint8_t op, struct lrun *r)
{
	static const uint8_t nargs[] = { 0, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1 };
	uint32_t u;
	int64_t s;
	uint64_t v;

	if (lp->std_len[op] != nargs[op])
		return -ENOTSUP;
	switch (op) {
	case DW_LNS_copy:
		if (emit(r, st, true))
			return -ENOTSUP;
		st->discriminator = 0;
		return 0;
	case DW_LNS_advance_pc:
		if (!uleb32(&lp->p, lp->end, &u))
			return -ENOTSUP;
		advance_pc(st, lp, u);
		return 0;
	case DW_LNS_advance_line:
		if (lp->p >= lp->end || !sleb_int(&lp->p, lp->end, &s))
			return -ENOTSUP;
		st->line += s;
		return 0;
	case DW_LNS_set_file:
		return uleb32(&lp->p, lp->end, &st->file) ? 0 : -ENOTSUP;
	case DW_LNS_set_column:
		return uleb32(&lp->p, lp->end, &st->column) ? 0 : -ENOTSUP;
	case DW_LNS_negate_stmt:
		st->is_stmt = 1 - st->is_stmt;
		return 0;
	case DW_LNS_const_add_pc:
		if (!lp->line_range)
			return -ENOTSUP;
		advance_pc(st, lp, (255 - lp->opcode_base) / lp->line_range);
		return 0;
	case DW_LNS_fixed_advance_pc:
		if (!fixed(&lp->p, lp->end, 2, &v))
			return -ENOTSUP;
		st->addr += v;
		return 0;
	case DW_LNS_set_isa:
		return uleb32(&lp->p, lp->end, &st->isa) ? 0 : -ENOTSUP;
	}
	return 0;	/* basic_block, prologue_end, epilogue_begin: not kept */
}

/* From lp->p, with the registers st, to r->stop. */
static int run_program(struct kline *kl, struct lprog *lp, struct lstate *init, struct lrun *r)
{
	struct lstate st = *init;
	uint64_t v;
	uint8_t op;
	int err = 0, n;

	while (!err && lp->p < r->stop) {
		if (r->chunk_full) {
			err = close_chunk(r, lp->p, &st);
			if (err)
				return err;
		}
		op = *lp->p++;
		if (op >= lp->opcode_base) {
			if (!lp->line_range)
				return -ENOTSUP;
			st.line += lp->line_adv[op];
			st.addr += lp->addr_adv[op];
			err = emit(r, &st, true);
			st.discriminator = 0;
		} else if (op == 0) {
			err = extended_op(kl, lp, &st, r);
		} else if (op <= DW_LNS_set_isa) {
			err = standard_op(lp, &st, op, r);
		} else {
			for (n = lp->std_len[op]; !err && n > 0; n--)
				err = lp->p < lp->end && uleb(&lp->p, lp->end, &v) ? 0 : -ENOTSUP;
		}
	}
	return err ? err : close_chunk(r, lp->p, &st);	/* the last rows */
}

/* ---- the CUs' indexes ----------------------------------------------------
 * A CU's program is run whole once; it keeps where each sequence starts,
 * the addresses of its rows and its greatest row. A later pc runs only
 * the sequences whose rows straddle it: frames come by the thousand from
 * the few CUs with the most functions.
 */
/* The chunk being indexed ends at next; the next starts there, with st. */
static int close_chunk(struct lrun *r, const uint8_t *next, const struct lstate *st)
{
	struct kcuidx *x = r->rec;

	r->chunk_full = false;
	if (!x)
		return 0;
	if (r->cur.rows) {
		if (grow((void **)&x->chunks, &x->chunks_cap, x->nchunks + 1, sizeof(*x->chunks)))
			return -ENOMEM;
		r->cur.end = next;
		x->chunks[x->nchunks++] = r->cur;
	}
	memset(&r->cur, 0, sizeof(r->cur));
	r->cur.start = next;
	r->cur.st = *st;
	return 0;
}

static uint32_t idx_hash(uint64_t off)
{
	return (off * 0x9e3779b97f4a7c15ULL) >> 32;
}

/* The index of the table at off, or a new empty one (state IDX_NEW). */
static struct kcuidx *idx_get(struct kline *kl, uint64_t off)
{
	size_t i, mask, cap;
	uint32_t *tmp;

	if (kl->nidx * 2 >= kl->slots_cap) {	/* rehash: half full at most */
		cap = kl->slots_cap ? kl->slots_cap * 2 : 1024;
		tmp = malloc(cap * sizeof(*tmp));
		if (!tmp || grow((void **)&kl->idx, &kl->idx_cap, cap / 2 + 1, sizeof(*kl->idx))) {
			free(tmp);
			return NULL;
		}
		memset(tmp, 0xff, cap * sizeof(*tmp));
		for (i = 0; i < kl->nidx; i++) {
			size_t h = idx_hash(kl->idx[i].off) & (cap - 1);

			while (tmp[h] != UINT32_MAX)
				h = (h + 1) & (cap - 1);
			tmp[h] = i;
		}
		free(kl->slots);
		kl->slots = tmp;
		kl->slots_cap = cap;
	}
	mask = kl->slots_cap - 1;
	for (i = idx_hash(off) & mask; kl->slots[i] != UINT32_MAX; i = (i + 1) & mask)
		if (kl->idx[kl->slots[i]].off == off)
			return &kl->idx[kl->slots[i]];
	kl->slots[i] = kl->nidx;
	memset(&kl->idx[kl->nidx], 0, sizeof(*kl->idx));
	kl->idx[kl->nidx].off = off;
	return &kl->idx[kl->nidx++];
}

static void best_of(struct pick *best, const struct pick *c)
{
	if (c->set && key_above(best, c->addr, c->normal) &&
	    (!best->set || c->addr != best->addr || c->normal != best->normal || c->seq > best->seq))
		*best = *c;
}

/* pc through the index: the chunks wholly at or below pc give their
 * greatest row, those around it are run again from their registers.
 */
static int run_indexed(struct kline *kl, struct lprog *lp, const struct kcuidx *x, struct lrun *r)
{
	const struct kchunk *q;
	struct lstate st;
	struct lrun one;
	size_t i;
	int err;

	r->top = x->top;
	for (i = 0; i < x->nchunks; i++) {
		q = &x->chunks[i];
		if (q->lo > r->pc)
			continue;
		if (q->hi <= r->pc) {
			best_of(&r->best, &q->max);
			continue;
		}
		one = (struct lrun){ .pc = r->pc, .seq = q->seq0, .stop = q->end };
		st = q->st;
		lp->p = q->start;
		err = run_program(kl, lp, &st, &one);
		if (err)
			return err;
		best_of(&r->best, &one.best);
	}
	return 0;
}

/* The CU's line table offset and compilation directory, as libdw's
 * dwarf_getsrclines() finds them; split units are left to libdw.
 */
static int cu_table(Dwarf_Die *cu, uint64_t *off, const char **comp_dir, uint8_t *addr_size)
{
	Dwarf_Attribute attr;
	Dwarf_Word w;
	uint8_t type;

	if (dwarf_cu_info(cu->cu, NULL, &type, NULL, NULL, NULL, addr_size, NULL) ||
	    (type != DW_UT_compile && type != DW_UT_partial) || dwarf_tag(cu) != DW_TAG_compile_unit)
		return -ENOTSUP;
	if (!dwarf_attr(cu, DW_AT_stmt_list, &attr) || dwarf_formudata(&attr, &w))
		return -ENOTSUP;
	*off = w;
	*comp_dir = dwarf_formstring(dwarf_attr(cu, DW_AT_comp_dir, &attr));
	return 0;
}

/* Run the program for r->pc: through the CU's index when it has one,
 * else whole (building the index the first time).
 */
static int run_cu(struct kline *kl, struct lprog *lp, struct kcuidx *x, struct lrun *r)
{
	struct lstate st;
	int err;

	if (x && x->state == IDX_READY)
		return run_indexed(kl, lp, x, r);
	reset_state(&st, lp);
	r->stop = lp->end;
	if (x && x->state == IDX_NEW) {
		r->rec = x;
		r->cur.start = lp->p;
		r->cur.st = st;
	}
	err = run_program(kl, lp, &st, r);
	if (!x || x->state != IDX_NEW)
		return err;
	if (err || x->whole) {	/* no index: kept only to say so */
		free(x->chunks);
		x->chunks = NULL;
		x->nchunks = x->chunks_cap = 0;
		if (err != -ENOMEM)
			x->state = err ? IDX_FAILED : IDX_WHOLE;
		return err;
	}
	x->top = r->top;
	x->state = IDX_READY;
	return 0;
}

int kline__lookup(struct kline *kl, Dwarf_Die *cu, Dwarf_Addr pc, struct kline_row *row)
{
	struct lrun r = { .pc = pc };
	struct lprog lp = {};
	struct kcuidx *x;
	const char *comp_dir;
	uint64_t off;
	uint8_t asz;
	int err;

	if (!kl)
		return -ENOTSUP;
	kl->nfiles = kl->ndirs = 0;
	if (cu_table(cu, &off, &comp_dir, &asz) || off >= kl->line.len ||
	    (asz != 4 && asz != 8))
		return -ENOTSUP;
	x = idx_get(kl, off);	/* NULL (no memory): run whole */
	if (x && x->state == IDX_FAILED)
		return -ENOTSUP;
	lp.addr_size = asz;
	err = read_header(kl, &lp, off, comp_dir);
	if (err == -ENOTSUP && x)
		x->state = IDX_FAILED;
	if (!err)
		err = run_cu(kl, &lp, x, &r);
	if (err) {
		kl->nfiles = kl->ndirs = 0;
		return err;
	}
	/* libdw marks its last row end_sequence; an end_sequence row is no
	 * answer; nothing at or below pc is none
	 */
	if (!r.best.set || !r.best.normal || r.best.seq == r.top.seq)
		return 0;
	*row = r.best.row;
	return 1;
}

const char *kline__file(struct kline *kl, uint64_t idx)
{
	const struct kfile *f;
	const char *dir;
	size_t dl, fl;

	if (idx >= kl->nfiles)
		return NULL;
	f = &kl->files[idx];
	dir = f->dir == NO_DIR ? NULL : kl->dirs[f->dir];
	if (!dir)	/* absolute, libdw's "???", or no DW_AT_comp_dir */
		return f->name;
	dl = strlen(dir);
	fl = strlen(f->name);
	if (grow((void **)&kl->name, &kl->name_cap, dl + fl + 2, 1))
		return NULL;
	memcpy(kl->name, dir, dl);
	kl->name[dl] = '/';
	memcpy(kl->name + dl + 1, f->name, fl + 1);
	return kl->name;
}
