// SPDX-License-Identifier: GPL-2.0
/* Error reporting shared by every command. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "main.h"

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

void p_warn(const char *fmt, ...)
{
	va_list ap;

	fflush(stdout);
	fprintf(stderr, "%s: warning: ", bin_name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

int exit_for_errno(int err, const char *what)
{
	if (err == -EPERM || err == -EACCES) {
		p_err("%s: %s (needs CAP_SYS_ADMIN)", what, strerror(-err));
		return EXIT_NOPERM;
	}
	p_err("%s: %s", what, strerror(-err));
	return EXIT_ERROR;
}
