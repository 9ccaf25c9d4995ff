/* libFuzzer target for `cstrace merge`'s readers and writers: an input is a format
 * byte (auto, folded, autofdo, profgen, lcov, json), then up to four files split at
 * lines "%%", written to $TMPDIR and merged into /dev/null, then merged with
 * themselves in the other order. Must never crash, hang, leak or allocate without
 * bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 4

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const enum cst_merge_format fmts[] = {cst_merge_auto,    cst_merge_folded,
						     cst_merge_autofdo, cst_merge_profgen,
						     cst_merge_lcov,    cst_merge_report_json};
	static char paths[MAX_FILES][512];
	static FILE *sink;
	const char *order[2 * MAX_FILES];
	const uint8_t *p, *end = data + size;
	int n = 0;

	if (!size)
		return 0;
	if (!sink)
		sink = fopen("/dev/null", "w");
	if (!paths[0][0])
		for (int i = 0; i < MAX_FILES; i++)
			snprintf(paths[i], sizeof(paths[i]), "%s/merge-fuzz-%d-%d",
				 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), i);
	for (p = data + 1; n < MAX_FILES;) {
		const uint8_t *cut = NULL;
		FILE *f;

		for (const uint8_t *q = p; q + 3 <= end; q++)
			if (q[0] == '%' && q[1] == '%' && q[2] == '\n' && (q == p || q[-1] == '\n')) {
				cut = q;
				break;
			}
		f = fopen(paths[n], "w");
		if (!f)
			return 0;
		fwrite(p, 1, (size_t)((cut ? cut : end) - p), f);
		fclose(f);
		n++;
		if (!cut)
			break;
		p = cut + 3;
	}
	for (int i = 0; i < n; i++) {
		order[i] = paths[i];
		order[n + i] = paths[n - 1 - i];
	}
	cst_merge_files(fmts[data[0] % 6], order, n, sink, NULL);
	cst_merge_files(fmts[data[0] % 6], order + n / 2, n, sink, NULL);
	for (int i = 0; i < n; i++)
		unlink(paths[i]);
	return 0;
}
