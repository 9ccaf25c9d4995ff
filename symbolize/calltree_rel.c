/* The call tree of one block of a stretch (calls_rel.c's model), and how the
 * caller's tree takes it.
 *
 * The stretch's model knows a thread's frames only from the level it learnt
 * (the prefix frame) up, and a block knows the frames the block before it left.
 * Frames the block found on the stack are anchors: nodes that stand for the
 * caller's node at that level of the thread's path (or the one above the prefix
 * frame, where a replaced prefix frame hangs). The block's own nodes hang below
 * them, made in the order the events met them, which is the order the caller's
 * tree would have made them in. */
#include "calltree_int.h"
#include "calls_rel.h"

#include <stdlib.h>
#include <string.h>

/* A new anchor for @thread's @level. */
static int64_t anchor(struct cst_calltree *t, uint32_t thread, int32_t level)
{
	struct cst_calltree_node *n;

	if (CST_GROW(t->anchors, t->acap, (size_t)t->nanchors + 1) < 0 ||
	    CST_GROW(t->nodes, t->cap, (size_t)t->nnodes + 1) < 0)
		return -cste_nomem;
	n = &t->nodes[t->nnodes];
	memset(n, 0, sizeof(*n)); /* in no index: no event finds it as a child */
	n->name = "";
	t->anchors[t->nanchors++] = (struct sym_anchor){t->nnodes, thread, level};
	return t->nnodes++;
}

/* The node of @thread's @level (-1: above level 0): the path's, else its anchor,
 * made on first use (a level's anchor goes on the path, so a level the path
 * has no node for has none yet). */
static int64_t level_node(struct cst_calltree *t, uint32_t thread, int32_t level)
{
	struct path *p = &t->paths[thread];
	uint32_t *slot = level >= 0 ? &p->nodes[level] : &p->above;
	int64_t n;

	if (*slot)
		return *slot;
	n = anchor(t, thread, level);
	if (n > 0)
		*slot = (uint32_t)n;
	return n;
}

int sym_calltree_rel_add(void *ctx, const struct cst_call_event *ev)
{
	struct cst_calltree *t = ctx;
	int32_t level = (int32_t)ev->depth - 1;
	int64_t n;

	if ((ev->kind != cst_call_enter && ev->kind != cst_call_insns) || !ev->depth)
		return 0;
	if (sym_calltree_path_room(t, ev->thread, ev->depth) < 0)
		return -cste_nomem;
	t->dirty = true;
	if (ev->kind == cst_call_enter) {
		int64_t parent = level_node(t, ev->thread, level - 1);

		if (parent < 0)
			return (int)parent;
		n = sym_calltree_child(t, (uint32_t)parent, ev->frame);
		if (n < 0)
			return (int)n;
		t->paths[ev->thread].nodes[level] = (uint32_t)n;
		t->nodes[n].calls += cst_call_frame_is_call(ev->frame);
	} else {
		n = level_node(t, ev->thread, level);
		if (n < 0)
			return (int)n;
		t->nodes[n].self += ev->num_insns;
	}
	return 0;
}

static const struct sym_calls_place *place_of(const struct sym_calls_place *places, uint32_t n,
					      uint32_t wthread)
{
	for (uint32_t i = 0; i < n; i++)
		if (places[i].wthread == wthread)
			return &places[i];
	return NULL;
}

/* The caller's node of a place's @level (-1: above level 0; the root above a
 * thread's first frame). */
static int64_t caller_node(const struct cst_calltree *tree, const struct sym_calls_place *pl,
			   int32_t level)
{
	int64_t at = (int64_t)pl->base + level;

	if (at < 0)
		return 0;
	if (pl->thread >= tree->pcap || (size_t)at >= tree->paths[pl->thread].cap ||
	    !tree->paths[pl->thread].nodes)
		return -cste_invalid;
	return tree->paths[pl->thread].nodes[at];
}

int sym_calltree_adopt(struct cst_calltree *tree, const struct cst_calltree *rel,
		       const struct sym_calls_place *places, uint32_t n)
{
	uint32_t *map;
	int err = 0;

	if (!rel)
		return 0;
	map = malloc(rel->nnodes * sizeof(*map));
	if (!map)
		return -cste_nomem;
	memset(map, 0xff, rel->nnodes * sizeof(*map));
	map[0] = 0;
	for (uint32_t i = 0; i < rel->nanchors && !err; i++) {
		const struct sym_anchor *a = &rel->anchors[i];
		const struct sym_calls_place *pl = place_of(places, n, a->thread);
		int64_t node = pl ? caller_node(tree, pl, a->level) : -cste_invalid;

		if (node < 0)
			err = (int)node;
		else
			map[a->node] = (uint32_t)node;
	}
	/* in the order made: a node's parent is made before it */
	for (uint32_t i = 1; i < rel->nnodes && !err; i++) {
		const struct cst_calltree_node *rn = &rel->nodes[i];
		int64_t node = map[i];

		if (map[i] == UINT32_MAX) {
			struct cst_call_frame f = {.func = rn->func, .dso = rn->dso};

			node = sym_calltree_child(tree, map[rn->parent], &f);
			if (node < 0) {
				err = (int)node;
				break;
			}
			map[i] = (uint32_t)node;
		}
		tree->nodes[node].calls += rn->calls;
		tree->nodes[node].self += rn->self;
	}
	tree->dirty = true;
	/* the levels the block made, on the caller's paths */
	for (uint32_t i = 0; i < n && !err; i++) {
		const struct sym_calls_place *pl = &places[i];
		const uint32_t *rp = pl->wthread < rel->pcap ? rel->paths[pl->wthread].nodes : NULL;

		if (pl->depth <= pl->lw)
			continue;
		err = sym_calltree_path_room(tree, pl->thread, (size_t)pl->base + pl->depth);
		for (uint32_t l = pl->lw; l < pl->depth && !err; l++) {
			if (!rp || l >= rel->paths[pl->wthread].cap || !rp[l])
				err = -cste_invalid;
			else
				tree->paths[pl->thread].nodes[pl->base + l] = map[rp[l]];
		}
	}
	free(map);
	return err;
}
