// SPDX-License-Identifier: GPL-2.0
/* The other definitions of core.c's static names. */
#define noinline __attribute__((noinline))

extern volatile int sink;

static noinline int helper(int x)
{
	int i;

	for (i = 0; i < x; i++)
		sink += i * x;
	sink ^= x;
	return sink * 5 + x;
}

noinline int call_helper_other(int x)
{
	return helper(x) - 1;
}

static noinline int twin(int x)
{
	sink = x;
	return sink;
}

noinline int call_twin_other(int x)
{
	return twin(x) + 1;
}
