/* perf script's columns (tools/perf/builtin-script.c of perf 6.1), byte for
 * byte: perf_sample__fprintf_start (comm, pid/tid, cpu, time), the period, the
 * event name as wide as the longest of the file, the flags, then for branch
 * samples perf_sample__fprintf_bts ("ip sym+off (dso) => addr sym+off (dso)")
 * and for instruction samples process_event's order; insn bytes last. */
#include "pscript_int.h"

#include <stdlib.h>
#include <string.h>

static const struct {
	const char *name;
	unsigned bit;
} fields[] = {
	{"comm", cst_pscript_comm},     {"pid", cst_pscript_pid},
	{"tid", cst_pscript_tid},       {"cpu", cst_pscript_cpu},
	{"time", cst_pscript_time},     {"period", cst_pscript_period},
	{"event", cst_pscript_event},   {"flags", cst_pscript_flags},
	{"ip", cst_pscript_ip},         {"sym", cst_pscript_sym},
	{"symoff", cst_pscript_symoff}, {"dso", cst_pscript_dso},
	{"addr", cst_pscript_addr},     {"srcline", cst_pscript_srcline},
	{"insn", cst_pscript_insn},     {"insnlen", cst_pscript_insnlen},
};

/* Not a field perf prints: branch samples show their target unless the fields
 * were set whole (perf's !user_set with PERF_SAMPLE_ADDR). */
#define BRANCH_ADDR (1u << 30)

unsigned cst_pscript_fields_default(const struct cst_pscript_file *f)
{
	unsigned v = cst_pscript_comm | cst_pscript_tid | cst_pscript_period | cst_pscript_event |
		     cst_pscript_ip | cst_pscript_sym | cst_pscript_symoff | cst_pscript_dso |
		     BRANCH_ADDR;

	/* perf leaves out what the samples do not carry */
	if (!f || !f->perf_data || f->has_cpu)
		v |= cst_pscript_cpu;
	if (!f || !f->perf_data || f->has_time)
		v |= cst_pscript_time;
	return v;
}

static int field_bit(const char *name, size_t len, unsigned *bit)
{
	for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
		if (strlen(fields[i].name) == len && !strncmp(fields[i].name, name, len)) {
			*bit = fields[i].bit;
			return 0;
		}
	return -cste_not_found;
}

int cst_pscript_fields_parse(const char *list, unsigned defaults, unsigned *out,
			     const char **bad)
{
	enum { unset, set, add, remove } mode = unset;
	const char *p = list;
	unsigned v = defaults;

	if (!list || !out)
		return -cste_invalid;
	if (!strncmp(p, "hw:", 3))
		p += 3;
	/* perf's parse_output_fields: a list without + or - replaces the fields
	 * (and ends the defaults' branch targets: user_set) */
	if (!strchr(p, '+') && !strchr(p, '-'))
		v = 0;
	while (*p) {
		size_t len = strcspn(p, ",");
		char how = *p == '+' || *p == '-' ? *p : 0;
		unsigned bit;

		if (how) {
			p++;
			len--;
		}
		/* perf: "Cannot mix +-field with overridden fields" */
		if ((how && mode == set) || (!how && (mode == add || mode == remove))) {
			if (bad)
				*bad = p;
			return -cste_format;
		}
		mode = how == '+' ? add : how == '-' ? remove : set;
		if (len && field_bit(p, len, &bit) < 0) {
			if (bad)
				*bad = p;
			return -cste_not_found;
		}
		if (len && bit == cst_pscript_flags) {
			/* perf keeps flags apart (print_flags): it sets no field */
			v = how == '-' ? v & ~bit : v | bit;
		} else if (len) {
			v = how == '-' ? v & ~bit : v | bit;
			v &= ~BRANCH_ADDR;
		}
		p += len + (p[len] == ',');
	}
	*out = v;
	return 0;
}

/* perf_sample__sprintf_flags */
static const struct {
	uint32_t flags;
	const char *name;
} flag_names[] = {
	{PSF_BRANCH | PSF_CALL, "call"},
	{PSF_BRANCH | PSF_RETURN, "return"},
	{PSF_BRANCH | PSF_CONDITIONAL, "jcc"},
	{PSF_BRANCH, "jmp"},
	{PSF_BRANCH | PSF_CALL | PSF_INTERRUPT, "int"},
	{PSF_BRANCH | PSF_RETURN | PSF_INTERRUPT, "iret"},
	{PSF_BRANCH | PSF_CALL | PSF_SYSCALLRET, "syscall"},
	{PSF_BRANCH | PSF_RETURN | PSF_SYSCALLRET, "sysret"},
	{PSF_BRANCH | PSF_ASYNC, "async"},
	{PSF_BRANCH | PSF_CALL | PSF_ASYNC | PSF_INTERRUPT, "hw int"},
	{PSF_BRANCH | PSF_TX_ABORT, "tx abrt"},
	{PSF_BRANCH | PSF_TRACE_BEGIN, "tr strt"},
	{PSF_BRANCH | PSF_TRACE_END, "tr end"},
	{PSF_BRANCH | PSF_CALL | PSF_VMENTRY, "vmentry"},
	{PSF_BRANCH | PSF_CALL | PSF_VMEXIT, "vmexit"},
	{PSF_BRANCH | PSF_BRANCH_MISS, "br miss"},
};

static const char *flags_name(uint32_t flags)
{
	for (size_t i = 0; i < sizeof(flag_names) / sizeof(flag_names[0]); i++)
		if (flag_names[i].flags == flags)
			return flag_names[i].name;
	return NULL;
}

/* "  %-21s " of perf_sample__sprintf_flags */
static void put_flags(struct cst_line *l, uint32_t flags)
{
	const uint32_t xf = PSF_IN_TX | PSF_INTR_DISABLE | PSF_INTR_TOGGLE;
	const char *chars = "bcrosyiABExghDt", *name;
	char xs[8] = "", str[40];
	size_t n = 0;

	if (flags & xf)
		snprintf(xs, sizeof(xs), "(%s%s%s)", flags & PSF_IN_TX ? "x" : "",
			 flags & PSF_INTR_DISABLE ? "D" : "", flags & PSF_INTR_TOGGLE ? "t" : "");
	if ((name = flags_name(flags & ~xf)))
		snprintf(str, sizeof(str), "%-15s%6s", name, xs);
	else if ((flags & PSF_TRACE_BEGIN) && (name = flags_name(flags & ~(xf | PSF_TRACE_BEGIN))))
		snprintf(str, sizeof(str), "tr strt %-7s%6s", name, xs);
	else if ((flags & PSF_TRACE_END) && (name = flags_name(flags & ~(xf | PSF_TRACE_END))))
		snprintf(str, sizeof(str), "tr end  %-7s%6s", name, xs);
	else {
		for (unsigned i = 0; i < 32 && n < sizeof(str) - 1; i++)
			if (flags & (1u << i))
				str[n++] = i < strlen(chars) ? chars[i] : '?';
		str[n] = '\0';
	}
	cst_line_str(l, "  ", 0);
	cst_line_str(l, str, -21);
	cst_line_char(l, ' ');
}

static const char *comm_of(struct cst_pscript *p, int32_t tid)
{
	const char *name = cst_symbolizer_comm(p->sym, tid);

	/* copied: the symbolizer's names move as threads are added; perf names a
	 * thread it saw no COMM of ":TID" */
	if (name)
		snprintf(p->comm, sizeof(p->comm), "%s", name);
	else
		snprintf(p->comm, sizeof(p->comm), ":%d", (int)tid);
	return p->comm;
}

/* perf_sample__fprintf_start */
static void put_start(struct cst_pscript *p, const struct psample *s)
{
	struct cst_line *l = &p->line;
	unsigned f = p->o.fields;

	if (f & cst_pscript_comm) {
		cst_line_str(l, comm_of(p, s->tid), 16);
		cst_line_char(l, ' ');
	}
	if ((f & cst_pscript_pid) && (f & cst_pscript_tid)) {
		cst_line_dec(l, s->pid, 5, 0);
		cst_line_char(l, '/');
		cst_line_dec(l, s->tid, -5, 0);
		cst_line_char(l, ' ');
	} else if (f & (cst_pscript_pid | cst_pscript_tid)) {
		cst_line_dec(l, f & cst_pscript_pid ? s->pid : s->tid, 5, 0);
		cst_line_char(l, ' ');
	}
	if (f & cst_pscript_cpu) {
		cst_line_char(l, '[');
		cst_line_dec(l, s->cpu, 3, 1);
		cst_line_str(l, "] ", 0);
	}
	if (!(f & cst_pscript_time))
		return;
	if (!p->file.perf_data && !p->perf_clock) {
		/* a snapshot's raw timestamp ticks: no clock converts them */
		char b[24];
		struct cst_line t;

		cst_line_reset(&t);
		cst_line_udec(&t, s->time, 0);
		cst_line_char(&t, 't');
		memcpy(b, t.b, t.n < sizeof(b) - 1 ? t.n : sizeof(b) - 1);
		b[t.n < sizeof(b) - 1 ? t.n : sizeof(b) - 1] = '\0';
		cst_line_str(l, b, 12);
	} else if (p->o.ns) {
		cst_line_udec(l, s->time / 1000000000, 5);
		cst_line_char(l, '.');
		cst_line_dec(l, (int64_t)(s->time % 1000000000), 9, 1);
	} else {
		/* "%12s" of "%lu.%06lu" */
		uint64_t sec = s->time / 1000000000;
		unsigned digits = 1;

		for (uint64_t x = sec; x >= 10; x /= 10)
			digits++;
		cst_line_str(l, "", digits + 7 < 12 ? (int)(12 - digits - 7) : 0);
		cst_line_udec(l, sec, 0);
		cst_line_char(l, '.');
		cst_line_dec(l, (int64_t)(s->time % 1000000000 / 1000), 6, 1);
	}
	cst_line_str(l, ": ", 0);
}

/* __symbol__fprintf_symname_offs: "name+0x1f", "[unknown]" */
static void put_sym(struct cst_line *l, const struct cst_sym_loc *loc, bool off)
{
	if (!loc->func) {
		cst_line_str(l, "[unknown]", 0);
		return;
	}
	cst_line_str(l, loc->func->name, 0);
	if (off) {
		cst_line_str(l, "+0x", 0);
		cst_line_hex(l, loc->func_offset, 0, 0, 0);
	}
}

static void put_dso(struct cst_line *l, const struct cst_sym_loc *loc)
{
	cst_line_str(l, " (", 0);
	cst_line_str(l, loc->dso ? loc->dso : "[unknown]", 0);
	cst_line_char(l, ')');
}

static void put_srcline(struct cst_line *l, const struct cst_sym_loc *loc)
{
	/* map__fprintf_srcline: "\n  file:line", the file's base name, where the
	 * line is known (perf names code without one by its object: "malloc.o:0") */
	if (!loc->file)
		return;
	cst_line_str(l, "\n  ", 0);
	cst_line_str(l, cst_path_base(loc->file), 0);
	cst_line_char(l, ':');
	cst_line_dec(l, loc->line, 0, 0);
}

/* "%16lx sym+off (dso)" */
static void format_at(struct cst_pscript *p, uint64_t addr, const struct cst_sym_loc *loc)
{
	struct cst_line *l = &p->line;
	unsigned f = p->o.fields;

	cst_line_hex(l, addr, 16, 0, 0);
	if (f & cst_pscript_sym) {
		cst_line_char(l, ' ');
		put_sym(l, loc, f & cst_pscript_symoff);
	}
	if (f & cst_pscript_dso)
		put_dso(l, loc);
}

/* format_at, through the memo (the fields stay as they are while @p lives):
 * @text, the memo's entry found already, or @loc. */
static void put_at(struct cst_pscript *p, uint64_t addr, int32_t space,
		   const struct cst_sym_loc *loc, const struct psc_loc_memo *text)
{
	struct psc_loc_memo *m;
	size_t at = p->line.n;

	if (!text && space != PSC_NO_SPACE)
		text = sym_psc_memo(p, addr, space);
	if (text) {
		cst_line_mem(&p->line, text->b, text->len);
		return;
	}
	format_at(p, addr, loc);
	if (space == PSC_NO_SPACE)
		return;
	m = &p->memo[sym_addr_slot(addr, PSC_LOC_MEMO_BITS)];
	/* a location cut short by a full line is not kept */
	if (p->line.n - at > sizeof(m->b) || p->line.n >= sizeof(p->line.b)) {
		m->epoch = 0;
		return;
	}
	m->addr = addr;
	m->space = space;
	m->epoch = p->memo_epoch;
	m->len = (uint8_t)(p->line.n - at);
	memcpy(m->b, p->line.b + at, m->len);
}

/* sample__fprintf_sym without a callchain: "%16lx sym+off (dso)" */
static void put_ip(struct cst_pscript *p, const struct psample *s, bool srcline)
{
	put_at(p, s->ip, s->ip_space, s->ip_loc, s->ip_text);
	if (srcline)
		put_srcline(&p->line, s->ip_loc);
}

static void put_insn(struct cst_line *l, unsigned f, const struct psample *s)
{
	if (f & cst_pscript_insnlen) {
		cst_line_str(l, " ilen: ", 0);
		cst_line_dec(l, s->insn_len, 0, 0);
	}
	if ((f & cst_pscript_insn) && s->insn_len) {
		cst_line_str(l, " insn:", 0);
		for (unsigned i = 0; i < s->insn_len && i < sizeof(s->insn); i++) {
			cst_line_char(l, ' ');
			cst_line_hex(l, s->insn[i], 2, 1, 0);
		}
	}
}

void sym_psc_print(struct cst_pscript *p, const struct psample *s)
{
	struct cst_line *l = &p->line;
	unsigned f = p->o.fields;

	/* no field (flags are no field to perf): perf prints nothing at all */
	if (!(f & ~(unsigned)cst_pscript_flags) || p->mute)
		return;
	/* --dsos, --symbols: as perf filters samples, by where the sample is */
	if (cst_sym_filter_by_name(p->filter) &&
	    !cst_sym_filter_keep_name(p->filter, s->ip_loc->dso,
				      s->ip_loc->func ? s->ip_loc->func->name : "[unknown]"))
		return;
	cst_line_reset(l);
	put_start(p, s);
	if (f & cst_pscript_period) {
		cst_line_udec(l, s->period, 10);
		cst_line_char(l, ' ');
	}
	if (f & cst_pscript_event) {
		cst_line_str(l, s->branch ? p->branch_name : p->insn_name, p->name_width);
		cst_line_str(l, ": ", 0);
	}
	if (f & cst_pscript_flags)
		put_flags(l, s->flags);
	if (s->branch) {
		/* perf_sample__fprintf_bts: the source line goes last */
		if (f & cst_pscript_ip) {
			cst_line_char(l, ' ');
			put_ip(p, s, false);
		}
		if (f & (cst_pscript_addr | BRANCH_ADDR)) {
			cst_line_str(l, " => ", 0);
			put_at(p, s->addr, s->addr_space, s->addr_loc, s->addr_text);
		}
		if ((f & cst_pscript_ip) && (f & cst_pscript_srcline))
			put_srcline(l, s->ip_loc);
	} else {
		/* process_event: the address (0: instruction samples have none) first */
		if (f & cst_pscript_addr)
			cst_line_hex(l, s->addr, 16, 0, 0);
		if (f & cst_pscript_ip) {
			cst_line_char(l, ' ');
			put_ip(p, s, f & cst_pscript_srcline);
		}
	}
	put_insn(l, f, s);
	cst_line_end(l);
	if (p->write(p->write_ctx, l->b, l->n) < 0)
		p->failed = true;
}

void sym_psc_print_error(struct cst_pscript *p, const struct cst_elem *e, uint64_t time,
			 const char *msg)
{
	struct cst_line *l = &p->line;

	if (p->mute)
		return;
	/* perf_event__fprintf_auxtrace_error, as perf prints Intel PT's */
	cst_line_reset(l);
	cst_line_str(l, " instruction trace error type 1 time ", 0);
	if (time) {
		cst_line_udec(l, time / 1000000000, 0);
		cst_line_char(l, '.');
		cst_line_dec(l, (int64_t)(time % 1000000000), 9, 1);
	} else {
		cst_line_char(l, '0');
	}
	cst_line_str(l, " cpu ", 0);
	cst_line_dec(l, e->cpu, 0, 0);
	cst_line_str(l, " pid ", 0);
	cst_line_dec(l, e->pid, 0, 0);
	cst_line_str(l, " tid ", 0);
	cst_line_dec(l, e->tid, 0, 0);
	cst_line_str(l, " ip 0x0 code 1: ", 0);
	cst_line_str(l, msg, 0);
	cst_line_end(l);
	if (p->write(p->write_ctx, l->b, l->n) < 0)
		p->failed = true;
}

static int setup(struct cst_pscript *p, const struct cst_pscript_opts *opts)
{
	int err;

	if (cst_opts_load(&p->o, sizeof(p->o), opts, "cst_pscript_opts", NULL) < 0)
		return -cste_invalid;
	if (p->o.file)
		p->file = *p->o.file;
	p->perf_clock = p->o.filter && p->o.filter->time_conv;
	snprintf(p->branch_name, sizeof(p->branch_name), "branches%s", p->file.modifiers);
	snprintf(p->insn_name, sizeof(p->insn_name), "instructions%s", p->file.modifiers);
	/* evlist__max_name_len: the file's events and those perf synthesized */
	p->name_width = (int)p->file.name_len;
	if (p->o.branches && (int)strlen(p->branch_name) > p->name_width)
		p->name_width = (int)strlen(p->branch_name);
	if (p->o.instructions && (int)strlen(p->insn_name) > p->name_width)
		p->name_width = (int)strlen(p->insn_name);
	p->memo = calloc(PSC_LOC_MEMO, sizeof(*p->memo));
	if (!p->memo)
		return -cste_nomem;
	err = cst_sym_filter_alloc(&p->filter, p->sym, p->o.filter);
	if (err)
		return err;
	p->lazy_locs = !(p->o.fields & cst_pscript_srcline) && !cst_sym_filter_by_name(p->filter);
	return 0;
}

int cst_pscript_alloc(struct cst_pscript **out, struct cst_symbolizer *sym,
		      cst_script_write_fn write, void *ctx, const struct cst_pscript_opts *opts)
{
	bool bad = !out || !sym || !write;
	struct cst_pscript *p = bad ? NULL : calloc(1, sizeof(*p));
	int err = bad ? -cste_invalid : p ? 0 : -cste_nomem;

	if (p) {
		p->sym = sym;
		p->write = write;
		p->write_ctx = ctx;
		err = setup(p, opts);
	}
	if (err < 0) {
		cst_pscript_free(p);
		p = NULL;
	}
	if (out)
		*out = p;
	return err;
}

void cst_pscript_free(struct cst_pscript *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < sizeof(p->q) / sizeof(p->q[0]); i++)
		free(p->q[i]);
	cst_sym_filter_free(p->filter);
	free(p->memo);
	free(p);
}
