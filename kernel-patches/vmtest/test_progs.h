/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A minimal stand-in for tools/testing/selftests/bpf/test_progs.h: just
 * what prog_tests/stream_drop.c and prog_tests/stream_consume.c use, so
 * that the selftests' own source runs unchanged in the kernel lab without
 * building all of test_progs (see runner.c for why). Each assertion prints one "ok - " or
 * "not ok - " line with the values compared.
 */
#ifndef STREAM_DROP_TEST_PROGS_H
#define STREAM_DROP_TEST_PROGS_H

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

extern int env_pass, env_fail;
extern const char *env_subtest;

bool test__start_subtest(const char *name);

static inline bool test__check(bool ok, const char *name, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#include <stdarg.h>
static inline bool test__check(bool ok, const char *name, const char *fmt, ...)
{
	va_list ap;

	printf("%s - %s: %s", ok ? "ok" : "not ok", env_subtest, name);
	if (!ok) {
		printf(": ");
		va_start(ap, fmt);
		vprintf(fmt, ap);
		va_end(ap);
	}
	printf("\n");
	if (ok)
		env_pass++;
	else
		env_fail++;
	return ok;
}

#define ASSERT_CMP(a, b, op, name) ({					\
	long long ___a = (long long)(a), ___b = (long long)(b);		\
	test__check(___a op ___b, name, "%s = %lld, expected " #op " %lld",	\
		    #a, ___a, ___b);					\
})
#define ASSERT_EQ(a, b, name) ASSERT_CMP(a, b, ==, name)
#define ASSERT_GE(a, b, name) ASSERT_CMP(a, b, >=, name)
#define ASSERT_GT(a, b, name) ASSERT_CMP(a, b, >, name)
#define ASSERT_LE(a, b, name) ASSERT_CMP(a, b, <=, name)
#define ASSERT_LT(a, b, name) ASSERT_CMP(a, b, <, name)
#define ASSERT_OK(a, name) ({						\
	long long ___r = (long long)(a);				\
	test__check(!___r, name, "%s = %lld (errno %d)", #a, ___r, errno); \
})
#define ASSERT_ERR(a, name) ({						\
	long long ___r = (long long)(a);				\
	test__check(___r < 0, name, "%s = %lld, expected < 0", #a, ___r); \
})
#define ASSERT_TRUE(a, name) ({						\
	bool ___t = (a);						\
	test__check(___t, name, "%s is false", #a);			\
})
#define ASSERT_OK_PTR(p, name) ({					\
	const void *___p = (p);						\
	test__check(___p && !libbpf_get_error(___p), name,		\
		    "%s: %p (errno %d)", #p, ___p, errno);		\
})

#endif
