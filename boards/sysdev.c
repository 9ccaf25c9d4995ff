/* Live-system discovery: list /sys/bus/coresight/devices and recover each device's
 * base address, because every name but etmN follows probe order and can change. */
#include "cstrace/boards.h"

#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "20010000.etf" -> 0x20010000: AMBA devices are named "<base>.<node name>". */
static bool amba_name_base(const char *comp, size_t len, uint64_t *base)
{
	size_t i = 0;
	uint64_t v = 0;

	while (i < len && isxdigit((unsigned char)comp[i]) && i < 16) {
		int c = tolower((unsigned char)comp[i]);

		v = (v << 4) | (uint64_t)(c <= '9' ? c - '0' : c - 'a' + 10);
		i++;
	}
	if (i == 0 || i >= len || comp[i] != '.' || i + 1 == len)
		return false;
	*base = v;
	return true;
}

/* "/soc/etf@20010000" -> 0x20010000 */
static bool of_fullname_base(const char *name, uint64_t *base)
{
	const char *at = strrchr(name, '@');
	char *end;
	unsigned long long v;

	if (!at || !isxdigit((unsigned char)at[1]))
		return false;
	v = strtoull(at + 1, &end, 16);
	if (*end && *end != '\n' && *end != ',')
		return false;
	*base = v;
	return true;
}

int cst_sys_device_base(const struct cst_sysroot *root, const char *sysname, uint64_t *base)
{
	char link[PATH_MAX], real[PATH_MAX], uevent[4096], path[PATH_MAX + 16];
	int n;

	if (!root || !sysname || !base || strchr(sysname, '/'))
		return -cste_invalid;
	snprintf(link, sizeof(link), "/sys/bus/coresight/devices/%s", sysname);
	n = cst_sysroot_realpath(root, link, real, sizeof(real));
	if (n < 0)
		return n;
	/* The nearest "<hex>.<name>" component above the device is its AMBA parent. */
	for (char *end = real + n; end > real;) {
		char *slash = end - 1;

		while (slash > real && *slash != '/')
			slash--;
		if (amba_name_base(slash + 1, (size_t)(end - slash - 1), base))
			return 0;
		end = slash;
	}
	/* Platform devices may be named otherwise: ask the parent's DT path. */
	{
		char *slash = strrchr(real, '/');

		if (!slash || slash == real)
			return -cste_not_found;
		*slash = '\0';
		snprintf(path, sizeof(path), "%s/uevent", real);
		if (cst_sysroot_read(root, path, uevent, sizeof(uevent)) < 0)
			return -cste_not_found;
		for (char *line = strtok(uevent, "\n"); line; line = strtok(NULL, "\n"))
			if (!strncmp(line, "OF_FULLNAME=", 12) && of_fullname_base(line + 12, base))
				return 0;
	}
	return -cste_not_found;
}

struct list_ctx {
	const struct cst_sysroot *root;
	struct cst_sys_device *out;
	int max, n;
};

static int list_one(void *ctx, const char *name)
{
	struct list_ctx *l = ctx;
	char path[PATH_MAX];
	int64_t cpu;

	if (l->n < l->max) {
		struct cst_sys_device *d = &l->out[l->n];

		memset(d, 0, sizeof(*d));
		snprintf(d->sysname, sizeof(d->sysname), "%s", name);
		snprintf(path, sizeof(path), "/sys/bus/coresight/devices/%s", name);
		if (cst_sysroot_realpath(l->root, path, d->path, sizeof(d->path)) < 0)
			d->path[0] = '\0'; /* a dangling link: no device directory */
		if (cst_sys_device_base(l->root, name, &d->base) < 0)
			d->base = UINT64_MAX;
		snprintf(path, sizeof(path), "/sys/bus/coresight/devices/%s/cpu", name);
		d->cpu = cst_sysroot_read_s64(l->root, path, &cpu) == 0 ? (int)cpu : -1;
	}
	l->n++;
	return 0;
}

int cst_sys_devices(const struct cst_sysroot *root, struct cst_sys_device *out, int max)
{
	struct list_ctx l = {root, out, max, 0};
	int err;

	if (!root || max < 0 || (!out && max > 0))
		return -cste_invalid;
	err = cst_sysroot_foreach(root, "/sys/bus/coresight/devices", list_one, &l);
	if (err < 0)
		return err;
	return l.n;
}

struct by_base_ctx {
	const struct cst_sysroot *root;
	uint64_t base;
	char *name;
	size_t size;
};

static int by_base_one(void *ctx, const char *name)
{
	struct by_base_ctx *c = ctx;
	uint64_t base;

	if (cst_sys_device_base(c->root, name, &base) < 0 || base != c->base)
		return 0;
	snprintf(c->name, c->size, "%s", name);
	return 1;
}

int cst_sys_device_by_base(const struct cst_sysroot *root, uint64_t base, char *sysname,
			   size_t size)
{
	struct by_base_ctx c = {root, base, sysname, size};
	int ret;

	if (!root || !sysname || !size)
		return -cste_invalid;
	ret = cst_sysroot_foreach(root, "/sys/bus/coresight/devices", by_base_one, &c);
	if (ret < 0)
		return ret;
	return ret == 1 ? 0 : -cste_not_found;
}
