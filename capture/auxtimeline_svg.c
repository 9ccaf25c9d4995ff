/* The AUX timeline drawn as SVG: one lane per ring on one time axis. In each lane the
 * unread backlog rises as the kernel writes and falls at each read, against a line at
 * the ring's size; below it the kernel's writes and the consumer's reads are bars, and
 * losses are marked. Every mark has a tooltip with its numbers. */
#include "cstrace/capture.h"

#include <stdio.h>

#include "cstrace/perfdata.h"
#include "svg.h"

static const char *kib(uint64_t v, char *buf, size_t size)
{
	if (v < 10240)
		snprintf(buf, size, "%llu bytes", (unsigned long long)v);
	else
		snprintf(buf, size, "%.1f KiB", (double)v / 1024);
	return buf;
}

/* What the ring lost, in bytes where they are known. */
static void lost_words(const struct cst_aux_tl_ring *g, char *buf, size_t size)
{
	size_t n = 0;
	char a[32];

#define SAY(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	buf[0] = 0;
	if (g->overwritten)
		SAY("%s overwritten before a snapshot", kib(g->overwritten, a, sizeof(a)));
	if (g->truncated)
		SAY("%s%llu truncation(s), bytes not counted by the kernel", n ? ", " : "",
		    (unsigned long long)g->truncated);
	if (g->lost_events)
		SAY("%s%llu record(s) dropped from the data ring", n ? ", " : "",
		    (unsigned long long)g->lost_events);
	if (g->unwritten)
		SAY("%s%s the output refused", n ? ", " : "", kib(g->unwritten, a, sizeof(a)));
	if (!n)
		SAY("0 bytes");
#undef SAY
}

static void lane(FILE *f, const struct cst_aux_timeline *t, int r, double y0, double span)
{
	const struct cst_aux_tl_ring *g = cst_aux_timeline_ring(t, r);
	struct cst_aux_tl_info info = cst_aux_timeline_get_info(t);
	double scale = (CAP_SVG_W - CAP_SVG_LEFT - CAP_SVG_RIGHT) / span, base = y0 + CAP_SVG_AREA;
	double top = 1, maxw = 1, maxr = 1, px = CAP_SVG_LEFT;
	char who[64], lost[256], a[32], b[32];

	if (g->cpu != UINT32_MAX)
		snprintf(who, sizeof(who), "cpu %u", g->cpu);
	else
		snprintf(who, sizeof(who), "thread %u", g->tid);
	top = g->aux_size > g->peak_backlog ? (double)g->aux_size : (double)g->peak_backlog;
	for (uint64_t i = 0; i < info.nevents; i++) {
		const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);

		if (e->ring != r)
			continue;
		if (e->kind == cst_aux_tl_write && e->size > maxw)
			maxw = (double)e->size;
		if (e->kind == cst_aux_tl_read && e->copied > maxr)
			maxr = (double)e->copied;
	}
	/* the lane's title, clear of the ring-size line under it, with what was
	 * written, read and lost, in bytes where the kernel counts them */
	lost_words(g, lost, sizeof(lost));
	fprintf(f, "<text x=\"10\" y=\"%.1f\"><tspan font-weight=\"bold\">ring %u, %s, AUX "
		   "%llu KiB, %s mode</tspan>: the kernel wrote %s, the consumer read %s; "
		   "lost: %s</text>\n",
		y0 - 22, g->idx, who, (unsigned long long)(g->aux_size / 1024),
		g->overwrite ? "snapshot" : "normal", kib(g->written, a, sizeof(a)),
		kib(g->copied, b, sizeof(b)), lost);
	cap_svg_lane_frame(f, base, g->aux_size, top);
	/* backlog: rises from the previous read to what the next read found, then drops */
	fprintf(f, "<polygon fill=\"#9ecae1\" fill-opacity=\"0.8\" stroke=\"#3182bd\" points=\"%.1f,%.1f",
		CAP_SVG_LEFT, base);
	for (uint64_t i = 0; i < info.nevents; i++) {
		const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);
		double x = CAP_SVG_LEFT + (double)e->time * scale;

		if (e->ring != r || e->kind != cst_aux_tl_read)
			continue;
		fprintf(f, " %.1f,%.1f %.1f,%.1f %.1f,%.1f", px, base, x,
			base - CAP_SVG_AREA * (double)e->backlog / top, x, base);
		px = x;
	}
	fprintf(f, " %.1f,%.1f\"><title>unread AUX bytes (backlog) of ring %u</title></polygon>\n",
		px, base, g->idx);
	/* rows: writes, reads, losses */
	fprintf(f, "<text x=\"10\" y=\"%.1f\">kernel writes</text>\n<text x=\"10\" y=\"%.1f\">"
		   "consumer reads</text>\n<text x=\"10\" y=\"%.1f\">losses</text>\n",
		base + CAP_SVG_STRIP, base + 2 * CAP_SVG_STRIP, base + 3 * CAP_SVG_STRIP);
	for (uint64_t i = 0; i < info.nevents; i++) {
		const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);
		double x = CAP_SVG_LEFT + (double)e->time * scale, h;
		char words[64];

		if (e->ring != r)
			continue;
		if (e->kind == cst_aux_tl_write) {
			h = 2 + (CAP_SVG_STRIP - 4) * (double)e->size / maxw;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"2\" height=\"%.1f\" "
				   "fill=\"#31a354\"><title>write at %.6f s: AUX 0x%llx, %llu bytes, "
				   "%s</title></rect>\n",
				x - 1, base + CAP_SVG_STRIP + 2 - h, h, (double)e->time / 1e9,
				(unsigned long long)e->offset, (unsigned long long)e->size,
				cst_aux_flags_words(e->flags, words, sizeof(words)));
			if (e->flags & CST_PERF_AUX_TRUNCATED)
				fprintf(f, "<path d=\"M%.1f %.1f l5 10 l-10 0 z\" fill=\"#d62728\">"
					   "<title>TRUNCATED at %.6f s: the sink dropped trace</title>"
					   "</path>\n",
					x, base + 2 * CAP_SVG_STRIP + 4, (double)e->time / 1e9);
			if (e->flags & (CST_PERF_AUX_COLLISION | CST_PERF_AUX_PARTIAL))
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#ff7f0e\">"
					   "<title>%s</title></circle>\n",
					x, base + 3 * CAP_SVG_STRIP - 4, words);
		} else if (e->kind == cst_aux_tl_read) {
			h = 2 + (CAP_SVG_STRIP - 4) * (double)e->copied / maxr;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" "
				   "fill=\"#3182bd\"><title>read at %.6f s: %llu bytes copied, %llu "
				   "unread found, %.1f us after the wake-up</title></rect>\n",
				x - 1.5, base + 2 * CAP_SVG_STRIP + 2 - h, h, (double)e->time / 1e9,
				(unsigned long long)e->copied, (unsigned long long)e->backlog,
				(double)e->latency / 1e3);
			if (e->overwritten)
				fprintf(f, "<path d=\"M%.1f %.1f l5 10 l-10 0 z\" fill=\"#ff7f0e\">"
					   "<title>snapshot at %.6f s: %llu bytes overwritten before "
					   "it</title></path>\n",
					x, base + 2 * CAP_SVG_STRIP + 4, (double)e->time / 1e9,
					(unsigned long long)e->overwritten);
		} else if (e->kind == cst_aux_tl_lost) {
			fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" fill=\"#9467bd\" "
				   "text-anchor=\"middle\">x<title>LOST: %llu record(s) dropped from "
				   "the data ring</title></text>\n",
				x, base + 3 * CAP_SVG_STRIP + 2, (unsigned long long)e->lost);
		}
	}
}

int cst_aux_timeline_svg(const struct cst_aux_timeline *t, void *fp)
{
	FILE *f = fp;
	struct cst_aux_tl_info info = cst_aux_timeline_get_info(t);
	double span = info.duration ? (double)info.duration : 1;
	double H = CAP_SVG_TOP + info.nrings * CAP_SVG_LANE + 70, axis;

	if (!t || !f)
		return -cste_invalid;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		   "<text x=\"10\" y=\"22\" font-size=\"15\">AUX rings over time: what the kernel "
		   "wrote, what the consumer read, what stayed unread%s</text>\n",
		CAP_SVG_W, H, info.ended ? "" : " (the stream stops early: the capture did not finish)");
	for (int r = 0; r < info.nrings; r++)
		lane(f, t, r, CAP_SVG_TOP + 14 + r * CAP_SVG_LANE, span);
	/* wake-ups along the axis, then the axis with units */
	axis = CAP_SVG_TOP + info.nrings * CAP_SVG_LANE;
	for (uint64_t i = 0; i < info.nevents; i++) {
		const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);

		if (e->kind == cst_aux_tl_wake)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				   "stroke=\"#bbb\"><title>wake-up at %.6f s</title></line>\n",
				CAP_SVG_LEFT + (double)e->time * (CAP_SVG_W - CAP_SVG_LEFT - CAP_SVG_RIGHT) / span, axis - 6,
				CAP_SVG_LEFT + (double)e->time * (CAP_SVG_W - CAP_SVG_LEFT - CAP_SVG_RIGHT) / span, axis,
				(double)e->time / 1e9);
	}
	cap_svg_time_axis(f, CAP_SVG_LEFT, CAP_SVG_W - CAP_SVG_RIGHT, axis, span,
			  "time since the capture started (consumer clock; grey ticks: wake-ups)");
	fprintf(f, "<g transform=\"translate(%.1f,%.1f)\">"
		   "<rect width=\"12\" height=\"10\" fill=\"#9ecae1\"/><text x=\"16\" y=\"9\">unread "
		   "backlog</text>"
		   "<rect x=\"120\" width=\"4\" height=\"10\" fill=\"#31a354\"/><text x=\"128\" "
		   "y=\"9\">kernel write</text>"
		   "<rect x=\"220\" width=\"4\" height=\"10\" fill=\"#3182bd\"/><text x=\"228\" "
		   "y=\"9\">consumer read</text>"
		   "<path d=\"M335 0 l5 10 l-10 0 z\" fill=\"#d62728\"/><text x=\"345\" y=\"9\">"
		   "truncated</text>"
		   "<path d=\"M425 0 l5 10 l-10 0 z\" fill=\"#ff7f0e\"/><text x=\"435\" y=\"9\">"
		   "overwritten</text>"
		   "<text x=\"525\" y=\"9\" fill=\"#9467bd\">x</text><text x=\"535\" y=\"9\">"
		   "LOST</text>"
		   "<line x1=\"590\" y1=\"5\" x2=\"610\" y2=\"5\" stroke=\"#444\" "
		   "stroke-dasharray=\"6,3\"/><text x=\"615\" y=\"9\">ring size</text></g>\n</svg>\n",
		CAP_SVG_LEFT, axis + 46);
	return ferror(f) ? -cste_io : 0;
}
