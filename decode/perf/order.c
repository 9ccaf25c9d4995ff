/* perf 6.1's timed order for cs_etm queues (see order.h). The names follow
 * perf's: a queue is one AUX ring (a CPU), a lane is one trace ID's packet queue in
 * it, a packet is what perf queues (ranges, exceptions and their returns, and the
 * discontinuities NO_SYNC / TRACE_ON), and a chunk ends where perf's decoder stops
 * with a time estimate. */
#include "order.h"

#include "engine/engine.h"

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>


/* perf's packet queue holds CS_ETM_PACKET_MAX_BUFFER - 1 packets; the decoder
 * stops when it is full (cs_etm_decoder__buffer_packet). */
#define PACKET_QUEUE_FULL 1023u
#define NIDS 128u
/* Elements held in all lanes together past this many bytes go to a temporary file
 * (dec_perf_order_set_hold_limit). A queue with no usable timestamp holds every
 * element it decodes until it ends (perf throws them away; cstrace keeps them):
 * in memory, 60,000 small fragments took 316 MB of RSS. The file is written and
 * read in order, from the page cache: with 4 MiB the same run peaks at 33 MB and
 * is no slower (malloc's growth keeps about twice the limit resident). */
#define HOLD_LIMIT_DEFAULT (4u << 20)
/* Elements read back from the file at a time. */
#define SPILL_READ 256u

/* Where in its fragment's input OpenCSD produced an element. */
enum source { from_body, from_last_bytes, from_end_of_trace };

struct held {
	struct dec_held d; /* the element, with a copy of e.ocsd when kept */
	bool end; /* not an element: the AUX fragment ended */
	enum source src;
};

struct vec {
	struct held *v;
	size_t head, n, cap;
};

/* Held elements moved to the spill file: the oldest of their lane, in order. */
struct spilled {
	uint64_t off;
	size_t n;
};

/* One trace ID in one queue: held elements and perf's time estimate state
 * (struct cs_etm_packet_queue: cs_timestamp, next_cs_timestamp, instr_count). */
struct lane {
	struct vec held;
	uint64_t cs_ts, next_ts, instr_count;
	uint32_t packets;
	/* kept as elements come and go, so that a fragment end costs nothing per
	 * element held (files without timestamps hold everything: rescanning all
	 * at each fragment end was quadratic) */
	size_t marked; /* held.v[0..marked) are all perf_unseen */
	size_t nseen;  /* held elements perf reports (perf_unseen false) */
	/* held before held.v[head]: in the spill file, all perf_unseen; sp[sp_head]
	 * is the oldest not yet read back */
	struct spilled *sp;
	size_t sp_head, nsp, sp_cap;
};

/* A flush of lanes under way: begun, and paused by @emit (PERF_ORDER_PAUSE). */
enum flush { flush_none, flush_lane, flush_all, flush_unseen };

/* One queue's model: everything it touches is its own (see order.h). */
struct queue {
	struct perf_order *o;     /* read only: its settings */
	unsigned index;
	perf_order_fill_fn fill;
	cst_elem_fn emit;
	void *ctx;
	struct vec in;            /* decoded, not yet walked by the model */
	struct lane *lanes[NIDS]; /* by trace ID, made on first use */
	bool exhausted;
	enum source pushing; /* what pushes are now (dec_perf_order_last_bytes, _end_data) */
	bool perf_stopped;   /* perf's decoder is done with this fragment */
	bool started;        /* its first chunk went out (perf's first timestamp search) */
	bool waiting;        /* its chunk ended with an estimate of lane @wait_id */
	uint8_t wait_id;
	enum flush flushing;
	unsigned flush_id;   /* the lane flushed, or the next ID to look at */
	/* holding: elements in lanes' memory, the limit, and the file past it */
	size_t held_n, hold_limit;
	struct cst_spill spill;
	size_t spill_live; /* segments in lanes, not yet read back */
	struct held *readback;
};

struct heap_item {
	uint64_t key;
	uint32_t queue;
};

struct perf_order {
	unsigned nqueues;
	struct queue *q;
	enum perf_order_ctx ctx_kind;
	bool drop_ocsd; /* dec_perf_order_keep_ocsd(false) */
};

/* What the model says after an element, as perf's decoder callback answers. */
enum step { step_cont, step_wait_time, step_wait };

struct perf_order *dec_perf_order_alloc(unsigned nqueues, enum perf_order_ctx ctx_kind,
				    perf_order_fill_fn fill, cst_elem_fn emit, void *ctx)
{
	struct perf_order *o;

	if (!nqueues || !fill || !emit)
		return NULL;
	o = calloc(1, sizeof(*o));
	if (!o)
		return NULL;
	o->q = calloc(nqueues, sizeof(*o->q));
	if (!o->q) {
		free(o);
		return NULL;
	}
	o->nqueues = nqueues;
	o->ctx_kind = ctx_kind;
	for (unsigned i = 0; i < nqueues; i++) {
		o->q[i].o = o;
		o->q[i].index = i;
		dec_perf_order_queue_fns(o, i, fill, emit, ctx);
	}
	dec_perf_order_set_hold_limit(o, HOLD_LIMIT_DEFAULT);
	return o;
}

void dec_perf_order_set_hold_limit(struct perf_order *o, size_t bytes)
{
	for (unsigned i = 0; o && i < o->nqueues; i++)
		o->q[i].hold_limit = bytes / o->nqueues;
}

void dec_perf_order_keep_ocsd(struct perf_order *o, bool keep)
{
	if (o)
		o->drop_ocsd = !keep;
}

void dec_perf_order_queue_fns(struct perf_order *o, unsigned queue, perf_order_fill_fn fill,
			      cst_elem_fn emit, void *ctx)
{
	if (!o || queue >= o->nqueues)
		return;
	o->q[queue].fill = fill;
	o->q[queue].emit = emit;
	o->q[queue].ctx = ctx;
}

void dec_perf_order_free(struct perf_order *o)
{
	if (!o)
		return;
	for (unsigned i = 0; o->q && i < o->nqueues; i++) {
		struct queue *q = &o->q[i];

		free(q->in.v);
		for (unsigned id = 0; id < NIDS; id++) {
			if (q->lanes[id]) {
				free(q->lanes[id]->held.v);
				free(q->lanes[id]->sp);
			}
			free(q->lanes[id]);
		}
		free(q->readback);
		cst_spill_close(&q->spill);
	}
	free(o->q);
	free(o);
}

/* ------------------------------------------------------------- holding */

/* Copy @h: what its flags say it holds (the OpenCSD element is a third of it). */
static void held_copy(struct held *to, const struct held *h)
{
	dec_held_copy(&to->d, &h->d);
	to->end = h->end;
	to->src = h->src;
}

/* Append room for one. Queues are emptied whole (next_in before a fill, lane_flush),
 * so nothing is ever moved to the front. */
static struct held *vec_add(struct vec *v)
{
	if (CST_GROW(v->v, v->cap, v->n + 1) < 0)
		return NULL;
	return &v->v[v->n++];
}

struct cst_elem *dec_perf_order_push(struct perf_order *o, unsigned queue,
				     const struct cst_elem *e)
{
	struct queue *q;
	struct held *h;

	if (!o || queue >= o->nqueues || !e)
		return NULL;
	q = &o->q[queue];
	h = vec_add(&q->in);
	if (!h)
		return NULL;
	dec_held_keep(&h->d, e, !o->drop_ocsd);
	h->end = false;
	h->d.e.perf_unseen = false;
	h->src = q->pushing;
	return &h->d.e;
}

static int set_source(struct perf_order *o, unsigned queue, enum source src)
{
	if (!o || queue >= o->nqueues)
		return -cste_invalid;
	o->q[queue].pushing = src;
	return 0;
}

int dec_perf_order_last_bytes(struct perf_order *o, unsigned queue)
{
	return set_source(o, queue, from_last_bytes);
}

int dec_perf_order_end_data(struct perf_order *o, unsigned queue)
{
	return set_source(o, queue, from_end_of_trace);
}

int dec_perf_order_end_fragment(struct perf_order *o, unsigned queue)
{
	struct held *h;

	if (set_source(o, queue, from_body))
		return -cste_invalid;
	h = vec_add(&o->q[queue].in);
	if (!h)
		return -cste_nomem;
	memset(h, 0, sizeof(*h));
	h->end = true;
	return 0;
}

static struct lane *lane_of(struct queue *q, uint8_t id)
{
	struct lane **l = &q->lanes[id & (NIDS - 1)];

	if (!*l)
		*l = calloc(1, sizeof(**l));
	return *l;
}

static int emit_held(struct queue *q, struct held *h)
{
	return q->emit(q->ctx, dec_held_elem(&h->d));
}

/* The lane's spilled elements, read back in order, go out. Each goes from the
 * file's segment as it goes out, so that a pause goes on with the next. */
static int lane_flush_spilled(struct queue *q, struct lane *l)
{
	int ret = 0;

	if (l->nsp > l->sp_head && !q->readback &&
	    !(q->readback = malloc(SPILL_READ * sizeof(struct held))))
		return -cste_nomem;
	while (l->sp_head < l->nsp) {
		struct spilled *sp = &l->sp[l->sp_head];

		while (sp->n) {
			size_t k = sp->n < SPILL_READ ? sp->n : SPILL_READ;

			ret = cst_spill_read(&q->spill, sp->off, q->readback, k * sizeof(struct held));
			for (size_t i = 0; i < k && !ret; i++) {
				sp->off += sizeof(struct held);
				sp->n--;
				ret = emit_held(q, &q->readback[i]);
			}
			if (ret)
				return ret;
		}
		l->sp_head++;
		q->spill_live--;
	}
	l->sp_head = l->nsp = 0;
	if (!q->spill_live)
		cst_spill_reset(&q->spill); /* every segment is read: the space goes back */
	return 0;
}

/* perf processes a lane's packet queue: its samples go out now. */
static int lane_flush(struct queue *q, struct lane *l)
{
	int ret = lane_flush_spilled(q, l);

	while (!ret && l->held.head < l->held.n) {
		q->held_n--;
		ret = emit_held(q, &l->held.v[l->held.head++]);
	}
	if (ret)
		return ret; /* paused (or stopped): the rest stays for the next call */
	l->held.head = l->held.n = 0;
	l->marked = l->nseen = 0;
	l->packets = 0;
	return 0;
}

/* Go on with the flush under way: a lane (perf processes the packet queue the
 * merge popped), every lane of the queue by trace ID (cs_etm__clear_all_traceid_queues),
 * or those holding nothing perf has (see queue_flush_unseen). */
static int flush_go(struct queue *q)
{
	int ret = 0;

	if (q->flushing == flush_lane) {
		ret = lane_flush(q, q->lanes[q->flush_id]);
	} else {
		for (; q->flush_id < NIDS && !ret; q->flush_id += !ret) {
			struct lane *l = q->lanes[q->flush_id];

			if (l && (q->flushing == flush_all || !l->nseen))
				ret = lane_flush(q, l);
		}
	}
	if (!ret)
		q->flushing = flush_none;
	return ret;
}

static int flush(struct queue *q, enum flush kind, unsigned id)
{
	q->flushing = kind;
	q->flush_id = id;
	return flush_go(q);
}

static int queue_flush(struct queue *q)
{
	return flush(q, flush_all, 0);
}

/* perf's decoder stopped on the fragment's last bytes and perf goes on to the next
 * fragment without processing any packet queue (cs_etm__get_data_block resets
 * the decoder, nothing more). What only cstrace has goes out now, with the chunk
 * before it, unless a lane still holds packets perf has: then after them. */
static int queue_flush_unseen(struct queue *q)
{
	return flush(q, flush_unseen, 0);
}

/* Move what @l holds in memory (all marked perf_unseen: nothing will change it)
 * to the end of the queue's spill file. */
static int lane_spill(struct queue *q, struct lane *l)
{
	size_t n = l->held.n - l->held.head;
	uint64_t off;
	int ret;

	if (!n)
		return 0;
	if (CST_GROW(l->sp, l->sp_cap, l->nsp + 1) < 0)
		return -cste_nomem;
	ret = cst_spill_write(&q->spill, &l->held.v[l->held.head], n * sizeof(struct held), &off);
	if (ret)
		return ret;
	if (l->nsp && l->sp[l->nsp - 1].off + l->sp[l->nsp - 1].n * sizeof(struct held) == off) {
		l->sp[l->nsp - 1].n += n; /* right after the lane's last segment */
	} else {
		l->sp[l->nsp++] = (struct spilled){off, n};
		q->spill_live++;
	}
	q->held_n -= n;
	l->held.head = l->held.n = 0;
	l->marked = 0;
	return 0;
}

/* Every element the queue holds is one perf will not report. They stay held (until
 * the lane's first chunk goes out, or the queue ends), in the spill file once its
 * lanes hold more than the limit. */
static int queue_mark_unseen(struct queue *q)
{
	int ret = 0;

	for (unsigned id = 0; id < NIDS && !ret; id++) {
		struct lane *l = q->lanes[id];

		if (!l)
			continue;
		for (size_t i = l->marked > l->held.head ? l->marked : l->held.head; i < l->held.n;
		     i++) {
			if (!l->held.v[i].d.e.perf_unseen)
				l->nseen--;
			l->held.v[i].d.e.perf_unseen = true;
		}
		l->marked = l->held.n;
		if (q->held_n > q->hold_limit / sizeof(struct held))
			ret = lane_spill(q, l);
	}
	return ret;
}

/* cs_etm__clear_all_packet_queues: perf throws the packets away before a queue's
 * first timestamp. cstrace keeps them (they go out with the lane's first chunk,
 * marked perf_unseen) but counts as perf counts. */
static int queue_forget_packets(struct queue *q)
{
	for (unsigned id = 0; id < NIDS; id++)
		if (q->lanes[id])
			q->lanes[id]->packets = 0;
	return queue_mark_unseen(q);
}

/* ------------------------------------------------------------- the model */

static void reset_time(struct lane *l)
{
	l->cs_ts = l->next_ts = l->instr_count = 0;
}

static enum step packet(struct lane *l)
{
	return ++l->packets == PACKET_QUEUE_FULL ? step_wait : step_cont;
}

/* What perf's cs_etm_decoder__gen_trace_elem_printer answers for @e. */
static enum step step(const struct perf_order *o, struct lane *l, const struct cst_elem *e,
		      uint64_t *key)
{
	switch (e->type) {
	case cst_elem_no_sync:
	case cst_elem_trace_on:
		/* a discontinuity: "who knows when we'll get new traces" */
		reset_time(l);
		return packet(l);
	case cst_elem_instr_range:
		if (packet(l) == step_wait)
			return step_wait; /* full: no time estimate for this range */
		l->instr_count += e->num_insns;
		if (!l->cs_ts)
			return step_cont; /* no timestamp since the discontinuity yet */
		/* do_soft_timestamp: the range started where the last estimate ended */
		l->cs_ts = l->next_ts;
		l->next_ts += l->instr_count;
		l->instr_count = 0;
		*key = l->cs_ts;
		return step_wait_time;
	case cst_elem_exception:
	case cst_elem_exception_ret:
		return packet(l);
	case cst_elem_timestamp:
		if (l->cs_ts) {
			l->next_ts = e->timestamp; /* the next soft timestamp takes it */
			return step_cont;
		}
		/* do_hard_timestamp: the first since a discontinuity dates the ranges
		 * before it back by their instruction count (0 when that would underflow) */
		if (!e->timestamp || l->instr_count > e->timestamp)
			l->cs_ts = 0;
		else
			l->cs_ts = e->timestamp - l->instr_count;
		l->next_ts = e->timestamp;
		l->instr_count = 0;
		*key = l->cs_ts;
		return l->cs_ts ? step_wait_time : step_wait;
	case cst_elem_pe_context:
		/* a context that names the thread: a timestamp follows, rely on it */
		if ((o->ctx_kind == perf_order_ctx_ctxid && e->ctx.ctxid_valid) ||
		    (o->ctx_kind == perf_order_ctx_vmid && e->ctx.vmid_valid))
			reset_time(l);
		return step_cont;
	case cst_elem_eot:
		/* perf resets its decoder between fragments and never sends the end of
		 * trace: it sees no such element */
	default:
		return step_cont;
	}
}

/* ------------------------------------------------------------- running */

/* The next held input of @q, decoding more when none is left; NULL at its end
 * (*err says whether that is an error). */
static struct held *next_in(struct queue *q, int *err)
{
	*err = 0;
	while (q->in.head == q->in.n) {
		int ret;

		if (q->exhausted)
			return NULL;
		q->in.head = q->in.n = 0;
		ret = q->fill(q->ctx, q->index);
		if (ret == 1) {
			q->exhausted = true;
		} else if (ret) {
			*err = ret;
			return NULL;
		}
	}
	return &q->in.v[q->in.head++];
}

/* Decode @q until perf would stop it with a time estimate (the queue then waits
 * in the merge, 0 with @key) or until it ends (1). @first:
 * cs_etm__queue_first_cs_timestamp, before the queue's first estimate. A flush
 * paused ends the call; the next goes on with it, then with the next input. */
static int run_queue(struct queue *q, bool first, uint64_t *key)
{
	for (;;) {
		struct held *h, *dst;
		struct lane *l;
		enum step s;
		int err;

		h = next_in(q, &err);
		if (!h && err)
			return err;
		if (!h) {
			/* perf is done with the queue (cs_etm__end_block processes no
			 * packet queue): what is still held, it never reports */
			return queue_mark_unseen(q) ?: queue_flush(q) ?: 1;
		}
		if (h->end) {
			bool stopped = q->perf_stopped;

			q->perf_stopped = false;
			if (first)
				err = queue_forget_packets(q);
			else
				err = stopped ? queue_flush_unseen(q) : queue_flush(q);
			if (err)
				return err; /* else: used up with no estimate pending */
			continue;
		}
		l = lane_of(q, h->d.e.trace_id);
		if (!l || !(dst = vec_add(&l->held)))
			return -cste_nomem;
		held_copy(dst, h);
		q->held_n++;
		if (h->src == from_end_of_trace || q->perf_stopped) {
			dst->d.e.perf_unseen = true; /* no packet, no estimate */
			continue;
		}
		if (!dst->d.e.perf_unseen)
			l->nseen++;
		s = step(q->o, l, &dst->d.e, key);
		if (s != step_cont && h->src == from_last_bytes)
			q->perf_stopped = true; /* and never resumes (see .h) */
		if (s == step_wait_time) {
			q->waiting = true;
			q->wait_id = dst->d.e.trace_id & (NIDS - 1);
			return 0;
		}
		if (s == step_wait) {
			/* a full packet queue, or a timestamp that gave no estimate */
			err = first ? queue_forget_packets(q) : queue_flush(q);
			if (err)
				return err;
		}
	}
}

int dec_perf_order_next(struct perf_order *o, unsigned queue, uint64_t *key)
{
	struct queue *q;
	int ret;

	if (!o || queue >= o->nqueues)
		return -cste_invalid;
	q = &o->q[queue];
	if (q->waiting) {
		/* the merge popped it: perf processes the lane that gave the estimate */
		q->waiting = false;
		q->flushing = flush_lane;
		q->flush_id = q->wait_id;
	}
	if (q->flushing && (ret = flush_go(q)))
		return ret;
	ret = run_queue(q, !q->started, key);
	if (ret == 0 || ret == 1)
		q->started = true;
	return ret;
}

/* ------------------------------------------------------------- the merge */

/* auxtrace_heap__add / auxtrace_heap__pop, ties broken as there: the same keys
 * must come out in the same order as in perf. */
static void heap_place(struct heap_item *heap, unsigned pos, struct heap_item it)
{
	while (pos) {
		unsigned parent = (pos - 1) >> 1;

		if (heap[parent].key <= it.key)
			break;
		heap[pos] = heap[parent];
		pos = parent;
	}
	heap[pos] = it;
}

static void heap_pop(struct heap_item *heap, unsigned *n)
{
	unsigned pos = 0, cnt = *n;

	(*n)--;
	for (;;) {
		unsigned left = (pos << 1) + 1, right = left + 1;

		if (left >= cnt)
			break;
		if (right >= cnt) {
			heap[pos] = heap[left];
			return;
		}
		if (heap[left].key < heap[right].key) {
			heap[pos] = heap[left];
			pos = left;
		} else {
			heap[pos] = heap[right];
			pos = right;
		}
	}
	heap_place(heap, pos, heap[cnt - 1]);
}

int dec_perf_order_merge(unsigned nqueues, perf_order_chunk_fn chunk, void *ctx)
{
	/* a queue waits in the heap at most once: it stops decoding until popped */
	struct heap_item *heap = calloc(nqueues ? nqueues : 1, sizeof(*heap));
	unsigned nheap = 0;
	uint64_t key = 0;
	int ret = 0;

	if (!heap)
		return -cste_nomem;
	for (unsigned i = 0; i < nqueues && (ret == 0 || ret == 1); i++) {
		ret = chunk(ctx, i, &key);
		if (!ret)
			heap_place(heap, nheap++, (struct heap_item){key, i});
	}
	while ((ret == 0 || ret == 1) && nheap) {
		uint32_t top = heap[0].queue;

		heap_pop(heap, &nheap);
		ret = chunk(ctx, top, &key);
		if (!ret)
			heap_place(heap, nheap++, (struct heap_item){key, top});
	}
	free(heap);
	return ret == 1 ? 0 : ret;
}

static int next_chunk(void *ctx, unsigned queue, uint64_t *key)
{
	return dec_perf_order_next(ctx, queue, key);
}

int dec_perf_order_run(struct perf_order *o)
{
	if (!o)
		return -cste_invalid;
	return dec_perf_order_merge(o->nqueues, next_chunk, o);
}
