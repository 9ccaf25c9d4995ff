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
	case 0x2007: {
		const char *comma = strchr(arg, ',');
		char a[64] = "", b[64] = "";

		if (!comma || (size_t)(comma - arg) >= sizeof(a) || strlen(comma + 1) >= sizeof(b)) {
			cli_error("--time %s: expected START,END", arg);
			return -1;
		}
		memcpy(a, arg, (size_t)(comma - arg));
		strcpy(b, comma + 1);
		c->t0 = 0;
		c->t1 = UINT64_MAX;
		if ((*a && cst_parse_u64(a, &c->t0) < 0) || (*b && cst_parse_u64(b, &c->t1) < 0)) {
			cli_error("--time %s: START and END are timestamps", arg);
			return -1;
		}
		c->has_time = true;
		return 1;
	}
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

int symcli_open(struct symcli *c, const char *path, struct cst_session **session,
		struct cst_symbolizer **sym)
{
	int err;

	if (trace_opts_finish(&c->topts) < 0)
		return -cste_invalid;
	/* perf.data lookups apply to symbols too */
	c->sopts.symfs = c->topts.session.symfs;
	c->sopts.buildid_dir = c->topts.session.buildid_dir;
	if (!c->sopts.vmlinux && !c->sopts.kallsyms)
		c->sopts.vmlinux = c->topts.session.kernel; /* --kernel names kernel code too */
	/* --elf names a raw dump's code too: no need to give it again as --image */
	c->topts.session.raw_elfs = (const char *const *)c->elfs;
	c->topts.session.nraw_elfs = c->nelfs;
	cli_note_input(path);
	err = cst_session_open(session, path, &c->topts.session);
	if (err < 0)
		return err;
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

bool symcli_piece_keep(const struct symcli *c, const struct cst_sym_piece *pc)
{
	const char *dso = pc->loc.dso, *base = dso ? strrchr(dso, '/') : NULL;

	if (c->ndsos && !name_in(c->dsos, c->ndsos, dso) &&
	    !name_in(c->dsos, c->ndsos, base ? base + 1 : dso))
		return false;
	return name_in(c->symbols, c->nsymbols, pc->loc.func ? pc->loc.func->name : "[unknown]");
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
		uint64_t t = c->last_ts[e->trace_id & 0x7f];

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
