// SPDX-License-Identifier: GPL-2.0
/* Test helper: load real BPF programs, report their ids, hold them until
 * told to quit (or stdin closes, or the helper is killed: the kernel then
 * unloads them), and run the writer on request.
 *
 *   holdprog [writer] [names] [anon] [demo] [subprogs] [twin_a] [twin_b] [spin_a]
 *            [spin_b] [stacks] [idle N]
 * prints "prog ID NAME" per program ("refused SOURCE ERRNO STEP" per demo
 * fault source the host refuses), then "ready"; reads commands:
 *   write STREAM COUNT LEN   -> "rets R1 R2 ..." (each write's return;
 *                               LEN < 512: longer %s arguments are cut)
 *   lines STREAM COUNT LEN   -> as write, each message LEN - 1 'x' and '\n'
 *   fault KIND COUNT         -> "ran COUNT" (KIND: arena_read arena_write
 *                               deadlock may_goto print; demo programs)
 *   oversize STREAM COUNT    -> "rets R1 ...": writes of "%2000d", longer than
 *                               the kernel's print buffer (charged, then refused)
 *   blip                     -> "blipped ID": a program loaded and unloaded, so
 *                               that readers walk the program list again
 *   otherbuild               -> the writer build this kernel does NOT take
 *                               (bpf/stream_printk.h), loaded: "loaded", or
 *                               "refused ERRNO CAUSE" (printk_externs_mismatch)
 *   linfo [ID]               -> the subprogs program (or program ID) as the
 *                               kernel describes it: "fn KSYM LEN" per
 *                               function, "li ADDR LINE FILE" per jited line
 *                               entry, then "end"
 *   run ID                   -> "ran RET": program ID test-run once (spin_*,
 *                               stacks_*)
 *   callbacks                -> "callbacks N": the runs of the stacks timer's
 *                               callback, by its own count
 *   timer NS SPINS           -> "timer NS SPINS": stacks_timer's next runs
 *                               start the timer NS ns ahead, then spin SPINS
 *   quit
 */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "health.h"
#include "../../bpf/stream_ids.h"
#include "writer.skel.h"
#include "writer.v4.skel.h"
#include "names.skel.h"
#include "faultsrc.h"
#include "subprogs.skel.h"
#include "twin_a.skel.h"
#include "twin_b.skel.h"
#include "spin_a.skel.h"
#include "spin_b.skel.h"
#include "stacks.skel.h"
#include "kbtf.h"
#include <bpf/btf.h>

static struct writer_bpf *writer;
static struct names_bpf *names;
static int anon_fd = -1;
static int *idle_fds, idle_cnt;
static struct fault_progs *demo[FAULT_SRC_CNT];
static struct subprogs_bpf *subprogs;
static struct twin_a_bpf *twin_a;
static struct twin_b_bpf *twin_b;
static struct spin_a_bpf *spin_a;
static struct spin_b_bpf *spin_b;
static struct stacks_bpf *stacks;

static void print_prog(int fd)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);

	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return;
	printf("prog %u %s\n", info.id, info.name[0] ? info.name : "-");
}

static int load_writer(void)
{
	char cause[256];

	writer = printk_skel_open(writer);
	if (!writer)
		return -errno;
	if (writer_bpf__load(writer)) {
		if (printk_externs_mismatch(writer->obj, cause, sizeof(cause)))
			fprintf(stderr, "holdprog: writer: %s\n", cause);
		return -errno;
	}
	print_prog(bpf_program__fd(writer->progs.writer));
	return 0;
}

static int load_names(void)
{
	names = names_bpf__open_and_load();
	if (!names)
		return -errno;
	print_prog(bpf_program__fd(names->progs.a_program_name_longer_than_fifteen));
	return 0;
}

static int load_trivial(const char *name)
{
	struct bpf_insn insns[] = {
		{ .code = 0xb7, .dst_reg = 0, .imm = 0 },	/* r0 = 0 */
		{ .code = 0x95 },				/* exit */
	};

	return bpf_prog_load(BPF_PROG_TYPE_SOCKET_FILTER, name, "GPL", insns, 2, NULL);
}

/* A list change every reader sees, on any kernel (perf's BPF events). */
static void do_blip(void)
{
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	int fd = load_trivial("blip");

	if (fd < 0) {
		printf("blipped %d\n", -errno);
		return;
	}
	bpf_obj_get_info_by_fd(fd, &info, &len);
	close(fd);
	printf("blipped %u\n", info.id);
}

/* A program loaded with no name at all: libbpf always names them. */
static int load_anon(void)
{
	anon_fd = load_trivial(NULL);
	if (anon_fd < 0)
		return -errno;
	print_prog(anon_fd);
	return 0;
}

/* N idle programs, for benchmarks; not listed one by one. */
static int load_idle(int n)
{
	struct rlimit rl = { n + 256, n + 256 };

	setrlimit(RLIMIT_NOFILE, &rl);
	idle_fds = calloc(n, sizeof(*idle_fds));
	if (!idle_fds)
		return -ENOMEM;
	for (idle_cnt = 0; idle_cnt < n; idle_cnt++) {
		idle_fds[idle_cnt] = load_trivial("idle");
		if (idle_fds[idle_cnt] < 0)
			return -errno;
	}
	printf("idle %d\n", n);
	return 0;
}

/* Every fault source the host allows; "refused SRC ERRNO" for the others,
 * so that a test can tell a host's refusal from a broken build.
 */
static int load_demo(void)
{
	struct fault_refusal why;
	struct bpf_program *p;
	int s, loaded = 0;

	for (s = 0; s < FAULT_SRC_CNT; s++) {
		if (fault_progs__load(s, &demo[s], &why)) {
			printf("refused %s %d %s\n", fault_src__name(s), -why.err, why.step);
			continue;
		}
		loaded++;
		bpf_object__for_each_program(p, fault_progs__obj(demo[s]))
			if (bpf_program__fd(p) >= 0)
				print_prog(bpf_program__fd(p));
	}
	return loaded ? 0 : -EPERM;
}

static struct bpf_program *find_demo(const char *name)
{
	struct bpf_program *p;
	int s;

	for (s = 0; s < FAULT_SRC_CNT; s++) {
		p = demo[s] ? bpf_object__find_program_by_name(fault_progs__obj(demo[s]), name) : NULL;
		if (p && bpf_program__fd(p) >= 0)
			return p;
	}
	return NULL;
}

static void do_fault(const char *kind, int count)
{
	char name[64];
	struct bpf_program *p;
	int i;

	snprintf(name, sizeof(name), "demo_%s", kind);
	p = find_demo(name);
	if (!p) {
		printf("error no program %s\n", name);
		return;
	}
	for (i = 0; i < count; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, opts);

		if (bpf_prog_test_run_opts(bpf_program__fd(p), &opts)) {
			printf("error test_run %d\n", -errno);
			return;
		}
	}
	printf("ran %d\n", count);
}

static int load_subprogs(void)
{
	subprogs = subprogs_bpf__open_and_load();
	if (!subprogs)
		return -errno;
	print_prog(bpf_program__fd(subprogs->progs.subprogs_main));
	return 0;
}

/* Programs with equal instructions (one tag) in two objects. */
static int load_twin_a(void)
{
	twin_a = twin_a_bpf__open_and_load();
	if (!twin_a)
		return -errno;
	print_prog(bpf_program__fd(twin_a->progs.twin_one));
	return 0;
}

static int load_twin_b(void)
{
	twin_b = twin_b_bpf__open_and_load();
	if (!twin_b)
		return -errno;
	print_prog(bpf_program__fd(twin_b->progs.twin_two));
	print_prog(bpf_program__fd(twin_b->progs.twin_one));
	return 0;
}

/* Programs with equal code and equal names in two objects (the lab). */
static int load_spin_a(void)
{
	spin_a = spin_a_bpf__open_and_load();
	if (!spin_a)
		return -errno;
	print_prog(bpf_program__fd(spin_a->progs.twin_spin));
	return 0;
}

static int load_spin_b(void)
{
	spin_b = spin_b_bpf__open_and_load();
	if (!spin_b)
		return -errno;
	print_prog(bpf_program__fd(spin_b->progs.twin_spin));
	return 0;
}

/* The lab's stack dump and timer callback (tests/bpf/stacks.bpf.c).
 * stacks_print dumps only where the kernel has the 1-argument kfunc
 * (7.x); libbpf refuses the object where it has another shape.
 */
static int load_stacks(void)
{
	stacks = stacks_bpf__open();
	if (!stacks)
		return -errno;
	stacks->rodata->has_print_stack = kbtf_func_arg_cnt("bpf_stream_print_stack") == 1;
	bpf_map__set_map_extra(stacks->maps.arena, ARENA_USER_ADDR);
	if (stacks_bpf__load(stacks))
		return -errno;
	print_prog(bpf_program__fd(stacks->progs.stacks_print));
	print_prog(bpf_program__fd(stacks->progs.stacks_timer));
	return 0;
}

/* "timer NS SPINS": how stacks_timer's next runs start the timer */
static void do_timer(const char *line)
{
	unsigned long long ns, spins;

	if (!stacks || sscanf(line, "timer %llu %llu", &ns, &spins) != 2) {
		printf("error timer\n");
		return;
	}
	stacks->bss->timer_ns = ns;
	stacks->data->spin_for = spins;
	printf("timer %llu %llu\n", ns, spins);
}

static void do_run(__u32 id)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int fd = bpf_prog_get_fd_by_id(id);

	if (fd < 0 || bpf_prog_test_run_opts(fd, &opts))
		printf("error run %d\n", -errno);
	else
		printf("ran %u\n", opts.retval);
	if (fd >= 0)
		close(fd);
}

/* The jited layout and line info of fd's program, read independently of
 * bpfstderr.
 */
static void do_linfo_fd(int fd)
{
	__u64 ksyms[16] = {}, jl[512] = {};
	__u32 lens[16] = {}, n, i;
	struct bpf_line_info li[512] = {};
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	struct btf *btf;

	if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || info.nr_line_info > 512 ||
	    info.nr_jited_ksyms > 16) {
		printf("error linfo\n");
		return;
	}
	n = info.nr_line_info;
	memset(&info, 0, sizeof(info));
	info.nr_jited_ksyms = 16;
	info.jited_ksyms = (unsigned long)ksyms;
	info.nr_jited_func_lens = 16;
	info.jited_func_lens = (unsigned long)lens;
	info.nr_line_info = n;
	info.line_info_rec_size = sizeof(li[0]);
	info.line_info = (unsigned long)li;
	info.nr_jited_line_info = n;
	info.jited_line_info_rec_size = sizeof(jl[0]);
	info.jited_line_info = (unsigned long)jl;
	len = sizeof(info);
	if (bpf_obj_get_info_by_fd(fd, &info, &len) || !(btf = btf__load_from_kernel_by_id(info.btf_id))) {
		printf("error linfo\n");
		return;
	}
	for (i = 0; i < info.nr_jited_ksyms; i++)
		printf("fn %llx %u\n", (unsigned long long)ksyms[i], lens[i]);
	for (i = 0; i < n; i++)
		printf("li %llx %u %s\n", (unsigned long long)jl[i], BPF_LINE_INFO_LINE_NUM(li[i].line_col),
		       btf__name_by_offset(btf, li[i].file_name_off));
	printf("end\n");
	btf__free(btf);
}

/* Read back the jited layout and line info, independently of bpfstderr:
 * of program id, or of subprogs when id is 0.
 */
static void do_linfo(__u32 id)
{
	int fd = id ? bpf_prog_get_fd_by_id(id) :
		 subprogs ? bpf_program__fd(subprogs->progs.subprogs_main) : -1;

	do_linfo_fd(fd);
	if (id && fd >= 0)
		close(fd);
}

static void do_write(int stream, int count, int len, bool oversize, bool line)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts);
	int i;

	if (!writer || len < 0 || len >= (int)sizeof(writer->bss->msg) || count > 256) {
		printf("error bad write\n");
		return;
	}
	writer->data->stream_id = stream;
	writer->bss->count = count;
	writer->bss->oversize = oversize;
	memset(writer->bss->msg, 'x', len);
	writer->bss->msg[len] = '\0';
	if (line && len)
		writer->bss->msg[len - 1] = '\n';
	if (bpf_prog_test_run_opts(bpf_program__fd(writer->progs.writer), &opts)) {
		printf("error test_run %d\n", -errno);
		return;
	}
	printf("rets");
	for (i = 0; i < count; i++)
		printf(" %d", writer->bss->ret[i]);
	printf("\n");
}

/* The build of the writer that printk_skel_open() would not pick: on a
 * kernel whose print kfunc has the other shape, libbpf refuses it whole,
 * and the cause must name the kfunc, not the verifier.
 */
static void do_otherbuild(void)
{
	struct bpf_object *obj;
	const void *bytes;
	char cause[256] = "";
	size_t sz;
	int err;

	if (printk_kfunc_detect() == PRINTK_KFUNC_V4)
		bytes = writer_bpf__elf_bytes(&sz);
	else
		bytes = writer_v4_bpf__elf_bytes(&sz);
	obj = bpf_object__open_mem(bytes, sz, NULL);
	if (!obj) {
		printf("error open %d\n", -errno);
		return;
	}
	err = bpf_object__load(obj);
	if (err) {
		printk_externs_mismatch(obj, cause, sizeof(cause));
		printf("refused %d %s\n", err, cause[0] ? cause : "-");
	} else {
		printf("loaded\n");
	}
	bpf_object__close(obj);
}

/* Quiet, so that a refused load does not break the line protocol. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || !getenv("BPFSTDERR_DEBUG"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	char line[256], kind[32];
	int i, err = 0, stream, count, len;

	setvbuf(stdout, NULL, _IOLBF, 0);
	libbpf_set_print(libbpf_print);
	for (i = 1; i < argc && !err; i++) {
		if (!strcmp(argv[i], "writer"))
			err = load_writer();
		else if (!strcmp(argv[i], "names"))
			err = load_names();
		else if (!strcmp(argv[i], "anon"))
			err = load_anon();
		else if (!strcmp(argv[i], "demo"))
			err = load_demo();
		else if (!strcmp(argv[i], "subprogs"))
			err = load_subprogs();
		else if (!strcmp(argv[i], "twin_a"))
			err = load_twin_a();
		else if (!strcmp(argv[i], "twin_b"))
			err = load_twin_b();
		else if (!strcmp(argv[i], "spin_a"))
			err = load_spin_a();
		else if (!strcmp(argv[i], "spin_b"))
			err = load_spin_b();
		else if (!strcmp(argv[i], "stacks"))
			err = load_stacks();
		else if (!strcmp(argv[i], "idle") && i + 1 < argc)
			err = load_idle(atoi(argv[++i]));
		else
			err = -EINVAL;
	}
	if (err) {
		printf("error %d\n", err);
		return 1;
	}
	printf("ready\n");
	while (fgets(line, sizeof(line), stdin)) {
		if (sscanf(line, "write %d %d %d", &stream, &count, &len) == 3)
			do_write(stream, count, len, false, false);
		else if (sscanf(line, "lines %d %d %d", &stream, &count, &len) == 3)
			do_write(stream, count, len, false, true);
		else if (sscanf(line, "oversize %d %d", &stream, &count) == 2)
			do_write(stream, count, 0, true, false);
		else if (sscanf(line, "fault %31s %d", kind, &count) == 2)
			do_fault(kind, count);
		else if (!strncmp(line, "blip", 4))
			do_blip();
		else if (!strncmp(line, "otherbuild", 10))
			do_otherbuild();
		else if (!strncmp(line, "linfo", 5))
			do_linfo(strtoul(line + 5, NULL, 10));
		else if (!strncmp(line, "run ", 4))
			do_run(strtoul(line + 4, NULL, 10));
		else if (!strncmp(line, "timer", 5))
			do_timer(line);
		else if (!strncmp(line, "callbacks", 9))
			printf("callbacks %llu\n", stacks ? (unsigned long long)stacks->bss->callbacks : 0ULL);
		else if (!strncmp(line, "quit", 4))
			break;
	}
	writer_bpf__destroy(writer);
	names_bpf__destroy(names);
	for (i = 0; i < FAULT_SRC_CNT; i++)
		fault_progs__free(demo[i]);
	subprogs_bpf__destroy(subprogs);
	twin_a_bpf__destroy(twin_a);
	twin_b_bpf__destroy(twin_b);
	spin_a_bpf__destroy(spin_a);
	spin_b_bpf__destroy(spin_b);
	stacks_bpf__destroy(stacks);
	if (anon_fd >= 0)
		close(anon_fd);
	return 0;
}
