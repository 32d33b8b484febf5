/* SPDX-License-Identifier: GPL-2.0 */
/* Assembly functions: one plain, one named like the kernel's page-fault
 * entry, after which a frame is the trapping instruction itself.
 */
	.text
	.globl asm_func
	.type asm_func, @function
asm_func:
	nop
	nop
	xor %eax, %eax
	ret
	.size asm_func, .-asm_func

	.globl asm_exc_page_fault
	.type asm_exc_page_fault, @function
asm_exc_page_fault:
	nop
	call asm_func
	ret
	.size asm_exc_page_fault, .-asm_exc_page_fault

	.section .note.GNU-stack,"",@progbits
