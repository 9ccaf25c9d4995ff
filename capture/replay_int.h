/* A ring laid out like the kernel's mapping, fed by replay.c (a recorded stream) or
 * recapture.c (a finished perf.data) to the consumer record runs. */
#ifndef CSTRACE_REPLAY_INT_H
#define CSTRACE_REPLAY_INT_H

#include "cstrace/auxlog.h"
#include "cstrace/capture.h"

#define MAX_RINGS (CST_ETM_MAX_CPUS + 1)

struct rring {
	uint32_t idx;
	uint8_t *base;  /* user page + data area */
	uint8_t *aux;   /* NULL without AUX */
	uint64_t page, data_size, aux_size;
	/* the controls the capture's read issued, answered in order */
	struct {
		enum cst_auxlog_ctl_op op;
		int32_t result;
	} ctl[CST_AUXLOG_MAX_CTL];
	uint32_t nctl, nctl_done;
	bool ctl_mismatch;
	struct cst_auxlog_read want; /* the capture's read (data pointers cleared) */
	bool have_want;
};

/* Map a ring the way the capture had it mapped (sizes and heads as @g gives them:
 * a stream's ring, or one rebuilt from a perf.data) and hand it to consumer @c,
 * whose reads and controls go to @ops. @r owns the buffers either way. */
int cap_rring_map(struct rring *r, const struct cst_auxlog_ring *g, uint64_t page,
		  struct cst_consumer *c, const struct cst_ring_ops *ops);
/* Copy @len bytes to ring position @pos of a power-of-two area of @size bytes. */
void cap_ring_put(uint8_t *area, uint64_t size, uint64_t pos, const uint8_t *src, uint64_t len);

#endif
