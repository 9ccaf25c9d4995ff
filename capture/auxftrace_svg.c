/* The ftrace view drawn as SVG on the kernel's clock: one lane per ring, the unread
 * backlog after each kernel write (dropping at each consumer read) against the ring
 * size, writes and reads as bars, unreported writes and overflows marked. */
#include "cstrace/capture.h"

#include <stdio.h>

#include "svg.h"

static void ft_lane(FILE *f, const struct cst_aux_ftrace *ft, int r, double y0, uint64_t t0,
		    double span)
{
	const struct cst_aux_ft_ring *g = cst_aux_ftrace_ring(ft, r);
	double scale = (CAP_SVG_W - CAP_SVG_LEFT - CAP_SVG_RIGHT) / span;
	double base = y0 + CAP_SVG_AREA, top, maxw = 1, maxr = 1;
	double py = base, prev_y = base;
	uint64_t n = cst_aux_ftrace_nevents(ft);

	top = (double)(g->aux_size > g->peak_backlog ? g->aux_size : g->peak_backlog);
	if (top < 1)
		top = 1;
	for (uint64_t i = 0; i < n; i++) {
		const struct cst_aux_ft_event *e = cst_aux_ftrace_event(ft, i);

		if (e->ring_cpu != g->cpu)
			continue;
		if (e->kind == cst_aux_ft_write && (double)e->size > maxw)
			maxw = (double)e->size;
		if (e->kind == cst_aux_ft_read && (double)e->size > maxr)
			maxr = (double)e->size;
	}
	/* the lane's title, clear of the ring-size line, with what was lost in bytes */
	fprintf(f, "<text x=\"10\" y=\"%.1f\"><tspan font-weight=\"bold\">cpu %d: %llu kernel "
		   "writes, %llu consumer reads</tspan>: %llu bytes written, %llu read; lost: %llu "
		   "bytes no AUX record reports (%llu write(s)), %llu no AUXTRACE record holds, "
		   "%llu overflow(s)</text>\n",
		y0 - 22, g->cpu, (unsigned long long)g->writes, (unsigned long long)g->reads,
		(unsigned long long)g->write_bytes, (unsigned long long)g->read_bytes,
		(unsigned long long)g->unreported_bytes, (unsigned long long)g->unreported,
		(unsigned long long)g->unheld_bytes, (unsigned long long)g->overflows);
	cap_svg_lane_frame(f, base, g->aux_size, top);
	/* the backlog: a step up at each write, down to nothing at each read */
	fprintf(f, "<polyline fill=\"none\" stroke=\"#3182bd\" stroke-width=\"1.5\" points=\"%.1f,%.1f",
		CAP_SVG_LEFT, base);
	for (uint64_t i = 0; i < n; i++) {
		const struct cst_aux_ft_event *e = cst_aux_ftrace_event(ft, i);
		double x = CAP_SVG_LEFT + (double)(e->time - t0) * scale;

		if (e->ring_cpu != g->cpu || (e->kind != cst_aux_ft_write && e->kind != cst_aux_ft_read))
			continue;
		py = e->kind == cst_aux_ft_write ? base - CAP_SVG_AREA * (double)e->backlog / top : base;
		fprintf(f, " %.1f,%.1f %.1f,%.1f", x, prev_y, x, py); /* a step at x */
		prev_y = py;
	}
	fprintf(f, "\"><title>unread AUX bytes of cpu %d after each write and read</title>"
		   "</polyline>\n",
		g->cpu);
	fprintf(f, "<text x=\"10\" y=\"%.1f\">kernel writes</text><text x=\"10\" y=\"%.1f\">"
		   "consumer reads</text><text x=\"10\" y=\"%.1f\">losses</text>\n",
		base + CAP_SVG_STRIP, base + 2 * CAP_SVG_STRIP, base + 3 * CAP_SVG_STRIP);
	for (uint64_t i = 0; i < n; i++) {
		const struct cst_aux_ft_event *e = cst_aux_ftrace_event(ft, i);
		double x = CAP_SVG_LEFT + (double)(e->time - t0) * scale, h;
		double ts = (double)e->time / 1e9;

		if (e->ring_cpu != g->cpu)
			continue;
		if (e->kind == cst_aux_ft_write) {
			h = 2 + (CAP_SVG_STRIP - 4) * (double)e->size / maxw;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"2\" height=\"%.1f\" "
				   "fill=\"#31a354\"><title>write at %.6f s: heads 0x%llx to 0x%llx, "
				   "%llu bytes, %llu unread</title></rect>\n",
				x - 1, base + CAP_SVG_STRIP + 2 - h, h, ts, (unsigned long long)e->old,
				(unsigned long long)e->head, (unsigned long long)e->size,
				(unsigned long long)e->backlog);
			if (e->rec < 0 && cst_aux_ftrace_paired(ft))
				fprintf(f, "<path d=\"M%.1f %.1f l5 10 l-10 0 z\" fill=\"#d62728\">"
					   "<title>NOT REPORTED at %.6f s: no AUX record reports the "
					   "write 0x%llx to 0x%llx</title></path>\n",
					x, base + 2 * CAP_SVG_STRIP + 4, ts, (unsigned long long)e->old,
					(unsigned long long)e->head);
			if (e->overflow)
				fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"#ff7f0e\">"
					   "<title>OVERFLOW at %.6f s: %llu bytes unread, the ring "
					   "is full</title></circle>\n",
					x, base + 3 * CAP_SVG_STRIP - 4, ts, (unsigned long long)e->backlog);
		} else if (e->kind == cst_aux_ft_read) {
			h = 2 + (CAP_SVG_STRIP - 4) * (double)e->size / maxr;
			fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"3\" height=\"%.1f\" "
				   "fill=\"#3182bd\"><title>read at %.6f s: %llu bytes, %llu write(s) "
				   "drained%s</title></rect>\n",
				x - 1.5, base + 2 * CAP_SVG_STRIP + 2 - h, h, ts, (unsigned long long)e->size,
				(unsigned long long)e->drained,
				e->from_log ? " (cstrace's consumer log)" : "");
		}
	}
}

int cst_aux_ftrace_svg(const struct cst_aux_ftrace *ft, void *fp)
{
	FILE *f = fp;
	uint64_t n = cst_aux_ftrace_nevents(ft), t0, t1;
	int nr = cst_aux_ftrace_nrings(ft);
	double span, H = CAP_SVG_TOP + nr * CAP_SVG_LANE + 70, axis = CAP_SVG_TOP + nr * CAP_SVG_LANE;

	if (!ft || !f || !n)
		return -cste_invalid;
	t0 = cst_aux_ftrace_event(ft, 0)->time;
	t1 = cst_aux_ftrace_event(ft, n - 1)->time;
	span = t1 > t0 ? (double)(t1 - t0) : 1;
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" "
		   "font-family=\"sans-serif\" font-size=\"12\">\n"
		   "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		   "<text x=\"10\" y=\"22\" font-size=\"15\">AUX rings from ftrace: the kernel's "
		   "writes, the consumer's reads, what stayed unread (from %.6f s)</text>\n",
		CAP_SVG_W, H, (double)t0 / 1e9);
	for (int r = 0; r < nr; r++)
		ft_lane(f, ft, r, CAP_SVG_TOP + 14 + r * CAP_SVG_LANE, t0, span);
	for (uint64_t i = 0; i < n; i++) {
		const struct cst_aux_ft_event *e = cst_aux_ftrace_event(ft, i);
		double x = CAP_SVG_LEFT +
			   (double)(e->time - t0) * (CAP_SVG_W - CAP_SVG_LEFT - CAP_SVG_RIGHT) / span;

		if (e->kind == cst_aux_ft_wake)
			fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" "
				   "stroke=\"#bbb\"><title>%s of pid %u at %.6f s</title></line>\n",
				x, axis - 6, x, axis, e->waking ? "sched_waking" : "sched_wakeup",
				e->target, (double)e->time / 1e9);
	}
	cap_svg_time_axis(f, CAP_SVG_LEFT, CAP_SVG_W - CAP_SVG_RIGHT, axis, span,
			  "time (the kernel's clock, from the first event; grey ticks: wake-ups)");
	fprintf(f, "<g transform=\"translate(%.1f,%.1f)\">"
		   "<line x1=\"0\" y1=\"5\" x2=\"14\" y2=\"5\" stroke=\"#3182bd\" stroke-width=\"2\"/>"
		   "<text x=\"18\" y=\"9\">unread backlog</text>"
		   "<rect x=\"120\" width=\"4\" height=\"10\" fill=\"#31a354\"/><text x=\"128\" "
		   "y=\"9\">kernel write</text>"
		   "<rect x=\"220\" width=\"4\" height=\"10\" fill=\"#3182bd\"/><text x=\"228\" "
		   "y=\"9\">consumer read</text>"
		   "<path d=\"M335 0 l5 10 l-10 0 z\" fill=\"#d62728\"/><text x=\"345\" y=\"9\">"
		   "not reported</text>"
		   "<circle cx=\"440\" cy=\"5\" r=\"4\" fill=\"#ff7f0e\"/><text x=\"448\" y=\"9\">"
		   "overflow</text>"
		   "<line x1=\"520\" y1=\"5\" x2=\"540\" y2=\"5\" stroke=\"#444\" "
		   "stroke-dasharray=\"6,3\"/><text x=\"545\" y=\"9\">ring size</text></g>\n</svg>\n",
		CAP_SVG_LEFT, axis + 46);
	return ferror(f) ? -cste_io : 0;
}
