/* SPDX-License-Identifier: GPL-2.0 */
/* Shared by bpf/rfc_drain_many.bpf.c and its reader (bench/rfc_many.c). */
#ifndef BPFSTDERR_RFC_MANY_H
#define BPFSTDERR_RFC_MANY_H

#define MANY_MAX 1024	/* programs per run */

/* Before each message in the ring buffer. */
struct many_hdr {
	__u32 prog_id;
	__u32 stream;	/* 1 stdout, 2 stderr */
};

#endif
