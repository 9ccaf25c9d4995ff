/* Unit test of views over stretches of an ordered stream (decode/run/stretch.c).
 * A made-up stream of ranges from four CPUs (runs of one CPU, as a time-ordered
 * merge gives them), with sideband between and losses, goes once to the caller's
 * callbacks alone and once through stretches on worker threads, whose view
 * defers the first element of most stretches, gives up on some stretches and
 * hands over a state the caller refuses now and then. Both outputs must be the
 * same bytes, and the element after a loss must reach the caller's thread, which
 * marks it as a symbolizer gives it the loss. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "run/run.h"
#include "test.h"
#include "views_fake.h"

#define NELEMS 60000u

/* The stream: element i, and whether sideband (a loss every third) comes
 * before it. */
static void make_elem(unsigned i, struct cst_elem *e)
{
	memset(e, 0, sizeof(*e));
	e->type = i % 97 == 5 ? cst_elem_timestamp : cst_elem_instr_range;
	e->timestamp = i;
	e->cpu = (int32_t)((i / 700) % 4); /* runs of 700 from one CPU */
	e->trace_id = (uint8_t)(0x10 + e->cpu);
	e->offset = (uint64_t)i * 16;
	e->start = 0x400000 + (uint64_t)i * 64;
	e->end = e->start + 32;
	e->num_insns = 8;
}

static bool sideband_before(unsigned i, struct cst_sideband *sb)
{
	if (!i || i % 2311)
		return false;
	memset(sb, 0, sizeof(*sb));
	sb->type = (i / 2311) % 3 ? cst_sb_switch_in : cst_sb_lost;
	sb->cpu = (int32_t)((i / 2311) % 5) - 1; /* -1: no CPU, every CPU's */
	sb->loss = cst_sb_loss_truncated;
	return true;
}

/* The caller's side: its output, its losses held for the next element of their
 * CPU (as the symbolizer's), what it refuses. */
struct caller {
	struct text out;
	int32_t lost[64];
	unsigned nlost;
	uint64_t last;          /* offset of the last element out, or +1 for none */
	unsigned adopted, refuse_every;
	unsigned refused;
	uint64_t viewed, order_errors;
	unsigned sb_seen, stop_at_sb; /* stop (7) at this sideband record (1-based) */
	unsigned writes, stop_at_write; /* and at this write of bytes */
};

static void line(const struct cst_elem *e, bool loss, struct text *t)
{
	char buf[128];
	int n = snprintf(buf, sizeof(buf), "%s%d %#llx-%#llx\n", loss ? "LOSS " : "", e->cpu,
			 (unsigned long long)e->start, (unsigned long long)e->end);

	put(t, buf, (size_t)n);
}

static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct caller *c = ctx;
	unsigned k = 0;
	bool loss = false;

	for (unsigned i = 0; i < c->nlost; i++) {
		if (c->lost[i] >= 0 && c->lost[i] != e->cpu)
			c->lost[k++] = c->lost[i];
		else
			loss = true;
	}
	c->nlost = k;
	if (c->last != UINT64_MAX && e->offset <= c->last)
		c->order_errors++;
	c->last = e->offset;
	line(e, loss, &c->out);
	return 0;
}

static int on_sb(void *ctx, const struct cst_sideband *sb)
{
	struct caller *c = ctx;
	char buf[64];
	int n = snprintf(buf, sizeof(buf), "sideband %d on CPU %d\n", sb->type, sb->cpu);

	if (sb->type == cst_sb_lost && c->nlost < 64)
		c->lost[c->nlost++] = sb->cpu;
	put(&c->out, buf, (size_t)n);
	return ++c->sb_seen == c->stop_at_sb ? 7 : 0;
}

static int on_write(void *ctx, const char *bytes, size_t len, uint64_t nelems, uint64_t offset,
		    bool has_offset)
{
	struct caller *c = ctx;

	if (!len && !nelems)
		return 0; /* what the caller holds goes out first: nothing here */
	if (++c->writes == c->stop_at_write)
		return 7;
	if (!has_offset || offset <= c->last)
		c->order_errors++;
	c->last = offset;
	put(&c->out, bytes, len);
	c->viewed += nelems;
	return 0;
}

/* A worker's view of one stretch: defers its first element (but for one in
 * three, so that the element after a loss, which starts a stretch, would be
 * printed here if it were let), gives up at an element whose index is a
 * multiple of 4999 once it has printed. */
struct view {
	struct fake_view f; /* first */
	bool seen;
	uint64_t last;
	unsigned ctx[16], nctx; /* the indexes it learnt from */
};

/* Stretches whose context was not the last elements of their ID before them
 * (up to 8) and its last timestamp before those, in order (counted on the
 * workers). */
static unsigned context_errors, contexts;

static void count(unsigned *n)
{
	__atomic_add_fetch(n, 1, __ATOMIC_RELAXED);
}

static void check_context(const struct view *v, const struct cst_elem *first)
{
	unsigned i0 = (unsigned)(first->offset / 16), want[16], n = 0, k = 0;
	bool ts = false;

	for (unsigned j = i0; j-- > 0 && (n < 8 || !ts);) {
		struct cst_elem e;

		make_elem(j, &e);
		if (e.trace_id != first->trace_id)
			continue;
		if (n < 8)
			want[n++] = j;
		else if (e.type == cst_elem_timestamp)
			want[n++] = j;
		ts = ts || e.type == cst_elem_timestamp;
	}
	/* newest first in want: compare backwards */
	if (v->nctx != n)
		count(&context_errors);
	for (k = 0; k < n && k < v->nctx; k++)
		if (v->ctx[v->nctx - 1 - k] != want[k])
			count(&context_errors);
	count(&contexts);
}

static void *view_open(void *worker, cst_view_write_fn write, void *write_ctx)
{
	(void)worker;
	return fake_view_new(sizeof(struct view), write, write_ctx);
}

static int view_elem(void *view, const struct cst_elem *e)
{
	struct view *v = view;
	struct text t = {0};
	int ret;

	if (!v->seen) {
		v->seen = true;
		if (v->nctx) {
			check_context(v, e);
		} else if ((e->offset / 16) % 3) {
			return cst_view_defer; /* else it knows enough at once */
		}
	}
	if ((e->offset / 16) % 4999 == 0)
		return cst_view_give_up;
	line(e, false, &t);
	ret = v->f.write(v->f.write_ctx, t.b, t.n);
	free(t.b);
	v->last = e->offset;
	return ret < 0 ? ret : cst_view_printed;
}

static int view_learn(void *view, const struct cst_elem *e)
{
	struct view *v = view;

	if (v->nctx < 16)
		v->ctx[v->nctx++] = (unsigned)(e->offset / 16);
	return 0;
}

/* A state holds memory of its own, as perf's lines' do (the ranges of a
 * block): the caller's view frees an adopted one, drop any other, so that the
 * sanitizers see a state lost or freed twice. */
struct state {
	uint64_t last;
	uint64_t *owned;
};

static unsigned states_made, states_freed;

static size_t view_state(void *view, void *buf, size_t size)
{
	struct view *v = view;
	struct state st = {v->last, malloc(sizeof(uint64_t))};

	if (size < sizeof(st) || !st.owned) {
		free(st.owned);
		return 0;
	}
	*st.owned = v->last;
	memcpy(buf, &st, sizeof(st));
	count(&states_made);
	return sizeof(st);
}

static void view_drop(void *ctx, const void *state, size_t len)
{
	struct state st;

	(void)ctx;
	if (len != sizeof(st))
		return;
	memcpy(&st, state, sizeof(st));
	free(st.owned);
	states_freed++;
}

static int view_adopt(void *ctx, const void *state, size_t len)
{
	struct caller *c = ctx;
	struct state st;

	if (len != sizeof(st))
		return -cste_invalid;
	if (c->refuse_every && ++c->adopted % c->refuse_every == 0) {
		c->refused++;
		return cst_view_give_up;
	}
	memcpy(&st, state, sizeof(st));
	if (*st.owned != st.last)
		c->order_errors++;
	free(st.owned);
	states_freed++;
	return 0;
}

static const struct cst_view_ops ops = {
	.sz = sizeof(ops), .worker_open = fake_worker_open, .worker_close = fake_worker_close,
	.open = view_open, .elem = view_elem, .state = view_state, .close = fake_view_close,
	.adopt = view_adopt, .drop = view_drop, .state_size = sizeof(struct state),
};
/* and one that learns from the elements before its stretch */
static const struct cst_view_ops learning_ops = {
	.sz = sizeof(ops), .worker_open = fake_worker_open, .worker_close = fake_worker_close,
	.open = view_open, .elem = view_elem, .state = view_state, .close = fake_view_close,
	.adopt = view_adopt, .drop = view_drop, .state_size = sizeof(struct state),
	.learn = view_learn,
};

static int feed(cst_elem_fn fn, cst_sideband_fn sb_fn, void *ctx)
{
	for (unsigned i = 0; i < NELEMS; i++) {
		struct cst_sideband sb;
		struct cst_elem e;
		int ret;

		if (sideband_before(i, &sb) && (ret = sb_fn(ctx, &sb)) != 0)
			return ret;
		make_elem(i, &e);
		if ((ret = fn(ctx, &e)) != 0)
			return ret;
	}
	return 0;
}

int main(void)
{
	struct caller one = {.last = UINT64_MAX};
	unsigned nloss = 0;

	CHECK_EQ_INT(feed(on_elem, on_sb, &one), 0);
	for (size_t i = 0; i + 4 <= one.out.n; i++)
		nloss += !memcmp(one.out.b + i, "LOSS", 4);
	CHECK(nloss > 3);

	for (unsigned threads = 1; threads <= 3; threads++) {
		for (unsigned refuse_every = 0; refuse_every <= 10; refuse_every += 5) {
			/* (10: the same refusals, with views that learn first) */
			struct caller many = {.last = UINT64_MAX,
					      .refuse_every = refuse_every ? 5 : 0};
			struct dec_views v = {refuse_every == 10 ? &learning_ops : &ops, &many,
					      on_write, &many};
			struct dec_stretch_stats st;
			struct dec_stretches *ss;

			CHECK_EQ_INT(dec_stretches_open(&ss, &v, threads, on_elem, on_sb, &many), 0);
			if (!ss)
				continue;
			CHECK_EQ_INT(feed(dec_stretches_elem, dec_stretches_sb, ss), 0);
			CHECK_EQ_INT(dec_stretches_drain(ss), 0);
			dec_stretches_get_stats(ss, &st);
			dec_stretches_close(ss);
			CHECK(many.out.n == one.out.n && !memcmp(many.out.b, one.out.b, one.out.n));
			CHECK_EQ_INT(many.order_errors, 0);
			/* the workers printed most, the first of each stretch was
			 * deferred, some gave up, and the losses went to the caller */
			CHECK(many.viewed > NELEMS / 2 && many.viewed == st.viewed);
			CHECK(st.deferred > 0 && st.stretches > NELEMS / 4096);
			CHECK(st.serial > 0 && st.direct == nloss);
			CHECK(many.refuse_every ? st.refused > 0 && many.refused == st.refused
						: st.refused == 0);
			free(many.out.b);
		}
	}
	free(one.out.b);
	/* the learning views were told the elements before their stretches */
	CHECK(contexts > 0);
	CHECK_EQ_INT(context_errors, 0);
	/* every state was adopted or dropped once (and, with a stop, after it) */
	CHECK(states_made > 0);

	/* a stop value from the caller's sideband callback: what went before it
	 * is out, and nothing after */
	struct caller upto = {.last = UINT64_MAX, .stop_at_sb = 9};
	CHECK_EQ_INT(feed(on_elem, on_sb, &upto), 7);
	for (unsigned threads = 1; threads <= 2; threads++) {
		struct caller many = {.last = UINT64_MAX, .stop_at_sb = 9};
		struct dec_views v = {&ops, &many, on_write, &many};
		struct dec_stretches *ss;

		CHECK_EQ_INT(dec_stretches_open(&ss, &v, threads, on_elem, on_sb, &many), 0);
		if (!ss)
			continue;
		CHECK_EQ_INT(feed(dec_stretches_elem, dec_stretches_sb, ss), 7);
		CHECK_EQ_INT(dec_stretches_elem(ss, &(struct cst_elem){.cpu = 0}), 7);
		dec_stretches_close(ss);
		CHECK(many.out.n == upto.out.n && !memcmp(many.out.b, upto.out.b, upto.out.n));
		free(many.out.b);
	}
	free(upto.out.b);

	/* a stop value from the writer, in the middle of a stretch taken back:
	 * the states adopted before it are the caller's, the others dropped */
	for (unsigned threads = 1; threads <= 2; threads++) {
		struct caller many = {.last = UINT64_MAX, .stop_at_write = 20};
		struct dec_views v = {&learning_ops, &many, on_write, &many};
		struct dec_stretches *ss;
		int ret;

		CHECK_EQ_INT(dec_stretches_open(&ss, &v, threads, on_elem, on_sb, &many), 0);
		if (!ss)
			continue;
		ret = feed(dec_stretches_elem, dec_stretches_sb, ss);
		CHECK_EQ_INT(ret ? ret : dec_stretches_drain(ss), 7);
		dec_stretches_close(ss);
		free(many.out.b);
	}
	CHECK_EQ_INT(states_freed, states_made);
	return test_done();
}
