/* Pieces the capture stage's SVG drawings share. */
#ifndef CSTRACE_CAPTURE_SVG_H
#define CSTRACE_CAPTURE_SVG_H

#include <stdint.h>
#include <stdio.h>

/* The lane layout both drawings use: page width, margins, the backlog area's height,
 * a row of bars, one whole lane (area, three rows, gaps). */
#define CAP_SVG_W 1000.0
#define CAP_SVG_LEFT 110.0
#define CAP_SVG_RIGHT 30.0
#define CAP_SVG_TOP 56.0
#define CAP_SVG_AREA 110.0
#define CAP_SVG_STRIP 16.0
#define CAP_SVG_LANE (CAP_SVG_AREA + 3 * CAP_SVG_STRIP + 46.0)

/* A lane's frame: its zero line at @base ("unread") and, when the ring's size is
 * known, the dashed ring-size line on a scale whose top is @top bytes. */
void cap_svg_lane_frame(FILE *f, double base, uint64_t ring_size, double top);

/* A time axis from @x0 to @x1 at height @y for @span_ns nanoseconds: ticks at 1, 2 or 5
 * times a power of ten in a unit that suits the span, and @label under it. */
void cap_svg_time_axis(FILE *f, double x0, double x1, double y, double span_ns,
		       const char *label);

#endif
