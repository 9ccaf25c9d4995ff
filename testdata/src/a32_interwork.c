/* a32_interwork: the program of the in-tree ETMv3 fixture (testdata/sample/a32-interwork).
 * No libc, so the trace stays small; ARM and Thumb code, branches of every kind, and
 * system calls and a signal, which the trace shows as exceptions. */
#define ARM __attribute__((target("arm"), noinline))
#define THUMB __attribute__((target("thumb"), noinline))

#define NR_EXIT 1
#define NR_GETPID 20
#define NR_KILL 37
#define NR_WRITE 4
#define NR_RT_SIGACTION 174
#define SIGUSR1 10
#define SA_RESTORER 0x04000000
/* enough trace for a few periodic syncs (the fixture is decoded on threads too) */
#define ROUNDS 3
#define CALLS 100

/* the kernel's struct sigaction on arm, as rt_sigaction takes it */
struct ksigaction {
	void (*handler)(int);
	unsigned long flags;
	void (*restorer)(void);
	unsigned long mask[2];
};

void restorer(void);
/* the signal handler returns here: sigreturn (119: a frame without SA_SIGINFO),
 * in ARM state */
__asm__(".text\n.arm\n.globl restorer\n.type restorer, %function\n"
	"restorer:\n\tmov r7, #119\n\tsvc #0\n");

ARM static long sys4(long nr, long a, long b, long c, long d)
{
	register long r0 __asm__("r0") = a;
	register long r1 __asm__("r1") = b;
	register long r2 __asm__("r2") = c;
	register long r3 __asm__("r3") = d;
	register long r7 __asm__("r7") = nr;

	__asm__ volatile("svc #0" : "+r"(r0) : "r"(r1), "r"(r2), "r"(r3), "r"(r7) : "memory");
	return r0;
}

/* the signal sent to itself: a Thumb handler with a loop, left through the ARM
 * restorer */
static volatile int hits;

THUMB static void handler(int sig)
{
	for (int i = 0; i < 5; i++)
		hits += sig & 3;
}

/* calls directly (BL, BLX immediate) and through pointers (BLX register), returns
 * by BX LR and POP {pc} */
THUMB static int t_leaf(int x) { return x * 3 + 1; }
ARM static int a_leaf(int x) { return x ^ 0x55; }
ARM static int a_calls_t(int x) { return t_leaf(x) + 2; }
THUMB static int t_calls_a(int x) { return a_leaf(x) + a_calls_t(x); }
static int (*volatile fp[])(int) = {t_leaf, a_leaf, a_calls_t, t_calls_a};

ARM void _start(void)
{
	static const char msg[] = "a32_interwork\n";
	struct ksigaction sa = {handler, SA_RESTORER, restorer, {0, 0}};
	int s = 0;

	sys4(NR_RT_SIGACTION, SIGUSR1, (long)&sa, 0, sizeof(sa.mask));
	for (int round = 0; round < ROUNDS; round++) {
		for (int i = 0; i < CALLS; i++)
			s += fp[i & 3](i) & 0xff;
		sys4(NR_KILL, sys4(NR_GETPID, 0, 0, 0, 0), SIGUSR1, 0, 0);
	}
	sys4(NR_WRITE, 1, (long)msg, sizeof(msg) - 1, 0);
	sys4(NR_EXIT, (s + hits) & 0xff, 0, 0, 0);
	for (;;)
		;
}
