/* The HTML report: one self-contained page (no network, no external files) with
 * the function table, the call graph as nested expandable rows, the flame graph
 * inline, and per-file line coverage with the source annotated by how often each
 * line ran. Every part is drawn from the models the other views use. */
#include "internal.h"
#include "views_int.h"
#include "report_view.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROWS 500         /* function table rows */
#define SHOWN_ROWS 25        /* of which open at first */
#define MAX_SOURCE_LINES 20000 /* per annotated file */

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

static const char style[] =
	"<style>\n"
	"body{font-family:system-ui,sans-serif;margin:1.5em;color:#222;background:#fff}\n"
	"h1{font-size:1.4em} h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ccc}\n"
	"table{border-collapse:collapse;font-size:13px} td,th{padding:2px 8px;text-align:right}\n"
	"td.l,th.l{text-align:left} tr:nth-child(even){background:#f4f4f4}\n"
	"details{margin-left:1.2em;font:13px monospace} summary{cursor:pointer}\n"
	"details.leaf>summary{list-style:none}\n"
	".bar{display:inline-block;height:9px;background:#e8743b;vertical-align:middle}\n"
	"pre.src{font:12px monospace;margin:0} .hit{background:#d8f0d0} .miss{background:#f8d0c8}\n"
	".cnt{display:inline-block;width:7em;text-align:right;color:#555;margin-right:1em}\n"
	"nav a{margin-right:1em}\n"
	".loss{background:#fde2c8;border:2px solid #d9541e;padding:.6em 1em;font-size:1.05em}\n"
	"</style>\n";

static const char table_head[] =
	"<table><tr><th>insns</th><th>share</th><th></th><th>entered</th><th>taken</th>"
	"<th>not taken</th><th>lines</th><th class=\"l\">function</th>"
	"<th class=\"l\">binary</th></tr>\n";

static void functions(FILE *f, const struct cst_html_input *in)
{
	fprintf(f, "<h2 id=\"functions\">Functions</h2>\n<p>%" PRIu64
		   " instructions executed.</p>\n%s",
		in->total, table_head);
	for (int i = 0; i < in->nrows && i < MAX_ROWS; i++) {
		/* the first screenful shows; the rest opens on demand */
		if (i == SHOWN_ROWS)
			fprintf(f, "</table>\n<details><summary>%d more functions</summary>\n%s",
				(in->nrows < MAX_ROWS ? in->nrows : MAX_ROWS) - SHOWN_ROWS, table_head);
		const struct cst_report_row *r = &in->rows[i];
		double s = pct(r->insns, in->total);

		fprintf(f, "<tr><td>%" PRIu64 "</td><td>%.2f%%</td><td class=\"l\"><span class=\"bar\" "
			   "style=\"width:%dpx\"></span></td><td>%" PRIu64 "</td><td>%" PRIu64
			   "</td><td>%" PRIu64 "</td><td>",
			r->insns, s, (int)(s + 0.5), r->entries, r->taken, r->not_taken);
		if (r->lines_total)
			fprintf(f, "%u/%u", r->lines_hit, r->lines_total);
		else
			fputs("-", f);
		fputs("</td><td class=\"l\">", f);
		sym_put_xml(f, r->sym ? r->sym : "");
		fputs("</td><td class=\"l\">", f);
		sym_put_xml(f, r->dso ? r->dso : "");
		fputs("</td></tr>\n", f);
	}
	fputs(in->nrows > SHOWN_ROWS ? "</table></details>\n" : "</table>\n", f);
	if (in->nrows > MAX_ROWS)
		fprintf(f, "<p>%d more functions not shown.</p>\n", in->nrows - MAX_ROWS);
}

/* The call graph as nested <details>, children by total; small subtrees folded
 * into one line so the page stays small. */
static void call_graph(FILE *f, struct cst_calltree *tree)
{
	const struct cst_calltree_node *nodes;
	int n = cst_calltree_nodes(tree, &nodes);
	uint64_t all, cut;
	uint32_t id;

	if (n < 0)
		return;
	all = nodes[0].total;
	cut = all / 1000; /* 0.1 % */
	fputs("<h2 id=\"calls\">Call graph</h2>\n<p>children = the stack and all it called; "
	      "self = exactly this stack; stacks under 0.1% are not shown.</p>\n", f);
	id = nodes[0].first_child;
	while (id) {
		const struct cst_calltree_node *nd = &nodes[id];
		bool open = nd->total >= cut && nd->total;
		bool kids = false;

		for (uint32_t c = nd->first_child; c && open && !kids; c = nodes[c].next_sibling)
			kids = nodes[c].total >= cut && nodes[c].total;
		if (open) {
			fprintf(f, "<details%s%s><summary>%6.2f%% %6.2f%% %8" PRIu64 " calls  ",
				kids ? "" : " class=\"leaf\"", nd->depth <= 3 ? " open" : "",
				pct(nd->total, all), pct(nd->self, all), nd->calls);
			sym_put_xml(f, nd->name);
			fputs("</summary>\n", f);
		}
		if (open && kids) {
			id = nd->first_child;
			continue;
		}
		if (open)
			fputs("</details>\n", f);
		/* up to the next sibling, closing what was opened on the way */
		while (id && !nodes[id].next_sibling) {
			id = nodes[id].parent;
			if (id)
				fputs("</details>\n", f);
		}
		if (id)
			id = nodes[id].next_sibling;
	}
}

/* Coverage: a table per file, then each readable source file annotated. */
static void coverage(FILE *f, struct cst_afdo *p)
{
	struct sym_cov c;
	struct sym_cov_file fl = {0};

	if (sym_cov_collect(p, &c) < 0)
		return;
	fputs("<h2 id=\"coverage\">Line coverage</h2>\n<table><tr><th>lines</th><th>share</th>"
	      "<th class=\"l\">file</th></tr>\n", f);
	while (sym_cov_next_file(&c, &fl)) {
		fprintf(f, "<tr><td>%u/%u</td><td>%.1f%%</td><td class=\"l\"><a href=\"#src-%zu\">",
			fl.lh, fl.lf, fl.lf ? 100.0 * fl.lh / fl.lf : 0.0, fl.lines);
		sym_put_xml(f, fl.file);
		fputs("</a></td></tr>\n", f);
	}
	fputs("</table>\n", f);
	memset(&fl, 0, sizeof(fl));
	while (sym_cov_next_file(&c, &fl)) {
		FILE *src = cst_fopen_input(fl.file, "r"); /* a name DWARF gives */
		size_t k = fl.lines;
		char *buf = NULL;
		size_t cap = 0;
		int ln = 0;

		fprintf(f, "<h3 id=\"src-%zu\">", fl.lines);
		sym_put_xml(f, fl.file);
		fputs("</h3>\n", f);
		if (!src) {
			fputs("<p>(source not readable here)</p>\n", f);
			continue;
		}
		fputs("<pre class=\"src\">", f);
		while (getline(&buf, &cap, src) >= 0 && ++ln <= MAX_SOURCE_LINES) {
			size_t len = strlen(buf);

			while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
				buf[--len] = '\0';
			while (k < fl.lines_end && c.lines[k].line < ln)
				k++;
			if (k < fl.lines_end && c.lines[k].line == ln)
				fprintf(f, "<span class=\"%s\"><span class=\"cnt\">%" PRIu64 "</span>",
					c.lines[k].n ? "hit" : "miss", c.lines[k].n);
			else
				fputs("<span><span class=\"cnt\"></span>", f);
			fprintf(f, "%5d  ", ln);
			sym_put_xml(f, buf);
			fputs("</span>\n", f);
		}
		fputs("</pre>\n", f);
		free(buf);
		fclose(src);
	}
	sym_cov_free(&c);
}

int cst_html_write(FILE *f, const struct cst_html_input *input)
{
	struct cst_html_input in;
	char loss[512];

	if (!f || cst_opts_load(&in, sizeof(in), input, "cst_html_input", NULL) < 0)
		return -cste_invalid;
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", f);
	sym_put_xml(f, in.title ? in.title : "cstrace report");
	fputs("</title>\n", f);
	fputs(style, f);
	fputs("</head><body>\n<h1>", f);
	sym_put_xml(f, in.title ? in.title : "cstrace report");
	fputs("</h1>\n", f);
	if (cst_loss_format_totals(&in.loss, loss, sizeof(loss)) > 0) {
		/* "Trace lost in 3 places (...)" */
		fprintf(f, "<p id=\"loss\" class=\"loss\"><b>%c", toupper((unsigned char)*loss));
		sym_put_xml(f, loss + 1);
		fputs(":</b> every count on this page is a lower bound.</p>\n", f);
	}
	fputs("<nav><a href=\"#functions\">Functions</a>", f);
	if (in.tree)
		fputs("<a href=\"#calls\">Call graph</a><a href=\"#flame\">Flame graph</a>", f);
	if (in.profile)
		fputs("<a href=\"#coverage\">Line coverage</a>", f);
	fputs("</nav>\n", f);
	functions(f, &in);
	if (in.tree) {
		call_graph(f, in.tree);
		fputs("<h2 id=\"flame\">Flame graph</h2>\n<p>Hover for counts, click to zoom, "
		      "Search to highlight.</p>\n", f);
		cst_calltree_write_flamegraph(
			in.tree, f,
			&(struct cst_flamegraph_opts){.sz = sizeof(struct cst_flamegraph_opts),
						      .title = in.title,
						      .embedded = true});
		/* an inline SVG's own onload may not fire: start it with the page */
		fputs("<script>document.addEventListener('DOMContentLoaded',function(){"
		      "if(window.init)init();});</script>\n", f);
	}
	if (in.profile)
		coverage(f, in.profile);
	fputs("</body></html>\n", f);
	return ferror(f) ? -cste_io : 0;
}

/* report --format=html: the page of the view's table, call tree and profile */
int sym_report_write_html(struct cst_report_view *v, FILE *f)
{
	struct cst_html_input in = {.sz = sizeof(in), .title = v->o.title, .rows = v->rows,
				    .nrows = v->nrows, .total = v->total, .tree = v->tree,
				    .profile = v->afdo};

	cst_loss_get_totals(v->loss, &in.loss);
	return cst_html_write(f, &in);
}

void sym_put_xml(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		switch (*s) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '"': fputs("&quot;", f); break;
		default:
			/* control characters are not allowed in XML 1.0 */
			if ((unsigned char)*s >= 0x20 || *s == '\t')
				fputc(*s, f);
		}
	}
}
