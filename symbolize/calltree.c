/* The call tree: call events summed by distinct stack. Each thread keeps the path
 * of nodes its stack runs through; an enter moves one level down (finding or
 * adding the child), instructions count on the node at the top. */
#include "calltree_int.h"

#include <stdlib.h>
#include <string.h>

int cst_calltree_alloc(struct cst_calltree **out)
{
	struct cst_calltree *t;

	if (!out)
		return -cste_invalid;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -cste_nomem;
	/* node 0: the root above every thread's stack */
	if (CST_GROW(t->nodes, t->cap, 1) < 0) {
		free(t);
		return -cste_nomem;
	}
	memset(&t->nodes[0], 0, sizeof(t->nodes[0]));
	t->nodes[0].name = "all";
	t->nnodes = 1;
	*out = t;
	return 0;
}

void cst_calltree_free(struct cst_calltree *tree)
{
	if (!tree)
		return;
	for (size_t i = 0; i < tree->pcap; i++)
		free(tree->paths[i].nodes);
	free(tree->paths);
	free(tree->nodes);
	free(tree->index);
	free(tree->fidx);
	free(tree->fkey_func);
	free(tree->fkey_dso);
	free(tree->fchildren);
	free(tree->anchors);
	free(tree);
}

static uint64_t mix(uint64_t a, const void *b, const void *c)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ull ^ (uint64_t)(uintptr_t)b * 0xc2b2ae3d27d4eb4full ^
		     (uint64_t)(uintptr_t)c * 0x165667b19e3779f9ull;

	return h ^ (h >> 29);
}

/* Unknown code is told apart by binary, as report does; known code by function. */
static const char *key_dso(const struct cst_call_frame *f)
{
	return f->func ? NULL : f->dso;
}

static uint64_t node_hash(const void *ctx, uint32_t i)
{
	const struct cst_calltree_node *n = &((const struct cst_calltree *)ctx)->nodes[i];

	return mix(n->parent, n->func, n->func ? NULL : n->dso);
}

static uint64_t func_hash(const void *ctx, uint32_t i)
{
	const struct cst_calltree *t = ctx;

	return mix(0, t->fkey_func[i], t->fkey_dso[i]);
}

static int64_t func_index(struct cst_calltree *t, const struct cst_sym_func *func, const char *dso,
			  bool add)
{
	uint64_t h;

	if (add && t->nfuncs * 2 >= t->ficap &&
	    cst_index_grow(&t->fidx, &t->ficap, 256, t->nfuncs, func_hash, t) < 0)
		return -cste_nomem;
	if (!t->ficap)
		return -1;
	for (h = mix(0, func, dso);; h++) {
		uint32_t i = t->fidx[h & (t->ficap - 1)];

		if (!i)
			break;
		if (t->fkey_func[i - 1] == func && t->fkey_dso[i - 1] == dso)
			return i - 1;
	}
	if (!add)
		return -1;
	if (CST_GROW(t->fkey_func, t->fkcap, (size_t)t->nfuncs + 1) < 0 ||
	    CST_GROW(t->fkey_dso, t->fkdcap, (size_t)t->nfuncs + 1) < 0)
		return -cste_nomem;
	t->fkey_func[t->nfuncs] = func;
	t->fkey_dso[t->nfuncs] = dso;
	t->fidx[h & (t->ficap - 1)] = t->nfuncs + 1;
	return t->nfuncs++;
}

int64_t sym_calltree_child(struct cst_calltree *t, uint32_t parent, const struct cst_call_frame *f)
{
	const char *dso = key_dso(f);
	struct cst_calltree_node *n;
	int64_t fi;
	uint64_t h;

	if (t->nnodes * 2 >= t->icap &&
	    cst_index_grow(&t->index, &t->icap, 256, t->nnodes, node_hash, t) < 0)
		return -cste_nomem;
	for (h = mix(parent, f->func, dso);; h++) {
		uint32_t i = t->index[h & (t->icap - 1)];

		if (!i)
			break;
		n = &t->nodes[i - 1];
		if (i - 1 && n->parent == parent && n->func == f->func &&
		    (n->func ? NULL : n->dso) == dso)
			return i - 1;
	}
	fi = func_index(t, f->func, dso, true);
	if (fi < 0)
		return fi;
	if (CST_GROW(t->nodes, t->cap, (size_t)t->nnodes + 1) < 0)
		return -cste_nomem;
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n));
	n->func = f->func;
	n->dso = f->dso;
	n->name = cst_call_frame_name(f);
	n->parent = parent;
	n->depth = t->nodes[parent].depth + 1;
	n->func_index = (uint32_t)fi;
	/* the slot probed last is still free: rehash happened before the probe */
	t->index[h & (t->icap - 1)] = ++t->nnodes;
	return t->nnodes - 1;
}

int cst_calltree_add(void *ctx, const struct cst_call_event *ev)
{
	struct cst_calltree *t = ctx;
	struct path *p;

	if (!t || !ev)
		return -cste_invalid;
	if (ev->kind != cst_call_enter && ev->kind != cst_call_insns)
		return 0;
	if (!ev->depth)
		return 0;
	if (sym_calltree_path_room(t, ev->thread, ev->depth) < 0)
		return -cste_nomem;
	p = &t->paths[ev->thread];
	t->dirty = true;
	if (ev->kind == cst_call_enter) {
		uint32_t parent = ev->depth > 1 ? p->nodes[ev->depth - 2] : 0;
		int64_t n = sym_calltree_child(t, parent, ev->frame);

		if (n < 0)
			return (int)n;
		p->nodes[ev->depth - 1] = (uint32_t)n;
		t->nodes[n].calls += cst_call_frame_is_call(ev->frame);
	} else {
		t->nodes[p->nodes[ev->depth - 1]].self += ev->num_insns;
	}
	return 0;
}

static int by_total(const void *a, const void *b, void *ctx)
{
	const struct cst_calltree_node *n = ctx;
	const struct cst_calltree_node *x = &n[*(const uint32_t *)a], *y = &n[*(const uint32_t *)b];

	if (x->total != y->total)
		return x->total < y->total ? 1 : -1;
	return strcmp(x->name, y->name);
}

/* Each function's "children": the totals of its outermost nodes (no node of the
 * same function above them), which hold every instruction under it once. A walk
 * down the tree counts how often each function is on the current path. */
static int func_children(struct cst_calltree *t)
{
	uint32_t *onpath = calloc(t->nfuncs ? t->nfuncs : 1, sizeof(*onpath));
	uint64_t *sum = calloc(t->nfuncs ? t->nfuncs : 1, sizeof(*sum));
	uint32_t n = t->nodes[0].first_child;

	if (!onpath || !sum) {
		free(onpath);
		free(sum);
		return -cste_nomem;
	}
	while (n) {
		const struct cst_calltree_node *nd = &t->nodes[n];

		if (!onpath[nd->func_index]++)
			sum[nd->func_index] += nd->total;
		if (nd->first_child) {
			n = nd->first_child;
			continue;
		}
		/* leave this node, and its parents while they have no next sibling */
		for (;;) {
			onpath[t->nodes[n].func_index]--;
			if (t->nodes[n].next_sibling) {
				n = t->nodes[n].next_sibling;
				break;
			}
			n = t->nodes[n].parent;
			if (!n)
				break;
		}
	}
	free(onpath);
	free(t->fchildren);
	t->fchildren = sum;
	t->dirty = false;
	return 0;
}

/* Totals bottom-up (a child's index is always above its parent's), then each
 * node's children linked in order of total. */
static int finish(struct cst_calltree *t)
{
	uint32_t *order;

	if (!t->dirty)
		return 0;
	order = malloc((size_t)t->nnodes * sizeof(*order));
	if (!order)
		return -cste_nomem;
	for (uint32_t i = 0; i < t->nnodes; i++) {
		t->nodes[i].total = t->nodes[i].self;
		t->nodes[i].first_child = t->nodes[i].next_sibling = 0;
	}
	for (uint32_t i = t->nnodes; i-- > 1;)
		t->nodes[t->nodes[i].parent].total += t->nodes[i].total;
	for (uint32_t i = 0; i + 1 < t->nnodes; i++)
		order[i] = i + 1;
	qsort_r(order, t->nnodes - 1, sizeof(*order), by_total, t->nodes);
	/* linking in reverse sorted order leaves each list in sorted order */
	for (uint32_t k = t->nnodes - 1; k-- > 0;) {
		struct cst_calltree_node *n = &t->nodes[order[k]];

		n->next_sibling = t->nodes[n->parent].first_child;
		t->nodes[n->parent].first_child = order[k];
	}
	free(order);
	return func_children(t);
}

int cst_calltree_nodes(struct cst_calltree *tree, const struct cst_calltree_node **nodes)
{
	int err;

	if (!tree || !nodes)
		return -cste_invalid;
	err = finish(tree);
	if (err < 0)
		return err;
	*nodes = tree->nodes;
	return (int)tree->nnodes;
}

uint64_t cst_calltree_children(struct cst_calltree *tree, const struct cst_sym_func *func,
			       const char *dso)
{
	int64_t fi;

	if (!tree || finish(tree) < 0)
		return 0;
	fi = func_index(tree, func, func ? NULL : dso, false);
	return fi < 0 ? 0 : tree->fchildren[fi];
}

int sym_calltree_path_grow(struct cst_calltree *t, uint32_t thread, size_t n)
{
	struct path *p;
	size_t old;

	if (thread >= t->pcap) {
		old = t->pcap;
		if (CST_GROW(t->paths, t->pcap, (size_t)thread + 1) < 0)
			return -cste_nomem;
		memset(t->paths + old, 0, (t->pcap - old) * sizeof(*t->paths));
	}
	p = &t->paths[thread];
	old = p->nodes ? p->cap : 0;
	if (CST_GROW(p->nodes, p->cap, n) < 0)
		return -cste_nomem;
	if (p->cap > old)
		memset(p->nodes + old, 0, (p->cap - old) * sizeof(*p->nodes));
	return 0;
}
