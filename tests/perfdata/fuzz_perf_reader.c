/* libFuzzer target for the perf.data reader: any bytes as a file, opened, every
 * record iterated, cs_etm info parsed. Must never crash, hang or leak. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "cstrace/perfdata.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int fd = -1;
	struct cst_perf_reader *r = NULL;
	struct cst_perf_record rec;
	struct cst_perf_etm_info info;
	char path[64];
	int n = 0;

	/* one in-memory file, rewritten per input: no disk traffic */
	if (fd < 0)
		fd = memfd_create("perfdata-fuzz", 0);
	if (fd < 0 || ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (cst_perf_reader_open(&r, path, NULL))
		return 0;
	while (cst_perf_reader_next(r, &rec) == 0 && n++ < 100000)
		if (rec.type == cst_perf_rec_auxtrace_info) {
			if (!cst_perf_etm_info_parse(&info, rec.u.auxtrace_info.priv,
						     rec.u.auxtrace_info.npriv, NULL))
				cst_perf_etm_info_fini(&info);
		}
	if (!cst_perf_reader_etm_info(r, &info))
		cst_perf_etm_info_fini(&info);
	cst_perf_reader_free(r);
	return 0;
}
