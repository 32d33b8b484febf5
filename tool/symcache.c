// SPDX-License-Identifier: GPL-2.0
/* The build-id cache of kernel frames (see symcache.h). One text file per
 * object:
 *
 *   bpfstderr-ksym-cache <format> <bpfstderr version> <build-id>
 *   E <sym> <off> <size> <exact> <found> <addr> <ncand> <cand>... <nsites> (<func> <file> <line> <col>)...
 *   ...
 *   end <entries> <FNV-1a 64 of every byte before this line>
 *
 * fields separated by tabs, numbers in hex, strings "=text" or "-" (none).
 * An entry whose strings hold a tab, newline or backslash is not written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/stat.h>

#include "symcache.h"

#define SYMCACHE_FORMAT		1
#define SYMCACHE_FILE_MAX	(256 << 20)
#define SYMCACHE_SUFFIX		".ksym"
#define BUILD_ID_MAX		128	/* hex digits */

struct entry {
	const char *sym;
	unsigned long long off, size;
	bool exact;
	bool fresh;		/* symbolized by this process */
	struct sym_loc loc;
};

struct symcache {
	struct strpool *st;
	char dir[PATH_MAX];
	char id[BUILD_ID_MAX + 1];
	struct entry *v;
	size_t cnt, cap;
	uint32_t *slot;		/* open addressing: index + 1, 0 free */
	size_t nslots;
	size_t max;
	bool dirty;
};

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *c = p;

	while (n--)
		h = (h ^ *c++) * 0x100000001b3ULL;
	return h;
}

#define FNV_INIT	0xcbf29ce484222325ULL

/* A directory that only we can write to, created if missing. */
static bool dir_is_ours(const char *dir)
{
	struct stat st;

	if (lstat(dir, &st) && (errno != ENOENT || mkdir(dir, 0700) || lstat(dir, &st)))
		return false;
	return S_ISDIR(st.st_mode) && st.st_uid == geteuid() && !(st.st_mode & 077);
}

/* Room is left for the file names (build-id, temporary suffix). */
#define DIR_MAX		(PATH_MAX - 256)

static int cache_dir(char *buf)
{
	const char *env = getenv("BPFSTDERR_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME");
	const char *home = getenv("HOME");
	int n;

	if (env) {
		if (env[0] != '/')
			return -ENOENT;	/* off */
		n = snprintf(buf, DIR_MAX, "%s", env);
	} else if (!geteuid()) {
		n = snprintf(buf, DIR_MAX, "/var/cache/bpfstderr");
	} else if (xdg && xdg[0] == '/') {
		n = snprintf(buf, DIR_MAX, "%s/bpfstderr", xdg);
	} else if (home && home[0] == '/') {
		n = snprintf(buf, DIR_MAX, "%s/.cache", home);
		if (n > 0 && n < DIR_MAX)
			mkdir(buf, 0700);
		n = snprintf(buf, DIR_MAX, "%s/.cache/bpfstderr", home);
	} else {
		return -ENOENT;
	}
	if (n < 0 || n >= DIR_MAX)
		return -ENAMETOOLONG;
	return dir_is_ours(buf) ? 0 : -EPERM;
}

static uint64_t key_hash(const char *sym, unsigned long long off, unsigned long long size, bool exact)
{
	uint64_t h = fnv(FNV_INIT, sym, strlen(sym));

	h = fnv(h, &off, sizeof(off));
	h = fnv(h, &size, sizeof(size));
	return fnv(h, &exact, 1);
}

static uint32_t *find_slot(struct symcache *c, const char *sym, unsigned long long off,
			   unsigned long long size, bool exact)
{
	size_t i = key_hash(sym, off, size, exact) & (c->nslots - 1);

	for (; c->slot[i]; i = (i + 1) & (c->nslots - 1)) {
		const struct entry *e = &c->v[c->slot[i] - 1];

		if (e->off == off && e->size == size && e->exact == exact && !strcmp(e->sym, sym))
			break;
	}
	return &c->slot[i];
}

static int grow(struct symcache *c)
{
	struct entry *tmp;
	size_t i;

	if (c->cnt == c->cap) {
		tmp = realloc(c->v, (c->cap ? c->cap * 2 : 256) * sizeof(*tmp));
		if (!tmp)
			return -ENOMEM;
		c->v = tmp;
		c->cap = c->cap ? c->cap * 2 : 256;
	}
	if ((c->cnt + 1) * 2 < c->nslots)
		return 0;
	free(c->slot);
	c->nslots = c->nslots ? c->nslots * 2 : 1024;
	c->slot = calloc(c->nslots, sizeof(*c->slot));
	if (!c->slot)
		return -ENOMEM;
	for (i = 0; i < c->cnt; i++)
		*find_slot(c, c->v[i].sym, c->v[i].off, c->v[i].size, c->v[i].exact) = i + 1;
	return 0;
}

/* Adds e unless its key is there already (the first one wins). */
static int add(struct symcache *c, const struct entry *e)
{
	uint32_t *s;

	if (c->cnt >= UINT32_MAX - 1 || grow(c))
		return -ENOMEM;
	s = find_slot(c, e->sym, e->off, e->size, e->exact);
	if (*s)
		return 0;
	c->v[c->cnt] = *e;
	*s = ++c->cnt;
	return 0;
}

/* --- reading ------------------------------------------------------------ */

static char *field(char **p)
{
	char *f = *p, *t;

	if (!f)
		return NULL;
	t = strchr(f, '\t');
	if (t)
		*t++ = '\0';
	*p = t;
	return f;
}

static bool num(char **p, unsigned long long *v)
{
	char *f = field(p), *end;

	if (!f || !*f)
		return false;
	errno = 0;
	*v = strtoull(f, &end, 16);
	return !errno && !*end;
}

static bool str(struct symcache *c, char **p, const char **s)
{
	char *f = field(p);

	if (!f || (f[0] != '=' && strcmp(f, "-")))
		return false;
	*s = f[0] == '=' ? strpool__keep(c->st, f + 1) : NULL;
	return f[0] == '-' || *s;
}

static bool parse_sites(struct symcache *c, char **p, struct sym_loc *l)
{
	unsigned long long n, line, col;
	int i;

	if (!num(p, &n) || n > SYM_INLINE_MAX)
		return false;
	l->site_cnt = n;
	for (i = 0; i < l->site_cnt; i++) {
		if (!str(c, p, &l->sites[i].func) || !str(c, p, &l->sites[i].file) ||
		    !num(p, &line) || !num(p, &col) || line > INT32_MAX || col > INT32_MAX)
			return false;
		l->sites[i].line = line;
		l->sites[i].col = col;
	}
	return !*p;	/* nothing after the last site */
}

static bool parse_entry(struct symcache *c, char *line, struct entry *e)
{
	unsigned long long exact, found, lexact, ncand, v;
	char *p = line, *tag = field(&p);
	struct sym_loc *l = &e->loc;
	unsigned long long i;

	memset(e, 0, sizeof(*e));
	if (!tag || strcmp(tag, "E") || !str(c, &p, &e->sym) || !e->sym || !num(&p, &e->off) ||
	    !num(&p, &e->size) || !num(&p, &exact) || !num(&p, &found) || !num(&p, &l->addr) ||
	    !num(&p, &lexact) || !num(&p, &ncand) || exact > 1 || found > 1 || lexact > 1 ||
	    ncand > INT32_MAX)
		return false;
	e->exact = exact;
	l->found = found;
	l->exact = lexact;
	l->candidates = ncand;
	for (i = 0; i < ncand && i < SYM_CANDIDATES_MAX; i++) {
		if (!num(&p, &v))
			return false;
		l->cand_addr[i] = v;
	}
	return parse_sites(c, &p, l);
}

/* The whole file, if it is ours and a regular file; NULL otherwise. */
static char *slurp(const char *path, size_t *len)
{
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	struct stat st;
	char *buf = NULL;
	ssize_t r;
	size_t got = 0;

	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    (st.st_mode & 077) || st.st_size > SYMCACHE_FILE_MAX)
		goto out;
	buf = malloc(st.st_size + 1);
	if (!buf)
		goto out;
	while (got < (size_t)st.st_size && (r = read(fd, buf + got, st.st_size - got)) > 0)
		got += r;
	buf[got] = '\0';
	*len = got;
out:
	close(fd);
	return buf;
}

static void header(const struct symcache *c, char *buf, size_t len)
{
	snprintf(buf, len, "bpfstderr-ksym-cache\t%d\t%s\t%s\n", SYMCACHE_FORMAT,
		 BPFSTDERR_VERSION, c->id);
}

/* Checks the header and the trailer, then adds every entry: a file that
 * fails any check adds none.
 */
static void load(struct symcache *c, const char *path)
{
	char head[256], *buf, *trailer, *line, *next;
	unsigned long long want_cnt, want_sum, n = 0;
	struct entry *tmp = NULL;
	size_t len, i;

	buf = slurp(path, &len);
	if (!buf)
		return;
	header(c, head, sizeof(head));
	if (strncmp(buf, head, strlen(head)) || len < 2 || buf[len - 1] != '\n')
		goto out;
	buf[len - 1] = '\0';
	trailer = strrchr(buf, '\n');
	if (!trailer || sscanf(trailer + 1, "end\t%llx\t%llx", &want_cnt, &want_sum) != 2 ||
	    fnv(FNV_INIT, buf, trailer + 1 - buf) != want_sum || want_cnt > c->max)
		goto out;
	*trailer = '\0';
	tmp = calloc(want_cnt ? want_cnt : 1, sizeof(*tmp));
	if (!tmp)
		goto out;
	for (line = buf + strlen(head); *line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		else
			next = line + strlen(line);
		if (n == want_cnt || !parse_entry(c, line, &tmp[n]))
			goto out;
		n++;
	}
	if (n != want_cnt)
		goto out;
	for (i = 0; i < n; i++)
		add(c, &tmp[i]);
out:
	free(tmp);
	free(buf);
}

/* dir is at most DIR_MAX, id BUILD_ID_MAX: a PATH_MAX buffer holds it. */
static void file_path(const struct symcache *c, char *buf)
{
	if (snprintf(buf, PATH_MAX, "%s/%s" SYMCACHE_SUFFIX, c->dir, c->id) >= PATH_MAX)
		buf[0] = '\0';
}

static bool valid_id(const char *id)
{
	size_t n = strspn(id, "0123456789abcdef");

	return n >= 2 && n <= BUILD_ID_MAX && !id[n];
}

struct symcache *symcache__open(const char *build_id, struct strpool *st)
{
	struct symcache *c;
	char path[PATH_MAX];
	const char *max = getenv("BPFSTDERR_CACHE_MAX");

	if (!build_id || !valid_id(build_id))
		return NULL;
	c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	if (cache_dir(c->dir)) {
		free(c);
		return NULL;
	}
	c->st = st;
	c->max = max && atol(max) > 0 ? (size_t)atol(max) : SYMCACHE_ENTRIES_MAX;
	snprintf(c->id, sizeof(c->id), "%s", build_id);
	file_path(c, path);
	load(c, path);
	return c;
}

bool symcache__get(struct symcache *c, const char *sym, unsigned long long off,
		   unsigned long long size, bool exact, struct sym_loc *loc)
{
	uint32_t s;

	if (!c || !c->nslots)
		return false;
	s = *find_slot(c, sym, off, size, exact);
	if (!s)
		return false;
	*loc = c->v[s - 1].loc;
	return true;
}

static bool clean(const char *s)
{
	return !s || !s[strcspn(s, "\t\n\\")];
}

static bool writable(const struct entry *e)
{
	int i;

	if (!e->sym || !clean(e->sym))
		return false;
	for (i = 0; i < e->loc.site_cnt; i++)
		if (!clean(e->loc.sites[i].func) || !clean(e->loc.sites[i].file))
			return false;
	return true;
}

void symcache__put(struct symcache *c, const char *sym, unsigned long long off,
		   unsigned long long size, bool exact, const struct sym_loc *loc)
{
	struct entry e = { .sym = sym, .off = off, .size = size, .exact = exact, .fresh = true };

	if (!c || !sym)
		return;
	e.loc = *loc;
	if (!writable(&e) || e.loc.site_cnt < 0 || e.loc.site_cnt > SYM_INLINE_MAX)
		return;
	e.sym = strpool__keep(c->st, sym);
	if (e.sym && !add(c, &e))
		c->dirty = true;
}

/* --- writing ------------------------------------------------------------ */

static void put_str(FILE *f, const char *s)
{
	if (s)
		fprintf(f, "\t=%s", s);
	else
		fputs("\t-", f);
}

static void put_entry(FILE *f, const struct entry *e)
{
	const struct sym_loc *l = &e->loc;
	int i;

	fputs("E", f);
	put_str(f, e->sym);
	fprintf(f, "\t%llx\t%llx\t%x\t%x\t%llx\t%x\t%x", e->off, e->size, e->exact, l->found,
		l->addr, l->exact, l->candidates);
	for (i = 0; i < l->candidates && i < SYM_CANDIDATES_MAX; i++)
		fprintf(f, "\t%llx", l->cand_addr[i]);
	fprintf(f, "\t%x", l->site_cnt);
	for (i = 0; i < l->site_cnt; i++) {
		put_str(f, l->sites[i].func);
		put_str(f, l->sites[i].file);
		fprintf(f, "\t%x\t%x", l->sites[i].line, l->sites[i].col);
	}
	fputc('\n', f);
}

/* The file's text: this process's entries first, then the others, up to
 * the bound.
 */
static char *render(const struct symcache *c, size_t *len)
{
	char head[256], *buf = NULL;
	size_t i, n = 0;
	int pass;
	FILE *f = open_memstream(&buf, len);

	if (!f)
		return NULL;
	header(c, head, sizeof(head));
	fputs(head, f);
	for (pass = 0; pass < 2; pass++)
		for (i = 0; i < c->cnt && n < c->max; i++)
			if (c->v[i].fresh == !pass && writable(&c->v[i])) {
				put_entry(f, &c->v[i]);
				n++;
			}
	if (fflush(f)) {
		fclose(f);
		free(buf);
		return NULL;
	}
	fprintf(f, "end\t%zx\t%llx\n", n, (unsigned long long)fnv(FNV_INIT, buf, *len));
	if (fclose(f)) {
		free(buf);
		return NULL;
	}
	return buf;
}

static int write_all(int fd, const char *buf, size_t len)
{
	ssize_t r;

	while (len) {
		r = write(fd, buf, len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return -EIO;
		buf += r;
		len -= r;
	}
	return 0;
}

/* Write to a temporary file beside it, then rename: another process reads
 * the old file or the new one, never half of one.
 */
static int save(struct symcache *c)
{
	char path[PATH_MAX], tmp[PATH_MAX], *buf;
	size_t len;
	int fd, err;

	buf = render(c, &len);
	if (!buf)
		return -ENOMEM;
	file_path(c, path);
	fd = -1;
	errno = ENAMETOOLONG;
	if (snprintf(tmp, sizeof(tmp), "%s/.%s" SYMCACHE_SUFFIX ".XXXXXX", c->dir, c->id) <
	    (int)sizeof(tmp))
		fd = mkstemp(tmp);	/* 0600 */
	if (fd < 0) {
		free(buf);
		return -errno;
	}
	err = write_all(fd, buf, len);
	free(buf);
	if (close(fd) && !err)
		err = -EIO;
	if (!err && rename(tmp, path))
		err = -errno;
	if (err)
		unlink(tmp);
	return err;
}

struct old_file {
	char name[256];
	time_t mtime;
};

static int by_mtime(const void *a, const void *b)
{
	const struct old_file *x = a, *y = b;

	return x->mtime < y->mtime ? -1 : x->mtime > y->mtime;
}

/* Keep the newest SYMCACHE_FILES_MAX objects' files; temporary files a
 * crashed writer left behind go after an hour.
 */
static void evict(const struct symcache *c)
{
	struct old_file *v = NULL, *tmp;
	size_t n = 0, cap = 0, i;
	char path[PATH_MAX];
	struct dirent *d;
	struct stat st;
	DIR *dir = opendir(c->dir);

	if (!dir)
		return;
	while ((d = readdir(dir))) {
		size_t l = strlen(d->d_name), sl = strlen(SYMCACHE_SUFFIX);
		bool tmpfile = d->d_name[0] == '.' && strstr(d->d_name, SYMCACHE_SUFFIX ".");

		if (!tmpfile && (l <= sl || strcmp(d->d_name + l - sl, SYMCACHE_SUFFIX)))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", c->dir, d->d_name) >= (int)sizeof(path))
			continue;
		if (lstat(path, &st) || !S_ISREG(st.st_mode) || l >= sizeof(v->name))
			continue;
		if (tmpfile) {
			if (st.st_mtime < time(NULL) - 3600)
				unlink(path);
			continue;
		}
		if (n == cap) {
			tmp = realloc(v, (cap = cap ? cap * 2 : 64) * sizeof(*v));
			if (!tmp)
				break;
			v = tmp;
		}
		snprintf(v[n].name, sizeof(v[n].name), "%s", d->d_name);
		v[n++].mtime = st.st_mtime;
	}
	closedir(dir);
	if (n > SYMCACHE_FILES_MAX) {
		qsort(v, n, sizeof(*v), by_mtime);
		for (i = 0; i < n - SYMCACHE_FILES_MAX; i++) {
			if (snprintf(path, sizeof(path), "%s/%s", c->dir, v[i].name) <
			    (int)sizeof(path))
				unlink(path);
		}
	}
	free(v);
}

void symcache__close(struct symcache *c)
{
	char path[PATH_MAX];

	if (!c)
		return;
	if (c->dirty) {
		/* what another process wrote since we read it is kept too */
		file_path(c, path);
		load(c, path);
		if (!save(c))
			evict(c);
	}
	free(c->v);
	free(c->slot);
	free(c);
}
