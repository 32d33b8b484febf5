// SPDX-License-Identifier: GPL-2.0
/* Enumerate every loaded BPF program in one read, with the per-stream
 * accounting that no syscall exposes. One object must load on upstream
 * (6.17+: bpf_stream.capacity), RFC (aux->error_count, no capacity) and
 * older kernels (no streams at all), hence the CO-RE field checks.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include "progs.h"

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
	aux = BPF_CORE_READ(prog, aux);
	r.id = BPF_CORE_READ(aux, id);
	r.type = BPF_CORE_READ(prog, type);
	r.load_time = BPF_CORE_READ(aux, load_time);
	r.uid = BPF_CORE_READ(aux, user, uid.val);
	r.btf_id = BPF_CORE_READ(aux, btf, id);
	r.jited_len = BPF_CORE_READ(prog, jited_len);
	r.xlated_len = BPF_CORE_READ(prog, len) * sizeof(struct bpf_insn);
	bpf_probe_read_kernel(r.tag, sizeof(r.tag), &prog->tag);
	/* the ksym holds the full name; only worth copying when name was cut */
	if (bpf_probe_read_kernel_str(r.name, sizeof(r.name), &aux->name) == sizeof(r.name))
		bpf_probe_read_kernel_str(r.ksym, sizeof(r.ksym), &aux->ksym.name);
	read_streams(aux, &r);
	read_error_count(aux, &r);
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
	o.pid = BPF_CORE_READ(task, tgid);
	prog = BPF_CORE_READ(file, private_data);
	o.prog_id = BPF_CORE_READ(prog, aux, id);
	leader = BPF_CORE_READ(task, group_leader);
	bpf_probe_read_kernel_str(o.comm, sizeof(o.comm), &leader->comm);
	bpf_seq_write(ctx->meta->seq, &o, sizeof(o));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
