/* A bump allocator for the range cache: entries live as long as the symbolizer,
 * so one free at the end beats a malloc per cached piece. */
#include "internal.h"

#include <stddef.h>
#include <stdlib.h>

struct arena_chunk {
	struct arena_chunk *next;
	size_t used, size;
	max_align_t data[];
};

void *sym_arena_alloc(struct cst_symbolizer *sym, size_t size)
{
	struct arena_chunk *c = sym->own.arena;

	size = (size + sizeof(max_align_t) - 1) & ~(sizeof(max_align_t) - 1);
	if (!c || c->size - c->used < size) {
		size_t want = size > (1u << 20) ? size : (1u << 20);

		c = malloc(sizeof(*c) + want);
		if (!c)
			return NULL;
		c->next = sym->own.arena;
		c->used = 0;
		c->size = want;
		sym->own.arena = c;
	}
	c->used += size;
	return (char *)c->data + c->used - size;
}

void sym_arena_free_all(struct cst_symbolizer *sym)
{
	while (sym->own.arena) {
		struct arena_chunk *c = sym->own.arena;

		sym->own.arena = c->next;
		free(c);
	}
}
