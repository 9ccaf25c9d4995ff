/* Internal to symbolize/: what the coverage view reads from a sample profile. */
#ifndef CSTRACE_SYMBOLIZE_AFDO_INT_H
#define CSTRACE_SYMBOLIZE_AFDO_INT_H

#include "cstrace/symbolize.h"

/* Call @fn(ctx, first, last, count) for each range of the binary @dso (the
 * symbolizer's own string for it). Returns 0 or -cste_invalid. */
int sym_afdo_ranges(struct cst_afdo *p, const char *dso,
		    void (*fn)(void *ctx, uint64_t first, uint64_t last, uint64_t n), void *ctx);
/* The profile has ranges in @dso. */
bool sym_afdo_has(const struct cst_afdo *p, const char *dso);
struct cst_symbolizer *sym_afdo_symbolizer(struct cst_afdo *p);

#endif
