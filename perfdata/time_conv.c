/* TIME_CONV: trace timestamps (the generic counter) to perf's clock. perf record
 * copies the conversion from the event's mmap page; perf's decoders apply it to
 * ETM timestamps when the trace counts that counter (TS_SOURCE 1). */
#include "cstrace/perfdata.h"

uint64_t cst_perf_time_from_ticks(const struct cst_perf_time_conv *tc, uint64_t ticks)
{
	/* perf keeps the shift in 16 bits and the multiplier in 32: a file with
	 * wider values converts as perf converts it */
	uint16_t shift = (uint16_t)tc->time_shift;
	uint32_t mult = (uint32_t)tc->time_mult;
	uint64_t quot, rem;

	if (tc->cap_user_time_short)
		ticks = tc->time_cycles + ((ticks - tc->time_cycles) & tc->time_mask);
	/* a shift of 64 or more would be undefined in C; perf's shift is at most 31
	 * in practice (the kernel's clocksource shifts) */
	if (shift >= 64)
		return tc->time_zero;
	quot = ticks >> shift;
	rem = ticks & ((UINT64_C(1) << shift) - 1);
	return tc->time_zero + quot * mult + ((rem * mult) >> shift);
}
