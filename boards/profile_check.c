/* Board profiles, the checks that need the whole file: required keys, names and
 * base addresses given once, and defaults taken from other sections (an ETM's core
 * from its CPU). */
#include "profile_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct dev_name {
	const char *name;
	int idx;
	uint64_t base;
};

static int cmp_dev_name(const void *a, const void *b)
{
	const struct dev_name *x = a, *y = b;
	int c = strcmp(x->name, y->name);

	return c ? c : x->idx - y->idx;
}

/* A device defined twice, named at its second definition. Found by sorting the
 * names, not by a search per device: that was quadratic in a profile of many
 * devices (tests: resource_bounds). */
static int check_twice(struct parse *p)
{
	struct cst_board *b = p->b;
	struct dev_name *v = malloc((size_t)b->ndevices * sizeof(*v));
	int twice = -1;

	if (!v)
		return brd_fail(p, "out of memory");
	for (int i = 0; i < b->ndevices; i++)
		v[i] = (struct dev_name){b->devices[i].name, i, 0};
	qsort(v, (size_t)b->ndevices, sizeof(*v), cmp_dev_name);
	for (int i = 1; i < b->ndevices; i++)
		if (!strcmp(v[i - 1].name, v[i].name) && (twice < 0 || v[i].idx < twice))
			twice = v[i].idx;
	free(v);
	if (twice < 0)
		return 1;
	p->line = p->dev_line[twice];
	return brd_fail(p, "device '%s' is defined twice", b->devices[twice].name);
}

static int cmp_dev_base(const void *a, const void *b)
{
	const struct dev_name *x = a, *y = b;
	uint64_t bx = x->base, by = y->base;

	if (bx != by)
		return bx < by ? -1 : 1;
	return x->idx - y->idx;
}

/* Two devices at one base, named at the later one's base line; sorted, as
 * check_twice, not searched per device. */
static int check_bases(struct parse *p)
{
	struct cst_board *b = p->b;
	struct dev_name *v = malloc((size_t)b->ndevices * sizeof(*v));
	int n = 0, later = -1, earlier = -1;

	if (!v)
		return brd_fail(p, "out of memory");
	for (int i = 0; i < b->ndevices; i++)
		if (p->base_line[i])
			v[n++] = (struct dev_name){b->devices[i].name, i, b->devices[i].base};
	qsort(v, (size_t)n, sizeof(*v), cmp_dev_base);
	for (int i = 1; i < n; i++)
		if (v[i - 1].base == v[i].base && (later < 0 || v[i].idx < later)) {
			later = v[i].idx;
			earlier = v[i - 1].idx;
		}
	free(v);
	if (later < 0)
		return 1;
	p->line = p->base_line[later];
	return brd_fail(p, "base 0x%llx is already used by %s", (unsigned long long)b->devices[later].base,
		    b->devices[earlier].name);
}

int brd_profile_finish(struct parse *p)
{
	struct cst_board *b = p->b;

	if (!b->name) {
		p->line = 1;
		return brd_fail(p, "[board] has no name");
	}
	if (!b->ndevices) {
		p->line = 1;
		return brd_fail(p, "the profile lists no devices");
	}
	if (!check_twice(p) || !check_bases(p))
		return 0;
	for (int i = 0; i < b->ndevices; i++) {
		struct cst_board_device *d = &b->devices[i];
		const struct cst_core_info *core;

		p->line = p->dev_line[i];
		if (d->base == UINT64_MAX)
			return brd_fail(p, "[%s %s] has no base address", cst_bdev_type_name(d->type), d->name);
		if (!d->dt_node) {
			char node[64];

			snprintf(node, sizeof(node), "%s@%llx", cst_bdev_type_name(d->type),
				 (unsigned long long)d->base);
			if (!brd_set_str(p, (void **)&p->b->devices, &d->dt_node, node))
				return 0;
		}
		if (d->type != cst_bdev_etm)
			continue;
		if (d->cpu < 0)
			return brd_fail(p, "[etm %s] has no cpu", d->name);
		if (d->source.protocol == cst_proto_unknown)
			return brd_fail(p, "[etm %s] has no protocol (etmv3, ptm, etmv4, ete)", d->name);
		if (!d->source.core_name[0]) {
			for (int c = 0; c < b->ncpus; c++)
				if (b->cpus[c].cpu == d->cpu && b->cpus[c].core)
					snprintf(d->source.core_name, sizeof(d->source.core_name),
						 "%s", b->cpus[c].core);
		}
		if (!d->source.core_name[0])
			return brd_fail(p, "[etm %s]: no core type (core = , or a [cpu %d] section)",
				    d->name, d->cpu);
		if (cst_core_lookup(d->source.core_name, &d->source.arch, &d->source.profile) < 0)
			return brd_fail(p, "[etm %s]: core '%s' is not one cstrace knows "
				    "(expected e.g. Cortex-A53)", d->name, d->source.core_name);
		for (int r = 0; r < d->nidregs; r++)
			if (!cst_source_reg_find(d->source.protocol, d->idregs[r].name))
				return brd_fail(p, "[etm %s]: %s does not belong to protocol %s", d->name,
					    d->idregs[r].name,
					    cst_protocol_is_v4(d->source.protocol) ? "etmv4/ete"
										  : "etmv3/ptm");
		core = cst_core_find(d->source.core_name);
		if (core && core->protocol != cst_proto_unknown &&
		    core->protocol != d->source.protocol)
			return brd_fail(p, "[etm %s]: a %s traces with %s, not %s", d->name, core->name,
				    cst_protocol_name(core->protocol),
				    cst_protocol_name(d->source.protocol));
	}
	if (!b->sysfs_parent && !brd_set_str(p, NULL, &b->sysfs_parent, "/sys/devices/platform"))
		return 0;
	return 1;
}
