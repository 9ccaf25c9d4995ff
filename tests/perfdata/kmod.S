// A kernel module's code for the perf.data module test (kmod.sh): the same run
// as a64.S (a 3-iteration loop, a call, a return, a branch to a self-loop), but
// built as a module is (ld -r: ET_REL, sections placed by the kernel at load),
// with func in a section of its own, so that the call is a relocation, and
// code in .init.text, which the kernel does not place with the rest.
	.text
	.globl _start
	.type _start, %function
_start:
	mov x0, #3
loop:
	sub x0, x0, #1
	cbnz x0, loop
	bl func
after_bl:
	b end
end:
	b end
	.size _start, . - _start

	.section .text.unlikely, "ax", %progbits
	.p2align 5
	.globl func
	.type func, %function
func:
	nop
	ret
	.size func, . - func

	.section .init.text, "ax", %progbits
	.globl init_module
	.type init_module, %function
init_module:
	bl func
	ret
	.size init_module, . - init_module
