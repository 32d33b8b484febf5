// SPDX-License-Identifier: GPL-2.0
/* Fault sources: one instance of the demo object per source, with only
 * that source's programs (and maps) loaded, so that a host refusing one
 * kind (an arena map, say) still runs the others.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "demo.skel.h"
#include "demo.v4.skel.h"
#include "faultsrc.h"
#include "health.h"
#include "kbtf.h"
#include "privs.h"

/* BPF_MAP_TYPE_ARENA (6.9): Debian 12's UAPI headers predate it. */
#define ARENA_MAP_TYPE		33
#define ARENA_F_MMAPABLE	(1U << 10)

struct fault_progs {
	struct demo_bpf *skel;
};

static const struct {
	const char *name;
	const char *report_func;	/* the kernel's reporter, in BTF */
	const char *progs[2];		/* demo programs of the source */
} srcs[FAULT_SRC_CNT] = {
	[FAULT_SRC_ARENA] = { "arena", "bpf_prog_report_arena_violation",
			      { "demo_arena_read", "demo_arena_write" } },
	[FAULT_SRC_MAY_GOTO] = { "may_goto", "bpf_prog_report_may_goto_violation",
				 { "demo_may_goto" } },
	[FAULT_SRC_RES_SPIN_LOCK] = { "res_spin_lock", "bpf_prog_report_rqspinlock_violation",
				      { "demo_deadlock" } },
	[FAULT_SRC_PRINT] = { "print", NULL, { "demo_print" } },
};

const char *fault_src__name(enum fault_src src)
{
	return srcs[src].name;
}

bool fault_src__kernel_reports(enum fault_src src)
{
	return srcs[src].report_func && kbtf_has_func(srcs[src].report_func);
}

static bool in_src(enum fault_src src, const char *prog)
{
	size_t i;

	for (i = 0; i < sizeof(srcs[src].progs) / sizeof(srcs[src].progs[0]); i++)
		if (srcs[src].progs[i] && !strcmp(srcs[src].progs[i], prog))
			return true;
	return false;
}

static void refuse(struct fault_refusal *why, int err, const char *step)
{
	why->err = err;
	why->step = step;
	privs__explain(err, why->cause, sizeof(why->cause));
}

/* A program the verifier rejects fails with EACCES or EINVAL too: say so
 * before the capability story. An object whose kfunc extern this kernel
 * does not match fails with EINVAL before any program reaches the
 * verifier: that is the cause then, not the host.
 */
static void refuse_load(struct fault_refusal *why, struct bpf_object *obj, int err)
{
	size_t off;

	refuse(why, err, "loading its programs");
	if (err == -EINVAL && printk_externs_mismatch(obj, why->cause, sizeof(why->cause)))
		return;
	if (err != -EACCES && err != -EINVAL)
		return;
	off = strlen(why->cause);
	snprintf(why->cause + off, sizeof(why->cause) - off, "%sthe verifier may have rejected it "
		 "(BPFSTDERR_DEBUG=1 shows libbpf's log)", off ? "; or " : "");
}

/* The arena map alone first: its refusal is the usual one, and saying
 * "creating an arena map" beats blaming the whole object.
 */
static int probe_arena_map(struct fault_refusal *why)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = ARENA_F_MMAPABLE,
		    .map_extra = ARENA_USER_ADDR);
	int fd;

	fd = bpf_map_create(ARENA_MAP_TYPE, "bpfstderr_probe", 0, 0, 1, &opts);
	if (fd < 0) {
		fd = -errno;
		refuse(why, fd, "creating an arena map");
		return fd;
	}
	close(fd);
	return 0;
}

static int open_src(enum fault_src src, struct demo_bpf **out)
{
	struct demo_bpf *skel;
	struct bpf_program *p;

	skel = printk_skel_open(demo);
	if (!skel)
		return -errno;
	bpf_object__for_each_program(p, skel->obj)
		bpf_program__set_autoload(p, in_src(src, bpf_program__name(p)));
	if (src == FAULT_SRC_ARENA)
		bpf_map__set_map_extra(skel->maps.arena, ARENA_USER_ADDR);
	else
		bpf_map__set_autocreate(skel->maps.arena, false);
	*out = skel;
	return 0;
}

int fault_progs__load(enum fault_src src, struct fault_progs **out, struct fault_refusal *why)
{
	struct fault_progs *fp;
	int err;

	memset(why, 0, sizeof(*why));
	if (src == FAULT_SRC_ARENA) {
		err = probe_arena_map(why);
		if (err)
			return err;
	}
	fp = calloc(1, sizeof(*fp));
	if (!fp)
		return -ENOMEM;
	err = open_src(src, &fp->skel);
	if (err) {
		refuse(why, err, "opening the demo object");
		goto err_free;
	}
	err = demo_bpf__load(fp->skel);
	if (err) {
		refuse_load(why, fp->skel->obj, err);
		goto err_destroy;
	}
	*out = fp;
	return 0;

err_destroy:
	demo_bpf__destroy(fp->skel);
err_free:
	free(fp);
	return err;
}

int fault_src__probe(enum fault_src src, struct fault_refusal *why)
{
	struct fault_progs *fp;
	int err;

	err = fault_progs__load(src, &fp, why);
	if (!err)
		fault_progs__free(fp);
	return err;
}

struct bpf_object *fault_progs__obj(const struct fault_progs *fp)
{
	return fp->skel->obj;
}

void fault_progs__run(struct fault_progs *fp)
{
	struct bpf_program *p;

	bpf_object__for_each_program(p, fp->skel->obj) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		if (bpf_program__autoload(p))
			bpf_prog_test_run_opts(bpf_program__fd(p), &opts);
	}
}

void fault_progs__free(struct fault_progs *fp)
{
	if (!fp)
		return;
	demo_bpf__destroy(fp->skel);
	free(fp);
}
