// SPDX-License-Identifier: GPL-2.0
/* Other readers of streams (readers.h): fexit on bpf_prog_stream_read(),
 * the read command's kernel function, records each read by a process
 * other than ours. Pids are told in our pid namespace (the kernel's
 * bpf_get_ns_current_pid_tgid()): a reader outside it has pid 0.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>
#include "readers.h"

struct bpf_prog_aux___r {
	__u32 id;
} __attribute__((preserve_access_index));

struct bpf_prog___r {
	struct bpf_prog_aux___r *aux;
} __attribute__((preserve_access_index));

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, READERS_MAX);
	__type(key, struct reader_key);
	__type(value, struct reader_rec);
} readers SEC(".maps");

/* set before load: our pid namespace (st_dev, st_ino of /proc/self/ns/pid)
 * and our pid in it
 */
const volatile __u64 ns_dev;
const volatile __u64 ns_ino;
const volatile __u32 self_pid;

/* int bpf_prog_stream_read(struct bpf_prog *prog, enum bpf_stream_id
 *			    stream_id, void __user *buf, int len)
 */
SEC("fexit/bpf_prog_stream_read")
int BPF_PROG(reader_read, struct bpf_prog___r *prog, int stream_id, void *buf, int len, int ret)
{
	struct reader_key k = {};
	struct reader_rec r = {}, *v;
	struct bpf_pidns_info ns = {};

	if (ret < 0)
		return 0;
	if (!bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns)))
		r.pid = ns.tgid;
	if (r.pid && r.pid == self_pid)
		return 0;
	k.prog_id = BPF_CORE_READ(prog, aux, id);
	k.stream = stream_id;
	v = bpf_map_lookup_elem(&readers, &k);
	if (v) {
		/* the pid and name are the last reader's */
		v->last_ns = bpf_ktime_get_ns();
		v->reads++;
		v->bytes += ret;
		v->pid = r.pid;
		bpf_get_current_comm(v->comm, sizeof(v->comm));
		return 0;
	}
	r.last_ns = bpf_ktime_get_ns();
	r.reads = 1;
	r.bytes = ret;
	bpf_get_current_comm(r.comm, sizeof(r.comm));
	bpf_map_update_elem(&readers, &k, &r, BPF_ANY);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
