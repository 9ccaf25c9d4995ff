/* What `cstrace report` says besides its view (report_notes.h). */
#include "report_notes.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "cstrace/perfdata.h"

void report_print_stats(struct cst_symbolizer *sym, const struct cst_report_view *view)
{
	const struct cst_calls *calls = cst_report_view_calls(view);
	struct cst_symbolizer_stats st;
	struct cst_calls_stats cs = {0};
	struct cst_loss_totals lt;

	cst_symbolizer_get_stats(sym, &st);
	fprintf(stderr,
		"cstrace: %" PRIu64 " ranges symbolized (%" PRIu64 " from the cache), %" PRIu64
		" instructions, %" PRIu64 " without a symbol\n",
		st.ranges, st.cache_hits, st.insns, st.unknown_insns);
	if (calls && cst_calls_get_stats(calls, &cs) == 0)
		fprintf(stderr,
			"cstrace: %u threads, deepest stack %u, %" PRIu64
			" stacks emptied by lost trace, %" PRIu64 " returns to unknown callers\n",
			cs.threads, cs.max_depth, cs.gaps, cs.unknown_returns);
	if (calls && cs.filtered)
		fprintf(stderr,
			"cstrace: an address filter turned tracing off %" PRIu64
			" time(s): no trace lost there, the stacks kept\n", cs.filtered);
	if (cst_report_view_loss(view, &lt) == 0)
		fprintf(stderr,
			"cstrace: trace lost in %" PRIu64 " places, %" PRIu64 " bytes known (%" PRIu64
			" places of no count): %" PRIu64 " TRUNCATED AUX records, %" PRIu64
			" with trace the file does not hold, %" PRIu64 " overwritten, %" PRIu64
			" trace unit overflows, %" PRIu64 " resyncs; %" PRIu64 " perf records lost; %" PRIu64
			" filter gaps (not lost)\n",
			lt.places, lt.bytes, lt.unknown, lt.truncated, lt.missing, lt.overwritten,
			lt.overflows, lt.resyncs, lt.records, lt.filtered);
}

void report_tell_loss(const struct cst_report_format *format, const struct cst_report_view *view)
{
	struct cst_loss_totals lt;
	char what[512];

	if ((format->needs & cst_report_tells_loss) || cst_report_view_loss(view, &lt) < 0 ||
	    cst_loss_format_totals(&lt, what, sizeof(what)) <= 0)
		return;
	cli_error("warning: %s: counts are lower bounds (the %s format has no place to say so)",
		  what, format->name);
}

void report_meta_read(const char *trace, struct report_meta *b)
{
	struct cst_perf_reader_opts ro = {.sz = sizeof(ro)};
	struct cst_perf_reader *r = NULL;
	struct stat st;

	memset(b, 0, sizeof(*b));
	b->m.trace = trace;
	snprintf(b->version, sizeof(b->version), "cstrace " CSTRACE_VERSION);
	b->m.version = b->version;
	if (stat(trace, &st) == 0) {
		struct tm tm;

		if (localtime_r(&st.st_mtime, &tm) &&
		    strftime(b->date, sizeof(b->date), "%Y-%m-%d %H:%M:%S %z", &tm))
			b->m.date = b->date;
		if (S_ISREG(st.st_mode))
			b->m.trace_bytes = (uint64_t)st.st_size;
	}
	if (!S_ISREG(st.st_mode) || cst_perf_reader_open(&r, trace, &ro) < 0)
		return;
	const struct cst_perf_features *f = cst_perf_reader_features(r);
	size_t at = 0;

	for (uint32_t i = 0; i < f->ncmdline && at < sizeof(b->command) - 1; i++)
		at += (size_t)snprintf(b->command + at, sizeof(b->command) - at, "%s%s", i ? " " : "",
				       f->cmdline[i]);
	if (at)
		b->m.command = b->command;
	if (f->hostname) {
		snprintf(b->host, sizeof(b->host), "%s", f->hostname);
		b->m.host = b->host;
	}
	if (f->osrelease) {
		snprintf(b->kernel, sizeof(b->kernel), "%s", f->osrelease);
		b->m.kernel = b->kernel;
	}
	cst_perf_reader_free(r);
}

void report_timeline_note(const struct cst_report_view *view, const char *output)
{
	struct cst_perfetto_stats st;
	const struct cst_perfetto *t = cst_report_view_timeline(view);

	if (!t || cst_perfetto_get_stats(t, &st) < 0)
		return;
	if (st.cut)
		cli_error("note: %s: %" PRIu64 " slices, %.1f MB; left out %" PRIu64 " slices of "
			  "fewer than %" PRIu64 " instructions (%.1f MB) to stay under --max-size "
			  "(--max-size 0 keeps them)",
			  output ? output : "timeline", st.slices, (double)st.bytes / 1e6, st.cut,
			  st.cut_below, (double)st.cut_bytes / 1e6);
}

