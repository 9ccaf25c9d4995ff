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
	free(c->kept);
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
	int t = trace_opts_parse(&c->topts, opt, arg);

	if (t)
		return t;
	switch (opt) {
	case 0x2000:
		if (c->nelfs >= SYMCLI_MAX) {
			cli_error("--elf: at most %d files", SYMCLI_MAX);
			return -1;
		}
		c->elfs[c->nelfs++] = arg;
		return 1;
	case 0x2001:
		c->sopts.debug_dir = arg;
		return 1;
	case 0x2002:
		c->sopts.kallsyms = arg;
		return 1;
	case 0x2003:
		c->sopts.vmlinux = arg;
		return 1;
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

/* The view's callback, counting the elements it has printed (a crash on threads
 * restarts the child past them) or, in a restarted child, leaving out the output
 * of those. */
struct counted {
	cst_sym_elem_fn fn;
	void *ctx;
};

static int counted_elem(void *ctx, const struct cst_sym_elem *se)
{
	const struct counted *c = ctx;
	bool skip = trace_opts_skip(1);
	int ret;

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
	struct counted c = {fn, ctx};
	int err;

	err = cst_symbolizer_run(sym, session, counted_elem, &c);
	cli_set_quiet(false);
	if (err == -cste_crashed)
		cli_pipe_drained();
	return err;
}

int symcli_open(struct symcli *c, const char *path, struct cst_session **session,
		struct cst_symbolizer **sym)
{
	int err;

	if (trace_opts_finish(&c->topts) < 0)
		return -cste_invalid;
	/* perf.data lookups apply to symbols too */
	c->sopts.symfs = c->topts.session.symfs;
	c->sopts.buildid_dir = c->topts.session.buildid_dir;
	c->sopts.symdir = c->topts.session.symdir;
	if (!c->sopts.vmlinux && !c->sopts.kallsyms)
		c->sopts.vmlinux = c->topts.session.kernel; /* --kernel names kernel code too */
	/* --elf names a raw dump's code too: no need to give it again as --image */
	c->topts.session.raw_elfs = (const char *const *)c->elfs;
	c->topts.session.nraw_elfs = c->nelfs;
	cli_note_input(path);
	trace_opts_restarted(&c->topts);
	/* what a restarted child says before it is past what was printed, the
	 * crashed one said */
	cli_set_quiet(trace_opts_skip(0));
	cli_note_skippable();
	cli_note_threaded(c->topts.session.threads > 1);
	c->topts.session.pipe = true;
	/* symbolizing needs no range cut short */
	c->topts.session.merge_ranges = !c->decoder_ranges;
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
	for (int i = 0; i < c->nelfs; i++) {
		err = cst_symbolizer_add_elf_spec(*sym, c->elfs[i], CST_SYM_PID_GLOBAL);
		if (err < 0)
			return err;
	}
	c->sym = *sym;
	return 0;
}

static bool name_in(char *const *v, int n, const char *name)
{
	if (!n)
		return true;
	for (int i = 0; name && i < n; i++)
		if (!strcmp(v[i], name))
			return true;
	return false;
}

bool symcli_name_keep(void *ctx, const char *dso, const char *func)
{
	const struct symcli *c = ctx;
	const char *base = dso ? strrchr(dso, '/') : NULL;

	if (c->ndsos && !name_in(c->dsos, c->ndsos, dso) &&
	    !name_in(c->dsos, c->ndsos, base ? base + 1 : dso))
		return false;
	return name_in(c->symbols, c->nsymbols, func);
}

bool symcli_piece_keep(const struct symcli *c, const struct cst_sym_piece *pc)
{
	return symcli_name_keep((void *)c, pc->loc.dso,
				pc->loc.func ? pc->loc.func->name : "[unknown]");
}

const struct cst_sym_elem *symcli_pieces(struct symcli *c, const struct cst_sym_elem *se,
					 struct cst_sym_elem *copy)
{
	uint32_t n = 0, insns = 0;

	if (!symcli_piece_filters(c) || se->elem->type != cst_elem_instr_range)
		return se;
	if (CST_GROW(c->kept, c->kept_cap, (size_t)se->npieces + 1) < 0)
		return NULL;
	for (uint32_t i = 0; i < se->npieces; i++)
		if (symcli_piece_keep(c, &se->pieces[i])) {
			c->kept[n++] = se->pieces[i];
			insns += se->pieces[i].num_insns;
		}
	if (n == se->npieces)
		return se;
	if (!n)
		return NULL;
	c->kept_elem = *se->elem;
	c->kept_elem.num_insns = insns;
	*copy = *se;
	copy->elem = &c->kept_elem;
	copy->pieces = c->kept;
	copy->npieces = n;
	return copy;
}

static bool in_list(const int32_t *v, int n, int32_t x)
{
	if (!n)
		return true;
	for (int i = 0; i < n; i++)
		if (v[i] == x)
			return true;
	return false;
}

bool symcli_keep(struct symcli *c, const struct cst_sym_elem *se)
{
	const struct cst_elem *e = se->elem;

	if (e->type == cst_elem_timestamp)
		c->last_ts[e->trace_id & 0x7f] = e->timestamp;
	if (!in_list(c->pids, c->npids, se->pid) || !in_list(c->tids, c->ntids, e->tid) ||
	    !in_list(c->cpus, c->ncpus, e->cpu))
		return false;
	if (c->ncomms && !name_in(c->comms, c->ncomms,
				  cst_symbolizer_comm(c->sym, e->tid >= 0 ? e->tid : se->pid)))
		return false;
	if (c->has_time) {
		uint64_t t = c->time_ticks ? c->last_ts[e->trace_id & 0x7f] : symcli_time(c, se);

		if (t < c->t0 || t > c->t1)
			return false;
	}
	return true;
}

bool symcli_decoded(const char *trace, const struct cst_session *session)
{
	struct cst_decoder_stats st;

	if (cst_session_get_stats(session, &st) < 0)
		return true;
	if (!cli_check_decoded(trace, &st))
		return false;
	/* trace, but not one instruction: the code was nowhere to be read, and a
	 * profile or a branch list of nothing would look like a program that ran
	 * nothing */
	if (!st.instructions && st.nacc) {
		cli_error("%s: no instructions decoded: the code at the traced addresses "
			  "could not be read (%" PRIu64 " inaccessible-memory gaps); give its "
			  "binaries (--elf, --image, --symfs, --buildid-dir)",
			  trace, st.nacc);
		return false;
	}
	return true;
}
