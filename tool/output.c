// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <unistd.h>
#include <sys/stat.h>
#include <json-c/json.h>

#include "main.h"
#include "output.h"

/* Length of the valid UTF-8 sequence at s (1..4), 0 if invalid. */
static int utf8_seq_len(const unsigned char *s, size_t len)
{
	uint32_t cp;
	int n, i;

	if (s[0] < 0x80)
		return 1;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, cp = s[0] & 0x1f;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, cp = s[0] & 0x0f;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, cp = s[0] & 0x07;
	else
		return 0;
	if (len < (size_t)n)
		return 0;
	for (i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	/* overlong forms, surrogates, beyond U+10FFFF */
	if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) ||
	    (cp >= 0xd800 && cp <= 0xdfff) || cp > 0x10ffff)
		return 0;
	return n;
}

bool utf8_valid(const void *buf, size_t len)
{
	const unsigned char *s = buf;
	size_t i = 0;
	int n;

	while (i < len) {
		n = utf8_seq_len(s + i, len - i);
		if (!n)
			return false;
		i += n;
	}
	return true;
}

static uint32_t utf8_decode(const unsigned char *s, int n)
{
	static const unsigned char lead_mask[] = { 0, 0x7f, 0x1f, 0x0f, 0x07 };
	uint32_t cp = s[0] & lead_mask[n];
	int i;

	for (i = 1; i < n; i++)
		cp = (cp << 6) | (s[i] & 0x3f);
	return cp;
}

/* Code points a terminal acts on rather than shows: C1 controls (0x9b is a
 * CSI on some terminals) and the bidi overrides that reorder what follows.
 */
static bool cp_is_control(uint32_t cp)
{
	return (cp >= 0x80 && cp <= 0x9f) || (cp >= 0x202a && cp <= 0x202e) ||
	       (cp >= 0x2066 && cp <= 0x2069);
}

struct sink {
	char *dst;
	size_t cap, len;
};

static void sink_put(struct sink *k, const char *s, size_t n)
{
	size_t room = k->cap > k->len + 1 ? k->cap - k->len - 1 : 0;

	if (k->cap)
		memcpy(k->dst + k->len, s, n < room ? n : room);
	k->len += n;
}

size_t term_escape(char *dst, size_t dst_len, const void *src, size_t len)
{
	const unsigned char *s = src;
	struct sink k = { dst, dst_len, 0 };
	char esc[16];
	size_t i = 0;
	int n;

	while (i < len) {
		unsigned char c = s[i];

		if (c >= 0x20 && c < 0x7f && c != '\\') {
			sink_put(&k, (const char *)&s[i++], 1);
			continue;
		}
		n = c >= 0x80 ? utf8_seq_len(s + i, len - i) : 0;
		if (n > 1 && !cp_is_control(utf8_decode(s + i, n))) {
			sink_put(&k, (const char *)&s[i], n);
			i += n;
			continue;
		}
		if (n > 1)
			snprintf(esc, sizeof(esc), "\\u%04x", utf8_decode(s + i, n));
		else if (c == '\\')
			strcpy(esc, "\\\\");
		else if (c == '\t')
			strcpy(esc, "\\t");
		else if (c == '\n')
			strcpy(esc, "\\n");
		else if (c == '\r')
			strcpy(esc, "\\r");
		else
			snprintf(esc, sizeof(esc), "\\x%02x", c);
		sink_put(&k, esc, strlen(esc));
		i += n > 1 ? n : 1;
	}
	if (dst_len)
		dst[k.len < dst_len ? k.len : dst_len - 1] = '\0';
	return k.len;
}

void fput_term(FILE *f, const void *buf, size_t len)
{
	char small[512], *big = NULL, *out = small;
	size_t need = term_escape(small, sizeof(small), buf, len);

	if (need >= sizeof(small)) {
		big = malloc(need + 1);
		if (!big) {
			fputs("<out of memory>", f);
			return;
		}
		term_escape(big, need + 1, buf, len);
		out = big;
	}
	fwrite(out, 1, need, f);
	free(big);
}

/* Columns a terminal gives escaped text: one per character, not per byte. */
static size_t columns(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xc0) != 0x80;
	return n;
}

static bool is_blank(unsigned char c)
{
	return c == ' ' || c == '\t';
}

void fput_source(FILE *f, const void *buf, size_t len)
{
	const char *s = buf, *end, *tab;
	char small[512], *out;
	size_t col = 0, n;

	while (len && is_blank(s[0]))
		s++, len--;
	while (len && is_blank(s[len - 1]))
		len--;
	for (end = s + len; s < end; s = tab + 1) {
		tab = memchr(s, '\t', end - s);
		if (!tab)
			tab = end;
		n = term_escape(small, sizeof(small), s, tab - s);
		out = n < sizeof(small) ? small : malloc(n + 1);
		if (!out) {
			fputs("<out of memory>", f);
			return;
		}
		if (out != small)
			term_escape(out, n + 1, s, tab - s);
		fwrite(out, 1, n, f);
		col += columns(out, n);
		if (out != small)
			free(out);
		if (tab == end)
			break;
		do
			fputc(' ', f);
		while (++col % SOURCE_TAB_WIDTH);
	}
}

static struct json_object *json_string_from_bytes(const void *buf, size_t len)
{
	static const char repl[] = "\xef\xbf\xbd";	/* U+FFFD */
	const unsigned char *s = buf;
	struct json_object *str;
	size_t i = 0, o = 0;
	char *tmp;
	int n;

	if (utf8_valid(buf, len))
		return json_object_new_string_len(buf, len);
	tmp = malloc(len * 3 + 1);
	if (!tmp)
		return NULL;
	while (i < len) {
		n = utf8_seq_len(s + i, len - i);
		if (n) {
			memcpy(tmp + o, s + i, n);
			o += n;
			i += n;
		} else {
			memcpy(tmp + o, repl, 3);
			o += 3;
			i++;
		}
	}
	str = json_object_new_string_len(tmp, o);
	free(tmp);
	return str;
}

static char *base64(const unsigned char *s, size_t len)
{
	static const char tbl[] =
		"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	char *out = malloc((len + 2) / 3 * 4 + 1), *p = out;
	size_t i;

	if (!out)
		return NULL;
	for (i = 0; i + 2 < len; i += 3) {
		*p++ = tbl[s[i] >> 2];
		*p++ = tbl[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
		*p++ = tbl[((s[i + 1] & 15) << 2) | (s[i + 2] >> 6)];
		*p++ = tbl[s[i + 2] & 63];
	}
	if (i < len) {
		*p++ = tbl[s[i] >> 2];
		if (i + 1 < len) {
			*p++ = tbl[((s[i] & 3) << 4) | (s[i + 1] >> 4)];
			*p++ = tbl[(s[i + 1] & 15) << 2];
		} else {
			*p++ = tbl[(s[i] & 3) << 4];
			*p++ = '=';
		}
		*p++ = '=';
	}
	*p = '\0';
	return out;
}

/* Code points that become U+FFFD in a label value: invalid UTF-8 and what
 * a terminal acts on (the formats cannot escape them; a scrape may be
 * read with curl on a terminal).
 */
static bool label_replaced(const unsigned char *s, int n)
{
	if (!n)
		return true;
	if (n == 1)
		return s[0] < 0x20 || s[0] == 0x7f;
	return cp_is_control(utf8_decode(s, n));
}

int fput_label_value(FILE *f, const void *buf, size_t len)
{
	const unsigned char *s = buf;
	size_t i = 0;
	int n, rc = 0;

	while (i < len && rc >= 0) {
		n = utf8_seq_len(s + i, len - i);
		if (s[i] == '\\' || s[i] == '"')
			rc = fprintf(f, "\\%c", s[i]);
		else if (s[i] == '\n')
			rc = fputs("\\n", f);
		else if (label_replaced(s + i, n))
			rc = fputs("\xef\xbf\xbd", f);	/* U+FFFD */
		else
			rc = fwrite(s + i, 1, n, f) == (size_t)n ? 0 : -1;
		i += n ? n : 1;
	}
	return rc < 0 ? -EIO : 0;
}

void json_add_bytes(struct json_object *obj, const char *key, const void *buf, size_t len)
{
	char b64key[64];
	char *b64;

	if (!buf) {
		json_object_object_add(obj, key, NULL);
		return;
	}
	json_object_object_add(obj, key, json_string_from_bytes(buf, len));
	if (utf8_valid(buf, len))
		return;
	b64 = base64(buf, len);
	if (!b64)
		return;
	snprintf(b64key, sizeof(b64key), "%s_base64", key);
	json_object_object_add(obj, b64key, json_object_new_string(b64));
	free(b64);
}

void json_add_str(struct json_object *obj, const char *key, const char *s)
{
	json_object_object_add(obj, key, s ? json_object_new_string(s) : NULL);
}

void json_add_int(struct json_object *obj, const char *key, long long v)
{
	json_object_object_add(obj, key, json_object_new_int64(v));
}

void json_add_bool(struct json_object *obj, const char *key, bool v)
{
	json_object_object_add(obj, key, json_object_new_boolean(v));
}

void json_add_null(struct json_object *obj, const char *key)
{
	json_object_object_add(obj, key, NULL);
}

/* json-c writes DEL and U+0080..U+009F raw: valid JSON, but a terminal acts
 * on them when someone cats the file (0x9b is a CSI), and it copies invalid
 * UTF-8 from strings that did not come through json_string_from_bytes()
 * (a task's comm). JSON's own syntax is ASCII, so these bytes are always
 * inside a string, where \uNNNN and U+FFFD are safe.
 */
static int json_put_safe(const char *text, FILE *f)
{
	const unsigned char *s = (const unsigned char *)text, *run = s;
	size_t len = strlen(text);
	uint32_t cp;
	int n;

	while (*s) {
		if (*s < 0x7f) {
			s++;
			continue;
		}
		n = *s == 0x7f ? 1 : utf8_seq_len(s, len - (s - (const unsigned char *)text));
		cp = n == 1 ? 0x7f : n ? utf8_decode(s, n) : 0xfffd;
		if (n > 1 && !cp_is_control(cp)) {
			s += n;
			continue;
		}
		if (fwrite(run, 1, s - run, f) != (size_t)(s - run))
			return -1;
		if ((cp == 0xfffd ? fputs("\xef\xbf\xbd", f) : fprintf(f, "\\u%04x", cp)) < 0)
			return -1;
		s += n ?: 1;
		run = s;
	}
	return fwrite(run, 1, s - run, f) == (size_t)(s - run) ? 0 : -1;
}

int json_print(struct json_object *obj, FILE *f)
{
	const char *s = json_object_to_json_string_ext(obj, JSON_C_TO_STRING_PLAIN |
							   JSON_C_TO_STRING_NOSLASHESCAPE);

	if (!s)
		return -ENOMEM;
	errno = 0;
	if (json_put_safe(s, f) || fputc('\n', f) == EOF)
		return errno ? -errno : -EIO;
	return 0;
}

/* The errno of the last write to standard output that failed. stdio
 * drops a buffer it could not write and keeps only an error flag, so when
 * the failure happened before the last flush (output larger than a
 * buffer), its errno would be gone by then: ENOSPC would read as EIO.
 */
static int stdout_errno;
/* Into a pipe or socket, writes of at most PIPE_BUF: a pipe takes them
 * whole or not at all, so an ending signal interrupts a blocked write
 * (EINTR) instead of cutting it short and leaving the rest to block again.
 */
static size_t stdout_chunk = SIZE_MAX;
/* Set once the command is ending (output_ending()): a reader that does
 * not read may hold the last output a second, not for ever.
 */
static volatile sig_atomic_t *stdout_ending;

void output_ending(volatile sig_atomic_t *flag)
{
	stdout_ending = flag;
}

/* Room for the next write, or, once ending, none after a second. */
static bool stdout_may_write(void)
{
	struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };

	if (!stdout_ending || !*stdout_ending)
		return true;
	return poll(&pfd, 1, 1000) > 0;
}

static bool ending(void)
{
	return stdout_ending && *stdout_ending;
}

/* Deferred output (output_defer()): what a pipe or socket had no room for,
 * in order, written as room comes, never waited for in write(2).
 */
static bool stdout_deferring;
static char *deferred;		/* ndeferred bytes from deferred_at */
static size_t deferred_at, ndeferred, deferred_cap;

static int defer(const char *buf, size_t len)
{
	size_t cap = deferred_cap ? deferred_cap : 65536;
	char *tmp;

	if (deferred_at)	/* what was written goes first */
		memmove(deferred, deferred + deferred_at, ndeferred);
	deferred_at = 0;
	while (cap < ndeferred + len)
		cap *= 2;
	if (cap != deferred_cap) {
		tmp = realloc(deferred, cap);
		if (!tmp)
			return -ENOMEM;
		deferred = tmp;
		deferred_cap = cap;
	}
	memcpy(deferred + ndeferred, buf, len);
	ndeferred += len;
	return 0;
}

/* Room now for a write of up to stdout_chunk (PIPE_BUF: a pipe takes
 * it whole): POLLOUT, or an error or hang-up for write(2) to report.
 */
static bool stdout_room(int ms)
{
	struct pollfd pfd = { .fd = STDOUT_FILENO, .events = POLLOUT };

	return poll(&pfd, 1, ms) > 0;
}

/* What of buf the reader takes now, chunk by chunk: the count, or -errno. */
static ssize_t write_ready(const char *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	while (done < len && stdout_room(0)) {
		n = write(STDOUT_FILENO, buf + done,
			  len - done < stdout_chunk ? len - done : stdout_chunk);
		if (n < 0 && errno == EINTR && !ending())
			continue;
		if (n < 0)
			return -errno;
		done += n;
	}
	return done;
}

int output_deferred_flush(bool wait)
{
	ssize_t n;

	while (ndeferred) {
		n = write_ready(deferred + deferred_at, ndeferred);
		if (n < 0) {
			stdout_errno = -n;
			return n;
		}
		deferred_at = ndeferred == (size_t)n ? 0 : deferred_at + n;
		ndeferred -= n;
		if (!ndeferred || !wait)
			break;
		/* once ending, a reader that does not read has a second */
		if (!stdout_room(ending() ? 1000 : -1) && ending()) {
			stdout_errno = EINTR;
			return -EINTR;
		}
	}
	return 0;
}

size_t output_deferred(void)
{
	return ndeferred;
}

int output_deferred_fd(void)
{
	return ndeferred ? STDOUT_FILENO : -1;
}

static ssize_t stdout_defer(const char *buf, size_t len)
{
	ssize_t n = output_deferred_flush(false);

	if (!n && !ndeferred)
		n = write_ready(buf, len);
	if (n < 0) {
		stdout_errno = -n;
		return 0;
	}
	if (defer(buf + n, len - n)) {
		stdout_errno = ENOMEM;
		return n;
	}
	return len;
}

static ssize_t stdout_write(void *cookie, const char *buf, size_t len)
{
	size_t done = 0;
	ssize_t n;

	(void)cookie;
	if (stdout_deferring)
		return stdout_defer(buf, len);
	while (done < len) {
		if (!stdout_may_write()) {
			stdout_errno = EINTR;
			break;
		}
		n = write(STDOUT_FILENO, buf + done,
			  len - done < stdout_chunk ? len - done : stdout_chunk);
		if (n < 0) {
			/* EINTR too: an ending signal must end a write into a full pipe */
			stdout_errno = errno;
			break;
		}
		done += n;
	}
	return done;	/* short: stdio sets the stream's error flag */
}

bool output_defer(void)
{
	stdout_deferring = stdout_chunk == PIPE_BUF;
	return stdout_deferring;
}

void output_keep_stdout_errno(void)
{
	struct stat st;
	FILE *f;

	/* a terminal keeps glibc's own stream: ncurses and isatty(fileno()) need its fd */
	if (isatty(STDOUT_FILENO))
		return;
	if (!fstat(STDOUT_FILENO, &st) && (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		stdout_chunk = PIPE_BUF;
	f = fopencookie(NULL, "w", (cookie_io_functions_t){ .write = stdout_write });
	if (f)
		stdout = f;
}

int output_flush(FILE *f)
{
	int err;

	errno = 0;
	if (!fflush(f) && !ferror(f))
		return 0;
	err = f == stdout && stdout_errno ? stdout_errno : errno;
	return err ? -err : -EIO;
}

int output_failed(int err)
{
	p_err("cannot write to standard output: %s", strerror(-err));
	clearerr(stdout);
	return EXIT_ERROR;
}
