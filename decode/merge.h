/* Internal to decode/: runs of instruction ranges that continue one another
 * delivered as one range (cst_session_opts.merge_ranges, cst_elem_continues). */
#ifndef CSTRACE_DECODE_MERGE_H
#define CSTRACE_DECODE_MERGE_H

#include "cstrace/decode.h"

/** Sits in front of @elem_fn and @sb_fn: pass dec_merge_elem / dec_merge_sb with
 *  the struct as their context, then dec_merge_end. */
struct dec_merge {
	cst_elem_fn elem_fn;
	cst_sideband_fn sb_fn;
	void *ctx;
	struct cst_elem run; /* the run so far, while @held */
	bool held;
};

/** Joining runs joined this way again gives what joining their ranges one by one
 *  gives (whether two ranges join depends only on the end of the first and the
 *  start of the second): runs may be joined in pieces (split workers) and the
 *  pieces again. */
int dec_merge_elem(void *merge, const struct cst_elem *e);
int dec_merge_sb(void *merge, const struct cst_sideband *sb);
/** The input ended: deliver the run held. Returns 0 or @elem_fn's value. */
int dec_merge_end(struct dec_merge *m);

#endif
