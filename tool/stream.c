// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <linux/types.h>

#include "kbtf.h"
#include "stream.h"

/* The attr as 6.17 defines it; Debian's uapi headers predate it. The rest
 * of the union must be zero or the kernel answers EINVAL.
 */
struct prog_stream_read_attr {
	__aligned_u64 stream_buf;
	__u32 stream_buf_len;
	__u32 stream_id;
	__u32 prog_fd;
};

ssize_t stream_read_fd(int prog_fd, int stream_id, void *buf, size_t len)
{
	union bpf_attr attr;
	struct prog_stream_read_attr *a = (void *)&attr;
	long ret;

	memset(&attr, 0, sizeof(attr));
	a->stream_buf = (__u64)(unsigned long)buf;
	a->stream_buf_len = len > 0xffffffffu ? 0xffffffffu : len;
	a->stream_id = stream_id;
	a->prog_fd = prog_fd;
	ret = syscall(__NR_bpf, BPF_PROG_STREAM_READ_BY_FD, &attr, sizeof(attr));
	return ret < 0 ? -errno : ret;
}

bool stream_rfc_kfuncs_present(void)
{
	static const char *const kfuncs[] = {
		"bpf_prog_stream_get", "bpf_prog_stream_put",
		"bpf_stream_next_elem_batch", "bpf_stream_next_elem",
		"bpf_stream_free_elem", "bpf_stream_free_elem_batch",
		"bpf_dynptr_from_mem_slice",
	};
	size_t i;

	for (i = 0; i < sizeof(kfuncs) / sizeof(kfuncs[0]); i++)
		if (!kbtf_has_func(kfuncs[i]))
			return false;
	return true;
}

enum stream_backend stream_backend_detect(void)
{
	if (kbtf_has_enum_value("bpf_cmd", "BPF_PROG_STREAM_READ_BY_FD"))
		return BACKEND_UPSTREAM;
	if (stream_rfc_kfuncs_present())
		return BACKEND_RFC;
	return BACKEND_NONE;
}

const char *stream_backend_name(enum stream_backend b)
{
	switch (b) {
	case BACKEND_UPSTREAM:
		return "upstream";
	case BACKEND_RFC:
		return "rfc";
	default:
		return "none";
	}
}
