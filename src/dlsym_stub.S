/*
 * dlsym, as the shim exports it.
 *
 * glibc resolves RTLD_NEXT and RTLD_DEFAULT relative to the object that
 * called dlsym, found from dlsym's return address.  The stub asks
 * cbt_dlsym_hook whether the lookup is one the shim answers; if not, it
 * jumps (not calls) to the real dlsym, so the return address glibc sees is
 * still the original caller's and every other lookup behaves exactly as
 * without the shim.
 */
#if defined(__x86_64__)
	.text
	.globl	dlsym
	.type	dlsym, @function
dlsym:
	.cfi_startproc
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp		/* 16-byte stack alignment for the call */
	.cfi_adjust_cfa_offset 8
	call	cbt_dlsym_hook
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	1f
	ret
1:
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	cbt_real_dlsym_fn	/* the real dlsym's address */
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	testq	%rax, %rax
	jz	2f
	jmp	*%rax
2:
	ret				/* no real dlsym at all: NULL */
	.cfi_endproc
	.size	dlsym, .-dlsym
	.section .note.GNU-stack,"",@progbits
#endif
