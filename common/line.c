/* Text lines without printf (see struct cst_line in common.h). */
#include <string.h>

#include "cstrace/common.h"

/* Lines are built of many short pieces: fixed-size copies (overlapping at the
 * tail) are inlined loads and stores, where memcpy of a variable length is a call
 * (a tenth of `script` went to it). */
static inline void copy(char *d, const char *s, size_t n)
{
	if (n > 64) {
		memcpy(d, s, n);
	} else if (n > 32) {
		memcpy(d, s, 32);
		memcpy(d + n - 32, s + n - 32, 32);
	} else if (n > 16) {
		memcpy(d, s, 16);
		memcpy(d + n - 16, s + n - 16, 16);
	} else if (n >= 8) {
		memcpy(d, s, 8);
		memcpy(d + n - 8, s + n - 8, 8);
	} else if (n >= 4) {
		memcpy(d, s, 4);
		memcpy(d + n - 4, s + n - 4, 4);
	} else if (n) {
		d[0] = s[0];
		d[n / 2] = s[n / 2];
		d[n - 1] = s[n - 1];
	}
}

void cst_line_mem(struct cst_line *l, const char *s, size_t len)
{
	size_t room = sizeof(l->b) - l->n;

	if (len > room)
		len = room;
	copy(l->b + l->n, s, len);
	l->n += len;
}

void cst_line_end(struct cst_line *l)
{
	if (l->n == sizeof(l->b))
		l->n--;
	l->b[l->n++] = '\n';
}

static void pad(struct cst_line *l, char c, size_t count)
{
	size_t room = sizeof(l->b) - l->n;

	if (count > room)
		count = room;
	memset(l->b + l->n, c, count);
	l->n += count;
}

/* @digits (length @len) aligned in @width: spaces or zeros before, spaces after. */
static void put_aligned(struct cst_line *l, const char *digits, size_t len, int width, char fill)
{
	size_t w = width < 0 ? (size_t)-(int64_t)width : (size_t)width;

	if (width > 0 && w > len)
		pad(l, fill, w - len);
	cst_line_mem(l, digits, len);
	if (width < 0 && w > len)
		pad(l, ' ', w - len);
}

void cst_line_str_padded(struct cst_line *l, const char *s, int width)
{
	if (!s)
		s = "(null)"; /* as glibc's printf prints it */
	put_aligned(l, s, strlen(s), width, ' ');
}

/* Digits of @v in base 10 or 16 at the end of @d; returns where they start. */
static char *digits(uint64_t v, unsigned base, char d[24])
{
	static const char hex[] = "0123456789abcdef";
	char *p = d + 24;

	do
		*--p = hex[v % base];
	while ((v /= base));
	return p;
}

void cst_line_udec(struct cst_line *l, uint64_t v, int width)
{
	char d[24], *p = digits(v, 10, d);

	put_aligned(l, p, (size_t)(d + 24 - p), width, ' ');
}

void cst_line_dec(struct cst_line *l, int64_t v, int width, int zero)
{
	char d[24], *p = digits(v < 0 ? 0 - (uint64_t)v : (uint64_t)v, 10, d);

	if (v < 0 && zero && width > 0) {
		/* printf puts the sign before the zeros */
		cst_line_char(l, '-');
		put_aligned(l, p, (size_t)(d + 24 - p), width - 1, '0');
		return;
	}
	if (v < 0)
		*--p = '-';
	put_aligned(l, p, (size_t)(d + 24 - p), width, zero && width > 0 ? '0' : ' ');
}

void cst_line_hex(struct cst_line *l, uint64_t v, int width, int zero, int alt)
{
	char d[24], *p = digits(v, 16, d);

	if (alt && v) {
		*--p = 'x';
		*--p = '0';
	}
	put_aligned(l, p, (size_t)(d + 24 - p), width, zero && width > 0 ? '0' : ' ');
}
