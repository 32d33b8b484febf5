// SPDX-License-Identifier: GPL-2.0
/* Live tests of tool/progs.c against the running kernel, as root:
 *  - a program whose owner exits disappears from the next enumeration of
 *    the same, still running, observer;
 *  - writes of known lengths show up in the iterator's capacity exactly as
 *    the kernel's rule says (charged before allocation, refused with
 *    -ENOSPC once the total would reach BPF_STREAM_MAX_CAPACITY).
 */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "health.h"
#include "progs.h"
#include "writer.skel.h"
#include "../unit/unit.h"
#include "../../bpf/stream_ids.h"

static struct writer_bpf *load_writer(void)
{
	struct writer_bpf *w = writer_bpf__open();

	if (!w)
		return NULL;
	w->rodata->printk_kfunc = printk_kfunc_detect();
	if (writer_bpf__load(w)) {
		writer_bpf__destroy(w);
		return NULL;
	}
	return w;
}

static __u32 prog_id_of(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	return bpf_obj_get_info_by_fd(fd, &info, &len) ? 0 : info.id;
}

static bool listed(struct progs *p, __u32 id, pid_t owner)
{
	struct prog_list l = {};
	const struct prog *pr;
	bool found = false;
	int i;

	if (progs__snapshot(p, &l, PROGS_OWNERS))
		return false;
	pr = prog_list__find(&l, id);
	for (i = 0; pr && i < pr->owner_cnt; i++)
		found |= !owner || pr->owners[i].pid == owner;
	found |= pr && !owner;
	prog_list__free(&l);
	return found;
}

static void test_owner_exit(struct progs *p)
{
	int to_child[2], from_child[2];
	__u32 id = 0;
	pid_t pid;
	char c;
	int i;

	if (pipe(to_child) || pipe(from_child))
		return;
	pid = fork();
	if (pid == 0) {
		struct writer_bpf *w;

		close(to_child[1]);
		w = load_writer();

		id = w ? prog_id_of(bpf_program__fd(w->progs.writer)) : 0;
		if (write(from_child[1], &id, sizeof(id)) != sizeof(id))
			_exit(1);
		if (read(to_child[0], &c, 1) < 0)
			_exit(1);
		_exit(0);	/* the kernel unloads on exit */
	}
	close(to_child[0]);
	close(from_child[1]);
	CHECK(read(from_child[0], &id, sizeof(id)) == sizeof(id) && id, "child loaded a program");
	CHECK(listed(p, id, pid), "program %u listed with its owner %d", id, pid);
	close(to_child[1]);
	waitpid(pid, NULL, 0);
	/* The kernel frees the program from a workqueue after the last ref. */
	for (i = 0; i < 50 && listed(p, id, 0); i++)
		usleep(100 * 1000);
	CHECK(!listed(p, id, 0), "program %u gone after its owner exited", id);
	close(from_child[0]);
}

static int capacity_of(struct progs *p, __u32 id, int stream)
{
	struct prog_list l = {};
	const struct prog *pr;
	int cap = -2;

	if (progs__snapshot(p, &l, PROGS_OWNERS))
		return -3;
	pr = prog_list__find(&l, id);
	if (pr)
		cap = pr->capacity[stream - 1];
	prog_list__free(&l);
	return cap;
}

/* The kernel's rule, as an independent model: a write of len bytes is
 * charged len unless the total would reach the limit.
 */
static int model_write(int *cap, int len)
{
	if (*cap + len >= STREAM_MAX_CAPACITY)
		return -ENOSPC;
	*cap += len;
	return 0;
}

static int run_writes(struct writer_bpf *w, int stream, int count, int len, int *model)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int i, mismatches = 0, m;

	w->data->stream_id = stream;
	w->bss->count = count;
	memset(w->bss->msg, 'x', len);
	w->bss->msg[len] = '\0';
	if (bpf_prog_test_run_opts(bpf_program__fd(w->progs.writer), &opts))
		return -1;
	for (i = 0; i < count; i++) {
		m = model_write(model, len);
		/* accepted writes fail here with -ENOMEM or succeed elsewhere */
		if (m ? w->bss->ret[i] != m : w->bss->ret[i] == -ENOSPC)
			mismatches++;
	}
	return mismatches;
}

/* Lengths stay under 512: "%s" arguments pass through the kernel's
 * 512-byte bprintf argument buffer and longer ones are cut.
 */
static void test_capacity(struct progs *p)
{
	static const struct { int count, len; } plan[] = {
		{ 1, 1 }, { 10, 37 }, { 190, 500 }, { 10, 500 }, { 3, 300 }, { 4, 97 },
	};
	struct writer_bpf *w = load_writer();
	int model = 0, i, bad;
	__u32 id;

	CHECK(w != NULL, "writer loaded");
	if (!w)
		return;
	id = prog_id_of(bpf_program__fd(w->progs.writer));
	CHECK(capacity_of(p, id, STREAM_STDERR) == 0, "fresh stream has nothing accounted");
	for (i = 0; i < (int)(sizeof(plan) / sizeof(plan[0])); i++) {
		bad = run_writes(w, STREAM_STDERR, plan[i].count, plan[i].len, &model);
		CHECK(bad == 0, "%d writes of %d bytes: %d returns differ from the kernel's rule",
		      plan[i].count, plan[i].len, bad);
		CHECK(capacity_of(p, id, STREAM_STDERR) == model,
		      "after %d x %d bytes: iterator %d, expected %d", plan[i].count, plan[i].len,
		      capacity_of(p, id, STREAM_STDERR), model);
	}
	CHECK(model > STREAM_MAX_CAPACITY - 500, "the plan reached the limit (%d)", model);
	CHECK(capacity_of(p, id, STREAM_STDOUT) == 0, "stdout untouched by stderr writes");
	writer_bpf__destroy(w);
}

int main(void)
{
	struct progs *p;

	if (progs__open(&p)) {
		CHECK(0, "open the iterator");
		return unit_done();
	}
	test_owner_exit(p);
	test_capacity(p);
	progs__close(p);
	return unit_done();
}
