// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "kbtf.h"
#include "readers.h"
#include "readers.skel.h"

struct readers {
	struct readers_bpf *skel;
	struct ring_buffer *rb;
	mirror_fn fn;		/* during readers__mirror() */
	void *ctx;
};

/* A name is what a process chose: only printable bytes pass. */
static void reader_id_of(struct reader_id *id, __u32 pid, const char *comm)
{
	size_t i;

	id->pid = pid;
	for (i = 0; i < sizeof(id->comm) - 1 && comm[i]; i++)
		id->comm[i] = comm[i] >= 0x20 && comm[i] < 0x7f ? comm[i] : '?';
	id->comm[i] = '\0';
}

const char *reader_name(const struct reader_id *id, char *buf, size_t len)
{
	if (id->pid)
		snprintf(buf, len, "%s(%u)", id->comm, id->pid);
	else
		snprintf(buf, len, "%s (outside our pid namespace)", id->comm);
	return buf;
}

static int on_mirror(void *ctx, void *data, size_t size)
{
	const struct mirror_rec *rec = data;
	struct readers *r = ctx;
	struct mirrored m = {};

	if (size < offsetof(struct mirror_rec, data) ||
	    size < offsetof(struct mirror_rec, data) + rec->len ||
	    (rec->stream != STREAM_STDOUT && rec->stream != STREAM_STDERR))
		return 0;	/* not what readers.bpf.c writes */
	prog_ident_of(&m.prog, m.kname, &rec->prog);
	m.stream = rec->stream;
	m.ns = rec->ns;
	m.off = rec->off;
	reader_id_of(&m.who, rec->pid, rec->comm);
	m.buf = rec->data;
	m.len = rec->len;
	m.missed = rec->missed;
	m.gap = rec->gap;
	return r->fn(&m, r->ctx);
}

int readers__open(struct readers **out)
{
	struct readers *r;
	struct stat st;
	int err;

	if (!kbtf_has_func("bpf_prog_stream_read"))
		return -EOPNOTSUPP;	/* no streams, or not the read we know */
	if (!kbtf_has_func("bpf_probe_read_user_dynptr"))
		return -EOPNOTSUPP;	/* the mirror's one copy (6.16): streams came after it */
	if (stat("/proc/self/ns/pid", &st))
		return -errno;
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->skel = readers_bpf__open();
	if (!r->skel) {
		err = -errno;
		goto err_free;
	}
	r->skel->rodata->ns_dev = st.st_dev;
	r->skel->rodata->ns_ino = st.st_ino;
	r->skel->rodata->self_pid = getpid();
	err = readers_bpf__load(r->skel) ?: readers_bpf__attach(r->skel);
	if (err)
		goto err_destroy;
	r->rb = ring_buffer__new(bpf_map__fd(r->skel->maps.mirror), on_mirror, r, NULL);
	if (!r->rb) {
		err = -errno;
		goto err_destroy;
	}
	r->skel->bss->mirror_armed = 1;
	*out = r;
	return 0;

err_destroy:
	readers_bpf__destroy(r->skel);
err_free:
	free(r);
	return err;
}

void readers__close(struct readers *r)
{
	if (!r)
		return;
	ring_buffer__free(r->rb);
	readers_bpf__destroy(r->skel);
	free(r);
}

int readers__prog_fd(const struct readers *r)
{
	return bpf_program__fd(r->skel->progs.reader_read);
}

static long long mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

/* Another bpfstderr: a peer, never an other (readers.h). By its name: the
 * thread that reads is bpfstderr's main or rescue thread, which keep the
 * process's name.
 */
static bool peer(const struct reader_rec *rec)
{
	return !strncmp(rec->comm, "bpfstderr", sizeof(rec->comm));
}

/* A reader outside our pid namespace cannot be asked: live by its reads. */
static bool running(__u32 pid)
{
	return !pid || !kill(pid, 0) || errno == EPERM;
}

bool readers__live(struct readers *r, __u32 id, enum stream s, struct reader *rd)
{
	struct reader_key k = { .prog_id = id, .stream = s };
	struct reader_rec rec;

	if (!r || bpf_map__lookup_elem(r->skel->maps.readers, &k, sizeof(k), &rec, sizeof(rec), 0))
		return false;
	if (peer(&rec) || mono_ns() - (long long)rec.last_ns > READERS_LIVE_NS || !running(rec.pid))
		return false;
	reader_id_of(&rd->id, rec.pid, rec.comm);
	rd->reads = rec.reads;
	rd->bytes = rec.bytes;
	return true;
}

int readers__mirror(struct readers *r, mirror_fn fn, void *ctx)
{
	int n;

	if (!r)
		return 0;
	r->fn = fn;
	r->ctx = ctx;
	n = ring_buffer__consume(r->rb);
	/* taken: the ring's next quarter wakes us again (readers.bpf.c) */
	__atomic_store_n(&r->skel->bss->mirror_armed, 1, __ATOMIC_RELEASE);
	return n < 0 ? n : 0;
}

int readers__mirror_fd(const struct readers *r)
{
	return ring_buffer__epoll_fd(r->rb);
}

unsigned long long readers__mirror_lost(const struct readers *r)
{
	return r->skel->bss->mirror_lost;
}
