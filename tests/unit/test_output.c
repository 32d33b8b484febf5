// SPDX-License-Identifier: GPL-2.0
/* Terminal escaping and UTF-8 validation of untrusted stream bytes. The
 * expected strings follow from the rules in output.h, byte by byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <json-c/json.h>

#include "output.h"
#include "unit.h"

static void expect_escape(const char *in, size_t len, const char *want)
{
	char buf[256];
	size_t n = term_escape(buf, sizeof(buf), in, len);

	CHECK(n == strlen(want), "length %zu, want %zu", n, strlen(want));
	CHECK_STR(buf, want);
}

static void test_escape(void)
{
	expect_escape("plain text", 10, "plain text");
	expect_escape("\x1b[31mred\x1b[0m", 12, "\\x1b[31mred\\x1b[0m");
	expect_escape("a\\b", 3, "a\\\\b");
	expect_escape("t\tn\nr\r", 6, "t\\tn\\nr\\r");
	expect_escape("nul\0x", 5, "nul\\x00x");
	expect_escape("\x7f", 1, "\\x7f");
	expect_escape("caf\xc3\xa9", 5, "caf\xc3\xa9");		/* é stays */
	expect_escape("\xc2\x9b" "2J", 4, "\\u009b2J");		/* C1 CSI */
	expect_escape("\xe2\x80\xae" "abc", 6, "\\u202eabc");	/* RLO */
	expect_escape("\xff\xfe", 2, "\\xff\\xfe");
	expect_escape("\xc3", 1, "\\xc3");			/* cut sequence */
	expect_escape("\xc0\xaf", 2, "\\xc0\\xaf");		/* overlong '/' */
	expect_escape("\xed\xa0\x80", 3, "\\xed\\xa0\\x80");	/* surrogate */
	expect_escape("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");	/* emoji */
}

static void test_escape_truncates(void)
{
	char small[5];
	size_t n = term_escape(small, sizeof(small), "\x1b\x1b", 2);

	CHECK(n == 8, "wanted length %zu", n);
	CHECK_STR(small, "\\x1b");
}

static void test_utf8(void)
{
	CHECK(utf8_valid("", 0), "empty is valid");
	CHECK(utf8_valid("\xe2\x82\xac", 3), "euro sign");
	CHECK(!utf8_valid("\xe2\x82", 2), "cut euro sign");
	CHECK(!utf8_valid("\xf5\x80\x80\x80", 4), "beyond U+10FFFF");
}

static void test_json_bytes(void)
{
	struct json_object *o = json_object_new_object(), *v;

	json_add_bytes(o, "text", "ok", 2);
	json_add_bytes(o, "bad", "a\xff", 2);
	CHECK(!json_object_object_get_ex(o, "text_base64", NULL), "no base64 when valid");
	CHECK(json_object_object_get_ex(o, "bad_base64", &v), "base64 when invalid");
	CHECK_STR(json_object_get_string(v), "Yf8=");
	CHECK(json_object_object_get_ex(o, "bad", &v), "lossy text present");
	CHECK_STR(json_object_get_string(v), "a\xef\xbf\xbd");
	json_object_put(o);
}

/* What a terminal acts on when the JSON is catted: DEL, and C1 controls
 * (U+0080..U+009F are C2 80..C2 9F in UTF-8). Scanned here byte by byte,
 * not with output.c's own tables.
 */
static int raw_controls(const char *buf, size_t len)
{
	const unsigned char *s = (const unsigned char *)buf;
	int n = 0;
	size_t i;

	for (i = 0; i < len; i++)
		n += s[i] == 0x7f || (s[i] == 0xc2 && i + 1 < len && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f);
	return n;
}

static void hex(const char *s, size_t len, char *out)
{
	size_t i;

	for (i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", (unsigned char)s[i]);
	out[2 * len] = '\0';
}

/* The oracle is Python's json module: it must parse the line as UTF-8,
 * and the strings it decodes must be exactly the bytes we gave.
 */
static int python_check(const char *path, const char *text, size_t len)
{
	char cmd[1024], h[256];

	hex(text, len, h);
	snprintf(cmd, sizeof(cmd),
		 "python3 -c 'import json, sys\n"
		 "v = json.loads(open(sys.argv[1], \"rb\").read().decode(\"utf-8\"))\n"
		 "ok = v[\"text\"].encode() == bytes.fromhex(sys.argv[2])\n"
		 "ok = ok and v[\"comm\"] == \"c\\ufffd\\x7f\\x85\" and v[\"bad\"] == \"x\\ufffd\\x7f\"\n"
		 "sys.exit(0 if ok else 1)' %s %s",
		 path, h);
	return system(cmd);
}

static void test_json_controls(void)
{
	/* DEL, NEL, CSI "2J", U+0080, U+009F, RLO, é: valid UTF-8 */
	static const char text[] = "a\x7f" "b\xc2\x85" "c\xc2\x9b" "2J\xc2\x80\xc2\x9f"
				   "\xe2\x80\xae" "e\xc3\xa9";
	struct json_object *o = json_object_new_object();
	char path[] = "/tmp/test_output.XXXXXX", *buf = NULL;
	size_t len = 0;
	FILE *f;
	int fd;

	json_add_bytes(o, "text", text, sizeof(text) - 1);
	json_add_bytes(o, "bad", "x\xff\x7f", 3);
	/* not through json_add_bytes: a comm is whatever bytes a task set */
	json_object_object_add(o, "comm", json_object_new_string("c\xfe\x7f\xc2\x85"));
	f = open_memstream(&buf, &len);
	CHECK(f && !json_print(o, f), "json_print to memory");
	fclose(f);
	CHECK(raw_controls(buf, len) == 0, "%d raw DEL or C1 in %s", raw_controls(buf, len), buf);
	CHECK(utf8_valid(buf, len), "output is UTF-8");
	CHECK(strstr(buf, "\\u007f") && strstr(buf, "\\u0085") && strstr(buf, "\\u009b"),
	      "escaped as \\u: %s", buf);
	fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, buf, len) == (ssize_t)len, "temporary file");
	close(fd);
	CHECK(python_check(path, text, sizeof(text) - 1) == 0, "python json: %s", buf);
	unlink(path);
	free(buf);
	json_object_put(o);
}

/* A write that fails before the last flush (output larger than stdio's
 * buffer) is still named by its own errno: /dev/full answers ENOSPC to
 * every write (the kernel's rule, the oracle). glibc's stdout keeps only
 * an error flag, and said EIO when the failure left the buffer empty.
 */
static void test_stdout_errno(void)
{
	/* lines of 101 bytes: 41 of them (4141 bytes) made glibc's stdout fail
	 * with its buffer empty at the last flush
	 */
	static const int lines[] = { 1, 40, 41, 82, 1000 };
	int saved = dup(STDOUT_FILENO), full = open("/dev/full", O_WRONLY);
	size_t i;
	int n, err;

	CHECK(saved >= 0 && full >= 0, "dup stdout, open /dev/full: %s", strerror(errno));
	if (saved < 0 || full < 0)
		return;
	fflush(stdout);
	dup2(full, STDOUT_FILENO);
	output_keep_stdout_errno();
	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		for (n = 0; n < lines[i]; n++)
			printf("%0100d\n", n);
		err = output_flush(stdout);
		clearerr(stdout);
		CHECK(err == -ENOSPC, "%d lines to /dev/full: %s, want ENOSPC", lines[i], strerror(-err));
	}
	dup2(saved, STDOUT_FILENO);
	close(saved);
	close(full);
}

static void expect_label(const char *in, size_t len, const char *want)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);

	CHECK(f && !fput_label_value(f, in, len), "fput_label_value to memory");
	fclose(f);
	CHECK_STR(buf, want);
	free(buf);
}

/* Prometheus text format and OpenMetrics: label values escape \\, \" and
 * \n, and are UTF-8; what neither can carry becomes U+FFFD.
 */
static void test_label_value(void)
{
	expect_label("sched_ext", 9, "sched_ext");
	expect_label("a\\b\"c\nd", 7, "a\\\\b\\\"c\\nd");
	expect_label("caf\xc3\xa9", 5, "caf\xc3\xa9");			/* é stays */
	expect_label("x\xff\xfey", 4, "x\xef\xbf\xbd\xef\xbf\xbdy");	/* invalid */
	expect_label("\xc3", 1, "\xef\xbf\xbd");				/* cut sequence */
	expect_label("\x1b[31m", 5, "\xef\xbf\xbd[31m");			/* ESC */
	expect_label("t\tr\r\x7f", 5, "t\xef\xbf\xbdr\xef\xbf\xbd\xef\xbf\xbd");
	expect_label("\xc2\x9b" "2J", 4, "\xef\xbf\xbd" "2J");			/* C1 CSI */
	expect_label("\xe2\x80\xae" "abc", 6, "\xef\xbf\xbd" "abc");		/* RLO */
	expect_label("\xf0\x9f\x98\x80", 4, "\xf0\x9f\x98\x80");		/* emoji */
}

/* Python's prometheus_client reads back what fput_label_value wrote. */
static void test_label_parsed(void)
{
	static const char name[] = "a\"b\\c\nd\xff\x1b" "e\xc3\xa9";
	char path[] = "/tmp/test_output.XXXXXX", cmd[512];
	FILE *f;
	int fd = mkstemp(path);

	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	CHECK(f, "temporary file");
	if (!f)
		return;
	fputs("m{l=\"", f);
	fput_label_value(f, name, sizeof(name) - 1);
	fputs("\"} 1\n", f);
	fclose(f);
	snprintf(cmd, sizeof(cmd),
		 "/usr/bin/python3 -c 'import sys\n"
		 "from prometheus_client.parser import text_string_to_metric_families as p\n"
		 "v = [s.labels[\"l\"] for f in p(open(sys.argv[1]).read()) for s in f.samples]\n"
		 "sys.exit(0 if v == [\"a\\\"b\\\\c\\nd\\ufffd\\ufffde\\u00e9\"] else 1)' %s", path);
	CHECK(system(cmd) == 0, "prometheus_client parses the label back (%s)", path);
	unlink(path);
}

static void expect_source(const char *in, const char *want)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	fput_source(f, in, strlen(in));
	fclose(f);
	CHECK_STR(buf, want);
	free(buf);
}

/* Source lines as the kernel shows them ("  %s @ %s:%d": the line info's
 * text after two spaces), never a literal \t; escapes stay escaped.
 */
static void test_source(void)
{
	expect_source("\tval = *ptr;", "val = *ptr;");
	expect_source("  \t if (x) \t ", "if (x)");
	expect_source("if (x)\treturn 0;", "if (x)  return 0;");
	expect_source("int val;\t/* 8 */", "int val;        /* 8 */");
	expect_source("a\t\tb", "a               b");
	expect_source("caf\xc3\xa9\tx", "caf\xc3\xa9    x");	/* columns, not bytes */
	expect_source("\x1b[2J\tx", "\\x1b[2J x");	/* escaped: 7 columns */
	expect_source("\t\t", "");
}

int main(void)
{
	test_escape();
	test_escape_truncates();
	test_utf8();
	test_json_bytes();
	test_json_controls();
	test_stdout_errno();
	test_label_value();
	test_label_parsed();
	test_source();
	return unit_done();
}
