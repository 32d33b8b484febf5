// SPDX-License-Identifier: GPL-2.0
/* A fake kernel for the symbolizer tests: inline chains, a static function
 * whose name another file also defines (with another size), and one whose
 * twin has the same size, so that only the candidates can be listed.
 */
#define __always_inline inline __attribute__((always_inline))
#define noinline __attribute__((noinline))

volatile int sink;

static __always_inline int leaf(int x)
{
	sink += x;
	return x * 7 + sink;
}

static __always_inline int mid(int x)
{
	int r = leaf(x + 1);

	return r * 3 + leaf(r);
}

noinline int outer(int x)
{
	int a = mid(x);

	sink = a;
	return a + mid(x * 2);
}

static noinline int helper(int x)
{
	sink = x;
	return x + 1;
}

noinline int call_helper_core(int x)
{
	return helper(x) * 2;
}

static noinline int twin(int x)
{
	sink = x;
	return sink;
}

noinline int call_twin_core(int x)
{
	return twin(x) + 1;
}

extern int call_helper_other(int x);
extern int call_twin_other(int x);
extern void asm_func(void);
extern void asm_exc_page_fault(void);

void start(void)
{
	outer(1);
	call_helper_core(2);
	call_helper_other(3);
	call_twin_core(4);
	call_twin_other(5);
	asm_func();
	asm_exc_page_fault();
	for (;;)
		;
}
