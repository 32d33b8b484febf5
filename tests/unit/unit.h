/* SPDX-License-Identifier: GPL-2.0 */
/* A minimal unit-test harness: one line per check that fails, and a
 * closing "N passed, N failed" for tests/run.sh to add up.
 */
#ifndef BPFSTDERR_UNIT_H
#define BPFSTDERR_UNIT_H

#include <stdio.h>
#include <string.h>

static int unit_passed, unit_failed, unit_skipped;

#define CHECK(cond, ...) do {						\
	if (cond) {							\
		unit_passed++;						\
	} else {							\
		unit_failed++;						\
		fprintf(stderr, "FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond); \
		fprintf(stderr, __VA_ARGS__);				\
		fputc('\n', stderr);					\
	}								\
} while (0)

/* A check this host cannot run, with the reason: tests/run.sh lists it. */
#define SKIP(what, ...) do {						\
	unit_skipped++;							\
	printf("skip - %s: ", (what));					\
	printf(__VA_ARGS__);						\
	putchar('\n');							\
} while (0)

#define CHECK_STR(got, want) \
	CHECK(!strcmp((got), (want)), "got \"%s\", want \"%s\"", (got), (want))

static inline int unit_done(void)
{
	if (unit_skipped)
		printf("%d passed, %d failed, %d skipped\n", unit_passed, unit_failed, unit_skipped);
	else
		printf("%d passed, %d failed\n", unit_passed, unit_failed);
	return unit_failed ? 1 : 0;
}

#endif
