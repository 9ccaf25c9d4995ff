/* The kernel's build configuration, as the doctor reads it through a sysroot. */
#include "board_int.h"

#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

/* Read the kernel config, gzipped (/proc/config.gz) or plain (/boot/config-REL):
 * zlib reads both. Returns a malloc'ed text or NULL; @where names the file. */
char *brd_kconfig_read(const struct cst_sysroot *root, char *where, size_t wsize)
{
	char rel[128], path[256];
	const char *tries[2] = {"/proc/config.gz", path};

	if (cst_sysroot_read(root, "/proc/sys/kernel/osrelease", rel, sizeof(rel)) < 0) {
		struct utsname u;

		/* Only the live system may fall back to uname: a fixture has its own. */
		if (!cst_sysroot_is_live(root) || uname(&u) < 0)
			rel[0] = '\0';
		else
			snprintf(rel, sizeof(rel), "%s", u.release);
	}
	snprintf(path, sizeof(path), "/boot/config-%s", rel);
	for (int i = 0; i < (rel[0] ? 2 : 1); i++) {
		int fd = cst_sysroot_open(root, tries[i], O_RDONLY);
		gzFile gz;
		char *text = NULL;
		size_t len = 0, cap = 0;
		int n;

		if (fd < 0)
			continue;
		gz = gzdopen(fd, "rb");
		if (!gz) {
			close(fd);
			continue;
		}
		do {
			if (CST_GROW(text, cap, len + 65536) < 0) {
				free(text);
				gzclose(gz);
				return NULL;
			}
			n = gzread(gz, text + len, (unsigned)(cap - len - 1));
			if (n > 0)
				len += (size_t)n;
		} while (n > 0);
		gzclose(gz);
		if (n < 0 || !text) {
			free(text);
			continue;
		}
		text[len] = '\0';
		snprintf(where, wsize, "%s", tries[i]);
		return text;
	}
	return NULL;
}

/* The value of CONFIG_X in @text ("y", "m", "0x10"), or NULL if not set. */
const char *brd_kconfig_value(const char *text, const char *name, char *buf, size_t size)
{
	size_t nl = strlen(name);

	for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		if (!strncmp(p, name, nl) && p[nl] == '=') {
			const char *v = p + nl + 1;
			size_t l = strcspn(v, "\n");

			snprintf(buf, size, "%.*s", (int)l, v);
			return buf;
		}
	}
	return NULL;
}
