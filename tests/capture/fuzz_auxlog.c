/* libFuzzer target for recorded AUX streams: any bytes as a stream, read event by
 * event, turned into the aux timeline (verdicts and SVG included) and replayed into
 * /dev/null. Must never crash, hang, leak or allocate without bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cstrace/auxlog.h"
#include "cstrace/capture.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static FILE *sink;
	struct cst_aux_timeline *t = NULL;
	struct cst_replay_opts ro = {.sz = sizeof(ro), .output = "/dev/null"};
	struct cst_replay_result res;
	char path[64], verdict[2048];

	/* one in-memory file, rewritten per input: no disk traffic */
	if (fd < 0)
		fd = memfd_create("auxlog-fuzz", 0);
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (fd < 0 || !sink || ftruncate(fd, 0) ||
	    (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (cst_aux_timeline_build(&t, path, NULL) == 0) {
		for (int i = 0; i < cst_aux_timeline_get_info(t).nrings; i++)
			cst_aux_timeline_verdict(t, i, verdict, sizeof(verdict));
		cst_aux_timeline_svg(t, sink);
		cst_aux_timeline_free(t);
	}
	cst_replay_run(path, &ro, &res);
	return 0;
}
