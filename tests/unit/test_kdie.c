// SPDX-License-Identifier: GPL-2.0
/* kdie__cu_ranges() against libdw, its oracle: for every CU of an ELF
 * file with DWARF (this test's own executable, or the file given, e.g. a
 * distribution vmlinux), the ranges dwarf_ranges() lists for the CU DIE,
 * in order. Where kdie leaves a CU to libdw it says so; on this test's
 * own DWARF it must leave none.
 * usage: test_kdie [ELF]
 */
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
#include <elfutils/libdw.h>

#include "kdie.h"
#include "unit.h"

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/proc/self/exe";
	int fd = open(path, O_RDONLY);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct kdie *kd = kdie__new(dw);
	struct kdie_ranges rs = {};
	Dwarf_Off off = 0, next;
	Dwarf_Addr base, lo, hi;
	long cus = 0, ranges = 0, left = 0, bad = 0;
	size_t hsize, i;
	ptrdiff_t r;
	Dwarf_Die cu;

	CHECK(dw && kd, "%s: no DWARF", path);
	while (kd && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		rs.cnt = 0;
		cus++;
		if (kdie__cu_ranges(kd, off, &rs)) {
			left++;
		} else if (dwarf_offdie(dw, off + hsize, &cu)) {
			for (i = 0, r = 0; (r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0; i++) {
				if (i >= rs.cnt || rs.v[i].lo != lo || rs.v[i].hi != hi) {
					if (!bad++)
						fprintf(stderr, "CU %#llx range %zu: libdw %#llx-%#llx\n",
							(unsigned long long)off, i,
							(unsigned long long)lo, (unsigned long long)hi);
				}
			}
			bad += i != rs.cnt;
			ranges += i;
		}
		off = next;
	}
	printf("%s: %ld CUs, %ld ranges, %ld left to libdw, %ld differ\n", path, cus, ranges,
	       left, bad);
	CHECK(ranges > 0, "no ranges");
	CHECK(!bad, "%ld differ from libdw's", bad);
	if (argc < 2)
		CHECK(!left, "%ld CUs left to libdw", left);
	free(rs.v);
	kdie__free(kd);
	if (dw)
		dwarf_end(dw);
	if (fd >= 0)
		close(fd);
	return unit_done();
}
