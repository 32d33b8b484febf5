/* SPDX-License-Identifier: GPL-2.0 */
/* Finding a vmlinux with DWARF that belongs to the running kernel. */
#ifndef BPFSTDERR_DEBUGINFO_H
#define BPFSTDERR_DEBUGINFO_H

#include <limits.h>
#include <stdbool.h>

#define BUILD_ID_HEX_LEN	(2 * 20 + 1)

struct vmlinux_info {
	bool found;			/* a candidate file exists */
	bool has_dwarf;
	bool id_matches;		/* its build-id is the running kernel's */
	char path[PATH_MAX];
	char build_id[BUILD_ID_HEX_LEN];	/* of the file */
	char kernel_id[BUILD_ID_HEX_LEN];	/* of the running kernel */
};

/* Build-id of a raw ELF note stream, e.g. /sys/kernel/notes. */
int notes_build_id(const char *path, char *hex, size_t len);
/* Build-id of an ELF file's NT_GNU_BUILD_ID note. */
int elf_build_id(const char *path, char *hex, size_t len, bool *has_dwarf);

/* Try override (if any) then the usual places; the first file that exists
 * is reported, matching or not, so the caller can say why it is refused.
 */
int debuginfo__find_vmlinux(const char *override, struct vmlinux_info *vi);
/* The places searched, for messages: NULL-terminated, static storage. */
const char *const *debuginfo__search_paths(void);

#endif
