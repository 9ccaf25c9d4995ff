/* Internal to symbolize/: what the views share (the profile's ranges, coverage,
 * XML escaping, the JSON half of merge). */
#ifndef CSTRACE_SYMBOLIZE_VIEWS_INT_H
#define CSTRACE_SYMBOLIZE_VIEWS_INT_H

#include <pthread.h>

#include "cstrace/symbolize.h"

/* view_pool.c: the views of one run on the decoding threads
 * (cst_symbolizer_run_views), one per worker thread, each over a symbolizer reader
 * of its own and kept from one split run to the next. A view starts with a
 * struct sym_view_worker; its kind's @make makes the rest over @reader (NULL on
 * failure), @free_view frees the rest (the pool frees the reader).
 * sym_view_pool_open and sym_view_pool_close are the kind's ops' worker_open and
 * worker_close; the ops' context is the pool, whose @ctx is sym_view_pool_run's. */
struct sym_view_worker {
	struct sym_view_worker *next_idle, *next;
	struct cst_symbolizer *reader;
	struct cst_sym_counts held;     /* the block's counts before a deferred element */
	struct cst_sym_counts learning; /* counts of what the view learnt from, thrown away */
};
struct sym_view_pool {
	pthread_mutex_t lock;
	struct sym_view_worker *idle, *all;
	struct cst_symbolizer *sym;
	struct sym_view_worker *(*make)(void *ctx, struct cst_symbolizer *reader);
	void (*free_view)(void *ctx, struct sym_view_worker *w);
	void *ctx;
};
struct sym_view_kind {
	const struct cst_view_ops *ops;
	struct sym_view_worker *(*make)(void *ctx, struct cst_symbolizer *reader);
	void (*free_view)(void *ctx, struct sym_view_worker *w);
};
/* A view defers @e and learns from it (@fn over what its reader makes of it):
 * the block's counts so far are kept aside, and what symbolizing @e counted is
 * thrown away (the caller's thread counts it). Returns what the feed returns. */
int sym_view_learn(struct sym_view_worker *w, const struct cst_elem *e, cst_sym_elem_fn fn,
		   void *ctx);
/* The counts of the block that ends: those kept aside and those since, into
 * @out (overwritten). */
void sym_view_block_counts(struct sym_view_worker *w, struct cst_sym_counts *out);
void *sym_view_pool_open(void *pool);
void sym_view_pool_close(void *pool, void *worker);
/* cst_symbolizer_run_views over @sym with views of @kind, made with @ctx, in a
 * pool that lives for the run. */
int sym_view_pool_run(struct cst_symbolizer *sym, struct cst_session *session,
		      const struct sym_view_kind *kind, void *ctx, cst_sym_elem_fn fn,
		      void *fn_ctx, cst_lines_fn write, void *write_ctx);

/* filter.c: the latest timestamp of trace ID @id as it stands (0: none yet),
 * which a view on another thread hands over (pscript_view.c, script_view.c);
 * sym_filter_clear_ts forgets every ID's. */
uint64_t sym_filter_last_ts(const struct cst_sym_filter *f, uint8_t id);
/* A time window keeps an element of trace ID @id by the ID's last timestamp,
 * which a stretch may not have seen yet (the caller's thread sees them all). */
bool sym_filter_window_unknown(const struct cst_sym_filter *f, uint8_t id);
void sym_filter_set_last_ts(struct cst_sym_filter *f, uint8_t id, uint64_t ts);
void sym_filter_clear_ts(struct cst_sym_filter *f);
/* The time a range of trace ID @id gets here (cst_sym_filter_time's). */
uint64_t sym_filter_time_of(const struct cst_sym_filter *f, uint8_t id);

/* flow.c: what the flow model knows of trace ID @id, for a view on another
 * thread to hand over (script_view.c): the range waiting to learn where it went,
 * with only its last piece (its pieces are one symbolizer's), and whether a call
 * tree started. Not the call depth: a stretch of the stream cannot know it, and
 * the views that hand over never read it. sym_flow_clear forgets every ID. */
struct sym_flow_state {
	struct cst_flow_range pending; /* npieces 0 or 1: @last */
	struct cst_sym_piece last;
	bool valid, started;
};
void sym_flow_state(const struct cst_flow *flow, uint8_t id, struct sym_flow_state *st);
void sym_flow_adopt(struct cst_flow *flow, uint8_t id, const struct sym_flow_state *st);
void sym_flow_clear(struct cst_flow *flow);

/* report.c: @from's rows added to @to's (the same keys). Returns 0,
 * -cste_invalid or -cste_nomem. */
int sym_report_merge(struct cst_report *to, const struct cst_report *from);
/* loss.c: code ran on @trace_id (a range went elsewhere, to another thread's
 * view): its next loss is a place of its own. */
void sym_loss_ran(struct cst_loss *loss, uint8_t trace_id);
/* loss.c: what the loss model knows of trace ID @id (whether its last place is
 * still open, and that place), for a view on another thread to hand over
 * (script_view.c), with the totals it counted since they were last taken;
 * sym_loss_clear forgets everything. */
struct sym_loss_state {
	bool open;
	struct cst_loss_gap last; /* elem NULL */
};
void sym_loss_state(const struct cst_loss *loss, uint8_t id, struct sym_loss_state *st);
void sym_loss_adopt(struct cst_loss *loss, uint8_t id, const struct sym_loss_state *st);
void sym_loss_take_totals(struct cst_loss *loss, struct cst_loss_totals *t);
void sym_loss_add_totals(struct cst_loss *loss, const struct cst_loss_totals *t);
void sym_loss_clear(struct cst_loss *loss);

/* count_table.c: the profiles' counts, keyed by binary (the symbolizer's
 * string), two addresses and kind, in the order each was first made. */
struct sym_count {
	const char *dso;
	uint64_t a, b;             /* range: first and last instruction; branch: from, to */
	uint64_t n;
	bool branch;
};
struct sym_count_table {
	struct sym_count *v;
	size_t cap;
	uint32_t n;
	uint32_t *index;           /* open addressing: count + 1, 0 empty */
	uint32_t icap;
};
/* Add @n to a count (made last if new). Returns 0 or -cste_nomem. */
int sym_count_bump(struct sym_count_table *t, const char *dso, uint64_t a, uint64_t b,
		   bool branch, uint64_t n);
/* @from's counts added to @to's, in @from's order. Returns 0 or -cste_nomem. */
int sym_count_add(struct sym_count_table *to, const struct sym_count_table *from);
/* Move @from's counts into @to (which holds none), leaving @from empty. */
void sym_count_take(struct sym_count_table *to, struct sym_count_table *from);
void sym_count_free(struct sym_count_table *t);

/* A profile's models of one trace ID, handed over by a view on another thread
 * (report_view_run.c): the range running on (autofdo.c), the range simpleperf's
 * counting holds (afdo_simpleperf.c) and the control-flow model's. */
struct sym_afdo_range {
	const char *dso;
	uint64_t first, last;      /* binary addresses */
	uint64_t end;              /* runtime address after the last instruction */
	bool open;
};
struct sym_afdo_pending {
	const char *dso;
	uint64_t start, end;   /* the binary's addresses of its first and last instruction */
	uint64_t to;           /* the branch's target there (0: none known) */
	uint64_t end_rt;       /* runtime address of the last instruction */
	int32_t pid;
	enum cst_isa isa;
	bool open, taken, fix; /* fix: a taken direct branch, target from the next range */
	bool kept;             /* by the filter (--dsos, --symbols): written out */
};
struct sym_afdo_state {
	struct sym_afdo_range range;
	struct sym_afdo_pending sp;
	struct sym_flow_state flow;
};
void sym_afdo_state(const struct cst_afdo *p, uint8_t id, struct sym_afdo_state *st);
void sym_afdo_adopt(struct cst_afdo *p, uint8_t id, const struct sym_afdo_state *st);
/* Forget every trace ID's models (the counts stay). */
void sym_afdo_clear(struct cst_afdo *p);
/* While muted, the models move and nothing is counted: what a view learns from,
 * or what it defers, the caller's thread counts. */
void sym_afdo_mute(struct cst_afdo *p, bool mute);
/* The counts made since the last take, moved out (@out: zeroed tables first), and
 * added to a profile in the stream's order. Returns 0 or -cste_nomem. */
struct sym_afdo_counts {
	struct sym_count_table counts, sp;
};
void sym_afdo_take(struct cst_afdo *p, struct sym_afdo_counts *out);
int sym_afdo_add(struct cst_afdo *p, const struct sym_afdo_counts *c);
void sym_afdo_counts_free(struct sym_afdo_counts *c);

/* Call @fn(ctx, first, last, count) for each range of the binary @dso (the
 * symbolizer's own string for it). Returns 0 or -cste_invalid. */
int sym_afdo_ranges(struct cst_afdo *p, const char *dso,
		    void (*fn)(void *ctx, uint64_t first, uint64_t last, uint64_t n), void *ctx);
/* Call @fn(ctx, a, b, count) for each range (first, last) or, with @branch, each
 * branch (from, to) of @dso that its profgen profile holds (those above its load
 * @base, no branch to another binary), sorted, in link addresses.
 * Returns 0 or -cste_nomem. */
int sym_afdo_profgen_counts(struct cst_afdo *p, const char *dso, uint64_t base, bool branch,
			    void (*fn)(void *ctx, uint64_t a, uint64_t b, uint64_t n), void *ctx);
/* The profile has ranges in @dso. */
bool sym_afdo_has(const struct cst_afdo *p, const char *dso);
/* Whether the profile's filter keeps function @func (NULL: none) of @dso. */
bool sym_afdo_keeps(const struct cst_afdo *p, const char *dso, const char *func);
struct cst_symbolizer *sym_afdo_symbolizer(struct cst_afdo *p);
/* The binary of the profile that @dso names (path or base name), an ELF: its
 * symbolizer string, with @info filled; NULL if none (or out of memory). */
const char *sym_afdo_find_dso(struct cst_afdo *p, const char *dso, struct cst_sym_dso_info *info);

/* afdo_simpleperf.c: the counts of AutoFDO's text as simpleperf's inject makes
 * them from ETM trace (one range per decoded range, a taken branch to the next
 * range's start when it is direct, else to 0), and that text. @kept: the
 * element's first piece is kept by the profile's filter. */
struct sym_afdo_sp;
struct sym_afdo_sp *sym_afdo_sp_alloc(struct cst_symbolizer *sym);
void sym_afdo_sp_free(struct sym_afdo_sp *s);
int sym_afdo_sp_add(struct sym_afdo_sp *s, const struct cst_sym_elem *se, bool kept);
int sym_afdo_sp_finish(struct sym_afdo_sp *s);
int sym_afdo_sp_write(struct sym_afdo_sp *s, FILE *f);
/* Its half of the hand-over above: @id's pending range, every ID's forgotten,
 * muting, and its counts. */
void sym_afdo_sp_state(const struct sym_afdo_sp *s, uint8_t id, struct sym_afdo_pending *st);
void sym_afdo_sp_adopt(struct sym_afdo_sp *s, uint8_t id, const struct sym_afdo_pending *st);
void sym_afdo_sp_clear(struct sym_afdo_sp *s);
void sym_afdo_sp_mute(struct sym_afdo_sp *s, bool mute);
struct sym_count_table *sym_afdo_sp_counts(struct sym_afdo_sp *s);

/* Line coverage (coverage.c): every code-owning line of every function with
 * debug information in the profile's binaries and how often it ran, sorted by
 * file and line; and each function's entry line with the times it was entered. */
struct sym_func;
struct sym_cov_line {
	const char *file;
	int line;
	uint64_t n;
	const struct sym_func *func;
};
/* A conditional branch: how often it ran and went each way. */
struct sym_cov_branch {
	const char *file;
	int line;
	uint64_t addr;
	uint64_t ran, taken, not_taken;
};
struct sym_cov {
	struct sym_cov_line *lines;
	size_t nlines, cap;
	struct sym_cov_line *funcs;
	size_t nfuncs, fcap;
	struct sym_cov_branch *branches;
	size_t nbranches, bcap;
};
int sym_cov_collect(struct cst_afdo *p, struct sym_cov *c);
void sym_cov_free(struct sym_cov *c);

/* One source file of a coverage: its lines [lines, lines_end) and functions
 * [funcs, funcs_end) in the sym_cov arrays, with their totals. */
struct sym_cov_file {
	const char *file;
	size_t lines, lines_end, funcs, funcs_end, branches, branches_end;
	unsigned lf, lh, fnf, fnh, brf, brh;
};
/* Step @fl (zeroed to start) to the next file; false after the last. */
bool sym_cov_next_file(const struct sym_cov *c, struct sym_cov_file *fl);

/* Counts by address (coverage.c): sort @v and add up equal addresses, returning
 * the new length; the count at @addr of a reduced array (0 if absent); the index
 * of its first entry at or above @addr. */
struct sym_addr_count {
	uint64_t addr, n;
};
size_t sym_counts_reduce(struct sym_addr_count *v, size_t n);
uint64_t sym_counts_at(const struct sym_addr_count *v, size_t n, uint64_t addr);
size_t sym_counts_lower_bound(const struct sym_addr_count *v, size_t n, uint64_t addr);

/* The profile's taken branches of @dso: @fn(ctx, from, to, count). */
int sym_afdo_branches(struct cst_afdo *p, const char *dso,
		      void (*fn)(void *ctx, uint64_t from, uint64_t to, uint64_t n), void *ctx);
/* branches.c: add the conditional branches of @f to @c, with @executed(ctx, addr)
 * giving how often an address ran. */
struct dso;
int sym_cov_branches(struct cst_afdo *p, struct dso *dso, struct sym_func *f,
		     uint64_t (*executed)(void *ctx, uint64_t addr), void *ctx, struct sym_cov *c);

/* sample_tree.c: an LLVM sample profile being built. Each record is a function
 * profile (node), a body location of one (line) or a call target of a line. */
enum { sym_sp_node, sym_sp_line, sym_sp_target };
struct sym_sp_rec {
	const char *name;          /* node: the function; target: the callee */
	uint64_t n;                /* node: total samples; line: body samples; target: calls */
	uint64_t head;             /* node: head samples */
	uint32_t parent;           /* node: parent node + 1 (0: top level); line: its node;
				    * target: its line */
	uint32_t off, disc;        /* node: call site in the parent; line: the location */
	uint8_t kind;
};
struct sym_sp_tree {
	struct sym_sp_rec *r;
	uint32_t n;
	size_t cap;
	uint32_t *index;           /* open addressing over r: index + 1, 0 empty */
	uint32_t icap;
	int err;                   /* the first failure (-cste_nomem) */
};
/* The record of that key, made (zeroed) if new: its index, or UINT32_MAX once
 * out of memory. @name must live as long as the tree. */
uint32_t sym_sp_get(struct sym_sp_tree *t, uint8_t kind, uint32_t parent, uint32_t off,
		    uint32_t disc, const char *name);
/* A top-level location counts at least the calls made from it (llvm-profgen's
 * updateCallsiteSamples). */
void sym_sp_raise_to_calls(struct sym_sp_tree *t);
/* LLVM's text format: functions by total (most first), then name. Errors:
 * the tree's, -cste_nomem, -cste_io. */
int sym_sp_write(const struct sym_sp_tree *t, FILE *f);
void sym_sp_free(struct sym_sp_tree *t);

/* Write @s with XML's special characters escaped (SVG and HTML views). */
void sym_put_xml(FILE *f, const char *s);

/* merge_json.c: cstrace merge of report JSON files (one-line errors to @log). */
int sym_merge_json(const char *const *paths, int n, FILE *out, const struct cst_log *log);

#endif
