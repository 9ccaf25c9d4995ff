/* A growable byte buffer for encoding records and events: appends are checked once,
 * at the end, through @failed. And the heap string that grows by appends (a trail
 * of paths tried, a value continued on the next line). */
#include "cstrace/common.h"

#include <stdlib.h>
#include <string.h>

uint8_t *cst_buf_room(struct cst_buf *b, size_t n)
{
	if (b->failed)
		return NULL;
	if (n > SIZE_MAX / 2 - b->len) {
		b->failed = true;
		return NULL;
	}
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		uint8_t *p;

		while (cap < b->len + n)
			cap *= 2;
		p = realloc(b->p, cap);
		if (!p) {
			b->failed = true;
			return NULL;
		}
		b->p = p;
		b->cap = cap;
	}
	b->len += n;
	return b->p + b->len - n;
}

bool cst_buf_put(struct cst_buf *b, const void *bytes, size_t n)
{
	uint8_t *p = n ? cst_buf_room(b, n) : NULL;

	if (p)
		memcpy(p, bytes, n);
	return !b->failed;
}

uint8_t *cst_buf_zeros(struct cst_buf *b, size_t n)
{
	uint8_t *p = cst_buf_room(b, n);

	if (p)
		memset(p, 0, n);
	return p;
}

void cst_buf_put_le32(struct cst_buf *b, uint32_t v)
{
	uint8_t *p = cst_buf_room(b, 4);

	if (p)
		cst_put_le32(p, v);
}

void cst_buf_put_le64(struct cst_buf *b, uint64_t v)
{
	uint8_t *p = cst_buf_room(b, 8);

	if (p)
		cst_put_le64(p, v);
}

void cst_buf_fini(struct cst_buf *b)
{
	free(b->p);
	memset(b, 0, sizeof(*b));
}

int cst_str_append(char **s, const char *sep, const char *more)
{
	size_t old = *s ? strlen(*s) : 0, ls = *s ? strlen(sep) : 0, lm = strlen(more);
	char *n = realloc(*s, old + ls + lm + 1);

	if (!n)
		return -cste_nomem;
	memcpy(n + old, sep, ls);
	memcpy(n + old + ls, more, lm + 1);
	*s = n;
	return 0;
}
