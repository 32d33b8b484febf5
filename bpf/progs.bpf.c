// SPDX-License-Identifier: GPL-2.0
/* Enumerate every loaded BPF program in one read, with the per-stream
 * accounting that no syscall exposes. One object must load on upstream
 * (6.17+: bpf_stream.capacity), RFC (aux->error_count, no capacity) and
 * older kernels (no streams at all), hence the CO-RE field checks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "prog_id.bpf.h"

/* RFC series (seed 008): atomic_long_t error_count in bpf_prog_aux. */
struct bpf_prog_aux___rfc {
	atomic_long_t error_count;
} __attribute__((preserve_access_index));

/* Kernels before 6.17 have no streams; declared locally so that the
 * object also builds from a vmlinux.h that lacks them.
 */
struct bpf_stream___up {
	atomic_t capacity;
	/* what the stream dropped: kernels with kernel-patches/stream-drops */
	atomic64_t dropped_msgs;
	atomic64_t dropped_bytes;
} __attribute__((preserve_access_index));

struct bpf_prog_aux___streams {
	struct bpf_stream___up stream[2];
} __attribute__((preserve_access_index));

static void read_streams(struct bpf_prog_aux *aux, struct prog_rec *r)
{
	struct bpf_prog_aux___streams *s = (void *)aux;

	r->capacity[0] = -1;
	r->capacity[1] = -1;
	if (!bpf_core_field_exists(s->stream))
		return;
	if (!bpf_core_field_exists(s->stream[0].capacity)) {
		r->flags |= PROG_REC_RFC_STREAMS;
		return;
	}
	r->flags |= PROG_REC_HAS_STREAMS;
	r->capacity[0] = BPF_CORE_READ(s, stream[0].capacity.counter);
	r->capacity[1] = BPF_CORE_READ(s, stream[1].capacity.counter);
	if (!bpf_core_field_exists(s->stream[0].dropped_msgs))
		return;
	r->flags |= PROG_REC_HAS_DROPS;
	r->dropped_msgs[0] = BPF_CORE_READ(s, stream[0].dropped_msgs.counter);
	r->dropped_msgs[1] = BPF_CORE_READ(s, stream[1].dropped_msgs.counter);
	r->dropped_bytes[0] = BPF_CORE_READ(s, stream[0].dropped_bytes.counter);
	r->dropped_bytes[1] = BPF_CORE_READ(s, stream[1].dropped_bytes.counter);
}

/* Possible CPUs (libbpf_num_possible_cpus()), set before load: the
 * verifier knows it from the frozen rodata, so the loop below is walked
 * that many times, not STATS_MAX_CPUS.
 */
const volatile __u32 nr_cpus = 1;
#define STATS_MAX_CPUS	8192	/* CONFIG_NR_CPUS at most */
/* set by user space while it shows runtime statistics: summing them costs
 * three reads per possible CPU and program
 */
bool want_stats;

/* A per-CPU array of one element: the kernel gives each CPU's address of
 * it (bpf_map_lookup_percpu_elem()), and its per-CPU pointer is in the
 * map (bpf_array.pptrs[0]); the difference is that CPU's per-CPU offset,
 * as per_cpu_ptr() adds it, on every architecture.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} cpu_off SEC(".maps");

/* prog->stats is per CPU: sum every possible CPU's counters, as
 * bpf_prog_get_stats() does for BPF_OBJ_GET_INFO_BY_FD. bpf_per_cpu_ptr()
 * on prog->stats would be the way, but it needs the field's "percpu" BTF
 * type tag, which kernels built with gcc lack (the verifier sees an
 * untrusted pointer), and neither __per_cpu_offset nor this_cpu_off
 * resolve without CONFIG_KALLSYMS_ALL: so each CPU's offset is taken
 * from cpu_off above and the counters are read at stats + offset, as
 * per_cpu_ptr() computes them. On 64-bit the u64_stats_sync is empty and
 * a counter one load.
 */
static void read_stats(struct bpf_prog *prog, struct prog_rec *r)
{
	void *volatile map = &cpu_off;	/* spilled: its address as a number */
	unsigned long base, pptr, elem, addr;
	struct bpf_prog_stats *st;
	__u32 cpu, zero = 0;

	if (!want_stats || nr_cpus > STATS_MAX_CPUS)
		return;
	/* another layout of the counters (32-bit u64_stats, a future kernel):
	 * no statistics, and the rest of the record as always; the verifier
	 * drops the unrelocated reads below as dead code
	 */
	st = NULL;
	if (!bpf_core_field_exists(st->cnt.v.a.a.counter) ||
	    !bpf_core_field_exists(st->nsecs.v.a.a.counter) ||
	    !bpf_core_field_exists(st->misses.v.a.a.counter))
		return;
	base = (unsigned long)BPF_CORE_READ(prog, stats);
	if (bpf_probe_read_kernel(&addr, sizeof(addr), (const void *)&map))
		return;
	addr += bpf_core_field_offset(struct bpf_array, pptrs);
	if (bpf_probe_read_kernel(&pptr, sizeof(pptr), (const void *)addr))
		return;
	for (cpu = 0; cpu < STATS_MAX_CPUS && cpu < nr_cpus; cpu++) {
		void *volatile e = bpf_map_lookup_percpu_elem(&cpu_off, &zero, cpu);

		if (!e)
			continue;	/* not a possible CPU */
		/* as a number: the verifier refuses arithmetic on it */
		if (bpf_probe_read_kernel(&elem, sizeof(elem), (const void *)&e))
			return;
		st = (struct bpf_prog_stats *)(base + (elem - pptr));
		r->run_cnt += BPF_CORE_READ(st, cnt.v.a.a.counter);
		r->run_time_ns += BPF_CORE_READ(st, nsecs.v.a.a.counter);
		r->recursion_misses += BPF_CORE_READ(st, misses.v.a.a.counter);
	}
	r->flags |= PROG_REC_HAS_STATS;
}

static void read_error_count(struct bpf_prog_aux *aux, struct prog_rec *r)
{
	struct bpf_prog_aux___rfc *rfc = (void *)aux;

	r->error_count = -1;
	if (!bpf_core_field_exists(rfc->error_count))
		return;
	r->flags |= PROG_REC_HAS_ERR_COUNT;
	r->error_count = BPF_CORE_READ(rfc, error_count.counter);
}

SEC("iter/bpf_prog")
int list_progs(struct bpf_iter__bpf_prog *ctx)
{
	struct bpf_prog *prog = ctx->prog;
	struct bpf_prog_aux *aux;
	struct prog_rec r = {};

	if (!prog)
		return 0;
	/* plain loads where the fields always exist: the verifier makes them
	 * fault-safe, at a fraction of a helper call each, and the walk is
	 * most of an idle cycle's cost where it is not watched
	 */
	aux = prog->aux;
	r.aux_addr = (unsigned long)aux;
	prog_id_read(&r.ident, prog);
	r.uid = aux->user ? aux->user->uid.val : 0;
	r.btf_id = aux->btf ? aux->btf->id : 0;
	r.jited_len = prog->jited_len;
	r.xlated_len = prog->len * sizeof(struct bpf_insn);
	read_streams(aux, &r);
	read_error_count(aux, &r);
	read_stats(prog, &r);
	bpf_seq_write(ctx->meta->seq, &r, sizeof(r));
	return 0;
}

/* Program fds are anon inodes named "bpf-prog". bpftool compares f_op with
 * bpf_prog_fops instead, which kallsyms lacks without CONFIG_KALLSYMS_ALL.
 */
static bool is_prog_file(struct file *file)
{
	static const char want[] = "bpf-prog";
	char name[sizeof(want)] = {};
	const unsigned char *dname;
	int i;

	dname = BPF_CORE_READ(file, f_path.dentry, d_name.name);
	if (bpf_probe_read_kernel_str(name, sizeof(name), dname) != sizeof(want))
		return false;
	for (i = 0; i < sizeof(want); i++)
		if (name[i] != want[i])
			return false;
	return true;
}

/* task's process id as the reader's pid namespace numbers it (tgid is the
 * initial namespace's): the iterator visits only the tasks that namespace
 * sees, so the leader's pid has a number at the reader's level. 0: none.
 */
static __u32 pid_for_reader(struct task_struct *task)
{
	struct task_struct *me = bpf_get_current_task_btf();
	unsigned int level = BPF_CORE_READ(me, thread_pid, level);
	struct pid *pid = BPF_CORE_READ(task, group_leader, thread_pid);
	void *up;
	int nr = 0;

	if (!pid || level > BPF_CORE_READ(pid, level) || level > 32)
		return 0;
	up = (void *)pid + bpf_core_field_offset(struct pid, numbers) +
	     level * bpf_core_type_size(struct upid);
	bpf_probe_read_kernel(&nr, sizeof(nr), up + bpf_core_field_offset(struct upid, nr));
	return nr;
}

/* Which processes hold a program fd: the task_file iterator visits each
 * thread group's file table once.
 */
SEC("iter/task_file")
int list_owners(struct bpf_iter__task_file *ctx)
{
	struct task_struct *task = ctx->task, *leader;
	struct file *file = ctx->file;
	struct owner_rec o = {};
	struct bpf_prog *prog;

	if (!task || !file)
		return 0;
	if (!is_prog_file(file))
		return 0;
	o.pid = pid_for_reader(task);
	if (!o.pid)
		return 0;
	prog = BPF_CORE_READ(file, private_data);
	o.prog_id = BPF_CORE_READ(prog, aux, id);
	leader = BPF_CORE_READ(task, group_leader);
	bpf_probe_read_kernel_str(o.comm, sizeof(o.comm), &leader->comm);
	bpf_seq_write(ctx->meta->seq, &o, sizeof(o));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
