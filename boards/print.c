/* `cstrace boards show`: everything a profile says, with the trace topology drawn as
 * a tree from each sink back to its sources. */
#include "board_int.h"

#include <stdio.h>
#include <stdlib.h>

static bool has_input(const struct cst_board *b, int dev)
{
	for (int i = 0; i < b->nlinks; i++)
		if (b->links[i].to == dev)
			return true;
	return false;
}

static bool has_output(const struct cst_board *b, int dev)
{
	for (int i = 0; i < b->nlinks; i++)
		if (b->links[i].from == dev)
			return true;
	return false;
}

/* Draw the trace paths as indented trees from each sink back to the sources:
 * "etf etf <- funnel funnel:0 <- etm etm0:0". */
static void print_upstream(FILE *out, const struct cst_board *b, int dev, int depth, bool *seen)
{
	for (int i = 0; i < b->nlinks; i++) {
		const struct cst_board_link *l = &b->links[i];
		const struct cst_board_device *from = &b->devices[l->from];

		if (l->to != dev)
			continue;
		fprintf(out, "    %*s+-[in %d]-- %s %s @ 0x%llx", depth * 4, "", l->to_port,
		       cst_bdev_type_name(from->type), from->name, (unsigned long long)from->base);
		if (from->type == cst_bdev_etm)
			fprintf(out, " (cpu%d)", from->cpu);
		/* Sinks behind a replicator share everything upstream: draw it once. */
		if (seen[l->from] && has_input(b, l->from)) {
			fprintf(out, "  (fed as drawn above)\n");
			continue;
		}
		seen[l->from] = true;
		fprintf(out, "\n");
		if (depth < 8)
			print_upstream(out, b, l->from, depth + 1, seen);
	}
}

void cst_board_print(const struct cst_board *b, FILE *out, const char *dir)
{
	bool *seen;

	fprintf(out, "%s: %s\n  profile: %s\n", b->name, b->title ? b->title : "", b->file);
	fprintf(out, "  recognised by /proc/device-tree/compatible containing one of:");
	for (int i = 0; i < b->ncompatibles; i++)
		fprintf(out, " %s", b->compatibles[i]);
	fprintf(out, "\n  trace IDs: %s\n",
	       b->trace_id_policy == cst_trace_id_legacy ?
		       "legacy, 0x10 + 2 * cpu (kernels since 6.4 allocate them and record them in perf.data)" :
	       b->trace_id_policy == cst_trace_id_sequential ? "0x10 + cpu" : "allocated at run time");
	fprintf(out, "  loses trace in CPU idle: %s\n", b->loses_context_in_idle ? "yes" : "no");
	if (b->dt_overlay)
		fprintf(out, "  device tree: overlay %s/%s needed before Linux %s\n",
		       dir, b->dt_overlay,
		       b->dt_upstream ? b->dt_upstream : "?");

	fprintf(out, "\nCPUs:\n");
	for (int i = 0; i < b->ncpus; i++)
		fprintf(out, "  cpu%-3d %-12s mpidr 0x%llx%s%s\n", b->cpus[i].cpu,
		       b->cpus[i].core ? b->cpus[i].core : "?", (unsigned long long)b->cpus[i].mpidr,
		       b->cpus[i].cluster ? "  " : "", b->cpus[i].cluster ? b->cpus[i].cluster : "");

	fprintf(out, "\nTrace sources:\n");
	for (int i = 0; i < b->ndevices; i++) {
		const struct cst_board_device *d = &b->devices[i];

		if (d->type != cst_bdev_etm && d->type != cst_bdev_stm)
			continue;
		fprintf(out, "  %-14s 0x%08llx  %-8s", d->name, (unsigned long long)d->base,
		       d->arch ? d->arch : cst_protocol_name(d->source.protocol));
		if (d->type == cst_bdev_etm)
			fprintf(out, " cpu%d %s, trace ID 0x%02x", d->cpu, d->source.core_name,
			       cst_board_trace_id(b, d->cpu));
		fprintf(out, "\n");
		for (int r = 0; r < d->nidregs; r++)
			fprintf(out, "      %-14s 0x%08x%s%s\n", d->idregs[r].name, d->idregs[r].value,
			       d->idregs[r].mask != 0xffffffffu ? " mask " : "",
			       d->idregs[r].mask != 0xffffffffu ? "(see profile)" : "");
	}

	fprintf(out, "\nLinks, sinks and CTIs:\n");
	for (int i = 0; i < b->ndevices; i++) {
		const struct cst_board_device *d = &b->devices[i];

		if (d->type == cst_bdev_etm || d->type == cst_bdev_stm)
			continue;
		fprintf(out, "  %-10s %-14s 0x%08llx", cst_bdev_type_name(d->type), d->name,
		       (unsigned long long)d->base);
		if (d->capacity)
			fprintf(out, "  %llu KiB", (unsigned long long)(d->capacity / 1024));
		if (d->perf_sink)
			fprintf(out, "  perf sink%s", d->preferred ? " (use this one)" : "");
		if (d->scatter_gather)
			fprintf(out, "  scatter-gather");
		if (d->cpu >= 0)
			fprintf(out, "  cpu%d", d->cpu);
		fprintf(out, "\n");
		if (d->note)
			fprintf(out, "             %s\n", d->note);
	}

	fprintf(out, "\nTopology (each sink, then what feeds it):\n");
	seen = calloc((size_t)b->ndevices, sizeof(*seen));
	for (int i = 0; seen && i < b->ndevices; i++) {
		const struct cst_board_device *d = &b->devices[i];

		if (d->type == cst_bdev_cti || has_output(b, i))
			continue;
		if (d->type != cst_bdev_etf && d->type != cst_bdev_etr && d->type != cst_bdev_etb &&
		    d->type != cst_bdev_tpiu)
			continue;
		fprintf(out, "  %s %s @ 0x%llx\n", cst_bdev_type_name(d->type), d->name,
		       (unsigned long long)d->base);
		print_upstream(out, b, i, 0, seen);
	}
	free(seen);

	fprintf(out, "\nKernel configuration fragment:\n");
	for (int i = 0; i < b->nkconfig; i++)
		fprintf(out, "  %s\n", b->kconfig[i]);
	if (b->nfirmware) {
		fprintf(out, "\nFirmware prerequisites:\n");
		for (int i = 0; i < b->nfirmware; i++)
			fprintf(out, "  - %s\n", b->firmware[i]);
	}
	if (b->nissues) {
		fprintf(out, "\nKnown issues:\n");
		for (int i = 0; i < b->nissues; i++) {
			const struct cst_board_issue *is = &b->issues[i];

			fprintf(out, "  %s%s%s%s\n    symptom:    %s\n    workaround: %s\n", is->id,
			       is->check ? " (checked by doctor: " : "", is->check ? is->check : "",
			       is->check ? ")" : "", is->symptom ? is->symptom : "",
			       is->workaround ? is->workaround : "");
		}
	}
}

