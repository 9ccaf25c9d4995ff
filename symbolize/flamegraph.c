/* The flame graph view: the call tree drawn as a self-contained SVG. Each stack is
 * a box as wide as its share of all instructions, on top of its caller's box;
 * siblings are ordered by name, as flame graphs are, so the same program gives
 * the same picture. The page carries a small script: hover names a box, click
 * zooms to it, search highlights matching functions; "#zoom=NAME" or
 * "#search=REGEX" after the file name does the same on opening (links to a view).
 * Everything is inline, so the file opens offline in any browser. */
#include "views_int.h"
#include "report_view.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#define FRAME_H 16
#define TOP 56       /* title and buttons */
#define BANNER 28    /* under them, the banner saying what trace was lost */
#define BOTTOM 30    /* the details line */
#define PAD 10
#define MAX_LEVELS 1024 /* deeper stacks (runaway recursion) are not drawn: the
			   picture would be a million pixels tall */

/* As much of @name as fits @px pixels (about 7 per character), ".." marking a cut. */
static void put_label(FILE *f, const char *name, double px)
{
	int fits = (int)((px - 6) / 7);
	size_t len = strlen(name);
	char buf[512];

	if (fits < 3)
		return;
	if ((size_t)fits >= len) {
		sym_put_xml(f, name);
		return;
	}
	if ((size_t)fits > sizeof(buf) - 1)
		fits = sizeof(buf) - 1;
	snprintf(buf, sizeof(buf), "%.*s..", fits - 2, name);
	sym_put_xml(f, buf);
}

/* Warm colours from the name, so a function keeps its colour between runs. */
static void colour(const char *name, bool unknown, char *buf, size_t size)
{
	uint32_t h = 2166136261u;

	for (const char *p = name; *p; p++)
		h = (h ^ (unsigned char)*p) * 16777619u;
	if (unknown)
		snprintf(buf, size, "rgb(%u,%u,%u)", 170 + h % 40, 170 + h % 40, 170 + h % 40);
	else
		snprintf(buf, size, "rgb(%u,%u,%u)", 205 + h % 50, 80 + (h >> 8) % 130,
			 (h >> 16) % 55);
}

static int by_name(const void *a, const void *b, void *ctx)
{
	const struct cst_calltree_node *n = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(n[x].name, n[y].name);

	return c ? c : (x < y ? -1 : x > y);
}

static const char script[] =
	"<script type=\"text/ecmascript\"><![CDATA[\n"
	"var W=0, H=0, FH=16, TOP=56, BOT=30, PAD=10, FIXED=false, INV=false, cur=[0,1,0];\n"
	"var root, details, matchedtxt, frames=[], inited=false;\n"
	"function init(){\n"
	" if(inited) return; inited=true;\n"
	" root=document.getElementById('cstflame');\n"
	" details=document.getElementById('details');\n"
	" matchedtxt=document.getElementById('matched');\n"
	" W=+root.getAttribute('data-width'); H=+root.getAttribute('height');\n"
	" FIXED=root.getAttribute('data-fixed')==='1'; INV=root.getAttribute('data-inverted')==='1';\n"
	" TOP=+root.getAttribute('data-top')||TOP; /* below the loss banner, if any */\n"
	" var gs=root.querySelectorAll('g.f');\n"
	" for(var i=0;i<gs.length;i++){var g=gs[i];\n"
	"  g.fx=+g.getAttribute('data-x'); g.fw=+g.getAttribute('data-w');\n"
	"  g.fd=+g.getAttribute('data-d'); frames.push(g);\n"
	"  g.addEventListener('mouseover',function(){details.textContent=this.getAttribute('data-info');});\n"
	"  g.addEventListener('mouseout',function(){details.textContent=' ';});\n"
	"  g.addEventListener('click',function(){zoom(this);});}\n"
	" /* as wide as the window (or the page), unless a width was given */\n"
	" if(!FIXED) window.addEventListener('resize',function(){size(); draw(cur[0],cur[1],cur[2]);});\n"
	" /* Ctrl-F (Cmd-F) searches the graph, as flamegraph.pl's */\n"
	" document.addEventListener('keydown',function(e){if((e.ctrlKey||e.metaKey)&&(e.key==='f'||e.key==='F')){e.preventDefault(); search();}});\n"
	" size(); draw(0,1,0);\n"
	" var h=decodeURIComponent(location.hash.substring(1)), m;\n"
	" if((m=/^zoom=(.*)$/.exec(h))){for(var k=0;k<frames.length;k++)\n"
	"  if(frames[k].getAttribute('data-name')===m[1]){zoom(frames[k]); break;}}\n"
	" if((m=/^search=(.*)$/.exec(h))) search(m[1]);\n"
	" if(/(^|&)inverted$/.test(h)) invert();}\n"
	"function size(){\n"
	" if(!FIXED){var w=root.getBoundingClientRect().width; if(w>2*PAD+200) W=w-2*PAD;}\n"
	" root.setAttribute('data-width',W.toFixed(0));\n"
	" document.getElementById('title').setAttribute('x',(PAD+W/2).toFixed(0));\n"
	" document.getElementById('search').setAttribute('x',(PAD+W-50).toFixed(0));\n"
	" document.getElementById('invert').setAttribute('x',(PAD+W-150).toFixed(0));\n"
	" matchedtxt.setAttribute('x',(PAD+W-150).toFixed(0));\n"
	" var lr=document.getElementById('lossrect'); if(lr) lr.setAttribute('width',W.toFixed(0));}\n"
	"function fit(g,w){var t=g.querySelector('text'), n=g.getAttribute('data-name');\n"
	" var c=Math.floor((w-6)/7); t.textContent=c<3?'':(n.length<=c?n:n.substring(0,c-2)+'..');}\n"
	"function draw(x0,w0,d0){ cur=[x0,w0,d0];\n"
	" for(var i=0;i<frames.length;i++){var g=frames[i], r=g.querySelector('rect'), t=g.querySelector('text');\n"
	"  var inside=g.fd>=d0 && g.fx>=x0-1e-12 && g.fx+g.fw<=x0+w0+1e-12;\n"
	"  var above=g.fd<d0 && g.fx<=x0+1e-12 && g.fx+g.fw>=x0+w0-1e-12;\n"
	"  if(!inside && !above){g.style.display='none'; continue;}\n"
	"  g.style.display='';\n"
	"  var x=inside?(g.fx-x0)/w0:0, w=inside?g.fw/w0:1;\n"
	"  var y=INV?TOP+(g.fd-1)*FH:H-BOT-g.fd*FH;\n"
	"  r.setAttribute('x',(PAD+x*W).toFixed(2)); r.setAttribute('width',Math.max(0,w*W-0.5).toFixed(2));\n"
	"  r.setAttribute('y',y); t.setAttribute('y',y+11);\n"
	"  t.setAttribute('x',(PAD+3+x*W).toFixed(2)); fit(g,w*W);\n"
	"  r.style.opacity=above&&g.fd<d0?0.6:1;}}\n"
	"function zoom(g){draw(g.fx,g.fw,g.fd); document.getElementById('unzoom').style.opacity=1;}\n"
	"function unzoom(){draw(0,1,0); document.getElementById('unzoom').style.opacity=0.3;}\n"
	"function invert(){INV=!INV; root.setAttribute('data-inverted',INV?'1':'0');\n"
	" document.getElementById('invert').textContent=INV?'Flame':'Icicle'; draw(cur[0],cur[1],cur[2]);}\n"
	"function search(q){var re=q!==undefined?q:prompt('Search for (regular expression, any case):'); if(re===null) return;\n"
	" var rx; try{rx=new RegExp(re,'i');}catch(e){alert(e); return;}\n"
	" var spans=[];\n"
	" for(var i=0;i<frames.length;i++){var g=frames[i], r=g.querySelector('rect');\n"
	"  if(re!=='' && rx.test(g.getAttribute('data-name'))){r.setAttribute('fill','rgb(230,0,230)'); spans.push([g.fx,g.fx+g.fw]);}\n"
	"  else r.setAttribute('fill',r.getAttribute('data-fill'));}\n"
	" spans.sort(function(a,b){return a[0]-b[0];}); var sum=0, end=-1;\n"
	" for(var k=0;k<spans.length;k++){var s=Math.max(spans[k][0],end); if(spans[k][1]>s){sum+=spans[k][1]-s; end=spans[k][1];}}\n"
	" matchedtxt.textContent=re===''?' ':'Matched: '+(100*sum).toFixed(2)+'%';}\n"
	"]]></script>\n";

int cst_calltree_write_flamegraph(struct cst_calltree *tree, FILE *f,
				  const struct cst_flamegraph_opts *opts)
{
	struct cst_flamegraph_opts o;
	const struct cst_calltree_node *nodes;
	uint32_t *kids, *stack, maxd = 0, sp = 0;
	bool cut;
	double *x;
	int n, width, height, top;
	uint64_t all;
	char loss[512];

	if (!tree || !f || cst_opts_load(&o, sizeof(o), opts, "cst_flamegraph_opts", NULL) < 0)
		return -cste_invalid;
	n = cst_calltree_nodes(tree, &nodes);
	if (n < 0)
		return n;
	/* a width given is kept; else 1200 until the page script fits the window */
	width = o.width > 200 ? o.width : 1200;
	all = nodes[0].total;
	for (int i = 1; i < n; i++)
		if (nodes[i].depth > maxd)
			maxd = nodes[i].depth;
	cut = maxd > MAX_LEVELS;
	if (cut)
		maxd = MAX_LEVELS;
	top = TOP + (cst_loss_format_totals(&o.loss, loss, sizeof(loss)) > 0 ? BANNER : 0);
	height = top + (int)maxd * FRAME_H + BOTTOM;
	kids = malloc((size_t)n * sizeof(*kids));
	stack = malloc((size_t)n * sizeof(*stack));
	x = calloc((size_t)n, sizeof(*x));
	if (!kids || !stack || !x) {
		free(kids);
		free(stack);
		free(x);
		return -cste_nomem;
	}
	if (!o.embedded)
		fputs("<?xml version=\"1.0\" standalone=\"no\"?>\n", f);
	if (o.width > 200)
		fprintf(f, "<svg id=\"cstflame\" version=\"1.1\" width=\"%d\" height=\"%d\" "
			   "viewBox=\"0 0 %d %d\"",
			width + 2 * PAD, height, width + 2 * PAD, height);
	else
		fprintf(f, "<svg id=\"cstflame\" version=\"1.1\" width=\"100%%\" height=\"%d\"",
			height);
	fprintf(f,
		" xmlns=\"http://www.w3.org/2000/svg\" data-width=\"%d\" data-fixed=\"%d\" "
		"data-inverted=\"%d\" data-top=\"%d\" onload=\"init()\">\n"
		"<style>text{font-family:Verdana,sans-serif;font-size:12px;fill:#000}"
		"g.f:hover rect{stroke:#000;stroke-width:0.5;cursor:pointer}"
		"#title{font-size:17px} .button{cursor:pointer}</style>\n",
		width, o.width > 200, o.inverted, top);
	fputs(script, f);
	fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f0\"/>\n"
		   "<text id=\"title\" x=\"%d\" y=\"24\" text-anchor=\"middle\">",
		width / 2 + PAD);
	sym_put_xml(f, o.title ? o.title : "Flame graph");
	fprintf(f, "</text>\n<text x=\"%d\" y=\"44\">%" PRIu64
		   " instructions; box width = share of them%s</text>\n"
		   "<text id=\"unzoom\" class=\"button\" x=\"%d\" y=\"24\" style=\"opacity:0.3\" "
		   "onclick=\"unzoom()\">Reset Zoom</text>\n"
		   "<text id=\"search\" class=\"button\" x=\"%d\" y=\"24\" onclick=\"search()\">"
		   "<title>a regular expression, any case (Ctrl-F)</title>Search</text>\n"
		   "<text id=\"invert\" class=\"button\" x=\"%d\" y=\"24\" onclick=\"invert()\">"
		   "<title>roots at the top (icicle) or at the bottom (flame)</title>%s</text>\n"
		   "<text id=\"matched\" x=\"%d\" y=\"%d\"> </text>\n"
		   "<text id=\"details\" x=\"%d\" y=\"%d\"> </text>\n",
		PAD, all, cut ? " (stacks deeper than 1024 frames not drawn)" : "", PAD,
		PAD + width - 50, PAD + width - 150, o.inverted ? "Flame" : "Icicle",
		PAD + width - 150, height - 10, PAD, height - 10);
	if (top != TOP) {
		/* as wide as the boxes: size() keeps it so when the window changes */
		fprintf(f, "<g id=\"loss\"><rect id=\"lossrect\" x=\"%d\" y=\"%d\" width=\"%d\" "
			   "height=\"%d\" fill=\"#fde2c8\" stroke=\"#d9541e\" stroke-width=\"2\"/>"
			   "<text x=\"%d\" y=\"%d\" style=\"font-weight:bold\">%c",
			PAD, TOP - 4, width, BANNER - 6, PAD + 6, TOP + 13,
			toupper((unsigned char)*loss));
		sym_put_xml(f, loss + 1);
		fputs(": every box is a lower bound</text></g>\n", f);
	}
	/* depth first from the root, each node's children laid out by name */
	stack[sp++] = 0;
	while (sp) {
		uint32_t id = stack[--sp], nk = 0;
		const struct cst_calltree_node *nd = &nodes[id];
		double cx = x[id];

		if (id) {
			double w = all ? (double)nd->total / (double)all : 0;
			double px = w * width;
			int y = o.inverted ? top + ((int)nd->depth - 1) * FRAME_H
					   : height - BOTTOM - (int)nd->depth * FRAME_H;
			char fill[32], info[80];

			colour(nd->name, !nd->func, fill, sizeof(fill));
			snprintf(info, sizeof(info), " (%" PRIu64 " instructions, %.2f%%, %" PRIu64 " call%s)",
				 nd->total, 100.0 * w, nd->calls, nd->calls == 1 ? "" : "s");
			fputs("<g class=\"f\" data-name=\"", f);
			sym_put_xml(f, nd->name);
			fprintf(f, "\" data-x=\"%.9f\" data-w=\"%.9f\" data-d=\"%u\" data-info=\"", x[id], w,
				nd->depth);
			sym_put_xml(f, nd->name);
			fprintf(f, "%s\"><title>", info);
			sym_put_xml(f, nd->name);
			fprintf(f, "%s</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" "
				   "fill=\"%s\" data-fill=\"%s\" rx=\"2\"/><text x=\"%.2f\" y=\"%d\">",
				info, PAD + x[id] * width, y, px > 0.5 ? px - 0.5 : 0, FRAME_H - 1, fill, fill,
				PAD + 3 + x[id] * width, y + 11);
			put_label(f, nd->name, px); /* the script fits it again after a zoom */
			fputs("</text></g>\n", f);
		}
		for (uint32_t c = nd->depth < MAX_LEVELS ? nd->first_child : 0; c;
		     c = nodes[c].next_sibling)
			if (nodes[c].total)
				kids[nk++] = c;
		qsort_r(kids, nk, sizeof(*kids), by_name, (void *)nodes);
		for (uint32_t k = 0; k < nk; k++) {
			x[kids[k]] = cx;
			cx += all ? (double)nodes[kids[k]].total / (double)all : 0;
		}
		/* push in reverse so that the first by name is drawn first */
		for (uint32_t k = nk; k-- > 0;)
			stack[sp++] = kids[k];
	}
	fputs("</svg>\n", f);
	free(kids);
	free(stack);
	free(x);
	return ferror(f) ? -cste_io : 0;
}

/* report --format=flamegraph, titled with the trace */
int sym_report_write_flamegraph(struct cst_report_view *v, FILE *f)
{
	struct cst_flamegraph_opts o = {.sz = sizeof(o), .title = v->o.title,
					.width = v->o.width, .inverted = v->o.inverted};

	cst_loss_get_totals(v->loss, &o.loss);
	return cst_calltree_write_flamegraph(v->tree, f, &o);
}
