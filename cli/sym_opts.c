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

/* The end of a run: a crash on threads, progress at 100 %. */
static int run_done(int err)
{
	cli_set_quiet(false);
	if (err == -cste_crashed)
		cli_pipe_drained();
	/* at 100 %, then out of the way of what the verb writes */
	err < 0 ? cli_progress_end() : cli_progress_finish();
	return err;
}

int symcli_run(struct cst_symbolizer *sym, struct cst_session *session, cst_sym_elem_fn fn,
	       void *ctx)
{
	struct counted c = {fn, ctx, run_cli};

	return run_done(cst_symbolizer_run(sym, session, counted_elem, &c));
}

/* A block of what views made on the decoding threads: counted as the elements
 * it stands for, as counted_elem counts those given here (a restarted child
 * leaves them out), its bytes to @write (NULL: none). */
struct counted_blocks {
	cst_script_write_fn write;
	void *ctx;
};

static int counted_block(void *ctx, const char *bytes, size_t len, uint64_t nelems,
			 uint64_t offset, bool has_offset)
{
	const struct counted_blocks *b = ctx;

	(void)offset;
	(void)has_offset;
	if (trace_opts_skip(nelems))
		return 0;
	if (len && b->write && b->write(b->ctx, bytes, len) < 0)
		return -cste_io;
	cli_note_printed(nelems);
	return 0;
}

int symcli_run_pscript(struct cst_session *session, struct cst_pscript *p,
		       cst_script_write_fn write, void *write_ctx)
{
	struct counted c = {cst_pscript_add, p, run_cli};
	struct counted_blocks b = {write, write_ctx};

	return run_done(cst_pscript_run(p, session, counted_elem, &c, counted_block, &b));
}

int symcli_run_script(struct cst_session *session, struct cst_script *s,
		      cst_script_write_fn write, void *write_ctx)
{
	struct counted c = {cst_script_add, s, run_cli};
	struct counted_blocks b = {write, write_ctx};

	return run_done(cst_script_run(s, session, counted_elem, &c, counted_block, &b));
}

void symcli_say_call_blocks(const struct cst_calls *calls)
{
	struct cst_calls_stats st;

	if (calls && cst_calls_get_stats(calls, &st) == 0)
		cst_logf(&cli_log, cst_log_debug,
			 "call views: %" PRIu64 " blocks from the decoding threads taken, %" PRIu64
			 " refused", st.blocks_taken, st.blocks_refused);
}

int symcli_run_report(struct cst_session *session, struct cst_report_view *v)
{
	struct counted c = {cst_report_view_add, v, run_cli};
	struct counted_blocks b = {NULL, NULL};

	return run_done(cst_report_view_run(v, session, counted_elem, &c, counted_block, &b));
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
