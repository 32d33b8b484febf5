/* SPDX-License-Identifier: GPL-2.0 */
/* TEST ONLY. What the preload shims share: the libc syscall() they stand
 * in front of, for every call they do not answer themselves.
 */
#ifndef BPFSTDERR_REAL_SYSCALL_H
#define BPFSTDERR_REAL_SYSCALL_H

#include <dlfcn.h>

typedef long (*syscall_fn)(long, ...);

static long real(long nr, long a, long b, long c, long d, long e, long f)
{
	static syscall_fn fn;

	if (!fn)
		fn = (syscall_fn)dlsym(RTLD_NEXT, "syscall");
	return fn(nr, a, b, c, d, e, f);
}

#endif
