/* The registry of report formats: one row per format (its name, its line of
 * help, what it is written from, its writer), looked up by name. */
#include "report_view.h"

#include <string.h>

/* short names for the table's needs column */
enum {
	calls = cst_report_needs_calls,
	profile = cst_report_needs_profile,
	loss = cst_report_tells_loss,
};

/* Formats that say where trace was lost carry it in a comment, a banner or
 * instants; the others have nowhere to say it that their readers accept
 * (folded stacks, AutoFDO's and llvm-profgen's inputs, lcov tracefiles, CSV,
 * JSON rows), and the caller says it instead. */
static const struct cst_report_format formats[] = {
	{"text", "text (default; sized to the terminal)", loss, sym_report_write_text},
	{"json", "json", 0, sym_report_write_json},
	{"csv", "csv", 0, sym_report_write_csv},
	{"folded", "folded (one line per call stack: flamegraph.pl's input)", calls,
	 sym_report_write_folded},
	{"flamegraph", "flamegraph (an interactive SVG: hover, click to zoom, search)",
	 calls | loss, sym_report_write_flamegraph},
	{"perfetto", "perfetto (a timeline of calls per thread for ui.perfetto.dev)",
	 cst_report_needs_timeline | loss, sym_report_write_perfetto},
	{"autofdo", "autofdo (AutoFDO text profile, as simpleperf inject writes)",
	 profile | cst_report_needs_ranges, sym_report_write_autofdo},
	{"profgen", "profgen (llvm-profgen's unsymbolized profile of --dso)",
	 profile | cst_report_needs_dso, sym_report_write_profgen},
	{"llvm-sample",
	 "llvm-sample (LLVM's sample profile text of --dso, as\n"
	 "llvm-profgen makes it: clang -fprofile-sample-use reads it)",
	 profile | cst_report_needs_dso | loss, sym_report_write_llvm_sample},
	{"lcov", "lcov (line coverage for genhtml)", profile, sym_report_write_lcov},
	{"coverage", "coverage (per-file table)", profile | loss, sym_report_write_coverage},
	{"html", "html (one page: functions, call graph, flame graph, coverage)",
	 calls | profile | loss, sym_report_write_html},
};

#define NFORMATS (sizeof(formats) / sizeof(formats[0]))

size_t cst_report_format_all(const struct cst_report_format **out)
{
	if (out)
		*out = formats;
	return NFORMATS;
}

const struct cst_report_format *cst_report_format_find(const char *name)
{
	for (size_t i = 0; name && i < NFORMATS; i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

int cst_report_format_names(char *buf, size_t size)
{
	size_t n = 0;

	for (size_t i = 0; i < NFORMATS; i++) {
		const char *sep = !i ? "" : i + 1 < NFORMATS ? ", " : " or ";
		int m = snprintf(n < size ? buf + n : NULL, n < size ? size - n : 0, "%s%s", sep,
				 formats[i].name);

		if (m < 0)
			return -cste_invalid;
		n += (size_t)m;
	}
	if (!NFORMATS && size)
		*buf = '\0';
	return (int)n;
}
