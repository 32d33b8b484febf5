/* SPDX-License-Identifier: GPL-2.0 */
#ifndef BPFSTDERR_PRIVS_H
#define BPFSTDERR_PRIVS_H

#include <stdbool.h>

#define CAP_SYS_ADMIN_NR	21
#define CAP_PERFMON_NR		38
#define CAP_BPF_NR		39

/* Is the capability in our effective set? */
bool have_cap(int cap);
/* NULL when we can enumerate and read programs, else the missing
 * capability's name.
 */
const char *missing_cap(void);

#endif
