/* Internal to capture/: file access below a system root ("/" or a fixture tree),
 * a thin layer over the boards stage's cst_sysroot taking the root as a string. */
#ifndef CSTRACE_CAPTURE_ROOT_H
#define CSTRACE_CAPTURE_ROOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/** Build "<root><path>" into @buf. Returns 0 or -cste_invalid (too long). */
int cap_path(const char *root, const char *path, char *buf, size_t size);
/** True when @path exists below the root (links followed). */
bool cap_exists(const char *root, const char *path);
/** Read a small text file, newline stripped. Returns length or -cste_not_found,
 *  -cste_permission, -cste_io. */
int cap_read(const char *root, const char *path, char *buf, size_t size);
/** Read a file holding one unsigned number ("0x410cf250", "8"). */
int cap_read_u64(const char *root, const char *path, uint64_t *out);
/** Read a file holding one signed number ("-1"). */
int cap_read_s64(const char *root, const char *path, int64_t *out);
/** Write @text to an existing file. Returns 0 or -cste_not_found, -cste_permission, -cste_io. */
int cap_write(const char *root, const char *path, const char *text);
/** Call @fn for each entry of a directory, sorted with numbers as numbers
 *  ("etm10" after "etm9"). Returns 0, @fn's non-zero value, or -cste_not_found. */
int cap_foreach(const char *root, const char *path, int (*fn)(void *ctx, const char *name),
		void *ctx);

#endif
