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

int symbolizer__learn_bpf(struct symbolizer *s, const char *tag, unsigned long long off,
			  const struct sym_loc *loc)
{
	return bpfsym__learn(s->bpf, tag, off, loc);
}

bool symbolizer__knows_bpf(struct symbolizer *s, const char *tag, unsigned long long off)
{
	return bpfsym__knows(s->bpf, tag, off);
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
bool frame_is_exact(const struct fault *f, int i)
{
	const char *prev = i > 0 ? f->frames[i - 1].sym : NULL;

	return prev && (!strncmp(prev, "asm_exc_", 8) || !strncmp(prev, "asm_sysvec_", 11) ||
			!strcmp(prev, "asm_common_interrupt"));
}

int symbolizer__frame(struct symbolizer *s, const struct fault *f, int i, struct sym_loc *loc)
{
	const struct frame *fr = &f->frames[i];

	memset(loc, 0, sizeof(*loc));
	if (!fr->sym || !fr->has_off)
		return -ENOENT;
	if (fr->is_bpf)
		return bpfsym__frame(s->bpf, fr, loc);
	return ksyms__frame(s->kernel, f, i, loc);
}
