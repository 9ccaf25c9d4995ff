/* a64_loop: the bundled sample's program. No libc, so the trace stays tiny: a counted
 * loop calling a function (100 calls, 100 returns), then exit(sum & 0xff) by SVC. */
static long __attribute__((noinline)) add(long a, long b)
{
	return a + b;
}

void _start(void)
{
	long s = 0;
	for (long i = 0; i < 100; i++)
		s = add(s, i);
	register long x0 __asm__("x0") = s & 0xff;
	register long x8 __asm__("x8") = 93; /* exit */
	__asm__ volatile("svc #0" : : "r"(x0), "r"(x8));
	for (;;)
		;
}
