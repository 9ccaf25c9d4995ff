/* Lookups behind `aux --ftrace`'s analysis, each in O(log n), so that a long
 * recording's hundreds of thousands of writes, reads, AUX records and AUXTRACE
 * chunks are paired in O(n log n) rather than by scanning everything per event. */
#ifndef CSTRACE_CAPTURE_AUXFTRACE_INT_H
#define CSTRACE_CAPTURE_AUXFTRACE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/capture.h"

/* A report's AUX records by (cpu, aux_offset, aux_size), each taken once. */
struct ft_recs {
	struct ft_rec { int cpu; uint64_t off, size, k; bool used; } *v;
	size_t n;
};
int cap_ft_recs_build(struct ft_recs *x, const struct cst_aux_report *r);
/** The first record (in file order) not taken yet that reports exactly this write,
 *  now taken; -1 if none. */
int64_t cap_ft_recs_take(struct ft_recs *x, int cpu, uint64_t off, uint64_t size);
void cap_ft_recs_free(struct ft_recs *x);

/* A report's AUXTRACE chunks by (cpu, offset), with the furthest end so far. */
struct ft_chunks {
	struct ft_chunk { int cpu; uint64_t start, end, reach; } *v;
	size_t n;
};
int cap_ft_chunks_build(struct ft_chunks *x, const struct cst_aux_report *r);
/** Bytes of [s, e) on @cpu that no chunk holds (overlapping chunks count twice, as
 *  bytes held). */
uint64_t cap_ft_chunks_unheld(const struct ft_chunks *x, int cpu, uint64_t s, uint64_t e);
void cap_ft_chunks_free(struct ft_chunks *x);

/* One ring's write heads in the order written. */
struct ft_heads {
	uint64_t *v;
	size_t n, cap;
	bool unsorted; /* a head went back (a new session): count by scanning */
};
int cap_ft_heads_add(struct ft_heads *h, uint64_t head);
/** Writes so far whose head lies in (old, head]. */
uint64_t cap_ft_heads_between(const struct ft_heads *h, uint64_t old, uint64_t head);

#endif
