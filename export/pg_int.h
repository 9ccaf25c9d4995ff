/* The PostgreSQL writer's schema (pg_schema.c). */
#ifndef CSTRACE_EXPORT_PG_INT_H
#define CSTRACE_EXPORT_PG_INT_H

#include "export_int.h"

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
