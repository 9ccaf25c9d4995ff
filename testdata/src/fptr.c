/* fptr: calls through a table of function pointers (indirect calls whose targets
 * change every time) and a callback passed to qsort. */
#include <stdio.h>
#include <stdlib.h>

typedef int (*op_fn)(int, int);
static int __attribute__((noinline)) op_add(int a, int b) { return a + b; }
static int __attribute__((noinline)) op_sub(int a, int b) { return a - b; }
static int __attribute__((noinline)) op_mul(int a, int b) { return a * b; }
static int __attribute__((noinline)) op_xor(int a, int b) { return a ^ b; }
static op_fn volatile ops[] = {op_add, op_sub, op_mul, op_xor};

static int cmp(const void *a, const void *b)
{
	return *(const int *)a - *(const int *)b;
}

int main(void)
{
	int acc = 1, v[32];
	for (int i = 0; i < 200; i++)
		acc = ops[(i * 7) % 4](acc, i) & 0xffff;
	for (int i = 0; i < 32; i++)
		v[i] = (i * 37) % 32;
	qsort(v, 32, sizeof(v[0]), cmp);
	printf("fptr %d %d\n", acc, v[31]);
	return 0;
}
