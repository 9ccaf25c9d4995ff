/* Internal to symbolize/: the script view's state, shared by its model
 * (script.c: what each element prints) and its line builder (script_line.c). */
#ifndef CSTRACE_SYMBOLIZE_SCRIPT_INT_H
#define CSTRACE_SYMBOLIZE_SCRIPT_INT_H

#include "cstrace/symbolize.h"

/* Formatted locations by address: a trace runs the same few thousand branches
 * again and again (loops), and formatting "addr sym+off (dso)" was most of the
 * cost of a line. A location prints the same while its lookup gives the same
 * answer (the symbolizer's strings stay put while it lives). */
#define SYM_LOC_MEMO_BITS 13
#define SYM_LOC_MEMO (1u << SYM_LOC_MEMO_BITS)
#define SYM_LOC_BYTES 232
struct sym_loc_memo {
	uint64_t addr, func_offset, dso_offset;
	const struct cst_sym_func *func;
	const char *dso, *file;
	int line;
	bool valid;
	uint8_t len;
	char b[SYM_LOC_BYTES];
};

/* The last line's head, which the next line repeats until time or thread moves. */
struct sym_head_memo {
	int32_t pid, tid, cpu;
	uint8_t trace_id;
	uint64_t time;
	const char *comm;
	bool valid;
	uint8_t len;
	char b[SYM_LOC_BYTES];
};

struct cst_script {
	struct cst_script_opts o;
	struct cst_symbolizer *sym;
	struct cst_sym_filter *filter;
	cst_script_write_fn write;
	void *write_ctx;
	bool failed;               /* a write failed: the view returns -cste_io */
	bool mute;                 /* no lines: the models learn, nothing prints (a
				      view on another thread learning, script_view.c) */
	bool perf_clock;           /* times are ns on perf's clock, not ticks */
	struct cst_flow *flow;     /* the branch view */
	struct cst_calls *calls;   /* the call trace */
	struct cst_loss *loss;     /* where trace was lost: a line in place */
	bool at_loss;              /* the element being added is a place of loss */
	/* a view on a decoding thread (script_calls_view.c): its call model is a
	 * stretch's (calls_rel.h), and where a call trace's line is indented it
	 * says so to @indent, with the levels (from the stretch's first frame) and
	 * where in the line, rather than padding (the caller knows the depth) */
	bool stretch;
	void (*indent)(void *ctx, const struct cst_call_event *ev, uint32_t levels, size_t at);
	void *indent_ctx;
	/* lengths of the symbolizer's names by where they are (they stay put and
	 * unchanged while it lives): each line prints a few, most of them again */
	struct {
		const char *p;
		size_t n;
	} lens[256];
	struct cst_line line;      /* the line being built */
	struct sym_loc_memo *memo; /* SYM_LOC_MEMO of them */
	struct sym_head_memo head;
};

/* script_line.c: the parts of a line, each as the fields ask. */
/* The head: comm, pid/tid, cpu, trace ID, time. */
void sym_script_head(struct cst_script *s, const struct cst_elem *e, int32_t pid, uint64_t time);
/* "addr sym+off (dso) file:line". */
void sym_script_loc(struct cst_script *s, uint64_t addr, const struct cst_sym_loc *loc);
/* The line is complete: to the sink, then start the next. */
void sym_script_end_line(struct cst_script *s);

/* script.c: the call trace @s (its mode) made a stretch's view: its model a
 * stretch's, its indents told to @indent. Returns 0 or -cste_nomem. */
int sym_script_stretch(struct cst_script *s,
		       void (*indent)(void *ctx, const struct cst_call_event *ev, uint32_t levels,
				      size_t at),
		       void *ctx);
/* Whether @s's lines depend on the last timestamp: they print times, or a time
 * window keeps them (the views on the decoding threads learn it first). */
static inline bool sym_script_timed(const struct cst_script *s)
{
	return (s->o.fields & cst_script_time) || (s->o.filter && s->o.filter->window);
}

/* ... and whether a stretch's lines of @e's source wait for a timestamp (a
 * source whose programming has timestamps off sends none: its times are 0). */
static inline bool sym_script_needs_ts(const struct cst_script *s, const struct cst_trace *trace,
				       const struct cst_elem *e)
{
	const struct cst_source_cfg *src = cst_trace_elem_source(trace, e);

	return sym_script_timed(s) && (!src || cst_source_timestamps(src));
}

/* script_calls_view.c: line @line (@len bytes, its '\n' last, as a stretch's
 * view wrote it without its indent) into @b with @spaces of indent after its
 * first @head bytes, cut where one thread's line would be (CST_LINE_MAX). */
void sym_script_put_indented(struct cst_buf *b, const char *line, size_t len, size_t head,
			     uint64_t spaces);
/* script_calls_view.c: cst_script_run for the call trace. */
int sym_script_calls_run(struct cst_script *s, struct cst_session *session, cst_sym_elem_fn fn,
			 void *ctx, cst_lines_fn write, void *write_ctx);

#endif
