/* Code memory for the encoder: the bytes of every executed instruction, from QEMU's
 * in_asm listing or the mapped files, kept per 4 KiB page with a known-byte bitmap. */
#include <stdlib.h>
#include <string.h>

#include "synth_int.h"

struct cm_page {
	uint64_t base;
	uint8_t bytes[SYNTH_PAGE_SIZE];
	uint8_t known[SYNTH_PAGE_SIZE / 8];
};

struct synth_codemap {
	struct cm_page **pages; /* sorted by base */
	size_t n, cap;
	size_t last;            /* index of the last page hit: code is local */
};

struct synth_codemap *synth_codemap_alloc(void)
{
	return calloc(1, sizeof(struct synth_codemap));
}

void synth_codemap_free(struct synth_codemap *cm)
{
	if (!cm)
		return;
	for (size_t i = 0; i < cm->n; i++)
		free(cm->pages[i]);
	free(cm->pages);
	free(cm);
}

/* Index of the page at @base, or where it would be inserted (negative - 1). */
static long cm_find(const struct synth_codemap *cm, uint64_t base)
{
	if (cm->last < cm->n && cm->pages[cm->last]->base == base)
		return (long)cm->last;
	size_t lo = CST_PARTITION(i, 0, cm->n, cm->pages[i]->base < base);
	if (lo < cm->n && cm->pages[lo]->base == base)
		return (long)lo;
	return -(long)lo - 1;
}

static struct cm_page *cm_page(struct synth_codemap *cm, uint64_t base, bool create)
{
	long i = cm_find(cm, base);
	if (i >= 0) {
		cm->last = (size_t)i;
		return cm->pages[i];
	}
	if (!create)
		return NULL;
	size_t at = (size_t)(-i - 1);
	if (CST_GROW(cm->pages, cm->cap, cm->n + 1) < 0)
		return NULL;
	struct cm_page *pg = calloc(1, sizeof(*pg));
	if (!pg)
		return NULL;
	pg->base = base;
	memmove(&cm->pages[at + 1], &cm->pages[at], (cm->n - at) * sizeof(*cm->pages));
	cm->pages[at] = pg;
	cm->n++;
	cm->last = at;
	return pg;
}

/* The piece of [addr, addr + len) in addr's page: its base, the offset in it, and
 * the bytes it holds (returned). */
static size_t page_piece(uint64_t addr, size_t len, uint64_t *base, size_t *off)
{
	size_t n;

	*base = addr & ~(uint64_t)(SYNTH_PAGE_SIZE - 1);
	*off = (size_t)(addr - *base);
	n = SYNTH_PAGE_SIZE - *off;
	return n < len ? n : len;
}

int synth_codemap_put(struct synth_codemap *cm, uint64_t addr, const uint8_t *p, size_t len)
{
	if (!cm || (!p && len))
		return -cste_invalid;
	while (len) {
		uint64_t base;
		size_t off, n = page_piece(addr, len, &base, &off);
		struct cm_page *pg = cm_page(cm, base, true);
		if (!pg)
			return -cste_nomem;
		memcpy(pg->bytes + off, p, n);
		for (size_t i = off; i < off + n; i++)
			pg->known[i / 8] |= (uint8_t)(1u << (i % 8));
		addr += n;
		p += n;
		len -= n;
	}
	return 0;
}

bool synth_codemap_get(const struct synth_codemap *cm, uint64_t addr, uint8_t *p, size_t len)
{
	struct synth_codemap *m = (struct synth_codemap *)cm; /* only the hit cache moves */
	while (len) {
		uint64_t base;
		size_t off, n = page_piece(addr, len, &base, &off);
		struct cm_page *pg = cm_page(m, base, false);
		if (!pg)
			return false;
		for (size_t i = off; i < off + n; i++)
			if (!(pg->known[i / 8] & (1u << (i % 8))))
				return false;
		memcpy(p, pg->bytes + off, n);
		addr += n;
		p += n;
		len -= n;
	}
	return true;
}

int synth_codemap_pages(const struct synth_codemap *cm, synth_page_fn fn, void *ctx)
{
	for (size_t i = 0; i < cm->n; i++) {
		int rc = fn(ctx, cm->pages[i]->base, cm->pages[i]->bytes, SYNTH_PAGE_SIZE);
		if (rc)
			return rc;
	}
	return 0;
}
