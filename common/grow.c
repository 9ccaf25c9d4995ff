/* Growable arrays and options structs: the two small shapes every library repeats,
 * written once. */
#include "cstrace/common.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int cst_grow(void *arrp, size_t *cap, size_t need, size_t elem_size)
{
	void **arr = arrp;
	size_t ncap;
	void *n;

	if (!arr || !cap || !elem_size)
		return -cste_nomem;
	if (need <= *cap && (*arr || need == 0))
		return 0;
	ncap = *cap ? *cap : 16;
	while (ncap < need) {
		if (ncap > SIZE_MAX / 2)
			return -cste_nomem;
		ncap *= 2;
	}
	if (ncap > SIZE_MAX / elem_size)
		return -cste_nomem;
	n = realloc(*arr, ncap * elem_size);
	if (!n)
		return -cste_nomem;
	if (ncap > *cap)
		memset((char *)n + *cap * elem_size, 0, (ncap - *cap) * elem_size);
	*arr = n;
	*cap = ncap;
	return 0;
}

int cst_opts_load(void *dst, size_t dst_sz, const void *src, const char *what,
		  const struct cst_log *log)
{
	size_t sz, copy;

	if (!dst || dst_sz < sizeof(size_t))
		return -cste_invalid;
	memset(dst, 0, dst_sz);
	*(size_t *)dst = dst_sz;
	if (!src)
		return 0;
	memcpy(&sz, src, sizeof(sz));
	if (sz == 0)
		sz = dst_sz;
	if (sz < sizeof(size_t)) {
		cst_logf(log, cst_log_error, "%s: size %zu is smaller than its size field", what, sz);
		return -cste_invalid;
	}
	for (size_t i = dst_sz; i < sz; i++) {
		if (((const unsigned char *)src)[i]) {
			cst_logf(log, cst_log_error,
				 "%s: byte %zu is set, but this library knows only %zu bytes", what,
				 i, dst_sz);
			return -cste_invalid;
		}
	}
	copy = sz < dst_sz ? sz : dst_sz;
	memcpy((char *)dst + sizeof(size_t), (const char *)src + sizeof(size_t),
	       copy - sizeof(size_t));
	return 0;
}

int cst_index_grow(uint32_t **index, uint32_t *cap, uint32_t min_cap, uint32_t n,
		   uint64_t (*hash)(const void *ctx, uint32_t i), const void *ctx)
{
	uint32_t c = *cap ? *cap * 2 : min_cap;
	uint32_t *idx = calloc(c, sizeof(*idx));

	if (!idx)
		return -cste_nomem;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t h = hash(ctx, i);

		while (idx[h & (c - 1)])
			h++;
		idx[h & (c - 1)] = i + 1;
	}
	free(*index);
	*index = idx;
	*cap = c;
	return 0;
}
