/* SPDX-License-Identifier: GPL-2.0 */
/* may_goto, as clang 19 spells it (libbpf 1.1 has no can_loop): for
 * spin_a.bpf.c and spin_b.bpf.c, as bpf/demo.bpf.c has it.
 */
#ifndef SPIN_H
#define SPIN_H

#define can_loop ({						\
	__label__ l_break, l_continue;				\
	bool ret = true;					\
	asm volatile goto("may_goto %l[l_break]" :::: l_break);	\
	goto l_continue;					\
l_break: ret = false;						\
l_continue:;							\
	ret;							\
})

#endif
