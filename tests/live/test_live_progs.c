// SPDX-License-Identifier: GPL-2.0
/* Live tests of tool/progs.c against the running kernel, as root:
 *  - a program whose owner exits disappears from the next enumeration of
 *    the same, still running, observer;
 *  - writes of known lengths show up in the iterator's capacity exactly as
 *    the kernel's rule says (charged before allocation, refused with
 *    -ENOSPC once the total would reach BPF_STREAM_MAX_CAPACITY);
 *  - progs__refresh(), with the watch and without (BPFSTDERR_FULL_WALK),
 *    gives the list a whole snapshot gives, and bpftool agrees on our
 *    program, as programs are loaded, written to, unloaded and replaced;
 *    with the watch, a refresh with nothing changed reads nothing.
 */
#include <errno.h>
#include <stdio.h>
#include <signal.h>
#include <stdlib.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "health.h"
#include "progs.h"
#include "stream.h"
#include "writer.skel.h"
#include "writer.v4.skel.h"
#include "../unit/unit.h"
#include "../../bpf/stream_ids.h"

static struct writer_bpf *load_writer(void)
{
	struct writer_bpf *w = printk_skel_open(writer);

	if (!w)
		return NULL;
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
	/* The kernel frees the program from a workqueue after the last ref;
	 * the bound only says how long a program that stays takes to fail
	 * (an emulated guest is many times slower).
	 */
	for (i = 0; i < 600 && listed(p, id, 0); i++)
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

/* What this host does with a write, probed with one byte to stdout: it
 * works, or it fails and is charged anyway (design.md section 4: v1147),
 * or it fails without a trace (v1252 and later). Hosts change: never
 * assumed.
 */
enum write_mode { WRITES_WORK, WRITES_FAIL_CHARGED, WRITES_FAIL_UNTRACED, WRITES_UNKNOWN };

static enum write_mode probe_writes(struct progs *p, struct writer_bpf *w, __u32 id, int *ret)
{
	int model = 0;

	if (run_writes(w, STREAM_STDOUT, 1, 1, &model) < 0)
		return WRITES_UNKNOWN;
	*ret = w->bss->ret[0];
	if (!*ret)
		return WRITES_WORK;
	return capacity_of(p, id, STREAM_STDOUT) == 1 ? WRITES_FAIL_CHARGED : WRITES_FAIL_UNTRACED;
}

/* Lengths stay under 512: "%s" arguments pass through the kernel's
 * 512-byte bprintf argument buffer and longer ones are cut. The model
 * holds where every write is charged: where writes work (the kernel lab)
 * and where failed ones are charged too.
 */
static void test_capacity(struct progs *p)
{
	static const struct { int count, len; } plan[] = {
		{ 1, 1 }, { 10, 37 }, { 190, 500 }, { 10, 500 }, { 3, 300 }, { 4, 97 },
	};
	struct writer_bpf *w = load_writer();
	int model = 0, i, bad, ret = 0;
	enum write_mode mode;
	__u32 id;

	CHECK(w != NULL, "writer loaded");
	if (!w)
		return;
	id = prog_id_of(bpf_program__fd(w->progs.writer));
	CHECK(capacity_of(p, id, STREAM_STDERR) == 0, "fresh stream has nothing accounted");
	mode = probe_writes(p, w, id, &ret);
	CHECK(mode != WRITES_UNKNOWN, "the writer runs");
	if (mode == WRITES_FAIL_UNTRACED) {
		CHECK(capacity_of(p, id, STREAM_STDOUT) == 0, "a write that failed without a trace leaves 0");
		SKIP("the capacity model", "this host charges nothing for a failed write (returned %d, "
		     "capacity 0): tested in the kernel lab (tests/vm)", ret);
		writer_bpf__destroy(w);
		return;
	}
	for (i = 0; i < (int)(sizeof(plan) / sizeof(plan[0])); i++) {
		bad = run_writes(w, STREAM_STDERR, plan[i].count, plan[i].len, &model);
		CHECK(bad == 0, "%d writes of %d bytes: %d returns differ from the kernel's rule",
		      plan[i].count, plan[i].len, bad);
		CHECK(capacity_of(p, id, STREAM_STDERR) == model,
		      "after %d x %d bytes: iterator %d, expected %d", plan[i].count, plan[i].len,
		      capacity_of(p, id, STREAM_STDERR), model);
	}
	CHECK(model > STREAM_MAX_CAPACITY - 500, "the plan reached the limit (%d)", model);
	CHECK(capacity_of(p, id, STREAM_STDOUT) == 1, "stdout: the probe's one byte, untouched by stderr writes");
	writer_bpf__destroy(w);
}


/* bpftool's tag for id, or "" when bpftool does not list it. */
static void bpftool_tag(__u32 id, char *tag, size_t len)
{
	char cmd[96], line[4096], *t;
	FILE *f;

	tag[0] = '\0';
	snprintf(cmd, sizeof(cmd), "bpftool prog show id %u -j 2>/dev/null", id);
	f = popen(cmd, "r");
	if (!f)
		return;
	if (fgets(line, sizeof(line), f) && (t = strstr(line, "\"tag\":\"")))
		snprintf(tag, len, "%.16s", t + 7);
	pclose(f);
}

static bool same_prog(const struct prog *a, const struct prog *b)
{
	return prog_ident__same(&a->ident, &b->ident) && !strcmp(a->ident.name, b->ident.name) &&
	       a->has_streams == b->has_streams && !memcmp(a->capacity, b->capacity, sizeof(a->capacity)) &&
	       !memcmp(a->dropped_msgs, b->dropped_msgs, sizeof(a->dropped_msgs));
}

static bool same_owners(const struct prog *a, const struct prog *b)
{
	int i;

	if (a->owner_cnt != b->owner_cnt)
		return false;
	for (i = 0; i < a->owner_cnt; i++)
		if (a->owners[i].pid != b->owners[i].pid || strcmp(a->owners[i].comm, b->owners[i].comm))
			return false;
	return true;
}

/* l and the snapshot s agree, leaving out what each observer hides of
 * itself; a program of ours (id) has the same owners in both.
 */
static bool lists_agree(const struct prog_list *l, const struct prog_list *s, struct progs *r,
			struct progs *p, __u32 id)
{
	const struct prog *a, *b;
	size_t i;

	for (i = 0; i < s->cnt; i++) {
		b = &s->progs[i];
		a = prog_list__find(l, b->ident.id);
		if (!a ? !progs__own(r, b->ident.id) : !same_prog(a, b))
			return false;
		if (a && b->ident.id == id && !same_owners(a, b))
			return false;
	}
	for (i = 0; i < l->cnt; i++)
		if (!prog_list__find(s, l->progs[i].ident.id) && !progs__own(p, l->progs[i].ident.id))
			return false;
	return true;
}

static bool snapshots_equal(const struct prog_list *x, const struct prog_list *y)
{
	size_t i;

	if (x->cnt != y->cnt)
		return false;
	for (i = 0; i < x->cnt; i++)
		if (!same_prog(&x->progs[i], &y->progs[i]))
			return false;
	return true;
}

/* progs__refresh(r) against whole snapshots taken around it by p, over
 * the whole list; others load programs on this machine too, so a try
 * counts only when the snapshots before and after it are equal. Our
 * program id (0: none) is listed, as bpftool lists it, or not at all.
 * *gen: the refreshed list's.
 */
static void refresh_agrees(struct progs *r, struct progs *p, __u32 id, bool loaded,
			   unsigned long long *gen, const char *what)
{
	struct prog_list before = {}, after = {};
	const struct prog_list *l = NULL;
	bool stable = false, agree = false;
	const struct prog *a = NULL;
	char tag[32] = "";
	int try;

	for (try = 0; try < 20 && !stable; try++) {
		prog_list__free(&before);
		prog_list__free(&after);
		if (progs__snapshot(p, &before, PROGS_OWNERS) || progs__refresh(r, &l, PROGS_OWNERS) ||
		    progs__snapshot(p, &after, PROGS_OWNERS))
			break;
		stable = snapshots_equal(&before, &after);
	}
	CHECK(stable && l, "%s: a quiet moment to compare in", what);
	if (stable && l) {
		agree = lists_agree(l, &after, r, p, id);
		a = prog_list__find(l, id);
		*gen = l->gen;
	}
	CHECK(agree, "%s: progs__refresh() (%s) lists what a whole snapshot lists", what, progs__mode(r));
	if (!id)
		goto out;
	bpftool_tag(id, tag, sizeof(tag));
	CHECK(!a == !loaded && !tag[0] == !loaded, "%s: program %u %s (refresh: %s, bpftool: %s)", what, id,
	      loaded ? "listed" : "gone", a ? "listed" : "not listed", tag[0] ? "listed" : "not listed");
	if (a && tag[0])
		CHECK_STR(a->ident.tag, tag);
out:
	prog_list__free(&before);
	prog_list__free(&after);
}

static bool still_loaded(__u32 id)
{
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0)
		return false;
	close(fd);
	return true;
}

static void unload(struct writer_bpf *w, __u32 id)
{
	int i;

	writer_bpf__destroy(w);
	/* the kernel frees a program from a workqueue after the last ref
	 * (up to 60 s: an emulated guest is slow, and only a failure waits)
	 */
	for (i = 0; i < 600 && still_loaded(id); i++)
		usleep(100 * 1000);
}

/* The same refresh gen: nothing was read again. Only with the watch. */
static void check_unchanged(struct progs *r, unsigned long long was, unsigned long long now,
			    const char *what)
{
	if (strcmp(progs__mode(r), "watch"))
		return;
	CHECK(was == now, "%s: with nothing changed, the list was not read again (gen %llu, %llu)",
	      what, was, now);
}

static void check_changed(unsigned long long was, unsigned long long now, const char *what)
{
	CHECK(was != now, "%s: a new list (gen %llu, %llu)", what, was, now);
}

/* The children that take an fd say so on a pipe of their own, once they
 * hold it: a refresh before that would count fewer owners, and pass or
 * fail by the scheduler's whim.
 */
static void say_held(int ready, int fd)
{
	char c = fd < 0 ? 'n' : 'y';

	if (write(ready, &c, 1) != 1)
		_exit(1);
	close(ready);
}

/* How many of n children said they hold their fd; one that died first
 * says nothing (the pipe's end of file once every writer is gone).
 */
static int held_count(int ready, int n)
{
	int held = 0;
	char c;

	while (n-- > 0 && read(ready, &c, 1) == 1)
		held += c == 'y';
	close(ready);
	return held;
}

/* A child holding an fd of id until it reads from *to; its pid, once it
 * holds the fd (-1 when it could not take one).
 */
static pid_t hold_fd(__u32 id, int *to)
{
	int pipefd[2], ready[2];
	pid_t pid;
	char c;

	if (pipe(pipefd))
		return -1;
	if (pipe(ready)) {
		close(pipefd[0]);
		close(pipefd[1]);
		return -1;
	}
	pid = fork();
	if (pid == 0) {
		int fd = bpf_prog_get_fd_by_id(id);

		close(pipefd[1]);
		close(ready[0]);
		say_held(ready[1], fd);
		if (read(pipefd[0], &c, 1) < 0 || fd < 0)
			_exit(1);
		_exit(0);
	}
	close(pipefd[0]);
	close(ready[1]);
	if (pid > 0 && held_count(ready[0], 1) == 1) {
		*to = pipefd[1];
		return pid;
	}
	if (pid < 0)
		close(ready[0]);
	close(pipefd[1]);
	if (pid > 0)
		waitpid(pid, NULL, 0);
	return -1;
}

/* Owners are looked up when programs come, and at least every
 * PROGS_OWNERS_MAX_AGE seconds (shortened here to OWNERS_AGE): a process
 * that takes an fd of a listed program shows within that time. The child
 * holds it until *to closes.
 */
#define OWNERS_AGE	2
static pid_t check_new_owner(struct progs *r, struct progs *p, __u32 id, int *to)
{
	unsigned long long gen;
	const struct prog_list *l;
	const struct prog *a;
	pid_t pid;

	pid = hold_fd(id, to);
	CHECK(pid > 0, "a child holds program %u", id);
	if (pid <= 0)
		return pid;
	progs__owners_max_age(r, OWNERS_AGE);
	sleep(OWNERS_AGE + 1);
	refresh_agrees(r, p, id, true, &gen, "a second owner, after the owners' max age");
	progs__owners_max_age(r, PROGS_OWNERS_MAX_AGE);
	a = progs__refresh(r, &l, PROGS_OWNERS) ? NULL : prog_list__find(l, id);
	CHECK(a && a->owner_cnt == 2, "program %u: 2 owners (%d)", id, a ? a->owner_cnt : -1);
	return pid;
}

static void release(pid_t pid, int to)
{
	if (pid <= 0)
		return;
	close(to);
	waitpid(pid, NULL, 0);
}

/* An owner that exits is gone from the next refresh, long before the
 * owners' max age: its pidfd said so.
 */
static void check_owner_gone(struct progs *r, struct progs *p, __u32 id, pid_t pid, int to)
{
	unsigned long long gen;
	const struct prog_list *l;
	const struct prog *a;

	if (pid <= 0)
		return;
	release(pid, to);
	refresh_agrees(r, p, id, true, &gen, "the second owner exited");
	a = progs__refresh(r, &l, PROGS_OWNERS) ? NULL : prog_list__find(l, id);
	CHECK(a && a->owner_cnt == 1, "program %u: 1 owner once the second exited (%d)", id,
	      a ? a->owner_cnt : -1);
}

static void test_refresh(struct progs *p, bool watch)
{
	unsigned long long g0 = 0, g1 = 0;
	struct writer_bpf *w, *w2;
	int model = 0, out = 0, to = -1;
	struct progs *r;
	pid_t child = 0;
	char buf[4096];
	__u32 id, id2;

	if (watch)
		unsetenv("BPFSTDERR_FULL_WALK");
	else
		setenv("BPFSTDERR_FULL_WALK", "1", 1);
	if (progs__open(&r)) {
		CHECK(0, "open a second observer");
		return;
	}
	CHECK(!progs__watch(r) == !strcmp(progs__mode(r), "watch"), "mode %s", progs__mode(r));
	if (watch && progs__watch(r))
		fprintf(stderr, "note: the watch is refused here (%s): both runs walk\n",
			strerror(-progs__watch(r)));
	CHECK(watch || !strcmp(progs__mode(r), "walk (BPFSTDERR_FULL_WALK)"), "mode %s", progs__mode(r));
	refresh_agrees(r, p, 0, false, &g0, "start");
	refresh_agrees(r, p, 0, false, &g1, "idle");
	w = load_writer();
	CHECK(w != NULL, "writer loaded");
	if (!w)
		goto out;
	id = prog_id_of(bpf_program__fd(w->progs.writer));
	refresh_agrees(r, p, id, true, &g0, "loaded");
	refresh_agrees(r, p, id, true, &g1, "idle after the load");
	check_unchanged(r, g0, g1, "idle after the load");
	if (watch)
		child = check_new_owner(r, p, id, &to);
	run_writes(w, STREAM_STDERR, 10, 37, &model);
	refresh_agrees(r, p, id, true, &g0, "370 bytes written to stderr");
	check_changed(g1, g0, "written to");
	refresh_agrees(r, p, id, true, &g1, "idle after the writes");
	check_unchanged(r, g0, g1, "idle after the writes");
	run_writes(w, STREAM_STDOUT, 3, 11, &out);
	refresh_agrees(r, p, id, true, &g0, "33 bytes written to stdout");
	/* read until empty: here nothing is readable, elsewhere all is */
	while (stream_read_fd(bpf_program__fd(w->progs.writer), STREAM_STDERR, buf, sizeof(buf)) > 0)
		;
	refresh_agrees(r, p, id, true, &g1, "stderr read");
	check_owner_gone(r, p, id, child, to);
	unload(w, id);
	refresh_agrees(r, p, id, false, &g0, "unloaded");
	check_changed(g1, g0, "unloaded");
	/* replaced: one program goes and another comes between two refreshes */
	w = load_writer();
	id = w ? prog_id_of(bpf_program__fd(w->progs.writer)) : 0;
	refresh_agrees(r, p, id, true, &g1, "another loaded");
	w2 = load_writer();
	id2 = w2 ? prog_id_of(bpf_program__fd(w2->progs.writer)) : 0;
	unload(w, id);
	refresh_agrees(r, p, id, false, &g0, "replaced: the first gone");
	refresh_agrees(r, p, id2, true, &g1, "replaced: the second listed");
	check_unchanged(r, g0, g1, "idle after the replacement");
	if (w2)
		unload(w2, id2);
out:
	progs__close(r);
	unsetenv("BPFSTDERR_FULL_WALK");
}

/* Many owners near the descriptor limit: the watch of their exits leaves
 * the descriptors to everything else (it reads owners every few seconds
 * instead). Oracle: the descriptors still free after a refresh.
 */
#define NEAR_OWNERS	15
static void test_owners_near_fd_limit(void)
{
	struct rlimit old, lim;
	pid_t kids[NEAR_OWNERS];
	const struct prog_list *l;
	struct writer_bpf *w;
	struct progs *r = NULL;
	int gate[2], ready[2], fds[NEAR_OWNERS], i, n = 0, opened = 0;
	__u32 id;

	w = load_writer();
	if (!w || pipe(gate) || pipe(ready) || getrlimit(RLIMIT_NOFILE, &old)) {
		CHECK(0, "set up: a writer and a pipe");
		return;
	}
	id = prog_id_of(bpf_program__fd(w->progs.writer));
	for (i = 0; i < NEAR_OWNERS; i++) {
		kids[i] = fork();
		if (kids[i] == 0) {
			char c;
			int fd = bpf_prog_get_fd_by_id(id);

			close(gate[1]);
			close(ready[0]);
			say_held(ready[1], fd);
			if (read(gate[0], &c, 1) < 0 || fd < 0)
				_exit(1);
			_exit(0);
		}
	}
	/* every child holds its fd before the refresh counts owners: one
	 * not yet there would leave the refresh more room than the test gives
	 */
	close(ready[1]);
	n = held_count(ready[0], NEAR_OWNERS);
	CHECK(n == NEAR_OWNERS, "%d children hold an fd of program %u (%d)", NEAR_OWNERS, id, n);
	n = 0;
	CHECK(!progs__open(&r), "open an observer");
	if (r) {
		/* room for NEAR_OWNERS + 5 more descriptors, no more */
		lim = old;
		lim.rlim_cur = fcntl(0, F_DUPFD, 0);
		close(lim.rlim_cur);
		lim.rlim_cur += NEAR_OWNERS + 5;
		CHECK(!setrlimit(RLIMIT_NOFILE, &lim), "limit descriptors to %llu", (unsigned long long)lim.rlim_cur);
		CHECK(!progs__refresh(r, &l, PROGS_OWNERS), "refresh with owners near the limit");
		for (i = 0; i < NEAR_OWNERS; i++)
			if ((fds[n] = open("/dev/null", O_RDONLY)) >= 0)
				n++;
		opened = n;
		while (n)
			close(fds[--n]);
		CHECK(opened == NEAR_OWNERS, "%d descriptors still free for others after the refresh (%d)",
		      NEAR_OWNERS, opened);
		setrlimit(RLIMIT_NOFILE, &old);
		progs__close(r);
	}
	close(gate[1]);
	close(gate[0]);
	for (i = 0; i < NEAR_OWNERS; i++)
		if (kids[i] > 0)
			waitpid(kids[i], NULL, 0);
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
	test_owners_near_fd_limit();
	test_capacity(p);
	test_refresh(p, true);
	test_refresh(p, false);
	progs__close(p);
	return unit_done();
}
