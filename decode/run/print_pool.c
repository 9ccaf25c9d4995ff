/* Elements printed on threads beside a decode that runs on one (run.h): the
 * decode hands its elements over in order, in batches; printer threads print
 * whole batches side by side (a print function keeps no state); the caller's
 * thread writes the batches' bytes in order, and prints a batch itself rather
 * than wait for a printer. */
#include "run.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

/* elements per batch: each hand-over costs the lock and often a wake-up */
#define BATCH_ELEMS 1024
/* batches in flight per printer: enough that printers rarely wait for the
 * decode, few enough to bound memory (an element held is about 300 bytes) */
#define BATCHES_PER_PRINTER 3
#define MAX_PRINTERS 16

enum batch_state { batch_free, batch_filling, batch_queued, batch_printing, batch_printed };

struct batch {
	enum batch_state state;
	struct dec_held *elems;
	size_t n;
	char *text;
	size_t len, cap;
	bool failed;               /* out of memory printing */
	uint64_t offset;           /* of its last element but an end of trace */
	bool has_offset;
};

struct dec_print_pool {
	cst_elem_print_fn print;
	void *print_ctx;
	cst_lines_fn write;
	void *write_ctx;
	bool keep_ocsd;
	pthread_mutex_t lock;
	pthread_cond_t cond;
	struct batch *ring;
	unsigned nbatches;
	unsigned head;             /* the oldest batch not yet written */
	unsigned tail;             /* the batch being filled */
	bool stop;                 /* the printers end */
	int ret;                   /* what a write returned, or an error: the run stops */
	pthread_t tid[MAX_PRINTERS];
	unsigned nprinters;
};

/* Print @b's elements into its text (no lock: the batch is this thread's). */
static void print_batch(struct dec_print_pool *p, struct batch *b)
{
	b->len = 0;
	for (size_t i = 0; i < b->n && !b->failed; i++) {
		int n;

		if (b->cap - b->len < SPLIT_LINE) {
			size_t cap = b->cap ? 2 * b->cap : 64 * SPLIT_LINE;
			char *t = realloc(b->text, cap);

			if (!t) {
				b->failed = true;
				break;
			}
			b->text = t;
			b->cap = cap;
		}
		n = p->print(p->print_ctx, dec_held_elem(&b->elems[i]), b->text + b->len,
			     SPLIT_LINE);
		if (n > 0)
			b->len += (size_t)n;
	}
}

/* The oldest batch waiting for a printer (under the lock), or NULL. */
static struct batch *queued(struct dec_print_pool *p)
{
	for (unsigned k = p->head; k != p->tail; k = (k + 1) % p->nbatches)
		if (p->ring[k].state == batch_queued)
			return &p->ring[k];
	return NULL;
}

static void *printer(void *arg)
{
	struct dec_print_pool *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->stop) {
		struct batch *b = queued(p);

		if (!b) {
			pthread_cond_wait(&p->cond, &p->lock);
			continue;
		}
		b->state = batch_printing;
		pthread_mutex_unlock(&p->lock);
		print_batch(p, b);
		pthread_mutex_lock(&p->lock);
		b->state = batch_printed;
		pthread_cond_broadcast(&p->cond);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Write the oldest batch (under the lock, which it drops while writing),
 * printing it first when no printer has taken it, waiting when one has. */
static void write_head(struct dec_print_pool *p)
{
	struct batch *b = &p->ring[p->head];
	int ret;

	while (b->state == batch_printing)
		pthread_cond_wait(&p->cond, &p->lock);
	if (b->state == batch_queued) {
		b->state = batch_printing;
		pthread_mutex_unlock(&p->lock);
		print_batch(p, b);
		pthread_mutex_lock(&p->lock);
	}
	pthread_mutex_unlock(&p->lock);
	ret = b->failed ? -cste_nomem : 0;
	if (!ret && !p->ret)
		ret = p->write(p->write_ctx, b->text, b->len, b->n, b->offset, b->has_offset);
	pthread_mutex_lock(&p->lock);
	if (ret && !p->ret)
		p->ret = ret;
	b->state = batch_free;
	b->n = 0;
	b->failed = false;
	b->has_offset = false;
	p->head = (p->head + 1) % p->nbatches;
}

/* Hand the batch being filled to the printers (under the lock). */
static void queue_tail(struct dec_print_pool *p)
{
	struct batch *b = &p->ring[p->tail];

	if (b->state != batch_filling)
		return;
	b->state = batch_queued;
	p->tail = (p->tail + 1) % p->nbatches;
	pthread_cond_broadcast(&p->cond);
}

/* Write every batch handed over (under the lock). */
static void drain(struct dec_print_pool *p)
{
	queue_tail(p);
	while (p->head != p->tail)
		write_head(p);
}

int dec_print_pool_elem(void *ctx, const struct cst_elem *e)
{
	struct dec_print_pool *p = ctx;
	struct batch *b = &p->ring[p->tail];

	if (p->ret)
		return p->ret;
	if (b->state == batch_free) {
		/* the ring is full when the next slot is the oldest unwritten */
		if ((p->tail + 1) % p->nbatches == p->head) {
			pthread_mutex_lock(&p->lock);
			write_head(p);
			pthread_mutex_unlock(&p->lock);
			if (p->ret)
				return p->ret;
		}
		b->state = batch_filling;
	}
	dec_held_keep(&b->elems[b->n++], e, p->keep_ocsd);
	if (e->type != cst_elem_eot) {
		b->offset = e->offset;
		b->has_offset = true;
	}
	if (b->n == BATCH_ELEMS) {
		pthread_mutex_lock(&p->lock);
		queue_tail(p);
		pthread_mutex_unlock(&p->lock);
	}
	return 0;
}

int dec_print_pool_finish(struct dec_print_pool *p)
{
	int ret;

	pthread_mutex_lock(&p->lock);
	drain(p);
	ret = p->ret;
	pthread_mutex_unlock(&p->lock);
	return ret;
}

void dec_print_pool_free(struct dec_print_pool *p)
{
	if (!p)
		return;
	pthread_mutex_lock(&p->lock);
	p->stop = true;
	pthread_cond_broadcast(&p->cond);
	pthread_mutex_unlock(&p->lock);
	for (unsigned i = 0; i < p->nprinters; i++)
		pthread_join(p->tid[i], NULL);
	for (unsigned k = 0; p->ring && k < p->nbatches; k++) {
		free(p->ring[k].elems);
		free(p->ring[k].text);
	}
	free(p->ring);
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->cond);
	free(p);
}

int dec_print_pool_start(struct dec_print_pool **out, unsigned printers, cst_elem_print_fn print,
			 void *print_ctx, cst_lines_fn write, void *write_ctx, bool keep_ocsd)
{
	struct dec_print_pool *p;

	*out = NULL;
	if (printers > MAX_PRINTERS)
		printers = MAX_PRINTERS;
	if (!printers)
		return 0;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -cste_nomem;
	*p = (struct dec_print_pool){.print = print, .print_ctx = print_ctx, .write = write,
				     .write_ctx = write_ctx, .keep_ocsd = keep_ocsd};
	pthread_mutex_init(&p->lock, NULL);
	pthread_cond_init(&p->cond, NULL);
	p->nbatches = BATCHES_PER_PRINTER * printers + 2;
	p->ring = calloc(p->nbatches, sizeof(*p->ring));
	for (unsigned k = 0; p->ring && k < p->nbatches; k++)
		if (!(p->ring[k].elems = malloc(BATCH_ELEMS * sizeof(*p->ring[k].elems)))) {
			dec_print_pool_free(p);
			return -cste_nomem;
		}
	if (!p->ring) {
		dec_print_pool_free(p);
		return -cste_nomem;
	}
	for (unsigned i = 0; i < printers; i++)
		if (pthread_create(&p->tid[p->nprinters], NULL, printer, p) == 0)
			p->nprinters++;
	if (!p->nprinters) {
		dec_print_pool_free(p); /* printed on the caller's thread, as without one */
		return 0;
	}
	*out = p;
	return 0;
}
