/* Unit tests of decode/perf/order.c, the model of perf 6.1's timed merge of cs_etm
 * queues. Each case scripts the elements of a few queues; the expected orders are
 * worked out by hand from tools/perf/util/cs-etm.c and cs-etm-decoder.c (6.1):
 * time estimates per range, heap ties, a full packet queue, a timestamp that would
 * underflow. The whole-run check against perf itself is tests/synth/time_order.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/order.h"
#include "test.h"

/* One scripted element: a type letter and a number.
 *   'O' trace on   'T' timestamp N   'R' range of N instructions
 *   'C' context (thread ID valid)   '|' end of an AUX fragment
 *   'L' what follows comes from the fragment's last bytes   'E' ... from its end of trace
 * Lower case 'o', 't', 'r': the same for a second trace ID in the queue (a shared
 * sink), reported as queue 2. */
struct ev {
	char kind;
	unsigned long long n;
};

struct script {
	const struct ev *q[2];
	size_t nev[2], pos[2];
	struct perf_order *o;
	char out[8192];
	size_t len;
	int last_q, run; /* the run of elements of one queue being counted */
	int unseen;      /* elements marked perf_unseen */
	uint64_t hash;   /* of every element's queue, type, size and mark, in order */
	int nelems;
};

/* Each fill pushes a whole fragment: decoding ahead must not change the order. */
static int fill(void *ctx, unsigned q)
{
	struct script *s = ctx;

	if (s->pos[q] == s->nev[q])
		return 1;
	while (s->pos[q] < s->nev[q]) {
		const struct ev *v = &s->q[q][s->pos[q]++];
		struct cst_elem e;

		if (v->kind == '|')
			return dec_perf_order_end_fragment(s->o, q);
		if (v->kind == 'L' || v->kind == 'E') {
			if ((v->kind == 'L' ? dec_perf_order_last_bytes : dec_perf_order_end_data)(s->o, q))
				return -1;
			continue;
		}
		memset(&e, 0, sizeof(e));
		e.trace_id = (uint8_t)(0x10 + 2 * q);
		e.cpu = (int32_t)q;
		if (v->kind >= 'a' && v->kind <= 'z') {
			e.trace_id = 0x30;
			e.cpu = 2;
		}
		switch (v->kind & ~0x20) {
		case 'O': e.type = cst_elem_trace_on; break;
		case 'T': e.type = cst_elem_timestamp; e.timestamp = v->n; break;
		case 'R': e.type = cst_elem_instr_range; e.num_insns = (uint32_t)v->n; break;
		case 'C': e.type = cst_elem_pe_context; e.ctx.ctxid_valid = true; break;
		}
		if (!dec_perf_order_push(s->o, q, &e))
			return -1;
	}
	return 0;
}

/* Runs of queue numbers, "0x2 1x3 ...": which queue emitted how many in a row. */
static void put_run(struct script *s)
{
	if (s->run)
		s->len += (size_t)snprintf(s->out + s->len, sizeof(s->out) - s->len, "%s%dx%d",
					   s->len ? " " : "", s->last_q, s->run);
}

static int emit(void *ctx, const struct cst_elem *e)
{
	struct script *s = ctx;

	if (s->run && s->last_q != e->cpu) {
		put_run(s);
		s->run = 0;
	}
	s->last_q = e->cpu;
	s->run++;
	s->unseen += e->perf_unseen;
	s->nelems++;
	s->hash = (s->hash ^ ((uint64_t)e->cpu << 56 | (uint64_t)e->type << 48 |
			      (uint64_t)e->perf_unseen << 40 | e->num_insns | e->timestamp << 20)) *
		  0x100000001b3ull;
	return 0;
}

/* A queue run ahead of the merge, as decode/perf/timed_ahead.c runs it: every
 * chunk it hands on recorded (its elements, then its estimate or its end),
 * pausing after every element, to be replayed when the merge asks. */
struct rec {
	struct cst_elem e;
	int what; /* 0 an element, 1 a chunk's end with @key, 2 the queue's end */
	uint64_t key;
};
struct ahead {
	struct script *s;
	struct rec *r[2];
	size_t n[2], at[2];
	unsigned pauses, fill_pauses;
	int recording;
};

static struct rec *rec_add(struct ahead *a, unsigned q)
{
	static const size_t cap = 4096;

	if (!a->r[q])
		a->r[q] = calloc(cap, sizeof(struct rec));
	CHECK(a->r[q] != NULL && a->n[q] < cap);
	return &a->r[q][a->n[q]++];
}

static int record(void *ctx, const struct cst_elem *e)
{
	struct ahead *a = ctx;
	struct rec *r = rec_add(a, (unsigned)a->recording);

	r->e = *e;
	r->e.ocsd = NULL;
	r->what = 0;
	a->pauses++;
	return PERF_ORDER_PAUSE;
}

/* A fill that pushed something pauses too (the recording's block is full). */
static int fill_ahead(void *ctx, unsigned q)
{
	struct ahead *a = ctx;
	int ret = fill(a->s, q);

	if (ret)
		return ret;
	a->fill_pauses++;
	return PERF_ORDER_PAUSE;
}

/* The merge's turn of queue @q: its next recorded chunk goes out. */
static int replay(void *ctx, unsigned q, uint64_t *key)
{
	struct ahead *a = ctx;

	while (a->at[q] < a->n[q]) {
		struct rec *r = &a->r[q][a->at[q]++];

		if (r->what == 1)
			*key = r->key;
		if (r->what)
			return r->what == 1 ? 0 : 1;
		emit(a->s, &r->e);
	}
	return -1; /* the recording ended early */
}

/* Record both queues to their ends, one after the other, then merge. */
static int run_ahead(struct script *s, unsigned *pauses)
{
	struct ahead a = {.s = s};
	int ret = 0;

	for (unsigned q = 0; q < 2; q++)
		dec_perf_order_queue_fns(s->o, q, fill_ahead, record, &a);
	for (unsigned q = 0; q < 2 && !ret; q++) {
		a.recording = (int)q;
		for (;;) {
			uint64_t key = 0;
			struct rec *r;

			ret = dec_perf_order_next(s->o, q, &key);
			if (ret == PERF_ORDER_PAUSE) {
				ret = 0;
				continue;
			}
			if (ret != 0 && ret != 1)
				break;
			r = rec_add(&a, q);
			r->what = ret ? 2 : 1;
			r->key = key;
			if (ret) {
				ret = 0;
				break;
			}
		}
	}
	if (!ret)
		ret = dec_perf_order_merge(2, replay, &a);
	*pauses = a.pauses;
	CHECK(a.fill_pauses > 0);
	free(a.r[0]);
	free(a.r[1]);
	return ret;
}

/* @want: the runs of queues in perf's order; @unseen: how many elements of them
 * perf itself would not report. Each case runs four times: holding in memory,
 * and with everything held long going through the temporary file (a hold limit
 * of 0), which must give the same elements in the same order; each on this
 * thread, and with the queues run ahead of the merge, paused after each element. */
static void run(const char *name, const struct ev *q0, size_t n0, const struct ev *q1,
		size_t n1, const char *want, int unseen)
{
	struct script s;
	uint64_t hash = 0;

	for (int pass = 0; pass < 4; pass++) {
		bool spill = pass & 1, ahead = pass & 2;
		unsigned pauses = 0;

		memset(&s, 0, sizeof(s));
		s.q[0] = q0;
		s.q[1] = q1;
		s.nev[0] = n0;
		s.nev[1] = n1;
		s.o = dec_perf_order_alloc(2, perf_order_ctx_ctxid, fill, emit, &s);
		CHECK(s.o != NULL);
		if (spill)
			dec_perf_order_set_hold_limit(s.o, 0);
		CHECK_EQ_INT(ahead ? run_ahead(&s, &pauses) : dec_perf_order_run(s.o), 0);
		put_run(&s);
		if (strcmp(s.out, want))
			fprintf(stderr, "%s%s%s: got \"%s\"\n", name, spill ? " (spilled)" : "",
				ahead ? " (ahead)" : "", s.out);
		CHECK_EQ_STR(s.out, want);
		if (s.unseen != unseen)
			fprintf(stderr, "%s: %d elements perf_unseen\n", name, s.unseen);
		CHECK_EQ_INT(s.unseen, unseen);
		if (pass && s.hash != hash)
			fprintf(stderr, "%s: other elements in pass %d\n", name, pass);
		CHECK(!pass || s.hash == hash);
		/* every element went out of a paused chunk */
		CHECK(!ahead || (int)pauses == s.nelems);
		hash = s.hash;
		dec_perf_order_free(s.o);
	}
}

#define N(a) (sizeof(a) / sizeof((a)[0]))

int main(void)
{
	/* Each range goes out when the heap reaches the estimate of its start:
	 * queue 0 ranges start at 100, 110, 120; queue 1's at 105, 115. The trace-on
	 * and timestamp wait with the queue's first estimate. */
	static const struct ev a0[] = {{'O', 0}, {'T', 100}, {'R', 10}, {'R', 10}, {'R', 10}};
	static const struct ev a1[] = {{'O', 0}, {'T', 105}, {'R', 10}, {'R', 10}};
	/* 0:on,ts(100) 0:r100 1:on,ts(105) 1:r105 0:r110 1:r115 0:r120 */
	run("estimates", a0, N(a0), a1, N(a1), "0x3 1x3 0x1 1x1 0x1", 0);

	/* Equal estimates: the entry already in the heap goes first. */
	static const struct ev b0[] = {{'O', 0}, {'T', 100}, {'R', 1}};
	static const struct ev b1[] = {{'O', 0}, {'T', 100}, {'R', 1}};
	/* 0:on,ts 1:on,ts 0:r (re-added at 100 below 1's entry) 1:r */
	run("ties", b0, N(b0), b1, N(b1), "0x2 1x2 0x1 1x1", 0);

	/* A hard timestamp after ranges dates them back: 3 ranges of 10 before the
	 * timestamp 100 started at 70, before queue 1's 80. A new fragment starts over
	 * (its trace-on resets the estimate): its ranges wait for its timestamp, 200. */
	static const struct ev c0[] = {{'O', 0}, {'R', 10}, {'R', 10}, {'R', 10}, {'T', 100},
				       {'R', 5}, {'|', 0}, {'O', 0}, {'R', 1}, {'T', 200}};
	static const struct ev c1[] = {{'O', 0}, {'T', 80}, {'R', 50}, {'R', 50}};
	/* 0:on,r,r,r,ts(70) 1:on,ts(80) 1:r80 0:r100 1:r130 0:on,r,ts(199) */
	run("dated back", c0, N(c0), c1, N(c1), "0x5 1x3 0x1 1x1 0x3", 0);

	/* A timestamp smaller than the instructions before it gives no estimate (perf
	 * warns of an underflow); the next one does: 25 = 30 - 5. Still looking for
	 * the queue's first timestamp, perf throws away what came before the
	 * underflow (trace-on, r50, the timestamp): cstrace keeps them, perf_unseen. */
	static const struct ev d0[] = {{'O', 0}, {'R', 50}, {'T', 20}, {'R', 5}, {'T', 30},
				       {'R', 1}};
	static const struct ev d1[] = {{'O', 0}, {'T', 22}, {'R', 5}, {'R', 1}};
	/* 1:on,ts(22) 1:r22 0:on,r,ts,r,ts(25) 1:r27 0:r30 */
	run("underflow", d0, N(d0), d1, N(d1), "1x3 0x5 1x1 0x1", 3);

	/* A context naming the thread resets the estimate: ranges after it wait for the
	 * next timestamp (5 + 5 = 10 instructions before 300: they start at 290). */
	static const struct ev e0[] = {{'O', 0}, {'T', 100}, {'C', 0}, {'R', 5}, {'R', 5},
				       {'T', 300}};
	static const struct ev e1[] = {{'O', 0}, {'T', 200}, {'R', 100}, {'R', 1}};
	/* 0:on,ts(100) 1:on,ts(200) 1:r200 0:ctx,r,r,ts(290) 1:r300 */
	run("context", e0, N(e0), e1, N(e1), "0x2 1x3 0x4 1x1", 0);

	/* Two trace IDs in one queue: each has its own packet queue and estimate; the
	 * queue waits in the heap for the ID that stopped it. B's trace-on and
	 * timestamp wait for B's entry (150), after queue 1's ranges at 120 and 125. */
	static const struct ev g0[] = {{'O', 0}, {'o', 0}, {'T', 100}, {'t', 150}, {'R', 10},
				       {'r', 10}};
	static const struct ev g1[] = {{'O', 0}, {'T', 120}, {'R', 5}, {'R', 5}};
	/* A:on,ts(100) 1:on,ts,r120,r125 B:on,ts(150) A:r(100) B:r(150) */
	run("two trace IDs", g0, N(g0), g1, N(g1), "0x2 1x4 2x2 0x1 2x1", 0);

	/* perf's decoder stops on a range from the fragment's last bytes (r110): OpenCSD
	 * has taken every byte, and the two ranges it still holds never reach perf.
	 * cstrace has them; they take no turn of their own but go out when the
	 * fragment ends, right after r110 (otherwise: r120 and r130 would interleave
	 * with queue 1's r115 and r125). */
	static const struct ev h0[] = {{'O', 0}, {'T', 100}, {'R', 10}, {'L', 0}, {'R', 10},
				       {'R', 10}, {'R', 10}, {'|', 0}};
	static const struct ev h1[] = {{'O', 0}, {'T', 105}, {'R', 10}, {'R', 10}, {'R', 10}};
	/* 0:on,ts r100 1:on,ts,r105 0:r110 + the 2 perf lost 1:r115,r125 */
	run("last bytes", h0, N(h0), h1, N(h1), "0x3 1x3 0x3 1x2", 2);

	/* What OpenCSD gives only at the end of trace (perf never sends it) is the
	 * same: it goes out with the fragment's last chunk, taking no turn. */
	static const struct ev i0[] = {{'O', 0}, {'T', 100}, {'R', 10}, {'E', 0}, {'R', 10},
				       {'R', 10}, {'|', 0}};
	static const struct ev i1[] = {{'O', 0}, {'T', 105}, {'R', 10}, {'R', 10}};
	run("end of trace", i0, N(i0), i1, N(i1), "0x5 1x4", 2);

	/* Two trace IDs, and perf's decoder stops on A's range from the last bytes
	 * (110): perf moves on to the next fragment without processing B's queue, so
	 * B's trace-on (perf has it) and the range after the stop (only cstrace has it)
	 * wait; they go out when the queue ends, not when the fragment does. */
	static const struct ev j0[] = {{'O', 0}, {'T', 100}, {'R', 10}, {'o', 0}, {'L', 0},
				       {'R', 10}, {'r', 5}, {'|', 0}, {'O', 0}, {'T', 300},
				       {'R', 1}};
	static const struct ev j1[] = {{'O', 0}, {'T', 105}, {'R', 10}, {'R', 10}};
	/* A:on,ts,r100 1:on,ts,r105 A:r110 1:r115 A:on,ts,r300 B:on,r */
	run("last bytes, two trace IDs", j0, N(j0), j1, N(j1), "0x3 1x3 0x1 1x1 0x3 2x2", 2);

	/* A full packet queue (1023 packets) with no estimate goes out at once, in the
	 * middle of the queue's turn, ahead of queue 1 (estimate 2000); the ranges after
	 * it wait for the next timestamp: 5000 less their 1099 instructions (the range
	 * that filled the queue is not counted, as in perf). */
	{
		static struct ev f0[1100 + 4];
		static const struct ev f1[] = {{'O', 0}, {'T', 2000}, {'R', 1}};
		size_t n = 0;

		f0[n++] = (struct ev){'O', 0};
		f0[n++] = (struct ev){'T', 1000};
		f0[n++] = (struct ev){'O', 0};
		for (int i = 0; i < 1100; i++)
			f0[n++] = (struct ev){'R', 1};
		f0[n++] = (struct ev){'T', 5000};
		/* 0:on,ts(1000) 0:on + 1022 ranges (full) 1:on,ts,r(2000) 0:78 ranges,ts */
		run("full queue", f0, n, f1, N(f1), "0x1025 1x3 0x79", 0);
	}
	/* No timestamp for 200 fragments: everything queue 0 decodes waits for its
	 * first estimate (perf drops it: perf_unseen), past any hold limit, then goes
	 * out with its first chunk, after queue 1's at 100. */
	{
		static struct ev k0[200 * 4 + 3];
		static const struct ev k1[] = {{'O', 0}, {'T', 100}, {'R', 1}, {'R', 1}};
		size_t n = 0;

		for (int i = 0; i < 200; i++) {
			k0[n++] = (struct ev){'O', 0};
			k0[n++] = (struct ev){'R', (unsigned long long)i + 1};
			k0[n++] = (struct ev){'R', 7};
			k0[n++] = (struct ev){'|', 0};
		}
		k0[n++] = (struct ev){'O', 0};
		k0[n++] = (struct ev){'T', 500};
		k0[n++] = (struct ev){'R', 1};
		/* 1:on,ts(100),r100,r101 0:600 unseen,on,ts(500),r500 */
		run("held long", k0, n, k1, N(k1), "1x4 0x603", 600);
	}
	return test_done();
}
