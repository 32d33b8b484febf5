// SPDX-License-Identifier: GPL-2.0
/* Kernel frames: the vmlinux (or module) is found, checked against the
 * running kernel's build-id and opened with libdw on first use; symbols by
 * name, CUs by address range, lookups memoized.
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <elfutils/debuginfod.h>

#include "debuginfo.h"
#include "kdie.h"
#include "kline.h"
#include "symcache.h"
#include "ksym.h"
#include "main.h"

struct ksym {
	const char *name;
	unsigned long long addr;
	unsigned long long size;	/* the ELF symbol's */
	unsigned long long dist;	/* to the next symbol: kallsyms' size */
};

struct cu_range {
	Dwarf_Addr lo, hi;
	Dwarf_Off off;			/* the CU's DIE */
	Dwarf_Off hdr;			/* the unit's header */
};

struct kobj {
	char name[64];			/* "vmlinux" or the module's */
	char path[PATH_MAX];		/* found, checked; "" if none */
	struct symcache *cache;		/* by its build-id, NULL if off */
	int loaded;			/* 0: not yet, 1: DWARF open, < 0: failed */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr bias;
	struct kdie *kd;		/* scope chains without libdw's walks */
	struct kline *kl;		/* line rows without libdw's tables */
	/* Symbols by name in a hash table, built in one pass (sorting them by
	 * name was half of the time to the first frame); kallsyms' sizes
	 * from the sorted addresses, for the few names looked up.
	 */
	struct ksym *syms;
	size_t nsyms;
	uint32_t *bucket, *chain, nbuckets;
	unsigned long long *addrs;	/* sorted, distinct */
	size_t naddrs;
	struct ksym *cand;		/* find_name()'s answer */
	size_t cand_cap;
	struct cu_range *cus;		/* sorted by lo */
	size_t ncus;
};

/* Kernel lookups are memoized by (object, address, exactness): top draws
 * the same frames every second.
 */
#define MEMO_SLOTS 4096

struct memo {
	size_t k;			/* index in kobjs + 1: stable across realloc */
	unsigned long long off, size;
	const char *sym;
	int exact;
	struct sym_loc loc;
};

struct ksyms {
	struct symbolizer_opts o;
	struct strpool *st;
	struct memo *memo;
	struct kobj *kobjs;
	size_t nkobjs;
	char notice[PATH_MAX + 256];
};

struct ksyms *ksyms__new(const struct symbolizer_opts *o, struct strpool *st)
{
	struct ksyms *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->o = *o;
	s->st = st;
	return s;
}

static void kobj_fini(struct kobj *k)
{
	symcache__close(k->cache);
	kdie__free(k->kd);
	kline__free(k->kl);
	if (k->dwfl)
		dwfl_end(k->dwfl);
	free(k->syms);
	free(k->bucket);
	free(k->chain);
	free(k->addrs);
	free(k->cand);
	free(k->cus);
}

void ksyms__free(struct ksyms *s)
{
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nkobjs; i++)
		kobj_fini(&s->kobjs[i]);
	free(s->kobjs);
	free(s->memo);
	free(s);
}

static const Dwfl_Callbacks offline_callbacks = {
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
};

static int cmp_ksym_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_cu(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static uint32_t name_hash(const char *s)
{
	uint32_t h = 2166136261u;

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

/* LSD radix sort, a byte a pass: a few ms for 100k kernel symbols. */
static int sort_addrs(unsigned long long *v, size_t n)
{
	unsigned long long *tmp = malloc(n * sizeof(*tmp)), *src = v, *dst = tmp, *t;
	size_t count[256], i, sum, c;
	int shift;

	if (!tmp)
		return -ENOMEM;
	for (shift = 0; shift < 64; shift += 8) {
		memset(count, 0, sizeof(count));
		for (i = 0; i < n; i++)
			count[(src[i] >> shift) & 0xff]++;
		for (i = 0, sum = 0; i < 256; i++) {
			c = count[i];
			count[i] = sum;
			sum += c;
		}
		for (i = 0; i < n; i++)
			dst[count[(src[i] >> shift) & 0xff]++] = src[i];
		t = src;
		src = dst;
		dst = t;
	}
	free(tmp);	/* an even number of passes: the result is back in v */
	return 0;
}

static int index_names(struct kobj *k)
{
	size_t i, j;

	for (k->nbuckets = 1024; k->nbuckets < 2 * k->nsyms; k->nbuckets *= 2)
		;
	k->bucket = malloc(k->nbuckets * sizeof(*k->bucket));
	k->chain = malloc(k->nsyms * sizeof(*k->chain));
	k->addrs = malloc(k->nsyms * sizeof(*k->addrs));
	if (!k->bucket || !k->chain || !k->addrs)
		return -ENOMEM;
	memset(k->bucket, 0xff, k->nbuckets * sizeof(*k->bucket));
	for (i = 0; i < k->nsyms; i++) {
		uint32_t b = name_hash(k->syms[i].name) & (k->nbuckets - 1);

		k->chain[i] = k->bucket[b];
		k->bucket[b] = i;
		k->addrs[i] = k->syms[i].addr;
	}
	if (sort_addrs(k->addrs, k->nsyms))
		return -ENOMEM;
	for (i = j = 0; i < k->nsyms; i++)
		if (!j || k->addrs[j - 1] != k->addrs[i])
			k->addrs[j++] = k->addrs[i];
	k->naddrs = j;
	return 0;
}

/* Text symbols, with kallsyms' notion of size: the distance to the next. */
static int load_symbols(struct kobj *k)
{
	int n = dwfl_module_getsymtab(k->mod), i, cnt = 0;
	struct ksym *syms;
	GElf_Addr addr;
	GElf_Sym sym;
	const char *name;

	if (n <= 0)
		return -ENOENT;
	syms = calloc(n, sizeof(*syms));
	if (!syms)
		return -ENOMEM;
	for (i = 0; i < n; i++) {
		name = dwfl_module_getsym_info(k->mod, i, &sym, &addr, NULL, NULL, NULL);
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    (GELF_ST_TYPE(sym.st_info) != STT_FUNC && GELF_ST_TYPE(sym.st_info) != STT_NOTYPE))
			continue;
		syms[cnt].name = name;
		syms[cnt].size = sym.st_size;
		syms[cnt++].addr = addr;
	}
	k->syms = syms;
	k->nsyms = cnt;
	return index_names(k);
}

/* elfutils 0.188 finds no CU without .debug_aranges (clang leaves it out):
 * an index of every CU's ranges does not depend on it.
 */
static int cu_add(struct kobj *k, size_t *cap, Dwarf_Addr lo, Dwarf_Addr hi, Dwarf_Off off,
		  Dwarf_Off hdr)
{
	struct cu_range *tmp;

	if (k->ncus == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		tmp = realloc(k->cus, *cap * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		k->cus = tmp;
	}
	k->cus[k->ncus++] = (struct cu_range){ lo, hi, off, hdr };
	return 0;
}

/* A CU's ranges: kdie reads them from the sections (libdw loaded each
 * CU's abbrevs for it: two thirds of the first frame), libdw where kdie
 * cannot tell.
 */
static int index_cu(struct kobj *k, size_t *cap, Dwarf_Off hdr, Dwarf_Off roff,
		    struct kdie_ranges *rs)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t r;
	Dwarf_Die cu;
	size_t i;

	rs->cnt = 0;
	if (k->kd && !kdie__cu_ranges(k->kd, hdr, rs)) {
		for (i = 0; i < rs->cnt; i++)
			if (cu_add(k, cap, rs->v[i].lo, rs->v[i].hi, roff, hdr))
				return -ENOMEM;
		return 0;
	}
	if (!dwarf_offdie(k->dw, roff, &cu))
		return 0;
	for (r = 0; (r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0;)
		if (cu_add(k, cap, lo, hi, roff, hdr))
			return -ENOMEM;
	return 0;
}

static int index_cus(struct kobj *k)
{
	struct kdie_ranges rs = {};
	Dwarf_Off off = 0, next;
	size_t hsize, cap = 0;
	int err = 0;

	while (!err && dwarf_nextcu(k->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		err = index_cu(k, &cap, off, off + hsize, &rs);
		off = next;
	}
	free(rs.v);
	if (err)
		return err;
	qsort(k->cus, k->ncus, sizeof(*k->cus), cmp_cu);
	return 0;
}

static void notice_once(struct ksyms *s, const char *fmt, const char *arg)
	__attribute__((format(printf, 2, 0)));

static void notice_once(struct ksyms *s, const char *fmt, const char *arg)
{
	if (s->notice[0])
		return;
	snprintf(s->notice, sizeof(s->notice), fmt, arg);
	if (s->o.quiet)
		return;
	fflush(stdout);
	fprintf(stderr, "%s: %s\n", bin_name, s->notice);
}

const char *ksyms__notice(const struct ksyms *s)
{
	return s->notice[0] ? s->notice : NULL;
}

static int hex_to_bytes(const char *hex, unsigned char *out, size_t max)
{
	size_t n = 0;
	unsigned int b;

	while (hex[0] && hex[1] && n < max && sscanf(hex, "%2x", &b) == 1) {
		out[n++] = b;
		hex += 2;
	}
	return n;
}

static int progress(debuginfod_client *c, long done, long total)
{
	(void)c;
	fprintf(stderr, "\r%s: downloading the running kernel's vmlinux: %ld of %ld kB", bin_name,
		done >> 10, total > 0 ? total >> 10 : 0);
	return 0;
}

/* The running kernel's vmlinux by build-id from the debuginfod servers in
 * DEBUGINFOD_URLS, with a progress line on a terminal; the client caches it.
 */
static const char *vmlinux_from_debuginfod(const struct vmlinux_info *vi, char *buf, size_t len)
{
	unsigned char id[64];
	debuginfod_client *c;
	char *path = NULL;
	int fd, n;

	if (!getenv("DEBUGINFOD_URLS") || !*getenv("DEBUGINFOD_URLS") || !vi->kernel_id[0])
		return NULL;
	n = hex_to_bytes(vi->kernel_id, id, sizeof(id));
	c = debuginfod_begin();
	if (!c)
		return NULL;
	if (isatty(STDERR_FILENO))
		debuginfod_set_progressfn(c, progress);
	fd = debuginfod_find_debuginfo(c, id, n, &path);
	if (isatty(STDERR_FILENO))
		fputc('\n', stderr);
	debuginfod_end(c);
	if (fd < 0)
		return NULL;
	close(fd);
	snprintf(buf, len, "%s", path);
	free(path);
	return buf;
}

static const char *vmlinux_path(struct ksyms *s, char *buf, size_t len)
{
	struct vmlinux_info vi;

	if (debuginfo__find_vmlinux(s->o.vmlinux, &vi)) {
		if (s->o.live && !s->o.vmlinux && vmlinux_from_debuginfod(&vi, buf, len))
			return buf;	/* fetched by the build-id it has to match */
		notice_once(s, "no vmlinux with DWARF found (looked in %s and the usual places): "
			    "kernel frames stay symbol+off/size; install the kernel's debug package "
			    "or pass --vmlinux", debuginfo__search_paths()[0]);
		return NULL;
	}
	if (s->o.live && !s->o.vmlinux && !vi.id_matches) {
		notice_once(s, "%s is not the running kernel's (build-id differs): not used", vi.path);
		return NULL;
	}
	if (s->o.live && s->o.vmlinux && vi.kernel_id[0] && !vi.id_matches) {
		notice_once(s, "--vmlinux %s is not the running kernel's (build-id differs): not used",
			    vi.path);
		return NULL;
	}
	snprintf(buf, len, "%s", vi.path);
	return buf;
}

/* A module's object: beside --vmlinux, else under /lib/modules. */
static char found_module[PATH_MAX];
static const char *wanted_module;

static int find_module_cb(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	const char *base = path + ftw->base;
	size_t n = strlen(wanted_module);

	(void)st;
	if (type == FTW_F && !strncmp(base, wanted_module, n) &&
	    (!strcmp(base + n, ".ko") || !strcmp(base + n, ".ko.debug"))) {
		snprintf(found_module, sizeof(found_module), "%s", path);
		return 1;
	}
	return 0;
}

static const char *module_path(struct ksyms *s, const char *mod)
{
	struct utsname u;
	char dir[PATH_MAX];

	found_module[0] = '\0';
	wanted_module = mod;
	if (s->o.vmlinux) {
		snprintf(dir, sizeof(dir), "%s", s->o.vmlinux);
		*(strrchr(dir, '/') ? strrchr(dir, '/') : dir) = '\0';
		nftw(dir[0] ? dir : ".", find_module_cb, 16, FTW_PHYS);
	}
	if (!found_module[0] && s->o.live) {
		uname(&u);
		snprintf(dir, sizeof(dir), "/usr/lib/debug/lib/modules/%s", u.release);
		nftw(dir, find_module_cb, 16, FTW_PHYS);
		snprintf(dir, sizeof(dir), "/lib/modules/%s/kernel", u.release);
		if (!found_module[0])
			nftw(dir, find_module_cb, 16, FTW_PHYS);
	}
	return found_module[0] ? found_module : NULL;
}

/* Live, a module's object must be the loaded module's: refuse a definite
 * mismatch of /sys/module/MOD/notes against the file's build-id.
 */
static bool module_matches(struct ksyms *s, const char *mod, const char *path)
{
	char notes[PATH_MAX], want[BUILD_ID_HEX_LEN], got[BUILD_ID_HEX_LEN];
	bool dwarf;

	if (!s->o.live)
		return true;
	snprintf(notes, sizeof(notes), "/sys/module/%s/notes/.note.gnu.build-id", mod);
	if (notes_build_id(notes, want, sizeof(want)) || elf_build_id(path, got, sizeof(got), &dwarf))
		return true;
	if (!strcmp(want, got))
		return true;
	notice_once(s, "%s is not the loaded module's (build-id differs): not used", path);
	return false;
}

/* The object's file, and its cache when it has DWARF: a file without
 * may share the build-id of one with, and answer less.
 */
static int kobj_find(struct ksyms *s, struct kobj *k)
{
	char path[PATH_MAX], id[BUILD_ID_HEX_LEN];
	const char *p;
	bool is_vmlinux = !strcmp(k->name, "vmlinux"), dwarf;

	p = is_vmlinux ? vmlinux_path(s, path, sizeof(path)) : module_path(s, k->name);
	if (!p || (!is_vmlinux && !module_matches(s, k->name, p)))
		return -ENOENT;
	snprintf(k->path, sizeof(k->path), "%s", p);
	if (!elf_build_id(k->path, id, sizeof(id), &dwarf) && dwarf)
		k->cache = symcache__open(id, s->st);
	return 0;
}

/* libdw, symbols and indexes: only when a frame is not in the cache. */
static int kobj_load(struct kobj *k)
{
	if (k->loaded)
		return k->loaded > 0 ? 0 : -ENOENT;
	k->loaded = -1;
	k->dwfl = dwfl_begin(&offline_callbacks);
	if (!k->dwfl)
		return -ENOMEM;
	k->mod = dwfl_report_offline(k->dwfl, k->name, k->path, -1);
	dwfl_report_end(k->dwfl, NULL, NULL);
	if (!k->mod)
		return -ENOENT;
	k->dw = dwfl_module_getdwarf(k->mod, &k->bias);
	if (load_symbols(k))
		return -ENOENT;
	if (k->dw) {
		k->kd = kdie__new(k->dw);
		k->kl = kline__new(k->dw);
		if (k->kd)
			kdie__prefetch(k->kd);
		index_cus(k);
	}
	k->loaded = 1;
	return 0;
}

/* The object of a frame, found and checked once; NULL if there is none. */
static struct kobj *kobj_get(struct ksyms *s, const char *module)
{
	const char *name = module ? module : "vmlinux";
	struct kobj *tmp;
	size_t i;

	for (i = 0; i < s->nkobjs; i++)
		if (!strcmp(s->kobjs[i].name, name))
			return s->kobjs[i].path[0] ? &s->kobjs[i] : NULL;
	tmp = realloc(s->kobjs, (s->nkobjs + 1) * sizeof(*tmp));
	if (!tmp)
		return NULL;
	s->kobjs = tmp;
	memset(&s->kobjs[s->nkobjs], 0, sizeof(*s->kobjs));
	snprintf(s->kobjs[s->nkobjs].name, sizeof(s->kobjs->name), "%s", name);
	if (kobj_find(s, &s->kobjs[s->nkobjs++]))
		return NULL;
	return &s->kobjs[s->nkobjs - 1];
}

void ksyms__prepare(struct ksyms *s)
{
	kobj_get(s, NULL);
}

static const struct cu_range *find_cu(struct kobj *k, Dwarf_Addr a, Dwarf_Die *cu)
{
	size_t lo = 0, hi = k->ncus, i;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (k->cus[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* ranges may nest or overlap: look back over those starting below a */
	for (i = lo; i-- > 0;)
		if (a < k->cus[i].hi && a >= k->cus[i].lo)
			return dwarf_offdie(k->dw, k->cus[i].off, cu) ? &k->cus[i] : NULL;
	return NULL;
}

static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
	return n ? n : "";
}

/* kl: the CU's file table was read by kline__lookup(), else libdw's. */
static const char *call_file(struct kline *kl, Dwarf_Die *cu, Dwarf_Die *inl)
{
	Dwarf_Attribute attr;
	Dwarf_Files *files;
	Dwarf_Word idx;
	size_t nfiles;

	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &idx))
		return NULL;
	if (kl)
		return kline__file(kl, idx);
	if (dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

/* The file, line and column of a in cu, as dwarf_getsrc_die() and
 * dwarf_linesrc() give them: by kline, else by libdw. *kl_used says whose
 * file table call_file() is to read. False when there is no line.
 */
static bool line_of(struct kobj *k, Dwarf_Die *cu, Dwarf_Addr a, const char **file, int *lno,
		    int *col, struct kline **kl_used)
{
	struct kline_row row;
	Dwarf_Line *line;
	int rc = k->kl ? kline__lookup(k->kl, cu, a, &row) : -ENOTSUP;

	*kl_used = rc >= 0 ? k->kl : NULL;
	if (rc > 0) {
		*file = kline__file(k->kl, row.file);
		*lno = row.line;
		*col = row.col;
		return true;
	}
	if (!rc || !(line = dwarf_getsrc_die(cu, a)))
		return false;
	*file = dwarf_linesrc(line, NULL, NULL);
	dwarf_lineno(line, lno);
	dwarf_linecol(line, col);
	return true;
}

/* The scopes containing pc, innermost first, down to the CU: what
 * dwarf_getscopes() of pc then dwarf_getscopes_die() of its innermost
 * scope give (the DIE parents of an inlined body are where it was
 * inlined, not where it was defined). kdie reads them straight from the
 * section; libdw is asked only when kdie cannot tell. Returns the number
 * in *scopes (to be freed when *heap), or <= 0.
 */
static int scope_chain(struct kobj *k, const struct cu_range *r, Dwarf_Die *cu, Dwarf_Addr pc,
		       Dwarf_Die *stack, Dwarf_Die **scopes)
{
	Dwarf_Off path[KDIE_DEPTH_MAX];
	Dwarf_Die *tmp = NULL;
	int n, i;

	n = k->kd ? kdie__scope_path(k->kd, r->hdr, pc, path, KDIE_DEPTH_MAX) : -ENOTSUP;
	if (n >= 0) {
		for (i = 0; i < n; i++)
			if (!dwarf_offdie(k->dw, path[n - 1 - i], &stack[i]))
				return -EINVAL;
		*scopes = stack;
		return n;
	}
	n = dwarf_getscopes(cu, pc, &tmp);
	if (n > 0) {
		Dwarf_Die inner = tmp[0];

		free(tmp);
		tmp = NULL;
		n = dwarf_getscopes_die(&inner, &tmp);
	}
	*scopes = tmp;
	return n;
}

/* file:line of a, and the chain of inlined calls, as eu-addr2line -i.
 * The function a frame is in is named as the symbol table names it, as
 * the kernel printed it (clones like .cold and .part.0 included), when a
 * lies within that symbol; else DWARF's name, or none for padding.
 */
static void dwarf_sites(struct ksyms *s, struct kobj *k, Dwarf_Addr a, const struct ksym *ks,
			struct sym_loc *loc)
{
	/* zero-size symbols (markers) reach to the next one */
	bool covered = a >= ks->addr && a < ks->addr + (ks->size ? ks->size : ks->dist);
	Dwarf_Die cu, stack[KDIE_DEPTH_MAX], *scopes = NULL;
	const struct cu_range *r = NULL;
	struct kline *kl = NULL;
	Dwarf_Attribute attr;
	Dwarf_Word w;
	int n, i, lno = 0, col = 0;
	const char *file = NULL;

	if (!k->dw || !(r = find_cu(k, a - k->bias, &cu)) ||
	    !line_of(k, &cu, a - k->bias, &file, &lno, &col, &kl)) {
		/* no line information (trampolines, markers): only the name */
		if (!covered)
			return;
		loc->sites[0].func = strpool__keep(s->st, ks->name);
		loc->site_cnt = 1;
		loc->found = true;
		return;
	}
	n = scope_chain(k, r, &cu, a - k->bias, stack, &scopes);
	loc->site_cnt = 0;
	for (i = 0; i < n && loc->site_cnt < SYM_INLINE_MAX; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		loc->sites[loc->site_cnt].func = strpool__keep(s->st, tag == DW_TAG_subprogram && covered ?
						      ks->name : die_name(&scopes[i]));
		loc->sites[loc->site_cnt].file = strpool__keep(s->st, file);
		loc->sites[loc->site_cnt].line = lno;
		loc->sites[loc->site_cnt].col = col;
		loc->site_cnt++;
		if (tag == DW_TAG_subprogram)
			break;
		/* the next site is where this inlined body was called */
		file = call_file(kl, &cu, &scopes[i]);
		lno = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &w) ? 0 : w;
		col = dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_column, &attr), &w) ? 0 : w;
	}
	if (!loc->site_cnt) {	/* no DWARF function: assembly, or padding */
		loc->sites[0].func = strpool__keep(s->st, covered ? ks->name : "");
		loc->sites[0].file = strpool__keep(s->st, file);
		loc->sites[0].line = lno;
		loc->sites[0].col = col;
		loc->site_cnt = 1;
	}
	if (scopes != stack)
		free(scopes);
	loc->found = true;
}

/* The distance from addr to the next symbol, 0 for the last. */
static unsigned long long next_dist(const struct kobj *k, unsigned long long addr)
{
	size_t lo = 0, hi = k->naddrs;

	while (lo < hi) {	/* first above addr */
		size_t mid = (lo + hi) / 2;

		if (k->addrs[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->naddrs ? k->addrs[lo] - addr : 0;
}

/* Every symbol called name, by address; valid until the next call. */
static const struct ksym *find_name(struct kobj *k, const char *name, size_t *cnt)
{
	uint32_t i;
	struct ksym *tmp;

	*cnt = 0;
	if (!k->nsyms)
		return NULL;
	for (i = k->bucket[name_hash(name) & (k->nbuckets - 1)]; i != UINT32_MAX; i = k->chain[i]) {
		if (strcmp(k->syms[i].name, name))
			continue;
		if (*cnt == k->cand_cap) {
			tmp = realloc(k->cand, (k->cand_cap * 2 + 8) * sizeof(*tmp));
			if (!tmp)
				return NULL;
			k->cand = tmp;
			k->cand_cap = k->cand_cap * 2 + 8;
		}
		k->cand[*cnt] = k->syms[i];
		k->cand[*cnt].dist = next_dist(k, k->syms[i].addr);
		(*cnt)++;
	}
	if (*cnt > 1)
		qsort(k->cand, *cnt, sizeof(*k->cand), cmp_ksym_addr);
	return *cnt ? k->cand : NULL;
}

static struct memo *memo_slot(struct ksyms *s, size_t k, const struct frame *fr, bool exact)
{
	unsigned long long h = (fr->off * 0x9e3779b97f4a7c15ULL) ^ fr->size ^ k ^ exact;
	const char *c;

	if (!s->memo && !(s->memo = calloc(MEMO_SLOTS, sizeof(*s->memo))))
		return NULL;
	for (c = fr->sym; *c; c++)
		h = (h ^ (unsigned char)*c) * 0x100000001b3ULL;
	return &s->memo[h % MEMO_SLOTS];
}

static bool memo_hit(const struct memo *m, size_t k, const struct frame *fr, bool exact)
{
	return m && m->k == k && m->sym && m->off == fr->off && m->size == fr->size &&
	       m->exact == exact && !strcmp(m->sym, fr->sym);
}

/* Is frame i a trapping instruction, looked up as is (symbolize.h)? */
static bool frame_is_exact(const struct fault *f, int i)
{
	const char *prev = i > 0 ? f->frames[i - 1].sym : NULL;

	return prev && (!strncmp(prev, "asm_exc_", 8) || !strncmp(prev, "asm_sysvec_", 11) ||
			!strcmp(prev, "asm_common_interrupt"));
}

static int kernel_frame_uncached(struct ksyms *s, struct kobj *k, const struct fault *f, int i,
				 struct sym_loc *loc);

/* Memo (this process), then the build-id cache (earlier ones), then DWARF. */
int ksyms__frame(struct ksyms *s, const struct fault *f, int i, struct sym_loc *loc)
{
	const struct frame *fr = &f->frames[i];
	struct kobj *k = kobj_get(s, fr->module);
	bool exact = frame_is_exact(f, i);
	struct memo *m;
	size_t ki;
	int err;

	if (!k)
		return -ENOENT;
	ki = k - s->kobjs + 1;
	m = memo_slot(s, ki, fr, exact);
	if (memo_hit(m, ki, fr, exact)) {
		*loc = m->loc;
		return loc->found ? 0 : -ENOENT;
	}
	if (symcache__get(k->cache, fr->sym, fr->off, fr->size, exact, loc)) {
		err = loc->found ? 0 : -ENOENT;
	} else {
		if (kobj_load(k))
			return -ENOENT;
		err = kernel_frame_uncached(s, k, f, i, loc);
		symcache__put(k->cache, fr->sym, fr->off, fr->size, exact, loc);
	}
	if (m) {
		m->k = ki;
		m->off = fr->off;
		m->size = fr->size;
		m->exact = exact;
		m->sym = strpool__keep(s->st, fr->sym);
		m->loc = *loc;
	}
	return err;
}

static int kernel_frame_uncached(struct ksyms *s, struct kobj *k, const struct fault *f, int i,
				 struct sym_loc *loc)
{
	const struct frame *fr = &f->frames[i];
	const struct ksym *c, *pick = NULL;
	size_t n, j, by_size = 0;

	c = find_name(k, fr->sym, &n);
	if (!c)
		return -ENOENT;
	for (j = 0; j < n; j++) {
		if (n == 1 || c[j].dist == fr->size) {
			pick = &c[j];
			by_size++;
		}
	}
	loc->exact = frame_is_exact(f, i);
	if (by_size != 1) {	/* ambiguous: every candidate, no guess */
		loc->candidates = n;
		for (j = 0; j < n && j < SYM_CANDIDATES_MAX; j++)
			loc->cand_addr[j] = c[j].addr + fr->off;
		for (j = 0; j < n && j < SYM_INLINE_MAX; j++) {
			struct sym_loc one = {};

			dwarf_sites(s, k, c[j].addr + fr->off - !loc->exact, &c[j], &one);
			if (one.found)
				loc->sites[loc->site_cnt++] = one.sites[0];
		}
		loc->found = loc->site_cnt > 0;
		return loc->found ? 0 : -ENOENT;
	}
	loc->addr = pick->addr + fr->off - !loc->exact;
	dwarf_sites(s, k, loc->addr, pick, loc);
	return loc->found ? 0 : -ENOENT;
}
