/* Unit test of views on the decoding threads (cst_session_run_views): a view
 * that prints each element of its stretch but the first (which it defers) must
 * give, with what the caller prints of the deferred ones, the one-thread
 * output. And when the caller's view refuses a block's state (adopt returns
 * cst_view_give_up), neither that block nor any after it may go out: the buffer
 * is decoded again on one thread from there, and the output is still the one
 * thread's, whichever block is refused. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/decode.h"
#include "test.h"
#include "views_fake.h"

/* One line per element, the same on any thread; long, so that a worker's bytes
 * fill many blocks (each hands its state over). */
#define PAD 2000
static size_t line(const struct cst_elem *e, char *buf, size_t size)
{
	int n = cst_elem_format_text(e, buf, size - PAD - 1);

	if (n < 0)
		n = 0;
	memset(buf + n, '.', PAD);
	buf[n + PAD] = '\n';
	return (size_t)n + PAD + 1;
}

/* The caller's side: its output, and which adopted state it refuses. */
struct caller {
	struct text out;
	unsigned adopted;   /* states taken on */
	unsigned refuse_at; /* refuse the state this one would be (1-based; 0: none) */
	bool refused;
	uint64_t viewed;    /* elements the views printed */
};

static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct caller *c = ctx;
	char buf[4096];

	put(&c->out, buf, line(e, buf, sizeof(buf)));
	return 0;
}

static int on_write(void *ctx, const char *bytes, size_t len, uint64_t nelems, uint64_t offset,
		    bool has_offset)
{
	struct caller *c = ctx;

	(void)offset;
	(void)has_offset;
	put(&c->out, bytes, len);
	c->viewed += nelems;
	return 0;
}

/* A worker's view of one stretch. */
struct view {
	struct fake_view f; /* first */
	bool seen;
	uint64_t printed;
};

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	(void)worker;
	return fake_view_new(sizeof(struct view), write, write_ctx);
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct view *v = view;
	char buf[4096];

	if (!v->seen) {
		v->seen = true;
		return cst_view_defer;
	}
	v->printed++;
	return v->f.write(v->f.write_ctx, buf, line(e, buf, sizeof(buf))) < 0 ? -cste_nomem
									   : cst_view_printed;
}

static size_t view_state(void *view, void *buf, size_t size)
{
	struct view *v = view;

	if (size < sizeof(v->printed))
		return 0;
	memcpy(buf, &v->printed, sizeof(v->printed));
	return sizeof(v->printed);
}

static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct caller *c = ctx;

	(void)state;
	if (len != sizeof(uint64_t))
		return -cste_invalid;
	if (++c->adopted == c->refuse_at) {
		c->refused = true;
		return cst_view_give_up;
	}
	return 0;
}

static const struct cst_view_ops ops = {
	.sz = sizeof(ops), .worker_open = fake_worker_open, .worker_close = fake_worker_close,
	.open = view_open, .elem = view_elem, .state = view_state, .close = fake_view_close,
	.adopt = view_adopt, .state_size = sizeof(uint64_t),
};

static struct cst_session *open_sample(const char *path, unsigned threads)
{
	struct cst_session_opts o = {.sz = sizeof(o), .threads = threads, .chunk_size = 16,
				     .merge_ranges = true};
	struct cst_session *s = NULL;

	CHECK_EQ_INT(cst_session_open(&s, path, &o), 0);
	return s;
}

int main(void)
{
	const char *src = getenv("CSTRACE_SOURCE_DIR");
	char path[4096];
	struct caller one = {0};
	struct cst_session *s;

	snprintf(path, sizeof(path), "%s/testdata/sample/a64-loop", src ? src : ".");
	s = open_sample(path, 1);
	if (!s)
		return test_done();
	CHECK_EQ_INT(cst_session_run(s, on_elem, NULL, &one), 0);
	cst_session_free(s);
	CHECK(one.out.n > 0);

	/* refuse none, the first state, later ones (the sample's workers hand over
	 * about ten) */
	for (unsigned refuse_at = 0; refuse_at <= 6; refuse_at += refuse_at < 3 ? 1 : 3) {
		struct caller many = {.refuse_at = refuse_at};
		bool printed = false, refused = false;

		/* the workers' timing decides which chunks go apart: try a few times
		 * for a run where views printed (and the refusal met a state) */
		for (int tries = 0; tries < 20 && (refuse_at ? !refused : !printed); tries++) {
			free(many.out.b);
			many = (struct caller){.refuse_at = refuse_at};
			s = open_sample(path, 2);
			if (!s)
				break;
			CHECK_EQ_INT(cst_session_run_views(s, &ops, &many, on_elem, NULL, &many,
							   on_write, &many),
				     0);
			cst_session_free(s);
			CHECK(many.out.n == one.out.n && !memcmp(many.out.b, one.out.b, one.out.n));
			printed = printed || many.viewed > 0;
			refused = refused || many.refused;
			/* nothing after a refused state is a view's: one thread decoded it */
			if (many.refused)
				CHECK_EQ_INT(many.adopted, refuse_at);
		}
		CHECK(refuse_at ? refused : printed);
		free(many.out.b);
	}
	free(one.out.b);
	return test_done();
}
