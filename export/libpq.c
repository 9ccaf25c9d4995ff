/* libpq, loaded when a PostgreSQL export needs it (pg_int.h says why). */
#include "pg_int.h"

#include <dlfcn.h>
#include <string.h>

#ifdef EXP_LIBPQ_HEADER
/* the types below are libpq's own */
#define SAME(f, member)                                                                   \
	_Static_assert(__builtin_types_compatible_p(__typeof__(&f),                       \
						    __typeof__(((struct exp_pq *)0)->member)), \
		       #f " as libpq-fe.h declares it")
SAME(PQconnectdb, connectdb);
SAME(PQstatus, status);
SAME(PQerrorMessage, error_message);
SAME(PQexec, exec);
SAME(PQexecParams, exec_params);
SAME(PQresultStatus, result_status);
SAME(PQresultErrorMessage, result_error_message);
SAME(PQclear, clear);
SAME(PQntuples, ntuples);
SAME(PQgetvalue, getvalue);
SAME(PQputCopyData, put_copy_data);
SAME(PQputCopyEnd, put_copy_end);
SAME(PQgetResult, get_result);
SAME(PQfinish, finish);
#endif

int exp_pq_load(struct exp_pq *pq, const struct cst_log *log)
{
	static const struct {
		const char *name;
		size_t offset;
	} fns[] = {
		{"PQconnectdb", offsetof(struct exp_pq, connectdb)},
		{"PQstatus", offsetof(struct exp_pq, status)},
		{"PQerrorMessage", offsetof(struct exp_pq, error_message)},
		{"PQexec", offsetof(struct exp_pq, exec)},
		{"PQexecParams", offsetof(struct exp_pq, exec_params)},
		{"PQresultStatus", offsetof(struct exp_pq, result_status)},
		{"PQresultErrorMessage", offsetof(struct exp_pq, result_error_message)},
		{"PQclear", offsetof(struct exp_pq, clear)},
		{"PQntuples", offsetof(struct exp_pq, ntuples)},
		{"PQgetvalue", offsetof(struct exp_pq, getvalue)},
		{"PQputCopyData", offsetof(struct exp_pq, put_copy_data)},
		{"PQputCopyEnd", offsetof(struct exp_pq, put_copy_end)},
		{"PQgetResult", offsetof(struct exp_pq, get_result)},
		{"PQfinish", offsetof(struct exp_pq, finish)},
	};

	memset(pq, 0, sizeof(*pq));
	pq->lib = dlopen("libpq.so.5", RTLD_NOW | RTLD_LOCAL);
	if (!pq->lib) {
		cst_logf(log, cst_log_error,
			 "postgres: libpq cannot be loaded (install libpq5): %s", dlerror());
		return -cste_unsupported;
	}
	for (size_t i = 0; i < sizeof(fns) / sizeof(fns[0]); i++) {
		void *f = dlsym(pq->lib, fns[i].name);

		if (!f) {
			cst_logf(log, cst_log_error, "postgres: libpq.so.5 has no %s", fns[i].name);
			exp_pq_unload(pq);
			return -cste_unsupported;
		}
		/* a function pointer stored as dlsym gives it (POSIX allows this) */
		memcpy((char *)pq + fns[i].offset, &f, sizeof(f));
	}
	return 0;
}

void exp_pq_unload(struct exp_pq *pq)
{
	if (pq->lib)
		dlclose(pq->lib);
	memset(pq, 0, sizeof(*pq));
}
