// SPDX-License-Identifier: GPL-2.0
/* --metrics-address: HOST:PORT or [IPV6]:PORT, port 1 to 65535. What
 * each address resolves to, and that it can be listened on, is checked
 * end to end (tests/e2e/fleet_metrics.sh).
 */
#include <errno.h>

#include "metrics.h"
#include "unit.h"

static void expect_addr(const char *s, const char *host, const char *port)
{
	struct metrics_addr a = {};
	int err = metrics_addr_parse(s, &a);

	CHECK(!err, "'%s' parses: %d", s, err);
	CHECK_STR(a.host, host);
	CHECK_STR(a.port, port);
}

static void expect_bad(const char *s)
{
	struct metrics_addr a = {};

	CHECK(metrics_addr_parse(s, &a) == -EINVAL, "'%s' is refused", s);
}

int main(void)
{
	expect_addr("127.0.0.1:9464", "127.0.0.1", "9464");
	expect_addr("0.0.0.0:1", "0.0.0.0", "1");
	expect_addr("localhost:65535", "localhost", "65535");
	expect_addr("[::1]:9464", "::1", "9464");
	expect_addr("[::]:80", "::", "80");
	expect_addr("[fe80::1%eth0]:9100", "fe80::1%eth0", "9100");
	expect_addr("host:09464", "host", "9464");
	expect_bad("localhost");
	expect_bad("127.0.0.1:");
	expect_bad(":9464");
	expect_bad("[]:9464");
	expect_bad("127.0.0.1:0");
	expect_bad("127.0.0.1:65536");
	expect_bad("127.0.0.1:99999999999999999999");
	expect_bad("127.0.0.1:-1");
	expect_bad("127.0.0.1:+80");
	expect_bad("127.0.0.1: 80");
	expect_bad("127.0.0.1:80x");
	expect_bad("::1:9464");
	expect_bad("[::1]9464");
	expect_bad("[::1:9464");
	expect_bad("");
	return unit_done();
}
