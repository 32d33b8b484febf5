// SPDX-License-Identifier: GPL-2.0
/* A fake module, built relocatable like a .ko. */
#define __always_inline inline __attribute__((always_inline))
#define noinline __attribute__((noinline))

volatile int mod_sink;

static __always_inline int mod_leaf(int x)
{
	mod_sink += x;
	return mod_sink * 3;
}

noinline int mod_func(int x)
{
	return mod_leaf(x) + mod_leaf(x + 1);
}

noinline int mod_other(int x)
{
	mod_sink = x;
	return mod_func(x) * 2;
}
