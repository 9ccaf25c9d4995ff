/* The PostgreSQL writer's schema (pg_schema.c). */
#ifndef CSTRACE_EXPORT_PG_INT_H
#define CSTRACE_EXPORT_PG_INT_H

#include "export_int.h"

/* libpq is loaded when a PostgreSQL export begins (libpq.so.5), not linked: it
 * brings two dozen libraries (TLS, Kerberos, LDAP) that every other run of cstrace
 * would map for nothing. Its declarations are the header's when the build has it
 * (and the loaded functions' types are checked against them), else the few below,
 * libpq's stable ABI. */
#if defined(__has_include)
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#define EXP_LIBPQ_HEADER 1
#endif
#endif
#ifndef EXP_LIBPQ_HEADER
typedef struct pg_conn PGconn;
typedef struct pg_result PGresult;
typedef unsigned int Oid;
typedef enum { CONNECTION_OK = 0, CONNECTION_BAD } ConnStatusType;
typedef enum {
	PGRES_EMPTY_QUERY = 0,
	PGRES_COMMAND_OK,
	PGRES_TUPLES_OK,
	PGRES_COPY_OUT,
	PGRES_COPY_IN,
} ExecStatusType;
#endif

/* The libpq functions the writer calls. */
struct exp_pq {
	void *lib;
	PGconn *(*connectdb)(const char *conninfo);
	ConnStatusType (*status)(const PGconn *conn);
	char *(*error_message)(const PGconn *conn);
	PGresult *(*exec)(PGconn *conn, const char *query);
	PGresult *(*exec_params)(PGconn *conn, const char *command, int nparams, const Oid *types,
				 const char *const *values, const int *lengths, const int *formats,
				 int result_format);
	ExecStatusType (*result_status)(const PGresult *res);
	char *(*result_error_message)(const PGresult *res);
	void (*clear)(PGresult *res);
	int (*ntuples)(const PGresult *res);
	char *(*getvalue)(const PGresult *res, int row, int col);
	int (*put_copy_data)(PGconn *conn, const char *buffer, int nbytes);
	int (*put_copy_end)(PGconn *conn, const char *errormsg);
	PGresult *(*get_result)(PGconn *conn);
	void (*finish)(PGconn *conn);
};

/** Load libpq.so.5 into @pq. Returns 0, or -cste_unsupported (logged with why). */
int exp_pq_load(struct exp_pq *pq, const struct cst_log *log);
void exp_pq_unload(struct exp_pq *pq);

/* CREATE TABLE per table, perf's text; samples with the "branches" columns */
extern const char *const exp_pg_tables[cst_export_ntables];
/* samples with perf's "all" columns */
extern const char exp_pg_samples_all[];
/* CREATE VIEW, in perf's order, NULL-terminated */
extern const char *const exp_pg_views[];
/* ALTER TABLE ... ADD PRIMARY KEY per table of perf's (NULL: none) */
extern const char *const exp_pg_keys[cst_export_ntables];
/* ALTER TABLE ... ADD CONSTRAINT ... FOREIGN KEY, per table, NULL-terminated; the
 * last two are call_paths' and calls' */
extern const char *const exp_pg_foreign[];

#endif
