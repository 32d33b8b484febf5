// SPDX-License-Identifier: GPL-2.0
/* kline against libdw, its oracle: for every CU of an ELF file with
 * DWARF (this test's own executable, or the file given, e.g. a
 * distribution vmlinux), at each row's address, one below and one above,
 * the row kline__lookup() picks must be the one dwarf_getsrc_die() gives
 * (file, line, column, or none), and every name of the CU's file table
 * what dwarf_filesrc() gives. Where kline leaves a CU to libdw it says
 * so; on this test's own DWARF it must leave none.
 * usage: test_kline [ELF [ROWS_PER_CU]]
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <elfutils/libdw.h>

#include "kline.h"
#include "unit.h"

static bool same(const char *a, const char *b)
{
	return a && b ? !strcmp(a, b) : a == b;
}

struct tally {
	long pcs, rows, none, left, bad;
};

/* One address: kline's answer against libdw's. */
static void one_pc(struct kline *kl, Dwarf_Die *cu, Dwarf_Addr pc, struct tally *t)
{
	struct kline_row row;
	Dwarf_Line *line = dwarf_getsrc_die(cu, pc);
	int rc = kline__lookup(kl, cu, pc, &row), lno = 0, col = 0;
	const char *want = line ? dwarf_linesrc(line, NULL, NULL) : NULL;

	t->pcs++;
	if (rc < 0) {
		t->left++;
		return;
	}
	if (line) {
		dwarf_lineno(line, &lno);
		dwarf_linecol(line, &col);
	}
	if (!rc && !line) {
		t->none++;
		return;
	}
	t->rows++;
	if (rc == 1 && line && same(kline__file(kl, row.file), want) && row.line == lno &&
	    row.col == col)
		return;
	if (!t->bad++)
		fprintf(stderr, "pc %#llx: kline %d %s:%d:%d, libdw %s:%d:%d\n",
			(unsigned long long)pc, rc, rc == 1 ? kline__file(kl, row.file) : "-",
			rc == 1 ? row.line : 0, rc == 1 ? row.col : 0, line ? want : "(none)",
			lno, col);
}

/* The file table of the last lookup in cu against libdw's. */
static long files_differ(struct kline *kl, Dwarf_Die *cu)
{
	Dwarf_Files *files;
	size_t n, i;
	long bad = 0;

	if (dwarf_getsrcfiles(cu, &files, &n))
		return 0;
	for (i = 0; i < n + 2; i++)
		bad += !same(kline__file(kl, i), i < n ? dwarf_filesrc(files, i, NULL, NULL) : NULL);
	return bad;
}

static void one_cu(struct kline *kl, Dwarf_Die *cu, size_t max_rows, struct tally *t)
{
	Dwarf_Lines *lines;
	size_t n, i, step;
	Dwarf_Addr a = 0;
	long before = t->bad;

	if (dwarf_getsrclines(cu, &lines, &n) || !n) {
		one_pc(kl, cu, 0, t);	/* no table: none, or left to libdw */
		return;
	}
	step = max_rows && n > max_rows ? n / max_rows : 1;
	for (i = 0; i < n; i += step) {
		if (dwarf_lineaddr(dwarf_onesrcline(lines, i), &a))
			continue;
		one_pc(kl, cu, a - 1, t);
		one_pc(kl, cu, a + 1, t);
		one_pc(kl, cu, a, t);	/* last: the file table is this one's */
	}
	if (kline__lookup(kl, cu, a, &(struct kline_row){}) >= 0)
		t->bad += files_differ(kl, cu);
	if (t->bad != before && before == 0)
		fprintf(stderr, "in the CU at %#llx\n", (unsigned long long)dwarf_dieoffset(cu));
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/proc/self/exe";
	size_t max_rows = argc > 2 ? strtoul(argv[2], NULL, 0) : 0, hsize;
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct kline *kl = kline__new(dw);
	struct tally t = {};
	Dwarf_Off off = 0, next;
	Dwarf_Die cu;
	long cus = 0;

	CHECK(dw && kl, "%s: no DWARF or no .debug_line", path);
	while (kl && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		if (dwarf_offdie(dw, off + hsize, &cu)) {
			one_cu(kl, &cu, max_rows, &t);
			cus++;
		}
		off = next;
	}
	printf("%s: %ld CUs, %ld addresses: %ld rows, %ld none, %ld left to libdw, %ld differ\n",
	       path, cus, t.pcs, t.rows, t.none, t.left, t.bad);
	CHECK(t.rows > 0, "no address had a row");
	CHECK(!t.bad, "%ld answers differ from libdw's", t.bad);
	if (argc < 2)	/* gcc's own DWARF: nothing this reader does not follow */
		CHECK(!t.left, "%ld addresses left to libdw", t.left);
	kline__free(kl);
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return unit_done();
}
