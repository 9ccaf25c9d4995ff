/* Text views of the call tree: folded stacks (one line per distinct stack, the
 * input of flame graph tools) and the indented call graph. */
#include "cstrace/symbolize.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

struct folded_line {
	char *stack;
	uint64_t count;
};

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack, ((const struct folded_line *)b)->stack);
}

/* The path root..@n, names joined by ';' (a name's own ';' would split a frame:
 * it becomes ':'). */
static char *stack_string(const struct cst_calltree_node *nodes, uint32_t n)
{
	size_t len = 0, at;
	char *s;

	for (uint32_t i = n; i; i = nodes[i].parent)
		len += strlen(nodes[i].name) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	at = len - 1;
	s[at] = '\0';
	for (uint32_t i = n; i; i = nodes[i].parent) {
		size_t l = strlen(nodes[i].name);

		at -= l;
		for (size_t k = 0; k < l; k++)
			s[at + k] = nodes[i].name[k] == ';' ? ':' : nodes[i].name[k];
		if (at)
			s[--at] = ';';
	}
	return s;
}

int cst_calltree_write_folded(struct cst_calltree *tree, FILE *f)
{
	const struct cst_calltree_node *nodes;
	struct folded_line *lines;
	int n = tree && f ? cst_calltree_nodes(tree, &nodes) : -cste_invalid;
	size_t m = 0;
	int err = 0;

	if (n < 0)
		return n;
	lines = calloc((size_t)n, sizeof(*lines));
	if (!lines)
		return -cste_nomem;
	for (int i = 1; i < n; i++) {
		if (!nodes[i].self)
			continue;
		lines[m].stack = stack_string(nodes, (uint32_t)i);
		lines[m].count = nodes[i].self;
		if (!lines[m++].stack) {
			err = -cste_nomem;
			break;
		}
	}
	if (!err)
		qsort(lines, m, sizeof(*lines), by_stack);
	/* distinct nodes may print alike ([unknown] of two binaries): one line each */
	for (size_t i = 0; i < m && !err; i++) {
		uint64_t c = lines[i].count;

		while (i + 1 < m && !strcmp(lines[i].stack, lines[i + 1].stack))
			c += lines[++i].count;
		if (fprintf(f, "%s %" PRIu64 "\n", lines[i].stack, c) < 0)
			err = -cste_io;
	}
	for (size_t i = 0; i < m; i++)
		free(lines[i].stack);
	free(lines);
	return err;
}

/* report --format=folded */
int sym_report_write_folded(struct cst_report_view *v, FILE *f)
{
	return cst_calltree_write_folded(v->tree, f);
}

static double share(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

int cst_calltree_write_text(struct cst_calltree *tree, FILE *f,
			    const struct cst_calltree_text_opts *opts)
{
	struct cst_calltree_text_opts o;
	const struct cst_calltree_node *nodes;
	uint64_t all, cut;
	uint32_t n, hidden = 0;
	int cnt;

	if (!tree || !f || cst_opts_load(&o, sizeof(o), opts, "cst_calltree_text_opts", NULL) < 0)
		return -cste_invalid;
	if (o.callee)
		return sym_calltree_write_callee(tree, f, &o);
	cnt = cst_calltree_nodes(tree, &nodes);
	if (cnt < 0)
		return cnt;
	all = nodes[0].total;
	cut = (uint64_t)(o.min_share * (double)all);
	fprintf(f, "# call graph: %" PRIu64 " instructions; children = the stack and all it called,"
		   " self = exactly this stack\n", all);
	if (cut)
		fprintf(f, "# stacks below %.2f%% of all are left out\n", o.min_share * 100.0);
	fprintf(f, "#%9s %9s %14s %14s %10s  %s\n", "children", "self", "children-insns",
		"self-insns", "calls", "stack");
	/* depth first in order of total, through the sibling links */
	n = nodes[0].first_child;
	while (n) {
		const struct cst_calltree_node *nd = &nodes[n];
		bool show = nd->total >= cut && nd->total &&
			    (o.max_depth <= 0 || (int64_t)nd->depth <= o.max_depth);

		if (show) {
			if (fprintf(f, "%9.2f%% %8.2f%% %14" PRIu64 " %14" PRIu64 " %10" PRIu64 "  %*s%s%s%s\n",
				    share(nd->total, all), share(nd->self, all), nd->total, nd->self,
				    nd->calls, (int)(nd->depth - 1) * 2, "", nd->name,
				    nd->func ? "" : " ", nd->func ? "" : nd->dso) < 0)
				return -cste_io;
		} else {
			hidden++;
		}
		if (show && nd->first_child) {
			n = nd->first_child;
			continue;
		}
		while (n && !nodes[n].next_sibling)
			n = nodes[n].parent;
		if (n)
			n = nodes[n].next_sibling;
	}
	if (hidden && fprintf(f, "# %u smaller stacks not shown\n", hidden) < 0)
		return -cste_io;
	return 0;
}

/* report -g with a table format: the call graph in the table's place */
int sym_report_write_callgraph(struct cst_report_view *v, FILE *f)
{
	struct cst_calltree_text_opts o = {.sz = sizeof(o), .min_share = v->o.min_share,
					   .callee = v->o.callee};

	sym_report_loss_header(v, f);
	return cst_calltree_write_text(v->tree, f, &o);
}
