/* SPDX-License-Identifier: GPL-2.0 */
/* prog_id_read(): a program's identity (progs.h, struct prog_id_rec) from
 * the kernel's struct bpf_prog, for the enumeration (progs.bpf.c) and the
 * mirror of other readers (readers.bpf.c). Include after vmlinux.h and
 * bpf_helpers.h.
 */
#ifndef BPFSTDERR_PROG_ID_BPF_H
#define BPFSTDERR_PROG_ID_BPF_H

#include "progs.h"

/* Plain loads: the fields always exist, and the verifier makes loads
 * through a program pointer (an iterator's, a tracing program's argument)
 * fault-safe at a fraction of a helper call each.
 */
static __always_inline void prog_id_read(struct prog_id_rec *r, struct bpf_prog *prog)
{
	struct bpf_prog_aux *aux = prog->aux;
	const __u64 *name = (const __u64 *)aux->name;

	r->id = aux->id;
	r->type = prog->type;
	r->load_time = aux->load_time;
	*(__u64 *)r->tag = *(__u64 *)prog->tag;
	/* the name's 16 bytes as two loads; the kernel's ends in a NUL */
	((__u64 *)r->name)[0] = name[0];
	((__u64 *)r->name)[1] = name[1];
	/* the ksym holds the full name; only worth copying when name was
	 * cut: PROG_NAME_LEN - 1 bytes before that NUL
	 */
	if (r->name[PROG_NAME_LEN - 2])
		bpf_probe_read_kernel_str(r->ksym, sizeof(r->ksym), &aux->ksym.name);
	else
		r->ksym[0] = '\0';
}

#endif
