// SPDX-License-Identifier: GPL-2.0
/* TEST ONLY. An LD_PRELOAD library that makes the kernel's BPF refusals
 * happen on a host that does not refuse: the bpf() calls chosen below
 * fail with EPERM, as an LSM or a missing capability would make them.
 * Every other syscall goes to the kernel untouched.
 *
 *   BPFSTDERR_REFUSE_MAP_TYPE=N   BPF_MAP_CREATE of map type N (33: arena)
 *   BPFSTDERR_REFUSE_PROG=PREFIX  BPF_PROG_LOAD of programs whose (kernel,
 *                                 15-character) name starts with PREFIX
 *
 * and, with BPFSTDERR_REFUSE_OFD_LOCK=1, every fcntl(F_OFD_SETLK) fails
 * with ENOLCK, as on NFS without its lock daemon (SQLite's own F_SETLK
 * locks go through).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>

#include "real_syscall.h"

static int refused(int cmd, const union bpf_attr *attr)
{
	const char *type = getenv("BPFSTDERR_REFUSE_MAP_TYPE");
	const char *prog = getenv("BPFSTDERR_REFUSE_PROG");

	if (cmd == BPF_MAP_CREATE && type && attr->map_type == strtoul(type, NULL, 10))
		return 1;
	if (cmd == BPF_PROG_LOAD && prog &&
	    !strncmp(attr->prog_name, prog, strnlen(prog, sizeof(attr->prog_name) - 1)))
		return 1;
	return 0;
}

long syscall(long nr, ...)
{
	long a, b, c, d, e, f;
	va_list ap;

	va_start(ap, nr);
	a = va_arg(ap, long);
	b = va_arg(ap, long);
	c = va_arg(ap, long);
	d = va_arg(ap, long);
	e = va_arg(ap, long);
	f = va_arg(ap, long);
	va_end(ap);
	if (nr == __NR_bpf && b && refused(a, (const union bpf_attr *)b)) {
		errno = EPERM;
		return -1;
	}
	return real(nr, a, b, c, d, e, f);
}

typedef int (*fcntl_fn)(int, int, ...);

int fcntl(int fd, int cmd, ...)
{
	static fcntl_fn fn;
	va_list ap;
	void *arg;

	va_start(ap, cmd);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (cmd == F_OFD_SETLK && getenv("BPFSTDERR_REFUSE_OFD_LOCK")) {
		errno = ENOLCK;
		return -1;
	}
	if (!fn)
		fn = (fcntl_fn)dlsym(RTLD_NEXT, "fcntl");
	return fn(fd, cmd, arg);
}
