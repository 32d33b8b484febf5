// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "ids.h"
#include "progs.h"
#include "readers.h"
#include "stream.h"
#include "fill.h"
#include "watch.h"
#include "progs.skel.h"
#include "../bpf/progs.h"

struct iter_buf {
	char *data;
	size_t cap, len;
};

struct progs {
	struct progs_bpf *skel;
	struct bpf_link *prog_link;
	struct bpf_link *owner_link;
	__u32 self_ids[6];		/* our own iterators, check, fill wake, readers: not shown */
	struct iter_buf prog_buf;
	struct iter_buf owner_buf;
	bool want_stats;
	/* progs__refresh(): the last list, kept while the watch says nothing
	 * changed; the owner records it was given (sorted)
	 */
	struct watch *watch;		/* NULL: every refresh walks */
	int watch_err;			/* why not: 0 until first tried */
	struct fill *fill;		/* NULL: no fill wake */
	int fill_err;			/* why not: 0 until first tried */
	struct readers *readers;	/* NULL: other readers are not seen */
	int readers_err;		/* why not: 0 until first tried */
	bool watching;			/* the watch holds the cached list's programs */
	struct prog_list cache;
	bool cached, cached_owners;
	struct timespec owners_at;	/* CLOCK_MONOTONIC */
	struct iter_buf owner_prev;
	/* a pidfd for each process in owner_prev but us, readable once it
	 * exits; exits_watched false when not all could be had (watch_exits())
	 */
	struct pollfd exits[OWNER_EXITS_MAX];
	pid_t exit_pid[OWNER_EXITS_MAX];
	int nexits;
	bool exits_watched;
	int owners_max_age;		/* seconds */
};

/* Process-wide, so that lists of two progs objects never share a gen. */
static unsigned long long last_gen;

static __u32 prog_fd_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

/* ---- owners' exits: an owner that went is told at the next refresh ---- */

static void unwatch_exits(struct progs *p)
{
	while (p->nexits)
		close(p->exits[--p->nexits].fd);
	p->exits_watched = false;
}

static bool exit_watched(const struct progs *p, pid_t pid)
{
	int i;

	for (i = 0; i < p->nexits; i++)
		if (p->exit_pid[i] == pid)
			return true;
	return false;
}

/* Descriptors left free for everything else (the journal, programs,
 * iterators) when pidfds would come close to RLIMIT_NOFILE.
 */
#define EXITS_FD_HEADROOM	64

/* A pidfd for every process in owner_prev. Too many processes, too few
 * descriptors left, pidfds refused, or a pid not found (gone since the
 * read), and the owners are read every PROGS_OWNERS_UNWATCHED_AGE seconds
 * instead.
 */
static void watch_exits(struct progs *p)
{
	const struct owner_rec *o = (const struct owner_rec *)p->owner_prev.data;
	size_t i, n = p->owner_prev.len / sizeof(*o);
	pid_t pid, self = getpid();
	struct rlimit lim;
	int fd;

	if (getrlimit(RLIMIT_NOFILE, &lim))
		lim.rlim_cur = RLIM_INFINITY;

	unwatch_exits(p);
	for (i = 0; i < n; i++) {
		pid = o[i].pid;
		if (pid == self || exit_watched(p, pid))
			continue;
		if (p->nexits == OWNER_EXITS_MAX)
			goto unwatched;
		fd = syscall(SYS_pidfd_open, pid, 0);
		if (fd < 0)
			goto unwatched;
		/* the lowest free descriptor: as many are in use */
		if (lim.rlim_cur != RLIM_INFINITY && (rlim_t)fd + EXITS_FD_HEADROOM >= lim.rlim_cur) {
			close(fd);
			goto unwatched;
		}
		p->exits[p->nexits] = (struct pollfd){ .fd = fd, .events = POLLIN };
		p->exit_pid[p->nexits++] = pid;
	}
	p->exits_watched = true;
	return;
unwatched:
	unwatch_exits(p);
}

void progs__owners_max_age(struct progs *p, int secs)
{
	p->owners_max_age = secs;
}

void progs__want_stats(struct progs *p, bool on)
{
	p->skel->bss->want_stats = on;
	p->want_stats = on;
	/* the cached list was read with or without them: the next refresh
	 * walks (with statistics on, every one does: they change each run)
	 */
	p->watching = false;
}

int progs__open(struct progs **out)
{
	struct progs *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->owners_max_age = PROGS_OWNERS_MAX_AGE;
	p->skel = progs_bpf__open();
	if (!p->skel) {
		err = -errno;
		goto err_free;
	}
	err = libbpf_num_possible_cpus();
	if (err < 0)
		goto err_destroy;
	p->skel->rodata->nr_cpus = err;
	err = progs_bpf__load(p->skel);
	if (err)
		goto err_destroy;
	p->prog_link = bpf_program__attach_iter(p->skel->progs.list_progs, NULL);
	if (!p->prog_link) {
		err = -errno;
		goto err_destroy;
	}
	p->owner_link = bpf_program__attach_iter(p->skel->progs.list_owners, NULL);
	if (!p->owner_link) {
		err = -errno;
		goto err_destroy;
	}
	p->self_ids[0] = prog_fd_id(bpf_program__fd(p->skel->progs.list_progs));
	p->self_ids[1] = prog_fd_id(bpf_program__fd(p->skel->progs.list_owners));
	*out = p;
	return 0;

err_destroy:
	bpf_link__destroy(p->owner_link);
	bpf_link__destroy(p->prog_link);
	progs_bpf__destroy(p->skel);
err_free:
	free(p);
	return err;
}

void progs__close(struct progs *p)
{
	if (!p)
		return;
	unwatch_exits(p);
	bpf_link__destroy(p->owner_link);
	bpf_link__destroy(p->prog_link);
	progs_bpf__destroy(p->skel);
	watch__close(p->watch);
	fill__close(p->fill);
	readers__close(p->readers);
	free(p->prog_buf.data);
	free(p->owner_buf.data);
	free(p->owner_prev.data);
	prog_list__free(&p->cache);
	free(p);
}

/* Read a whole iterator into a buffer kept across snapshots; each read(2)
 * runs the program over as many objects as fit.
 */
static int read_iter(struct bpf_link *link, struct iter_buf *b)
{
	int fd, err = 0;
	ssize_t n;
	char *tmp;

	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0)
		return -errno;
	b->len = 0;
	for (;;) {
		if (b->cap - b->len < 16 * 1024) {
			tmp = realloc(b->data, b->cap ? b->cap * 2 : 64 * 1024);
			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			b->data = tmp;
			b->cap = b->cap ? b->cap * 2 : 64 * 1024;
		}
		n = read(fd, b->data + b->len, b->cap - b->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? -errno : 0;
			break;
		}
		b->len += n;
	}
	close(fd);
	return err;
}

/* Wall-clock minus boot-time now, in ns: once per snapshot. */
static long long boot_to_wall_ns(void)
{
	struct timespec real, boot;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return (real.tv_sec - boot.tv_sec) * 1000000000LL + real.tv_nsec - boot.tv_nsec;
}

static void hex_tag(char *out, const __u8 *tag)
{
	static const char digits[] = "0123456789abcdef";
	int i;

	for (i = 0; i < PROG_TAG_LEN; i++) {
		out[2 * i] = digits[tag[i] >> 4];
		out[2 * i + 1] = digits[tag[i] & 15];
	}
	out[2 * PROG_TAG_LEN] = '\0';
}

/* The kernel names a program's ksym "bpf_prog_<tag>_<name>", where name is
 * the BTF function name when the program has func_info: the full name
 * that the 16-byte prog name cuts.
 */
static void set_full_name(struct prog_ident *id, const char *kname, const struct prog_id_rec *r)
{
	const char *ksym = r->ksym, *n;
	size_t prefix = strlen("bpf_prog_") + 2 * PROG_TAG_LEN + 1;

	strcpy(id->name, kname);
	if (strlen(kname) < PROG_NAME_LEN - 1)
		return;
	if (strncmp(ksym, "bpf_prog_", 9) || strnlen(ksym, sizeof(r->ksym)) <= prefix ||
	    strnlen(ksym, sizeof(r->ksym)) == sizeof(r->ksym))
		return;
	n = ksym + prefix;
	/* only when it extends the kernel's name; else keep the kernel's */
	if (!strncmp(n, kname, strlen(kname)))
		snprintf(id->name, sizeof(id->name), "%s", n);
}

void prog_ident_of(struct prog_ident *id, char kname[PROG_KNAME_MAX], const struct prog_id_rec *r)
{
	id->id = r->id;
	id->type = r->type;
	id->load_time_ns = r->load_time;
	hex_tag(id->tag, r->tag);
	memcpy(kname, r->name, PROG_KNAME_MAX);
	kname[PROG_KNAME_MAX - 1] = '\0';
	set_full_name(id, kname, r);
}

bool prog_ident__same(const struct prog_ident *a, const struct prog_ident *b)
{
	return a->id == b->id && a->load_time_ns == b->load_time_ns && !strcmp(a->tag, b->tag);
}

static void prog_from_rec(struct prog *p, const struct prog_rec *r, long long wall_off)
{
	int i;

	memset(p, 0, sizeof(*p));
	prog_ident_of(&p->ident, p->kname, &r->ident);
	p->uid = r->uid;
	p->btf_id = r->btf_id;
	p->jited_len = r->jited_len;
	p->xlated_len = r->xlated_len;
	p->loaded_at = (r->ident.load_time + wall_off) / 1000000000LL;
	p->has_streams = r->flags & PROG_REC_HAS_STREAMS;
	p->has_error_count = r->flags & PROG_REC_HAS_ERR_COUNT;
	p->has_drops = r->flags & PROG_REC_HAS_DROPS;
	for (i = 0; i < STREAM_CNT; i++) {
		p->capacity[i] = r->capacity[i];
		p->dropped_msgs[i] = r->dropped_msgs[i];
		p->dropped_bytes[i] = r->dropped_bytes[i];
	}
	p->error_count = r->error_count;
	p->has_stats = r->flags & PROG_REC_HAS_STATS;
	p->run_cnt = r->run_cnt;
	p->run_time_ns = r->run_time_ns;
	p->recursion_misses = r->recursion_misses;
}

static int cmp_prog_id(const void *a, const void *b)
{
	const struct prog *x = a, *y = b;

	return x->ident.id < y->ident.id ? -1 : x->ident.id > y->ident.id;
}

static int cmp_owner(const void *a, const void *b)
{
	const struct owner_rec *x = a, *y = b;

	if (x->prog_id != y->prog_id)
		return x->prog_id < y->prog_id ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

static struct prog *find_mut(struct prog_list *l, __u32 id)
{
	struct prog key = { .ident.id = id };

	return bsearch(&key, l->progs, l->cnt, sizeof(*l->progs), cmp_prog_id);
}

const struct prog *prog_list__find(const struct prog_list *l, __u32 id)
{
	return find_mut((struct prog_list *)l, id);
}

/* A process holding several fds of one program is one owner; o is sorted
 * (read_owners()).
 */
static int attach_owners(struct prog_list *l, const struct owner_rec *o, size_t cnt)
{
	struct prog_owner *slot;
	struct prog *p;
	size_t i;

	for (i = 0; i < cnt; i++) {
		if (i && !cmp_owner(&o[i], &o[i - 1]))
			continue;
		p = find_mut(l, o[i].prog_id);
		if (!p)
			continue;	/* loaded between the two reads */
		slot = realloc(p->owners, (p->owner_cnt + 1) * sizeof(*slot));
		if (!slot)
			return -ENOMEM;
		p->owners = slot;
		slot += p->owner_cnt++;
		slot->pid = o[i].pid;
		memcpy(slot->comm, o[i].comm, sizeof(slot->comm));
		slot->comm[sizeof(slot->comm) - 1] = '\0';
	}
	return 0;
}

static void detach_owners(struct prog_list *l)
{
	size_t i;

	for (i = 0; i < l->cnt; i++) {
		free(l->progs[i].owners);
		l->progs[i].owners = NULL;
		l->progs[i].owner_cnt = 0;
	}
}

/* Every owner record into p->owner_buf, sorted: two reads over the same
 * owners then compare equal byte for byte.
 */
static int read_owners(struct progs *p)
{
	int err = read_iter(p->owner_link, &p->owner_buf);

	if (!err)
		qsort(p->owner_buf.data, p->owner_buf.len / sizeof(struct owner_rec),
		      sizeof(struct owner_rec), cmp_owner);
	return err;
}

static int attach_read_owners(struct progs *p, struct prog_list *l)
{
	return attach_owners(l, (const struct owner_rec *)p->owner_buf.data,
			     p->owner_buf.len / sizeof(struct owner_rec));
}

bool progs__own(const struct progs *p, __u32 id)
{
	size_t i;

	for (i = 0; i < sizeof(p->self_ids) / sizeof(p->self_ids[0]); i++)
		if (id && id == p->self_ids[i])
			return true;
	return stream_own_prog(id);
}

int progs__snapshot(struct progs *p, struct prog_list *out, unsigned int flags)
{
	long long wall_off = boot_to_wall_ns();
	const struct prog_rec *recs;
	struct prog_list l = {};
	size_t cnt, i;
	int err;

	clock_gettime(CLOCK_REALTIME, &l.taken);
	err = read_iter(p->prog_link, &p->prog_buf);
	if (err)
		return err;
	p->owner_buf.len = 0;
	if (flags & PROGS_OWNERS) {
		err = read_owners(p);
		if (err)
			return err;
	}
	cnt = p->prog_buf.len / sizeof(struct prog_rec);
	recs = (const struct prog_rec *)p->prog_buf.data;
	l.progs = malloc((cnt ? cnt : 1) * sizeof(*l.progs));
	if (!l.progs)
		return -ENOMEM;
	for (i = 0; i < cnt; i++) {
		if (progs__own(p, recs[i].ident.id))
			continue;
		prog_from_rec(&l.progs[l.cnt++], &recs[i], wall_off);
	}
	qsort(l.progs, l.cnt, sizeof(*l.progs), cmp_prog_id);
	err = attach_read_owners(p, &l);
	if (err) {
		prog_list__free(&l);
		return err;
	}
	*out = l;
	return 0;
}

/* ---- progs__refresh(): walk only when the watch says something changed ---- */

static bool env_set(const char *name)
{
	const char *v = getenv(name);

	return v && *v && strcmp(v, "0");
}

/* Tried once, by the first reader that waits on it (top does not: it
 * drains at its refresh): BPFSTDERR_NO_FILL_WAKE leaves it out
 * (-ECANCELED), as a kernel that refuses it would.
 */
static void open_fill(struct progs *p)
{
	if (p->fill || p->fill_err)
		return;
	if (env_set("BPFSTDERR_NO_FILL_WAKE"))
		p->fill_err = -ECANCELED;
	else
		p->fill_err = fill__open(&p->fill);
	if (p->fill) {
		int fds[2];

		fill__prog_fds(p->fill, fds);
		p->self_ids[3] = prog_fd_id(fds[0]);
		p->self_ids[4] = prog_fd_id(fds[1]);
	}
}

struct readers *progs__readers(struct progs *p)
{
	if (p->readers || p->readers_err)
		return p->readers;
	p->readers_err = readers__open(&p->readers);
	if (p->readers)
		p->self_ids[5] = prog_fd_id(readers__prog_fd(p->readers));
	return p->readers;
}

int progs__readers_err(struct progs *p)
{
	progs__readers(p);
	return p->readers_err;
}

int progs__watch(struct progs *p)
{
	if (p->watch || p->watch_err)
		return p->watch_err;
	if (env_set("BPFSTDERR_FULL_WALK"))
		p->watch_err = -ECANCELED;
	else
		p->watch_err = watch__open(&p->watch);
	if (p->watch)
		p->self_ids[2] = prog_fd_id(watch__prog_fd(p->watch));
	return p->watch_err;
}

/* ---- the fill wake (fill.h) and its fallback, for session__wait() ---- */

int progs__fill_fd(struct progs *p)
{
	open_fill(p);
	return p->fill ? fill__fd(p->fill) : -1;
}

struct fill *progs__fill(struct progs *p)
{
	open_fill(p);
	return p->fill;
}

void progs__fill_rearm(struct progs *p)
{
	if (p->fill)
		fill__rearm(p->fill);
}

int progs__filling(struct progs *p, bool every)
{
	if (!p->watch || !p->watching)
		return -ENOENT;
	return watch__filling(p->watch, every);
}

int progs__fill_err(struct progs *p)
{
	open_fill(p);
	return p->fill_err;
}

/* Programs the pipeline reads every cycle: bytes accounted, or no
 * accounting to tell.
 */
static bool prog_active(const struct prog *q)
{
	return !q->has_streams || stream_fullest(q->capacity) > 0;
}

static int index_active(struct prog_list *l)
{
	size_t i;

	l->active = malloc((l->cnt ? l->cnt : 1) * sizeof(*l->active));
	if (!l->active)
		return -ENOMEM;
	for (i = 0; i < l->cnt; i++)
		if (prog_active(&l->progs[i]))
			l->active[l->cnt_active++] = i;
	return 0;
}

/* The owners found for the cached list move to the new one, program by
 * program: those of a program that went stay behind, to be freed.
 */
static void keep_owners(struct prog_list *to, struct prog_list *from)
{
	struct prog *q;
	size_t i;

	for (i = 0; i < from->cnt; i++) {
		q = find_mut(to, from->progs[i].ident.id);
		if (!q || !prog_ident__same(&q->ident, &from->progs[i].ident))
			continue;
		q->owners = from->progs[i].owners;
		q->owner_cnt = from->progs[i].owner_cnt;
		from->progs[i].owners = NULL;
		from->progs[i].owner_cnt = 0;
	}
}

static void swap_bufs(struct iter_buf *a, struct iter_buf *b)
{
	struct iter_buf t = *a;

	*a = *b;
	*b = t;
}

/* The walk just read (p->prog_buf) to the watch: only programs with
 * stream accounting, whose every change it can see.
 */
static bool watch_walked(struct progs *p)
{
	const struct prog_rec *recs = (const struct prog_rec *)p->prog_buf.data;
	size_t i, n = p->prog_buf.len / sizeof(*recs);

	if (!p->watch || p->want_stats)
		return false;
	for (i = 0; i < n; i++)
		if (!(recs[i].flags & PROG_REC_HAS_STREAMS) || (recs[i].flags & PROG_REC_HAS_ERR_COUNT))
			return false;
	return watch__remember(p->watch, recs, n);
}

/* Has a process of the owners last read exited? One poll(2), no wait. */
static bool owner_exited(struct progs *p)
{
	return p->nexits && poll(p->exits, p->nexits, 0) > 0;
}

static bool owners_stale(struct progs *p)
{
	struct timespec now;
	long age;

	if (!p->cached_owners)
		return true;
	clock_gettime(CLOCK_MONOTONIC, &now);
	age = now.tv_sec - p->owners_at.tv_sec;
	if (!p->exits_watched)
		return age >= PROGS_OWNERS_UNWATCHED_AGE;
	return age >= p->owners_max_age || owner_exited(p);
}

/* A program in l the cached list lacks: its owners are unknown. */
static bool has_new(const struct prog_list *l, struct prog_list *old)
{
	const struct prog *q;
	size_t i;

	for (i = 0; i < l->cnt; i++) {
		q = find_mut(old, l->progs[i].ident.id);
		if (!q || !prog_ident__same(&q->ident, &l->progs[i].ident))
			return true;
	}
	return false;
}

/* Owners for a new list: read again when a program is new to us or the
 * last read is PROGS_OWNERS_MAX_AGE old, else carried over program by
 * program (one that went took its owners along).
 */
static int list_owners(struct progs *p, struct prog_list *l)
{
	int err;

	if (p->cached_owners && !owners_stale(p) && !has_new(l, &p->cache)) {
		keep_owners(l, &p->cache);
		return 0;
	}
	err = read_owners(p) ?: attach_read_owners(p, l);
	if (err)
		return err;
	swap_bufs(&p->owner_buf, &p->owner_prev);
	clock_gettime(CLOCK_MONOTONIC, &p->owners_at);
	p->cached_owners = true;
	watch_exits(p);
	return 0;
}

/* A whole new list in the cache; owners when asked. */
static int refresh_all(struct progs *p, bool owners)
{
	struct prog_list l = {};
	int err;

	p->watching = false;
	err = progs__snapshot(p, &l, 0);
	err = err ?: index_active(&l);
	if (err)
		goto err_free;
	p->watching = watch_walked(p);
	p->cached_owners = p->cached_owners && owners;
	err = owners ? list_owners(p, &l) : 0;
	if (err)
		goto err_free;
	prog_list__free(&p->cache);
	p->cache = l;
	p->cache.gen = ++last_gen;
	return 0;

err_free:
	p->cached_owners = false;
	prog_list__free(&l);
	return err;
}

/* The same programs: owners read again, a new gen only when they differ
 * from those the cached list has.
 */
static int refresh_owners(struct progs *p)
{
	int err = read_owners(p);

	if (err)
		return err;
	clock_gettime(CLOCK_MONOTONIC, &p->owners_at);
	if (p->cached_owners && p->owner_buf.len == p->owner_prev.len &&
	    !memcmp(p->owner_buf.data, p->owner_prev.data, p->owner_buf.len)) {
		if (owner_exited(p))	/* not an owner's exit after all */
			watch_exits(p);
		return 0;
	}
	swap_bufs(&p->owner_buf, &p->owner_prev);
	detach_owners(&p->cache);
	p->cache.gen = ++last_gen;
	p->cached_owners = true;
	watch_exits(p);
	return attach_owners(&p->cache, (const struct owner_rec *)p->owner_prev.data,
			     p->owner_prev.len / sizeof(struct owner_rec));
}

/* Is the cached list still the kernel's? The perf rings are emptied
 * first, so that a program that comes during the check or the walk after
 * it is told at the next refresh.
 */
static int list_changed(struct progs *p)
{
	if (watch__came_went(p->watch) || !p->cached || !p->watching)
		return 1;
	return watch__changed(p->watch);
}

int progs__refresh(struct progs *p, const struct prog_list **out, unsigned int flags)
{
	bool owners = flags & PROGS_OWNERS;
	int changed = 1, err;

	progs__watch(p);
	if (p->watch)
		changed = list_changed(p);
	if (changed < 0)
		err = changed;
	else if (changed)
		err = refresh_all(p, owners);
	else
		err = owners && owners_stale(p) ? refresh_owners(p) : 0;
	if (err) {
		/* the next refresh reads everything */
		p->cached = p->cached_owners = false;
		return err;
	}
	p->cached = true;
	*out = &p->cache;
	return 0;
}

const char *progs__mode(const struct progs *p)
{
	if (p->watch)
		return "watch";
	return p->watch_err == -ECANCELED ? "walk (BPFSTDERR_FULL_WALK)" : "walk";
}

void prog_list__free(struct prog_list *l)
{
	size_t i;

	for (i = 0; i < l->cnt; i++)
		free(l->progs[i].owners);
	free(l->progs);
	free(l->active);
	l->progs = NULL;
	l->active = NULL;
	l->cnt = l->cnt_active = 0;
}

const __u32 *prog_ids_find(const __u32 *ids, size_t cnt, __u32 id)
{
	return ids_find(ids, cnt, id);
}

const char *prog_type_name(__u32 type)
{
	const char *s = libbpf_bpf_prog_type_str(type);

	return s ? s : "unknown";
}
