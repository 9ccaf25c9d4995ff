/* perf.data in time order, its queues run ahead of the merge on threads.
 *
 * The merge (timed.c, order.c) asks for one queue's next chunk at a time, in an
 * order only it knows. A queue's chunks do not depend on the other queues': its
 * decoder, attribution, code memory and its model of perf's packet queues and
 * time estimates are its own, and the maps and threads stand still once the walk
 * has applied the sideband. So workers run queues ahead, a block at a time,
 * decoding their pieces and recording what each chunk hands on (elements, the end
 * of the chunk with its estimate, warnings, progress); the merge replays one
 * chunk per turn of the queue, where a serial run would have decoded and modelled
 * it. Output, messages and their order are the serial run's.
 *
 * OpenCSD 1.3.3 keeps decoder errors in one process-wide logger that is not safe
 * across threads: it is silenced while the workers run, and a message from a
 * worker's decoder ends that queue's recording with qev_fallback, before the piece
 * that said it. The run is then taken again on one thread, passing what went out
 * (timed.c). */
#include "perf_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* items a block is filled to before it is handed to the merge: each hand-over
 * costs the lock and often a wake-up */
#define AHEAD_ITEMS 1024
/* bytes of printed lines a block is filled to, past which it is handed over */
#define AHEAD_TEXT (128u * 1024u)
#define AHEAD_ITEM_CAP (AHEAD_ITEMS + AHEAD_ITEMS / 2)
/* what all queues may hold ready together (each queue at least two blocks): a
 * block's element copies with OpenCSD's (about 300 bytes each on LP64, about
 * 450 KiB a block) and its ranges (56 bytes each), or its lines where they are
 * printed here (132 KiB), and its items (24 bytes each) (block_bytes). The
 * merge often drains one queue for a long stretch (a CPU's run between
 * timestamps that come far apart: 85,000 branches at a time on QEMU's four-CPU
 * runs); what a worker decodes of the other queues meanwhile is all that runs
 * beside it. */
#define AHEAD_HELD_BYTES (24u * 1024u * 1024u)
#define AHEAD_MIN_READY 2
/* more queues than this decode on the merge's thread (what they would hold:
 * AHEAD_MIN_READY blocks each, a block being filled and one replayed) */
#define AHEAD_MAX_QUEUES 64
#define AHEAD_THREADS 16

/* What a chunk handed on, in order. Elements and lines are kept apart from the
 * items, each in the order of its items: a printed line is all most items
 * carry, and an element copy is ten times an item. An element in the context of
 * the one before it in its block is kept as a struct dec_range: the merge's
 * thread reads what a worker wrote, a cache miss per line. */
struct qitem {
	uint32_t kind;     /* enum qev */
	uint32_t fragment; /* qev_line: the element's */
	uint64_t a, b;     /* qev_line: the element's offset (UINT64_MAX: none) and
			    * its line's length; else the event's values */
};

/* Recorded chunks of one queue, each ended by a qev_chunk_end item; @end says
 * how the recording goes on after the last (0: in the next block, which may go
 * on with the same chunk). */
struct qblock {
	struct qblock *next;
	size_t n, cap;
	struct qitem *v;
	size_t nheld, cap_held;
	struct dec_held *held; /* its qev_elem items' elements, and OpenCSD's behind them */
	size_t nranges, cap_ranges;
	struct dec_range *ranges; /* its qev_range items' */
	struct cst_buf text;   /* its qev_line items' lines, when printed here */
	enum qev end;      /* 0, qev_queue_end, qev_stop or qev_fallback */
	int end_value;     /* qev_stop's */
};

/* A cache line: each thread's fields of a queue on lines of their own (the
 * merge writes its own for every element it replays, a worker its own for
 * every one it records). */
#define AHEAD_LINE 64

struct qahead {
	/* the worker's that runs it: */
	_Alignas(AHEAD_LINE) struct qrun run;
	struct ahead *ah;
	struct cst_log log;          /* its decoders' messages */
	bool tainted;                /* a decoder of it had something to say */
	int err;                     /* recording failed (no memory) */
	struct qblock *fill;         /* the block its worker records into */
	/* under the lock: */
	_Alignas(AHEAD_LINE) struct qblock *first, *last; /* ready for the merge, oldest first */
	unsigned nready;
	bool busy;                   /* a worker decodes it */
	bool done;                   /* its last block is ready */
	/* the merge's: the block it replays and where, and whether it has told the
	 * merge that the queue has nothing left */
	_Alignas(AHEAD_LINE) struct qblock *taking;
	size_t at, held_at, range_at, text_at; /* its next item, element, range and line */
	struct cst_elem replayed; /* the element it replayed last, for a qev_range */
	bool ended;
};

struct ahead {
	/* cst_session_run_lines with no sideband callback: the chunks' elements are
	 * printed on the workers, and only their lines reach the merge */
	cst_elem_print_fn print;
	void *print_ctx;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct qahead *qa;
	unsigned nq, max_ready;
	int wanted;        /* the queue the merge waits for, or -1 */
	/* the workers end: the merge ended, or a queue fell back (written under the
	 * lock, read without it between pieces) */
	bool stop;
	struct qblock *spare;
	pthread_t tid[AHEAD_THREADS];
	unsigned nthreads;
};

bool dec_pi_ahead_wanted(struct cst_perf_input *in)
{
	/* --id: every queue is decoded, and only the merge's thread may count what
	 * was kept (dec_pi_on_elem); a run resumed after a crash goes on one thread. Behind
	 * the pipe, a worker's crash stops the merge before its next element (the
	 * pipe's fill_begin), and what it made before is delivered. */
	return in->nworkers >= 2 && !in->id_filter[0] && !in->id_filter[1] && !in->resume_at &&
	       dec_perf_mem_ready_quietly(in->mem);
}

/* ------------------------------------------------------------- recording */

/* Room for one more in a block's array *@arrp of @n: a piece seldom makes more
 * than a few hundred items, so room for them past AHEAD_ITEMS at first, where
 * doubling would double what blocks hold. */
static int block_room(void *arrp, size_t *cap, size_t n, size_t size)
{
	void **arr = arrp;

	if (!*arr && (*arr = malloc(AHEAD_ITEM_CAP * size)))
		*cap = AHEAD_ITEM_CAP;
	return *arr && n < *cap ? 0 : cst_grow(arrp, cap, n + 1, size);
}

static struct qitem *new_item(struct qahead *qa)
{
	struct qblock *b = qa->fill;

	if (block_room(&b->v, &b->cap, b->n, sizeof(*b->v)) < 0) {
		qa->err = -cste_nomem;
		return NULL;
	}
	return &b->v[b->n++];
}

/* A recording ends: a decoder on the worker had something to say (see the top). */
#define AHEAD_FALLBACK 0x5046

/* qrun_ops.event on a worker: the model's own events applied here (the queue's
 * model is this thread's while it runs the queue), the rest recorded for the
 * merge. */
static int ahead_record(struct qrun *r, enum qev kind, uint64_t a, uint64_t b)
{
	struct qitem *it;

	if (kind == qev_last_bytes || kind == qev_end_data || kind == qev_end_fragment)
		return dec_pi_queue_apply(r->in, r->q, kind, a, b);
	it = new_item(r->ahead);
	if (!it)
		return -cste_nomem;
	it->kind = kind;
	it->a = a;
	it->b = b;
	return 0;
}

/* cst_elem_fn of a worker's decoder: the element, with the queue's attribution,
 * to the queue's model. */
static int ahead_elem(void *ctx, const struct cst_elem *elem)
{
	struct qrun *r = ctx;
	struct cst_elem *held = dec_perf_order_push(r->in->order, r->q, elem);

	if (!held)
		return -cste_nomem;
	dec_pi_worker_elem(&r->wm, held);
	return 0;
}

/* A worker's decoder said something: only the merge's thread can say it as a
 * serial run does. */
static void ahead_log(void *ctx, enum cst_log_level level, const char *msg)
{
	struct qahead *qa = ctx;

	(void)level;
	(void)msg;
	qa->tainted = true;
}

/* qrun_ops.decoder on a worker: reading through the queue's own memory cursor,
 * its elements and messages recorded. */
static struct cst_decoder *ahead_decoder(struct qrun *r, struct cst_decoder **slot,
					 const struct frag *f)
{
	struct cst_decoder_opts o = {.sz = sizeof(o), .log = &r->ahead->log,
				     .fsync_reset = !f->raw, .mem_read = dec_perf_mem_cursor_read,
				     .mem_ctx = &r->wm.c};

	/* cstrace's decoders where they cover the source: what they decline is a
	 * message, which sends the queue to the serial run as a decoder error does */
	return dec_pi_decoder_make(r->in, r->in->trace, slot, f->raw, f->ci, &o,
				   &r->in->engines.workers, ahead_elem, r, NULL, NULL);
}

static const struct qrun_ops ahead_ops = {ahead_decoder, ahead_record};

/* The block being recorded is full, or the merge ended: the recording pauses. */
static bool ahead_full(const struct qahead *qa)
{
	return qa->fill->n >= AHEAD_ITEMS || qa->fill->text.len >= AHEAD_TEXT ||
	       __atomic_load_n(&qa->ah->stop, __ATOMIC_RELAXED);
}

/* perf_order_fill_fn of a queue's model on a worker: its next piece, decoded
 * here. Nothing of a piece a decoder had something to say in stays recorded: the
 * serial run takes it again from there. */
static int ahead_fill(void *ctx, unsigned q)
{
	struct qahead *qa = ctx;
	struct qblock *b = qa->fill;
	size_t piece_at = b->n, held_at = b->nheld, ranges_at = b->nranges, text_at = b->text.len;
	int ret = dec_pi_queue_piece(&qa->run);

	(void)q;
	if (qa->tainted) {
		b->n = piece_at;
		b->nheld = held_at;
		b->nranges = ranges_at;
		b->text.len = text_at;
		return AHEAD_FALLBACK;
	}
	if (!ret && qa->err)
		return qa->err;
	/* a queue waiting for its first timestamp hands nothing on for long: what
	 * its pieces record (progress) fills blocks too */
	if (!ret && ahead_full(qa))
		return PERF_ORDER_PAUSE;
	return ret;
}

/* cst_elem_fn of a queue's model on a worker: an element of the chunk, recorded
 * for the merge; the recording pauses once the block is full (or the run ends). */
static int ahead_emit(void *ctx, const struct cst_elem *e)
{
	struct qahead *qa = ctx;
	struct qblock *b = qa->fill;
	struct qitem *it;

	/* the line's or the element's room first: an item is never left half made */
	if (qa->ah->print) {
		char *at = (char *)cst_buf_room(&b->text, SPLIT_LINE);
		size_t n;

		if (!at || !(it = new_item(qa)))
			return -cste_nomem;
		n = dec_print_line(qa->ah->print, qa->ah->print_ctx, e, at);
		b->text.len -= SPLIT_LINE - n;
		it->kind = qev_line;
		it->fragment = e->fragment;
		it->a = e->type != cst_elem_eot ? e->offset : UINT64_MAX;
		it->b = n;
	} else if (b->nheld && !e->ocsd && cst_elem_same_context(e, &b->held[b->nheld - 1].e)) {
		/* in the context of the block's last whole element, as every range
		 * since it is: a block's first element is whole */
		if (block_room(&b->ranges, &b->cap_ranges, b->nranges, sizeof(*b->ranges)) < 0 ||
		    !(it = new_item(qa)))
			return -cste_nomem;
		it->kind = qev_range;
		dec_range_from(&b->ranges[b->nranges++], e);
	} else {
		if (block_room(&b->held, &b->cap_held, b->nheld, sizeof(*b->held)) < 0 ||
		    !(it = new_item(qa)))
			return -cste_nomem;
		it->kind = qev_elem;
		/* the model kept OpenCSD's element or not */
		dec_held_keep(&b->held[b->nheld++], e, true);
	}
	return ahead_full(qa) ? PERF_ORDER_PAUSE : 0;
}

/* Record chunks of @qa's queue into @b until it holds AHEAD_ITEMS items or the
 * recording ends (then @b->end says how). */
static void record_block(struct qahead *qa, struct qblock *b)
{
	struct cst_perf_input *in = qa->run.in;

	qa->fill = b;
	for (;;) {
		uint64_t key = 0;
		int ret = dec_perf_order_next(in->order, qa->run.q, &key);

		if (ret == PERF_ORDER_PAUSE)
			break;
		if (!ret) {
			if (ahead_record(&qa->run, qev_chunk_end, key, 0)) {
				b->end = qev_stop;
				b->end_value = -cste_nomem;
				break;
			}
			if (ahead_full(qa))
				break;
			continue;
		}
		if (ret == 1) {
			b->end = qev_queue_end;
		} else if (ret == AHEAD_FALLBACK) {
			b->end = qev_fallback;
		} else {
			b->end = qev_stop;
			b->end_value = ret;
		}
		break;
	}
	qa->fill = NULL;
}

/* ------------------------------------------------------------- workers */

/* The queue a worker takes next (under the lock): the one the merge waits for,
 * else the one with the fewest blocks ready; -1 when none needs one. */
static int pick(const struct ahead *ah)
{
	int best = -1;

	if (ah->wanted >= 0) {
		const struct qahead *qa = &ah->qa[ah->wanted];

		if (!qa->busy && !qa->done && qa->nready < ah->max_ready)
			return ah->wanted;
	}
	for (unsigned q = 0; q < ah->nq; q++) {
		const struct qahead *qa = &ah->qa[q];

		if (!qa->busy && !qa->done && qa->nready < ah->max_ready &&
		    (best < 0 || qa->nready < ah->qa[best].nready))
			best = (int)q;
	}
	return best;
}

static struct qblock *take_spare(struct ahead *ah)
{
	struct qblock *b = ah->spare;

	if (!b)
		return calloc(1, sizeof(*b));
	ah->spare = b->next;
	b->next = NULL;
	b->n = b->nheld = b->nranges = 0;
	b->text.len = 0;
	b->text.failed = false;
	b->end = 0;
	b->end_value = 0;
	return b;
}

static void *worker(void *arg)
{
	struct ahead *ah = arg;

	pthread_mutex_lock(&ah->lock);
	while (!ah->stop) {
		int q = pick(ah);
		struct qahead *qa;
		struct qblock *b;

		if (q < 0) {
			pthread_cond_wait(&ah->cond, &ah->lock);
			continue;
		}
		qa = &ah->qa[q];
		b = take_spare(ah);
		if (!b) {
			/* the merge finds the queue ended with no memory */
			__atomic_store_n(&ah->stop, true, __ATOMIC_RELAXED);
			qa->err = -cste_nomem;
			qa->done = true;
			break;
		}
		qa->busy = true;
		pthread_mutex_unlock(&ah->lock);
		record_block(qa, b);
		pthread_mutex_lock(&ah->lock);
		qa->busy = false;
		if (qa->last)
			qa->last->next = b;
		else
			qa->first = b;
		qa->last = b;
		qa->nready++;
		if (b->end)
			qa->done = true;
		if (b->end == qev_fallback)
			__atomic_store_n(&ah->stop, true, __ATOMIC_RELAXED);
		pthread_cond_broadcast(&ah->cond);
	}
	pthread_cond_broadcast(&ah->cond);
	pthread_mutex_unlock(&ah->lock);
	return NULL;
}

/* ------------------------------------------------------------- the merge */

/* The next block of @qa's queue, waiting for it; NULL when none will come. */
static struct qblock *next_block(struct ahead *ah, struct qahead *qa, unsigned q)
{
	struct qblock *b;

	pthread_mutex_lock(&ah->lock);
	while (!qa->first && !ah->stop) {
		ah->wanted = (int)q;
		pthread_cond_broadcast(&ah->cond);
		pthread_cond_wait(&ah->cond, &ah->lock);
	}
	b = qa->first;
	if (b) {
		qa->first = b->next;
		if (!qa->first)
			qa->last = NULL;
		qa->nready--;
		b->next = NULL;
		if (ah->wanted == (int)q)
			ah->wanted = -1;
		pthread_cond_broadcast(&ah->cond); /* room for another block */
	}
	pthread_mutex_unlock(&ah->lock);
	return b;
}

static void recycle(struct ahead *ah, struct qblock *b)
{
	pthread_mutex_lock(&ah->lock);
	b->next = ah->spare;
	ah->spare = b;
	pthread_mutex_unlock(&ah->lock);
}

/* The merge must take the run again on one thread: a stop value it returns. */
static int fall_back(struct cst_perf_input *in)
{
	in->fallback = true;
	return 2;
}

int dec_pi_ahead_chunk(void *ctx, unsigned q, uint64_t *key)
{
	struct cst_perf_input *in = ctx;
	struct ahead *ah = in->ahead;
	struct qahead *qa = &ah->qa[q];

	if (qa->ended)
		return 1;
	for (;;) {
		struct qblock *b = qa->taking;
		enum qev end;
		int value;

		if (!b) {
			b = next_block(ah, qa, q);
			if (!b)
				return qa->err ? qa->err : fall_back(in);
			qa->taking = b;
			qa->at = qa->held_at = qa->range_at = qa->text_at = 0;
		}
		while (qa->at < b->n) {
			struct qitem *it = &b->v[qa->at++];
			int ret;

			if (it->kind == qev_chunk_end) {
				*key = it->a;
				return 0;
			}
			if (it->kind == qev_line) {
				ret = dec_pi_line_timed(in, it->fragment,
							(char *)b->text.p + qa->text_at, it->b, it->a);
				qa->text_at += it->b;
			} else if (it->kind == qev_range) {
				dec_range_into(&qa->replayed, &b->ranges[qa->range_at++]);
				ret = dec_pi_emit_timed(in, &qa->replayed);
			} else if (it->kind == qev_elem) {
				struct dec_held *h = &b->held[qa->held_at++];

				qa->replayed = h->e;
				ret = dec_pi_emit_timed(in, dec_held_elem(h));
			} else
				ret = dec_pi_queue_apply(in, q, it->kind, it->a, it->b);
			if (ret)
				return ret;
		}
		end = b->end;
		value = b->end_value;
		qa->taking = NULL;
		recycle(ah, b);
		if (end == qev_queue_end) {
			qa->ended = true;
			return 1;
		}
		if (end == qev_stop)
			return value;
		if (end == qev_fallback)
			return fall_back(in);
	}
}

/* ------------------------------------------------------------- start, stop */

/* What a block may hold: its items, and its lines where they are printed here
 * (a line begun just under AHEAD_TEXT may take SPLIT_LINE more), else its
 * elements, whole and as ranges. */
static size_t block_bytes(const struct ahead *ah)
{
	return AHEAD_ITEM_CAP * sizeof(struct qitem) +
	       (ah->print ? AHEAD_TEXT + SPLIT_LINE
			  : AHEAD_ITEM_CAP * (sizeof(struct dec_held) + sizeof(struct dec_range)));
}

int dec_pi_ahead_start(struct cst_perf_input *in)
{
	unsigned nq = in->ntq, threads = in->nworkers;
	struct ahead *ah;

	if (!nq || nq > AHEAD_MAX_QUEUES)
		return 0;
	ah = calloc(1, sizeof(*ah));
	if (!ah || !(ah->qa = aligned_alloc(AHEAD_LINE, nq * sizeof(*ah->qa)))) {
		free(ah);
		return -cste_nomem;
	}
	memset(ah->qa, 0, nq * sizeof(*ah->qa));
	pthread_mutex_init(&ah->lock, NULL);
	pthread_cond_init(&ah->cond, NULL);
	ah->nq = nq;
	ah->wanted = -1;
	if (in->print && in->write && !in->user_sb_fn) {
		ah->print = in->print;
		ah->print_ctx = in->print_ctx;
	}
	ah->max_ready = (unsigned)(AHEAD_HELD_BYTES / block_bytes(ah) / nq);
	if (ah->max_ready < AHEAD_MIN_READY)
		ah->max_ready = AHEAD_MIN_READY;
	in->ahead = ah;
	for (unsigned q = 0; q < nq; q++) {
		struct qahead *qa = &ah->qa[q];

		qa->ah = ah;
		qa->run = (struct qrun){.in = in, .q = q, .ops = &ahead_ops, .ahead = qa};
		qa->run.wm.in = in;
		dec_perf_mem_cursor_init(&qa->run.wm.c, in->mem);
		qa->log = (struct cst_log){ahead_log, qa};
	}
	/* silenced: see the top of this file */
	dec_ocsd_log_quiet(true);
	if (threads > nq)
		threads = nq;
	if (threads > AHEAD_THREADS)
		threads = AHEAD_THREADS;
	/* the workers wait for the lock until every queue's model is theirs */
	pthread_mutex_lock(&ah->lock);
	for (unsigned i = 0; i < threads; i++)
		if (pthread_create(&ah->tid[ah->nthreads], NULL, worker, ah) == 0)
			ah->nthreads++;
	for (unsigned q = 0; q < nq && ah->nthreads; q++)
		dec_perf_order_queue_fns(in->order, q, ahead_fill, ahead_emit, &ah->qa[q]);
	pthread_mutex_unlock(&ah->lock);
	if (!ah->nthreads) {
		dec_ocsd_log_quiet(false);
		dec_pi_ahead_free(in); /* decoded on this thread, as without threads */
		return 0;
	}
	in->queues_ahead = nq;
	return 0;
}

void dec_pi_ahead_stop(struct cst_perf_input *in)
{
	struct ahead *ah = in->ahead;

	if (!ah || !ah->nthreads)
		return;
	pthread_mutex_lock(&ah->lock);
	__atomic_store_n(&ah->stop, true, __ATOMIC_RELAXED);
	pthread_cond_broadcast(&ah->cond);
	pthread_mutex_unlock(&ah->lock);
	for (unsigned i = 0; i < ah->nthreads; i++)
		pthread_join(ah->tid[i], NULL);
	ah->nthreads = 0;
	dec_ocsd_log_quiet(false);
}

static void free_blocks(struct qblock *b)
{
	while (b) {
		struct qblock *next = b->next;

		free(b->v);
		free(b->held);
		free(b->ranges);
		cst_buf_fini(&b->text);
		free(b);
		b = next;
	}
}

void dec_pi_ahead_free(struct cst_perf_input *in)
{
	struct ahead *ah = in->ahead;

	if (!ah)
		return;
	dec_pi_ahead_stop(in);
	for (unsigned q = 0; q < ah->nq; q++) {
		free_blocks(ah->qa[q].first);
		free_blocks(ah->qa[q].taking);
	}
	free_blocks(ah->spare);
	free(ah->qa);
	pthread_mutex_destroy(&ah->lock);
	pthread_cond_destroy(&ah->cond);
	free(ah);
	in->ahead = NULL;
}
