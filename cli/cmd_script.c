/* `cstrace script`: the symbolized views by default (script_view.c); with --raw,
 * perf's address-only samples, in the order and with the rules of perf script
 * --itrace=b / i1i, for line-by-line comparison with perf. */
#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cstrace/symbolize.h"
#include "trace_opts.h"
#include "verb.h"

/* The symbolized views (-F, --call-trace, --srcline, --elf ...) in script_view.c. */
int script_view_run(int argc, char **argv);

static const char script_usage[] =
	"usage: cstrace script --raw [--insn] [options] [TRACE]\n"
	"\n"
	"Print the trace as perf script prints cs_etm samples, addresses only: one line\n"
	"per branch ('pid/tid [cpu] from => to', like --itrace=b; 0 marks where trace\n"
	"starts or stops), or with --insn one line per executed instruction (like\n"
	"--itrace=i1i). Without --raw, 'cstrace script' prints symbolized views (see\n"
	"'cstrace script --help').\n"
	"\n"
	"options:\n"
	"  --raw                perf's address-only samples (this mode)\n"
	"  --insn               one line per instruction instead of per branch\n"
	TRACE_OPTS_ELF_HELP
	VERB_INPUT_HELP TRACE_OPTS_HELP
	"  -h, --help           this text\n";

/* What the previous element was, as perf's cs-etm tracks its prev_packet. */
enum prev_kind { prev_empty, prev_gap, prev_range };

struct script {
	FILE *f;
	bool insn;
	int io_errno; /* a write failed (cli_write_failed) */
	bool t32_warned;
	bool quiet; /* a restarted child, on an element printed already */
	uint64_t lines;
	/* --insn: the code of mixed 16/32-bit T32 ranges, to split them */
	struct cst_symbolizer *sym;
	struct trace_opts *topts; /* --elf goes there */
	/* per trace ID, kept across fragments as perf keeps one per trace ID queue */
	struct {
		enum prev_kind kind;
		uint64_t last;   /* address of the last instruction of the previous range */
		bool taken;      /* ... and whether it was a taken branch */
	} prev[128];
	struct cst_line line; /* built without printf: one line per branch or instruction */
};

/* "%7d/%-7d [%03d] ", as perf script prints pid/tid and cpu */
static void put_head(struct script *s, const struct cst_elem *e)
{
	struct cst_line *l = &s->line;

	cst_line_reset(l);
	cst_line_dec(l, e->pid, 7, 0);
	cst_line_char(l, '/');
	cst_line_dec(l, e->tid, -7, 0);
	cst_line_str(l, " [", 0);
	cst_line_dec(l, e->cpu, 3, 1);
	cst_line_str(l, "] ", 0);
}

static void end_line(struct script *s)
{
	cst_line_end(&s->line);
	if (s->quiet)
		return;
	if (fwrite_unlocked(s->line.b, 1, s->line.n, s->f) != s->line.n)
		cli_write_failed(&s->io_errno);
	s->lines++;
}

static void put_branch(struct script *s, const struct cst_elem *e, uint64_t from, uint64_t to)
{
	put_head(s, e);
	cst_line_hex(&s->line, from, 16, 0, 0);
	cst_line_str(&s->line, " => ", 0);
	cst_line_hex(&s->line, to, 16, 0, 0);
	end_line(s);
}

static int on_sideband(void *ctx, const struct cst_sideband *sb)
{
	struct script *s = ctx;

	/* the code map only matters where instructions are split */
	return s->sym ? cst_symbolizer_add_sideband(s->sym, sb) : 0;
}

static void put_addr(struct script *s, const struct cst_elem *e, uint64_t a)
{
	put_head(s, e);
	cst_line_hex(&s->line, a, 16, 0, 0);
	end_line(s);
}

/* One line per instruction. A32/A64 are 4 bytes; T32 is 2 or 4, known from the byte
 * length when all are one size, else from each first halfword in the code. */
static void put_insns(struct script *s, const struct cst_elem *e)
{
	uint64_t len = e->end - e->start, a;

	if (e->isa != cst_isa_t32 || len == 4ull * e->num_insns) {
		for (a = e->start; a < e->end; a += 4)
			put_addr(s, e, a);
		return;
	}
	if (len == 2ull * e->num_insns) {
		for (a = e->start; a < e->end; a += 2)
			put_addr(s, e, a);
		return;
	}
	for (a = e->start; a < e->end;) {
		uint8_t hw[2];

		if (cst_symbolizer_read_code(s->sym, e->pid, a, hw, sizeof(hw)) < 0) {
			if (!s->t32_warned)
				cli_error("warning: T32 code at 0x%" PRIx64 " cannot be read: its range "
					  "is printed as one line",
					  a);
			s->t32_warned = true;
			put_head(s, e);
			cst_line_hex(&s->line, a, 16, 0, 0);
			cst_line_str(&s->line, " (T32 range to ", 0);
			cst_line_hex(&s->line, e->end, 0, 0, 0);
			cst_line_str(&s->line, ", ", 0);
			cst_line_udec(&s->line, e->num_insns, 0);
			cst_line_str(&s->line, " instructions)", 0);
			end_line(s);
			return;
		}
		put_addr(s, e, a);
		a += cst_t32_insn_size(cst_le16(hw));
	}
}

static int sample_elem(struct script *s, const struct cst_elem *e);

/* Each element's lines are written under the stream's lock and counted: a crash on
 * a decoding thread flushes whole elements only, and a child restarted on one
 * thread leaves out the lines of those (cli_note_threaded). */
static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct script *s = ctx;
	bool skip = trace_opts_note_elem(e);
	int ret;

	flockfile(s->f);
	s->quiet = skip;
	ret = sample_elem(s, e);
	s->quiet = false;
	if (!skip)
		cli_note_printed(1);
	funlockfile(s->f);
	return ret;
}

static int sample_elem(struct script *s, const struct cst_elem *e)
{
	uint8_t id = e->trace_id & 0x7f;

	switch (e->type) {
	case cst_elem_instr_range:
		if (s->insn) {
			put_insns(s, e);
		} else if (s->prev[id].kind == prev_gap) {
			put_branch(s, e, 0, e->start);
		} else if (s->prev[id].kind == prev_range && s->prev[id].taken) {
			put_branch(s, e, s->prev[id].last, e->start);
		}
		s->prev[id].kind = prev_range;
		s->prev[id].last = e->end - (e->last_size ? e->last_size : 4);
		s->prev[id].taken = cst_elem_taken_branch(e);
		break;
	case cst_elem_no_sync:
	case cst_elem_trace_on:
		/* a discontinuity: perf flushes a branch from the last range to 0. The end
		 * of a fragment is not one: its last range waits for the next fragment. */
		if (!s->insn && s->prev[id].kind == prev_range)
			put_branch(s, e, s->prev[id].last, 0);
		s->prev[id].kind = prev_gap;
		break;
	case cst_elem_exception:
		/* perf forces the previous range to count as a taken branch */
		if (s->prev[id].kind == prev_range)
			s->prev[id].taken = true;
		break;
	default:
		break;
	}
	return s->io_errno ? -cste_io : 0;
}

/* --raw anywhere before a "--" selects perf's address-only samples. */
static bool wants_raw(int argc, char **argv)
{
	for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
		if (!strcmp(argv[i], "--raw"))
			return true;
	return false;
}

/* --raw selects this mode; --insn one line per instruction. */
static int raw_option(void *ctx, int opt, const char *arg)
{
	struct script *s = ctx;

	if (opt == 'r')
		return 0;
	if (opt == 'I') {
		s->insn = true;
		return 0;
	}
	if (opt == 0x2000)
		return trace_opts_add_elf(s->topts, arg);
	return -1;
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"raw", no_argument, NULL, 'r'},
		{"insn", no_argument, NULL, 'I'},
		TRACE_OPTS_ELF_LONG,
		VERB_LONG_END,
	};
	struct script s;
	struct trace_opts topts;
	struct cst_session *session = NULL;
	const char *trace;
	enum verb_parsed parsed;
	int ret, status = 1;

	if (!wants_raw(argc, argv))
		return script_view_run(argc, argv);
	memset(&s, 0, sizeof(s));
	s.f = stdout;
	s.topts = &topts;
	trace_opts_init(&topts);
	parsed = verb_parse(&(struct verb){"script", script_usage, "", longopts, raw_option, &s},
			    argc, argv, &topts, NULL, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	cli_out_buffer(stdout);
	/* samples stream out as they come: a decoder crash can be skipped. With
	 * threads, a perf.data decodes beside the printing (the pipe). */
	topts.session.pipe = true;
	/* A run of ranges that continue one another holds no taken branch but its
	 * last, so perf's branch samples are the same from the joined range; with
	 * --insn, a joined T32 range that cannot be read would print as one line. */
	topts.session.merge_ranges = !s.insn;
	cli_progress_off(stdout); /* its lines to a terminal: no progress over them */
	ret = trace_opts_open(&topts, trace, stdout, &session);
	if (ret < 0)
		goto out;
	cli_note_threaded(topts.session.threads > 1);
	if (s.insn) {
		struct cst_symbolizer_opts so = {.sz = sizeof(so), .file = cli_input_found,
						 .symfs = topts.session.symfs,
						 .buildid_dir = topts.session.buildid_dir,
						 .no_dwarf = true};
		const struct cst_trace *desc = cst_session_trace(session);

		ret = cst_symbolizer_alloc(&s.sym, &so);
		if (!ret && desc)
			ret = cst_symbolizer_add_trace_images(s.sym, desc);
		for (int i = 0; !ret && i < topts.session.nraw_elfs; i++)
			ret = cst_symbolizer_add_elf_spec(s.sym, topts.elfs[i], CST_SYM_PID_GLOBAL);
		if (ret < 0) {
			cli_error("script: %s", cst_strerror(ret));
			goto out;
		}
	}
	ret = cst_session_run(session, on_elem, on_sideband, &s);
	if (ret == -cste_crashed)
		cli_pipe_drained();
	ret < 0 ? cli_progress_end() : cli_progress_finish();
	if (!cli_flush_output(stdout, NULL, s.io_errno))
		goto out;
	if (ret < 0 || !symcli_decoded(trace, session))
		goto out;
	status = 0;
out:
	cst_symbolizer_free(s.sym);
	cst_session_free(session);
	trace_opts_fini(&topts);
	return status;
}
