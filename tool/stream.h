/* SPDX-License-Identifier: GPL-2.0 */
/* Reading a program's stdout/stderr. Reads are destructive. */
#ifndef BPFSTDERR_STREAM_H
#define BPFSTDERR_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#ifndef BPF_PROG_STREAM_READ_BY_FD
#define BPF_PROG_STREAM_READ_BY_FD 37
#endif

/* bpf(BPF_PROG_STREAM_READ_BY_FD): bytes copied, 0 when empty, -errno. */
ssize_t stream_read_fd(int prog_fd, int stream_id, void *buf, size_t len);

#endif

enum stream_backend {
	BACKEND_NONE,
	BACKEND_UPSTREAM,	/* BPF_PROG_STREAM_READ_BY_FD, 6.17+ */
	BACKEND_RFC,		/* drain program with the RFC kfuncs (seed series) */
};

/* RFC drain kfuncs all present in the kernel's BTF. */
bool stream_rfc_kfuncs_present(void);
enum stream_backend stream_backend_detect(void);
const char *stream_backend_name(enum stream_backend b);
