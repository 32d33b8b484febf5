/* SPDX-License-Identifier: GPL-2.0 */
/* can_loop: a may_goto loop condition, as clang 19 spells it (libbpf 1.1's
 * headers have no can_loop or cond_break). For the programs that spin
 * until the kernel's may_goto timeout fires.
 */
#ifndef BPFSTDERR_CAN_LOOP_H
#define BPFSTDERR_CAN_LOOP_H

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
