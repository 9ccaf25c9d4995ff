/* Internal to symbolize/: the call model's state (calls.c), shared with the model
 * a worker runs over a stretch of the stream (calls_rel.c). */
#ifndef CSTRACE_SYMBOLIZE_CALLS_INT_H
#define CSTRACE_SYMBOLIZE_CALLS_INT_H

#include "calls_rel.h"

#define NIDS 128
/* A stack deeper than this is not followed (runaway recursion, or returns the
 * model never sees): it is emptied as if trace were lost, so memory stays bounded. */
#define MAX_DEPTH 65536

enum pend {
	pend_none = 0, /* fell through, or a branch not taken: control went on */
	pend_call,
	pend_ret,
	pend_eret,
	pend_jump,     /* any other taken direct branch */
	pend_jump_ind, /* any other taken indirect branch */
};

/* What a frame hides besides its public part: the transfer pending in the code it
 * interrupted (exception frames only), and the return address of a call it made
 * into code the filter does not trace (0: none). */
struct stash {
	enum pend pend;
	uint64_t pend_ret;
	uint64_t out_ret;
	/* a stretch's model (calls_rel.c): the frame stands for the caller's top
	 * frame, whose function alone it knows (its return address, whether it is
	 * an exception's and what it hides are the caller's), and nothing below it
	 * is known */
	bool prefix;
};

struct thread {
	int64_t key;
	int32_t pid, tid;
	uint8_t trace_id;          /* where it ran last */
	uint64_t seen_gaps;        /* gaps[trace_id] when it ran last */
	struct cst_call_frame *stack;
	struct stash *stash;
	size_t cap, scap;
	uint32_t depth;
	bool live;                 /* a range arrived since trace (re)started */
	bool off;                  /* a filter turned tracing off: the stack stands */
	enum pend pend;
	uint64_t pend_ret;         /* pend_call: the return address */
	bool exc;                  /* an exception is waiting to resume */
	bool exc_ret_valid;
	uint64_t exc_ret;
	uint64_t exc_again;        /* the instruction the exception followed (0: none) */
	uint64_t last_end;         /* end of its latest range */
	uint64_t last_insn;        /* address of its latest range's last instruction */
	uint64_t time;             /* of its latest element */
	/* a stretch's model (calls_rel.c) */
	bool synced;               /* its state is known: its ranges can be followed */
	uint32_t seg;              /* its part of the block being made + 1, 0: none */
};

struct cst_calls {
	cst_call_fn fn;
	void *ctx;
	struct thread *threads;
	size_t cap;
	uint32_t nthreads;
	uint32_t *index;           /* open addressing: thread + 1, 0 empty */
	uint32_t memo;             /* thread + 1 found last, 0 none */
	uint32_t icap;
	uint64_t icount[NIDS];     /* instructions executed per trace ID */
	uint64_t gaps[NIDS];       /* gaps seen per trace ID */
	uint32_t last_thread[NIDS]; /* thread + 1 last seen per trace ID */
	struct cst_calls_stats st;
	/* the element being accounted, for the events it causes */
	const struct cst_elem *elem;
	uint64_t time;
	struct sym_calls_rel *rel; /* a stretch's model (calls_rel.c), NULL: the stream's */
};

/* A lookup whose answer lies in frames a stretch's model does not know. */
#define CALLS_UNKNOWN (-2)

/* A stretch's model takes for granted that no frame below what it knows returns
 * to @addr (calls_rel.c: the caller checks; a block that cannot hold what it
 * takes for granted is refused). */
void sym_calls_assume(struct cst_calls *c, struct thread *t, uint64_t addr);
/* ... and that no frame below the prefix frame runs @pc's function. */
void sym_calls_assume_func(struct cst_calls *c, struct thread *t, const struct cst_sym_piece *pc);
/* Does the frame run @func (NULL: unknown code, then of binary @dso)? */
static inline bool sym_calls_runs(const struct cst_call_frame *f, const struct cst_sym_func *func,
				  const char *dso)
{
	return func ? f->func == func : !f->func && f->dso == dso;
}
/* Does the frame run @pc's function? */
static inline bool sym_calls_same_func(const struct cst_call_frame *f,
				       const struct cst_sym_piece *pc)
{
	return sym_calls_runs(f, pc->loc.func, pc->loc.dso);
}
/* calls.c: the index of the topmost frame that returns to @addr, or that an
 * exception made and resumes at @addr; -1 if none, CALLS_UNKNOWN where a
 * stretch's model would have to look below what it knows. */
int64_t sym_calls_find_ret(const struct thread *t, uint64_t addr);
int64_t sym_calls_find_resume(const struct thread *t, uint64_t addr);
/* calls.c: the key of @se's thread, and the thread of a key: NULL if none (with
 * @add, a new one for element @add; NULL then only when out of memory). */
int64_t sym_calls_key(const struct cst_sym_elem *se);
struct thread *sym_calls_find(struct cst_calls *c, int64_t key, const struct cst_sym_elem *add);
/* calls.c: how a range ended, for the thread's next one. */
void sym_calls_end_range(struct thread *t, const struct cst_elem *e);
/* calls.c: @t's range @se (its thread's model is followed). */
int sym_calls_add_range(struct cst_calls *c, struct thread *t, const struct cst_sym_elem *se);
/* calls_rel.c: @t's depth changed (a stretch's model); the model is freed. */
void sym_calls_rel_moved(struct cst_calls *c, const struct thread *t);
void sym_calls_rel_fini(struct cst_calls *c);
/* calls.c: stack room for @n frames. */
int sym_calls_room(struct thread *t, size_t n);

#endif
