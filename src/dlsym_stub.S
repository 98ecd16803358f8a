/* SPDX-License-Identifier: MIT */
/*
 * dlsym, as the shim exports it.
 *
 * glibc resolves RTLD_NEXT and RTLD_DEFAULT relative to the object that
 * called dlsym, found from dlsym's return address.  The stub asks
 * cbt_dlsym_hook whether the lookup is one the shim answers (1: it finds
 * nothing, NULL is returned); if not, it
 * jumps (not calls) to the dlsym that comes after the shim (glibc's, or
 * another library's wrapper), so the return address glibc sees is still the
 * original caller's and every other lookup behaves exactly as without the
 * shim.
 *
 * It is exported under glibc's versions of dlsym (src/libcubatchtrace.map):
 * dlsym@@GLIBC_2.34, which unversioned references and programs built with
 * glibc 2.34 or later bind, and dlsym@GLIBC_2.2.5, which older programs
 * bind.  A versioned lookup (dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34"), what
 * careful dlsym wrappers loaded before the shim forward with) skips
 * unversioned definitions, so without these the shim's would be passed over.
 */
#if defined(__x86_64__)
/* Call fn with dlsym's two arguments (handle, name) kept for what follows:
 * saved around the call, the stack 16-byte aligned for it. */
	.macro CALL_KEEPING_ARGS fn
	pushq	%rdi
	.cfi_adjust_cfa_offset 8
	pushq	%rsi
	.cfi_adjust_cfa_offset 8
	subq	$8, %rsp
	.cfi_adjust_cfa_offset 8
	call	\fn
	addq	$8, %rsp
	.cfi_adjust_cfa_offset -8
	popq	%rsi
	.cfi_adjust_cfa_offset -8
	popq	%rdi
	.cfi_adjust_cfa_offset -8
	.endm

	.text
	.globl	cbt_dlsym_new
	.type	cbt_dlsym_new, @function
	.globl	cbt_dlsym_old
	.type	cbt_dlsym_old, @function
	.symver	cbt_dlsym_new, dlsym@@GLIBC_2.34
	.symver	cbt_dlsym_old, dlsym@GLIBC_2.2.5
cbt_dlsym_new:
cbt_dlsym_old:
	.cfi_startproc
	CALL_KEEPING_ARGS cbt_dlsym_hook
	testq	%rax, %rax
	jz	1f
	cmpq	$1, %rax		/* CBT_DLSYM_NOT_FOUND (doors.c): NULL */
	jne	3f
	xorl	%eax, %eax
3:
	ret
1:
	CALL_KEEPING_ARGS cbt_next_dlsym_fn	/* the next dlsym's address */
	testq	%rax, %rax
	jz	2f
	jmp	*%rax
2:
	ret				/* no real dlsym at all: NULL */
	.cfi_endproc
	.size	cbt_dlsym_new, .-cbt_dlsym_new
	.size	cbt_dlsym_old, .-cbt_dlsym_old
	.section .note.GNU-stack,"",@progbits
#endif
