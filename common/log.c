/* The log callback helper and small parsing helpers shared by every stage. */
#include "cstrace/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cst_logf(const struct cst_log *log, enum cst_log_level level, const char *fmt, ...)
{
	char line[2048]; /* the longest messages explain a fix with the settings to change */
	va_list ap;

	if (!log || !log->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log->fn(log->ctx, level, line);
}

void cst_vlogf_at(const struct cst_log *log, enum cst_log_level level, const char *path,
		  uint64_t offset, const char *fmt, va_list ap)
{
	char msg[768];

	if (!log || !log->fn)
		return;
	vsnprintf(msg, sizeof(msg), fmt, ap);
	cst_logf(log, level, "%s: offset %llu: %s", path, (unsigned long long)offset, msg);
}

int cst_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	unsigned long long v;

	if (!s || !out)
		return -cste_invalid;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '\0' || *s == '-')
		return -cste_format;
	errno = 0;
	v = strtoull(s, &end, 0);
	if (errno || end == s)
		return -cste_format;
	while (*end == ' ' || *end == '\t')
		end++;
	if (*end != '\0')
		return -cste_format;
	*out = v;
	return 0;
}

int cst_parse_file_at(const char *spec, char *path, size_t size, uint64_t *addr)
{
	const char *at;
	size_t n;

	if (!spec || !path || !size || !addr)
		return -cste_invalid;
	*addr = 0;
	at = strrchr(spec, '@');
	n = at ? (size_t)(at - spec) : strlen(spec);
	if (n >= size)
		return -cste_invalid;
	memcpy(path, spec, n);
	path[n] = '\0';
	if (!at)
		return 0;
	return cst_parse_u64(at + 1, addr) < 0 ? -cste_invalid : 1;
}
