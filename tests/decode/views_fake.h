/* What the unit tests of views on threads share (test_views.c, test_stretch.c):
 * a growing text, and the parts of a made-up view that do not matter to them. */
#ifndef CSTRACE_TESTS_DECODE_VIEWS_FAKE_H
#define CSTRACE_TESTS_DECODE_VIEWS_FAKE_H

#include <stdlib.h>
#include <string.h>

#include "cstrace/decode.h"

struct text {
	char *b;
	size_t n, cap;
};

static inline void put(struct text *t, const char *s, size_t n)
{
	if (t->n + n > t->cap) {
		t->cap = (t->n + n) * 2;
		t->b = realloc(t->b, t->cap);
		if (!t->b)
			abort();
	}
	memcpy(t->b + t->n, s, n);
	t->n += n;
}

/* The first member of a test's view: where it writes. */
struct fake_view {
	cst_view_write_fn write;
	void *write_ctx;
};

/* A zeroed view of @size bytes that starts with a struct fake_view. */
static inline struct fake_view *fake_view_new(size_t size, cst_view_write_fn write,
					      void *write_ctx)
{
	struct fake_view *v = calloc(1, size);

	if (v) {
		v->write = write;
		v->write_ctx = write_ctx;
	}
	return v;
}

/* No state per worker thread: the ops' context stands for it. */
static inline void *fake_worker_open(void *ctx)
{
	return ctx;
}

static inline void fake_worker_close(void *ctx, void *worker)
{
	(void)ctx;
	(void)worker;
}

static inline void fake_view_close(void *view)
{
	free(view);
}

#endif
