/* SPDX-License-Identifier: GPL-2.0 */
/* The streams RFC's consumer kfuncs (seeds 006, 010; on 7.3.4 with
 * kernel-patches/rfc-drain/), as rfc_drain.bpf.c and rfc_drain_many.bpf.c
 * call them: declared weak, so that the objects build everywhere and
 * load only where the kernel's BTF has them. Include after bpf_helpers.h.
 */
#ifndef BPFSTDERR_RFC_KFUNCS_H
#define BPFSTDERR_RFC_KFUNCS_H

/* Opaque, but structs: libbpf matches a kfunc's prototype by kind, and a
 * forward declaration is not a struct to it.
 */
struct bpf_stream {
};
struct bpf_stream_elem_batch {
};

struct bpf_mem_slice {
	void *ptr;
	__u64 len;
};

struct bpf_stream_elem___rfc {
	struct bpf_mem_slice mem_slice;
} __attribute__((preserve_access_index));

extern struct bpf_stream *bpf_prog_stream_get(int stream_id, __u32 prog_id) __weak __ksym;
extern void bpf_prog_stream_put(struct bpf_stream *stream) __weak __ksym;
extern struct bpf_stream_elem_batch *bpf_stream_next_elem_batch(struct bpf_stream *stream) __weak __ksym;
extern struct bpf_stream_elem___rfc *bpf_stream_next_elem(struct bpf_stream_elem_batch *batch) __weak __ksym;
extern void bpf_stream_free_elem(struct bpf_stream_elem___rfc *elem) __weak __ksym;
extern void bpf_stream_free_elem_batch(struct bpf_stream_elem_batch *batch) __weak __ksym;
extern int bpf_dynptr_from_mem_slice(struct bpf_mem_slice *slice, __u64 flags,
				     struct bpf_dynptr *dptr__uninit) __weak __ksym;
extern int bpf_dynptr_copy(const struct bpf_dynptr *dst, __u64 dst_off,
			   const struct bpf_dynptr *src, __u64 src_off, __u64 size) __weak __ksym;

#endif
