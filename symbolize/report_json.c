/* Report as JSON: the function table (rows with totals), or with -g the call
 * graph as nested nodes. */
#include "report_view.h"

#include <inttypes.h>

#include <jansson.h>

/* An address as a hex string: JSON numbers are doubles to most readers (exact
 * only below 2^53) and jansson's are signed, which printed kernel addresses
 * negative; "0x..." is exact everywhere. */
static json_t *json_addr(uint64_t addr)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, addr);
	return json_string(s);
}

/* The call graph as JSON: nested nodes, children in order of total. */
static json_t *node_json(const struct cst_calltree_node *nodes, uint32_t i)
{
	const struct cst_calltree_node *n = &nodes[i];
	json_t *o = json_object(), *kids = json_array();

	if (!o || !kids) {
		json_decref(o);
		json_decref(kids);
		return NULL;
	}
	json_object_set_new(o, "sym", json_string(n->name));
	if (n->dso)
		json_object_set_new(o, "dso", json_string(n->dso));
	if (n->func)
		json_object_set_new(o, "addr", json_addr(n->func->addr));
	json_object_set_new(o, "self", json_integer((json_int_t)n->self));
	json_object_set_new(o, "total", json_integer((json_int_t)n->total));
	json_object_set_new(o, "calls", json_integer((json_int_t)n->calls));
	for (uint32_t c = n->first_child; c; c = nodes[c].next_sibling) {
		json_t *k = node_json(nodes, c);

		if (!k) {
			json_decref(o);
			json_decref(kids);
			return NULL;
		}
		json_array_append_new(kids, k);
	}
	json_object_set_new(o, "children", kids);
	return o;
}

static int callgraph_json(struct cst_calltree *tree, FILE *f)
{
	const struct cst_calltree_node *nodes;
	int n = cst_calltree_nodes(tree, &nodes);
	json_t *root;
	int err = 0;

	if (n < 0)
		return n;
	root = node_json(nodes, 0);
	if (!root)
		return -cste_nomem;
	json_object_set(root, "roots", json_object_get(root, "children"));
	json_object_del(root, "children");
	json_object_del(root, "sym");
	json_object_del(root, "self");
	json_object_del(root, "calls");
	json_object_set(root, "total_insns", json_object_get(root, "total"));
	json_object_del(root, "total");
	if (json_dumpf(root, f, JSON_COMPACT) < 0)
		err = -cste_io;
	fputc('\n', f);
	json_decref(root);
	return err;
}

int sym_report_write_json(struct cst_report_view *v, FILE *f)
{
	json_t *root, *arr;
	uint64_t total = v->total;
	int err = 0;

	if (v->o.call_graph)
		return callgraph_json(v->tree, f);
	root = json_object();
	arr = json_array();
	if (!root || !arr)
		return -cste_nomem;
	json_object_set_new(root, "total_insns", json_integer((json_int_t)total));
	json_object_set_new(root, "ranges", json_integer((json_int_t)v->ranges));
	for (int i = 0; i < v->nrows; i++) {
		const struct cst_report_row *r = &v->rows[i];
		json_t *o = json_object();

		if (!o)
			return -cste_nomem;
		if (r->sym)
			json_object_set_new(o, "sym", json_string(r->sym));
		if (r->dso)
			json_object_set_new(o, "dso", json_string(r->dso));
		if (r->file || r->line)
			json_object_set_new(o, "srcline",
					    json_sprintf("%s:%d", r->file ? r->file : "??", r->line));
		json_object_set_new(o, "insns", json_integer((json_int_t)r->insns));
		if (v->children)
			json_object_set_new(o, "children",
					    json_integer((json_int_t)v->children[i]));
		json_object_set_new(o, "share", json_real(total ? (double)r->insns / (double)total : 0));
		json_object_set_new(o, "entries", json_integer((json_int_t)r->entries));
		json_object_set_new(o, "taken", json_integer((json_int_t)r->taken));
		json_object_set_new(o, "not_taken", json_integer((json_int_t)r->not_taken));
		json_object_set_new(o, "lines_hit", json_integer(r->lines_hit));
		json_object_set_new(o, "lines_total", json_integer(r->lines_total));
		if (r->func_addr)
			json_object_set_new(o, "addr", json_addr(r->func_addr));
		json_array_append_new(arr, o);
	}
	json_object_set_new(root, "rows", arr);
	if (json_dumpf(root, f, JSON_INDENT(1)) < 0)
		err = -cste_io;
	fputc('\n', f);
	json_decref(root);
	return err;
}
