// SPDX-License-Identifier: GPL-2.0
/* The symbolizer: BPF frames go to bpfsym.c, kernel frames to ksym.c; the
 * strings both hand out live in one pool, as long as the symbolizer.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "bpfsym.h"
#include "ksym.h"
#include "symbolize.h"

struct symbolizer {
	struct strpool strings;
	struct bpfsym *bpf;
	struct ksyms *kernel;
};

int symbolizer__new(struct symbolizer **out, const struct symbolizer_opts *o)
{
	struct symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return -ENOMEM;
	s->bpf = bpfsym__new(&s->strings);
	s->kernel = ksyms__new(o, &s->strings);
	if (!s->bpf || !s->kernel) {
		symbolizer__free(s);
		return -ENOMEM;
	}
	*out = s;
	return 0;
}

void symbolizer__free(struct symbolizer *s)
{
	if (!s)
		return;
	bpfsym__free(s->bpf);
	ksyms__free(s->kernel);
	strpool__fini(&s->strings);
	free(s);
}

void symbolizer__warm(struct symbolizer *s, const struct fault *f)
{
	bpfsym__warm(s->bpf, f);
}

int symbolizer__learn_bpf(struct symbolizer *s, const struct prog_ident *owner, const char *tag,
			  unsigned long long off, const struct sym_loc *loc)
{
	return bpfsym__learn(s->bpf, owner, tag, off, loc);
}

bool symbolizer__knows_bpf(struct symbolizer *s, const struct prog_ident *owner, const char *tag,
			   unsigned long long off)
{
	return bpfsym__knows(s->bpf, owner, tag, off);
}

const char *symbolizer__notice(const struct symbolizer *s)
{
	return ksyms__notice(s->kernel);
}

const char *symbolizer__prepare(struct symbolizer *s)
{
	ksyms__prepare(s->kernel);
	return ksyms__notice(s->kernel);
}

/* The frame after an exception entry is the instruction that trapped. */
static const char *last_component(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/* The kernel prints the file name its line info holds; what we read may
 * have directories where it has none, or the other way round: the last
 * components and the line number decide.
 */
static bool kernel_says(const struct frame *fr, const struct sym_site *site)
{
	return site->file && site->line == fr->src_line &&
	       !strcmp(last_component(site->file), last_component(fr->src_file));
}

/* The kernel's line under a BPF frame is the authority (it knew the
 * program): among our candidates the one it names is kept; where ours
 * differs, or none of ours is it, the kernel's line replaces ours, and
 * ours is kept aside to be shown as what the line info said.
 */
static void heed_kernel_line(struct symbolizer *s, const struct frame *fr, struct sym_loc *loc)
{
	int i;

	for (i = 0; i < loc->site_cnt && i < SYM_INLINE_MAX; i++) {
		if (!kernel_says(fr, &loc->sites[i]))
			continue;
		if (loc->candidates > 1) {
			loc->sites[0] = loc->sites[i];
			loc->site_cnt = 1;
			loc->candidates = 0;
			loc->src_text = strpool__keep(&s->strings, fr->src_text);
		}
		return;
	}
	if (loc->candidates <= 1)
		loc->ours = loc->sites[0];
	loc->kernel_line = true;
	loc->candidates = 0;
	loc->site_cnt = 1;
	loc->sites[0].func = strpool__keep(&s->strings, fr->func);
	loc->sites[0].file = strpool__keep(&s->strings, fr->src_file);
	loc->sites[0].line = fr->src_line;
	loc->sites[0].col = 0;
	loc->src_text = strpool__keep(&s->strings, fr->src_text);
}

int symbolizer__bpf_line_info(struct symbolizer *s, const struct prog_ident *owner,
			      const struct frame *fr, struct sym_loc *loc)
{
	memset(loc, 0, sizeof(*loc));
	if (!fr->is_bpf || !fr->has_off)
		return -ENOENT;
	return bpfsym__frame(s->bpf, owner, fr, loc);
}

int symbolizer__frame(struct symbolizer *s, const struct prog_ident *owner, const struct fault *f,
		      int i, struct sym_loc *loc)
{
	const struct frame *fr = &f->frames[i];
	int err;

	memset(loc, 0, sizeof(*loc));
	if (!fr->sym || !fr->has_off)
		return -ENOENT;
	if (!fr->is_bpf)
		return ksyms__frame(s->kernel, f, i, loc);
	err = bpfsym__frame(s->bpf, owner, fr, loc);
	/* RFC frames name a file too, but not from the program's line info */
	if (!err && fr->src_file && fr->src_text && !f->rfc_format)
		heed_kernel_line(s, fr, loc);
	return err;
}
