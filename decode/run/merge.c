/* Runs of ranges delivered as one (run.h). A range that can go on is held
 * until the next element shows whether it does; one that cannot (it ends in a
 * branch or a waypoint) goes out at once, so that most ranges of ETMv4 trace
 * pass straight through. */
#include "run.h"

#include <stdint.h>

/* Whether to hold @run for ranges that may continue it; a run near the count's
 * limit goes out instead. (Joining in pieces gives what
 * joining one by one does short of that limit: 2^31 instructions without a
 * branch, 8 GiB of code, are never met.) */
static bool can_hold(const struct cst_elem *run)
{
	return cst_elem_can_continue(run) && run->num_insns < UINT32_MAX / 2;
}

/* Fold @e into @run when it continues it (cst_elem_continues): true if it did.
 * The run's `joined` counts the ranges it stands for. */
static bool fold(struct cst_elem *run, const struct cst_elem *e)
{
	if (!cst_elem_continues(run, e))
		return false;
	run->end = e->end;
	run->num_insns += e->num_insns;
	run->joined += e->joined + 1;
	run->last_class = e->last_class;
	run->last_subclass = e->last_subclass;
	run->last_size = e->last_size;
	run->last_executed = e->last_executed;
	return true;
}

static int deliver_run(struct dec_merge *m)
{
	m->held = false;
	return m->elem_fn ? m->elem_fn(m->ctx, &m->run) : 0;
}

int dec_merge_elem(void *merge, const struct cst_elem *e)
{
	struct dec_merge *m = merge;
	int ret;

	if (m->held) {
		if (fold(&m->run, e))
			return can_hold(&m->run) ? 0 : deliver_run(m);
		if ((ret = deliver_run(m)) != 0)
			return ret;
	}
	if (can_hold(e)) {
		m->run = *e;
		m->run.ocsd = NULL; /* OpenCSD's element lives as long as this call */
		m->held = true;
		return 0;
	}
	return m->elem_fn ? m->elem_fn(m->ctx, e) : 0;
}

int dec_merge_sb(void *merge, const struct cst_sideband *sb)
{
	struct dec_merge *m = merge;
	int ret;

	if (m->held && (ret = deliver_run(m)) != 0)
		return ret;
	return m->sb_fn ? m->sb_fn(m->ctx, sb) : 0;
}

int dec_merge_end(struct dec_merge *m)
{
	return m->held ? deliver_run(m) : 0;
}
