/* libFuzzer target for the board profile parser: any bytes as a profile file, loaded,
 * then used as `decode --board` and `doctor` use one: its raw-dump sources under each
 * trace-ID policy, device look-ups, per-CPU trace IDs, and the fixture tree written
 * from it and the doctor's checks run on that tree (every name and number in the
 * profile ends up in a path, a file or a finding). */
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cstrace/boards.h"
#include "../../boards/board_int.h" /* tests read the profile's fields */

static void quiet(void *ctx, enum cst_log_level level, const char *msg)
{
}

static void no_check(void *ctx, const struct cst_check *check)
{
}

static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	return remove(path);
}

static void use(const struct cst_board *b, const uint8_t *data, size_t size)
{
	struct cst_source_cfg cfgs[8];
	struct cst_board_sources_opts o = {.sz = sizeof(o), .with_stm = true};
	struct cst_doctor_opts d = {.sz = sizeof(d), .board = b};
	struct cst_sysroot *root;
	const char *tmp = getenv("TMPDIR");
	char dir[PATH_MAX];

	cst_board_sources(b, NULL, cfgs, 8);
	cst_board_sources(b, &o, cfgs, 8);
	o.override_policy = true;
	o.cpu_mask = size ? data[size - 1] : 0;
	for (int p = 0; p < 3; p++) {
		o.policy = (enum cst_trace_id_policy)p;
		cst_board_sources(b, &o, cfgs, 8);
	}
	for (int cpu = -1; cpu < 70; cpu++)
		cst_board_trace_id(b, cpu);
	for (int i = 0; i < b->ndevices; i++) {
		cst_board_device_by_base(b, b->devices[i].base);
		cst_board_device_by_name(b, b->devices[i].name);
	}
	cst_board_device_by_name(b, "");
	/* the fixture tree: a fresh directory per input, removed after (under $TMPDIR,
	 * which fuzz_run.sh removes with what a crashed job left) */
	snprintf(dir, sizeof(dir), "%s/cst-fuzz-board.XXXXXX", tmp ? tmp : "/tmp");
	if (!mkdtemp(dir))
		return;
	if (cst_board_fixture_write(b, dir, NULL) == 0 && cst_sysroot_alloc(&root, dir) == 0) {
		cst_doctor_run(root, &d, no_check, NULL);
		cst_sysroot_free(root);
	}
	if (nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS))
		abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct cst_log log = {quiet, NULL};
	static int fd = -1;
	struct cst_board *b = NULL;
	char path[64];

	/* one in-memory file, rewritten per input */
	if (fd < 0)
		fd = memfd_create("board-fuzz.ini", 0);
	if (fd < 0 || ftruncate(fd, 0) || (size && pwrite(fd, data, size, 0) != (ssize_t)size))
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (cst_board_load(&b, path, &log) == 0)
		use(b, data, size);
	cst_board_free(b);
	return 0;
}
