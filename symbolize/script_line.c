/* The script view's lines: the -F fields by name, and a line's head and
 * locations built without printf, through memos of the last ones made. */
#include "addr_slot.h"
#include "script_int.h"

#include <string.h>

static const struct {
	const char *name;
	unsigned bit;
} field_names[] = {
	{"comm", cst_script_comm},       {"pid", cst_script_pid},
	{"tid", cst_script_tid},         {"cpu", cst_script_cpu},
	{"time", cst_script_time},       {"id", cst_script_id},
	{"flags", cst_script_flags},     {"ip", cst_script_ip},
	{"sym", cst_script_sym},         {"symoff", cst_script_symoff},
	{"dso", cst_script_dso},         {"addr", cst_script_addr},
	{"srcline", cst_script_srcline}, {"insn", cst_script_insn},
	{"insncnt", cst_script_insncnt},
};

int cst_script_field_parse(const char *name, unsigned *field)
{
	for (size_t i = 0; name && i < sizeof(field_names) / sizeof(field_names[0]); i++)
		if (!strcmp(name, field_names[i].name)) {
			*field = field_names[i].bit;
			return 0;
		}
	return -cste_not_found;
}

unsigned cst_script_fields_default(enum cst_script_mode mode)
{
	unsigned f = cst_script_tid | cst_script_cpu | cst_script_time | cst_script_ip |
		     cst_script_sym | cst_script_symoff | cst_script_dso;

	if (mode == cst_script_branches)
		return f | cst_script_flags | cst_script_addr;
	if (mode == cst_script_insns)
		return (f & ~(unsigned)cst_script_dso) | cst_script_insn;
	return cst_script_tid | cst_script_cpu | cst_script_time;
}

static void format_head(struct cst_script *s, const struct cst_elem *e, int32_t pid,
			uint64_t time, const char *comm)
{
	struct cst_line *l = &s->line;
	unsigned fields = s->o.fields;

	if (fields & cst_script_comm) {
		cst_line_str(l, comm ? comm : "-", 16);
		cst_line_char(l, ' ');
	}
	if (fields & cst_script_pid) {
		cst_line_dec(l, pid, 6, 0);
		cst_line_char(l, fields & cst_script_tid ? '/' : ' ');
	}
	/* snapshots know no threads, and not always the CPU: show a dash, not -1 */
	if ((fields & cst_script_tid) && e->tid >= 0) {
		cst_line_dec(l, e->tid, -6, 0);
		cst_line_char(l, ' ');
	} else if (fields & cst_script_tid) {
		cst_line_str(l, "-      ", 0);
	}
	if ((fields & cst_script_cpu) && e->cpu >= 0) {
		cst_line_char(l, '[');
		cst_line_dec(l, e->cpu, 3, 1);
		cst_line_str(l, "] ", 0);
	} else if (fields & cst_script_cpu) {
		cst_line_str(l, "[---] ", 0);
	}
	if (fields & cst_script_id) {
		cst_line_str(l, "id:", 0);
		cst_line_hex(l, e->trace_id, 2, 1, 0);
		cst_line_char(l, ' ');
	}
	if ((fields & cst_script_time) && s->perf_clock) {
		/* perf's clock, as perf script prints it: seconds, then micro- or
		 * nanoseconds */
		cst_line_udec(l, time / 1000000000, 5);
		cst_line_char(l, '.');
		if (s->o.ns)
			cst_line_dec(l, (int64_t)(time % 1000000000), 9, 1);
		else
			cst_line_dec(l, (int64_t)(time % 1000000000 / 1000), 6, 1);
		cst_line_str(l, ": ", 0);
	} else if (fields & cst_script_time) {
		/* raw counter ticks: no clock to convert them with; the 't' says so, as
		 * --time takes them */
		cst_line_udec(l, time, 11);
		cst_line_str(l, "t: ", 0);
	}
}

/* The head of a line: the memo's bytes when nothing it shows has changed. */
void sym_script_head(struct cst_script *s, const struct cst_elem *e, int32_t pid, uint64_t time)
{
	struct sym_head_memo *m = &s->head;
	const char *comm = (s->o.fields & cst_script_comm) && e->tid >= 0
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
		*m = (struct sym_head_memo){pid, e->tid, e->cpu, e->trace_id, time, comm, true,
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
static void put_name(struct cst_script *s, const char *name)
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
static void format_loc(struct cst_script *s, uint64_t addr, const struct cst_sym_loc *loc)
{
	struct cst_line *l = &s->line;
	unsigned fields = s->o.fields;

	if (fields & cst_script_ip) {
		cst_line_hex(l, addr, 16, 0, 0);
		cst_line_char(l, ' ');
	}
	if (fields & cst_script_sym) {
		if (loc->func) {
			put_name(s, loc->func->name);
			if (fields & cst_script_symoff)
				put_offset(l, loc->func_offset);
		} else {
			/* unknown code: where it is in its binary, never a guess at a name */
			cst_line_str(l, "[unknown]", 0);
			if ((fields & cst_script_symoff) && !(fields & cst_script_dso)) {
				cst_line_char(l, ' ');
				put_name(s, loc->dso);
				put_offset(l, loc->dso_offset);
			}
		}
	}
	if ((fields & cst_script_dso) && !loc->func &&
	    (fields & (cst_script_sym | cst_script_symoff))) {
		cst_line_str(l, " (", 0);
		put_name(s, loc->dso);
		put_offset(l, loc->dso_offset);
		cst_line_char(l, ')');
	} else if (fields & cst_script_dso) {
		cst_line_str(l, " (", 0);
		put_name(s, loc->dso);
		cst_line_char(l, ')');
	}
	if ((fields & cst_script_srcline) && loc->file) {
		cst_line_char(l, ' ');
		cst_line_str(l, loc->file, 0);
		cst_line_char(l, ':');
		cst_line_dec(l, loc->line, 0, 0);
	}
}

static bool same_loc(const struct sym_loc_memo *m, uint64_t addr, const struct cst_sym_loc *loc)
{
	return m->valid && m->addr == addr && m->func == loc->func &&
	       m->func_offset == loc->func_offset && m->dso == loc->dso &&
	       m->dso_offset == loc->dso_offset && m->file == loc->file && m->line == loc->line;
}

/* format_loc, through the memo. */
void sym_script_loc(struct cst_script *s, uint64_t addr, const struct cst_sym_loc *loc)
{
	struct sym_loc_memo *m = &s->memo[sym_addr_slot(addr, SYM_LOC_MEMO_BITS)];
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

void sym_script_end_line(struct cst_script *s)
{
	cst_line_end(&s->line);
	if (s->write(s->write_ctx, s->line.b, s->line.n) < 0)
		s->failed = true;
	cst_line_reset(&s->line);
}
