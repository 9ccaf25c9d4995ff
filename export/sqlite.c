/* The SQLite writer. A new database is written under a temporary name in the same
 * directory (0600: it holds the trace's addresses), without a journal, in one
 * transaction, and linked or renamed into place by the commit: a failed export
 * leaves no database under its name. A capture added to an existing database
 * goes in one transaction with SQLite's rollback journal, which a crash leaves
 * for the next opener to roll back.
 *
 * Speed: rows go through prepared statements, the busiest tables sixteen rows
 * per statement, on a connection without SQLite's mutexes (the writer is used
 * from one thread). */
#include "sqlite_int.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <libgen.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define BATCH 32

struct sq_table {
	sqlite3_stmt *one, *many; /* many: BATCH rows (integer tables only) */
	int ncols;
	int nbuf;
	int64_t *buf;             /* BATCH rows of ncols */
	int64_t *bound;           /* what each parameter of @many holds: SQLite keeps
				     bindings across executions, so only changes are bound */
	bool any_bound;
	/* rows that come in id order let SQLite give the id (NULL binds: no
	 * uniqueness search per row); @last is the last id written */
	bool in_order;
	int64_t last;
};

struct sq {
	sqlite3 *db;
	struct cst_log log;
	char *path, *tmp;         /* tmp: the new database until the commit */
	enum cst_export_existing existing;
	bool fresh, all, calls, began, done;
	bool shaped;              /* perf's indexes and has_calls are there already */
	int64_t first_call;       /* appending: the first calls row of this capture */
	int64_t next[cst_export_ntables];
	struct sq_table t[cst_export_ntables];
};

static int fail(struct sq *q, const char *what)
{
	cst_logf(&q->log, cst_log_error, "%s: %s: %s", q->path, what,
		 q->db ? sqlite3_errmsg(q->db) : "out of memory");
	return q->db && sqlite3_errcode(q->db) == SQLITE_NOTADB ? -cste_format : -cste_io;
}

static int exec(struct sq *q, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(q->db, sql, NULL, NULL, &msg) == SQLITE_OK)
		return 0;
	cst_logf(&q->log, cst_log_error, "%s: %s (%.60s...)", q->path, msg ? msg : "failed", sql);
	sqlite3_free(msg);
	return -cste_io;
}

/* "INSERT INTO t VALUES (?,...),(?,...)" for @rows rows */
static int prepare(struct sq *q, enum cst_export_table t, int rows, sqlite3_stmt **st)
{
	int n = q->t[t].ncols;
	size_t len = 64 + (size_t)rows * (2 * (size_t)n + 3) + 128;
	char *sql = malloc(len), *p;
	int err;

	if (!sql)
		return -cste_nomem;
	p = sql + sprintf(sql, "INSERT INTO %s%s VALUES ", cst_export_table_name(t),
			  t == cst_export_comms ? " (id, comm, c_thread_id, c_time, exec_flag)" : "");
	for (int r = 0; r < rows; r++) {
		*p++ = r ? ',' : '(';
		if (r)
			*p++ = '(';
		for (int c = 0; c < n; c++) {
			*p++ = c ? ',' : '?';
			if (c)
				*p++ = '?';
		}
		*p++ = ')';
	}
	*p = '\0';
	err = sqlite3_prepare_v2(q->db, sql, -1, st, NULL) == SQLITE_OK ? 0 : fail(q, "prepare");
	free(sql);
	return err;
}

static int step(struct sq *q, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	return rc == SQLITE_DONE ? 0 : fail(q, "insert");
}

static bool batched(enum cst_export_table t)
{
	return t == cst_export_samples || t == cst_export_calls || t == cst_export_call_paths;
}

static int flush_table(struct sq *q, struct sq_table *tb)
{
	for (int r = 0; r < tb->nbuf; r++) {
		for (int c = 0; c < tb->ncols; c++)
			sqlite3_bind_int64(tb->one, c + 1, tb->buf[r * tb->ncols + c]);
		if (step(q, tb->one))
			return -cste_io;
	}
	tb->nbuf = 0;
	return 0;
}

static int sq_row(void *ctx, const struct cst_export_row *row)
{
	struct sq *q = ctx;
	struct sq_table *tb;
	struct exp_val v[EXP_MAX_COLS];
	int n;

	if ((unsigned)row->table >= cst_export_ntables || !q->t[row->table].one)
		return -cste_invalid;
	tb = &q->t[row->table];
	n = exp_row_values(row, q->all, v);
	if (batched(row->table)) {
		int64_t *b;

		if (v[0].i == 0 && !tb->nbuf) {
			/* perf's row 0 of a new database: written as it is */
			for (int c = 0; c < n; c++)
				sqlite3_bind_int64(tb->one, c + 1, v[c].i);
			tb->last = 0;
			return step(q, tb->one);
		}
		if (tb->in_order && v[0].i != tb->last + 1) {
			/* out of order: what is buffered goes with its ids, and so does
			 * all that follows */
			int err = flush_table(q, tb);

			if (err)
				return err;
			tb->in_order = false;
			tb->any_bound = false;
		}
		tb->last = v[0].i;
		b = tb->buf + (size_t)tb->nbuf * tb->ncols;
		for (int c = 0; c < n; c++)
			b[c] = v[c].i;
		if (++tb->nbuf < BATCH)
			return 0;
		for (int i = 0; i < BATCH * tb->ncols; i++) {
			if (tb->any_bound && tb->bound[i] == tb->buf[i])
				continue;
			tb->bound[i] = tb->buf[i];
			if (tb->in_order && i % tb->ncols == 0) {
				if (!tb->any_bound)
					sqlite3_bind_null(tb->many, i + 1); /* the next rowid */
				continue;
			}
			sqlite3_bind_int64(tb->many, i + 1, tb->buf[i]);
		}
		tb->any_bound = true;
		tb->nbuf = 0;
		return step(q, tb->many);
	}
	for (int c = 0; c < n; c++) {
		if (v[c].kind == exp_text)
			sqlite3_bind_text(tb->one, c + 1, v[c].s, -1, SQLITE_TRANSIENT);
		else
			sqlite3_bind_int64(tb->one, c + 1, v[c].i);
	}
	return step(q, tb->one);
}

static int sq_start(void *ctx, struct cst_export_start *start)
{
	struct sq *q = ctx;

	memcpy(start->next_id, q->next, sizeof(q->next));
	start->fresh = q->fresh;
	q->first_call = q->fresh ? 0 : q->next[cst_export_calls];
	return 0;
}

static void finalize_all(struct sq *q)
{
	for (int t = 0; t < cst_export_ntables; t++) {
		sqlite3_finalize(q->t[t].one);
		sqlite3_finalize(q->t[t].many);
		free(q->t[t].buf);
		free(q->t[t].bound);
		memset(&q->t[t], 0, sizeof(q->t[t]));
	}
}

/* Make the file durable, then give it its name: link (never over a database that
 * appeared meanwhile) or, replacing, rename. */
static int place(struct sq *q, bool exists_ok)
{
	int fd = open(q->tmp, O_RDONLY | O_CLOEXEC), err = 0;
	char *dir;

	if (fd < 0 || fsync(fd) < 0)
		err = -1;
	if (fd >= 0)
		close(fd);
	if (!err && q->existing == cst_export_replace)
		err = rename(q->tmp, q->path);
	else if (!err) {
		err = link(q->tmp, q->path);
		if (!err || (exists_ok && errno == EEXIST)) {
			err = 0;
			unlink(q->tmp);
		}
	}
	if (err) {
		cst_logf(&q->log, cst_log_error, "%s: %s", q->path,
			 errno == EEXIST ? "appeared while exporting: not replaced" : strerror(errno));
		return errno == EEXIST ? -cste_busy : -cste_io;
	}
	free(q->tmp);
	q->tmp = NULL;
	dir = strdup(q->path);
	if (dir && (fd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC)) >= 0) {
		fsync(fd);
		close(fd);
	}
	free(dir);
	return 0;
}

/* perf's last steps: its indexes, and the comms' has_calls column */
static int shape(struct sq *q)
{
	int err = exec(q, "CREATE INDEX pcpid_idx ON calls (parent_call_path_id)");

	if (!err)
		err = exec(q, "CREATE INDEX pid_idx ON calls (parent_id)");
	if (!err)
		err = exec(q, "ALTER TABLE comms ADD has_calls boolean");
	return err;
}

static int sq_commit(void *ctx)
{
	struct sq *q = ctx;
	char sql[256];
	int err = 0;

	for (int t = 0; !err && t < cst_export_ntables; t++)
		if (q->t[t].nbuf)
			err = flush_table(q, &q->t[t]);
	finalize_all(q);
	if (!err && q->calls && !q->shaped)
		err = shape(q);
	if (!err && q->calls && q->fresh) {
		err = exec(q, "UPDATE comms SET has_calls = 1 WHERE comms.id IN "
			      "(SELECT DISTINCT comm_id FROM calls)");
	} else if (!err && q->calls) {
		snprintf(sql, sizeof(sql),
			 "UPDATE comms SET has_calls = 1 WHERE comms.id IN "
			 "(SELECT DISTINCT comm_id FROM calls WHERE id >= %" PRId64 ")",
			 q->first_call);
		err = exec(q, sql);
	}
	if (!err)
		err = exec(q, "COMMIT");
	if (err)
		return err;
	q->began = false;
	if (sqlite3_close(q->db) != SQLITE_OK)
		return fail(q, "close");
	q->db = NULL;
	if (q->tmp && (err = place(q, false)))
		return err;
	q->done = true;
	return 0;
}

static void sq_free(void *ctx)
{
	struct sq *q = ctx;

	finalize_all(q);
	if (q->db) {
		if (q->began)
			sqlite3_exec(q->db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(q->db);
	}
	if (q->tmp)
		unlink(q->tmp);
	free(q->tmp);
	free(q->path);
	free(q);
}

static int64_t sq_find_event(void *ctx, const char *base)
{
	struct sq *q = ctx;
	sqlite3_stmt *st = NULL;
	int64_t id = 0;

	if (sqlite3_prepare_v2(q->db,
			       "SELECT id FROM selected_events WHERE id > 0 AND (name = ?1 OR "
			       "substr(name, 1, length(?1) + 1) = ?1 || ':') ORDER BY id LIMIT 1",
			       -1, &st, NULL) == SQLITE_OK &&
	    sqlite3_bind_text(st, 1, base, -1, SQLITE_STATIC) == SQLITE_OK &&
	    sqlite3_step(st) == SQLITE_ROW)
		id = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return id;
}

static const char *sq_tmpname(void *ctx)
{
	return ((struct sq *)ctx)->tmp;
}

static int create_schema(struct sq *q)
{
	/* 64 KiB pages: a sixteenth of the writes (the page size is the file's
	 * own; appends keep it) */
	static const char *const pragmas =
		"PRAGMA page_size = 65536; PRAGMA journal_mode = OFF; PRAGMA synchronous = OFF; "
		"PRAGMA locking_mode = EXCLUSIVE; PRAGMA cache_size = -32768";
	int err;

	if ((err = exec(q, pragmas)) || (err = exec(q, "BEGIN TRANSACTION")))
		return err;
	q->began = true;
	for (int t = 0; t < cst_export_ntables; t++) {
		const char *sql = t == cst_export_samples && q->all ? exp_sqlite_samples_all
								    : exp_sqlite_tables[t];

		if (!q->calls && (t == cst_export_calls || t == cst_export_call_paths))
			continue;
		if ((err = exec(q, sql)))
			return err;
	}
	for (int i = 0; exp_sqlite_views[i]; i++) {
		if (!q->calls && (!strncmp(exp_sqlite_views[i], "CREATE VIEW call_paths_view", 27) ||
				  !strncmp(exp_sqlite_views[i], "CREATE VIEW calls_view", 22)))
			continue;
		if ((err = exec(q, exp_sqlite_views[i])))
			return err;
	}
	for (int t = 0; t < cst_export_ntables; t++)
		q->next[t] = 1;
	return 0;
}

static int new_tmp(struct sq *q)
{
	int fd;

	if (asprintf(&q->tmp, "%s.tmp.XXXXXX", q->path) < 0) {
		q->tmp = NULL;
		return -cste_nomem;
	}
	if ((fd = mkstemp(q->tmp)) < 0) { /* 0600 */
		cst_logf(&q->log, cst_log_error, "%s: cannot create: %s", q->path, strerror(errno));
		free(q->tmp);
		q->tmp = NULL;
		return -cste_io;
	}
	close(fd);
	if (sqlite3_open_v2(q->tmp, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
	    SQLITE_OK)
		return fail(q, "cannot create");
	return 0;
}

/* --append to a file not there yet: an empty database of perf's final shape
 * appears first (or the one a concurrent export made meanwhile is taken), and
 * the capture goes into it as into any other. */
static int create_empty(struct sq *q)
{
	int err = new_tmp(q);

	if (!err)
		err = create_schema(q);
	if (!err && q->calls)
		err = shape(q);
	if (!err)
		err = exec(q, "COMMIT");
	q->began = false;
	if (!err && sqlite3_close(q->db) != SQLITE_OK)
		err = fail(q, "close");
	else if (!err)
		q->db = NULL;
	if (!err)
		err = place(q, true);
	return err;
}

static int64_t one_int(struct sq *q, const char *sql, bool *ok)
{
	sqlite3_stmt *st = NULL;
	int64_t v = 0;

	*ok = sqlite3_prepare_v2(q->db, sql, -1, &st, NULL) == SQLITE_OK &&
	      sqlite3_step(st) == SQLITE_ROW;
	if (*ok)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

/* An existing database: perf's export tables, the layout of its samples, the
 * ids it uses. */
static int open_existing(struct sq *q, bool no_calls)
{
	char sql[256];
	bool ok;
	int64_t cols;

	sqlite3_busy_timeout(q->db, 24 * 3600 * 1000); /* concurrent exports take turns */
	if (exec(q, "PRAGMA cache_size = -32768") || exec(q, "BEGIN IMMEDIATE"))
		return -cste_io;
	q->began = true;
	for (int t = 0; t < cst_export_captures; t++) {
		if (no_calls && (t == cst_export_calls || t == cst_export_call_paths))
			continue;
		snprintf(sql, sizeof(sql),
			 "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '%s'",
			 cst_export_table_name(t));
		if (one_int(q, sql, &ok) != 1) {
			if (!ok)
				return fail(q, "not a database");
			cst_logf(&q->log, cst_log_error,
				 "%s: not a database of perf's export schema (no table %s)", q->path,
				 cst_export_table_name(t));
			return -cste_format;
		}
	}
	cols = one_int(q, "SELECT count(*) FROM pragma_table_info('samples')", &ok);
	if (cols != 21 && cols != 25) {
		cst_logf(&q->log, cst_log_error, "%s: its samples table has %" PRId64
			 " columns, not perf's 21 or 25", q->path, cols);
		return -cste_format;
	}
	q->all = cols == 25;
	q->shaped = true;
	/* an empty one (made for --append, below) gets perf's zero rows */
	q->fresh = one_int(q, "SELECT count(*) FROM machines", &ok) == 0 && ok;
	if (one_int(q, "SELECT count(*) FROM sqlite_master WHERE name = 'cstrace_captures'", &ok) == 0 &&
	    exec(q, exp_sqlite_tables[cst_export_captures]))
		return -cste_io;
	for (int t = 0; t < cst_export_captures; t++) {
		if (!q->calls && (t == cst_export_calls || t == cst_export_call_paths)) {
			q->next[t] = 1;
			continue;
		}
		snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) + 1 FROM %s",
			 cst_export_table_name(t));
		q->next[t] = one_int(q, sql, &ok);
		if (!ok)
			return fail(q, "reading ids");
	}
	return 0;
}

int cst_export_sqlite_open(struct cst_export_writer **out, const char *path,
			   const struct cst_export_sqlite_opts *opts)
{
	static const struct cst_export_writer_ops ops = {
		.sz = sizeof(ops), .start = sq_start, .row = sq_row, .commit = sq_commit, .free = sq_free,
		.find_event = sq_find_event};
	CST_OPTS(cst_export_sqlite_opts, o);
	struct sq *q;
	struct stat st;
	bool exists;
	int err;

	if (!out || !path || !*path || cst_opts_load(&o, sizeof(o), opts, "cst_export_sqlite_opts", NULL))
		return -cste_invalid;
	*out = NULL;
	q = calloc(1, sizeof(*q));
	if (!q || !(q->path = strdup(path))) {
		free(q);
		return -cste_nomem;
	}
	if (o.log)
		q->log = *o.log;
	q->existing = o.existing;
	q->all = o.all_columns;
	q->calls = !o.no_calls;
	exists = stat(path, &st) == 0;
	err = 0;
	if (exists && !S_ISREG(st.st_mode)) {
		cst_logf(&q->log, cst_log_error, "%s: not a regular file", path);
		err = -cste_invalid;
	} else if (exists && o.existing == cst_export_refuse) {
		err = -cste_busy; /* the caller says what to do about it */
	}
	/* SQLite's memory statistics cost a global lock per allocation; this takes
	 * effect only before SQLite is first used in the process */
	sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	if (!err && !exists && o.existing == cst_export_append) {
		err = create_empty(q);
		exists = !err;
	}
	if (!err && exists && o.existing == cst_export_append) {
		if (sqlite3_open_v2(path, &q->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) !=
		    SQLITE_OK)
			err = fail(q, "cannot open");
		else
			err = open_existing(q, o.no_calls);
	} else if (!err) {
		q->fresh = true;
		err = new_tmp(q);
		if (!err)
			err = create_schema(q);
	}
	for (int t = 0; !err && t < cst_export_ntables; t++) {
		if (!q->calls && (t == cst_export_calls || t == cst_export_call_paths))
			continue;
		q->t[t].ncols = exp_table_cols(t, q->all);
		err = prepare(q, t, 1, &q->t[t].one);
		if (!err && batched(t)) {
			q->t[t].buf = malloc(sizeof(int64_t) * BATCH * (size_t)q->t[t].ncols);
			q->t[t].bound = malloc(sizeof(int64_t) * BATCH * (size_t)q->t[t].ncols);
			err = q->t[t].buf && q->t[t].bound ? prepare(q, t, BATCH, &q->t[t].many)
							   : -cste_nomem;
			/* the first row's id is the next free one, or 0 in a new database */
			q->t[t].in_order = true;
			q->t[t].last = q->next[t] - 1;
		}
	}
	if (!err && (err = cst_export_writer_alloc(out, &ops, q)) == 0)
		(*out)->tmpname = sq_tmpname;
	if (err)
		sq_free(q);
	return err;
}
