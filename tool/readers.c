// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <signal.h>
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
};

int readers__open(struct readers **out)
{
	struct readers *r;
	struct stat st;
	int err;

	if (!kbtf_has_func("bpf_prog_stream_read"))
		return -EOPNOTSUPP;	/* no streams, or not the read we know */
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
	size_t i;

	if (!r || bpf_map__lookup_elem(r->skel->maps.readers, &k, sizeof(k), &rec, sizeof(rec), 0))
		return false;
	if (peer(&rec) || mono_ns() - (long long)rec.last_ns > READERS_LIVE_NS || !running(rec.pid))
		return false;
	rd->pid = rec.pid;
	rd->reads = rec.reads;
	rd->bytes = rec.bytes;
	/* a name is what a process chose: only printable bytes pass */
	for (i = 0; i < sizeof(rd->comm) - 1 && rec.comm[i]; i++)
		rd->comm[i] = rec.comm[i] >= 0x20 && rec.comm[i] < 0x7f ? rec.comm[i] : '?';
	rd->comm[i] = '\0';
	return true;
}
