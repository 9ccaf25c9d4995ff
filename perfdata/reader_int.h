/* Internal to perfdata/: the reader's state, shared by reader.c (the file, the
 * read window, opening), reader_features.c (feature sections and attrs) and
 * reader_records.c (record iteration). */
#ifndef CSTRACE_PERFDATA_READER_INT_H
#define CSTRACE_PERFDATA_READER_INT_H

#include "cstrace/perfdata.h"

#define DEFAULT_WINDOW (256u * 1024u)
#define MIN_WINDOW (128u * 1024u) /* above the largest record (64 KiB) */
#define MAX_FEATURE_SIZE (64ull << 20)
#define MAX_IDS (1ull << 24)

struct cst_perf_reader {
	char *path;
	int fd;
	uint64_t file_size;
	struct cst_log log;
	bool has_log;

	uint64_t attr_offset, attr_size, attr_entry;
	uint64_t data_offset, data_size, data_end;
	uint64_t feat_bits[4];
	bool incomplete;

	struct cst_perf_attr *attrs;
	int nattrs;
	struct cst_perf_features feat;

	/* Record iteration */
	uint8_t *win;
	size_t win_cap;
	uint64_t win_off, win_len;
	uint64_t pos;
	uint64_t count;
	bool stopped; /* a bad record ended iteration */
	uint64_t skips_told; /* records skipped or clipped below this offset were
				warned of (a rewound reader tells each once) */
	char *str;    /* NUL-terminated copy of a record's string */
	size_t str_cap;
};

/* reader.c */
/* One line: "<file>: offset <n>: <message>" as the brief asks of every error. */
void pd_rlog(const struct cst_perf_reader *r, enum cst_log_level lvl, uint64_t off,
	     const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* Read exactly @len bytes at @off. Returns 0, a read error, or -cste_truncated. */
int pd_read_exact(struct cst_perf_reader *r, uint64_t off, void *buf, uint64_t len);
/* @len bytes at @off through the read window, or NULL with *err set. */
const uint8_t *pd_window_get(struct cst_perf_reader *r, uint64_t off, uint64_t len, int *err);
/* The range lies inside the file. */
bool pd_in_file(const struct cst_perf_reader *r, uint64_t off, uint64_t size);

/* reader_features.c */
int pd_read_features(struct cst_perf_reader *r);
int pd_read_attrs(struct cst_perf_reader *r);

#endif
