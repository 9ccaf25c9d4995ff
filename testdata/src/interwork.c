/* interwork (AArch32): ARM and Thumb functions calling each other, directly (BL/BLX
 * immediate switch state) and through pointers (BLX register, BX LR returns). */
#include <stdio.h>

#define ARM __attribute__((target("arm"), noinline))
#define THUMB __attribute__((target("thumb"), noinline))

THUMB int t_leaf(int x) { return x * 3 + 1; }
ARM int a_leaf(int x) { return x ^ 0x55; }
ARM int a_calls_t(int x) { return t_leaf(x) + 2; }
THUMB int t_calls_a(int x) { return a_leaf(x) + a_calls_t(x); }
static int (*volatile fp[])(int) = {t_leaf, a_leaf, a_calls_t, t_calls_a};

int main(void)
{
	int s = 0;
	for (int i = 0; i < 40; i++)
		s += fp[i % 4](i) & 0xff;
	printf("interwork %d\n", s);
	return 0;
}
