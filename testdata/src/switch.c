/* switch: a dense switch the compiler turns into a jump table (an indirect branch
 * through a loaded address), visited in a pseudo-random order. */
#include <stdio.h>

static int __attribute__((noinline)) classify(unsigned x)
{
	switch (x) {
	case 0: return 11;
	case 1: return 23;
	case 2: return 5;
	case 3: return 71;
	case 4: return 13;
	case 5: return 2;
	case 6: return 97;
	case 7: return 41;
	case 8: return 3;
	case 9: return 59;
	case 10: return 31;
	case 11: return 7;
	default: return -1;
	}
}

int main(void)
{
	int s = 0;
	unsigned x = 1;
	for (int i = 0; i < 300; i++) {
		x = x * 1103515245u + 12345u;
		s += classify((x >> 16) % 13);
	}
	printf("switch %d\n", s);
	return 0;
}
