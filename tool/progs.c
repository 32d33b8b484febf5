// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "progs.h"
#include "progs.skel.h"
#include "../bpf/progs.h"

struct progs {
	struct progs_bpf *skel;
	struct bpf_link *prog_link;
	struct bpf_link *owner_link;
	__u32 self_ids[2];		/* our own iterators, not shown */
};

static __u32 prog_fd_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

int progs__open(struct progs **out)
{
	struct progs *p;
	int err;

	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->skel = progs_bpf__open();
	if (!p->skel) {
		err = -errno;
		goto err_free;
	}
	p->skel->bss->self_pid = getpid();
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
	bpf_link__destroy(p->owner_link);
	bpf_link__destroy(p->prog_link);
	progs_bpf__destroy(p->skel);
	free(p);
}

/* Read a whole iterator into memory; each read(2) runs the program over
 * as many objects as fit.
 */
static int read_iter(struct bpf_link *link, void **buf, size_t *len)
{
	size_t cap = 64 * 1024, used = 0;
	char *data = malloc(cap), *tmp;
	int fd, err = 0;
	ssize_t n;

	if (!data)
		return -ENOMEM;
	fd = bpf_iter_create(bpf_link__fd(link));
	if (fd < 0) {
		err = -errno;
		goto err_free;
	}
	for (;;) {
		if (cap - used < 16 * 1024) {
			tmp = realloc(data, cap * 2);
			if (!tmp) {
				err = -ENOMEM;
				goto err_close;
			}
			data = tmp;
			cap *= 2;
		}
		n = read(fd, data + used, cap - used);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			goto err_close;
		}
		if (n == 0)
			break;
		used += n;
	}
	close(fd);
	*buf = data;
	*len = used;
	return 0;

err_close:
	close(fd);
err_free:
	free(data);
	return err;
}

static time_t boottime_to_wall(__u64 ns)
{
	struct timespec real, boot;

	clock_gettime(CLOCK_REALTIME, &real);
	clock_gettime(CLOCK_BOOTTIME, &boot);
	return real.tv_sec - boot.tv_sec +
	       (time_t)((ns + (__u64)real.tv_nsec - (__u64)boot.tv_nsec) / 1000000000ULL);
}

/* The kernel names a program's ksym "bpf_prog_<tag>_<name>", where name is
 * the BTF function name when the program has func_info: the full name
 * that the 16-byte prog name cuts.
 */
static void set_full_name(struct prog *p, const struct prog_rec *r)
{
	const char *ksym = r->ksym, *n;
	size_t prefix = strlen("bpf_prog_") + 2 * PROG_TAG_LEN + 1;

	snprintf(p->full_name, sizeof(p->full_name), "%s", p->name);
	if (strlen(p->name) < PROG_NAME_LEN - 1)
		return;
	if (strncmp(ksym, "bpf_prog_", 9) || strlen(ksym) <= prefix)
		return;
	n = ksym + prefix;
	/* only when it extends the kernel's name; else keep the kernel's */
	if (!strncmp(n, p->name, strlen(p->name)))
		snprintf(p->full_name, sizeof(p->full_name), "%s", n);
}

static void prog_from_rec(struct prog *p, const struct prog_rec *r)
{
	int i;

	memset(p, 0, sizeof(*p));
	p->id = r->id;
	p->type = r->type;
	p->uid = r->uid;
	p->btf_id = r->btf_id;
	p->jited_len = r->jited_len;
	p->xlated_len = r->xlated_len;
	p->load_time_ns = r->load_time;
	p->loaded_at = boottime_to_wall(r->load_time);
	for (i = 0; i < PROG_TAG_LEN; i++)
		sprintf(p->tag + 2 * i, "%02x", r->tag[i]);
	memcpy(p->name, r->name, sizeof(p->name));
	p->name[sizeof(p->name) - 1] = '\0';
	set_full_name(p, r);
	p->has_streams = r->flags & PROG_REC_HAS_STREAMS;
	p->has_error_count = r->flags & PROG_REC_HAS_ERR_COUNT;
	for (i = 0; i < STREAM_CNT; i++)
		p->capacity[i] = r->capacity[i];
	p->error_count = r->error_count;
}

static int cmp_prog_id(const void *a, const void *b)
{
	const struct prog *x = a, *y = b;

	return x->id < y->id ? -1 : x->id > y->id;
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
	struct prog key = { .id = id };

	return bsearch(&key, l->progs, l->cnt, sizeof(*l->progs), cmp_prog_id);
}

const struct prog *prog_list__find(const struct prog_list *l, __u32 id)
{
	return find_mut((struct prog_list *)l, id);
}

/* A process holding several fds of one program is one owner. */
static int attach_owners(struct prog_list *l, struct owner_rec *o, size_t cnt)
{
	struct prog_owner *slot;
	struct prog *p;
	size_t i;

	qsort(o, cnt, sizeof(*o), cmp_owner);
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

static bool is_self(const struct progs *p, __u32 id)
{
	return id == p->self_ids[0] || id == p->self_ids[1];
}

int progs__snapshot(struct progs *p, struct prog_list *out)
{
	size_t plen, olen, cnt, i;
	void *pbuf = NULL, *obuf = NULL;
	const struct prog_rec *recs;
	struct prog_list l = {};
	int err;

	err = read_iter(p->prog_link, &pbuf, &plen);
	if (err)
		return err;
	err = read_iter(p->owner_link, &obuf, &olen);
	if (err)
		goto out;
	cnt = plen / sizeof(struct prog_rec);
	recs = pbuf;
	l.progs = calloc(cnt ? cnt : 1, sizeof(*l.progs));
	if (!l.progs) {
		err = -ENOMEM;
		goto out;
	}
	for (i = 0; i < cnt; i++) {
		if (is_self(p, recs[i].id))
			continue;
		prog_from_rec(&l.progs[l.cnt++], &recs[i]);
	}
	qsort(l.progs, l.cnt, sizeof(*l.progs), cmp_prog_id);
	err = attach_owners(&l, obuf, olen / sizeof(struct owner_rec));
	if (err) {
		prog_list__free(&l);
		goto out;
	}
	*out = l;
out:
	free(obuf);
	free(pbuf);
	return err;
}

void prog_list__free(struct prog_list *l)
{
	size_t i;

	for (i = 0; i < l->cnt; i++)
		free(l->progs[i].owners);
	free(l->progs);
	l->progs = NULL;
	l->cnt = 0;
}

const char *prog_type_name(__u32 type)
{
	const char *s = libbpf_bpf_prog_type_str(type);

	return s ? s : "unknown";
}
