/* replug_v1.S, replug_v2.S — one plugin built twice (tests/stacks,
 * stacks::a_library_replaced_at_its_path_and_address_unwinds_by_its_own_tables,
 * after helper-81's demonstration): the same sizes, so that the second,
 * loaded from the same path after the first is closed, lands where the
 * first was, with a's call to pthread_mutex_init returning to the same
 * address in both. In v1 that frame is an ordinary rbp frame; in v2 the
 * call-frame information at that address is another function's and rbp
 * holds 1, so an unwind by v1's tables there would read address 17. The
 * shim captures a stack at each init: with an answer of the unwinder's
 * table lookup kept from v1 (preload/stacks.c, fde_table) the second
 * capture crashed the program. v1: a, then b at 64. */
	.text
	.globl a
	.type a,@function
a:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	lea m(%rip), %rdi
	xor %esi, %esi
	.org 43, 0x90
	call pthread_mutex_init@PLT
	pop %rbp
	.cfi_def_cfa %rsp, 8
	ret
	.cfi_endproc
	.size a, .-a
	.org 64, 0xcc
	.globl b
	.type b,@function
b:
	.cfi_startproc
	ret
	.cfi_endproc
	.size b, .-b
	.org 128, 0xcc
	.bss
	.p2align 6
m:	.zero 64
	.section .note.GNU-stack,"",@progbits
