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

int dec_merge_elem(void *merge, const struct cst_elem *e);

/** Whether a run may be held for ranges that continue it (the rule of
 *  dec_merge_elem, for callers that join runs themselves: split workers). */
bool dec_merge_can_hold(const struct cst_elem *run);
/** Fold @e into @run when it continues it (cst_elem_continues): true if it did.
 *  Joining runs joined this way again gives what joining their ranges one by one
 *  gives, so runs may be joined in pieces (on workers) and the pieces again. */
bool dec_merge_fold(struct cst_elem *run, const struct cst_elem *e);
int dec_merge_sb(void *merge, const struct cst_sideband *sb);
/** The input ended: deliver the run held. Returns 0 or @elem_fn's value. */
int dec_merge_end(struct dec_merge *m);

#endif
