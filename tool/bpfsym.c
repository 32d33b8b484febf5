// SPDX-License-Identifier: GPL-2.0
/* BPF frames: programs found by tag (subprograms have tags of their own),
 * their jited line info read while they are loaded, and what the journal
 * learned of programs since unloaded.
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
};

/* BPF frames resolved while their program was loaded, learned from the
 * journal: (tag, offset) -> location. Chained, LEARNED_BUCKETS heads.
 */
#define LEARNED_BUCKETS 1024

struct learned {
	struct learned *next;
	hex_tag tag;
	unsigned long long off;
	struct sym_loc loc;
};

/* Tags looked for among the programs seen and not found, with how many
 * programs had been seen then: the next fault of a program that is gone
 * looks only at programs seen since, not at every one again. At most
 * MISSING_MAX of them (past that, each miss looks at every program).
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

static int bprog_load(int fd, struct bprog *p)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	__u32 nf, nl, njl;

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
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
	return 0;
}

static struct bprog *find_cached(struct bpfsym *s, const char *tag, int *func)
{
	size_t i;

	for (i = s->nprogs; i-- > 0;) {
		*func = tags_func(s->progs[i].tags, s->progs[i].nr_funcs + 1, tag);
		if (*func >= 0)
			return &s->progs[i];
	}
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

/* Load the program that has this tag, if it is still loaded. */
static void cache_tag(struct bpfsym *s, const char *tag)
{
	struct bpf_prog_info info = {};
	struct missing *m;
	struct bprog p, *tmp;
	__u32 len = sizeof(info);
	size_t i;
	int fd;

	see_new_programs(s);
	m = missing_of(s, tag);
	for (i = m ? m->nseen : 0;
	     i < s->nseen && tags_func(s->seen[i].tags, s->seen[i].nr_tags, tag) < 0; i++)
		;
	if (m)
		m->nseen = i;	/* not among those before i: found at i, or none */
	if (i == s->nseen)
		return;
	fd = bpf_prog_get_fd_by_id(s->seen[i].id);
	if (fd < 0)
		return;
	/* the same program, not a later one that got its id */
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || info.load_time != s->seen[i].load_time ||
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

void bpfsym__warm(struct bpfsym *s, const struct fault *f)
{
	int i, func;

	for (i = 0; i < f->frame_cnt; i++)
		if (f->frames[i].is_bpf && !find_cached(s, f->frames[i].tag, &func))
			cache_tag(s, f->frames[i].tag);
}

static struct learned **learned_head(struct bpfsym *s, const char *tag, unsigned long long off)
{
	unsigned long long h = (off * 0x9e3779b97f4a7c15ULL) ^ tag_hash(tag);

	if (!s->learned && !(s->learned = calloc(LEARNED_BUCKETS, sizeof(*s->learned))))
		return NULL;
	return &s->learned[h % LEARNED_BUCKETS];
}

static const struct learned *find_learned(struct bpfsym *s, const char *tag,
					  unsigned long long off)
{
	struct learned **head = learned_head(s, tag, off), *l;

	for (l = head ? *head : NULL; l; l = l->next)
		if (l->off == off && !strcmp(l->tag, tag))
			return l;
	return NULL;
}

bool bpfsym__knows(struct bpfsym *s, const char *tag, unsigned long long off)
{
	return find_learned(s, tag, off) != NULL;
}

int bpfsym__learn(struct bpfsym *s, const char *tag, unsigned long long off,
		  const struct sym_loc *loc)
{
	struct learned **head, *l;
	int i;

	if (find_learned(s, tag, off))
		return 0;
	head = learned_head(s, tag, off);
	l = head ? calloc(1, sizeof(*l)) : NULL;
	if (!l)
		return -ENOMEM;
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
int bpfsym__frame(struct bpfsym *s, const struct frame *fr, struct sym_loc *loc)
{
	const struct learned *known = find_learned(s, fr->tag, fr->off);
	const struct bpf_line_info *li = NULL;
	struct bprog *p;
	__u64 lo, hi, ip;
	__u32 i;
	int func;

	if (known) {
		*loc = known->loc;
		return 0;
	}
	p = find_cached(s, fr->tag, &func);
	if (!p || (__u32)func >= p->nr_funcs || !p->btf)
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
