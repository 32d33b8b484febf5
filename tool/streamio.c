// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/bpf.h>
#include <bpf/libbpf_version.h>

#include "streamio.h"

/* The attr as 6.17 defines it; Debian's uapi headers predate it. The rest
 * of the union must be zero or the kernel answers EINVAL.
 */
struct prog_stream_read_attr {
	__aligned_u64 stream_buf;
	__u32 stream_buf_len;
	__u32 stream_id;
	__u32 prog_fd;
};

#if LIBBPF_MAJOR_VERSION > 1 || (LIBBPF_MAJOR_VERSION == 1 && LIBBPF_MINOR_VERSION >= 6)
/* libbpf 1.6 wraps the command itself. */
ssize_t stream_read_fd(int prog_fd, enum stream s, void *buf, size_t len)
{
	int ret = bpf_prog_stream_read(prog_fd, s, buf, len > 0xffffffffu ? 0xffffffffu : len,
				       NULL);

	return ret < 0 ? (errno ? -errno : ret) : ret;
}
#else
ssize_t stream_read_fd(int prog_fd, enum stream s, void *buf, size_t len)
{
	union bpf_attr attr;
	struct prog_stream_read_attr *a = (void *)&attr;
	long ret;

	memset(&attr, 0, sizeof(attr));
	a->stream_buf = (__u64)(unsigned long)buf;
	a->stream_buf_len = len > 0xffffffffu ? 0xffffffffu : len;
	a->stream_id = s;
	a->prog_fd = prog_fd;
	ret = syscall(__NR_bpf, BPF_PROG_STREAM_READ_BY_FD, &attr, sizeof(attr));
	return ret < 0 ? -errno : ret;
}
#endif
