// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "kbtf.h"

static struct btf *vmlinux_btf;
static int vmlinux_btf_err;

static void kbtf_free(void)
{
	btf__free(vmlinux_btf);
}

const struct btf *kbtf(void)
{
	if (vmlinux_btf || vmlinux_btf_err) {
		errno = vmlinux_btf_err;
		return vmlinux_btf;
	}
	vmlinux_btf = btf__load_vmlinux_btf();
	if (!vmlinux_btf) {
		vmlinux_btf_err = errno ? errno : ENOENT;
		return NULL;
	}
	atexit(kbtf_free);
	return vmlinux_btf;
}

static const struct btf_type *func_type(const char *name)
{
	const struct btf *btf = kbtf();
	int id;

	if (!btf)
		return NULL;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	return id > 0 ? btf__type_by_id(btf, id) : NULL;
}

bool kbtf_has_func(const char *name)
{
	return func_type(name) != NULL;
}

int kbtf_func_arg_cnt(const char *name)
{
	const struct btf_type *t = func_type(name);

	if (!t)
		return -1;
	t = btf__type_by_id(kbtf(), t->type);
	return t && btf_is_func_proto(t) ? btf_vlen(t) : -1;
}

typedef bool (*enum_pred)(const char *name, const char *arg);

static int enum_count(const char *enum_name, enum_pred pred, const char *arg)
{
	const struct btf *btf = kbtf();
	const struct btf_type *t;
	const struct btf_enum *e;
	int id, i, n = 0;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, enum_name, BTF_KIND_ENUM);
	if (id <= 0)
		return 0;
	t = btf__type_by_id(btf, id);
	e = btf_enum(t);
	for (i = 0; i < btf_vlen(t); i++)
		n += pred(btf__name_by_offset(btf, e[i].name_off), arg);
	return n;
}

static bool name_equals(const char *name, const char *arg)
{
	return !strcmp(name, arg);
}

static bool name_contains(const char *name, const char *arg)
{
	return strstr(name, arg) != NULL;
}

bool kbtf_has_enum_value(const char *enum_name, const char *value)
{
	return enum_count(enum_name, name_equals, value) > 0;
}

int kbtf_enum_count_matching(const char *enum_name, const char *substr)
{
	return enum_count(enum_name, name_contains, substr);
}
