// SPDX-License-Identifier: GPL-2.0
/* --metrics-address: HOST:PORT or [IPV6]:PORT, port 1 to 65535. What
 * each address resolves to, and that it can be listened on, is checked
 * end to end (tests/e2e/fleet_metrics.sh). Content negotiation: which
 * Accept headers get OpenMetrics 1.0.0 rather than the text format 0.0.4
 * (RFC 9110 12.5.1: media ranges, case-insensitive, the most specific
 * range's q).
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

static void expect_om(const char *accept, bool want)
{
	CHECK(metrics_wants_openmetrics(accept) == want, "Accept '%s': %s", accept,
	      want ? "OpenMetrics" : "the text format");
}

static void test_accept(void)
{
	/* what Prometheus 2.x and 3.x send */
	expect_om("application/openmetrics-text;version=1.0.0,application/openmetrics-text;"
		  "version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1", true);
	expect_om("application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,"
		  "application/openmetrics-text;version=0.0.1;q=0.5,text/plain;version=1.0.0;"
		  "escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2", true);
	expect_om("application/openmetrics-text; version=1.0.0", true);
	expect_om("application/openmetrics-text", true);
	expect_om("Application/OpenMetrics-Text; Version=\"1.0.0\"", true);
	expect_om("application/openmetrics-text;q=0, text/plain", false);
	expect_om("application/openmetrics-text;q=0.5, text/plain;q=0.9", false);
	expect_om("text/plain;q=0.5, application/openmetrics-text;q=0.9", true);
	expect_om("application/openmetrics-text; version=0.0.1", false);
	expect_om("application/openmetrics-text; version=2.0.0", false);
	expect_om("application/openmetrics-text; version=1.0.0; q=2", false);
	expect_om("application/openmetrics-text; q=abc", false);
	expect_om("application/openmetrics-text-foo", false);
	expect_om("application/*", true);
	expect_om("application/*, text/*", false);
	expect_om("application/openmetrics-text, */*", true);
	expect_om("*/*", false);
	expect_om("text/plain", false);
	expect_om("", false);
	expect_om(",;,/;=", false);
	expect_om(NULL, false);
}

int main(void)
{
	test_accept();
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
