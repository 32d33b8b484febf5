// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/types.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <bpf/libbpf_version.h>

#include "fill.h"
#include "kbtf.h"
#include "rescue.h"
#include "stream.h"
#include "rfc_drain.skel.h"

const char *stream_name(enum stream s)
{
	return s == STREAM_STDOUT ? "stdout" : s == STREAM_STDERR ? "stderr" : "unknown";
}

int stream_from_name(const char *name, enum stream *s)
{
	enum stream i;

	for_each_stream(i) {
		if (!strcmp(name, stream_name(i))) {
			*s = i;
			return 0;
		}
	}
	return -EINVAL;
}

bool stream_rfc_kfuncs_present(void)
{
	static const char *const kfuncs[] = {
		"bpf_prog_stream_get", "bpf_prog_stream_put",
		"bpf_stream_next_elem_batch", "bpf_stream_next_elem",
		"bpf_stream_free_elem", "bpf_stream_free_elem_batch",
		"bpf_dynptr_from_mem_slice",
	};
	size_t i;

	for (i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		if (!kbtf_has_func(kfuncs[i]))
			return false;
	return true;
}

static enum stream_backend forced_backend = BACKEND_NONE;
static bool forced_known;	/* --backend given, or BPFSTDERR_BACKEND read */

bool stream_backend_available(enum stream_backend b)
{
	switch (b) {
	case BACKEND_UPSTREAM:
		return kbtf_has_enum_value("bpf_cmd", "BPF_PROG_STREAM_READ_BY_FD");
	case BACKEND_RFC:
		return stream_rfc_kfuncs_present();
	default:
		return false;
	}
}

enum stream_backend stream_backend_detect(void)
{
	enum stream_backend forced = stream_backend_forced();

	if (forced != BACKEND_NONE)
		return stream_backend_available(forced) ? forced : BACKEND_NONE;
	if (stream_backend_available(BACKEND_UPSTREAM))
		return BACKEND_UPSTREAM;
	if (stream_backend_available(BACKEND_RFC))
		return BACKEND_RFC;
	return BACKEND_NONE;
}

int stream_backend_from_name(const char *name, enum stream_backend *b)
{
	if (!strcmp(name, "upstream"))
		*b = BACKEND_UPSTREAM;
	else if (!strcmp(name, "rfc"))
		*b = BACKEND_RFC;
	else
		return -EINVAL;
	return 0;
}

void stream_backend_force(enum stream_backend b)
{
	forced_backend = b;
	forced_known = true;
}

/* --backend, else BPFSTDERR_BACKEND (for test suites that run every
 * command with one backend).
 */
enum stream_backend stream_backend_forced(void)
{
	const char *env;

	if (!forced_known) {
		forced_known = true;
		env = getenv("BPFSTDERR_BACKEND");
		if (env && *env && stream_backend_from_name(env, &forced_backend))
			fprintf(stderr, "bpfstderr: BPFSTDERR_BACKEND=%s is neither upstream nor rfc: "
				"ignored\n", env);
	}
	return forced_backend;
}

const char *stream_backend_missing(enum stream_backend b)
{
	if (b == BACKEND_RFC)
		return "this kernel's BTF lacks the RFC drain kfuncs (bpf_prog_stream_get, ...: "
		       "kernel-patches/rfc-drain/)";
	return "this kernel has no BPF_PROG_STREAM_READ_BY_FD (Linux 6.17 or later)";
}

const char *stream_backend_name(enum stream_backend b)
{
	switch (b) {
	case BACKEND_UPSTREAM:
		return "upstream";
	case BACKEND_RFC:
		return "rfc";
	default:
		return "none";
	}
}

struct drainer {
	enum stream_backend backend;
	char *buf;
	struct rescue *rescue;		/* upstream, once started: every read goes through it */
	struct fill *fill;		/* not ours: refusals it counted (drainer__refused()) */
	/* RFC backend */
	struct rfc_drain_bpf *rfc;
	__u32 rfc_id;			/* its program's id, in own_ids */
	struct ring_buffer *rb;
	drain_fn fn;
	void *ctx;
	__u32 cur_id;
	enum stream cur_stream;
	int cb_err;
};

/* The ids of the drain programs loaded by this process's drainers. */
static __u32 own_ids[4];

bool stream_own_prog(__u32 id)
{
	size_t i;

	for (i = 0; id && i < sizeof(own_ids) / sizeof(own_ids[0]); i++)
		if (own_ids[i] == id)
			return true;
	return false;
}

static void own_prog_set(__u32 old, __u32 id)
{
	size_t i;

	for (i = 0; i < sizeof(own_ids) / sizeof(own_ids[0]); i++) {
		if (own_ids[i] == old) {
			own_ids[i] = id;
			return;
		}
	}
}

static __u32 prog_fd_to_id(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static int rfc_sample(void *ctx, void *data, size_t len)
{
	struct drainer *d = ctx;

	d->cb_err = d->fn(d->cur_id, d->cur_stream, data, len, d->ctx);
	return d->cb_err;
}

static int rfc_open(struct drainer *d)
{
	int err;

	d->rfc = rfc_drain_bpf__open();
	if (!d->rfc)
		return -errno;
	/* The stream batch kfunc takes the stream's mutex: a sleepable
	 * program, whatever this libbpf makes of SEC("syscall").
	 */
	err = bpf_program__set_flags(d->rfc->progs.rfc_drain, BPF_F_SLEEPABLE);
	err = err ?: rfc_drain_bpf__load(d->rfc);
	if (err) {
		rfc_drain_bpf__destroy(d->rfc);
		d->rfc = NULL;
		return err;
	}
	d->rb = ring_buffer__new(bpf_map__fd(d->rfc->maps.msgs), rfc_sample, d, NULL);
	if (!d->rb) {
		err = -errno;
		rfc_drain_bpf__destroy(d->rfc);
		d->rfc = NULL;
		return err;
	}
	d->rfc_id = prog_fd_to_id(bpf_program__fd(d->rfc->progs.rfc_drain));
	own_prog_set(0, d->rfc_id);
	return 0;
}

int drainer__new(struct drainer **out, enum stream_backend b)
{
	struct drainer *d;
	int err = 0;

	if (b == BACKEND_NONE)
		return -EOPNOTSUPP;
	d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->backend = b;
	if (b == BACKEND_UPSTREAM) {
		d->buf = malloc(STREAM_READ_BUF);
		if (!d->buf)
			err = -ENOMEM;
	} else {
		err = rfc_open(d);
	}
	if (err) {
		drainer__free(d);
		return err;
	}
	*out = d;
	return 0;
}

void drainer__free(struct drainer *d)
{
	if (!d)
		return;
	rescue__free(d->rescue);
	ring_buffer__free(d->rb);
	if (d->rfc_id)
		own_prog_set(d->rfc_id, 0);
	rfc_drain_bpf__destroy(d->rfc);
	free(d->buf);
	free(d);
}

static int drain_upstream_one(struct drainer *d, int fd, __u32 id, enum stream stream,
			      drain_fn fn, void *ctx)
{
	ssize_t n;
	int err;

	for (;;) {
		n = stream_read_fd(fd, stream, d->buf, STREAM_READ_BUF);
		if (n == -EINTR)
			continue;
		if (n <= 0)
			return n;
		err = fn(id, stream, d->buf, n, ctx);
		if (err)
			return err;
	}
}

/* A program gone is read no more, but what was held for it is its last. */
static int drain_upstream(struct drainer *d, __u32 id, unsigned int mask, drain_fn fn, void *ctx)
{
	enum stream s;
	int fd, err = 0, gone = 0;

	fd = bpf_prog_get_fd_by_id(id);
	if (fd < 0) {
		gone = -errno;
		if (!d->rescue)
			return gone;
	}
	for_each_stream(s) {
		if (err || !(mask & STREAM_MASK(s)))
			continue;
		err = d->rescue ? rescue__drain(d->rescue, fd, id, s, fn, ctx) :
				  drain_upstream_one(d, fd, id, s, fn, ctx);
	}
	if (fd >= 0)
		close(fd);
	return err ?: gone;
}

static int drain_rfc_one(struct drainer *d, __u32 id, enum stream stream)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int err;

	d->rfc->bss->prog_id = id;
	d->rfc->bss->stream_id = stream;
	d->cur_id = id;
	d->cur_stream = stream;
	do {
		err = bpf_prog_test_run_opts(bpf_program__fd(d->rfc->progs.rfc_drain), &opts);
		if (err)
			return -errno;
		ring_buffer__consume(d->rb);
		if (d->cb_err)
			return d->cb_err;
	} while (opts.retval == 11 /* EAGAIN: more than the ring held */);
	return opts.retval ? -(int)opts.retval : 0;
}

static int drain_rfc(struct drainer *d, __u32 id, unsigned int mask, drain_fn fn, void *ctx)
{
	enum stream s;
	int err = 0;

	d->fn = fn;
	d->ctx = ctx;
	d->cb_err = 0;
	for_each_stream(s)
		if (!err && (mask & STREAM_MASK(s)))
			err = drain_rfc_one(d, id, s);
	return err;
}

int drainer__rescue_start(struct drainer *d, struct fill *f)
{
	d->fill = f;
	if (d->backend != BACKEND_UPSTREAM)
		return -EOPNOTSUPP;
	if (d->rescue)
		return 0;
	return rescue__start(&d->rescue, f);
}

struct rescue *drainer__rescue(const struct drainer *d)
{
	return d ? d->rescue : NULL;
}

struct fill *drainer__fill(const struct drainer *d)
{
	return d ? d->fill : NULL;
}

unsigned long long drainer__refused(struct drainer *d, __u32 id, enum stream s)
{
	return d->fill ? fill__refused(d->fill, id, s) : 0;
}

int drainer__drain(struct drainer *d, __u32 id, unsigned int mask, drain_fn fn, void *ctx)
{
	if (d->backend == BACKEND_RFC)
		return drain_rfc(d, id, mask, fn, ctx);
	return drain_upstream(d, id, mask, fn, ctx);
}
