/* The export model's private declarations: perf's objects as its database export
 * sees them (threads with their comms, dsos, symbols, call paths, thread stacks),
 * the cs-etm sample rules and the writer backends. */
#ifndef CSTRACE_EXPORT_INT_H
#define CSTRACE_EXPORT_INT_H

#include "cstrace/export.h"

/* ---- map.c: an open-addressing hash from up to three 64-bit keys to a pointer */

struct exp_map_slot {
	uint64_t k1, k2, k3;
	void *v;                   /* NULL: empty */
};
struct exp_map {
	struct exp_map_slot *s;
	size_t cap, n;             /* cap: a power of two, or 0 */
};
void *exp_map_get(const struct exp_map *m, uint64_t k1, uint64_t k2, uint64_t k3);
/** Add @v (not NULL) under a key not in the map yet. Returns 0 or -cste_nomem. */
int exp_map_put(struct exp_map *m, uint64_t k1, uint64_t k2, uint64_t k3, void *v);
void exp_map_del(struct exp_map *m, uint64_t k1, uint64_t k2, uint64_t k3);
void exp_map_free(struct exp_map *m);
/** Every value, in slot order (the caller sorts what needs an order). */
#define EXP_MAP_EACH(m, i) for (size_t i = 0; i < (m)->cap; i++) if ((m)->s[i].v)

/* ---- objects.c: what perf's machine keeps, with the rows' ids (0: not written) */

struct exp_comm {
	char *name;
	uint64_t time;
	bool exec;
	int64_t db_id;
	struct exp_comm *older;    /* the thread's comm before this one */
};

struct exp_stack;

struct exp_thread {
	int32_t pid, tid;
	int64_t db_id;
	struct exp_comm *comm;     /* newest first */
	bool comm_set;             /* a COMM or fork named it (else it is ":tid") */
	struct exp_stack *stacks;  /* callret.c: one, or one per CPU for the idle task */
	uint32_t nstacks;
	uint64_t order;            /* creation order, to tell replaced threads apart */
};

struct exp_sym;
struct exp_dso {
	const char *key;           /* cst_sym_loc.dso: stable for the symbolizer's life */
	int64_t db_id;
	char *short_name, *long_name, *build_id;
	/* perf's dso->last_find_result: the last address looked up and its symbol */
	uint64_t cache_addr;
	struct exp_sym *cache_sym;
};

struct exp_sym {
	struct exp_dso *dso;
	const char *name;          /* the symbolizer's, or "unknown" */
	uint64_t start, end;       /* file offsets (perf's map-relative addresses) */
	int32_t binding;
	int64_t db_id;
};

/* ---- callret.c: perf's call paths and thread stacks */

struct exp_path {
	struct exp_path *parent;
	const struct exp_sym *sym; /* NULL: no symbol (then @ip is kept) */
	uint64_t ip;
	int64_t db_id;
	bool in_kernel;
};

struct exp_entry {
	uint64_t ret_addr, timestamp, ref, branch_count, insn_count, cyc_count;
	int64_t db_id;
	struct exp_path *cp;
	bool no_call, trace_end, non_call;
};

struct exp_stack {
	struct exp_entry *e;
	size_t n, cap;
	uint64_t branch_count, insn_count, cyc_count, last_time;
	const struct exp_comm *comm;
	bool used;
};

/* One branch sample as perf's call/return processor sees it. */
struct exp_branch {
	struct exp_thread *thread;
	const struct exp_comm *comm; /* the sample's comm (the main thread's exec comm) */
	int32_t cpu;
	uint32_t flags;
	uint64_t ip, addr, time;
	uint8_t insn_len;          /* of the instruction at @ip (0: none) */
	uint64_t insn_cnt, cyc_cnt;
	const struct exp_sym *from, *to; /* NULL: no binary there */
	uint64_t to_map_addr;      /* @addr in the binary's file offsets */
	int64_t ref;               /* the sample's id */
};

/* ---- the model (model.c) */

/* One sample to write, as the cs-etm rules (branches.c) make it. */
struct exp_sample_in {
	bool insns;                /* an instruction sample: no target, no call processing */
	int32_t pid, tid, cpu;
	uint64_t time, ip, addr;   /* ip 0: from where trace began; addr 0: trace ended */
	uint32_t flags;
	uint8_t insn_len;          /* of the instruction at @ip */
	const struct cst_sym_piece *from, *to; /* the pieces @ip and @addr lie in */
	uint64_t insn_count;
};
/* sample.c: a sample and what it names; the capture's machine row, once */
int exp_sample(struct cst_export *e, const struct exp_sample_in *in);
int exp_machine_export(struct cst_export *e);

#define EXP_NIDS 128
#define EXP_MAX_DEPTH 65536

/* A trace ID's queue as perf's cs-etm keeps one: the packet before the current
 * one, which a branch sample leaves from. */
enum exp_prev { exp_prev_empty = 0, exp_prev_range, exp_prev_gap };
struct exp_queue {
	enum exp_prev kind;
	uint32_t flags;            /* perf's packet flags of the previous packet */
	bool taken;                /* the previous range ended in a taken branch, or
				      an exception followed it */
	uint64_t last_ip, end;     /* its last instruction, and the address after it */
	uint8_t last_size;
	enum cst_isa isa;
	uint8_t el;                /* its exception level (0 when unknown) */
	int32_t pid;               /* the address space it ran in */
	const struct cst_sym_piece *piece; /* its last piece (the symbolizer's cache) */
	uint64_t insns;            /* instructions since the last branch sample */
};

struct cst_export {
	struct cst_export_opts opts;
	struct cst_log log;
	struct cst_export_writer *w;
	int64_t next[cst_export_ntables]; /* the next id of each table */
	bool fresh;
	int64_t machine_id, evsel_branches, evsel_insns;
	char branches_name[64], insns_name[64];
	struct exp_queue q[EXP_NIDS];

	struct exp_map threads;    /* by tid: the live thread of that tid */
	struct exp_thread **all_threads; /* every thread made, for the final flush */
	size_t nall, all_cap;
	uint64_t thread_order;
	struct exp_map dsos;       /* by cst_sym_loc.dso pointer */
	struct exp_map syms;       /* by function, or (dso, address) for "unknown" */
	struct exp_map paths;      /* by (parent, symbol, ip) */
	struct exp_path root;
	struct exp_map code;       /* conditional-branch answers, by (pid, address) */
	struct cst_export_stats st;
	bool finished;
	/* the last sample's thread and comm, until a sideband record changes them */
	struct exp_thread *last_thread;
	const struct exp_comm *last_comm;
	int32_t last_pid, last_tid;
	uint64_t sb_gen, last_gen;
};

/* objects.c */
struct exp_thread *exp_thread_findnew(struct cst_export *e, int32_t pid, int32_t tid);
int exp_thread_set_comm(struct cst_export *e, struct exp_thread *t, const char *name,
			uint64_t time, bool exec);
int exp_fork(struct cst_export *e, int32_t pid, int32_t tid, int32_t ppid, int32_t ptid,
	     uint64_t time);
/** The rows of db_export__threads for a sample of @t: it, its main thread, their
 *  comms. *@comm gets the sample's comm (NULL: none). */
int exp_threads_export(struct cst_export *e, struct exp_thread *t, const struct exp_comm **comm);
/* Where a sample's end is, as perf's addr_location has it. */
struct exp_loc {
	struct exp_dso *dso;       /* NULL: no binary mapped there */
	struct exp_sym *sym;       /* NULL: none found (yet) */
	uint64_t map_addr;         /* the address in the binary's file offsets */
};
/** perf's symbol lookup for @addr of piece @pc (map__find_symbol, through the
 *  binary's one-entry cache). Returns 0 or -cste_nomem. */
int exp_loc_find(struct cst_export *e, const struct cst_sym_piece *pc, uint64_t addr,
		 struct exp_loc *l);
/** perf's db_ids_from_al: where a binary has no symbol, one named "unknown" at
 *  the address; the binary's and the symbol's rows written if not yet; their ids
 *  and the address's offset in the symbol. */
int exp_loc_export(struct cst_export *e, struct exp_loc *l, int64_t *dso_id, int64_t *sym_id,
		   uint64_t *off);
void exp_objects_free(struct cst_export *e);

/* branches.c: the cs-etm packet rules */
int exp_branches_add(struct cst_export *e, const struct cst_sym_elem *se, uint64_t time);

/* callret.c */
int exp_callret_branch(struct cst_export *e, const struct exp_branch *b);
/** Flush every thread's stacks, as perf does when it deletes its threads. */
int exp_callret_flush_all(struct cst_export *e);
void exp_callret_free(struct cst_export *e);

/* The writers' shared parts (writer.c). */
struct cst_export_writer {
	struct cst_export_writer_ops ops;
	void *ctx;
	const char *(*tmpname)(void *ctx);
	bool committed;
};
/* One row to the writer. */
static inline int exp_emit(struct cst_export *e, const struct cst_export_row *row)
{
	return e->w->ops.row(e->w->ctx, row);
}

/* A row's columns in table order, with perf's PostgreSQL types. */
enum exp_kind { exp_i8, exp_i4, exp_bool, exp_text };
struct exp_val {
	enum exp_kind kind;
	int64_t i;
	const char *s;
};
#define EXP_MAX_COLS 25
/** The values of @r (@all: samples with perf's "all" columns). Returns how many. */
int exp_row_values(const struct cst_export_row *r, bool all, struct exp_val *v);
/** Columns of table @t's rows. */
int exp_table_cols(enum cst_export_table t, bool all);

/** Hex of a build-id into @out (2 * @n + 1 bytes). */
void exp_hex(const uint8_t *id, size_t n, char *out);

/* perf's first five views, the same words in export-to-sqlite.py and
 * export-to-postgresql.py: the start of both view lists. */
#define EXP_VIEWS_SHARED \
	/* machines_view */ \
	"CREATE VIEW machines_view AS SELECT id,pid,root_dir," \
	"CASE WHEN id=0 THEN 'unknown' WHEN pid=-1 THEN 'host' ELSE 'guest' END AS host_or_guest FROM machines", \
	/* dsos_view */ \
	"CREATE VIEW dsos_view AS SELECT id,machine_id," \
	"(SELECT host_or_guest FROM machines_view WHERE id = machine_id) AS host_or_guest," \
	"short_name,long_name,build_id FROM dsos", \
	/* symbols_view */ \
	"CREATE VIEW symbols_view AS SELECT id,name," \
	"(SELECT short_name FROM dsos WHERE id=dso_id) AS dso,dso_id,sym_start," \
	"sym_end," \
	"CASE WHEN binding=0 THEN 'local' WHEN binding=1 THEN 'global' ELSE 'weak' END AS binding FROM symbols", \
	/* threads_view */ \
	"CREATE VIEW threads_view AS SELECT id,machine_id," \
	"(SELECT host_or_guest FROM machines_view WHERE id = machine_id) AS host_or_guest," \
	"process_id,pid,tid FROM threads", \
	/* comm_threads_view */ \
	"CREATE VIEW comm_threads_view AS SELECT comm_id," \
	"(SELECT comm FROM comms WHERE id = comm_id) AS command,thread_id," \
	"(SELECT pid FROM threads WHERE id = thread_id) AS pid," \
	"(SELECT tid FROM threads WHERE id = thread_id) AS tid FROM comm_threads",

#endif
