/* shlib: a dynamically linked program calling into its own shared library. */
#include <stdio.h>

int synth_lib_mix(int a, int b);

int main(void)
{
	int s = 0;
	for (int i = 0; i < 20; i++)
		s += synth_lib_mix(i, 5);
	printf("shlib %d\n", s);
	return 0;
}
