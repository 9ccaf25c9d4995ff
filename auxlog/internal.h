/* The recorded AUX stream's byte layout, shared by the reader and the writer. */
#ifndef CSTRACE_AUXLOG_INTERNAL_H
#define CSTRACE_AUXLOG_INTERNAL_H

#include "cstrace/auxlog.h"

#define AUXLOG_MAGIC "CSTAUXLG"
#define AUXLOG_VERSION 1
#define AUXLOG_FILE_HEADER 16  /* magic, u32 version, u32 header size */
#define AUXLOG_EVENT_HEADER 24 /* u32 type, u32 zero, u64 size (with header), u64 time */
/* No event is larger: a read holds at most one data area and one AUX area. */
#define AUXLOG_MAX_EVENT (UINT64_C(1) << 36)

/* Bytes of an event being decoded; reads past the end set @bad. */
struct acur {
	const uint8_t *p;
	uint64_t len, pos;
	bool bad;
};

/* Encode @ev's payload (no event header) into @b. -cste_invalid when @ev cannot be
 * encoded, -cste_nomem. */
int auxlog_encode(struct cst_buf *b, const struct cst_auxlog_event *ev);

/* Arrays a decoded event points into, grown as needed and owned by the reader. */
struct ascratch {
	const char **argv;
	size_t argv_cap;
	uint64_t *ids;
	size_t ids_cap;
};

/* Decode a payload of @type into @ev. Strings point into @c's bytes (stored with
 * their NUL), arrays into @s, and the ETM info's CPUs are allocated (the caller
 * frees them with cst_perf_etm_info_fini). Returns 0, -cste_format with @why set,
 * or -cste_nomem. */
int auxlog_decode(struct acur *c, uint32_t type, struct cst_auxlog_event *ev, struct ascratch *s,
		  const char **why);

#endif
