/* The log callback helper and small parsing helpers shared by every stage. */
#include "cstrace/common.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Bytes of @s at @i forming a control character (a C0 byte, DEL, or a C1 code
 * point in UTF-8), or 0. */
static size_t control_len(const unsigned char *s, size_t i)
{
	if (s[i] < 0x20 || s[i] == 0x7f)
		return 1;
	if (s[i] == 0xc2 && s[i + 1] >= 0x80 && s[i + 1] <= 0x9f)
		return 2;
	return 0;
}

/* Bytes of the UTF-8 character at @s, or 0 when it is not valid UTF-8. */
static size_t utf8_len(const unsigned char *s)
{
	size_t n = s[0] >= 0xc2 && s[0] <= 0xdf ? 2
		   : s[0] >= 0xe0 && s[0] <= 0xef ? 3
		   : s[0] >= 0xf0 && s[0] <= 0xf4 ? 4
						  : 0;

	for (size_t k = 1; k < n; k++)
		if (s[k] < 0x80 || s[k] > 0xbf)
			return 0; /* also stops at the NUL */
	return n;
}

const char *cst_printable(const char *s, char *out, size_t size)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t o = 0;

	for (size_t i = 0; u && u[i] && o + 1 < size;) {
		size_t n = control_len(u, i), k;

		if (!n && u[i] < 0x80) {
			out[o++] = (char)u[i++];
			continue;
		}
		if (!n && (k = utf8_len(u + i)) != 0) {
			/* a whole UTF-8 character (a name in any language) as it is */
			if (o + k >= size)
				break;
			memcpy(out + o, u + i, k);
			o += k;
			i += k;
			continue;
		}
		if (!n)
			n = 1; /* a byte that is not UTF-8: escaped */
		for (; n && o + 5 <= size; n--, i++)
			o += (size_t)snprintf(out + o, size - o, "\\x%02x", u[i]);
		if (n)
			break; /* no room for the whole escape */
	}
	out[o] = '\0';
	return out;
}

char *cst_printable_dup(const char *s)
{
	size_t n = strlen(s) * 4 + 1; /* each byte at most \xNN */
	char *out = malloc(n);

	return out ? (char *)cst_printable(s, out, n) : NULL;
}

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

const char *cst_path_base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}
