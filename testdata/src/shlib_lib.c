/* shlib_lib: the shared library of the shlib program (calls through the PLT into
 * code mapped by ld.so with mmap, at an address only the QEMU log tells). */
int synth_lib_mix(int a, int b);

int synth_lib_mix(int a, int b)
{
	int r = 0;
	for (int i = 0; i < b; i++)
		r = r * 31 + a + i;
	return r;
}
