/* replug_v2.S — replug_v1.S says what these are for. v2: b (whose
 * call-frame information covers v1's a's prologue), then a at 16, whose
 * call returns where v1's did, with rbp 1 and its CFA on the stack
 * pointer. */
	.text
	.globl b
	.type b,@function
b:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov %rsp, %rbp
	.cfi_def_cfa_register %rbp
	ud2
	.cfi_endproc
	.size b, .-b
	.org 16, 0xcc
	.globl a
	.type a,@function
a:
	.cfi_startproc
	push %rbp
	.cfi_def_cfa_offset 16
	.cfi_offset %rbp, -16
	mov $1, %ebp
	lea m(%rip), %rdi
	xor %esi, %esi
	.org 43, 0x90
	call pthread_mutex_init@PLT
	pop %rbp
	.cfi_def_cfa_offset 8
	ret
	.cfi_endproc
	.size a, .-a
	.org 128, 0xcc
	.bss
	.p2align 6
m:	.zero 64
	.section .note.GNU-stack,"",@progbits
