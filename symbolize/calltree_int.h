/* Internal to symbolize/: the call tree's state (calltree.c), shared with the
 * trees of a stretch's blocks (calltree_rel.c). */
#ifndef CSTRACE_SYMBOLIZE_CALLTREE_INT_H
#define CSTRACE_SYMBOLIZE_CALLTREE_INT_H

#include "cstrace/symbolize.h"

struct path {
	uint32_t *nodes;           /* node of each stack level */
	size_t cap;
	uint32_t above;            /* a block's tree: the anchor above level 0, 0 none */
};

struct cst_calltree {
	struct cst_calltree_node *nodes;
	size_t cap;
	uint32_t nnodes;
	uint32_t *index;           /* (parent, func, dso) -> node, open addressing */
	uint32_t icap;
	struct path *paths;        /* per model thread */
	size_t pcap;
	uint32_t nfuncs;
	uint32_t *fidx;            /* (func, dso) -> func index + 1 */
	const void **fkey_func, **fkey_dso;
	uint32_t ficap;
	size_t fkcap, fkdcap;
	uint64_t *fchildren;       /* per func index: perf's "children" */
	bool dirty;                /* totals and order need recomputing */
	/* a block's tree (calltree_rel.c): the nodes that stand for the caller's */
	struct sym_anchor *anchors;
	uint32_t nanchors;
	size_t acap;
};

/* A node of a block's tree that stands for the caller's node of a thread's level
 * (-1: the one above the level the block knows only the function of). */
struct sym_anchor {
	uint32_t node;
	uint32_t thread;           /* the stretch's model's thread index */
	int32_t level;
};

/* The child of node @parent for frame @f's function, added if new. Returns its
 * index or -cste_nomem. */
int64_t sym_calltree_child(struct cst_calltree *t, uint32_t parent, const struct cst_call_frame *f);
/* Room for @n nodes on @t's path of @thread, the new ones 0. */
int sym_calltree_path_grow(struct cst_calltree *t, uint32_t thread, size_t n);
static inline int sym_calltree_path_room(struct cst_calltree *t, uint32_t thread, size_t n)
{
	return thread < t->pcap && t->paths[thread].nodes && n <= t->paths[thread].cap
		       ? 0
		       : sym_calltree_path_grow(t, thread, n);
}

#endif
