// SPDX-License-Identifier: GPL-2.0
/* The journal options' arguments: ages, sizes and times, against
 * arithmetic and against date(1)'s reading of the same local time; and
 * the one interval parser every command's -d goes through.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "journal_cli.h"
#include "main.h"
#include "unit.h"

static void test_durations(void)
{
	static const struct { const char *in; long long want; } ok[] = {
		{ "45", 45 }, { "45s", 45 }, { "90m", 5400 }, { "1.5h", 5400 }, { "7d", 604800 },
		{ "2w", 1209600 }, { "0", 0 },
	};
	static const char *const bad[] = {
		"", "x", "-1", "5q", "1hh", "1 h", "-0", "nan", "NaN", "inf", "-inf", "infinity",
		"0x10", " 1", "+1", "nand", "infs", "1e999",
	};
	static const char *const range[] = { "0.5s", "0.001m", "99999999999999d", "100001d" };
	long long v;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(!parse_duration(ok[i].in, &v) && v == ok[i].want, "'%s' -> %lld", ok[i].in, v);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_duration(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++)
		CHECK(parse_duration(range[i], &v) == -ERANGE, "'%s' not out of range", range[i]);
	CHECK(!parse_duration("100000d", &v) && v == 8640000000LL, "the longest age");
}

static void test_sizes(void)
{
	long long v;

	CHECK(!parse_size("1M", &v) && v == 1048576, "1M -> %lld", v);
	CHECK(!parse_size("64K", &v) && v == 65536, "64K -> %lld", v);
	CHECK(!parse_size("2G", &v) && v == 2147483648LL, "2G -> %lld", v);
	CHECK(!parse_size("4096", &v) && v == 4096, "4096 -> %lld", v);
	CHECK(parse_size("1m", &v) == -EINVAL, "1m (lower case) accepted");
	CHECK(parse_size("99999999T", &v) == -ERANGE, "overflow accepted");
	CHECK(parse_size("nan", &v) == -EINVAL, "nan accepted");
	CHECK(parse_size("infG", &v) == -EINVAL, "infG accepted");
	CHECK(parse_size("1e999", &v) == -EINVAL, "1e999 accepted");
	CHECK(parse_size("0.5B", &v) == -ERANGE, "0.5B (0: no limit) accepted");
	CHECK(!parse_size("0.5K", &v) && v == 512, "0.5K -> %lld", v);
}

/* One parser for every interval: follow, record and top -d. */
static void test_intervals(void)
{
	static const struct { const char *in; double want; } ok[] = {
		{ "0.01", 0.01 }, { "1", 1 }, { ".5", 0.5 }, { "3600", 3600 }, { "2.5", 2.5 },
	};
	static const char *const bad[] = {
		"", "nan", "NaN", "-nan", "inf", "-inf", "infinity", "1s", "0x1", " 1", "+1", "-1",
		"1,5",
	};
	static const char *const range[] = { "0", "0.009", "0.001", "3600.5", "1e999", "1e-999" };
	double v;
	size_t i;

	for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++)
		CHECK(!parse_interval(ok[i].in, &v) && v == ok[i].want, "'%s' -> %g", ok[i].in, v);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(parse_interval(bad[i], &v) == -EINVAL, "'%s' accepted", bad[i]);
	for (i = 0; i < sizeof(range) / sizeof(range[0]); i++)
		CHECK(parse_interval(range[i], &v) == -ERANGE, "'%s' not out of range", range[i]);
}

/* The oracle for local dates is date(1). */
static long long date_epoch(const char *when)
{
	char cmd[128];
	long long v = -1;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "date -d '%s' +%%s", when);
	p = popen(cmd, "r");
	if (!p)
		return -1;
	if (fscanf(p, "%lld", &v) != 1)
		v = -1;
	pclose(p);
	return v;
}

static void test_times(void)
{
	static const char *const dates[] = {
		"2026-12-03 05:00:00", "2026-12-03 05:00", "2026-07-01 23:59:59", "2026-12-03",
	};
	struct timespec now;
	long long v;
	size_t i;

	CHECK(!parse_time_arg("@1764738000", &v) && v == 1764738000LL * 1000000000,
	      "@epoch -> %lld", v);
	for (i = 0; i < sizeof(dates) / sizeof(dates[0]); i++)
		CHECK(!parse_time_arg(dates[i], &v) && v / 1000000000 == date_epoch(dates[i]),
		      "'%s' -> %lld, date(1) says %lld", dates[i], v / 1000000000, date_epoch(dates[i]));
	CHECK(!parse_time_arg("2026-12-03T05:00:00", &v) &&
	      v / 1000000000 == date_epoch("2026-12-03 05:00:00"), "ISO T form");
	clock_gettime(CLOCK_REALTIME, &now);
	CHECK(!parse_time_arg("2h", &v) && llabs(v / 1000000000 - (now.tv_sec - 7200)) <= 1,
	      "2h ago -> %lld", v / 1000000000);
	CHECK(parse_time_arg("yesterday", &v) == -EINVAL, "'yesterday' accepted");
	CHECK(parse_time_arg("@", &v) == -EINVAL, "'@' accepted");
	CHECK(parse_time_arg("2026-13-03", &v) == -EINVAL, "month 13 accepted");
	CHECK(parse_time_arg("nan", &v) == -EINVAL, "'nan' accepted");
	CHECK(parse_time_arg("@nan", &v) == -EINVAL, "'@nan' accepted");
	CHECK(parse_time_arg("@-1", &v) == -EINVAL, "'@-1' accepted");
	CHECK(parse_time_arg("99999999999999d", &v) == -ERANGE, "99999999999999d ago accepted");
	CHECK(parse_time_arg("100000d", &v) == -ERANGE, "before 1970 accepted");
	CHECK(parse_time_arg("@99999999999", &v) == -ERANGE, "after 2262 accepted");
	CHECK(parse_time_arg("@99999999999999999999", &v) == -ERANGE, "@ overflow accepted");
	CHECK(parse_time_arg("2300-01-01", &v) == -ERANGE, "2300 accepted");
	CHECK(parse_time_arg("1969-01-01", &v) == -ERANGE, "1969 accepted");
}

int main(void)
{
	test_durations();
	test_sizes();
	test_intervals();
	test_times();
	return unit_done();
}
