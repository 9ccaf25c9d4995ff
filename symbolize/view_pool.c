/* The workers' views of one run on the decoding threads (views_int.h): one per
 * worker thread, kept from one split run to the next so that their readers'
 * caches and their own memos stay warm. */
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

int sym_view_learn(struct sym_view_worker *w, const struct cst_elem *e, cst_sym_elem_fn fn,
		   void *ctx)
{
	int ret;

	cst_symbolizer_take_counts(w->reader, &w->held);
	ret = cst_symbolizer_feed(w->reader, e, fn, ctx);
	cst_symbolizer_take_counts(w->reader, &w->learning);
	return ret;
}

void sym_view_block_counts(struct sym_view_worker *w, struct cst_sym_counts *out)
{
	*out = w->held;
	memset(&w->held, 0, sizeof(w->held));
	cst_symbolizer_take_counts(w->reader, out);
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

static void pool_fini(struct sym_view_pool *pool)
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

int sym_view_pool_run(struct cst_symbolizer *sym, struct cst_session *session,
		      const struct sym_view_kind *kind, void *ctx, cst_sym_elem_fn fn,
		      void *fn_ctx, cst_lines_fn write, void *write_ctx)
{
	struct sym_view_pool pool = {.sym = sym, .make = kind->make,
				     .free_view = kind->free_view, .ctx = ctx};
	int ret;

	if (pthread_mutex_init(&pool.lock, NULL))
		return -cste_nomem;
	ret = cst_symbolizer_run_views(sym, session, kind->ops, &pool, fn, fn_ctx, write,
				       write_ctx);
	pool_fini(&pool);
	return ret;
}
