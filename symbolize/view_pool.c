/* The workers' views of one run on the decoding threads (views_int.h): one per
 * worker thread, kept from one split run to the next so that their readers'
 * caches and their own memos stay warm. */
#include "views_int.h"

#include <stdlib.h>

int sym_view_pool_init(struct sym_view_pool *pool, struct cst_symbolizer *sym,
		       struct sym_view_worker *(*make)(void *ctx, struct cst_symbolizer *reader),
		       void (*free_view)(void *ctx, struct sym_view_worker *w), void *ctx)
{
	*pool = (struct sym_view_pool){.sym = sym, .make = make, .free_view = free_view,
				       .ctx = ctx};
	return pthread_mutex_init(&pool->lock, NULL) ? -cste_nomem : 0;
}

/* A new view over a reader of its own, or NULL. */
static struct sym_view_worker *make_one(struct sym_view_pool *pool)
{
	struct cst_symbolizer *reader;
	struct sym_view_worker *w;

	if (cst_symbolizer_reader_alloc(&reader, pool->sym) < 0)
		return NULL;
	w = pool->make(pool->ctx, reader);
	if (!w) {
		cst_symbolizer_free(reader);
		return NULL;
	}
	w->reader = reader;
	w->next = pool->all;
	pool->all = w;
	return w;
}

void *sym_view_pool_open(void *ctx)
{
	struct sym_view_pool *pool = ctx;
	struct sym_view_worker *w;

	pthread_mutex_lock(&pool->lock);
	w = pool->idle;
	if (w)
		pool->idle = w->next_idle;
	else
		w = make_one(pool);
	pthread_mutex_unlock(&pool->lock);
	/* the spaces as they stand for this split run (none changes during it) */
	if (w)
		cst_symbolizer_reader_sync(w->reader);
	return w;
}

void sym_view_pool_close(void *ctx, void *worker)
{
	struct sym_view_pool *pool = ctx;
	struct sym_view_worker *w = worker;

	pthread_mutex_lock(&pool->lock);
	w->next_idle = pool->idle;
	pool->idle = w;
	pthread_mutex_unlock(&pool->lock);
}

void sym_view_pool_fini(struct sym_view_pool *pool)
{
	while (pool->all) {
		struct sym_view_worker *w = pool->all;
		struct cst_symbolizer *reader = w->reader;

		pool->all = w->next;
		pool->free_view(pool->ctx, w);
		cst_symbolizer_free(reader);
	}
	pthread_mutex_destroy(&pool->lock);
}
