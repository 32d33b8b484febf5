// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>

#include "debuginfo.h"

#define NT_GNU_BUILD_ID_TYPE 3

static void hex(const unsigned char *b, size_t n, char *out, size_t len)
{
	size_t i;

	out[0] = '\0';
	for (i = 0; i < n && 2 * i + 2 < len; i++)
		sprintf(out + 2 * i, "%02x", b[i]);
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int notes_build_id(const char *path, char *out, size_t len)
{
	unsigned char buf[4096];
	size_t off = 0, n;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	while (off + sizeof(Elf64_Nhdr) <= n) {
		Elf64_Nhdr *h = (void *)(buf + off);
		size_t name = off + sizeof(*h);
		size_t desc = name + align4(h->n_namesz);

		if (desc + h->n_descsz > n)
			break;
		if (h->n_type == NT_GNU_BUILD_ID_TYPE && h->n_namesz == 4 &&
		    !memcmp(buf + name, "GNU", 4)) {
			hex(buf + desc, h->n_descsz, out, len);
			return 0;
		}
		off = desc + align4(h->n_descsz);
	}
	return -ENOENT;
}

static bool elf_note_build_id(Elf_Data *data, char *out, size_t len)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID_TYPE && nh.n_namesz == 4 &&
		    !memcmp((char *)data->d_buf + name_off, "GNU", 4)) {
			hex((unsigned char *)data->d_buf + desc_off, nh.n_descsz, out, len);
			return true;
		}
	}
	return false;
}

int elf_build_id(const char *path, char *out, size_t len, bool *has_dwarf)
{
	Elf_Scn *scn = NULL;
	bool found = false;
	GElf_Shdr sh;
	size_t shstrndx;
	int fd, err = 0;
	Elf *elf;

	*has_dwarf = false;
	out[0] = '\0';
	elf_version(EV_CURRENT);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -EINVAL;
		goto out_close;
	}
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh))
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (name && !strcmp(name, ".debug_info"))
			*has_dwarf = true;
		if (sh.sh_type == SHT_NOTE && !found)
			found = elf_note_build_id(elf_getdata(scn, NULL), out, len);
	}
	if (!found)
		err = -ENOENT;
	elf_end(elf);
out_close:
	close(fd);
	return err;
}

const char *const *debuginfo__search_paths(void)
{
	static char paths[4][PATH_MAX];
	static const char *list[5];
	struct utsname u;

	if (list[0])
		return list;
	uname(&u);
	snprintf(paths[0], PATH_MAX, "/usr/lib/debug/boot/vmlinux-%s", u.release);
	snprintf(paths[1], PATH_MAX, "/usr/lib/debug/lib/modules/%s/vmlinux", u.release);
	snprintf(paths[2], PATH_MAX, "/boot/vmlinux-%s", u.release);
	snprintf(paths[3], PATH_MAX, "/lib/modules/%s/build/vmlinux", u.release);
	for (int i = 0; i < 4; i++)
		list[i] = paths[i];
	return list;
}

static bool try_candidate(const char *path, struct vmlinux_info *vi)
{
	if (access(path, R_OK))
		return false;
	vi->found = true;
	snprintf(vi->path, sizeof(vi->path), "%s", path);
	elf_build_id(path, vi->build_id, sizeof(vi->build_id), &vi->has_dwarf);
	vi->id_matches = vi->kernel_id[0] && !strcmp(vi->build_id, vi->kernel_id);
	return true;
}

int debuginfo__find_vmlinux(const char *override, struct vmlinux_info *vi)
{
	const char *const *p;

	memset(vi, 0, sizeof(*vi));
	notes_build_id("/sys/kernel/notes", vi->kernel_id, sizeof(vi->kernel_id));
	if (override)
		return try_candidate(override, vi) ? 0 : -ENOENT;
	for (p = debuginfo__search_paths(); *p; p++)
		if (try_candidate(*p, vi))
			return 0;
	return -ENOENT;
}
