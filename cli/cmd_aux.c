/* cstrace aux: the AUX-buffer debugger. Lists every PERF_RECORD_AUX of a perf.data file
 * with its flags, the chunk holding it, wraps, gaps and lost bytes; per-CPU totals; SVG. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cstrace/auxlog.h"
#include "cstrace/capture.h"

static void aux_usage(FILE *out)
{
	fprintf(out,
		"usage: cstrace aux [--aux-size BYTES] [--timeline out.svg] [--summary] FILE\n"
		"       cstrace aux --ftrace TEXT [--aux-size BYTES] [perf.data | STREAM]\n"
		"       cstrace aux --probes\n"
		"\n"
		"FILE is a recorded AUX stream ('record --aux-log'): every ring on one time\n"
		"axis: the kernel's writes (its AUX records), the consumer's reads, the unread\n"
		"backlog each read found, wake-up to read latency, truncations, snapshot\n"
		"overwrites and LOST records; then a verdict per ring in words.\n"
		"\n"
		"Or FILE is a perf.data file (cs_etm or any AUX trace): explain its AUX records:\n"
		"one line per PERF_RECORD_AUX with its AUX offset and size, its flags in words\n"
		"(truncated, overwrite, partial, collision), the AUXTRACE chunk that holds its\n"
		"bytes, how often it wraps the AUX area, the gap since the previous record of its\n"
		"CPU and the bytes the file does not have; then a summary per CPU.\n"
		"\n"
		"  --aux-size BYTES   the AUX area size used when recording (needed to count\n"
		"                     wraps; K/M suffixes accepted)\n"
		"  --timeline FILE    write an SVG: for a stream or --ftrace, one lane per ring\n"
		"                     with the backlog against the ring size, writes, reads and\n"
		"                     losses; for perf.data, the head position and chunk sizes\n"
		"  --summary          the per-CPU summary only\n"
		"  --ftrace TEXT      the kernel's view from ftrace text (the trace file or\n"
		"                     trace-cmd report): perf_aux_output_end writes, the\n"
		"                     consumer's __auxtrace_mmap__read marks, sched wake-ups and\n"
		"                     switches on one time axis; with perf.data each write is\n"
		"                     paired with the AUX record reporting it, and writes no\n"
		"                     record reports and bytes no AUXTRACE holds are named;\n"
		"                     the consumer's reads of cstrace's consumer log (the\n"
		"                     STREAM, or record's perf.data.auxlog) join them\n"
		"  --probes           print the commands that make such a trace\n");
}

static void print_queue_name(char *buf, size_t size, int cpu)
{
	if (cpu < 0)
		snprintf(buf, size, "per-thread");
	else
		snprintf(buf, size, "cpu %d", cpu);
}

static const char *ring_name(char *buf, size_t size, const struct cst_aux_tl_ring *g)
{
	if (g->cpu != UINT32_MAX)
		snprintf(buf, size, "cpu %u", g->cpu);
	else
		snprintf(buf, size, "tid %u", g->tid);
	return buf;
}

static int timeline_svg(const void *t, FILE *f)
{
	return cst_aux_timeline_svg(t, f);
}

static int ftrace_svg(const void *ft, FILE *f)
{
	return cst_aux_ftrace_svg(ft, f);
}

static int report_svg(const void *r, FILE *f)
{
	return cst_aux_report_svg(r, f);
}

/* A recorded AUX stream: its events in time order, then a verdict per ring. */
static int aux_stream(const char *path, const char *svg, bool summary_only)
{
	struct cst_aux_timeline *t;
	struct cst_aux_tl_info info;
	char who[32], words[64], verdict[2048];
	int err;

	err = cst_aux_timeline_build(&t, path, &cli_log);
	if (err < 0) {
		if (err != -cste_format && err != -cste_no_trace && err != -cste_not_found &&
		    err != -cste_io)
			cli_error("aux: %s: %s", path, cst_strerror(err));
		return 1;
	}
	info = cst_aux_timeline_get_info(t);
	if (!info.ended)
		printf("# %s stops at offset 0x%llx without an end event: the capture did not "
		       "finish; what follows is up to there\n",
		       path, (unsigned long long)info.end_offset);
	if (!summary_only) {
		printf("%-12s %-8s %-7s %-18s %-10s %-10s %s\n", "time_s", "ring", "what",
		       "aux_offset/head", "bytes", "unread", "notes");
		for (uint64_t i = 0; i < info.nevents; i++) {
			const struct cst_aux_tl_event *e = cst_aux_timeline_event(t, i);
			const struct cst_aux_tl_ring *g = cst_aux_timeline_ring(t, e->ring);

			if (g)
				ring_name(who, sizeof(who), g);
			if (e->kind == cst_aux_tl_wake)
				printf("%-12.6f %-8s %-7s %-18s %-10s %-10s rings 0x%llx\n",
				       (double)e->time / 1e9, "-", "wake", "-", "-", "-",
				       (unsigned long long)e->ring_mask);
			else if (e->kind == cst_aux_tl_write)
				printf("%-12.6f %-8s %-7s 0x%-16llx %-10llu %-10s %s (found at %.6f)\n",
				       (double)e->time / 1e9, who, "write",
				       (unsigned long long)e->offset, (unsigned long long)e->size, "-",
				       cst_aux_flags_words(e->flags, words, sizeof(words)),
				       (double)e->found / 1e9);
			else if (e->kind == cst_aux_tl_read) {
				char note[96] = "", over[64] = "";

				if (e->latency)
					snprintf(note, sizeof(note), "%.1f us after the wake-up",
						 (double)e->latency / 1e3);
				if (e->overwritten)
					snprintf(over, sizeof(over), "%s%llu bytes overwritten before it",
						 e->latency ? ", " : "",
						 (unsigned long long)e->overwritten);
				printf("%-12.6f %-8s %-7s 0x%-16llx %-10llu %-10llu %s%s\n",
				       (double)e->time / 1e9, who, e->snapshot ? "snap" : "read",
				       (unsigned long long)e->head, (unsigned long long)e->copied,
				       (unsigned long long)e->backlog, note, over);
			}
			else
				printf("%-12.6f %-8s %-7s %-18s %-10llu %-10s records dropped from the "
				       "data ring\n",
				       (double)e->time / 1e9, who, "LOST", "-",
				       (unsigned long long)e->lost, "-");
		}
		printf("\n");
	}
	for (int r = 0; r < info.nrings; r++)
		printf("%s: %s\n", ring_name(who, sizeof(who), cst_aux_timeline_ring(t, r)),
		       cst_aux_timeline_verdict(t, r, verdict, sizeof(verdict)));
	err = svg && cli_out_write(svg, path, timeline_svg, t) < 0;
	cst_aux_timeline_free(t);
	return cli_stdout_done(err);
}

/* ftrace text, with or without the perf.data it belongs to. */
static int aux_ftrace(const char *text, const char *perf, uint64_t aux_size, bool summary_only,
		      const char *svg)
{
	struct cst_aux_report *r = NULL;
	struct cst_aux_timeline *t = NULL;
	struct cst_aux_ftrace *f;
	char a[48], b[48], side[4096];
	int err;

	/* --timeline never replaces what is read */
	cli_input(perf);
	/* cstrace's consumer log: given, or record's OUTPUT.auxlog next to the perf.data */
	if (perf && cst_auxlog_probe(perf)) {
		err = cst_aux_timeline_build(&t, perf, &cli_log);
		if (err < 0)
			return 1;
		perf = NULL;
	} else if (perf) {
		snprintf(side, sizeof(side), "%s.auxlog", perf);
		if (cst_auxlog_probe(side) && cst_aux_timeline_build(&t, side, &cli_log) == 0) {
			printf("# the consumer's reads come from %s\n", side);
			cli_input(side);
		}
	}
	if (perf) {
		err = cst_aux_report_build(&r, perf, aux_size, &cli_log);
		if (err < 0) {
			cli_error("aux: %s: %s", perf, cst_strerror(err));
			return 1;
		}
	}
	err = cst_aux_ftrace_build(&f, text, r, t, aux_size, &cli_log);
	cst_aux_timeline_free(t);
	if (err < 0) {
		cst_aux_report_free(r);
		if (err == -cste_nomem)
			cli_error("aux: %s", cst_strerror(err));
		return 1;
	}
	if (!summary_only) {
		printf("%-14s %-4s %-6s %-18s %-18s %-10s %s\n", "time_s", "cpu", "what",
		       "old_head/offset", "new_head/offset", "bytes", "notes");
		for (uint64_t i = 0; i < cst_aux_ftrace_nevents(f); i++) {
			const struct cst_aux_ft_event *e = cst_aux_ftrace_event(f, i);

			if (e->cpu >= 0)
				printf("%-14.6f %-4d ", (double)e->time / 1e9, e->cpu);
			else
				printf("%-14.6f %-4s ", (double)e->time / 1e9, "-");
			if (e->kind == cst_aux_ft_write) {
				printf("%-6s 0x%-16llx 0x%-16llx %-10llu unread %llu", "write",
				       (unsigned long long)e->old, (unsigned long long)e->head,
				       (unsigned long long)e->size, (unsigned long long)e->backlog);
				if (e->overflow)
					printf(", OVERFLOW: the unread backlog reached the ring size");
				if (r && e->rec >= 0)
					printf(", AUX record #%lld", (long long)e->rec);
				else if (r)
					printf(", NOT REPORTED: no AUX record in %s", perf);
				if (e->unheld)
					printf(", %llu bytes in no AUXTRACE record",
					       (unsigned long long)e->unheld);
			} else if (e->kind == cst_aux_ft_read) {
				char by[32];

				if (e->from_log)
					snprintf(by, sizeof(by), "consumer log");
				else
					snprintf(by, sizeof(by), "pid %u", e->pid);
				printf("%-6s 0x%-16llx 0x%-16llx %-10llu %s, ring %s%d, drained %llu "
				       "write(s)",
				       "read", (unsigned long long)e->old, (unsigned long long)e->head,
				       (unsigned long long)e->size, by,
				       e->ring_cpu < 0 ? "?" : "cpu ", e->ring_cpu < 0 ? 0 : e->ring_cpu,
				       (unsigned long long)e->drained);
				if (e->latency)
					printf(", %.1f us after the wake-up", (double)e->latency / 1e3);
			} else if (e->kind == cst_aux_ft_wake) {
				printf("%-6s %-18s %-18s %-10s %s pid %u on cpu %d", "wake", "-", "-",
				       "-", e->waking ? "sched_waking" : "sched_wakeup", e->target,
				       e->target_cpu);
			} else {
				printf("%-6s %-18s %-18s %-10s sched_switch to pid %u", "switch", "-", "-",
				       "-", e->target);
			}
			printf("\n");
		}
		printf("\n");
	}
	for (int i = 0; i < cst_aux_ftrace_nrings(f); i++) {
		const struct cst_aux_ft_ring *g = cst_aux_ftrace_ring(f, i);

		snprintf(a, sizeof(a), "%llu", (unsigned long long)g->write_bytes);
		snprintf(b, sizeof(b), "%llu", (unsigned long long)g->read_bytes);
		printf("cpu %d: kernel writes %llu (%s bytes), consumer reads %llu (%s bytes), peak "
		       "unread backlog %llu bytes at %.6f s",
		       g->cpu, (unsigned long long)g->writes, a, (unsigned long long)g->reads, b,
		       (unsigned long long)g->peak_backlog, (double)g->peak_time / 1e9);
		if (g->aux_size)
			printf(" (ring %llu bytes)", (unsigned long long)g->aux_size);
		if (g->overflows)
			printf("; %llu overflow(s), the first at %.6f s: the consumer was late",
			       (unsigned long long)g->overflows, (double)g->first_overflow_time / 1e9);
		if (g->max_latency)
			printf("; wake-up to read up to %.1f us", (double)g->max_latency / 1e3);
		if (r)
			printf("; %llu write(s) (%llu bytes) no AUX record reports; %llu bytes no "
			       "AUXTRACE record holds",
			       (unsigned long long)g->unreported,
			       (unsigned long long)g->unreported_bytes,
			       (unsigned long long)g->unheld_bytes);
		printf("\n");
		for (uint64_t k = 0; r && k < cst_aux_ftrace_nevents(f); k++) {
			const struct cst_aux_ft_event *e = cst_aux_ftrace_event(f, k);

			if (e->kind == cst_aux_ft_write && e->cpu == g->cpu && e->rec < 0)
				printf("  not reported: the write at %.6f s, heads 0x%llx -> 0x%llx "
				       "(%llu bytes), line %llu\n",
				       (double)e->time / 1e9, (unsigned long long)e->old,
				       (unsigned long long)e->head, (unsigned long long)e->size,
				       (unsigned long long)e->line);
			else if (e->kind == cst_aux_ft_write && e->cpu == g->cpu && e->unheld)
				printf("  not held: %llu bytes of the write at %.6f s, from head 0x%llx\n",
				       (unsigned long long)e->unheld, (double)e->time / 1e9,
				       (unsigned long long)e->unheld_start);
		}
	}
	err = svg && cli_out_write(svg, text, ftrace_svg, f) < 0;
	cst_aux_ftrace_free(f);
	cst_aux_report_free(r);
	return cli_stdout_done(err);
}

int cmd_aux(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"aux-size", required_argument, NULL, 's'},
		{"timeline", required_argument, NULL, 't'},
		{"summary", no_argument, NULL, 'S'},
		{"ftrace", required_argument, NULL, 'F'},
		{"probes", no_argument, NULL, 'P'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct cst_aux_report *r;
	struct cst_aux_report_info ri;
	const char *svg = NULL;
	uint64_t aux_size = 0;
	bool summary_only = false;
	const char *ftrace = NULL;
	char words[64], who[32];
	int c, err;

	optind = 1;
	while ((c = cli_getopt("aux", argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 's':
			if (cli_parse_size(optarg, &aux_size) < 0 || !aux_size ||
			    (aux_size & (aux_size - 1))) {
				cli_error("aux: --aux-size '%s': a power of two in bytes (e.g. 4M)",
					  optarg);
				return 2;
			}
			break;
		case 't':
			svg = optarg;
			break;
		case 'S':
			summary_only = true;
			break;
		case 'F':
			ftrace = optarg;
			break;
		case 'P':
			cst_aux_ftrace_probes(stdout);
			return cli_stdout_done(0);
		case 'h':
			aux_usage(stdout);
			return 0;
		default:
			return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	if (ftrace && optind >= argc - 1)
		return aux_ftrace(ftrace, optind < argc ? argv[optind] : NULL, aux_size,
				  summary_only, svg);
	if (optind != argc - 1) {
		aux_usage(stderr);
		return 2;
	}
	if (cst_auxlog_probe(argv[optind]))
		return aux_stream(argv[optind], svg, summary_only);
	err = cst_aux_report_build(&r, argv[optind], aux_size, &cli_log);
	if (err < 0) {
		cli_error("aux: %s: %s", argv[optind], cst_strerror(err));
		return 1;
	}
	ri = cst_aux_report_get_info(r);
	if (ri.incomplete)
		printf("# %s was not finished (the recorder stopped early): records up to its end\n",
		       argv[optind]);
	if (!summary_only) {
		printf("%-6s %-10s %-18s %-18s %-10s %-28s %-8s %-12s %-6s %-10s %s\n", "aux#",
		       "queue", "file_offset", "aux_offset", "size", "flags", "chunk", "chunk_file",
		       "wraps", "gap", "lost");
		for (uint64_t i = 0; i < ri.nrecs; i++) {
			const struct cst_aux_rec_info *a = cst_aux_report_rec(r, i);
			char chunk[24] = "-", cfile[24] = "-", wraps[24] = "?";

			print_queue_name(who, sizeof(who), a->cpu);
			if (a->chunk >= 0) {
				snprintf(chunk, sizeof(chunk), "%lld", (long long)a->chunk);
				snprintf(cfile, sizeof(cfile), "0x%llx",
					 (unsigned long long)cst_aux_report_chunk(r, a->chunk)->file_offset);
			}
			if (a->wraps >= 0)
				snprintf(wraps, sizeof(wraps), "%lld", (long long)a->wraps);
			printf("%-6llu %-10s 0x%-16llx 0x%-16llx %-10llu %-28s %-8s %-12s %-6s %-10lld "
			       "%llu\n",
			       (unsigned long long)a->index, who, (unsigned long long)a->file_offset,
			       (unsigned long long)a->aux_offset, (unsigned long long)a->aux_size,
			       cst_aux_flags_words(a->flags, words, sizeof(words)), chunk, cfile, wraps,
			       (long long)a->gap, (unsigned long long)a->lost);
		}
		printf("\n%-6s %-10s %-18s %-18s %-10s %s\n", "chunk#", "queue", "file_offset",
		       "aux_offset", "size", "records");
		for (uint64_t i = 0; i < ri.nchunks; i++) {
			const struct cst_aux_chunk_info *ch = cst_aux_report_chunk(r, i);

			print_queue_name(who, sizeof(who), ch->cpu);
			printf("%-6llu %-10s 0x%-16llx 0x%-16llx %-10llu %llu\n",
			       (unsigned long long)ch->index, who, (unsigned long long)ch->file_offset,
			       (unsigned long long)ch->offset, (unsigned long long)ch->size,
			       (unsigned long long)ch->records);
		}
		printf("\n");
	}
	for (int q = 0; q < ri.nqueues; q++) {
		const struct cst_aux_queue_summary *s = cst_aux_report_queue(r, q);
		char wraps[24] = "?"; /* unknown without the ring's size (--aux-size) */

		if (ri.aux_size)
			snprintf(wraps, sizeof(wraps), "%llu", (unsigned long long)s->wraps);
		print_queue_name(who, sizeof(who), s->cpu);
		printf("%s: records %llu (%llu bytes), chunks %llu (%llu bytes), truncated %llu "
		       "(empty %llu), overwrite %llu, partial %llu, collision %llu, gaps %llu "
		       "(%llu bytes), wraps %s, lost bytes %llu, lost records %llu\n",
		       who, (unsigned long long)s->records, (unsigned long long)s->record_bytes,
		       (unsigned long long)s->chunks, (unsigned long long)s->chunk_bytes,
		       (unsigned long long)s->truncated, (unsigned long long)s->empty_truncated,
		       (unsigned long long)s->overwrite, (unsigned long long)s->partial,
		       (unsigned long long)s->collision, (unsigned long long)s->gaps,
		       (unsigned long long)s->gap_bytes, wraps, (unsigned long long)s->lost_bytes,
		       (unsigned long long)s->lost_events);
	}
	if (!ri.nrecs)
		printf("no AUX records\n");
	err = svg && cli_out_write(svg, argv[optind], report_svg, r) < 0;
	cst_aux_report_free(r);
	return cli_stdout_done(err);
}
