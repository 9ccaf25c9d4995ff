/* A callback's stop value in time order: cst_session_run must return it at
 * once and deliver nothing after it, whatever the value. A 1 was once read as
 * "this element went out before the run went to one thread" (from the sideband
 * callback) or "this queue has ended" (from either), so the stop was lost and
 * the run went on.
 * Usage: time_stop PERF.DATA THREADS sb|elem (which callback stops); prints what
 * it saw, exits 0 when right. */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/decode.h"

struct seen {
	bool elem_stops;
	uint64_t elements, before, after; /* before and after the first sideband */
	unsigned sideband;
};

static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct seen *s = ctx;

	(void)e;
	s->elements++;
	if (s->sideband)
		s->after++;
	else
		s->before++;
	return s->elem_stops; /* 1: stop */
}

static int on_sb(void *ctx, const struct cst_sideband *sb)
{
	struct seen *s = ctx;

	(void)sb;
	s->sideband++;
	return !s->elem_stops; /* 1: stop */
}

int main(int argc, char **argv)
{
	struct cst_session_opts o = {.sz = sizeof(o), .order = cst_order_time};
	struct cst_session *session = NULL;
	struct seen s = {0};
	int rc;

	if (argc != 4) {
		fprintf(stderr, "usage: time_stop PERF.DATA THREADS sb|elem\n");
		return 2;
	}
	o.threads = (unsigned)atoi(argv[2]);
	s.elem_stops = !strcmp(argv[3], "elem");
	if (cst_session_open(&session, argv[1], &o) < 0) {
		fprintf(stderr, "%s: cannot open\n", argv[1]);
		return 2;
	}
	rc = cst_session_run(session, on_elem, on_sb, &s);
	cst_session_free(session);
	printf("returned %d, %u sideband record(s), %llu element(s) before, %llu after\n", rc,
	       s.sideband, (unsigned long long)s.before, (unsigned long long)s.after);
	if (s.elem_stops)
		return rc == 1 && s.elements == 1 ? 0 : 1;
	return rc == 1 && s.sideband == 1 && s.after == 0 ? 0 : 1;
}
