/* Internal to symbolize/: the call model of a stretch of the stream, run on a
 * decoding thread for the call views (calls_rel.c), and what the caller's model
 * (calls.c) takes of each of its blocks. */
#ifndef CSTRACE_SYMBOLIZE_CALLS_REL_H
#define CSTRACE_SYMBOLIZE_CALLS_REL_H

#include "cstrace/symbolize.h"

/* What sym_calls_check returns for a block that does not fit the caller's
 * model (positive, as the views' give-up is). */
#define SYM_CALLS_REFUSE 1
/* What the model of a stretch returns for an element it cannot follow: the
 * element goes to the caller's model instead (positive: no sink returns it). */
#define SYM_CALLS_ESCAPE 0x45534350

/* A block's moves, per thread (calls_rel.c). */
struct sym_calls_part;

/* Where one thread's part of a block goes in the caller's model. Levels count
 * from the frame the block knew only the function of: it is the caller's frame
 * at depth @base + 1. */
struct sym_calls_place {
	uint32_t wthread;          /* the thread's index in the stretch's model */
	uint32_t thread;           /* in the caller's model (the call tree's paths) */
	uint32_t base;
	uint32_t lw;               /* levels from @lw up were made by the block */
	uint32_t depth;            /* levels when it ended */
};

/* A stretch's model: its events go to @fn (cst_calls_alloc). */
int sym_calls_rel_alloc(struct cst_calls **out, cst_call_fn fn, void *ctx);
/* calls.c: does the call model act on @e (a range, an exception, lost trace,
 * a filter going off)? */
bool sym_calls_acts_on(const struct cst_elem *e);
/* A new stretch: no thread known. */
void sym_calls_rel_clear(struct cst_calls *c);
/* An element that may move any thread in the caller's model (an exception,
 * lost trace, a filter going off) goes there: no thread is known after it. */
void sym_calls_rel_unsync(struct cst_calls *c);
/* Can the model follow instruction range @e here, or must the caller's? */
bool sym_calls_rel_follows(struct cst_calls *c, const struct cst_elem *e);
/* Follow @se, seen at @time, which sym_calls_rel_follows allowed just before
 * (its thread is the one found there). Returns what the sink returns, an error,
 * or SYM_CALLS_ESCAPE (it could not after all: the model is as it was). */
int sym_calls_rel_add(struct cst_calls *c, const struct cst_sym_elem *se, uint64_t time);
/* The range @se goes to the caller's model (@kept: its filters keep it), which
 * the model learns its thread from; the block before it is ended. */
int sym_calls_rel_escaped(struct cst_calls *c, const struct cst_sym_elem *se, bool kept);
/* The block made since the last one ended (*@out NULL: none). */
int sym_calls_rel_take(struct cst_calls *c, struct sym_calls_part **out);
void sym_calls_part_free(struct sym_calls_part *p);
/* Threads a block moved: the places sym_calls_check fills. */
uint32_t sym_calls_part_count(const struct sym_calls_part *p);

/* On the caller's thread, in stream order: does block @p fit the caller's model
 * @c? 0 with @places filled (sym_calls_part_count of them), or SYM_CALLS_REFUSE.
 * Changes nothing but the count of blocks taken or refused (its stats). */
int sym_calls_check(struct cst_calls *c, const struct sym_calls_part *p,
		    struct sym_calls_place *places);
/* The time of trace ID @id's elements at this point of the stream. */
typedef uint64_t (*sym_calls_time_fn)(void *ctx, uint8_t id);
/* Take block @p, checked, into @c. Returns 0 or -cste_nomem. */
int sym_calls_apply(struct cst_calls *c, const struct sym_calls_part *p,
		    const struct sym_calls_place *places, sym_calls_time_fn time, void *ctx);

/* calltree_rel.c: a block's call tree, made from a stretch's call events: the
 * frames it found on the stack hang on anchors, which the caller's tree knows. */
int sym_calltree_rel_add(void *tree, const struct cst_call_event *ev);
/* Add block tree @rel into @tree, its anchors where @places (@n) say, and move
 * the caller's paths as the block moved its threads. */
int sym_calltree_adopt(struct cst_calltree *tree, const struct cst_calltree *rel,
		       const struct sym_calls_place *places, uint32_t n);

#endif
