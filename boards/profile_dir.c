/* Where board profiles live: the default directory (the source tree for a binary
 * in the build tree, else the installed data directory), finding one by name,
 * and walking them all. */
#include "cstrace/boards.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef CSTRACE_BOARDS_SRC_DIR
#define CSTRACE_BOARDS_SRC_DIR ""
#endif
#ifndef CSTRACE_BOARDS_INSTALL_DIR
#define CSTRACE_BOARDS_INSTALL_DIR "/usr/local/share/cstrace/boards"
#endif
#ifndef CSTRACE_BUILD_DIR
#define CSTRACE_BUILD_DIR ""
#endif

const char *cst_boards_default_dir(void)
{
	static const char *const src = CSTRACE_BOARDS_SRC_DIR;
	static const char *const build = CSTRACE_BUILD_DIR;
	const char *env = getenv("CSTRACE_BOARDS_DIR");
	char exe[PATH_MAX];
	ssize_t n;

	if (env && *env)
		return env;
	/* A binary inside the build tree reads the source profiles, so that edits show
	 * without installing; an installed one reads <datadir>/cstrace/boards. */
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0 && build[0] && src[0]) {
		size_t bl = strlen(build);

		exe[n] = '\0';
		if (!strncmp(exe, build, bl) && exe[bl] == '/' && access(src, R_OK) == 0)
			return src;
	}
	return CSTRACE_BOARDS_INSTALL_DIR;
}

int cst_board_find(struct cst_board **out, const char *dir, const char *name,
		   const struct cst_log *log)
{
	char path[PATH_MAX];
	int n;

	if (!out || !name || !*name || strchr(name, '/'))
		return -cste_invalid;
	if (!dir)
		dir = cst_boards_default_dir();
	n = snprintf(path, sizeof(path), "%s/%s.ini", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -cste_nomem;
	if (access(path, F_OK) != 0) {
		cst_logf(log, cst_log_error, "no board profile '%s' in %s (see 'cstrace boards list')",
			 name, dir);
		return -cste_not_found;
	}
	return cst_board_load(out, path, log);
}

struct foreach_ctx {
	cst_sysroot_dir_fn fn;
	void *ctx;
};

static int foreach_ini(void *ctx, const char *name)
{
	struct foreach_ctx *f = ctx;
	size_t n = strlen(name);
	char base[256];

	if (n <= 4 || n >= sizeof(base) || strcmp(name + n - 4, ".ini"))
		return 0;
	memcpy(base, name, n - 4);
	base[n - 4] = '\0';
	return f->fn(f->ctx, base);
}

int cst_boards_foreach(const char *dir, cst_sysroot_dir_fn fn, void *ctx)
{
	struct foreach_ctx f = {fn, ctx};
	struct cst_sysroot *root;
	char abs[PATH_MAX];
	int ret;

	if (!fn)
		return -cste_invalid;
	if (!dir)
		dir = cst_boards_default_dir();
	/* Reuse the sorted directory walk: a relative dir is made absolute first. */
	if (dir[0] != '/') {
		if (!getcwd(abs, sizeof(abs)) || strlen(abs) + 1 + strlen(dir) >= sizeof(abs))
			return -cste_nomem;
		strcat(abs, "/");
		strcat(abs, dir);
	} else {
		snprintf(abs, sizeof(abs), "%s", dir);
	}
	ret = cst_sysroot_alloc(&root, "/");
	if (ret < 0)
		return ret;
	ret = cst_sysroot_foreach(root, abs, foreach_ini, &f);
	cst_sysroot_free(root);
	return ret;
}
