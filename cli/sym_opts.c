/* Parsing of the symbolize options and filters shared by script and report. */
#include "sym_opts.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"


void symcli_init(struct symcli *c)
{
	memset(c, 0, sizeof(*c));
	trace_opts_init(&c->topts);
	c->sopts.sz = sizeof(c->sopts);
	c->sopts.file = cli_input_found;
	c->sopts.log = &cli_log;
}

void symcli_fini(struct symcli *c)
{
	for (int i = 0; i < c->ncomms; i++)
		free(c->comms[i]);
	for (int i = 0; i < c->ndsos; i++)
		free(c->dsos[i]);
	for (int i = 0; i < c->nsymbols; i++)
		free(c->symbols[i]);
	trace_opts_fini(&c->topts);
}

static int parse_names(const char *opt, const char *arg, char **v, int *n)
{
	const char *p = arg;

	while (*p) {
		size_t len = strcspn(p, ",");

		if (*n >= SYMCLI_MAX) {
			cli_error("%s: at most %d names", opt, SYMCLI_MAX);
			return -1;
		}
		if (len) {
			v[*n] = strndup(p, len);
			if (!v[*n]) {
				cli_error("out of memory");
				return -1;
			}
			(*n)++;
		}
		p += len + (p[len] == ',');
	}
	return 1;
}

static int parse_list(const char *opt, const char *arg, int32_t *v, int *n)
{
	char buf[1024], *tok, *save = NULL;

	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		uint64_t x;

		if (*n >= SYMCLI_MAX || cst_parse_u64(tok, &x) < 0 || x > INT32_MAX) {
			cli_error("%s: '%s' is not a number (or too many)", opt, tok);
			return -1;
		}
		v[(*n)++] = (int32_t)x;
	}
	return 1;
}

/* "S[.FFFFFFFFF]" seconds to ns. */
static int parse_seconds(const char *s, uint64_t *ns)
{
	uint64_t sec = 0, frac = 0, scale = 1000000000;
	const char *p = s;

	if (!*p)
		return -1;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (sec > (UINT64_MAX / 1000000000 - 9) / 10)
			return -1;
		sec = sec * 10 + (uint64_t)(*p - '0');
	}
	if (*p == '.') {
		if (!p[1])
			return -1;
		for (p++; *p >= '0' && *p <= '9'; p++) {
			if (scale == 1)
				return -1; /* below a nanosecond */
			scale /= 10;
			frac += (uint64_t)(*p - '0') * scale;
		}
	}
	if (*p)
		return -1;
	*ns = sec * 1000000000 + frac;
	return 0;
}

/* One bound of --time: ticks ("123t") or seconds; "" leaves @v alone. */
static int time_bound(const char *s, uint64_t *v, int *ticks)
{
	size_t n = strlen(s);
	char buf[64];

	if (!n)
		return 0;
	if (n < sizeof(buf) && s[n - 1] == 't') {
		memcpy(buf, s, n - 1);
		buf[n - 1] = 0;
		*ticks |= 1;
		return cst_parse_u64(buf, v);
	}
	*ticks |= 2;
	return parse_seconds(s, v);
}

/* --time START,END into the window, in the trace's clock when @session says it
 * has one; with no session (while parsing options) only the syntax is checked. */
static int time_window(struct symcli *c, const struct cst_session *session)
{
	const char *arg = c->time_arg, *comma = strchr(arg, ',');
	char a[64] = "", b[64] = "";
	int ticks = 0;

	if (!comma || (size_t)(comma - arg) >= sizeof(a) || strlen(comma + 1) >= sizeof(b)) {
		cli_error("--time %s: expected START,END", arg);
		return -1;
	}
	memcpy(a, arg, (size_t)(comma - arg));
	strcpy(b, comma + 1);
	c->t0 = 0;
	c->t1 = UINT64_MAX;
	if (time_bound(a, &c->t0, &ticks) < 0 || time_bound(b, &c->t1, &ticks) < 0) {
		cli_error("--time %s: START and END are seconds (1234.5678) or timestamp ticks "
			  "with a 't' suffix (5000t)", arg);
		return -1;
	}
	if (ticks == 3) {
		cli_error("--time %s: START and END must both be seconds or both ticks", arg);
		return -1;
	}
	c->time_ticks = ticks == 1;
	if (session && !c->time_ticks && !c->has_tc) {
		cli_error("--time %s: this trace's timestamps are counter ticks with no known "
			  "clock (no perf.data TIME_CONV, or an ETM whose TS_SOURCE is not 1): give "
			  "the window in ticks, as in --time 5000t,6000t", arg);
		return -1;
	}
	return 0;
}

int symcli_parse(struct symcli *c, int opt, const char *arg)
{
	const struct cli_str_opt kept[] = {
		{0x2001, &c->sopts.debug_dir},
		{0x2002, &c->sopts.kallsyms},
		{0x2003, &c->sopts.vmlinux},
	};
	int t = trace_opts_parse(&c->topts, opt, arg);

	if (t)
		return t;
	if (cli_str_opt_set(kept, sizeof(kept) / sizeof(kept[0]), opt, arg)) {
		if (opt != 0x2001) /* --kallsyms, --vmlinux: files read (cli_input) */
			cli_input(arg);
		return 1;
	}
	switch (opt) {
	case 0x2000:
		return trace_opts_add_elf(&c->topts, arg) < 0 ? -1 : 1;
	case 0x2004:
		return parse_list("--pid", arg, c->pids, &c->npids);
	case 0x2005:
		return parse_list("--tid", arg, c->tids, &c->ntids);
	case 0x2006:
		return parse_list("--cpu", arg, c->cpus, &c->ncpus);
	case 0x2007:
		/* checked now, resolved when the trace says what its clock is */
		c->time_arg = arg;
		c->has_time = true;
		return time_window(c, NULL) < 0 ? -1 : 1;
	case 0x2008:
		return parse_names("--comm", arg, c->comms, &c->ncomms);
	case 0x2009:
		return parse_names("--dsos", arg, c->dsos, &c->ndsos);
	case 0x200a:
		return parse_names("--symbols", arg, c->symbols, &c->nsymbols);
	default:
		return 0;
	}
}

/* The verb's options (one per process): symcli_run notes what the trace holds */
static struct symcli *run_cli;

/* The view's callback, counting the elements it has printed (a crash on threads
 * restarts the child past them) or, in a restarted child, leaving out the output
 * of those. */
struct counted {
	cst_sym_elem_fn fn;
	void *ctx;
	struct symcli *cli;        /* what the trace holds is noted here */
};

/* @v (a few distinct values) holds @x: kept to name what a filter could take. */
static void seen(int32_t *v, int *n, int cap, int32_t x)
{
	if (x < 0 || (*n && v[*n - 1] == x))
		return;
	for (int i = 0; i < *n; i++)
		if (v[i] == x)
			return;
	if (*n < cap)
		v[(*n)++] = x;
}

static int counted_elem(void *ctx, const struct cst_sym_elem *se)
{
	const struct counted *c = ctx;
	bool skip = trace_opts_skip(1);
	int ret;

	if (c->cli && se->elem->type == cst_elem_instr_range) {
		struct symcli *s = c->cli;

		seen(s->seen_pids.v, &s->seen_pids.n, 16, se->pid);
		seen(s->seen_tids.v, &s->seen_tids.n, 16, se->elem->tid);
		seen(s->seen_cpus.v, &s->seen_cpus.n, 16, se->elem->cpu);
	}

	cli_set_quiet(skip);
	ret = c->fn(c->ctx, se);
	cli_set_quiet(trace_opts_skip(0));
	if (!skip)
		cli_note_printed(1);
	return ret;
}

int symcli_run(struct cst_symbolizer *sym, struct cst_session *session, cst_sym_elem_fn fn,
	       void *ctx)
{
	struct counted c = {fn, ctx, run_cli};
	int err;

	err = cst_symbolizer_run(sym, session, counted_elem, &c);
	cli_set_quiet(false);
	if (err == -cste_crashed)
		cli_pipe_drained();
	/* at 100 %, then out of the way of what the verb writes */
	err < 0 ? cli_progress_end() : cli_progress_finish();
	return err;
}

/* The filters as the library's views take them. */
static void symcli_filter(struct symcli *c)
{
	c->filter = (struct cst_sym_filter_opts){
		.sz = sizeof(c->filter),
		.pids = c->pids,
		.tids = c->tids,
		.cpus = c->cpus,
		.comms = (const char *const *)c->comms,
		.dsos = (const char *const *)c->dsos,
		.symbols = (const char *const *)c->symbols,
		.time_conv = c->has_tc ? &c->tc : NULL,
		.npids = (uint32_t)c->npids,
		.ntids = (uint32_t)c->ntids,
		.ncpus = (uint32_t)c->ncpus,
		.ncomms = (uint32_t)c->ncomms,
		.ndsos = (uint32_t)c->ndsos,
		.nsymbols = (uint32_t)c->nsymbols,
		.t0 = c->t0,
		.t1 = c->t1,
		.window = c->has_time,
		.window_ticks = c->time_ticks,
	};
}

int symcli_open(struct symcli *c, const char *path, struct cst_session **session,
		struct cst_symbolizer **sym)
{
	int err;

	run_cli = c;
	if (trace_opts_finish(&c->topts) < 0)
		return -cste_invalid;
	/* perf.data lookups apply to symbols too */
	c->sopts.symfs = c->topts.session.symfs;
	c->sopts.buildid_dir = c->topts.session.buildid_dir;
	c->sopts.symdir = c->topts.session.symdir;
	if (!c->sopts.vmlinux && !c->sopts.kallsyms)
		c->sopts.vmlinux = c->topts.session.kernel; /* --kernel names kernel code too */
	cli_note_input(path);
	trace_opts_restarted(&c->topts);
	/* what a restarted child says before it is past what was printed, the
	 * crashed one said */
	cli_set_quiet(trace_opts_skip(0));
	cli_note_skippable();
	cli_note_threaded(c->topts.session.threads > 1);
	c->topts.session.pipe = true;
	/* symbolizing needs no range cut short, unless the view counts them */
	c->topts.session.merge_ranges = !c->keep_ranges;
	err = cli_session_open(session, path, &c->topts.session);
	if (err < 0)
		return err;
	c->has_tc = cst_session_time_conv(*session, &c->tc);
	if (c->has_time && time_window(c, *session) < 0)
		return -cste_invalid;
	err = cst_symbolizer_alloc(sym, &c->sopts);
	if (err < 0) {
		cli_error("cannot set up symbols: %s", cst_strerror(err));
		return err;
	}
	for (int i = 0; i < c->topts.session.nraw_elfs; i++) {
		err = cst_symbolizer_add_elf_spec(*sym, c->topts.elfs[i], CST_SYM_PID_GLOBAL);
		if (err < 0)
			return err;
	}
	symcli_filter(c);
	return 0;
}

bool symcli_decoded(const char *trace, const struct cst_session *session)
{
	struct cst_decoder_stats st;

	if (cst_session_get_stats(session, &st) < 0)
		return true;
	return cli_check_decoded(trace, &st);
}

bool symcli_done(const char *trace, const struct cst_session *session, int err)
{
	if (err >= 0)
		return symcli_decoded(trace, session);
	/* no trace: the decoder has said why, with the file */
	if (err != -cste_no_trace)
		cli_error("%s: %s", trace, cst_strerror(err));
	return false;
}

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
