// SPDX-License-Identifier: GPL-2.0
/* Error reporting shared by every command. */
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "main.h"
#include "privs.h"
#include "stream.h"

const char *bin_name = "bpfstderr";

void p_err(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: ", bin_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* A refusal is EXIT_NOPERM whether a capability is missing or the kernel
 * refused although it is held; the message says which.
 */
int exit_for_errno(int err, const char *what)
{
	char why[320];

	if (privs__is_refusal(err)) {
		privs__explain(err, why, sizeof(why));
		p_err("%s: %s (%s)", what, strerror(-err), why);
		return EXIT_NOPERM;
	}
	p_err("%s: %s", what, strerror(-err));
	return EXIT_ERROR;
}

int require_streams(const char *what, enum stream_backend *backend)
{
	const char *cap = missing_cap();

	if (cap) {
		p_err("%s needs %s", what, cap);
		return EXIT_NOPERM;
	}
	*backend = stream_backend_detect();
	if (*backend == BACKEND_NONE && stream_backend_forced() != BACKEND_NONE) {
		p_err("--backend %s: %s", stream_backend_name(stream_backend_forced()),
		      stream_backend_missing(stream_backend_forced()));
		return EXIT_NOSUPPORT;
	}
	if (*backend == BACKEND_NONE) {
		p_err("this kernel has no BPF streams (Linux 6.17 or later needed)");
		return EXIT_NOSUPPORT;
	}
	return EXIT_OK;
}

int parse_prog_id(const char *s, __u32 *out)
{
	unsigned long v;
	char *end;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || *end || v > 0xffffffffUL || s[0] == '-')
		return -EINVAL;
	*out = v;
	return 0;
}

int parse_interval(const char *s, double *secs)
{
	char *end;
	double v;

	/* strtod also takes "nan", "inf", hex and leading blanks: only digits */
	if (!isdigit((unsigned char)s[0]) && s[0] != '.')
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (errno == ERANGE)
		return -ERANGE;
	if (errno || end == s || *end || (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')))
		return -EINVAL;
	/* written so that NaN, should one get here, fails the test */
	if (!(v >= INTERVAL_MIN && v <= INTERVAL_MAX))
		return -ERANGE;
	*secs = v;
	return 0;
}
