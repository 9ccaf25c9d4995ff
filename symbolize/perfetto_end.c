/* The end of a timeline: the spooled events copied within the size limit, the
 * processes' and threads' names, and a note of what was left out. */
#include "perfetto_int.h"
#include "report_view.h"

#include <inttypes.h>
#include <stdlib.h>

static void name_event(struct cst_perfetto *pw, const char *what, int32_t pid, int32_t tid,
		       bool thread)
{
	const char *comm = pw->sym ? cst_symbolizer_comm(pw->sym, thread ? tid : pid) : NULL;
	char buf[160], *p;

	if (thread)
		snprintf(buf, sizeof(buf), "%s/%" PRId32, comm ? comm : "thread", tid);
	else
		snprintf(buf, sizeof(buf), "%s %" PRId32, comm ? comm : "process", pid);
	cst_line_reset(&pw->line);
	sym_pf_json(&pw->line, buf, sizeof(buf)); /* at most 6 bytes a byte: within SLICE_MAX */
	p = pf_event_at(pw, KEEP);
	p += sprintf(p, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%" PRId32, what, pid);
	if (thread)
		p += sprintf(p, ",\"tid\":%" PRId32, tid);
	p = PUT_LIT(p, ",\"args\":{\"name\":");
	memcpy(p, pw->line.b, pw->line.n);
	p += pw->line.n;
	p = PUT_LIT(p, "}}");
	pf_event_end(pw, p);
}

/* Copy the spooled events to the file, leaving out the smallest slices as far
 * as the size limit needs (the thread names and the end take a little more). */
static void unspool(struct cst_perfetto *pw)
{
	uint64_t all = 0, budget = pw->max_bytes > (64u << 10) ? pw->max_bytes - (64u << 10) : 0;
	unsigned cut = 0;
	uint32_t len;
	int cls;
	char *buf;

	sym_pf_flush_out(pw);
	for (unsigned c = 0; c <= KEEP; c++)
		all += pw->class_bytes[c];
	/* the classes from the bottom up, until the rest fits */
	while (all > budget && cut < KEEP) {
		all -= pw->class_bytes[cut];
		pw->st.cut += pw->class_n[cut];
		pw->st.cut_bytes += pw->class_bytes[cut];
		cut++;
	}
	pw->st.cut_below = pw->st.cut && cut ? 1ull << (cut - 1) : 0;
	pw->st.slices -= pw->st.cut;
	buf = malloc(SLICE_MAX);
	if (!buf || fseek(pw->spool, 0, SEEK_SET) < 0) {
		free(buf);
		pw->io_error = true;
		return;
	}
	while ((cls = getc(pw->spool)) != EOF && fread(&len, 4, 1, pw->spool) == 1 &&
	       len <= SLICE_MAX && fread(buf, 1, len, pw->spool) == len) {
		if ((unsigned)cls < cut)
			continue;
		if ((!pw->first && fputc(',', pw->f) == EOF) || fputc('\n', pw->f) == EOF ||
		    fwrite_unlocked(buf, 1, len, pw->f) != len)
			pw->io_error = true;
		pw->st.bytes += len + 1 + !pw->first;
		pw->first = false;
	}
	if (ferror(pw->spool))
		pw->io_error = true;
	free(buf);
	fclose(pw->spool);
	pw->spool = NULL;
}

int cst_perfetto_get_stats(const struct cst_perfetto *pw, struct cst_perfetto_stats *st)
{
	if (!pw || !st)
		return -cste_invalid;
	*st = pw->st;
	return 0;
}

int cst_perfetto_finish(struct cst_perfetto *pw)
{
	char note[512] = "";

	if (!pw)
		return -cste_invalid;
	if (pw->spool)
		unspool(pw);
	for (size_t i = 0; i < pw->tcap; i++) {
		const struct pthread *t = &pw->threads[i];
		bool pid_named = false;

		if (!t->used)
			continue;
		for (size_t k = 0; k < i; k++)
			if (pw->threads[k].used && pw->threads[k].pid == t->pid)
				pid_named = true;
		if (!pid_named)
			name_event(pw, "process_name", t->pid, t->tid, false);
		name_event(pw, "thread_name", t->pid, t->tid, true);
	}
	sym_pf_flush_out(pw);
	/* what was left out, and what would keep it */
	if (pw->st.cut)
		snprintf(note, sizeof(note),
			 "%" PRIu64 " slices of fewer than %" PRIu64 " instructions (%.1f MB), to keep "
			 "the file under %" PRIu64 " KiB (report --max-size 0 keeps them; --min-insns, "
			 "--max-depth, --tid and --time choose what to show)",
			 pw->st.cut, pw->st.cut_below, (double)pw->st.cut_bytes / 1e6,
			 pw->max_bytes >> 10);
	if (pw->st.small || pw->st.deep)
		snprintf(note + strlen(note), sizeof(note) - strlen(note),
			 "%s%" PRIu64 " slices under --min-insns %" PRIu64 ", %" PRIu64
			 " deeper than --max-depth %u",
			 note[0] ? "; " : "", pw->st.small, pw->min_insns, pw->st.deep, pw->max_depth);
	fprintf(pw->f,
		"\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"producer\":\"cstrace\","
		"\"clock\":\"%s\",\"left_out\":\"%s\"}}\n",
		!pw->any_time   ? "instructions: 1 ns per instruction"
		: pw->perf_clock ? "trace timestamps on perf's clock (TIME_CONV) plus 1 ns per "
				   "instruction"
				 : "trace timestamps in the ETM's counter ticks (no TIME_CONV converts "
				   "them: 1 tick shown as 1 ns) plus 1 ns per instruction",
		note[0] ? note : "nothing");
	return pw->io_error || ferror(pw->f) ? -cste_io : 0;
}

/* report --format=perfetto: the timeline was written while the trace decoded
 * (to the view's stream), only its end is left */
int sym_report_write_perfetto(struct cst_report_view *v, FILE *f)
{
	(void)f;
	return cst_perfetto_finish(v->timeline);
}
