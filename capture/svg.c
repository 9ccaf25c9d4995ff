/* Pieces the capture stage's SVG drawings share. */
#include "svg.h"

#include <math.h>

/* A tick step of 1, 2 or 5 times a power of ten giving about @want ticks. */
static double tick_step(double span, int want)
{
	double raw = span / want, p = pow(10, floor(log10(raw)));

	if (raw / p >= 5)
		return 5 * p;
	if (raw / p >= 2)
		return 2 * p;
	return p;
}

static void time_unit(double span_ns, double *div, const char **unit)
{
	if (span_ns >= 2e9) {
		*div = 1e9;
		*unit = "s";
	} else if (span_ns >= 2e6) {
		*div = 1e6;
		*unit = "ms";
	} else if (span_ns >= 2e3) {
		*div = 1e3;
		*unit = "us";
	} else {
		*div = 1;
		*unit = "ns";
	}
}

void cap_svg_time_axis(FILE *f, double x0, double x1, double y, double span_ns,
		       const char *label)
{
	double div, step;
	const char *unit;

	if (span_ns <= 0)
		span_ns = 1;
	time_unit(span_ns, &div, &unit);
	step = tick_step(span_ns / div, 8);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n",
		x0, y, x1, y);
	for (double v = 0; v <= span_ns / div + step / 2; v += step) {
		double x = x0 + v * div * (x1 - x0) / span_ns;

		if (x > x1 + 1)
			break;
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>"
			   "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g %s</text>\n",
			x, y, x, y + 5, x, y + 18, v, unit);
	}
	fprintf(f, "<text x=\"%.1f\" y=\"%.1f\">%s</text>\n", x0, y + 36, label);
}

void cap_svg_lane_frame(FILE *f, double base, uint64_t ring_size, double top)
{
	double y = base - CAP_SVG_AREA * (double)ring_size / (top > 0 ? top : 1);

	if (ring_size)
		fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#444\" "
			   "stroke-dasharray=\"6,3\"/>\n<text x=\"10\" y=\"%.1f\">ring size</text>\n",
			CAP_SVG_LEFT, y, CAP_SVG_W - CAP_SVG_RIGHT, y, y + 4);
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n"
		   "<text x=\"10\" y=\"%.1f\">unread</text>\n",
		CAP_SVG_LEFT, base, CAP_SVG_W - CAP_SVG_RIGHT, base, base - CAP_SVG_AREA / 2);
}
