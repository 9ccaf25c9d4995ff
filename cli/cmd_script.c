/* `cstrace script`: one line per taken branch (default) or per executed instruction
 * with pid/tid/cpu, in the order and with the rules of perf script --itrace=b / i1i. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "trace_opts.h"

/* The symbolized views (-F, --call-trace, --srcline, --elf ...) in script_view.c. */
int script_view_run(int argc, char **argv);

static const char script_usage[] =
	"usage: cstrace script [options] TRACE\n"
	"\n"
	"Print the trace as perf script does for cs_etm data: by default one line per\n"
	"branch ('pid/tid [cpu] from => to', like --itrace=b; 0 marks where trace starts\n"
	"or stops), or with --insn one line per executed instruction (like --itrace=i1i).\n"
	"\n"
	"options:\n"
	"  --insn               one line per instruction instead of per branch\n"
	"\n"
	"With symbols (from the trace's images, --elf files and recorded binaries):\n"
	"  --symbols            branches as symbol+offset (dso) => symbol+offset (dso)\n"
	"  --insn --disasm      instructions with symbol and disassembly\n"
	"  --srcline            add file:line      --call-trace  indented calls/returns\n"
	"  -F LIST              fields: comm,pid,tid,cpu,time,id,flags,ip,sym,symoff,dso,\n"
	"                       addr,srcline,insn,insncnt\n"
	"  --elf FILE[@ADDR], --debug-dir DIR, --kallsyms FILE, --vmlinux FILE,\n"
	"  --pid/--tid/--cpu LIST, --time START,END   (see 'cstrace script --symbols --help')\n"
	TRACE_OPTS_HELP
	"  -h, --help           this text\n";

/* What the previous element was, as perf's cs-etm tracks its prev_packet. */
enum prev_kind { prev_empty, prev_gap, prev_range };

struct script {
	FILE *f;
	bool insn;
	bool io_error;
	uint64_t lines;
	/* per trace ID, kept across fragments as perf keeps one per trace ID queue */
	struct {
		enum prev_kind kind;
		uint64_t last;   /* address of the last instruction of the previous range */
		bool taken;      /* ... and whether it was a taken branch */
	} prev[128];
};

static void put_head(struct script *s, const struct cst_elem *e)
{
	fprintf(s->f, "%7d/%-7d [%03d] ", e->pid, e->tid, e->cpu);
}

static void put_branch(struct script *s, const struct cst_elem *e, uint64_t from, uint64_t to)
{
	put_head(s, e);
	if (fprintf(s->f, "%16" PRIx64 " => %16" PRIx64 "\n", from, to) < 0)
		s->io_error = true;
	s->lines++;
}

/* Fixed-size ISAs only: T32 ranges would need the code bytes to split. */
static void put_insns(struct script *s, const struct cst_elem *e)
{
	uint32_t step = e->isa == cst_isa_t32 ? 0 : 4;

	if (!step) {
		put_head(s, e);
		fprintf(s->f, "%16" PRIx64 " (T32 range to %" PRIx64 ", %u instructions)\n",
			e->start, e->end, e->num_insns);
		s->lines++;
		return;
	}
	for (uint64_t a = e->start; a < e->end; a += step) {
		put_head(s, e);
		if (fprintf(s->f, "%16" PRIx64 "\n", a) < 0)
			s->io_error = true;
		s->lines++;
	}
}

static int on_elem(void *ctx, const struct cst_elem *e)
{
	struct script *s = ctx;
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
		s->prev[id].taken = e->last_executed && (e->last_class == cst_insn_branch ||
							 e->last_class == cst_insn_branch_indirect);
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
	return s->io_error ? -cste_io : 0;
}

int cmd_script(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"insn", no_argument, NULL, 'i'},
		{"help", no_argument, NULL, 'h'},
		TRACE_OPTS_LONG,
		{NULL, 0, NULL, 0},
	};
	static struct script s; /* large; one per process */
	struct trace_opts topts;
	struct cst_session *session = NULL;
	int opt, ret, status = 1;

	memset(&s, 0, sizeof(s));
	s.f = stdout;
	trace_opts_init(&topts);
	optind = 1;
	opterr = 0; /* unknown options belong to the symbolized view */
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		if (opt == '?') {
			trace_opts_fini(&topts);
			optind = 1;
			opterr = 1;
			return script_view_run(argc, argv);
		}
		int t = trace_opts_parse(&topts, opt, optarg);

		if (t < 0)
			goto usage_error;
		if (t > 0)
			continue;
		if (opt == 'i') {
			s.insn = true;
			continue;
		}
		if (opt == 'h') {
			fputs(script_usage, stdout);
			trace_opts_fini(&topts);
			return 0;
		}
		goto usage_error;
	}
	opterr = 1;
	if (optind != argc - 1) {
		cli_error("script: one TRACE expected\n%s", script_usage);
		goto usage_error;
	}
	if (trace_opts_finish(&topts) < 0)
		goto usage_error;
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	ret = cst_session_open(&session, argv[optind], &topts.session);
	if (ret < 0)
		goto out;
	ret = cst_session_run(session, on_elem, NULL, &s);
	fflush(stdout);
	if (s.io_error || ret < 0)
		goto out;
	status = 0;
out:
	cst_session_free(session);
	trace_opts_fini(&topts);
	return status;
usage_error:
	trace_opts_fini(&topts);
	return 2;
}
