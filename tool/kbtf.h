/* SPDX-License-Identifier: GPL-2.0 */
/* Questions about the running kernel, answered from its BTF. */
#ifndef BPFSTDERR_KBTF_H
#define BPFSTDERR_KBTF_H

#include <stdbool.h>

struct btf;

/* The kernel's BTF, loaded once per process; NULL (errno set) without. */
const struct btf *kbtf(void);
bool kbtf_has_func(const char *name);
/* Number of parameters of a kernel function, or -1 when absent. */
int kbtf_func_arg_cnt(const char *name);
bool kbtf_has_enum_value(const char *enum_name, const char *value);


/* How many values of the enum have substr in their name. */
int kbtf_enum_count_matching(const char *enum_name, const char *substr);
#endif
