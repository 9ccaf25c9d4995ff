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
#include <unistd.h>

#define MAX_ROWS 500         /* function table rows */
#define SHOWN_ROWS 25        /* of which open at first */
#define MAX_SOURCE_LINES 20000 /* per annotated file */

static double pct(uint64_t part, uint64_t all)
{
	return all ? 100.0 * (double)part / (double)all : 0.0;
}

static const char style[] =
	"<style>\n"
	"body{font-family:system-ui,sans-serif;margin:1em 1.5em;color:#222;background:#fff}\n"
	"h1{font-size:1.4em;margin-bottom:.2em} h2{font-size:1.15em;margin-top:2em;border-bottom:1px solid #ccc}\n"
	"table{border-collapse:collapse;font-size:13px} td,th{padding:2px 8px;text-align:right}\n"
	"table.wide{width:100%} td.l,th.l{text-align:left} tr:nth-child(even){background:#f4f4f4}\n"
	"table.sort th{cursor:pointer;user-select:none} table.sort th:hover{background:#e8e8e8}\n"
	"th.asc::after{content:' \\25b2'} th.desc::after{content:' \\25bc'}\n"
	"tr.more{display:none} table.open tr.more{display:table-row}\n"
	"button{font:13px system-ui,sans-serif;margin:.4em 0}\n"
	"dl.meta{display:grid;grid-template-columns:max-content auto;gap:2px 1em;font-size:13px;margin:.5em 0}\n"
	"dl.meta dt{color:#666} dl.meta dd{margin:0;font-family:monospace;overflow-wrap:anywhere}\n"
	"details{margin-left:1.2em;font:13px monospace} summary{cursor:pointer}\n"
	"details.leaf>summary{list-style:none} details.fold{margin:.5em 0;font-family:inherit}\n"
	".bar{display:inline-block;height:9px;background:#e8743b;vertical-align:middle}\n"
	"pre.src{font:12px monospace;margin:0} .hit{background:#d8f0d0} .miss{background:#f8d0c8}\n"
	".cnt{display:inline-block;width:7em;text-align:right;color:#555;margin-right:1em}\n"
	".br{display:inline-block;width:4.5em;text-align:center;color:#555}\n"
	".br.part{background:#f8e8a0} .br.none{background:#f8d0c8} .br.all{background:#d8f0d0}\n"
	"nav a{margin-right:1em} svg#cstflame{display:block}\n"
	".loss{background:#fde2c8;border:2px solid #d9541e;padding:.6em 1em;font-size:1.05em}\n"
	"</style>\n";

/* Sortable tables: a click on a heading sorts by that column (again: the other
 * way); numbers as numbers ("52.11%", "3/7" by its first part). Rows past the
 * first ones (data-shown) stay folded until the button opens them. */
static const char page_script[] =
	"<script>\n"
	"function cstKey(c){var t=c.getAttribute('data-v');if(t===null)t=c.textContent;\n"
	" var n=parseFloat(t.replace(/[%,]/g,''));return isNaN(n)?t.toLowerCase():n;}\n"
	"function cstSort(th){var tb=th.closest('table'),b=tb.tBodies[0],i=th.cellIndex;\n"
	" var asc=th.classList.contains('asc')?false:th.classList.contains('desc')?true:\n"
	"  typeof cstKey(b.rows[0].cells[i])==='string';\n"
	" var rows=Array.prototype.slice.call(b.rows);\n"
	" rows.sort(function(x,y){var p=cstKey(x.cells[i]),q=cstKey(y.cells[i]);\n"
	"  if(typeof p!==typeof q){p=String(p);q=String(q);}\n"
	"  if(p<q)return asc?-1:1;if(p>q)return asc?1:-1;return 0;});\n"
	" var shown=+tb.getAttribute('data-shown')||rows.length;\n"
	" rows.forEach(function(r,k){r.classList.toggle('more',k>=shown);b.appendChild(r);});\n"
	" Array.prototype.forEach.call(tb.tHead.rows[0].cells,function(h){h.classList.remove('asc','desc');});\n"
	" th.classList.add(asc?'asc':'desc');}\n"
	"document.addEventListener('DOMContentLoaded',function(){\n"
	" document.querySelectorAll('table.sort th').forEach(function(th){th.addEventListener('click',function(){cstSort(th);});});\n"
	" /* #sort=N (#sort=N- the other way): the function table sorted by column N */\n"
	" var m=/sort=([0-9]+)(-?)/.exec(location.hash),t=document.getElementById('functable');\n"
	" if(m&&t&&t.tHead.rows[0].cells[+m[1]]){var th=t.tHead.rows[0].cells[+m[1]];cstSort(th);if(m[2])cstSort(th);}});\n"
	"</script>\n";

/* What was captured and how: the command, the binaries, where and when, the
 * input's size, and the loss (@loss: the loss model's words, "" for none). */
static void capture_details(FILE *f, const struct cst_html_input *in, const char *loss)
{
	const struct cst_report_meta *m = in->meta;
	struct cst_sym_dso_count d[6];
	int nd = in->sym ? cst_symbolizer_dso_counts(in->sym, d, 6) : 0;

	fputs("<dl class=\"meta\" id=\"capture\">\n", f);
	if (m && m->command) {
		fputs("<dt>command</dt><dd>", f);
		sym_put_xml(f, m->command);
		fputs("</dd>\n", f);
	}
	for (int i = 0; i < nd; i++) {
		struct cst_sym_dso_info info;
		char bid[130] = "";

		if (cst_symbolizer_dso_info(in->sym, d[i].dso, &info) == 0)
			for (uint32_t k = 0; k < info.build_id_size && k < 64; k++)
				snprintf(bid + 2 * k, 3, "%02x", info.build_id[k]);
		fprintf(f, "<dt>%s</dt><dd>", i ? "" : "binaries");
		sym_put_xml(f, d[i].dso);
		fprintf(f, " (%.1f%% of the instructions%s%s)</dd>\n",
			pct(d[i].insns, in->total ? in->total : d[i].insns), bid[0] ? ", build-id " : "",
			bid);
	}
	if (m && (m->date || m->host)) {
		fputs("<dt>recorded</dt><dd>", f);
		sym_put_xml(f, m->date ? m->date : "");
		if (m->host) {
			fputs(m->date ? " on " : "on ", f);
			sym_put_xml(f, m->host);
		}
		if (m->kernel) {
			fputs(" (Linux ", f);
			sym_put_xml(f, m->kernel);
			fputc(')', f);
		}
		fputs("</dd>\n", f);
	}
	if (m && m->trace) {
		fputs("<dt>trace</dt><dd>", f);
		sym_put_xml(f, m->trace);
		if (m->trace_bytes)
			fprintf(f, ", %" PRIu64 " bytes", m->trace_bytes);
		fputs("</dd>\n", f);
	}
	fputs("<dt>loss</dt><dd id=\"lost\">", f);
	sym_put_xml(f, loss[0] ? loss : "none");
	fputs("</dd>\n", f);
	if (m && m->version) {
		fputs("<dt>made by</dt><dd>", f);
		sym_put_xml(f, m->version);
		fputs("</dd>\n", f);
	}
	fputs("</dl>\n", f);
}

static void functions(FILE *f, const struct cst_html_input *in)
{
	int rows = in->nrows < MAX_ROWS ? in->nrows : MAX_ROWS;

	fprintf(f, "<h2 id=\"functions\">Functions</h2>\n<p>%" PRIu64
		   " instructions executed. Click a heading to sort by it.</p>\n",
		in->total);
	fprintf(f, "<table class=\"sort wide\" id=\"functable\" data-shown=\"%d\"><thead><tr>"
		   "<th>insns</th><th>share</th><th></th><th>entered</th><th>taken</th>"
		   "<th>not taken</th><th>lines</th><th class=\"l\">function</th>"
		   "<th class=\"l\">binary</th></tr></thead><tbody>\n",
		SHOWN_ROWS);
	for (int i = 0; i < rows; i++) {
		const struct cst_report_row *r = &in->rows[i];
		double s = pct(r->insns, in->total);

		/* the first screenful shows; the rest opens on demand */
		fprintf(f, "<tr%s><td>%" PRIu64 "</td><td>%.2f%%</td><td class=\"l\" data-v=\"%.4f\">"
			   "<span class=\"bar\" style=\"width:%dpx\"></span></td><td>%" PRIu64
			   "</td><td>%" PRIu64 "</td><td>%" PRIu64 "</td><td>",
			i >= SHOWN_ROWS ? " class=\"more\"" : "", r->insns, s, s, (int)(s + 0.5),
			r->entries, r->taken, r->not_taken);
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
	fputs("</tbody></table>\n", f);
	if (rows > SHOWN_ROWS)
		fprintf(f, "<button id=\"morefuncs\" onclick=\"var t=document.getElementById('functable');"
			   "t.classList.toggle('open');this.textContent=t.classList.contains('open')?"
			   "'show the first %d only':'show %d more functions'\">show %d more functions"
			   "</button>\n",
			SHOWN_ROWS, rows - SHOWN_ROWS, rows - SHOWN_ROWS);
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
			fprintf(f, "<details%s%s><summary>%6.2f%% %6.2f%% %8" PRIu64 " call%s  ",
				kids ? "" : " class=\"leaf\"", nd->depth <= 3 ? " open" : "",
				pct(nd->total, all), pct(nd->self, all), nd->calls,
				nd->calls == 1 ? " " : "s");
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

/* Headers and sources of the system (the C library, the compiler's headers):
 * one inlined atoi brings all of stdlib.h; they fold away. */
static bool system_file(const char *file)
{
	return !strncmp(file, "/usr/", 5) || !strncmp(file, "/opt/", 5) || strstr(file, "/sysroot/");
}

/* The branches of @line, from *@b on (file order): directions that ran of all. */
static void branch_cell(FILE *f, const struct sym_cov *c, const struct sym_cov_file *fl,
			size_t *b, int line)
{
	unsigned hit = 0, all = 0;

	while (*b < fl->branches_end && c->branches[*b].line < line)
		(*b)++;
	for (; *b < fl->branches_end && c->branches[*b].line == line; (*b)++) {
		all += 2;
		hit += (c->branches[*b].taken > 0) + (c->branches[*b].not_taken > 0);
	}
	if (!all) {
		fputs("<span class=\"br\"></span>", f);
		return;
	}
	fprintf(f, "<span class=\"br %s\" title=\"branch directions taken of all\">%u/%u</span>",
		hit == all ? "all" : hit ? "part" : "none", hit, all);
}

/* @fl's source annotated: every line, or (@near) only those near code. */
static void annotate(FILE *f, const struct sym_cov *c, const struct sym_cov_file *fl, bool near)
{
	FILE *src = cst_fopen_input(fl->file, "r"); /* a name DWARF gives */
	size_t k = fl->lines, b = fl->branches;
	char *buf = NULL;
	size_t cap = 0;
	int ln = 0, gap = 0;

	if (!src)
		return;
	fprintf(f, "<h3 id=\"src-%zu\">", fl->lines);
	sym_put_xml(f, fl->file);
	fprintf(f, " <small>(lines %u/%u, branches %u/%u)</small></h3>\n<pre class=\"src\">", fl->lh,
		fl->lf, fl->brh, fl->brf);
	while (getline(&buf, &cap, src) >= 0 && ++ln <= MAX_SOURCE_LINES) {
		size_t len = strlen(buf);
		bool code;

		while (len && (buf[len - 1] == '\n' || buf[len - 1] == '\r'))
			buf[--len] = '\0';
		while (k < fl->lines_end && c->lines[k].line < ln)
			k++;
		code = k < fl->lines_end && c->lines[k].line == ln;
		/* a system file: its lines with code and two around them */
		if (near && !code && !(k < fl->lines_end && c->lines[k].line - ln <= 2) &&
		    !(k > fl->lines && ln - c->lines[k - 1].line <= 2)) {
			gap = 1;
			continue;
		}
		if (gap)
			fputs("<span><span class=\"cnt\"></span>     ...</span>\n", f);
		gap = 0;
		if (code)
			fprintf(f, "<span class=\"%s\"><span class=\"cnt\">%" PRIu64 "</span>",
				c->lines[k].n ? "hit" : "miss", c->lines[k].n);
		else
			fputs("<span><span class=\"cnt\"></span>", f);
		branch_cell(f, c, fl, &b, ln);
		fprintf(f, "%5d  ", ln);
		sym_put_xml(f, buf);
		fputs("</span>\n", f);
	}
	fputs("</pre>\n", f);
	free(buf);
	fclose(src);
}

static void file_row(FILE *f, const struct sym_cov_file *fl, bool readable)
{
	fprintf(f, "<tr><td data-v=\"%u\">%u/%u</td><td>%.1f%%</td><td data-v=\"%u\">%u/%u</td>"
		   "<td class=\"l\">",
		fl->lh, fl->lh, fl->lf, fl->lf ? 100.0 * fl->lh / fl->lf : 0.0, fl->brh, fl->brh,
		fl->brf);
	if (readable)
		fprintf(f, "<a href=\"#src-%zu\">", fl->lines);
	sym_put_xml(f, fl->file);
	fputs(readable ? "</a></td></tr>\n" : "</td></tr>\n", f);
}

static const char cov_head[] =
	"<table class=\"sort\"><thead><tr><th>lines</th><th>share</th><th>branches</th>"
	"<th class=\"l\">file</th></tr></thead><tbody>\n";

/* Coverage: the program's files, then the system's folded away; then each
 * readable source annotated (the system's only near their code, folded). */
static void coverage(FILE *f, struct cst_afdo *p)
{
	struct sym_cov c;
	struct sym_cov_file fl = {0};
	unsigned nsys = 0, sys_lf = 0, sys_lh = 0, nunread = 0;

	if (sym_cov_collect(p, &c) < 0)
		return;
	fputs("<h2 id=\"coverage\">Line and branch coverage</h2>\n<p>lines: lines that ran of "
	      "the lines with code; branches: directions taken (each conditional branch "
	      "taken, and not) of all, as lcov counts them.</p>\n",
	      f);
	fputs(cov_head, f);
	while (sym_cov_next_file(&c, &fl)) {
		if (system_file(fl.file)) {
			nsys++;
			sys_lf += fl.lf;
			sys_lh += fl.lh;
			continue;
		}
		file_row(f, &fl, access(fl.file, R_OK) == 0);
	}
	fputs("</tbody></table>\n", f);
	if (nsys) {
		fprintf(f, "<details class=\"fold\" id=\"sysfiles\"><summary>%u file%s of the system: "
			   "headers and libraries (lines %u/%u)</summary>\n%s",
			nsys, nsys > 1 ? "s" : "", sys_lh, sys_lf, cov_head);
		memset(&fl, 0, sizeof(fl));
		while (sym_cov_next_file(&c, &fl))
			if (system_file(fl.file))
				file_row(f, &fl, access(fl.file, R_OK) == 0);
		fputs("</tbody></table></details>\n", f);
	}
	memset(&fl, 0, sizeof(fl));
	while (sym_cov_next_file(&c, &fl))
		if (!system_file(fl.file))
			annotate(f, &c, &fl, false);
	memset(&fl, 0, sizeof(fl));
	while (sym_cov_next_file(&c, &fl))
		nunread += !system_file(fl.file) && access(fl.file, R_OK) != 0;
	if (nunread) {
		bool first = true;

		fprintf(f, "<p id=\"unreadable\">%u source file%s not readable here: ", nunread,
			nunread > 1 ? "s" : "");
		memset(&fl, 0, sizeof(fl));
		while (sym_cov_next_file(&c, &fl))
			if (!system_file(fl.file) && access(fl.file, R_OK) != 0) {
				fputs(first ? "" : ", ", f);
				sym_put_xml(f, fl.file);
				first = false;
			}
		fputs("</p>\n", f);
	}
	if (nsys) {
		fputs("<details class=\"fold\" id=\"syssrc\"><summary>system headers and libraries, "
		      "annotated near their code</summary>\n",
		      f);
		memset(&fl, 0, sizeof(fl));
		while (sym_cov_next_file(&c, &fl))
			if (system_file(fl.file))
				annotate(f, &c, &fl, true);
		fputs("</details>\n", f);
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
	fputs(page_script, f);
	fputs("</head><body>\n<h1>", f);
	sym_put_xml(f, in.title ? in.title : "cstrace report");
	fputs("</h1>\n", f);
	if (cst_loss_format_totals(&in.loss, loss, sizeof(loss)) <= 0) {
		loss[0] = '\0';
	} else {
		/* "Trace lost in 3 places (...)" */
		fprintf(f, "<p id=\"loss\" class=\"loss\"><b>%c", toupper((unsigned char)*loss));
		sym_put_xml(f, loss + 1);
		fputs(":</b> every count on this page is a lower bound.</p>\n", f);
	}
	capture_details(f, &in, loss);
	fputs("<nav><a href=\"#functions\">Functions</a>", f);
	if (in.tree)
		fputs("<a href=\"#calls\">Call graph</a><a href=\"#flame\">Flame graph</a>", f);
	if (in.profile)
		fputs("<a href=\"#coverage\">Line and branch coverage</a>", f);
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
				    .profile = v->afdo, .meta = v->o.meta, .sym = v->sym};

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
