/* The `cstrace script` views over the symbolized stream: one line per taken branch,
 * per instruction with disassembly, or an indented call trace, with perf-like -F. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cstrace/symbolize.h"
#include "sym_opts.h"
#include "verb.h"
#include "trace_opts.h"


int script_view_run(int argc, char **argv);

enum field {
	f_comm = 1 << 0,
	f_pid = 1 << 1,
	f_tid = 1 << 2,
	f_cpu = 1 << 3,
	f_time = 1 << 4,
	f_id = 1 << 5,
	f_flags = 1 << 6,
	f_ip = 1 << 7,
	f_sym = 1 << 8,
	f_symoff = 1 << 9,
	f_dso = 1 << 10,
	f_addr = 1 << 11,
	f_srcline = 1 << 12,
	f_insn = 1 << 13,
	f_insncnt = 1 << 14,
};

static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{"comm", f_comm},   {"pid", f_pid},   {"tid", f_tid},     {"cpu", f_cpu},
	{"time", f_time},   {"id", f_id},     {"flags", f_flags}, {"ip", f_ip},
	{"sym", f_sym},     {"symoff", f_symoff}, {"dso", f_dso}, {"addr", f_addr},
	{"srcline", f_srcline}, {"insn", f_insn}, {"insncnt", f_insncnt},
};

enum mode { mode_branch, mode_insn, mode_calls };

/* Formatted locations by address: a trace runs the same few thousand branches
 * again and again (loops), and formatting "addr sym+off (dso)" was most of the
 * cost of a line. A location prints the same while its lookup gives the same
 * answer (the symbolizer's strings stay put while it lives). */
#define LOC_MEMO 1024
#define LOC_BYTES 232
struct loc_memo {
	uint64_t addr, func_offset, dso_offset;
	const struct cst_sym_func *func;
	const char *dso, *file;
	int line;
	bool valid;
	uint8_t len;
	char b[LOC_BYTES];
};

/* The last line's head, which the next line repeats until time or thread moves. */
struct head_memo {
	int32_t pid, tid, cpu;
	uint8_t trace_id;
	uint64_t time;
	const char *comm;
	bool valid;
	uint8_t len;
	char b[LOC_BYTES];
};

struct script {
	struct symcli *cli;
	struct cst_symbolizer *sym;
	FILE *f;
	enum mode mode;
	unsigned fields;
	struct cst_flow *flow;
	struct cst_calls *calls;
	int io_errno; /* a write failed (cli_write_failed) */
	bool ns;      /* --ns: times to the nanosecond */
	/* lengths of the symbolizer's names by where they are (they stay put and
	 * unchanged while it lives): each line prints a few, most of them again */
	struct {
		const char *p;
		size_t n;
	} lens[256];
	struct cst_line line; /* the line being built */
	struct loc_memo *memo; /* LOC_MEMO of them */
	struct head_memo head;
};

static const char script_usage[] =
	"usage: cstrace script [options] TRACE\n"
	"\n"
	"Print the decoded trace with symbols: by default one line per taken branch\n"
	"(from -> to, each as symbol+offset and binary). '--raw' prints perf's\n"
	"address-only samples instead (see 'cstrace script --raw --help').\n"
	"\n"
	"options:\n"
	"  --raw                perf script's address-only samples (--itrace=b / i1i)\n"
	"  --symbols            the default branch view (kept for scripts); --symbols=LIST\n"
	"                       keeps branches from and instructions in those functions\n"
	"  --insn               one line per executed instruction, with disassembly\n"
	"  --disasm             (with --insn) the default: disassembly\n"
	"  --srcline            add the source file:line\n"
	"  --call-trace         each function as it is entered, indented by call depth\n"
	"                       (the call model of report -g: tail calls, signal handlers,\n"
	"                       longjmp and lost trace marked, and where an address\n"
	"                       filter turned tracing off)\n"
	"  -F, --fields LIST    fields: comm,pid,tid,cpu,time,id,flags,ip,sym,symoff,dso,\n"
	"                       addr,srcline,insn,insncnt (perf script -F style); time is\n"
	"                       seconds on perf's clock when the trace converts to it\n"
	"                       (perf.data TIME_CONV), else raw timestamp ticks;\n"
	"                       insncnt: instructions since the branch before\n"
	"  --ns                 times to the nanosecond (default: microseconds)\n"
	"  -o, --output FILE    write to FILE instead of standard output\n" SYMCLI_HELP
		TRACE_OPTS_HELP "  -h, --help           this text\n";

static int parse_fields(const char *arg, unsigned *fields)
{
	char buf[512], *tok, *save = NULL;

	*fields = 0;
	snprintf(buf, sizeof(buf), "%s", arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		size_t i;

		for (i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (!strcmp(tok, field_names[i].name))
				break;
		if (i == sizeof(field_names) / sizeof(field_names[0])) {
			cli_error("-F: '%s' is not a field", tok);
			return -1;
		}
		*fields |= field_names[i].bit;
	}
	return 0;
}

static void format_head(struct script *s, const struct cst_elem *e, int32_t pid, uint64_t time,
			const char *comm)
{
	struct cst_line *l = &s->line;

	if (s->fields & f_comm) {
		cst_line_str(l, comm ? comm : "-", 16);
		cst_line_char(l, ' ');
	}
	if (s->fields & f_pid) {
		cst_line_dec(l, pid, 6, 0);
		cst_line_char(l, s->fields & f_tid ? '/' : ' ');
	}
	/* snapshots know no threads, and not always the CPU: show a dash, not -1 */
	if ((s->fields & f_tid) && e->tid >= 0) {
		cst_line_dec(l, e->tid, -6, 0);
		cst_line_char(l, ' ');
	} else if (s->fields & f_tid) {
		cst_line_str(l, "-      ", 0);
	}
	if ((s->fields & f_cpu) && e->cpu >= 0) {
		cst_line_char(l, '[');
		cst_line_dec(l, e->cpu, 3, 1);
		cst_line_str(l, "] ", 0);
	} else if (s->fields & f_cpu) {
		cst_line_str(l, "[---] ", 0);
	}
	if (s->fields & f_id) {
		cst_line_str(l, "id:", 0);
		cst_line_hex(l, e->trace_id, 2, 1, 0);
		cst_line_char(l, ' ');
	}
	if ((s->fields & f_time) && s->cli->has_tc) {
		/* perf's clock, as perf script prints it: seconds, then micro- or
		 * nanoseconds */
		cst_line_udec(l, time / 1000000000, 5);
		cst_line_char(l, '.');
		if (s->ns)
			cst_line_dec(l, (int64_t)(time % 1000000000), 9, 1);
		else
			cst_line_dec(l, (int64_t)(time % 1000000000 / 1000), 6, 1);
		cst_line_str(l, ": ", 0);
	} else if (s->fields & f_time) {
		/* raw counter ticks: no clock to convert them with */
		cst_line_udec(l, time, 12);
		cst_line_str(l, ": ", 0);
	}
}

/* The head of a line: the memo's bytes when nothing it shows has changed. */
static void put_head(struct script *s, const struct cst_elem *e, int32_t pid, uint64_t time)
{
	struct head_memo *m = &s->head;
	const char *comm = (s->fields & f_comm) && e->tid >= 0
				   ? cst_symbolizer_comm(s->sym, e->tid) : NULL;
	size_t at = s->line.n;

	if (m->valid && m->pid == pid && m->tid == e->tid && m->cpu == e->cpu &&
	    m->trace_id == e->trace_id && m->time == time && m->comm == comm) {
		cst_line_mem(&s->line, m->b, m->len);
		return;
	}
	format_head(s, e, pid, time, comm);
	m->valid = s->line.n - at <= sizeof(m->b) && s->line.n < sizeof(s->line.b);
	if (m->valid) {
		*m = (struct head_memo){pid, e->tid, e->cpu, e->trace_id, time, comm, true,
					(uint8_t)(s->line.n - at), {0}};
		memcpy(m->b, s->line.b + at, m->len);
	}
}

/* "+0x1f" ("+0" for zero, as printf's %#x) */
static void put_offset(struct cst_line *l, uint64_t off)
{
	cst_line_char(l, '+');
	cst_line_hex(l, off, 0, 0, 1);
}

/* A name of the symbolizer's, its length remembered. */
static void put_name(struct script *s, const char *name)
{
	uintptr_t h = (uintptr_t)name;
	size_t i = (size_t)((h ^ (h >> 8) ^ (h >> 16)) % 256);

	if (!name) {
		cst_line_str(&s->line, name, 0);
		return;
	}
	if (s->lens[i].p != name) {
		s->lens[i].p = name;
		s->lens[i].n = strlen(name);
	}
	cst_line_mem(&s->line, name, s->lens[i].n);
}

/* "addr sym+off (dso)" as the fields ask */
static void format_loc(struct script *s, uint64_t addr, const struct cst_sym_loc *loc)
{
	struct cst_line *l = &s->line;

	if (s->fields & f_ip) {
		cst_line_hex(l, addr, 16, 0, 0);
		cst_line_char(l, ' ');
	}
	if (s->fields & f_sym) {
		if (loc->func) {
			put_name(s, loc->func->name);
			if (s->fields & f_symoff)
				put_offset(l, loc->func_offset);
		} else {
			/* unknown code: where it is in its binary, never a guess at a name */
			cst_line_str(l, "[unknown]", 0);
			if ((s->fields & f_symoff) && !(s->fields & f_dso)) {
				cst_line_char(l, ' ');
				put_name(s, loc->dso);
				put_offset(l, loc->dso_offset);
			}
		}
	}
	if ((s->fields & f_dso) && !loc->func && (s->fields & (f_sym | f_symoff))) {
		cst_line_str(l, " (", 0);
		put_name(s, loc->dso);
		put_offset(l, loc->dso_offset);
		cst_line_char(l, ')');
	} else if (s->fields & f_dso) {
		cst_line_str(l, " (", 0);
		put_name(s, loc->dso);
		cst_line_char(l, ')');
	}
	if ((s->fields & f_srcline) && loc->file) {
		cst_line_char(l, ' ');
		cst_line_str(l, loc->file, 0);
		cst_line_char(l, ':');
		cst_line_dec(l, loc->line, 0, 0);
	}
}

static bool same_loc(const struct loc_memo *m, uint64_t addr, const struct cst_sym_loc *loc)
{
	return m->valid && m->addr == addr && m->func == loc->func &&
	       m->func_offset == loc->func_offset && m->dso == loc->dso &&
	       m->dso_offset == loc->dso_offset && m->file == loc->file && m->line == loc->line;
}

/* format_loc, through the memo. */
static void put_loc(struct script *s, uint64_t addr, const struct cst_sym_loc *loc)
{
	struct loc_memo *m = &s->memo[(addr ^ (addr >> 10)) % LOC_MEMO];
	size_t at = s->line.n;

	if (same_loc(m, addr, loc)) {
		cst_line_mem(&s->line, m->b, m->len);
		return;
	}
	format_loc(s, addr, loc);
	/* a location cut short by a full line is not kept */
	m->valid = s->line.n - at <= sizeof(m->b) && s->line.n < sizeof(s->line.b);
	if (!m->valid)
		return;
	/* field by field: a compound literal would zero the text first */
	m->addr = addr;
	m->func_offset = loc->func_offset;
	m->dso_offset = loc->dso_offset;
	m->func = loc->func;
	m->dso = loc->dso;
	m->file = loc->file;
	m->line = loc->line;
	m->len = (uint8_t)(s->line.n - at);
	memcpy(m->b, s->line.b + at, m->len);
}

/* The line is complete: one write, then start the next. */
static void end_line(struct script *s)
{
	cst_line_end(&s->line);
	/* a restarted child, before what the crashed one printed (a file given with -o
	 * is written whole by each child) */
	if (s->f == stdout && cli_quiet()) {
		cst_line_reset(&s->line);
		return;
	}
	/* only this thread writes the output: no lock per line (the lock was 80 %
	 * of fwrite, 4 % of script), as cmd_script.c does */
	if (fwrite_unlocked(s->line.b, 1, s->line.n, s->f) != s->line.n)
		cli_write_failed(&s->io_errno);
	cst_line_reset(&s->line);
}

/* Location of @addr inside piece @pc, from the cached piece: no lookup. */
static void piece_loc(struct script *s, int32_t pid, const struct cst_sym_piece *pc,
		      uint64_t addr, struct cst_sym_loc *loc)
{
	*loc = pc->loc;
	loc->func_offset += addr - pc->start;
	loc->dso_offset += addr - pc->start;
	if ((s->fields & f_srcline) && addr != pc->start)
		cst_symbolizer_lookup(s->sym, pid, addr, loc); /* lines change inside */
}

/* Print the branch that ended range @p; @to is where it went (or NULL). */
static void put_branch(struct script *s, const struct cst_flow_range *p,
		       const struct cst_sym_elem *to, const char *why)
{
	const struct cst_elem *e = &p->elem;
	uint64_t from = e->end - (e->last_size ? e->last_size : 4);
	struct cst_sym_loc loc;

	put_head(s, e, p->pid, p->time);
	if (s->fields & f_flags) {
		cst_line_str(&s->line, why ? why : cst_flow_branch_name(e), -7);
		cst_line_char(&s->line, ' ');
	}
	if (p->npieces)
		piece_loc(s, p->pid, &p->pieces[p->npieces - 1], from, &loc);
	else
		cst_symbolizer_lookup(s->sym, p->pid, from, &loc);
	put_loc(s, from, &loc);
	if (s->fields & f_insncnt) {
		cst_line_str(&s->line, " insns:", 0);
		cst_line_udec(&s->line, e->num_insns, 0);
	}
	if (s->fields & f_addr) {
		cst_line_str(&s->line, " => ", 0);
		if (to && to->elem->type == cst_elem_instr_range && to->npieces)
			put_loc(s, to->elem->start, &to->pieces[0].loc);
		else
			cst_line_str(&s->line, "[none]", 0);
	}
	end_line(s);
}

static void put_insns(struct script *s, const struct cst_sym_elem *se, uint64_t time)
{
	const struct cst_elem *e = se->elem;

	for (uint32_t i = 0; i < se->npieces; i++) {
		const struct cst_sym_piece *pc = &se->pieces[i];
		uint64_t a = pc->start;

		if (!symcli_piece_keep(s->cli, pc))
			continue;
		for (uint32_t k = 0; k < pc->num_insns && a < pc->end; k++) {
			struct cst_sym_insn in;
			struct cst_sym_loc loc;
			int err = cst_symbolizer_disasm(s->sym, se->pid, a, e->isa, &in);

			piece_loc(s, se->pid, pc, a, &loc);
			put_head(s, e, se->pid, time);
			put_loc(s, a, &loc);
			if (s->fields & f_insn) {
				cst_line_char(&s->line, '\t');
				cst_line_str(&s->line, err ? "(no code bytes)" : in.text, 0);
			}
			end_line(s);
			if (err)
				break; /* sizes unknown from here on */
			a += in.size;
		}
	}
}

/* The branch view: one line per taken branch, and where trace broke off. */
static void branch_event(struct script *s, const struct cst_flow_event *ev)
{
	/* --dsos/--symbols select branches by where they leave from (the ip) */
	if (ev->from && ev->from->npieces &&
	    !symcli_piece_keep(s->cli, &ev->from->pieces[ev->from->npieces - 1]))
		return;
	switch (ev->kind) {
	case cst_flow_branch:
		put_branch(s, ev->from, ev->to, NULL);
		break;
	case cst_flow_exception:
		if (ev->from)
			put_branch(s, ev->from, NULL, "exception");
		break;
	case cst_flow_gap:
	case cst_flow_end:
		/* a range that fell through needs no line; one that branched does (into
		 * code an address filter leaves out: "off", which is no loss) */
		if (ev->from && cst_elem_taken_branch(&ev->from->elem))
			put_branch(s, ev->from, NULL,
				   ev->kind == cst_flow_end ? "end"
				   : ev->to && ev->to->elem->type == cst_elem_trace_on &&
						   ev->to->elem->gap == cst_gap_filter
					   ? "off" : "gap");
		break;
	default:
		break;
	}
}

/* The call trace, from the symbolize library's call model: each frame as it is
 * entered, indented by its depth, marked when it was not entered by a call; and
 * where lost trace emptied the stack. */
static void put_how(struct cst_line *l, const struct cst_call_frame *fr)
{
	const char *how = cst_call_frame_how_name(fr);

	if (!strcmp(how, "call"))
		return;
	cst_line_str(l, " (", 0);
	cst_line_str(l, how, 0);
	cst_line_char(l, ')');
}

static int call_event(void *ctx, const struct cst_call_event *ev)
{
	struct script *s = ctx;
	const struct cst_call_frame *fr = ev->frame;

	if (!ev->elem || (ev->kind != cst_call_enter && ev->kind != cst_call_gap &&
			  ev->kind != cst_call_off))
		return 0;
	put_head(s, ev->elem, ev->pid, ev->time);
	if (ev->kind == cst_call_off) {
		/* an address filter: the stack stands, nothing was lost */
		cst_line_str(&s->line, "", (int)ev->depth * 2);
		cst_line_str(&s->line, "[trace off: filter]", 0);
	} else if (ev->kind == cst_call_gap) {
		cst_line_str(&s->line, "[trace lost: ", 0);
		cst_line_str(&s->line, cst_elem_type_name(ev->elem->type), 0);
		cst_line_char(&s->line, ']');
	} else {
		cst_line_str(&s->line, "", (int)(ev->depth - 1) * 2);
		cst_line_str(&s->line, cst_call_frame_name(fr), 0);
		if (!fr->func) {
			cst_line_char(&s->line, ' ');
			cst_line_str(&s->line, fr->dso, 0);
			cst_line_str(&s->line, " at ", 0);
			cst_line_hex(&s->line, fr->entry, 0, 0, 1);
		} else if (s->fields & f_dso) {
			cst_line_str(&s->line, " (", 0);
			cst_line_str(&s->line, fr->dso, 0);
			cst_line_char(&s->line, ')');
		}
		put_how(&s->line, fr);
	}
	end_line(s);
	return s->io_errno ? -cste_io : 0;
}

static int flow_event(void *ctx, const struct cst_flow_event *ev)
{
	struct script *s = ctx;

	branch_event(s, ev);
	return s->io_errno ? -cste_io : 0;
}

static int script_elem(void *ctx, const struct cst_sym_elem *se)
{
	struct script *s = ctx;
	uint64_t time;

	if (!symcli_keep(s->cli, se))
		return 0;
	time = symcli_time(s->cli, se);
	if (s->mode == mode_calls)
		return cst_calls_add(s->calls, se, time);
	if (s->mode == mode_branch)
		return cst_flow_add(s->flow, se, time);
	if (se->elem->type == cst_elem_instr_range)
		put_insns(s, se, time);
	return s->io_errno ? -cste_io : 0;
}

/* What the view's own options ask for. */
struct view_args {
	struct script *s;
	const char *output;
	bool srcline, have_fields;
};

static int view_option(void *ctx, int opt, const char *arg)
{
	struct view_args *v = ctx;

	switch (opt) {
	case 'i':
		v->s->mode = mode_insn;
		return 0;
	case 'c':
		v->s->mode = mode_calls;
		return 0;
	case 'l':
		v->srcline = true;
		return 0;
	case 'y':
		/* "--symbols=LIST" filters; plain "--symbols" only asks for this view */
		return arg ? (symcli_parse(v->s->cli, 0x200a, arg) < 0 ? -1 : 0) : 0;
	case 'd':
		return 0; /* it only asks for this view: disassembly is its default */
	case 'F':
		v->have_fields = true;
		return parse_fields(arg, &v->s->fields);
	case 'o':
		v->output = arg;
		return 0;
	case 'N':
		v->s->ns = true;
		return 0;
	default:
		return -1;
	}
}

int script_view_run(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"insn", no_argument, NULL, 'i'},
		{"srcline", no_argument, NULL, 'l'},
		{"call-trace", no_argument, NULL, 'c'},
		{"symbols", optional_argument, NULL, 'y'},
		{"disasm", no_argument, NULL, 'd'},
		{"fields", required_argument, NULL, 'F'},
		{"output", required_argument, NULL, 'o'},
		{"ns", no_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},
		SYMCLI_LONG,
		TRACE_OPTS_LONG,
		{NULL, 0, NULL, 0},
	};
	struct symcli cli;
	struct script *s = calloc(1, sizeof(*s));
	struct cst_session *session = NULL;
	struct cst_symbolizer *sym = NULL;
	struct view_args args = {s, NULL, false, false};
	struct cli_out file = {.f = stdout};
	const char *output, *trace;
	enum verb_parsed parsed;
	bool srcline, have_fields;
	int err, fin, status = 1;

	if (s)
		s->memo = calloc(LOC_MEMO, sizeof(*s->memo));
	if (!s || !s->memo) {
		free(s);
		cli_error("out of memory");
		return 1;
	}
	symcli_init(&cli);
	s->cli = &cli;
	s->f = stdout;
	args.s = s;
	parsed = verb_parse(&(struct verb){"script", script_usage, "F:o:", longopts, view_option,
					   &args},
			    argc, argv, NULL, &cli, &trace);
	if (parsed != verb_run) {
		free(s->memo);
		free(s);
		return verb_exit(parsed);
	}
	output = args.output;
	srcline = args.srcline;
	have_fields = args.have_fields;
	if (!have_fields) {
		s->fields = f_tid | f_cpu | f_time | f_ip | f_sym | f_symoff | f_dso;
		if (s->mode == mode_branch)
			s->fields |= f_flags | f_addr;
		if (s->mode == mode_insn)
			s->fields = (s->fields & ~(unsigned)f_dso) | f_insn;
		if (s->mode == mode_calls)
			s->fields = f_tid | f_cpu | f_time;
	}
	if (srcline)
		s->fields |= f_srcline;
	/* -o appears whole, and only when the run succeeded; never over the input */
	if (cli_out_open(&file, output, trace, false) < 0)
		goto out;
	s->f = file.f;
	setvbuf(s->f, NULL, _IOFBF, 1 << 20);
	if (cst_flow_alloc(&s->flow, flow_event, s) < 0 ||
	    cst_calls_alloc(&s->calls, call_event, s) < 0) {
		cli_error("out of memory");
		goto out;
	}
	if (symcli_open(&cli, trace, &session, &sym) < 0)
		goto out;
	s->sym = sym;
	err = symcli_run(sym, session, script_elem, s);
	/* the last range of each trace ID has nowhere known to go */
	fin = s->mode == mode_calls ? cst_calls_finish(s->calls) : cst_flow_finish(s->flow);
	if (err >= 0 && fin < 0)
		err = fin;
	if (!cli_flush_output(s->f, output, s->io_errno))
		goto out;
	if (err < 0) {
		/* no trace: the decoder has said why, with the file */
		if (err != -cste_no_trace)
			cli_error("%s: %s", trace, cst_strerror(err));
		goto out;
	}
	if (!symcli_decoded(trace, session))
		goto out;
	status = 0;
out:
	if (status == 0 && file.tmp && cli_out_commit(&file) < 0)
		status = 1;
	else if (status)
		cli_out_abort(&file);
	cst_flow_free(s->flow);
	cst_calls_free(s->calls);
	cst_symbolizer_free(sym);
	cst_session_free(session);
	symcli_fini(&cli);
	free(s->memo);
	free(s);
	return status;
}
