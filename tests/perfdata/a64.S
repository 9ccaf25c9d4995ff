// Test program for the ETMv4/ETE perf.data peer test: a 3-iteration loop, a call,
// a return and a branch to a self-loop; perf_gen encodes the trace of one run.
	.text
	.globl _start
	.type _start, %function
_start:
	mov x0, #3
loop:
	sub x0, x0, #1
	cbnz x0, loop
	bl func
	b end
	.type func, %function
func:
	nop
	ret
end:
	b end
