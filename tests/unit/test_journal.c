// SPDX-License-Identifier: GPL-2.0
/* The journal's rules, on a scratch database: a program's row is its
 * identity (id, tag, load time); a view's cursor sees every committed
 * event once, in order, and nothing of a rolled-back transaction; --since
 * starts at the first event drained at or after the time; held bytes go
 * in and out as they were; totals outlive retention. SQLite itself (a second connection, plain SQL)
 * is the oracle for what is stored.
 */
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <unistd.h>
#include <sys/wait.h>

#include "fault.h"
#include "journal.h"
#include "stream.h"
#include "unit.h"

struct got {
	char text[512];		/* "stream:text[:partial] " per event */
	int n;
	long long last_seq;
};

static int collect(const struct jevent *e, void *ctx)
{
	struct got *g = ctx;
	size_t off = strlen(g->text);

	snprintf(g->text + off, sizeof(g->text) - off, "%s:%.*s%s ", stream_name(e->ev.stream),
		 (int)e->ev.len, e->ev.text, e->ev.partial ? ":partial" : "");
	g->n++;
	CHECK(e->seq > g->last_seq, "seq %lld after %lld", e->seq, g->last_seq);
	g->last_seq = e->seq;
	return 0;
}

static struct jprog prog(__u32 id, const char *tag, __u64 load_time)
{
	struct jprog p = { .ident = { .id = id, .load_time_ns = load_time } };

	snprintf(p.ident.tag, sizeof(p.ident.tag), "%s", tag);
	snprintf(p.ident.name, sizeof(p.ident.name), "prog%u", id);
	return p;
}

static int add(struct journal *j, long long row, enum stream s, const char *text, bool partial,
	       long long sec)
{
	struct event ev = { .kind = EV_MESSAGE, .stream = s, .text = text, .len = strlen(text),
			    .partial = partial };
	struct timespec ts = { sec, 0 };

	return journal__add_event(j, row, &ts, &ev, NULL);
}

static long long count(const char *path, const char *sql)
{
	sqlite3 *db;
	sqlite3_stmt *st;
	long long n = -1;

	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK &&
	    sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			n = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	}
	sqlite3_close(db);
	return n;
}

/* (id, tag, load time) is one row; change any part and it is another. */
static void test_identity(struct journal *j, const char *path)
{
	struct jprog a = prog(7, "aaaaaaaaaaaaaaaa", 100), again = a;
	struct jprog reloaded = prog(7, "aaaaaaaaaaaaaaaa", 200);
	struct jprog other = prog(7, "bbbbbbbbbbbbbbbb", 100);

	CHECK(!journal__begin(j), "begin");
	CHECK(!journal__prog(j, &a) && !journal__prog(j, &again), "rows");
	CHECK(!journal__prog(j, &reloaded) && !journal__prog(j, &other), "rows");
	CHECK(!journal__commit(j), "commit");
	CHECK(a.row == again.row, "the same program is one row");
	CHECK(reloaded.row != a.row && other.row != a.row && other.row != reloaded.row,
	      "another load time or tag is another program");
	CHECK(count(path, "SELECT count(*) FROM progs") == 3, "SQLite counts 3 programs");
}

static void test_cursor(struct journal *j)
{
	struct jprog p = prog(9, "cccccccccccccccc", 100);
	struct jread r = {};
	struct got g = {};

	CHECK(!journal__begin(j) && !journal__prog(j, &p), "begin");
	CHECK(!add(j, p.row, STREAM_STDOUT, "one", false, 1000), "add");
	CHECK(!add(j, p.row, STREAM_STDERR, "two", false, 2000), "add");
	CHECK(!add(j, p.row, STREAM_STDOUT, "thr", true, 3000), "add");
	CHECK(!journal__commit(j), "commit");
	CHECK(!journal__read(j, &r, collect, &g), "read");
	CHECK_STR(g.text, "stdout:one stderr:two stdout:thr:partial ");
	CHECK(r.after == g.last_seq && r.after == journal__last_seq(j), "the cursor is past the last");
	memset(&g, 0, sizeof(g));
	CHECK(!journal__read(j, &r, collect, &g) && g.n == 0, "read again: nothing new");

	/* a rolled-back transaction leaves nothing to read */
	CHECK(!journal__begin(j) && !add(j, p.row, STREAM_STDOUT, "gone", false, 4000), "add");
	journal__rollback(j);
	CHECK(!journal__read(j, &r, collect, &g) && g.n == 0, "rolled back: nothing (%s)", g.text);

	/* --since 2000 s: the cursor starts before the first event at or after it */
	memset(&g, 0, sizeof(g));
	r = (struct jread){ .after = journal__cursor_at(j, 2000LL * 1000000000) };
	CHECK(!journal__read(j, &r, collect, &g), "read");
	CHECK_STR(g.text, "stderr:two stdout:thr:partial ");
}

static int collect_kinds(const struct jevent *e, void *ctx)
{
	struct got *g = ctx;
	size_t off = strlen(g->text);

	snprintf(g->text + off, sizeof(g->text) - off, "%d%s ", e->ev.kind, e->incomplete ? "i" : "");
	g->n++;
	return 0;
}

/* Every event kind round-trips (kind column: 0 message, 1 fault, 2 stack
 * dump), and a journal written before stack dumps, whose kinds are 0 and
 * 1 only, reads as before.
 */
static void test_kinds(struct journal *j, const char *path)
{
	static const char stack[] = "CPU: 1 UID: 0 PID: 2 Comm: x\nCall trace:\nbpf_prog_0123456789abcdef_f+0x1/0x2\n\n";
	struct jprog p = prog(21, "dddddddddddddddd", 100);
	struct jread r = { .after = journal__last_seq(j) };
	struct timespec ts = { time(NULL), 0 };
	struct got g = {};
	struct fault f;
	struct event ev = { .kind = EV_STACK, .stream = STREAM_STDOUT, .text = stack, .len = strlen(stack) };

	CHECK(!fault__parse(stack, strlen(stack), true, &f), "parse");
	ev.fault = &f;
	CHECK(!journal__begin(j) && !journal__prog(j, &p), "begin");
	CHECK(!add(j, p.row, STREAM_STDOUT, "m", false, ts.tv_sec), "add a message");
	CHECK(!journal__add_event(j, p.row, &ts, &ev, NULL), "add a stack dump");
	CHECK(!journal__commit(j), "commit");
	fault__fini(&f);
	CHECK(!journal__read(j, &r, collect_kinds, &g), "read");
	CHECK_STR(g.text, "0 2 ");
	CHECK(count(path, "SELECT count(*) FROM events WHERE kind = 2") == 1, "stored as kind 2");
	CHECK(count(path, "SELECT count(*) FROM events WHERE kind = 1 AND fault_kind IS NULL") == 0,
	      "no fault without its kind");
}

static int collect_readers(const struct jevent *e, void *ctx)
{
	struct got *g = ctx;
	size_t off = strlen(g->text);

	if (e->reader)
		snprintf(g->text + off, sizeof(g->text) - off, "%.*s:%s(%u) ", (int)e->ev.len, e->ev.text,
			 e->reader->comm, e->reader->pid);
	else
		snprintf(g->text + off, sizeof(g->text) - off, "%.*s:- ", (int)e->ev.len, e->ev.text);
	g->n++;
	return 0;
}

static int collect_mirrored_totals(const struct jtotal *t, void *ctx)
{
	struct got *g = ctx;
	size_t off = strlen(g->text);

	if (t->reader && t->prog->ident.id == 23)
		snprintf(g->text + off, sizeof(g->text) - off, "%s %d %llu ", t->reader, t->stream, t->n);
	return 0;
}

/* Mirrored events keep their reader (NULL: a bpfstderr read it); the
 * mirror right is one process's (an OFD lock: this process's second
 * claim holds it already).
 */
static void test_readers(struct journal *j, const char *path)
{
	struct jprog p = prog(23, "ffffffffffffffff", 100);
	struct reader_id who = { .pid = 311, .comm = "scx_sdt" };
	struct jread r = { .after = journal__last_seq(j) };
	struct timespec ts = { time(NULL), 0 };
	struct event ev = { .kind = EV_MESSAGE, .stream = STREAM_STDERR, .text = "theirs", .len = 6 };
	struct got g = {};

	CHECK(!journal__begin(j) && !journal__prog(j, &p), "begin");
	CHECK(!journal__add_event(j, p.row, &ts, &ev, &who), "add a mirrored event");
	CHECK(!add(j, p.row, STREAM_STDERR, "ours", false, ts.tv_sec), "add one of ours");
	CHECK(!journal__commit(j), "commit");
	CHECK(journal__claim_mirror(j) == 1 && journal__claim_mirror(j) == 1, "the mirror right, held");
	CHECK(!journal__read(j, &r, collect_readers, &g), "read");
	CHECK_STR(g.text, "theirs:scx_sdt(311) ours:- ");
	CHECK(count(path, "SELECT count(*) FROM events WHERE reader_comm = 'scx_sdt' AND reader_pid = 311") == 1,
	      "stored with its reader");
	memset(&g, 0, sizeof(g));
	CHECK(!journal__totals(j, collect_mirrored_totals, &g, &r.after), "totals");
	CHECK_STR(g.text, "scx_sdt 2 1 ");
}

static void test_pending(struct journal *j)
{
	struct jprog p = prog(21, "dddddddddddddddd", 100);
	struct timespec now = { 5000, 0 };
	void *buf = NULL;
	size_t len = 0;

	CHECK(!journal__begin(j) && !journal__prog(j, &p), "begin");
	CHECK(!journal__pending_put(j, p.row, STREAM_STDERR, "ERROR: half\n\0x", 14, &now), "put");
	CHECK(!journal__pending_get(j, p.row, STREAM_STDERR, &buf, &len), "get");
	CHECK(len == 14 && buf && !memcmp(buf, "ERROR: half\n\0x", 14), "the bytes as they were");
	free(buf);
	CHECK(!journal__pending_get(j, p.row, STREAM_STDOUT, &buf, &len) && !buf && !len,
	      "the other stream holds nothing");
	CHECK(!journal__pending_put(j, p.row, STREAM_STDERR, NULL, 0, &now), "drop");
	CHECK(!journal__pending_get(j, p.row, STREAM_STDERR, &buf, &len) && !buf && !len, "dropped");
	CHECK(!journal__commit(j), "commit");
}

static void exec_sql(const char *path, const char *sql)
{
	sqlite3 *db;

	if (sqlite3_open(path, &db) != SQLITE_OK || sqlite3_exec(db, sql, NULL, NULL, NULL) != SQLITE_OK)
		CHECK(0, "%s: %s", sql, sqlite3_errmsg(db));
	sqlite3_close(db);
}

/* An event of a stream no bpfstderr writes (the file passes SQLite's own
 * checks): refused with a message, never used as an index.
 */
static void test_bad_stream(struct journal *j, const char *path)
{
	struct jread r = { .after = journal__last_seq(j) };
	struct got g = {};

	exec_sql(path, "INSERT INTO events (prog, ts, stream, kind, flags, text) "
		       "SELECT prog, ts, 3, 0, 0, 'odd' FROM events LIMIT 1");
	CHECK(journal__read(j, &r, collect, &g) == -EBADMSG, "a bad stream id is refused");
	CHECK(g.n == 0, "and not delivered");
	CHECK(strstr(journal__error(j) ?: "", "stream 3") != NULL, "said: %s", journal__error(j) ?: "");
}

struct totals {
	long long msgs, faults, last_seq;
};

static int sum_totals(const struct jtotal *t, void *ctx)
{
	struct totals *g = ctx;

	if (t->prog->ident.id != 11)
		return 0;
	if (*t->fault_kind) {
		CHECK_STR(t->fault_kind, "may_goto_timeout");
		g->faults += t->n;
	} else {
		g->msgs += t->n;
	}
	return 0;
}

/* Totals count every event a program's row took: retention pruning the
 * events leaves them, and they go only with the row (unloaded, nothing
 * left). Last: its retention prunes every earlier test's old events too.
 */
static void test_totals(struct journal *j, const char *path)
{
	struct jprog a = prog(11, "1111111111111111", 100), b = prog(12, "1212121212121212", 100);
	struct retention ret = { .max_age = 1 };
	struct fault f = { .kind = FAULT_MAY_GOTO };
	struct event ev = { .kind = EV_FAULT, .stream = STREAM_STDERR, .text = "ERROR: x", .len = 8,
			    .fault = &f };
	struct timespec old = { 1000, 0 };
	struct totals g = {};

	CHECK(!journal__set_retention(j, &ret), "retention 1 s");
	CHECK(!journal__begin(j) && !journal__prog(j, &a) && !journal__prog(j, &b), "begin");
	CHECK(!add(j, a.row, STREAM_STDOUT, "a1", false, 1000) && !add(j, a.row, STREAM_STDERR, "a2", false, 1000),
	      "add");
	CHECK(!journal__add_event(j, a.row, &old, &ev, NULL) && !add(j, b.row, STREAM_STDOUT, "b", false, 1000), "add");
	CHECK(!journal__set_unloaded(j, b.row, &old), "b unloaded");
	usleep(1100000);	/* the age check runs at most every second with 1 s */
	CHECK(!journal__commit(j), "commit (and prune: every event is older than 1 s)");
	CHECK(count(path, "SELECT count(*) FROM events") == 0, "retention pruned every event");
	CHECK(count(path, "SELECT count(*) FROM progs WHERE id = 12") == 0, "and the unloaded program's row");
	CHECK(count(path, "SELECT count(*) FROM totals t LEFT JOIN progs p ON p.row = t.prog "
			  "WHERE p.row IS NULL") == 0, "with its totals");
	CHECK(!journal__totals(j, sum_totals, &g, &g.last_seq), "totals");
	CHECK(g.msgs == 2 && g.faults == 1, "the loaded program's: 2 messages (%lld), 1 fault (%lld)",
	      g.msgs, g.faults);
	CHECK(g.last_seq == journal__last_seq(j) && g.last_seq > 0, "the last seq they count");
}

/* Counts and sites are written once per transaction (a storm repeats
 * them): past the counts it keeps in memory, through a rollback, and a
 * site written again after its transaction was rolled back. SQLite's own
 * count of the events is the oracle.
 */
struct in_order {
	int n, bad;
	size_t big_at;		/* the index of the long text ('x' each), 0: none */
};

static int count_in_order(const struct jevent *e, void *ctx)
{
	struct in_order *o = ctx;
	char want[16];

	snprintf(want, sizeof(want), "q%d", o->n);
	if (o->big_at && o->n == (int)o->big_at)
		o->bad += e->ev.len != 199999 || e->ev.text[0] != 'x' || e->ev.text[199998] != 'x';
	else
		o->bad += e->ev.len != strlen(want) || memcmp(e->ev.text, want, e->ev.len);
	o->n++;
	return 0;
}

/* Events are queued and inserted EVENT_BATCH to a statement: every one
 * lands, in order, seen by a read inside the transaction, gone with a
 * rollback; a text longer than the queue's first buffer is kept whole.
 */
static void test_queued(struct journal *j, const char *path)
{
	struct jread r = { .after = journal__last_seq(j) };
	struct jprog p = prog(900, "0000000000000900", 900);
	long long before = count(path, "SELECT count(*) FROM events");
	struct in_order o = { 0 };
	char *big = malloc(200000);
	char text[16];
	int i;

	CHECK(!journal__begin(j) && !journal__prog(j, &p), "begin");
	for (i = 0; i < 150; i++) {
		snprintf(text, sizeof(text), "q%d", i);
		CHECK(!add(j, p.row, i % 2 ? STREAM_STDOUT : STREAM_STDERR, text, false, 1), "add %d", i);
	}
	CHECK(!journal__read(j, &r, count_in_order, &o) && o.n == 150 && !o.bad,
	      "a read inside the transaction sees the 150, in order (%d, %d wrong)", o.n, o.bad);
	journal__rollback(j);
	CHECK(count(path, "SELECT count(*) FROM events") == before, "rolled back: none stored");
	memset(big, 'x', 199999);
	big[199999] = '\0';
	CHECK(!journal__begin(j) && !journal__prog(j, &p), "begin");
	for (i = 0; i < 130; i++) {
		snprintf(text, sizeof(text), "q%d", i);
		CHECK(!add(j, p.row, STREAM_STDERR, i == 70 ? big : text, false, 1), "add %d", i);
	}
	CHECK(!journal__commit(j), "commit");
	CHECK(count(path, "SELECT count(*) FROM events") == before + 130, "130 stored");
	CHECK(count(path, "SELECT length(text) FROM events WHERE length(text) > 1000") == 199999,
	      "the long text whole");
	o = (struct in_order){ .big_at = 70 };
	r.after = journal__last_seq(j) - 130;
	CHECK(!journal__read(j, &r, count_in_order, &o) && o.n == 130 && !o.bad,
	      "read back in order, the long one in its place (%d, %d wrong)", o.n, o.bad);
	free(big);
}

static void test_batched(struct journal *j, const char *path)
{
	struct reader_id who = { .pid = 7, .comm = "watcher" };
	struct event ev = { .kind = EV_MESSAGE, .stream = STREAM_STDERR, .text = "m", .len = 1 };
	struct sym_loc loc = { .found = true, .site_cnt = 1 };
	struct timespec now = { time(NULL), 0 };
	struct jprog p[100];
	char tag[17], sql[256];
	long long bad = 0;
	int i, k;

	loc.sites[0].line = 9;
	CHECK(!journal__begin(j), "begin");
	for (i = 0; i < 100; i++) {
		snprintf(tag, sizeof(tag), "%016x", 0x500 + i);
		p[i] = prog(500 + i, tag, 500);
		CHECK(!journal__prog(j, &p[i]), "prog %d", i);
		for (k = 0; k <= i % 5; k++) {
			CHECK(!add(j, p[i].row, STREAM_STDOUT, "o", false, now.tv_sec), "add");
			CHECK(!journal__add_event(j, p[i].row, &now, &ev, i % 2 ? &who : NULL), "add");
			CHECK(!journal__add_site(j, p[i].row, tag, 8, &loc), "site");
		}
	}
	CHECK(!journal__commit(j), "commit");
	for (i = 0; i < 100; i++) {
		snprintf(sql, sizeof(sql), "SELECT (SELECT count(*) FROM events WHERE prog = %lld) - "
			 "(SELECT sum(n) FROM totals WHERE prog = %lld)", p[i].row, p[i].row);
		bad += count(path, sql) != 0;
		snprintf(sql, sizeof(sql), "SELECT (SELECT count(*) FROM events WHERE prog = %lld AND "
			 "reader_pid IS NOT NULL) - coalesce((SELECT sum(n) FROM mirrored WHERE prog = %lld "
			 "AND reader = 'watcher'), 0)", p[i].row, p[i].row);
		bad += count(path, sql) != 0;
	}
	CHECK(bad == 0, "totals and mirrored equal the events of 100 programs, 200 streams (%lld differ)",
	      bad);
	CHECK(count(path, "SELECT count(*) FROM sites WHERE tag LIKE '00000000000005%' OR "
			  "tag LIKE '00000000000006%'") == 100, "one site per program, written once");
	/* a rolled-back transaction counts nothing, and forgets its site */
	CHECK(!journal__begin(j) && !journal__add_event(j, p[0].row, &now, &ev, NULL) &&
	      !journal__add_site(j, p[0].row, "ffffffffffffffff", 16, &loc), "add");
	journal__rollback(j);
	snprintf(sql, sizeof(sql), "SELECT sum(n) FROM totals WHERE prog = %lld", p[0].row);
	CHECK(count(path, sql) == 2, "the rolled-back event is not counted (%lld)", count(path, sql));
	CHECK(!journal__begin(j) && !journal__add_site(j, p[0].row, "ffffffffffffffff", 16, &loc) &&
	      !journal__commit(j), "the site again");
	CHECK(count(path, "SELECT count(*) FROM sites WHERE tag = 'ffffffffffffffff'") == 1,
	      "written after the rollback");
}

/* A commit by another process, as record's beside a top (of an event of
 * now: retention keeps it).
 */
static bool commit_elsewhere(const char *path, const char *text)
{
	pid_t pid = fork();
	int status;

	if (pid == 0) {
		struct jprog p = prog(21, "dddddddddddddddd", 2100);
		struct journal *o = NULL;
		int err = journal__open(&o, path) ?: journal__begin(o) ?: journal__prog(o, &p) ?:
			  add(o, p.row, STREAM_STDERR, text, false, time(NULL)) ?: journal__commit(o);

		journal__close(o);
		_exit(err ? 1 : 0);
	}
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) && !WEXITSTATUS(status);
}

/* The generation moves when anyone commits (the oracle: the commit, and
 * the event a read then finds), and stays while nobody writes, even with
 * other files of the directory written.
 */
static void test_generation(struct journal *j, const char *path, const char *dir)
{
	unsigned long long g0, g1, g2;
	struct jread r = { .after = journal__last_seq(j) };
	struct got got = {};
	char other[96];
	int fd;

	g0 = journal__generation(j);
	g1 = journal__generation(j);
	CHECK(g0 == g1, "nobody wrote: the same generation (%llu, %llu)", g0, g1);
	snprintf(other, sizeof(other), "%s/other.log", dir);
	fd = open(other, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	CHECK(fd >= 0 && write(fd, "x\n", 2) == 2, "write a file beside the journal");
	if (fd >= 0)
		close(fd);
	unlink(other);
	g1 = journal__generation(j);
	CHECK(g0 == g1, "another file of the directory: the same generation (%llu, %llu)", g0, g1);
	CHECK(commit_elsewhere(path, "elsewhere"), "another process commits an event");
	g2 = journal__generation(j);
	CHECK(g2 != g1, "a commit by another process moves it (%llu)", g2);
	CHECK(!journal__read(j, &r, collect, &got), "read");
	CHECK_STR(got.text, "stderr:elsewhere ");
	CHECK(journal__generation(j) == g2, "then nobody wrote: the same again");
	CHECK(!journal__begin(j) && !journal__commit(j), "an empty transaction of ours");
	CHECK(!journal__begin(j) && !add(j, 1, STREAM_STDOUT, "ours", false, time(NULL)) && !journal__commit(j),
	      "a commit of ours");
	CHECK(journal__generation(j) != g2, "our own commit moves it too");
}

int main(void)
{
	char dir[] = "/tmp/bpfstderr-unit.XXXXXX", path[64], side[80];
	struct journal *j = NULL;

	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/j.db", dir);
	CHECK(!journal__open(&j, path), "open: %s", j ? journal__error(j) ?: "" : "");
	test_identity(j, path);
	test_cursor(j);
	test_pending(j);
	test_bad_stream(j, path);
	test_batched(j, path);
	test_queued(j, path);
	test_totals(j, path);
	test_generation(j, path, dir);
	test_kinds(j, path);
	test_readers(j, path);
	journal__close(j);
	unlink(path);
	snprintf(side, sizeof(side), "%s-wal", path);
	unlink(side);
	snprintf(side, sizeof(side), "%s-shm", path);
	unlink(side);
	CHECK(!rmdir(dir), "nothing else was left in %s", dir);
	return unit_done();
}
