/* libFuzzer target for the ftrace text reader of `aux --ftrace` (where a key with no
 * value once sent field() past the line's NUL): any bytes as the text, read alone
 * and paired with a perf.data's AUX records (FUZZ_PERF, written by the run script),
 * with and without a ring size, then drawn as SVG into /dev/null. Must never
 * crash, hang, leak or allocate without bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cstrace/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void one(const char *path, const struct cst_aux_report *r, uint64_t aux_size, FILE *sink)
{
	struct cst_aux_ftrace *f = NULL;

	if (cst_aux_ftrace_build(&f, path, r, NULL, aux_size, NULL) < 0)
		return;
	for (uint64_t i = 0; i < cst_aux_ftrace_nevents(f); i++)
		(void)cst_aux_ftrace_event(f, i);
	for (int i = 0; i < cst_aux_ftrace_nrings(f); i++)
		(void)cst_aux_ftrace_ring(f, i);
	cst_aux_ftrace_svg(f, sink);
	cst_aux_ftrace_free(f);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static FILE *sink;
	static struct cst_aux_report *perf;
	static int loaded;
	char path[64];

	/* one in-memory file, rewritten per input: no disk traffic */
	if (fd < 0)
		fd = memfd_create("ftrace-fuzz", 0);
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!loaded++ && getenv("FUZZ_PERF"))
		cst_aux_report_build(&perf, getenv("FUZZ_PERF"), 16384, NULL);
	if (fd < 0 || !sink || ftruncate(fd, 0) ||
	    (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	one(path, NULL, 0, sink);
	one(path, NULL, 16384, sink);
	if (perf)
		one(path, perf, 16384, sink);
	return 0;
}
