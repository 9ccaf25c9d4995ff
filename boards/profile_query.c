/* Questions asked of a loaded profile: devices by base or name, the trace ID a
 * CPU's ETM gets, and the trace sources decode should assume for the board. */
#include "board_int.h"

#include <string.h>

int cst_board_device_by_base(const struct cst_board *b, uint64_t base)
{
	if (!b)
		return -cste_invalid;
	for (int i = 0; i < b->ndevices; i++)
		if (b->devices[i].base == base)
			return i;
	return -cste_not_found;
}

int cst_board_device_by_name(const struct cst_board *b, const char *name)
{
	if (!b || !name)
		return -cste_invalid;
	for (int i = 0; i < b->ndevices; i++)
		if (b->devices[i].name && !strcmp(b->devices[i].name, name))
			return i;
	return -cste_not_found;
}

/* The trace ID the kernel gives CPU @cpu's ETM under @policy; 0 if it is dynamic. */
static uint8_t policy_trace_id(enum cst_trace_id_policy policy, int cpu)
{
	switch (policy) {
	case cst_trace_id_legacy:
		return (uint8_t)(0x10 + 2 * cpu);
	case cst_trace_id_sequential:
		return (uint8_t)(0x10 + cpu);
	default:
		return 0;
	}
}

uint8_t cst_board_trace_id(const struct cst_board *b, int cpu)
{
	if (!b || cpu < 0)
		return 0;
	return policy_trace_id(b->trace_id_policy, cpu);
}

int cst_board_sources(const struct cst_board *b, const struct cst_board_sources_opts *opts,
		      struct cst_source_cfg *out, int max)
{
	struct cst_board_sources_opts o = {0};
	enum cst_trace_id_policy policy;
	int n = 0;

	if (!b || max < 0 || (!out && max > 0))
		return -cste_invalid;
	if (cst_opts_load(&o, sizeof(o), opts, "cst_board_sources_opts", NULL) < 0)
		return -cste_invalid;
	policy = o.override_policy ? o.policy : b->trace_id_policy;
	if (policy == cst_trace_id_dynamic)
		return -cste_unsupported;
	/* ETMs in CPU order, so source N is the Nth selected CPU whatever the profile's
	 * listing order. */
	for (int cpu = 0; cpu < 64; cpu++) {
		if (o.cpu_mask && !(o.cpu_mask & (1ull << cpu)))
			continue;
		for (int i = 0; i < b->ndevices; i++) {
			const struct cst_board_device *d = &b->devices[i];
			struct cst_source_cfg c;
			const struct cst_source_reg *traceid;

			if (d->type != cst_bdev_etm || d->cpu != cpu)
				continue;
			c = d->source;
			traceid = cst_source_reg_find(c.protocol, "traceid");
			if (traceid)
				*cst_source_reg_ptr(&c, traceid) = policy_trace_id(policy, cpu);
			if (n < max)
				out[n] = c;
			n++;
		}
	}
	if (!n)
		return -cste_not_found;
	if (o.with_stm) {
		for (int i = 0; i < b->ndevices; i++) {
			if (b->devices[i].type != cst_bdev_stm)
				continue;
			if (n < max)
				out[n] = b->devices[i].source;
			n++;
		}
	}
	return n;
}
