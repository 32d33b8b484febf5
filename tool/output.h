/* SPDX-License-Identifier: GPL-2.0 */
/* Bytes from BPF streams are untrusted: they may hold escape sequences,
 * control bytes and invalid UTF-8. Everything that shows them goes through
 * here, for a terminal or for JSON.
 */
#ifndef BPFSTDERR_OUTPUT_H
#define BPFSTDERR_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>
#include <signal.h>
#include <stdio.h>

struct json_object;

bool utf8_valid(const void *buf, size_t len);

/* Escape for a terminal: printable ASCII and printable UTF-8 stay, "\" is
 * doubled, \t \n \r are shown as such, other control bytes, C1 controls,
 * bidi overrides and invalid UTF-8 become \xNN / \uNNNN. Writes at most
 * dst_len - 1 bytes plus a NUL; returns the length it wanted.
 */
size_t term_escape(char *dst, size_t dst_len, const void *src, size_t len);
void fput_term(FILE *f, const void *buf, size_t len);

/* A line of program source (line info, the kernel's "  <source> @ ..."):
 * as the kernel shows it, blanks at both ends trimmed, and tabs inside
 * expanded to SOURCE_TAB_WIDTH-column stops rather than shown as "\t";
 * everything else escaped as fput_term() does. JSON keeps the bytes.
 */
#define SOURCE_TAB_WIDTH 8
void fput_source(FILE *f, const void *buf, size_t len);

/* A JSON string that is valid whatever the bytes: invalid UTF-8 becomes
 * U+FFFD. json_add_bytes() adds key, and key_base64 with the exact bytes
 * when the string could not carry them; a NULL buf adds null.
 */
void json_add_bytes(struct json_object *obj, const char *key, const void *buf, size_t len);
/* The rest of the writer set: one call per key. json_add_str() is for
 * strings of our own (names of kinds, types, times); NULL adds null.
 * Bytes from outside (streams, names, paths) go through json_add_bytes().
 */
void json_add_str(struct json_object *obj, const char *key, const char *s);
void json_add_int(struct json_object *obj, const char *key, long long v);
void json_add_bool(struct json_object *obj, const char *key, bool v);
void json_add_null(struct json_object *obj, const char *key);

/* A label value of the Prometheus text format and OpenMetrics (they escape
 * alike): backslash, double quote and newline escaped, invalid UTF-8 as
 * U+FFFD, so that any bytes make a valid exposition; control bytes, C1
 * controls and bidi overrides, which neither format can escape and a
 * terminal would act on, become U+FFFD too. 0, or -EIO.
 */
int fput_label_value(FILE *f, const void *buf, size_t len);

/* One JSON value on one line, safe to cat to a terminal: DEL, C1 controls
 * and bidi overrides escaped as \uNNNN, invalid UTF-8 as U+FFFD. 0, or
 * -errno of the failed write.
 */
int json_print(struct json_object *obj, FILE *f);

/* Standard output, when not a terminal, becomes a stream that keeps the
 * errno of its failed writes, for output_flush(). Called first in main().
 */
void output_keep_stdout_errno(void);
/* flag (a signal handler's) set: writes to standard output wait at most a
 * second for room, then fail with EINTR, so that an ending signal that
 * came between two blocked writes still ends the command.
 */
void output_ending(volatile sig_atomic_t *flag);
/* Standard output into a pipe or socket (as `follow | less`) never waits
 * for its reader in write(2): what the reader does not take now is
 * deferred, in order, and written as room comes (output_deferred_flush()),
 * so that a view whose reader does not read still cycles (a view stuck in
 * write(2) would keep its read rights and read-ahead, journal.h, from the
 * recorder sharing its journal). false: stdout is not such, and writes
 * wait as before.
 */
bool output_defer(void);
/* Bytes deferred, waiting for room. */
size_t output_deferred(void);
/* STDOUT_FILENO while bytes are deferred (wait for POLLOUT), else -1. */
int output_deferred_fd(void);
/* Writes what is deferred: what the reader takes now, or (wait) all of
 * it, waiting for room (once ending, a second at most: then -EINTR). 0,
 * or -errno (-EPIPE: the reader went away).
 */
int output_deferred_flush(bool wait);
/* Flushes f: 0, or -errno of a write to f that failed since the last
 * check (-EIO when that errno is gone; -EPIPE: the reader went away).
 */
int output_flush(FILE *f);
/* Says in one line that stdout lost output (err: -errno), once: clears
 * the stream's error so that main() does not say it again. EXIT_ERROR.
 */
int output_failed(int err);

#endif
