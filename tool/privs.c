// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <string.h>
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

bool privs__is_refusal(int err)
{
	return err == -EPERM || err == -EACCES;
}

/* The first line of a securityfs file, or "" when it is not there. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (!f)
		return;
	if (fgets(buf, len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* Lockdown shows as "none [integrity] confidentiality": the bracketed
 * word is the mode in force.
 */
static void lockdown_mode(char *buf, size_t len)
{
	char line[128], *open, *close;

	read_line("/sys/kernel/security/lockdown", line, sizeof(line));
	buf[0] = '\0';
	open = strchr(line, '[');
	close = open ? strchr(open, ']') : NULL;
	if (open && close && strncmp(open + 1, "none", close - open - 1))
		snprintf(buf, len, "%.*s", (int)(close - open - 1), open + 1);
}

static size_t append(char *buf, size_t len, size_t off, const char *fmt, const char *arg)
{
	int n;

	if (off >= len)
		return off;
	n = snprintf(buf + off, len - off, fmt, arg);
	return n < 0 ? off : off + n;
}

/* The candidates when every BPF capability is held: each one named only
 * when this host shows it.
 */
static void explain_held(char *buf, size_t len)
{
	char lock[64], lsm[128];
	size_t off;

	off = append(buf, len, 0, "%s", "refused although CAP_SYS_ADMIN is held; ");
	off = append(buf, len, off, "%s", "candidates:");
	if (!have_cap(CAP_SYS_RESOURCE_NR))
		off = append(buf, len, off, "%s", " CAP_SYS_RESOURCE is not held;");
	lockdown_mode(lock, sizeof(lock));
	if (lock[0])
		off = append(buf, len, off, " kernel lockdown is '%s';", lock);
	read_line("/sys/kernel/security/lsm", lsm, sizeof(lsm));
	if (lsm[0])
		off = append(buf, len, off, " an LSM (%s) may deny it;", lsm);
	else
		off = append(buf, len, off, "%s", " an LSM or a sysctl may deny it;");
	append(buf, len, off, "%s", " the kernel log may say which");
}

bool privs__explain(int err, char *buf, size_t len)
{
	buf[0] = '\0';
	if (!privs__is_refusal(err))
		return false;
	/* bpf_capable() and perfmon_capable() accept CAP_SYS_ADMIN too */
	if (!have_cap(CAP_SYS_ADMIN_NR)) {
		snprintf(buf, len, "needs CAP_SYS_ADMIN");
		return true;
	}
	explain_held(buf, len);
	return false;
}
