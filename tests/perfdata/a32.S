@ Test program for the ETMv3/PTM perf.data peer test: the same control flow as
@ a64.S in A32 (3-iteration loop, a call, a return, a branch to a self-loop).
	.arm
	.text
	.globl _start
	.type _start, %function
_start:
	mov r0, #3
loop:
	subs r0, r0, #1
	bne loop
	bl func
	b end
	.type func, %function
func:
	nop
	bx lr
end:
	b end
