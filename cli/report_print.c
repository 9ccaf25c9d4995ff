/* What `cstrace report` prints itself: the function table as text (sized to the
 * terminal), CSV and JSON, the call graph as JSON, the children column's order and
 * the --stats line. The other views are written by the symbolize library. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <jansson.h>

#include "report_print.h"


/* An address as a hex string: JSON numbers are doubles to most readers (exact
 * only below 2^53) and jansson's are signed, which printed kernel addresses
 * negative; "0x..." is exact everywhere. */
static json_t *json_addr(uint64_t addr)
{
	char s[24];

	snprintf(s, sizeof(s), "0x%" PRIx64, addr);
	return json_string(s);
}

static int term_width(FILE *f)
{
	struct winsize ws;
	const char *cols = getenv("COLUMNS");

	if (isatty(fileno(f)) && ioctl(fileno(f), TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40)
		return ws.ws_col;
	if (cols && atoi(cols) >= 40)
		return atoi(cols);
	return 160;
}

static void coverage(const struct cst_report_row *row, char *buf, size_t size)
{
	if (row->lines_total)
		snprintf(buf, size, "%u/%u", row->lines_hit, row->lines_total);
	else
		snprintf(buf, size, "-");
}

static const char *base_name(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p;
}

void report_print_text(FILE *f, unsigned keys, const struct cst_report_row *rows, int n,
		       uint64_t total, int limit, const uint64_t *children)
{
	int width = term_width(f);
	/* fixed numeric columns, the rest shared by name columns */
	int fixed = 12 + 8 + 10 + 10 + 10 + 10 + 6 + (children ? 9 : 0);
	int name_w = width - fixed;
	int dso_w = (keys & cst_report_key_dso) ? name_w / 3 : 0;
	int src_w = (keys & cst_report_key_srcline) ? name_w / 3 : 0;
	int sym_w = name_w - dso_w - src_w - 2;

	if (sym_w < 12)
		sym_w = 12;
	fprintf(f, "# %" PRIu64 " instructions executed\n", total);
	if (children)
		fprintf(f, "%8s ", "children");
	fprintf(f, "%12s %7s %9s %9s %9s %9s  %-*s", "insns", "share", "entered", "taken",
		"not-taken", "lines", sym_w, (keys & cst_report_key_sym) ? "symbol" : "");
	if (dso_w)
		fprintf(f, " %-*s", dso_w - 1, "dso");
	if (src_w)
		fprintf(f, " %s", "srcline");
	fputc('\n', f);
	for (int i = 0; i < n && (limit <= 0 || i < limit); i++) {
		const struct cst_report_row *r = &rows[i];
		char cov[32];

		coverage(r, cov, sizeof(cov)); /* per function only: '-' for source lines */
		if (children)
			fprintf(f, "%7.2f%% ",
				total ? 100.0 * (double)children[i] / (double)total : 0.0);
		fprintf(f, "%12" PRIu64 " %6.2f%% %9" PRIu64 " %9" PRIu64 " %9" PRIu64 " %9s  %-*.*s",
			r->insns, total ? 100.0 * (double)r->insns / (double)total : 0.0,
			r->entries, r->taken, r->not_taken, cov, sym_w, sym_w,
			r->sym ? r->sym : "");
		if (dso_w)
			fprintf(f, " %-*.*s", dso_w - 1, dso_w - 1, r->dso ? base_name(r->dso) : "");
		if (src_w)
			fprintf(f, " %s:%d", r->file ? base_name(r->file) : "??", r->line);
		fputc('\n', f);
	}
}

static void csv_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; s && *s; s++) {
		if (*s == '"')
			fputc('"', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

void report_print_csv(FILE *f, const struct cst_report_row *rows, int n, uint64_t total,
		      const uint64_t *children)
{
	fputs("insns,share,entries,taken,not_taken,lines_hit,lines_total,sym,dso,file,line", f);
	fputs(children ? ",children\n" : "\n", f);
	for (int i = 0; i < n; i++) {
		const struct cst_report_row *r = &rows[i];

		/* share as JSON gives it: a fraction of all instructions */
		fprintf(f, "%" PRIu64 ",%.6f,%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%u,%u,", r->insns,
			total ? (double)r->insns / (double)total : 0.0, r->entries, r->taken,
			r->not_taken, r->lines_hit, r->lines_total);
		csv_str(f, r->sym);
		fputc(',', f);
		csv_str(f, r->dso);
		fputc(',', f);
		csv_str(f, r->file);
		fprintf(f, ",%d", r->line);
		if (children)
			fprintf(f, ",%" PRIu64, children[i]);
		fputc('\n', f);
	}
}

int report_print_json(FILE *f, const struct cst_report_row *rows, int n, uint64_t total,
		      uint64_t ranges, const uint64_t *children)
{
	json_t *root = json_object(), *arr = json_array();
	int err = 0;

	if (!root || !arr)
		return -cste_nomem;
	json_object_set_new(root, "total_insns", json_integer((json_int_t)total));
	json_object_set_new(root, "ranges", json_integer((json_int_t)ranges));
	for (int i = 0; i < n; i++) {
		const struct cst_report_row *r = &rows[i];
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
		if (children)
			json_object_set_new(o, "children", json_integer((json_int_t)children[i]));
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

int report_print_callgraph_json(FILE *f, struct cst_calltree *tree)
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

/* Rows in order of their functions' children (ties: self order), with the
 * children of each. */
struct child_row {
	struct cst_report_row row;
	uint64_t children;
	int order;
};

static int by_children(const void *a, const void *b)
{
	const struct child_row *x = a, *y = b;

	if (x->children != y->children)
		return x->children < y->children ? 1 : -1;
	return x->order - y->order;
}

int report_children_sorted(struct cst_calltree *tree, const struct cst_report_row *rows, int n,
			   struct cst_report_row **sorted, uint64_t **children)
{
	struct child_row *c = calloc((size_t)n, sizeof(*c));

	*sorted = calloc((size_t)n, sizeof(**sorted));
	*children = calloc((size_t)n, sizeof(**children));
	if (!c || !*sorted || !*children) {
		free(c);
		return -cste_nomem;
	}
	for (int i = 0; i < n; i++) {
		c[i].row = rows[i];
		c[i].children = cst_calltree_children(tree, rows[i].func, rows[i].dso);
		c[i].order = i;
	}
	qsort(c, (size_t)n, sizeof(*c), by_children);
	for (int i = 0; i < n; i++) {
		(*sorted)[i] = c[i].row;
		(*children)[i] = c[i].children;
	}
	free(c);
	return 0;
}

void report_print_stats(struct cst_symbolizer *sym, struct cst_calls *calls)
{
	struct cst_symbolizer_stats st;
	struct cst_calls_stats cs;

	cst_symbolizer_get_stats(sym, &st);
	fprintf(stderr,
		"cstrace: %" PRIu64 " ranges symbolized (%" PRIu64 " from the cache), %" PRIu64
		" instructions, %" PRIu64 " without a symbol\n",
		st.ranges, st.cache_hits, st.insns, st.unknown_insns);
	if (calls && cst_calls_get_stats(calls, &cs) == 0)
		fprintf(stderr,
			"cstrace: %u threads, deepest stack %u, %" PRIu64
			" stacks emptied by lost trace, %" PRIu64 " returns to unknown callers\n",
			cs.threads, cs.max_depth, cs.gaps, cs.unknown_returns);
	if (calls && cst_calls_get_stats(calls, &cs) == 0 && cs.filtered)
		fprintf(stderr,
			"cstrace: an address filter turned tracing off %" PRIu64
			" time(s): no trace lost there, the stacks kept\n", cs.filtered);
}

