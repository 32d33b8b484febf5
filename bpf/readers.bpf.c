// SPDX-License-Identifier: GPL-2.0
/* Other readers of streams (readers.h): fexit on bpf_prog_stream_read(),
 * the read command's kernel function, records each read by a process
 * other than ours, and copies what it returned from the reader's buffer
 * into ring "mirror" (the reader has it already: the copy costs it the
 * time of this program, never a byte). Pids are told in our pid namespace
 * (the kernel's bpf_get_ns_current_pid_tgid()): a reader outside it has
 * pid 0.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include "readers.h"
#include "prog_id.bpf.h"

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, READERS_MAX);
	__type(key, struct reader_key);
	__type(value, struct reader_rec);
} readers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, MIRROR_RING);
} mirror SEC(".maps");

/* reads whose tail not even a header could say (the ring was full) */
__u64 mirror_lost;
/* our own tgid in the kernel's initial namespace, learned at our first
 * read (self_pid is our namespace's): our reads leave at once
 */
__u32 self_tgid;

/* set before load: our pid namespace (st_dev, st_ino of /proc/self/ns/pid)
 * and our pid in it
 */
const volatile __u64 ns_dev;
const volatile __u64 ns_ino;
const volatile __u32 self_pid;

/* int bpf_prog_stream_read(struct bpf_prog *prog, enum bpf_stream_id
 *			    stream_id, void __user *buf, int len)
 */
#define MIRROR_HDR	offsetof(struct mirror_rec, data)

/* A reader that reads in a loop would wake bpfstderr on every read (a
 * cycle, a commit): it is woken once the ring is a quarter full, and
 * takes the rest at its next cycle. Once: "mirror_armed" is cleared by
 * the wake and set again by bpfstderr when it has taken what the ring
 * held (tool/readers.c), so a reader that outruns it costs one wake per
 * take, not an interrupt per read.
 */
__u64 mirror_armed;

static __u64 wake_flags(void)
{
	if (bpf_ringbuf_query(&mirror, BPF_RB_AVAIL_DATA) <= MIRROR_RING / 4 ||
	    !__sync_lock_test_and_set(&mirror_armed, 0))
		return BPF_RB_NO_WAKEUP;
	return BPF_RB_FORCE_WAKEUP;
}

/* Since 6.16 (streams came in 6.17; tool/readers.c checks): user memory
 * read straight into a ring record of any size.
 */
extern int bpf_probe_read_user_dynptr(struct bpf_dynptr *dptr, __u32 off, __u32 size,
				      const void *unsafe_ptr__ign) __ksym;

/* A piece's header, written in its ring record: its bytes, if any,
 * follow.
 */
static void mirror_hdr(struct mirror_rec *m, struct bpf_prog *prog, const struct reader_key *k,
		       const struct reader_rec *r, __u32 off, __u32 len, __u32 missed)
{
	m->ns = r->last_ns;
	prog_id_read(&m->prog, prog);
	m->stream = k->stream;
	m->pid = r->pid;
	m->off = off;
	m->len = len;
	m->missed = missed;
	m->gap = off ? 0 : r->gap;
	__builtin_memcpy(m->comm, r->comm, sizeof(m->comm));
}

/* One piece, n bytes of the read's from off, copied once: from the
 * reader's buffer into a ring record sized for them. -1: not mirrored
 * (the ring is full, or the buffer could not be read).
 */
static int mirror_piece(struct bpf_prog *prog, const struct reader_key *k,
			struct reader_rec *r, void *buf, __u32 off, __u32 n)
{
	struct bpf_dynptr dp;
	struct mirror_rec *m;

	if (bpf_ringbuf_reserve_dynptr(&mirror, MIRROR_HDR + n, 0, &dp))
		goto discard;
	m = bpf_dynptr_data(&dp, 0, MIRROR_HDR);
	if (!m)
		goto discard;
	mirror_hdr(m, prog, k, r, off, n, 0);
	if (bpf_probe_read_user_dynptr(&dp, MIRROR_HDR, n, buf + off))
		goto discard;
	bpf_ringbuf_submit_dynptr(&dp, wake_flags());
	r->gap = 0;
	return 0;
discard:
	bpf_ringbuf_discard_dynptr(&dp, 0);
	return -1;
}

/* What the read returned, MIRROR_CHUNK bytes a record, in order. A piece
 * the ring refuses ends the copy with a header that says how many bytes
 * were not copied, so the reader of the ring knows where the gap is; a
 * read of which not even that fits is counted, and the first record of
 * the stream's next read says so (gap).
 */
static void mirror_read(struct bpf_prog *prog, const struct reader_key *k,
			struct reader_rec *r, void *buf, __u32 ret)
{
	struct mirror_rec *m;
	__u32 off, n;
	int i;

	/* offsets from i alone: the verifier's states at the loop's head
	 * differ only by i, and each iteration is verified once
	 */
	for (i = 0; i < MIRROR_CHUNKS; i++) {
		off = i * MIRROR_CHUNK;
		if (off >= ret)
			return;
		n = ret - off;
		if (n > MIRROR_CHUNK)
			n = MIRROR_CHUNK;
		if (mirror_piece(prog, k, r, buf, off, n))
			break;
	}
	off = i * MIRROR_CHUNK;
	if (off >= ret)
		return;
	m = bpf_ringbuf_reserve(&mirror, MIRROR_HDR, 0);
	if (!m) {
		__sync_fetch_and_add(&mirror_lost, 1);
		r->gap = 1;
		return;
	}
	mirror_hdr(m, prog, k, r, off, 0, ret - off);
	bpf_ringbuf_submit(m, wake_flags());
	r->gap = 0;
}

/* Another bpfstderr (its main or rescue thread, which keep the process's
 * name) is a peer (readers.h): what it reads it keeps itself.
 */
static bool peer(const char *comm)
{
	const char name[] = "bpfstderr";
	int i;

	for (i = 0; i < sizeof(name); i++)
		if (comm[i] != name[i])
			return false;
	return true;
}

/* A reader not seen last on this stream: who it is, in our namespace. */
static void new_reader(struct bpf_prog *prog, const struct reader_key *k,
		       const struct reader_rec *v, __u32 tgid, void *buf, int ret)
{
	struct reader_rec r = {};
	struct bpf_pidns_info ns = {};

	if (!bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns)))
		r.pid = ns.tgid;
	if (r.pid && r.pid == self_pid) {
		self_tgid = tgid;
		return;
	}
	r.tgid = tgid;
	r.last_ns = bpf_ktime_get_ns();
	/* the counts are of every reader; the pid and name the last one's */
	r.reads = (v ? v->reads : 0) + 1;
	r.bytes = (v ? v->bytes : 0) + ret;
	bpf_get_current_comm(r.comm, sizeof(r.comm));
	r.peer = peer(r.comm);
	/* the stream's bytes go on from the last reader's */
	r.gap = v ? v->gap : 0;
	if (ret > 0 && !r.peer)
		mirror_read(prog, k, &r, buf, ret);
	bpf_map_update_elem(&readers, k, &r, BPF_ANY);
}

/* Every read of every program's stream on the host comes here: the
 * common one (the reader that read last reads again) costs a lookup.
 */
SEC("fexit/bpf_prog_stream_read")
int BPF_PROG(reader_read, struct bpf_prog *prog, int stream_id, void *buf, int len, int ret)
{
	__u32 tgid = bpf_get_current_pid_tgid() >> 32;
	struct reader_key k = {};
	struct reader_rec *v;

	if (ret < 0 || tgid == self_tgid)
		return 0;
	k.prog_id = prog->aux->id;
	k.stream = stream_id;
	v = bpf_map_lookup_elem(&readers, &k);
	if (!v || v->tgid != tgid) {
		new_reader(prog, &k, v, tgid, buf, ret);
		return 0;
	}
	v->last_ns = bpf_ktime_get_ns();
	v->reads++;
	v->bytes += ret;
	if (ret > 0 && !v->peer)
		mirror_read(prog, &k, v, buf, ret);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
