/* cstrace export stage: the symbolized trace as the database perf's
 * export-to-sqlite.py and export-to-postgresql.py write (tables samples, comms,
 * threads, comm_threads, dsos, symbols, branch_types, calls, call_paths, machines,
 * selected_events and their views), so that perf's exported-sql-viewer.py and the
 * queries written for those databases work unchanged (docs/export.md).
 *
 * The export model turns the symbolized element stream into perf's rows: branch
 * samples by the rules of perf's cs-etm decoder (--itrace=b), calls and call paths
 * by perf's call/return processor, threads and comms as perf's machine keeps them.
 * A writer stores the rows: SQLite (a new file appears whole, or a capture is added
 * to an existing one in one transaction) or PostgreSQL (binary COPY, one
 * transaction per capture). */
#ifndef CSTRACE_EXPORT_H
#define CSTRACE_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"
#include "cstrace/decode.h"
#include "cstrace/symbolize.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * perf's values.
 * ------------------------------------------------------------------------ */

/** Sample flags (perf's PERF_IP_FLAG_*): samples.flags, and samples.branch_type,
 *  whose names the branch_types table holds. */
#define CST_EXPORT_FLAG_BRANCH (1u << 0)
#define CST_EXPORT_FLAG_CALL (1u << 1)
#define CST_EXPORT_FLAG_RETURN (1u << 2)
#define CST_EXPORT_FLAG_CONDITIONAL (1u << 3)
#define CST_EXPORT_FLAG_SYSCALLRET (1u << 4)
#define CST_EXPORT_FLAG_ASYNC (1u << 5)
#define CST_EXPORT_FLAG_INTERRUPT (1u << 6)
#define CST_EXPORT_FLAG_TX_ABORT (1u << 7)
#define CST_EXPORT_FLAG_TRACE_BEGIN (1u << 8)
#define CST_EXPORT_FLAG_TRACE_END (1u << 9)
#define CST_EXPORT_FLAG_IN_TX (1u << 10)
#define CST_EXPORT_FLAG_VMENTRY (1u << 11)
#define CST_EXPORT_FLAG_VMEXIT (1u << 12)

/** calls.flags (perf's CALL_RETURN_*): "no call", "no return", and a branch to
 *  another function's start that was not a call ("jump" with no return). */
#define CST_EXPORT_CALL_NO_CALL 1
#define CST_EXPORT_CALL_NO_RETURN 2
#define CST_EXPORT_CALL_NON_CALL 4

/** The rows of perf's branch_types table, in id order, ending with a NULL name:
 *  the flag combinations perf names, and their "trace begin" / "trace end" forms. */
struct cst_export_branch_type {
	int32_t id;
	const char *name;
};
const struct cst_export_branch_type *cst_export_branch_types(void);

/** The name perf gives a synthesized event: @base ("branches", "instructions")
 *  and the modifiers of the traced event's attr flags (CST_PERF_ATTR_* word: ":u"
 *  when only user space was traced, as perf's evsel__name), into @out.
 *  Returns @out. */
const char *cst_export_event_name(const char *base, uint64_t attr_flags, char *out, size_t size);

/* ------------------------------------------------------------------------
 * Rows: one struct per table, perf's columns in perf's order. Ids count from
 * 1 in each table (0 is perf's "unknown" row of a new database); strings stay
 * valid during the call that hands the row over.
 * ------------------------------------------------------------------------ */

enum cst_export_table {
	cst_export_selected_events = 0,
	cst_export_machines,
	cst_export_threads,
	cst_export_comms,
	cst_export_comm_threads,
	cst_export_dsos,
	cst_export_symbols,
	cst_export_branch_types_table,
	cst_export_samples,
	cst_export_call_paths,
	cst_export_calls,
	cst_export_captures,       /* cstrace's own: which input each machine row is */
	cst_export_ntables
};

/** The table's name in the database ("samples"). */
const char *cst_export_table_name(enum cst_export_table t);

struct cst_export_evsel_row {
	int64_t id;
	const char *name;
};
struct cst_export_machine_row {
	int64_t id;
	int32_t pid;               /* -1: the host */
	const char *root_dir;
};
struct cst_export_thread_row {
	int64_t id, machine_id;
	int64_t process_id;        /* the main thread's row (0: unknown) */
	int32_t pid, tid;
};
struct cst_export_comm_row {
	int64_t id;
	const char *comm;
	int64_t thread_id;         /* the thread that took the name */
	uint64_t time;             /* when (0: unknown) */
	bool exec;                 /* by exec */
};
struct cst_export_comm_thread_row {
	int64_t id, comm_id, thread_id;
};
struct cst_export_dso_row {
	int64_t id, machine_id;
	const char *short_name, *long_name, *build_id; /* build_id: hex, "" unknown */
};
struct cst_export_symbol_row {
	int64_t id, dso_id;
	uint64_t start, end;       /* in the binary's file offsets, end exclusive, as
				      perf relates symbols to its maps */
	int32_t binding;           /* 0 local, 1 global, 2 weak */
	const char *name;
};
struct cst_export_sample_row {
	int64_t id, evsel_id, machine_id, thread_id, comm_id, dso_id, symbol_id;
	uint64_t sym_offset, ip, time;
	int32_t cpu;
	int64_t to_dso_id, to_symbol_id;
	uint64_t to_sym_offset, to_ip;
	uint64_t period, weight, transaction, data_src; /* the "all" columns only */
	int32_t branch_type;
	bool in_tx;
	int64_t call_path_id;
	uint64_t insn_count, cyc_count;
	int32_t flags;
};
struct cst_export_call_path_row {
	int64_t id, parent_id, symbol_id;
	uint64_t ip;               /* 0 when the symbol is known */
};
struct cst_export_call_row {
	int64_t id, thread_id, comm_id, call_path_id;
	uint64_t call_time, return_time, branch_count;
	int64_t call_id, return_id; /* the samples that called and returned (0: none) */
	int64_t parent_call_path_id;
	int32_t flags;             /* CST_EXPORT_CALL_* */
	int64_t parent_id;         /* the calling call's row */
	uint64_t insn_count, cyc_count;
};

/** cstrace_captures: a table perf's scripts do not have (so none of their queries
 *  sees it), one row per exported capture. */
struct cst_export_capture_row {
	int64_t machine_id;        /* this capture's machines row */
	const char *path;          /* the input as given */
	const char *tool;          /* "cstrace 0.1.0" */
	uint64_t samples, calls;
};

struct cst_export_row {
	enum cst_export_table table;
	union {
		struct cst_export_evsel_row evsel;
		struct cst_export_machine_row machine;
		struct cst_export_thread_row thread;
		struct cst_export_comm_row comm;
		struct cst_export_comm_thread_row comm_thread;
		struct cst_export_dso_row dso;
		struct cst_export_symbol_row symbol;
		struct cst_export_branch_type branch_type;
		struct cst_export_sample_row sample;
		struct cst_export_call_path_row call_path;
		struct cst_export_call_row call;
		struct cst_export_capture_row capture;
	} u;
};

/* ------------------------------------------------------------------------
 * Writers: where rows go. SQLite and PostgreSQL are two backends of one
 * interface; a program may add its own (cst_export_writer_alloc).
 * ------------------------------------------------------------------------ */

/** What a writer says before the first row of a capture. */
struct cst_export_start {
	int64_t next_id[cst_export_ntables]; /* the first id free in each table (1 in a
						new database) */
	bool fresh;                /* a new database: the model writes perf's id-0 rows
				      and the branch types first */
};

/** A writer's operations; @ctx is what cst_export_writer_alloc was given. */
struct cst_export_writer_ops {
	size_t sz;                 /* sizeof(struct cst_export_writer_ops) */
	/** Before the first row: fill @start. */
	int (*start)(void *ctx, struct cst_export_start *start);
	int (*row)(void *ctx, const struct cst_export_row *row);
	/** After the last row: make the capture part of the database for good. */
	int (*commit)(void *ctx);
	/** Release; without a commit, leave the database as it was. */
	void (*free)(void *ctx);
	/** Optional: the id of an event in the database (not a new one) whose name
	 *  is @base ("branches") up to its first ':', else 0. A database keeps one
	 *  such row for all its captures: perf's exported-sql-viewer.py fails to
	 *  start with two "branches" events. */
	int64_t (*find_event)(void *ctx, const char *base);
};

struct cst_export_writer;

/** A writer calling @ops with @ctx. Errors: -cste_invalid, -cste_nomem. */
int cst_export_writer_alloc(struct cst_export_writer **out, const struct cst_export_writer_ops *ops,
			    void *ctx);
/** Commit what was written (cst_export_finish calls it). Errors: the backend's. */
int cst_export_writer_commit(struct cst_export_writer *w);
/** Free @w (NULL is ignored); a writer not committed leaves no trace of this
 *  capture in the database (and no new file). */
void cst_export_writer_free(struct cst_export_writer *w);
/** A file the writer creates under a temporary name until its commit (to be
 *  removed if the process dies first), or NULL. */
const char *cst_export_writer_tmpname(const struct cst_export_writer *w);

/** What to do with a database that exists. */
enum cst_export_existing {
	cst_export_refuse = 0,     /* -cste_busy */
	cst_export_replace,        /* a new database takes its place at the commit */
	cst_export_append,         /* add this capture to it */
};

struct cst_export_sqlite_opts {
	size_t sz;                 /* sizeof(struct cst_export_sqlite_opts) */
	const struct cst_log *log;
	enum cst_export_existing existing;
	bool all_columns;          /* a new database gets perf's "all" samples columns
				      (period, weight, transaction_, data_src) */
	bool no_calls;             /* no calls and call_paths tables (as the model's) */
	uint8_t reserved[2];       /* zero: no padding at the end (common.h's rule) */
};

/** SQLite at @path. A new database is written to a temporary file in the same
 *  directory (0600) and renamed to @path by the commit; an appended capture goes
 *  into the existing file in one transaction. Errors (logged): -cste_invalid,
 *  -cste_busy (@path exists and @opts refuse it), -cste_format (not a database
 *  of perf's export schema, to append to), -cste_io, -cste_nomem. */
int cst_export_sqlite_open(struct cst_export_writer **out, const char *path,
			   const struct cst_export_sqlite_opts *opts);

struct cst_export_postgres_opts {
	size_t sz;                 /* sizeof(struct cst_export_postgres_opts) */
	const struct cst_log *log;
	bool all_columns;          /* when the tables are created here */
	bool no_calls;             /* this capture has no calls rows */
	uint8_t reserved[6];
	/* the copy at the commit: bytes sent of all there are */
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
};

/** PostgreSQL through libpq (libpq.so.5, loaded now): @conninfo names the server
 *  and database ("host=db dbname=traces"). The tables and views are created when
 *  the database has none; each capture adds its rows (a machines entry of its own)
 *  by binary COPY in one transaction, under a lock that makes concurrent exports
 *  take turns. Rows wait in unnamed temporary files until the commit. Errors
 *  (logged): -cste_invalid, -cste_unsupported (libpq cannot be loaded),
 *  -cste_not_found (the server refused the connection), -cste_format (tables of
 *  another layout), -cste_io, -cste_nomem. */
int cst_export_postgres_open(struct cst_export_writer **out, const char *conninfo,
			     const struct cst_export_postgres_opts *opts);

/** Whether the PostgreSQL writer can run here (libpq.so.5 loads). */
bool cst_export_have_postgres(void);

/* ------------------------------------------------------------------------
 * The export model.
 * ------------------------------------------------------------------------ */

struct cst_export_opts {
	size_t sz;                 /* sizeof(struct cst_export_opts) */
	const struct cst_log *log;
	struct cst_symbolizer *sym;  /* binaries (paths, build-ids) and code bytes */
	const struct cst_trace *trace; /* the sources' protocols (exception kinds) */
	const char *capture;       /* the input's path, for the cstrace_captures table */
	uint64_t attr_flags;       /* the traced event's attr flags (CST_PERF_ATTR_*,
				      event names' modifiers); 0 when unknown */
	bool comm_exec;            /* the recording marks exec comms (attr comm_exec):
				      samples take the main thread's exec comm */
	bool instructions;         /* also one sample per instruction (perf's
				      --itrace=i1i) of an "instructions" event */
	bool no_calls;             /* no calls and call_paths rows */
	uint8_t reserved[5];
};

struct cst_export;

/** A model writing to @w (which it does not own). Errors: -cste_invalid,
 *  -cste_nomem, and the writer's start errors. */
int cst_export_alloc(struct cst_export **out, struct cst_export_writer *w,
		     const struct cst_export_opts *opts);
void cst_export_free(struct cst_export *e);

/** Account one symbolized element seen at @time (a cst_calls_add-like sink: pass
 *  the model as @e). Returns 0 or a negative error (a writer's). */
int cst_export_add(void *e, const struct cst_sym_elem *se, uint64_t time);

/** Apply a sideband record (comm, fork): threads and their names. A
 *  cst_sideband_fn. Returns 0 or a negative error. */
int cst_export_sideband(void *e, const struct cst_sideband *sb);

/** End the capture: the calls still open end without a return (as perf flushes
 *  its thread stacks), then the writer commits. Returns 0 or an error. */
int cst_export_finish(struct cst_export *e);

struct cst_export_stats {
	uint64_t samples;          /* branch samples (and instruction samples) */
	uint64_t calls, call_paths;
	uint64_t threads, comms, dsos, symbols;
	uint32_t max_depth;        /* deepest thread stack */
	uint32_t reserved;
	uint64_t stacks_cut;       /* stacks emptied at 65536 entries */
};

/** Totals so far. Errors: -cste_invalid. */
int cst_export_get_stats(const struct cst_export *e, struct cst_export_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_EXPORT_H */
