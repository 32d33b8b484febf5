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
 *   BPFSTDERR_SHIM_WALKS=FILE  append "PID" per walk of the program list
 *   DIR/<id>.<stream>.foreign  N: another process's read of N bytes comes
 *                              first, right before the next read served
 *                              (its bytes go to DIR/<id>.<stream>.taken):
 *                              a reader bpfstderr cannot see (no tracing)
 *                              that wins the race between bpfstderr's
 *                              look at the accounting and its read
 *
 * Reads are destructive like the kernel's, across processes: what was
 * served is recorded in DIR/<id>.<stream>.off under an flock.
 *
 * The kernel accounts a stream's unread bytes in its capacity, and the
 * tool reads only streams with bytes accounted. So the shim accounts its
 * fixtures too: in what the program list iterator (bpf/progs.bpf.c
 * list_progs) returns, a program's capacity is the kernel's plus the
 * bytes of its fixtures not yet served. That is all it changes: the
 * accounting check (bpf/watch.bpf.c) still reads the kernel's memory, so
 * bytes added to a fixture while a reader runs are accounted at the next
 * walk of the list, which a program loaded or unloaded brings about on
 * any kernel (tests/lib.sh fixture_added).
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "real_syscall.h"
#include "../../bpf/progs.h"

#define STREAM_READ_CMD 37

struct read_attr {
	__u64 buf;
	__u32 len;
	__u32 stream_id;
	__u32 prog_fd;
};

/* BPF_OBJ_GET_INFO_BY_FD on any object fd (program, link) into info. */
static int obj_info(int fd, void *info, __u32 len)
{
	union bpf_attr attr;

	memset(info, 0, len);
	memset(&attr, 0, sizeof(attr));
	attr.info.bpf_fd = fd;
	attr.info.info_len = len;
	attr.info.info = (__u64)(unsigned long)info;
	return real(__NR_bpf, BPF_OBJ_GET_INFO_BY_FD, (long)&attr, sizeof(attr), 0, 0, 0) ? -1 : 0;
}

static int prog_id(int fd)
{
	struct bpf_prog_info info;

	return obj_info(fd, &info, sizeof(info)) ? -1 : (int)info.id;
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

/* Under the fixture's lock: a foreign read asked for (see the top) takes
 * its bytes first. Returns the offset after it.
 */
static long foreign_read(int fd, const char *path, long off)
{
	char fpath[4200], tpath[4200], buf[65536];
	long want = 0;
	ssize_t n;
	FILE *f;

	snprintf(fpath, sizeof(fpath), "%s.foreign", path);
	f = fopen(fpath, "r");
	if (!f)
		return off;
	if (fscanf(f, "%ld", &want) != 1)
		want = 0;
	fclose(f);
	unlink(fpath);
	if (want > (long)sizeof(buf))
		want = sizeof(buf);
	n = want > 0 ? pread(fd, buf, want, off) : 0;
	if (n <= 0)
		return off;
	snprintf(tpath, sizeof(tpath), "%s.taken", path);
	f = fopen(tpath, "a");
	if (f) {
		fwrite(buf, 1, n, f);
		fclose(f);
	}
	return off + n;
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
	off = foreign_read(fd, path, read_off(offpath));
	write_off(offpath, off);
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

/* ---- the program list iterator: fixtures' unread bytes accounted ---- */

struct list_iter {
	int fd;			/* -1: free slot */
	char *data;		/* the whole iterator's output, patched */
	size_t len, off;
	int read;		/* data holds the iterator's output */
};

#define LIST_ITERS	16
static struct list_iter iters[LIST_ITERS] = {
	[0 ... LIST_ITERS - 1] = { .fd = -1 },
};

typedef ssize_t (*read_fn)(int, void *, size_t);
typedef int (*close_fn)(int);

static ssize_t real_read(int fd, void *buf, size_t len)
{
	static read_fn fn;

	if (!fn)
		fn = (read_fn)dlsym(RTLD_NEXT, "read");
	return fn(fd, buf, len);
}

static int real_close(int fd)
{
	static close_fn fn;

	if (!fn)
		fn = (close_fn)dlsym(RTLD_NEXT, "close");
	return fn(fd);
}

static int prog_name(__u32 id, char *name, size_t len)
{
	struct bpf_prog_info info;
	union bpf_attr attr;
	int fd, err;

	memset(&attr, 0, sizeof(attr));
	attr.prog_id = id;
	fd = real(__NR_bpf, BPF_PROG_GET_FD_BY_ID, (long)&attr, sizeof(attr), 0, 0, 0);
	if (fd < 0)
		return -1;
	err = obj_info(fd, &info, sizeof(info));
	real_close(fd);
	if (err)
		return -1;
	snprintf(name, len, "%s", info.name);
	return 0;
}

/* Is the link's program the tool's program list iterator? */
static int is_list_progs(int link_fd)
{
	struct bpf_link_info info;
	char name[BPF_OBJ_NAME_LEN];

	if (obj_info(link_fd, &info, sizeof(info)))
		return 0;
	return !prog_name(info.prog_id, name, sizeof(name)) && !strcmp(name, "list_progs");
}

static struct list_iter *iter_of(int fd)
{
	int i;

	for (i = 0; fd >= 0 && i < LIST_ITERS; i++)
		if (iters[i].fd == fd)
			return &iters[i];
	return NULL;
}

static void iter_forget(struct list_iter *it)
{
	free(it->data);
	memset(it, 0, sizeof(*it));
	it->fd = -1;
}

static void iter_track(int fd)
{
	struct list_iter *it = iter_of(fd);
	int i;

	for (i = 0; !it && i < LIST_ITERS; i++)
		if (iters[i].fd < 0)
			it = &iters[i];
	if (!it)
		return;	/* more open at once than anyone does: served as is */
	iter_forget(it);
	it->fd = fd;
}

/* Bytes of the fixture DIR/<id>.<stream> not served yet. */
static long unread(const char *dir, __u32 id, unsigned int stream)
{
	char path[4096], offpath[4200];
	struct stat st;
	long left;

	snprintf(path, sizeof(path), "%s/%u.%u", dir, id, stream);
	if (stat(path, &st))
		return 0;
	snprintf(offpath, sizeof(offpath), "%s.off", path);
	left = st.st_size - read_off(offpath);
	return left > 0 ? left : 0;
}

/* A line per walk of the program list to BPFSTDERR_SHIM_WALKS: a test
 * knows that a reader looked at the accounting since some moment.
 */
static void log_walk(void)
{
	const char *path = getenv("BPFSTDERR_SHIM_WALKS");
	FILE *f = path ? fopen(path, "a") : NULL;

	if (!f)
		return;
	fprintf(f, "%d\n", getpid());
	fclose(f);
}

static void account_fixtures(struct list_iter *it)
{
	const char *dir = getenv("BPFSTDERR_SHIM_DIR");
	struct prog_rec *r;
	size_t off;
	int s;

	if (!dir)
		return;
	log_walk();
	for (off = 0; off + sizeof(*r) <= it->len; off += sizeof(*r)) {
		r = (struct prog_rec *)(it->data + off);
		if (!(r->flags & PROG_REC_HAS_STREAMS))
			continue;
		for (s = 0; s < 2; s++)
			r->capacity[s] += unread(dir, r->ident.id, s + 1);
	}
}

/* The iterator's whole output at the first read: records are patched
 * whole, whatever sizes the caller reads in.
 */
static int iter_fill(struct list_iter *it)
{
	size_t cap = 0;
	ssize_t n;
	char *tmp;

	for (;;) {
		if (cap - it->len < 16384) {
			tmp = realloc(it->data, cap + 65536);
			if (!tmp)
				return -1;
			it->data = tmp;
			cap += 65536;
		}
		n = real_read(it->fd, it->data + it->len, cap - it->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -1;
		if (!n)
			break;
		it->len += n;
	}
	it->read = 1;
	account_fixtures(it);
	return 0;
}

ssize_t read(int fd, void *buf, size_t len)
{
	struct list_iter *it = iter_of(fd);
	size_t n;

	if (!it)
		return real_read(fd, buf, len);
	if (!it->read && iter_fill(it))
		return -1;
	n = it->len - it->off < len ? it->len - it->off : len;
	memcpy(buf, it->data + it->off, n);
	it->off += n;
	return n;
}

int close(int fd)
{
	struct list_iter *it = iter_of(fd);

	if (it)
		iter_forget(it);
	return real_close(fd);
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
	ret = real(nr, a[0], a[1], a[2], a[3], a[4], a[5]);
	if (nr == __NR_bpf && a[0] == BPF_ITER_CREATE && ret >= 0 && getenv("BPFSTDERR_SHIM_DIR") &&
	    is_list_progs(((union bpf_attr *)a[1])->iter_create.link_fd))
		iter_track(ret);
	return ret;
}
