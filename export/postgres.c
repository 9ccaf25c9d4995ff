/* The PostgreSQL writer, through libpq: rows are kept per table in PostgreSQL's
 * binary COPY format in unnamed temporary files (memory stays bounded whatever
 * the trace), and the commit copies each table in (COPY ... FROM STDIN, never row
 * by row) inside one transaction that began with the export. The first capture
 * creates perf's tables and views and, after its rows, perf's keys and indexes;
 * later captures add their rows with ids after the ones there. A transaction-wide
 * advisory lock makes exports to one database take turns, so that concurrent
 * fleet exports never share an id. */
#include "pg_int.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* pg_advisory_xact_lock's key for cstrace exports ("CSTRACE" in ASCII) */
#define LOCK_KEY "18950445061980997"
#define SPOOL 65536

struct pg_table {
	struct cst_spill spill;
	uint8_t *buf;              /* rows not yet in the spill */
	size_t n;
	uint64_t rows;
};

struct pg {
	struct exp_pq pq;
	PGconn *conn;
	struct cst_log log;
	bool fresh, all, calls, began;
	int64_t next[cst_export_ntables];
	int64_t first_call;
	struct pg_table t[cst_export_ntables];
	void (*progress)(void *ctx, uint64_t done, uint64_t total);
	void *progress_ctx;
	int io_err;
};

static int pg_fail(struct pg *p, const char *what, PGresult *res)
{
	const char *msg = res ? p->pq.result_error_message(res) : p->conn ? p->pq.error_message(p->conn) : "";
	char line[1024];
	size_t n = 0;

	/* libpq's messages run over lines (a hint, a line number): one line here */
	for (const char *c = msg; *c && n + 3 < sizeof(line); c++) {
		if (*c == '\n' || *c == '\t') {
			if (n && line[n - 1] != ' ' && c[1])
				line[n++] = ' ';
			continue;
		}
		line[n++] = *c;
	}
	while (n && line[n - 1] == ' ')
		n--;
	line[n] = '\0';
	cst_logf(&p->log, cst_log_error, "postgres: %s: %s", what, line);
	if (res)
		p->pq.clear(res);
	return -cste_io;
}

static int run(struct pg *p, const char *sql)
{
	PGresult *res = p->pq.exec(p->conn, sql);
	ExecStatusType st = p->pq.result_status(res);

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		char what[80];

		snprintf(what, sizeof(what), "%.60s", sql);
		return pg_fail(p, what, res);
	}
	p->pq.clear(res);
	return 0;
}

static int64_t one_int(struct pg *p, const char *sql, bool *ok)
{
	PGresult *res = p->pq.exec(p->conn, sql);
	int64_t v = 0;

	*ok = p->pq.result_status(res) == PGRES_TUPLES_OK && p->pq.ntuples(res) == 1;
	if (*ok)
		v = strtoll(p->pq.getvalue(res, 0, 0), NULL, 10);
	else
		pg_fail(p, sql, NULL);
	p->pq.clear(res);
	return v;
}

/* ---- rows in COPY's binary format */

static int spool(struct pg *p, struct pg_table *t, const void *b, size_t n)
{
	if (t->n + n > SPOOL) {
		uint64_t off;

		if (cst_spill_write(&t->spill, t->buf, t->n, &off) < 0) {
			cst_logf(&p->log, cst_log_error, "postgres: temporary file: write failed");
			return -cste_io;
		}
		t->n = 0;
	}
	memcpy(t->buf + t->n, b, n);
	t->n += n;
	return 0;
}

static void be16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void be32(uint8_t *b, uint32_t v)
{
	be16(b, (uint16_t)(v >> 16));
	be16(b + 2, (uint16_t)v);
}

static void be64(uint8_t *b, uint64_t v)
{
	be32(b, (uint32_t)(v >> 32));
	be32(b + 4, (uint32_t)v);
}

static int pg_row(void *ctx, const struct cst_export_row *row)
{
	static const uint8_t header[19] = "PGCOPY\n\377\r\n\0\0\0\0\0\0\0\0";
	struct pg *p = ctx;
	struct pg_table *t;
	struct exp_val v[EXP_MAX_COLS];
	uint8_t b[EXP_MAX_COLS * 12 + 2], *o = b;
	int n, err;

	if ((unsigned)row->table >= cst_export_ntables || !p->t[row->table].buf)
		return -cste_invalid;
	t = &p->t[row->table];
	if (!t->rows && (err = spool(p, t, header, sizeof(header))))
		return err;
	n = exp_row_values(row, p->all, v);
	be16(o, (uint16_t)n);
	o += 2;
	for (int c = 0; c < n; c++) {
		switch (v[c].kind) {
		case exp_i8:
			be32(o, 8);
			be64(o + 4, (uint64_t)v[c].i);
			o += 12;
			break;
		case exp_i4:
			be32(o, 4);
			be32(o + 4, (uint32_t)v[c].i);
			o += 8;
			break;
		case exp_bool:
			be32(o, 1);
			o[4] = v[c].i ? 1 : 0;
			o += 5;
			break;
		case exp_text: {
			/* the server takes UTF-8 only: other bytes as \xNN */
			char s[4096 * 4 + 1];
			size_t len = strlen(cst_printable(v[c].s, s, sizeof(s)));
			uint8_t lb[4];

			if ((err = spool(p, t, b, (size_t)(o - b))))
				return err;
			o = b;
			be32(lb, (uint32_t)len);
			if ((err = spool(p, t, lb, 4)) || (err = spool(p, t, s, len)))
				return err;
			break;
		}
		}
	}
	t->rows++;
	return spool(p, t, b, (size_t)(o - b));
}

static int pg_start(void *ctx, struct cst_export_start *start)
{
	struct pg *p = ctx;

	memcpy(start->next_id, p->next, sizeof(p->next));
	start->fresh = p->fresh;
	p->first_call = p->next[cst_export_calls];
	return 0;
}

static int64_t pg_find_event(void *ctx, const char *base)
{
	struct pg *p = ctx;
	const char *params[1] = {base};
	PGresult *res = p->pq.exec_params(p->conn,
				     "SELECT id FROM selected_events WHERE id > 0 AND (name = $1 OR "
				     "substr(name, 1, length($1) + 1) = $1 || ':') ORDER BY id LIMIT 1",
				     1, NULL, params, NULL, NULL, 0);
	int64_t id = 0;

	if (p->pq.result_status(res) == PGRES_TUPLES_OK && p->pq.ntuples(res) == 1)
		id = strtoll(p->pq.getvalue(res, 0, 0), NULL, 10);
	p->pq.clear(res);
	return id;
}

/* COPY one table's rows in from its temporary file. */
static int copy_table(struct pg *p, enum cst_export_table tt, uint64_t *done, uint64_t total)
{
	struct pg_table *t = &p->t[tt];
	static const uint8_t trailer[2] = {0xff, 0xff};
	char sql[160];
	PGresult *res;
	uint64_t off = 0, end;
	uint8_t *chunk;
	int err = 0;

	if (!t->rows)
		return 0;
	if ((err = spool(p, t, trailer, sizeof(trailer))))
		return err;
	snprintf(sql, sizeof(sql), "COPY %s%s FROM STDIN (FORMAT binary)", cst_export_table_name(tt),
		 tt == cst_export_comms ? " (id, comm, c_thread_id, c_time, exec_flag)" : "");
	res = p->pq.exec(p->conn, sql);
	if (p->pq.result_status(res) != PGRES_COPY_IN)
		return pg_fail(p, sql, res);
	p->pq.clear(res);
	end = t->spill.end;
	chunk = malloc(1 << 20);
	if (!chunk)
		err = -cste_nomem;
	/* what went to the file, then what is still in memory */
	while (!err && off < end) {
		size_t n = end - off > (1 << 20) ? (1 << 20) : (size_t)(end - off);

		if (cst_spill_read(&t->spill, off, chunk, n) < 0)
			err = -cste_io;
		else if (p->pq.put_copy_data(p->conn, (const char *)chunk, (int)n) != 1)
			err = pg_fail(p, "COPY", NULL);
		off += n;
		*done += n;
		if (p->progress)
			p->progress(p->progress_ctx, *done, total);
	}
	if (!err && t->n && p->pq.put_copy_data(p->conn, (const char *)t->buf, (int)t->n) != 1)
		err = pg_fail(p, "COPY", NULL);
	*done += t->n;
	free(chunk);
	if (p->pq.put_copy_end(p->conn, err ? "cstrace: export failed" : NULL) != 1 && !err)
		err = pg_fail(p, "COPY", NULL);
	while ((res = p->pq.get_result(p->conn))) {
		if (p->pq.result_status(res) != PGRES_COMMAND_OK && !err)
			err = pg_fail(p, cst_export_table_name(tt), res);
		else
			p->pq.clear(res);
	}
	cst_spill_close(&t->spill);
	t->n = 0;
	return err;
}

static int pg_commit(void *ctx)
{
	struct pg *p = ctx;
	uint64_t total = 0, done = 0;
	char sql[256];
	int err = 0;

	for (int t = 0; t < cst_export_ntables; t++)
		total += p->t[t].spill.end + p->t[t].n + 2;
	for (int t = 0; !err && t < cst_export_ntables; t++)
		err = copy_table(p, t, &done, total);
	if (!err && p->fresh) {
		/* perf's keys and indexes, once the rows are in */
		for (int t = 0; !err && t < cst_export_ntables; t++)
			if (exp_pg_keys[t] && (p->calls || (t != cst_export_calls && t != cst_export_call_paths)))
				err = run(p, exp_pg_keys[t]);
		for (int i = 0; !err && exp_pg_foreign[i]; i++)
			if (p->calls || (strncmp(exp_pg_foreign[i], "ALTER TABLE calls ", 18) &&
					 strncmp(exp_pg_foreign[i], "ALTER TABLE call_paths ", 23)))
				err = run(p, exp_pg_foreign[i]);
		if (!err && p->calls) {
			err = run(p, "CREATE INDEX pcpid_idx ON calls (parent_call_path_id)");
			if (!err)
				err = run(p, "CREATE INDEX pid_idx ON calls (parent_id)");
			if (!err)
				err = run(p, "ALTER TABLE comms ADD has_calls boolean");
			if (!err)
				err = run(p, "UPDATE comms SET has_calls = TRUE WHERE comms.id IN "
					     "(SELECT DISTINCT comm_id FROM calls)");
		}
	} else if (!err && p->calls) {
		snprintf(sql, sizeof(sql),
			 "UPDATE comms SET has_calls = TRUE WHERE comms.id IN "
			 "(SELECT DISTINCT comm_id FROM calls WHERE id >= %" PRId64 ")",
			 p->first_call);
		err = run(p, sql);
	}
	if (!err)
		err = run(p, "COMMIT");
	if (!err)
		p->began = false;
	return err;
}

static void pg_free(void *ctx)
{
	struct pg *p = ctx;

	if (p->conn) {
		if (p->began)
			p->pq.clear(p->pq.exec(p->conn, "ROLLBACK"));
		p->pq.finish(p->conn);
	}
	exp_pq_unload(&p->pq);
	for (int t = 0; t < cst_export_ntables; t++) {
		cst_spill_close(&p->t[t].spill);
		free(p->t[t].buf);
	}
	free(p);
}

static bool is_perf_table(int t, bool calls)
{
	return t != cst_export_captures &&
	       (calls || (t != cst_export_calls && t != cst_export_call_paths));
}

/* Create perf's tables, or check the ones there and learn their next ids. */
static int prepare_db(struct pg *p)
{
	char sql[512];
	int have = 0, want = 0;
	bool ok;

	for (int t = 0; t < cst_export_ntables; t++) {
		if (!is_perf_table(t, p->calls))
			continue;
		want++;
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM pg_tables WHERE schemaname = "
					   "current_schema() AND tablename = '%s'",
			 cst_export_table_name(t));
		have += (int)one_int(p, sql, &ok);
		if (!ok)
			return -cste_io;
	}
	if (!have) {
		p->fresh = true;
		for (int t = 0; t < cst_export_ntables; t++) {
			const char *create = t == cst_export_samples && p->all ? exp_pg_samples_all
									       : exp_pg_tables[t];

			if ((is_perf_table(t, p->calls) || t == cst_export_captures) && run(p, create))
				return -cste_io;
			p->next[t] = 1;
		}
		for (int i = 0; exp_pg_views[i]; i++) {
			if (!p->calls && (!strncmp(exp_pg_views[i], "CREATE VIEW call_paths_view", 27) ||
					  !strncmp(exp_pg_views[i], "CREATE VIEW calls_view", 22)))
				continue;
			if (run(p, exp_pg_views[i]))
				return -cste_io;
		}
		return 0;
	}
	if (have != want) {
		cst_logf(&p->log, cst_log_error,
			 "postgres: the database has %d of the %d tables of perf's export schema", have,
			 want);
		return -cste_format;
	}
	{
		int64_t cols = one_int(p,
				       "SELECT count(*) FROM information_schema.columns WHERE "
				       "table_schema = current_schema() AND table_name = 'samples'",
				       &ok);

		if (!ok)
			return -cste_io;
		if (cols != 21 && cols != 25) {
			cst_logf(&p->log, cst_log_error,
				 "postgres: its samples table has %" PRId64 " columns, not perf's 21 or 25",
				 cols);
			return -cste_format;
		}
		p->all = cols == 25;
	}
	if (one_int(p, "SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND "
		       "tablename = 'cstrace_captures'",
		    &ok) == 0 && ok && run(p, exp_pg_tables[cst_export_captures]))
		return -cste_io;
	for (int t = 0; t < cst_export_captures; t++) {
		if (!is_perf_table(t, p->calls)) {
			p->next[t] = 1;
			continue;
		}
		snprintf(sql, sizeof(sql), "SELECT coalesce(max(id), 0) + 1 FROM %s",
			 cst_export_table_name(t));
		p->next[t] = one_int(p, sql, &ok);
		if (!ok)
			return -cste_io;
	}
	return 0;
}

int cst_export_postgres_open(struct cst_export_writer **out, const char *conninfo,
			     const struct cst_export_postgres_opts *opts)
{
	static const struct cst_export_writer_ops ops = {
		.sz = sizeof(ops), .start = pg_start, .row = pg_row, .commit = pg_commit, .free = pg_free,
		.find_event = pg_find_event};
	CST_OPTS(cst_export_postgres_opts, o);
	struct pg *p;
	int err = 0;

	if (!out || !conninfo ||
	    cst_opts_load(&o, sizeof(o), opts, "cst_export_postgres_opts", NULL))
		return -cste_invalid;
	*out = NULL;
	p = calloc(1, sizeof(*p));
	if (!p)
		return -cste_nomem;
	if (o.log)
		p->log = *o.log;
	p->all = o.all_columns;
	p->calls = !o.no_calls;
	p->progress = o.progress;
	p->progress_ctx = o.progress_ctx;
	for (int t = 0; !err && t < cst_export_ntables; t++)
		if (is_perf_table(t, p->calls) || t == cst_export_captures)
			if (!(p->t[t].buf = malloc(SPOOL)))
				err = -cste_nomem;
	if (!err)
		err = exp_pq_load(&p->pq, &p->log);
	if (!err) {
		p->conn = p->pq.connectdb(conninfo);
		if (!p->conn || p->pq.status(p->conn) != CONNECTION_OK) {
			pg_fail(p, "cannot connect", NULL);
			err = -cste_not_found;
		}
	}
	if (!err && (run(p, "SET client_min_messages TO WARNING") || run(p, "BEGIN")))
		err = -cste_io;
	if (!err) {
		p->began = true;
		err = run(p, "SELECT pg_advisory_xact_lock(" LOCK_KEY ")");
	}
	if (!err)
		err = prepare_db(p);
	if (!err)
		err = cst_export_writer_alloc(out, &ops, p);
	if (err)
		pg_free(p);
	return err;
}

bool cst_export_have_postgres(void)
{
	struct exp_pq pq;
	struct cst_log quiet = {0};

	if (exp_pq_load(&pq, &quiet) < 0)
		return false;
	exp_pq_unload(&pq);
	return true;
}
