// SPDX-License-Identifier: GPL-2.0
/* BPF frames: programs found by tag (subprograms have tags of their own)
 * and function name, the report's own program first, their jited line
 * info read while they are loaded, and what the journal learned of
 * programs since unloaded.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfsym.h"

typedef char hex_tag[17];

/* What tells a program's functions apart: enough to know whether a frame's
 * tag is one of them, kept for every program examined.
 */
struct seen {
	__u32 id;
	__u64 load_time;
	__u32 nr_tags;
	hex_tag *tags;		/* [0]: info.tag, then prog_tags[] */
};

struct bprog {
	__u32 id;
	__u64 load_time;
	__u32 nr_funcs;
	hex_tag *tags;		/* as struct seen */
	__u64 *ksyms;
	__u32 *func_lens;
	__u32 nr_linfo;
	struct bpf_line_info *linfo;
	__u64 *jited_linfo;
	struct btf *btf;
	/* each function's name as its ksym has it (BTF func_info), in btf;
	 * NULL without func_info: then the tag alone decides
	 */
	const char **names;
};

/* BPF frames resolved while their program was loaded, learned from the
 * journal: (owner, tag, offset) -> location, where the owner is the
 * program whose report named the frame. Chained by (tag, offset), so that
 * every owner's resolution of one frame is in one chain. LEARNED_BUCKETS
 * heads.
 */
#define LEARNED_BUCKETS 1024

struct learned {
	struct learned *next;
	__u32 owner_id;
	__u64 owner_load_time;
	hex_tag tag;
	unsigned long long off;
	struct sym_loc loc;
};

/* Tags looked for among the programs seen, with how many programs had
 * been seen then: the next fault looks only at programs seen since, not
 * at every one again. At most MISSING_MAX of them (past that, each look
 * goes through every program).
 */
#define MISSING_BUCKETS 256
#define MISSING_MAX	4096

struct missing {
	struct missing *next;
	hex_tag tag;
	size_t nseen;
};

struct bpfsym {
	struct strpool *st;
	struct bprog *progs;
	size_t nprogs;
	struct seen *seen;
	size_t nseen;
	__u32 max_seen_id;
	struct learned **learned;
	struct missing **missing;
	size_t nmissing;
};

struct bpfsym *bpfsym__new(struct strpool *st)
{
	struct bpfsym *s = calloc(1, sizeof(*s));

	if (s)
		s->st = st;
	return s;
}

static void bprog_fini(struct bprog *p)
{
	free(p->ksyms);
	free(p->func_lens);
	free(p->tags);
	free(p->linfo);
	free(p->jited_linfo);
	free(p->names);
	btf__free(p->btf);
}

void bpfsym__free(struct bpfsym *s)
{
	struct missing *m;
	struct learned *l;
	size_t i;

	if (!s)
		return;
	for (i = 0; i < s->nprogs; i++)
		bprog_fini(&s->progs[i]);
	free(s->progs);
	for (i = 0; i < s->nseen; i++)
		free(s->seen[i].tags);
	free(s->seen);
	for (i = 0; s->missing && i < MISSING_BUCKETS; i++) {
		while ((m = s->missing[i])) {
			s->missing[i] = m->next;
			free(m);
		}
	}
	free(s->missing);
	for (i = 0; s->learned && i < LEARNED_BUCKETS; i++) {
		while ((l = s->learned[i])) {
			s->learned[i] = l->next;
			free(l);
		}
	}
	free(s->learned);
	free(s);
}

static void to_hex(hex_tag out, const __u8 *raw)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < 8; i++) {
		out[2 * i] = digits[raw[i] >> 4];
		out[2 * i + 1] = digits[raw[i] & 15];
	}
	out[16] = '\0';
}

/* Which function has this tag: the main program's ksym uses info.tag,
 * subprograms prog_tags[i]; older kernels named function 0 with
 * prog_tags[0], so that is accepted too. tags[0] is info.tag, tags[i + 1]
 * prog_tags[i].
 */
static int tags_func(const hex_tag *tags, __u32 nr_tags, const char *tag)
{
	__u32 i;

	if (!strcmp(tags[0], tag))
		return 0;
	for (i = 1; i < nr_tags; i++)
		if (!strcmp(tags[i], tag))
			return i - 1;
	return -1;
}

/* info.tag and prog_tags[], as hex. */
static int read_tags(int fd, struct bpf_prog_info *info, hex_tag **out, __u32 *cnt)
{
	__u32 n = info->nr_prog_tags, len = sizeof(*info), i;
	__u8 (*raw)[8] = calloc(n + 1, sizeof(*raw));
	hex_tag *tags = calloc(n + 1, sizeof(*tags));
	__u8 main_tag[8];

	if (!raw || !tags)
		goto err;
	memcpy(main_tag, info->tag, sizeof(main_tag));
	memset(info, 0, sizeof(*info));
	info->nr_prog_tags = n;
	info->prog_tags = (__u64)(unsigned long)raw;
	if (bpf_obj_get_info_by_fd(fd, info, &len))
		goto err;
	to_hex(tags[0], main_tag);
	for (i = 0; i < n; i++)
		to_hex(tags[i + 1], raw[i]);
	free(raw);
	*out = tags;
	*cnt = n + 1;
	return 0;
err:
	free(raw);
	free(tags);
	return -ENOMEM;
}

/* Each function's BTF name, as the kernel names its ksym
 * (bpf_get_prog_name()). Without func_info, names stays NULL.
 */
static void read_names(int fd, struct bprog *p, __u32 nr_func_info)
{
	struct bpf_func_info *fi = calloc(nr_func_info + 1, sizeof(*fi));
	struct bpf_prog_info info = {};
	const struct btf_type *t;
	__u32 len = sizeof(info), i;

	p->names = calloc(p->nr_funcs + 1, sizeof(*p->names));
	if (!fi || !p->names || !p->btf || nr_func_info < p->nr_funcs)
		goto none;
	info.nr_func_info = nr_func_info;
	info.func_info_rec_size = sizeof(*fi);
	info.func_info = (__u64)(unsigned long)fi;
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		goto none;
	for (i = 0; i < p->nr_funcs; i++) {
		t = btf__type_by_id(p->btf, fi[i].type_id);
		p->names[i] = t ? btf__name_by_offset(p->btf, t->name_off) : NULL;
		if (!p->names[i])
			goto none;
	}
	free(fi);
	return;
none:
	free(fi);
	free(p->names);
	p->names = NULL;
}

static int bprog_load(int fd, struct bprog *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	__u32 nf, nl, njl, nfi;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	nfi = info.nr_func_info;
	nf = info.nr_jited_ksyms;
	nl = info.nr_line_info;
	njl = info.nr_jited_line_info;
	memset(p, 0, sizeof(*p));
	p->id = info.id;
	p->load_time = info.load_time;
	if (read_tags(fd, &info, &p->tags, &p->nr_funcs))
		return -ENOMEM;
	p->nr_funcs = nf < p->nr_funcs - 1 ? nf : p->nr_funcs - 1;
	p->ksyms = calloc(nf + 1, sizeof(*p->ksyms));
	p->func_lens = calloc(nf + 1, sizeof(*p->func_lens));
	p->linfo = calloc(nl + 1, sizeof(*p->linfo));
	p->jited_linfo = calloc(njl + 1, sizeof(*p->jited_linfo));
	if (!p->ksyms || !p->func_lens || !p->linfo || !p->jited_linfo)
		return -ENOMEM;
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = nf;
	info.jited_ksyms = (__u64)(unsigned long)p->ksyms;
	info.nr_jited_func_lens = nf;
	info.jited_func_lens = (__u64)(unsigned long)p->func_lens;
	info.nr_line_info = nl;
	info.line_info_rec_size = sizeof(struct bpf_line_info);
	info.line_info = (__u64)(unsigned long)p->linfo;
	info.nr_jited_line_info = njl;
	info.jited_line_info_rec_size = sizeof(__u64);
	info.jited_line_info = (__u64)(unsigned long)p->jited_linfo;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	p->nr_linfo = nl == njl ? nl : 0;	/* one jited address per entry */
	if (info.btf_id)
		p->btf = btf__load_from_kernel_by_id(info.btf_id);
	read_names(fd, p, nfi);
	return 0;
}

/* The function of p that a frame names: its tag, and its name where p's
 * are known (identical functions of one program share a tag too). -1:
 * none.
 */
static int prog_func(const struct bprog *p, const char *tag, const char *name)
{
	__u32 i;

	for (i = 0; i < p->nr_funcs; i++) {
		if (strcmp(p->tags[i + 1], tag) && (i || strcmp(p->tags[0], tag)))
			continue;
		if (!p->names || !name || !strcmp(p->names[i], name))
			return i;
	}
	return -1;
}

static struct bprog *find_prog(struct bpfsym *s, __u32 id, __u64 load_time)
{
	size_t i;

	for (i = 0; i < s->nprogs; i++)
		if (s->progs[i].id == id && s->progs[i].load_time == load_time)
			return &s->progs[i];
	return NULL;
}

/* Programs loaded since the last look: ids only grow, so only ids above
 * the highest seen are new, and a tag that is nowhere costs one syscall.
 */
static void see_new_programs(struct bpfsym *s)
{
	struct bpf_prog_info info;
	struct seen *tmp, *sn;
	__u32 id = s->max_seen_id, len;
	int fd;

	while (!bpf_prog_get_next_id(id, &id)) {
		s->max_seen_id = id;
		fd = bpf_prog_get_fd_by_id(id);
		if (fd < 0)
			continue;
		memset(&info, 0, sizeof(info));
		len = sizeof(info);
		tmp = realloc(s->seen, (s->nseen + 1) * sizeof(*tmp));
		if (tmp)
			s->seen = tmp;
		sn = tmp ? &s->seen[s->nseen] : NULL;
		if (sn && !bpf_obj_get_info_by_fd(fd, &info, &len)) {
			sn->id = id;
			sn->load_time = info.load_time;
			if (!read_tags(fd, &info, &sn->tags, &sn->nr_tags))
				s->nseen++;
		}
		close(fd);
	}
}

static unsigned long long tag_hash(const char *tag)
{
	unsigned long long h = 0xcbf29ce484222325ULL;

	for (; *tag; tag++)
		h = (h ^ (unsigned char)*tag) * 0x100000001b3ULL;
	return h;
}

/* The tag's entry among the missing, made when there is room (NULL else). */
static struct missing *missing_of(struct bpfsym *s, const char *tag)
{
	struct missing **head, *m;

	if (!s->missing && !(s->missing = calloc(MISSING_BUCKETS, sizeof(*s->missing))))
		return NULL;
	head = &s->missing[tag_hash(tag) % MISSING_BUCKETS];
	for (m = *head; m; m = m->next)
		if (!strcmp(m->tag, tag))
			return m;
	if (s->nmissing >= MISSING_MAX || !(m = calloc(1, sizeof(*m))))
		return NULL;
	snprintf(m->tag, sizeof(m->tag), "%s", tag);
	m->next = *head;
	*head = m;
	s->nmissing++;
	return m;
}

/* Load a program seen before, if it is still the one that had its id. */
static void cache_seen(struct bpfsym *s, const struct seen *sn)
{
	struct bpf_prog_info info = {};
	struct bprog p, *tmp;
	__u32 len = sizeof(info);
	int fd;

	fd = bpf_prog_get_fd_by_id(sn->id);
	if (fd < 0)
		return;
	/* the same program, not a later one that got its id */
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.load_time != sn->load_time ||
	    bprog_load(fd, &p)) {
		close(fd);
		return;
	}
	close(fd);
	tmp = realloc(s->progs, (s->nprogs + 1) * sizeof(*tmp));
	if (!tmp) {
		bprog_fini(&p);
		return;
	}
	s->progs = tmp;
	s->progs[s->nprogs++] = p;
}

/* Load every program that has this tag and is still loaded: the report's
 * own program, or any other built from the same code, may be the one.
 */
static void cache_tag(struct bpfsym *s, const char *tag)
{
	struct missing *m = missing_of(s, tag);
	size_t i;

	for (i = m ? m->nseen : 0; i < s->nseen; i++)
		if (tags_func(s->seen[i].tags, s->seen[i].nr_tags, tag) >= 0 &&
		    !find_prog(s, s->seen[i].id, s->seen[i].load_time))
			cache_seen(s, &s->seen[i]);
	if (m)
		m->nseen = s->nseen;
}

/* A tag some cached program has: warming it learns nothing new (another
 * program loaded since with that tag has the same instructions).
 */
static bool tag_cached(const struct bpfsym *s, const char *tag)
{
	size_t i;

	for (i = 0; i < s->nprogs; i++)
		if (tags_func(s->progs[i].tags, s->progs[i].nr_funcs + 1, tag) >= 0)
			return true;
	return false;
}

/* A storm repeats its program's frames: once they are cached, a report
 * costs no syscall.
 */
void bpfsym__warm(struct bpfsym *s, const struct fault *f)
{
	int i;

	for (i = 0; i < f->frame_cnt; i++)
		if (f->frames[i].is_bpf && !tag_cached(s, f->frames[i].tag))
			break;
	if (i == f->frame_cnt)
		return;
	see_new_programs(s);
	for (i = 0; i < f->frame_cnt; i++)
		if (f->frames[i].is_bpf)
			cache_tag(s, f->frames[i].tag);
}

static struct learned **learned_head(struct bpfsym *s, const char *tag, unsigned long long off)
{
	unsigned long long h = (off * 0x9e3779b97f4a7c15ULL) ^ tag_hash(tag);

	if (!s->learned && !(s->learned = calloc(LEARNED_BUCKETS, sizeof(*s->learned))))
		return NULL;
	return &s->learned[h % LEARNED_BUCKETS];
}

static bool is_owner(const struct learned *l, const struct prog_ident *owner)
{
	return l->owner_id == owner->id && l->owner_load_time == owner->load_time_ns;
}

static const struct learned *find_learned(struct bpfsym *s, const struct prog_ident *owner,
					  const char *tag, unsigned long long off)
{
	struct learned **head = learned_head(s, tag, off), *l;

	for (l = head ? *head : NULL; l; l = l->next)
		if (l->off == off && !strcmp(l->tag, tag) && is_owner(l, owner))
			return l;
	return NULL;
}

bool bpfsym__knows(struct bpfsym *s, const struct prog_ident *owner, const char *tag,
		   unsigned long long off)
{
	return find_learned(s, owner, tag, off) != NULL;
}

int bpfsym__learn(struct bpfsym *s, const struct prog_ident *owner, const char *tag,
		  unsigned long long off, const struct sym_loc *loc)
{
	struct learned **head, *l;
	int i;

	if (find_learned(s, owner, tag, off))
		return 0;
	head = learned_head(s, tag, off);
	l = head ? calloc(1, sizeof(*l)) : NULL;
	if (!l)
		return -ENOMEM;
	l->owner_id = owner->id;
	l->owner_load_time = owner->load_time_ns;
	snprintf(l->tag, sizeof(l->tag), "%s", tag);
	l->off = off;
	l->loc = *loc;
	for (i = 0; i < loc->site_cnt && i < SYM_INLINE_MAX; i++) {
		l->loc.sites[i].func = strpool__keep(s->st, loc->sites[i].func);
		l->loc.sites[i].file = strpool__keep(s->st, loc->sites[i].file);
	}
	l->loc.src_text = strpool__keep(s->st, loc->src_text);
	l->next = *head;
	*head = l;
	return 0;
}

/* The kernel's rule (bpf_prog_get_file_line): the last line entry of the
 * function whose jited address is below ip.
 */
static int resolve(struct bpfsym *s, const struct bprog *p, int func, const struct frame *fr,
		   struct sym_loc *loc)
{
	const struct bpf_line_info *li = NULL;
	__u64 lo, hi, ip;
	__u32 i;

	if (func < 0 || (__u32)func >= p->nr_funcs || !p->btf)
		return -ENOENT;
	lo = p->ksyms[func];
	hi = lo + p->func_lens[func];
	ip = lo + fr->off;
	for (i = 0; i < p->nr_linfo; i++) {
		if (p->jited_linfo[i] < lo || p->jited_linfo[i] >= hi)
			continue;
		if (p->jited_linfo[i] >= ip)
			break;
		li = &p->linfo[i];
	}
	if (!li)
		return -ENOENT;
	memset(loc, 0, sizeof(*loc));
	loc->found = true;
	loc->addr = ip;
	loc->site_cnt = 1;
	loc->sites[0].func = strpool__keep(s->st, fr->func);
	loc->sites[0].file = strpool__keep(s->st, btf__name_by_offset(p->btf, li->file_name_off));
	loc->sites[0].line = BPF_LINE_INFO_LINE_NUM(li->line_col);
	loc->sites[0].col = BPF_LINE_INFO_LINE_COL(li->line_col);
	loc->src_text = strpool__keep(s->st, btf__name_by_offset(p->btf, li->line_off));
	return 0;
}

static bool same_site(const struct sym_site *a, const struct sym_site *b)
{
	return a->line == b->line && a->col == b->col &&
	       !strcmp(a->file ? a->file : "", b->file ? b->file : "");
}

/* One more place the frame may be: loc gathers the distinct ones, the
 * first one whole, the others as sites (candidates counts them).
 */
static void add_candidate(struct sym_loc *loc, const struct sym_loc *one)
{
	int i;

	if (!one->site_cnt)
		return;
	if (!loc->candidates) {
		*loc = *one;
		loc->site_cnt = 1;
		loc->candidates = 1;
		return;
	}
	for (i = 0; i < loc->site_cnt; i++)
		if (same_site(&loc->sites[i], &one->sites[0]))
			return;
	if (loc->site_cnt < SYM_INLINE_MAX)
		loc->sites[loc->site_cnt++] = one->sites[0];
	loc->candidates++;
}

/* Not the report's own program's: every program, loaded or learned of,
 * whose function has the frame's tag and name. When they differ, all are
 * given: a program built from the same code elsewhere is not this one.
 */
static int by_tag_and_name(struct bpfsym *s, const struct frame *fr, struct sym_loc *loc)
{
	struct learned **head = learned_head(s, fr->tag, fr->off), *l;
	struct sym_loc one;
	size_t i;

	memset(loc, 0, sizeof(*loc));
	for (i = 0; i < s->nprogs; i++)
		if (!resolve(s, &s->progs[i], prog_func(&s->progs[i], fr->tag, fr->func), fr, &one))
			add_candidate(loc, &one);
	for (l = head ? *head : NULL; l; l = l->next)
		if (l->off == fr->off && !strcmp(l->tag, fr->tag) && l->loc.sites[0].func &&
		    !strcmp(l->loc.sites[0].func, fr->func))
			add_candidate(loc, &l->loc);
	if (!loc->candidates)
		return -ENOENT;
	if (loc->candidates > 1)
		loc->src_text = NULL;	/* whose? */
	else
		loc->candidates = 0;
	return 0;
}

/* The report's own program (and its subprograms) first: what was learned
 * of it, else its line info while it is cached; then by tag and name.
 */
int bpfsym__frame(struct bpfsym *s, const struct prog_ident *owner, const struct frame *fr,
		  struct sym_loc *loc)
{
	const struct learned *known;
	struct bprog *p;

	if (owner && owner->id) {
		known = find_learned(s, owner, fr->tag, fr->off);
		if (known) {
			*loc = known->loc;
			return 0;
		}
		p = find_prog(s, owner->id, owner->load_time_ns);
		if (p && !resolve(s, p, prog_func(p, fr->tag, fr->func), fr, loc))
			return 0;
	}
	return by_tag_and_name(s, fr, loc);
}
