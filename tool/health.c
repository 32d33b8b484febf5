// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "health.h"
#include "kbtf.h"
#include "progs.h"
#include "stream.h"
#include "stream_probe.skel.h"
#include "stream_probe.v4.skel.h"
#include <bpf/btf.h>
#include "../bpf/stream_ids.h"

/* 4 arguments first: 7.x still has bpf_stream_vprintk_impl in its BTF,
 * but no longer as a kfunc.
 */
int printk_kfunc_detect(void)
{
	if (kbtf_func_arg_cnt("bpf_stream_vprintk") == 4)
		return PRINTK_KFUNC_V4;
	if (kbtf_has_func("bpf_stream_vprintk_impl"))
		return PRINTK_KFUNC_IMPL;
	if (kbtf_func_arg_cnt("bpf_stream_vprintk") == 5)
		return PRINTK_KFUNC_617;
	return PRINTK_KFUNC_NONE;
}

void printk_skel_pick(struct bpf_object_skeleton *s, const void *(*v4_bytes)(size_t *sz))
{
	if (printk_kfunc_detect() == PRINTK_KFUNC_V4)
		s->data = (void *)v4_bytes(&s->data_sz);
}

/* What libbpf checks before load, said in words: an extern kfunc the
 * kernel has, with another number of arguments. Once opened, libbpf has
 * turned the externs' BTF linkage to global: an extern is a non-static
 * function that is none of the object's programs.
 */
bool printk_externs_mismatch(struct bpf_object *obj, char *cause, size_t len)
{
	const struct btf *btf = bpf_object__btf(obj);
	const struct btf_type *t, *proto;
	const char *name;
	int id, n, have;

	for (id = 1; btf && id < (int)btf__type_cnt(btf); id++) {
		t = btf__type_by_id(btf, id);
		if (!btf_is_func(t) || btf_vlen(t) == BTF_FUNC_STATIC)
			continue;
		name = btf__name_by_offset(btf, t->name_off);
		if (!name || bpf_object__find_program_by_name(obj, name))
			continue;
		proto = btf__type_by_id(btf, t->type);
		n = proto && btf_is_func_proto(proto) ? btf_vlen(proto) : -1;
		have = kbtf_func_arg_cnt(name);
		if (have < 0 || have == n)
			continue;
		snprintf(cause, len, "its kfunc %s() takes %d arguments, this kernel's takes %d, "
			 "so libbpf refuses the whole object", name, n, have);
		return true;
	}
	return false;
}

const char *printk_kfunc_name(int kfunc)
{
	switch (kfunc) {
	case PRINTK_KFUNC_IMPL:
		return "bpf_stream_vprintk_impl";
	case PRINTK_KFUNC_617:
	case PRINTK_KFUNC_V4:
		return "bpf_stream_vprintk";
	default:
		return "none";
	}
}

static enum write_health judge(const struct stream_health *h)
{
	switch (h->write_ret) {
	case 0:
		return h->read_ret > 0 ? WRITE_WORKS : WRITE_LOST;
	case -ENOMEM:
		return WRITE_ENOMEM;
	case -ENOSPC:
		return WRITE_ENOSPC;
	default:
		return WRITE_FAILS;
	}
}

/* The capacity the probe program's stdout shows: what its failed write
 * charged, through the same iterator every command reads.
 */
static int charged_by(int prog_fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct prog_list l = {};
	const struct prog *pr;
	struct progs *p;
	int cap = -1;

	if (bpf_obj_get_info_by_fd(prog_fd, &info, &len) || progs__open(&p))
		return -1;
	if (!progs__snapshot(p, &l, 0)) {
		pr = prog_list__find(&l, info.id);
		if (pr && pr->has_streams)
			cap = pr->capacity[stream_idx(STREAM_STDOUT)];
		prog_list__free(&l);
	}
	progs__close(p);
	return cap;
}

int stream_health__probe(struct stream_health *h)
{
	struct stream_probe_bpf *skel;
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	char buf[256];
	int fd, err;

	memset(h, 0, sizeof(*h));
	h->charged = -1;
	h->printk_kfunc = printk_kfunc_detect();
	if (h->printk_kfunc == PRINTK_KFUNC_NONE) {
		h->verdict = WRITE_UNSUPPORTED;
		if (!kbtf_has_func("bpf_stream_vprintk"))
			return 0;
		/* A print kfunc of a shape no build of ours declares. */
		snprintf(h->cause, sizeof(h->cause), "this kernel's bpf_stream_vprintk() takes %d "
			 "arguments, a form this build does not know", kbtf_func_arg_cnt("bpf_stream_vprintk"));
		h->verdict = WRITE_UNTESTED;
		h->err = -EOPNOTSUPP;
		return h->err;
	}
	skel = printk_skel_open(stream_probe);
	if (!skel) {
		err = -errno;
		goto out;
	}
	err = stream_probe_bpf__load(skel);
	if (err) {
		printk_externs_mismatch(skel->obj, h->cause, sizeof(h->cause));
		goto out_destroy;
	}
	fd = bpf_program__fd(skel->progs.stream_probe);
	err = bpf_prog_test_run_opts(fd, &opts);
	if (err) {
		err = -errno;
		goto out_destroy;
	}
	h->write_ret = skel->data->write_ret;
	h->read_ret = stream_read_fd(fd, STREAM_STDOUT, buf, sizeof(buf));
	h->verdict = judge(h);
	if (h->write_ret < 0)
		h->charged = charged_by(fd);
out_destroy:
	stream_probe_bpf__destroy(skel);
out:
	h->err = err;
	if (err)
		h->verdict = WRITE_UNTESTED;
	return err;
}

const char *stream_health__label(const struct stream_health *h)
{
	static const char *const labels[] = {
		[WRITE_UNTESTED]	= "untested",
		[WRITE_UNSUPPORTED]	= "unsupported",
		[WRITE_WORKS]		= "works",
		[WRITE_ENOMEM]		= "failing: ENOMEM",
		[WRITE_ENOSPC]		= "failing: ENOSPC",
		[WRITE_LOST]		= "failing: written but not readable",
		[WRITE_FAILS]		= "failing",
	};

	return labels[h->verdict];
}

const char *stream_health__meaning(const struct stream_health *h)
{
	switch (h->verdict) {
	case WRITE_UNTESTED:
		return "The probe program could not be loaded or run, so nothing is known about stream writes.";
	case WRITE_UNSUPPORTED:
		return "This kernel has no stream-write kfunc: programs cannot print to their streams.";
	case WRITE_WORKS:
		return "Messages and fault reports reach the streams and bpfstderr can read them.";
	case WRITE_ENOMEM:
		if (!h->charged)
			return "The kernel's stream allocator is failing (e.g. deferred page init still pending, "
			       "deferred_init=lazy): every message and every fault report is dropped without a "
			       "trace (this kernel charges nothing for a failed write), so no count shows the "
			       "loss; this probe is the only witness.";
		return "The kernel's stream allocator is failing (e.g. deferred page init still pending, "
		       "deferred_init=lazy): every message and every fault report is dropped; only the "
		       "capacity each one charges to its stream shows that it happened.";
	case WRITE_ENOSPC:
		return "The probe's fresh stream is already full, which should not happen: stream accounting is broken on this kernel.";
	case WRITE_LOST:
		return "Writes report success but nothing can be read back: another reader may be draining every stream.";
	case WRITE_FAILS:
	default:
		return "Stream writes fail with an unexpected error: messages and fault reports are dropped.";
	}
}
