/* SPDX-License-Identifier: GPL-2.0 */
/* Capabilities, and what to say when the kernel refuses a BPF call. */
#ifndef BPFSTDERR_PRIVS_H
#define BPFSTDERR_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

#define CAP_SYS_ADMIN_NR	21
#define CAP_SYS_RESOURCE_NR	24
#define CAP_PERFMON_NR		38
#define CAP_BPF_NR		39

/* Is the capability in our effective set? */
bool have_cap(int cap);
/* NULL when we can enumerate and read programs, else the missing
 * capability's name.
 */
const char *missing_cap(void);
/* Is @err (-errno) a refusal: EPERM or EACCES? */
bool privs__is_refusal(int err);
/* Why the kernel may have refused a BPF call with @err, from what this
 * process holds and what the host shows (lockdown, LSMs): "needs
 * CAP_SYS_ADMIN" when it is missing, else the candidates this host shows.
 * Empty for an error that is not a refusal. Returns true when a needed
 * capability is missing.
 */
bool privs__explain(int err, char *buf, size_t len);

#endif
