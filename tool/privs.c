// SPDX-License-Identifier: GPL-2.0
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/capability.h>

#include "privs.h"

bool have_cap(int cap)
{
	struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct data[2] = {};

	if (syscall(SYS_capget, &hdr, data))
		return false;
	return data[cap / 32].effective & (1U << (cap % 32));
}

/* Iterators and BPF_PROG_GET_FD_BY_ID both want CAP_SYS_ADMIN; CAP_BPF
 * alone is not enough for either.
 */
const char *missing_cap(void)
{
	if (!have_cap(CAP_SYS_ADMIN_NR))
		return "CAP_SYS_ADMIN";
	return NULL;
}
