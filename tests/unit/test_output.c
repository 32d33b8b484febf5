// SPDX-License-Identifier: GPL-2.0
/* Terminal escaping and UTF-8 validation of untrusted stream bytes. The
 * expected strings follow from the rules in output.h, byte by byte.
 */
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

int main(void)
{
	test_escape();
	test_escape_truncates();
	test_utf8();
	test_json_bytes();
	return unit_done();
}
