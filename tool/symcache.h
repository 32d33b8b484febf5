/* SPDX-License-Identifier: GPL-2.0 */
/* A persistent cache of kernel frames symbolized, one file per object
 * (vmlinux or module) named and headed by its ELF build-id, like perf's
 * build-id cache: a second report over the same faults does not open the
 * DWARF at all. The file is trusted only when it is ours (owner, 0600 in a
 * 0700 directory), whole (checksum) and of the same build-id and format;
 * anything else is ignored and rewritten. Writers replace it by rename, so
 * readers see one version or the other. Used by ksym.c only.
 *
 * Where: $BPFSTDERR_CACHE_DIR when it is an absolute path (any other value
 * turns the cache off), else /var/cache/bpfstderr for root, else
 * $XDG_CACHE_HOME/bpfstderr or ~/.cache/bpfstderr.
 */
#ifndef BPFSTDERR_SYMCACHE_H
#define BPFSTDERR_SYMCACHE_H

#include <stdbool.h>

#include "strpool.h"
#include "symloc.h"

#define SYMCACHE_ENTRIES_MAX	65536	/* a file, unless $BPFSTDERR_CACHE_MAX */
#define SYMCACHE_FILES_MAX	32	/* objects kept; the oldest go first */

struct symcache;

/* The cache of the object with this build-id (hex), its entries read;
 * NULL when the cache is off or its directory is not safe to use.
 */
struct symcache *symcache__open(const char *build_id, struct strpool *st);
/* A frame symbolized before: true and *loc (strings in st). */
bool symcache__get(struct symcache *c, const char *sym, unsigned long long off,
		   unsigned long long size, bool exact, struct sym_loc *loc);
/* Remember a frame just symbolized (loc's strings must outlive c). */
void symcache__put(struct symcache *c, const char *sym, unsigned long long off,
		   unsigned long long size, bool exact, const struct sym_loc *loc);
/* Write what was put (merged with what another process wrote since), then
 * free c. Errors only lose the cache.
 */
void symcache__close(struct symcache *c);

#endif
