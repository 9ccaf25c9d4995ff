/* The SQLite writer's schema (sqlite_schema.c). */
#ifndef CSTRACE_EXPORT_SQLITE_INT_H
#define CSTRACE_EXPORT_SQLITE_INT_H

#include "export_int.h"

/* CREATE TABLE per table, perf's text; samples with the "branches" columns */
extern const char *const exp_sqlite_tables[cst_export_ntables];
/* samples with perf's "all" columns (period, weight, transaction_, data_src) */
extern const char exp_sqlite_samples_all[];
/* CREATE VIEW, in perf's order, NULL-terminated */
extern const char *const exp_sqlite_views[];

#endif
