/* Pieces the capture stage's SVG drawings share. */
#ifndef CSTRACE_CAPTURE_SVG_H
#define CSTRACE_CAPTURE_SVG_H

#include <stdio.h>

/* A time axis from @x0 to @x1 at height @y for @span_ns nanoseconds: ticks at 1, 2 or 5
 * times a power of ten in a unit that suits the span, and @label under it. */
void cap_svg_time_axis(FILE *f, double x0, double x1, double y, double span_ns,
		       const char *label);

#endif
