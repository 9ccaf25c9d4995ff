/* The log callback helper and small parsing helpers shared by every stage. */
#include "cstrace/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

void cst_logf(const struct cst_log *log, enum cst_log_level level, const char *fmt, ...)
{
	char line[1024];
	va_list ap;

	if (!log || !log->fn)
		return;
	va_start(ap, fmt);
	vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	log->fn(log->ctx, level, line);
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
