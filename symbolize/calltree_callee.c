/* The call graph callee first, as perf report -g callee shows it: each function
 * that ran (its instructions, every stack it was on top of) and under it, level
 * by level, the callers those instructions ran for. Built from the call tree's
 * distinct stacks, each read from its top down to its root. */
#include "cstrace/symbolize.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>

struct inode {
	uint32_t node;             /* a call tree node of this function (its name) */
	uint32_t func_index;
	uint64_t total;            /* instructions of the stacks that pass here */
	uint32_t parent, first_child, next_sibling, depth;
};

struct itree {
	struct inode *n;
	size_t len, cap;
};

static int64_t child(struct itree *t, uint32_t parent, const struct cst_calltree_node *nodes,
		     uint32_t node)
{
	uint32_t c;

	for (c = t->n[parent].first_child; c; c = t->n[c].next_sibling)
		if (t->n[c].func_index == nodes[node].func_index)
			return c;
	if (CST_GROW(t->n, t->cap, t->len + 1) < 0)
		return -1;
	c = (uint32_t)t->len++;
	t->n[c] = (struct inode){node, nodes[node].func_index, 0, parent, 0,
				 t->n[parent].first_child, t->n[parent].depth + 1};
	t->n[parent].first_child = c;
	return c;
}

static int by_total(const void *a, const void *b, void *ctx)
{
	const struct itree *t = ctx;
	uint64_t x = t->n[*(const uint32_t *)a].total, y = t->n[*(const uint32_t *)b].total;

	return x < y ? 1 : x > y ? -1 : 0;
}

/* children of each node ordered by total, most first */
static int order(struct itree *t)
{
	uint32_t *kids = malloc(t->len * sizeof(*kids));

	if (!kids)
		return -cste_nomem;
	for (size_t i = 0; i < t->len; i++) {
		size_t k = 0;

		for (uint32_t c = t->n[i].first_child; c; c = t->n[c].next_sibling)
			kids[k++] = c;
		if (k < 2)
			continue;
		qsort_r(kids, k, sizeof(*kids), by_total, t);
		t->n[i].first_child = kids[0];
		for (size_t j = 0; j < k; j++)
			t->n[kids[j]].next_sibling = j + 1 < k ? kids[j + 1] : 0;
	}
	free(kids);
	return 0;
}

int sym_calltree_write_callee(struct cst_calltree *tree, FILE *f,
			      const struct cst_calltree_text_opts *o)
{
	const struct cst_calltree_node *nodes;
	struct itree t = {0};
	int cnt = cst_calltree_nodes(tree, &nodes), err = 0;
	uint64_t all, cut;
	uint32_t hidden = 0, n;

	if (cnt < 0)
		return cnt;
	if (CST_GROW(t.n, t.cap, 1) < 0)
		return -cste_nomem;
	t.n[0] = (struct inode){0};
	t.len = 1;
	for (int i = 1; i < cnt && !err; i++) {
		uint32_t at = 0;

		if (!nodes[i].self)
			continue;
		for (uint32_t j = (uint32_t)i; j; j = nodes[j].parent) {
			int64_t c = child(&t, at, nodes, j);

			if (c < 0) {
				err = -cste_nomem;
				break;
			}
			at = (uint32_t)c;
			t.n[at].total += nodes[i].self;
		}
		t.n[0].total += nodes[i].self;
	}
	if (!err)
		err = order(&t);
	if (err) {
		free(t.n);
		return err;
	}
	all = t.n[0].total;
	cut = (uint64_t)(o->min_share * (double)all);
	fprintf(f, "# call graph, callee first: %" PRIu64 " instructions; each function with "
		   "the instructions run in it, and under it the callers they ran for\n", all);
	if (cut)
		fprintf(f, "# callers below %.2f%% of all are left out\n", o->min_share * 100.0);
	fprintf(f, "#%9s %14s  %s\n", "share", "insns", "callee <- callers");
	n = t.n[0].first_child;
	while (n && !err) {
		const struct inode *in = &t.n[n];
		const struct cst_calltree_node *nd = &nodes[in->node];
		bool show = in->total >= cut && in->total &&
			    (o->max_depth <= 0 || (int64_t)in->depth <= o->max_depth);

		if (show) {
			if (fprintf(f, "%9.2f%% %14" PRIu64 "  %*s%s%s%s%s\n",
				    all ? 100.0 * (double)in->total / (double)all : 0.0, in->total,
				    (int)(in->depth - 1) * 2, "", in->depth > 1 ? "<- " : "", nd->name,
				    nd->func ? "" : " ", nd->func ? "" : nd->dso) < 0)
				err = -cste_io;
		} else {
			hidden++;
		}
		if (show && in->first_child) {
			n = in->first_child;
			continue;
		}
		while (n && !t.n[n].next_sibling)
			n = t.n[n].parent;
		if (n)
			n = t.n[n].next_sibling;
	}
	if (!err && hidden && fprintf(f, "# %u smaller entries not shown\n", hidden) < 0)
		err = -cste_io;
	free(t.n);
	return err;
}
