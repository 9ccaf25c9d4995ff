/* What a symbolized run that printed nothing says: each filter given, with what
 * the trace would have matched, and where the instructions went. */
#include "sym_opts.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void list_ids(const char *opt, const int32_t *v, int n)
{
	char buf[200];
	size_t at = 0;

	for (int i = 0; i < n && at < sizeof(buf) - 16; i++)
		at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%d", i ? "," : "", v[i]);
	if (n)
		cli_error("note: %s matched nothing; the trace has %s%s", opt, buf,
			  n >= 16 ? ",..." : "");
	else
		cli_error("note: %s matched nothing; the trace says none", opt);
}

static const char *dso_base(const char *p)
{
	return p ? cst_path_base(p) : "?";
}

void symcli_explain(const struct symcli *c, const struct cst_symbolizer *sym, uint64_t kept)
{
	struct cst_symbolizer_stats st;
	struct cst_sym_dso_count d[8];
	int nd = cst_symbolizer_dso_counts(sym, d, 8);
	char buf[400];
	size_t at = 0;

	if (cst_symbolizer_get_stats(sym, &st) < 0 || !st.insns)
		return;
	if (!kept) {
		/* every filter given, with what the trace would have matched */
		if (c->npids)
			list_ids("--pid", c->seen_pids.v, c->seen_pids.n);
		if (c->ntids)
			list_ids("--tid", c->seen_tids.v, c->seen_tids.n);
		if (c->ncpus)
			list_ids("--cpu", c->seen_cpus.v, c->seen_cpus.n);
		if (c->ncomms) {
			int32_t tid;
			const char *name;

			/* each name once, with its first thread and how many more */
			for (size_t i = 0; (name = cst_symbolizer_comm_at(sym, i, &tid)) &&
					   at < sizeof(buf) - 40; i++) {
				const char *other;
				int32_t t2;
				size_t same = 0, j;

				for (j = 0; j < i && strcmp(cst_symbolizer_comm_at(sym, j, &t2), name); j++)
					;
				if (j < i)
					continue;
				for (j = i + 1; (other = cst_symbolizer_comm_at(sym, j, &t2)); j++)
					same += !strcmp(other, name);
				at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s (tid %d%s)",
						       at ? ", " : "", name, tid,
						       same ? " and others" : "");
			}
			cli_error("note: --comm matched no thread; %s%s", at ? "the trace's threads: " : "",
				  at ? buf : "the trace names none (no COMM records)");
		}
		at = 0;
		for (int i = 0; i < nd && at < sizeof(buf) - 40; i++)
			at += (size_t)snprintf(buf + at, sizeof(buf) - at, "%s%s", i ? ", " : "",
					       dso_base(d[i].dso));
		if (c->ndsos)
			cli_error("note: --dsos matched no binary; instructions ran in %s", buf);
		if (c->nsymbols)
			cli_error("note: --symbols matched no function that ran (in %s); "
				  "'cstrace report' lists them", buf);
		if (c->has_time)
			cli_error("note: --time %s holds no trace%s", c->time_arg,
				  c->has_tc ? "" : " (its timestamps are ticks: give them with 't')");
		return;
	}
	/* most of it without names: say where, and what would name it */
	if (st.unknown_insns * 2 < st.insns)
		return;
	for (int i = 0; i < nd; i++) {
		const char *what = d[i].kind == cst_sym_dso_bytes
					   ? "a memory dump, bytes only: give the program with "
					     "--elf FILE (or FILE@ADDR where it was loaded)"
				   : d[i].kind == cst_sym_dso_missing
					   ? "not found: give --symfs, --symdir or --buildid-dir "
					     "(see the warning above)"
				   : d[i].kind == cst_sym_dso_none
					   ? "addresses in no binary: give the program with "
					     "--elf FILE[@ADDR]"
					   : "no symbols there: the unstripped binary, or its "
					     "debug file with --debug-dir";

		if (d[i].unnamed * 10 < st.insns)
			continue;
		cli_error("note: %.0f%% of the instructions ran in %s without a function name (%s)",
			  100.0 * (double)d[i].unnamed / (double)st.insns, dso_base(d[i].dso), what);
	}
}
