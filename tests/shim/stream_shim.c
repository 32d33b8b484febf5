// SPDX-License-Identifier: GPL-2.0
/* TEST ONLY. An LD_PRELOAD library that answers BPF_PROG_STREAM_READ_BY_FD
 * for chosen real programs from fixture files, so that tests can inject
 * stream content this kernel cannot produce (its stream writes fail).
 * Every other syscall, and reads of programs without a fixture, go to the
 * kernel untouched.
 *
 *   BPFSTDERR_SHIM_DIR=DIR     fixtures DIR/<prog id>.<stream id>
 *   BPFSTDERR_SHIM_CHUNK=N     serve at most N bytes per read
 *   BPFSTDERR_SHIM_LOG=FILE    append "PID ID STREAM OFFSET LEN NS" per read
 *                              served, so a test knows who read what
 *
 * Reads are destructive like the kernel's, across processes: what was
 * served is recorded in DIR/<id>.<stream>.off under an flock.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "real_syscall.h"

#define STREAM_READ_CMD 37

struct read_attr {
	__u64 buf;
	__u32 len;
	__u32 stream_id;
	__u32 prog_fd;
};

static int prog_id(int fd)
{
	struct bpf_prog_info info;
	union bpf_attr attr;

	memset(&info, 0, sizeof(info));
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = sizeof(info);
	attr.info.info = (__u64)(unsigned long)&info;
	if (real(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, (long)&attr, sizeof(attr), 0, 0, 0))
		return -1;
	return info.id;
}

static long read_off(const char *path)
{
	FILE *f = fopen(path, "r");
	long off = 0;

	if (f) {
		if (fscanf(f, "%ld", &off) != 1)
			off = 0;
		fclose(f);
	}
	return off;
}

/* One pwrite, no truncation (offsets only grow): a process killed in here
 * leaves the old offset or the new one, never an empty file.
 */
static void write_off(const char *path, long off)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
	char buf[32];
	int len;

	if (fd < 0)
		return;
	len = snprintf(buf, sizeof(buf), "%ld\n", off);
	if (pwrite(fd, buf, len, 0) != len)
		perror("stream_shim: offset");
	close(fd);
}

/* Under the fixture's lock: the log is in read order. One write per line. */
static void log_read(int id, unsigned int stream, long off, ssize_t n)
{
	const char *path = getenv("BPFSTDERR_SHIM_LOG");
	FILE *f = path ? fopen(path, "a") : NULL;
	struct timespec ts;

	if (!f)
		return;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	fprintf(f, "%d %d %u %ld %zd %lld\n", getpid(), id, stream, off, n,
		ts.tv_sec * 1000000000LL + ts.tv_nsec);
	fclose(f);
}

/* 1 and *ret set when the read was ours to answer. */
static int serve(struct read_attr *a, long *ret)
{
	const char *dir = getenv("BPFSTDERR_SHIM_DIR");
	const char *chunk_env = getenv("BPFSTDERR_SHIM_CHUNK");
	char path[4096], offpath[4200];
	long off, len = a->len;
	ssize_t n;
	int id, fd;

	if (!dir)
		return 0;
	id = prog_id(a->prog_fd);
	if (id < 0)
		return 0;
	snprintf(path, sizeof(path), "%s/%d.%u", dir, id, a->stream_id);
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	snprintf(offpath, sizeof(offpath), "%s.off", path);
	flock(fd, LOCK_EX);
	off = read_off(offpath);
	if (chunk_env && atol(chunk_env) > 0 && atol(chunk_env) < len)
		len = atol(chunk_env);
	n = pread(fd, (void *)(unsigned long)a->buf, len, off);
	if (n > 0) {
		/* logged first: a process killed between the two is seen
		 * twice at one offset, the first time by the killed one
		 */
		log_read(id, a->stream_id, off, n);
		write_off(offpath, off + n);
	}
	flock(fd, LOCK_UN);
	close(fd);
	*ret = n < 0 ? -1 : n;
	return 1;
}

long syscall(long nr, ...)
{
	long a[6], ret;
	va_list ap;
	int i;

	va_start(ap, nr);
	for (i = 0; i < 6; i++)
		a[i] = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_bpf && a[0] == STREAM_READ_CMD && a[1] &&
	    serve((struct read_attr *)a[1], &ret))
		return ret;
	return real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
}
