/* Merging the outputs of many captures: folded stacks, AutoFDO and profgen
 * profiles and lcov tracefiles of the same format are read, their counts summed
 * per key, and written sorted. Sums and a canonical order make merging
 * associative and independent of the order of the inputs, so a fleet's captures
 * can be reduced in any grouping (GNU parallel on many hosts, then one merge). */
#include "views_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* One counted thing: its binary or file or stack (@key), kind, addresses or line,
 * and name. */
struct rec {
	char *key;
	char *name;
	uint64_t a, b, n;
	int kind;
};

enum kind {
	k_range = 1,     /* autofdo, profgen */
	k_addr,          /* autofdo */
	k_branch,        /* autofdo, profgen */
	k_binary,        /* autofdo: the binary's block (key = path, name = build-id line) */
	k_fn,            /* lcov: a = line */
	k_fnda,          /* lcov */
	k_da,            /* lcov: a = line */
	k_brda,          /* lcov: a = line, b = block * 2 + branch, n = times taken */
	k_brda_ran,      /* lcov: the same key, n = inputs where the branch ran (not "-") */
	k_stack,         /* folded */
};

struct merge {
	struct rec *v;
	size_t n, cap;
	const struct cst_log *log;
	const char *path;
	unsigned line;
};

static int bad(struct merge *m, const char *what)
{
	cst_logf(m->log, cst_log_error, "%s:%u: %s", m->path, m->line, what);
	return -cste_format;
}

static int add(struct merge *m, const char *key, const char *name, int kind, uint64_t a,
	       uint64_t b, uint64_t n)
{
	struct rec *r;

	if (CST_GROW(m->v, m->cap, m->n + 1) < 0)
		return -cste_nomem;
	r = &m->v[m->n];
	r->key = strdup(key ? key : "");
	r->name = strdup(name ? name : "");
	if (!r->key || !r->name) {
		free(r->key);
		free(r->name);
		return -cste_nomem;
	}
	r->kind = kind;
	r->a = a;
	r->b = b;
	r->n = n;
	m->n++;
	return 0;
}

static int cmp(const void *x, const void *y)
{
	const struct rec *p = x, *q = y;
	int c = strcmp(p->key, q->key);

	if (c)
		return c;
	if (p->kind != q->kind)
		return p->kind - q->kind;
	if (p->a != q->a)
		return p->a < q->a ? -1 : 1;
	if (p->b != q->b)
		return p->b < q->b ? -1 : 1;
	return strcmp(p->name, q->name);
}

/* Sort, then add up equal records (an lcov FN line keeps the smallest line). */
static void reduce(struct merge *m)
{
	size_t w = 0;

	if (m->n > 1) /* no records (empty inputs): m->v is NULL, which qsort must not see */
		qsort(m->v, m->n, sizeof(*m->v), cmp);
	for (size_t i = 0; i < m->n; i++) {
		struct rec *r = &m->v[i];

		if (w && !cmp(&m->v[w - 1], r)) {
			m->v[w - 1].n += r->n;
			free(r->key);
			free(r->name);
		} else {
			m->v[w++] = *r;
		}
	}
	m->n = w;
}

static bool parse_u64(const char *s, int base, uint64_t *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, base);
	return end != s && !*end && !errno && *s != '-';
}

/* "a-b:n" or "a->b:n" (hex addresses, decimal count). */
static bool parse_pair(char *s, const char *sep, uint64_t *a, uint64_t *b, uint64_t *n)
{
	char *x = strstr(s, sep), *colon;

	if (!x)
		return false;
	*x = '\0';
	colon = strchr(x + strlen(sep), ':');
	if (!colon)
		return false;
	*colon = '\0';
	return parse_u64(s, 16, a) && parse_u64(x + strlen(sep), 16, b) && parse_u64(colon + 1, 10, n);
}

static char *next_line(struct merge *m, FILE *f, char **buf, size_t *cap)
{
	ssize_t len = getline(buf, cap, f);

	if (len < 0)
		return NULL;
	m->line++;
	while (len > 0 && ((*buf)[len - 1] == '\n' || (*buf)[len - 1] == '\r'))
		(*buf)[--len] = '\0';
	return *buf;
}

/* A counted section: a count line, then that many entries of @sep. */
static int read_section(struct merge *m, FILE *f, char **buf, size_t *cap, const char *bin,
			int kind, const char *sep, bool *eof)
{
	uint64_t count;
	char *l = next_line(m, f, buf, cap);

	*eof = !l;
	if (!l)
		return 0;
	if (!parse_u64(l, 10, &count))
		return bad(m, "expected the number of entries of a section");
	for (uint64_t i = 0; i < count; i++) {
		uint64_t a, b = 0, n;
		int err;

		l = next_line(m, f, buf, cap);
		if (!l)
			return bad(m, "the file ends inside a section");
		if (kind == k_addr) {
			char *colon = strchr(l, ':');

			if (!colon)
				return bad(m, "expected ADDR:COUNT");
			*colon = '\0';
			if (!parse_u64(l, 16, &a) || !parse_u64(colon + 1, 10, &n))
				return bad(m, "expected ADDR:COUNT");
		} else if (!parse_pair(l, sep, &a, &b, &n)) {
			return bad(m, kind == k_range ? "expected FIRST-LAST:COUNT (hex)"
						      : "expected FROM->TO:COUNT (hex)");
		}
		err = add(m, bin, NULL, kind, a, b, n);
		if (err)
			return err;
	}
	return 0;
}

static int read_profgen(struct merge *m, FILE *f)
{
	char *buf = NULL;
	size_t cap = 0;
	bool eof;
	int err = read_section(m, f, &buf, &cap, "", k_range, "-", &eof);

	if (!err && eof)
		err = bad(m, "empty file: expected a profgen profile");
	if (!err)
		err = read_section(m, f, &buf, &cap, "", k_branch, "->", &eof);
	if (!err && eof)
		err = bad(m, "the file ends before the branches section");
	free(buf);
	return err;
}

/* Past the comment lines that may stand before a block (simpleperf's first line
 * asks to split a file of several binaries). */
static void skip_comments(struct merge *m, FILE *f, char **buf, size_t *cap)
{
	int c;

	while ((c = fgetc(f)) == '/') {
		ungetc(c, f);
		next_line(m, f, buf, cap);
	}
	if (c != EOF)
		ungetc(c, f);
}

/* A build-id as its binary's key: "0x" and 40 lowercase hex digits, a shorter id
 * zero-padded as perf.data keeps it (8-, 16- and 20-byte ids are one binary
 * whichever way they were written); anything else as it is. */
static char *build_id_key(const char *id)
{
	size_t n = strncmp(id, "0x", 2) ? 0 : strspn(id + 2, "0123456789abcdefABCDEF");
	char *k;

	if (!n || n > 40 || id[2 + n])
		return strdup(id);
	k = malloc(43);
	if (!k)
		return NULL;
	memcpy(k, "0x", 2);
	for (size_t i = 0; i < 40; i++)
		k[2 + i] = i < n ? (char)(id[2 + i] | 0x20) : '0'; /* | 0x20: lowercase */
	k[42] = '\0';
	return k;
}

static int read_autofdo(struct merge *m, FILE *f)
{
	char *buf = NULL, *l;
	size_t cap = 0, start;
	int err = 0;

	for (;;) {
		bool eof;
		char *id;

		start = m->n;
		skip_comments(m, f, &buf, &cap);
		err = read_section(m, f, &buf, &cap, "", k_range, "-", &eof);
		if (err || eof)
			break;
		err = read_section(m, f, &buf, &cap, "", k_addr, ":", &eof);
		if (!err && !eof)
			err = read_section(m, f, &buf, &cap, "", k_branch, "->", &eof);
		if (!err && eof)
			err = bad(m, "the file ends inside a binary's block");
		if (err)
			break;
		l = next_line(m, f, &buf, &cap);
		if (!l || strncmp(l, "// build_id: ", 13)) {
			err = bad(m, "expected \"// build_id: 0x...\" after a binary's branches");
			break;
		}
		id = build_id_key(l + 13);
		l = id ? next_line(m, f, &buf, &cap) : NULL;
		if (!id || !l || strncmp(l, "// ", 3)) {
			free(id);
			err = id ? bad(m, "expected \"// PATH\" after the build-id") : -cste_nomem;
			break;
		}
		/* the block's entries belong to this binary (path, then build-id) */
		for (size_t i = start; i < m->n && !err; i++) {
			char *k = malloc(strlen(l + 3) + strlen(id) + 2);

			if (!k) {
				err = -cste_nomem;
				break;
			}
			sprintf(k, "%s\n%s", l + 3, id);
			free(m->v[i].key);
			m->v[i].key = k;
		}
		if (!err) {
			char *k = malloc(strlen(l + 3) + strlen(id) + 2);

			if (k) {
				sprintf(k, "%s\n%s", l + 3, id);
				err = add(m, k, NULL, k_binary, 0, 0, 0);
				free(k);
			} else {
				err = -cste_nomem;
			}
		}
		free(id);
		/* blank lines between binaries */
		while (!err) {
			int c = fgetc(f);

			if (c == EOF)
				break;
			if (c != '\n') {
				ungetc(c, f);
				break;
			}
			m->line++;
		}
		if (err)
			break;
	}
	free(buf);
	return err;
}

static int read_folded(struct merge *m, FILE *f)
{
	char *buf = NULL, *l;
	size_t cap = 0;
	int err = 0;

	while (!err && (l = next_line(m, f, &buf, &cap))) {
		char *sp = strrchr(l, ' ');
		uint64_t n;

		if (!*l)
			continue;
		if (!sp || !parse_u64(sp + 1, 10, &n)) {
			err = bad(m, "expected \"frame;frame;... COUNT\"");
			break;
		}
		*sp = '\0';
		err = add(m, l, NULL, k_stack, 0, 0, n);
	}
	free(buf);
	return err;
}

static int read_lcov(struct merge *m, FILE *f)
{
	char *buf = NULL, *l, *file = NULL;
	size_t cap = 0;
	int err = 0;

	while (!err && (l = next_line(m, f, &buf, &cap))) {
		uint64_t a, n;
		char *comma = strchr(l, ',');

		if (!strncmp(l, "SF:", 3)) {
			free(file);
			file = strdup(l + 3);
			if (!file)
				err = -cste_nomem;
			continue;
		}
		if (!strcmp(l, "end_of_record")) {
			free(file);
			file = NULL;
			continue;
		}
		if (!strncmp(l, "TN:", 3) || !*l || !strncmp(l, "FNF:", 4) || !strncmp(l, "FNH:", 4) ||
		    !strncmp(l, "LF:", 3) || !strncmp(l, "LH:", 3) || !strncmp(l, "BRF:", 4) ||
		    !strncmp(l, "BRH:", 4))
			continue; /* totals are recomputed */
		if (!file) {
			err = bad(m, "expected SF:FILE before a record's lines");
			break;
		}
		if (!comma) {
			err = bad(m, "expected DA:LINE,COUNT, FN:LINE,NAME or FNDA:COUNT,NAME");
			break;
		}
		*comma = '\0';
		if (!strncmp(l, "DA:", 3)) {
			char *c2 = strchr(comma + 1, ','); /* an optional checksum */

			if (c2)
				*c2 = '\0';
			if (!parse_u64(l + 3, 10, &a) || !parse_u64(comma + 1, 10, &n))
				err = bad(m, "expected DA:LINE,COUNT");
			else
				err = add(m, file, NULL, k_da, a, 0, n);
		} else if (!strncmp(l, "FN:", 3)) {
			if (!parse_u64(l + 3, 10, &a))
				err = bad(m, "expected FN:LINE,NAME");
			else
				err = add(m, file, comma + 1, k_fn, 0, 0, a);
		} else if (!strncmp(l, "FNDA:", 5)) {
			if (!parse_u64(l + 5, 10, &n))
				err = bad(m, "expected FNDA:COUNT,NAME");
			else
				err = add(m, file, comma + 1, k_fnda, 0, 0, n);
		} else if (!strncmp(l, "BRDA:", 5)) {
			/* LINE,BLOCK,BRANCH,TAKEN with TAKEN "-" when it never ran */
			char *f2 = strchr(comma + 1, ','), *f3 = f2 ? strchr(f2 + 1, ',') : NULL;
			uint64_t block, branch;

			if (f2)
				*f2 = '\0';
			if (f3)
				*f3 = '\0';
			if (!f3 || !parse_u64(l + 5, 10, &a) || !parse_u64(comma + 1, 10, &block) ||
			    !parse_u64(f2 + 1, 10, &branch) || (strcmp(f3 + 1, "-") &&
								!parse_u64(f3 + 1, 10, &n)))
				err = bad(m, "expected BRDA:LINE,BLOCK,BRANCH,TAKEN");
			else if (!strcmp(f3 + 1, "-"))
				err = add(m, file, NULL, k_brda, a, block * 2 + branch, 0);
			else if (!(err = add(m, file, NULL, k_brda, a, block * 2 + branch, n)))
				err = add(m, file, NULL, k_brda_ran, a, block * 2 + branch, 1);
		} else {
			err = bad(m, "a line cstrace merge does not know (expected SF, FN, FNDA, BRDA, DA)");
		}
	}
	free(file);
	free(buf);
	return err;
}

static enum cst_merge_format sniff(FILE *f)
{
	char line[512];
	enum cst_merge_format fmt = cst_merge_folded;
	int lines = 0;
	bool counts = false;

	while (fgets(line, sizeof(line), f)) {
		/* simpleperf's first line of a profile of several binaries */
		if (!lines && !strncmp(line, "// ", 3) && strncmp(line, "// build_id: ", 13))
			continue;
		lines++;
		if (lines == 1 && (!strncmp(line, "TN:", 3) || !strncmp(line, "SF:", 3))) {
			fmt = cst_merge_lcov;
			break;
		}
		if (lines == 1 && line[0] == '{') {
			fmt = cst_merge_report_json;
			break;
		}
		if (lines == 1) {
			/* a line may start with a NUL byte: no last character to look at */
			size_t len = strlen(line);

			counts = len && strspn(line, "0123456789") == len - (line[len - 1] == '\n');
		}
		if (counts && !strncmp(line, "// build_id: ", 13)) {
			fmt = cst_merge_autofdo;
			break;
		}
	}
	if (counts && fmt == cst_merge_folded)
		fmt = cst_merge_profgen;
	rewind(f);
	return fmt;
}

static const char *const fmt_names[] = {"auto", "folded", "autofdo", "profgen", "lcov", "json"};

int cst_merge_format_parse(const char *s, enum cst_merge_format *fmt)
{
	for (int i = 0; i < (int)(sizeof(fmt_names) / sizeof(fmt_names[0])); i++)
		if (s && !strcmp(s, fmt_names[i])) {
			*fmt = (enum cst_merge_format)i;
			return 0;
		}
	return -cste_invalid;
}

/* The BRDA lines of records [i, end) of one file, then BRF/BRH. */
static void brda_out(const struct merge *m, size_t i, size_t end, FILE *out)
{
	unsigned brf = 0, brh = 0;

	for (size_t k = i; k < end; k++) {
		const struct rec *r = &m->v[k];
		bool ran = false;

		if (r->kind != k_brda)
			continue;
		for (size_t j = i; j < end && !ran; j++)
			ran = m->v[j].kind == k_brda_ran && m->v[j].a == r->a && m->v[j].b == r->b;
		if (ran)
			fprintf(out, "BRDA:%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",%" PRIu64 "\n", r->a,
				r->b / 2, r->b % 2, r->n);
		else
			fprintf(out, "BRDA:%" PRIu64 ",%" PRIu64 ",%" PRIu64 ",-\n", r->a, r->b / 2,
				r->b % 2);
		brf++;
		brh += r->n > 0;
	}
	if (brf)
		fprintf(out, "BRF:%u\nBRH:%u\n", brf, brh);
}

static void write_out(struct merge *m, enum cst_merge_format fmt, FILE *out)
{
	size_t i = 0;

	if (fmt == cst_merge_folded) {
		for (; i < m->n; i++)
			fprintf(out, "%s %" PRIu64 "\n", m->v[i].key, m->v[i].n);
		return;
	}
	if (fmt == cst_merge_profgen) {
		for (int kind = k_range; kind <= k_branch; kind += k_branch - k_range) {
			size_t c = 0;

			for (size_t k = 0; k < m->n; k++)
				c += m->v[k].kind == kind;
			fprintf(out, "%zu\n", c);
			for (size_t k = 0; k < m->n; k++)
				if (m->v[k].kind == kind)
					fprintf(out, kind == k_range ? "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n"
								     : "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n",
						m->v[k].a, m->v[k].b, m->v[k].n);
		}
		return;
	}
	if (fmt == cst_merge_autofdo) {
		size_t binaries = 0;

		for (size_t k = 0; k < m->n; k++)
			binaries += m->v[k].kind == k_binary;
		if (binaries > 1) /* as simpleperf writes a profile of several */
			fputs("// Please split this file. AutoFDO only accepts profile for one binary.\n",
			      out);
		while (i < m->n) {
			const char *key = m->v[i].key, *nl = strchr(key, '\n');
			size_t end = i;

			while (end < m->n && !strcmp(m->v[end].key, key))
				end++;
			for (int kind = k_range; kind <= k_branch; kind++) {
				size_t c = 0;

				for (size_t k = i; k < end; k++)
					c += m->v[k].kind == kind;
				fprintf(out, "%zu\n", c);
				for (size_t k = i; k < end; k++) {
					const struct rec *r = &m->v[k];

					if (r->kind != kind)
						continue;
					if (kind == k_addr)
						fprintf(out, "%" PRIx64 ":%" PRIu64 "\n", r->a, r->n);
					else
						fprintf(out, kind == k_range ? "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n"
									     : "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n",
							r->a, r->b, r->n);
				}
			}
			fprintf(out, "// build_id: %s\n// %.*s\n\n", nl ? nl + 1 : "", (int)(nl ? nl - key : 0),
				key);
			i = end;
		}
		return;
	}
	fputs("TN:\n", out);
	while (i < m->n) {
		const char *file = m->v[i].key;
		size_t end = i;
		unsigned fnf = 0, fnh = 0, lf = 0, lh = 0;

		while (end < m->n && !strcmp(m->v[end].key, file))
			end++;
		fprintf(out, "SF:%s\n", file);
		for (size_t k = i; k < end; k++)
			if (m->v[k].kind == k_fn && (k == i || m->v[k - 1].kind != k_fn ||
						     strcmp(m->v[k - 1].name, m->v[k].name)))
				fprintf(out, "FN:%" PRIu64 ",%s\n", m->v[k].n, m->v[k].name);
		for (size_t k = i; k < end; k++)
			if (m->v[k].kind == k_fnda) {
				fprintf(out, "FNDA:%" PRIu64 ",%s\n", m->v[k].n, m->v[k].name);
				fnf++;
				fnh += m->v[k].n > 0;
			}
		fprintf(out, "FNF:%u\nFNH:%u\n", fnf, fnh);
		brda_out(m, i, end, out);
		for (size_t k = i; k < end; k++)
			if (m->v[k].kind == k_da) {
				fprintf(out, "DA:%" PRIu64 ",%" PRIu64 "\n", m->v[k].a, m->v[k].n);
				lf++;
				lh += m->v[k].n > 0;
			}
		fprintf(out, "LF:%u\nLH:%u\nend_of_record\n", lf, lh);
		i = end;
	}
}

int cst_merge_files(enum cst_merge_format fmt, const char *const *paths, int n, FILE *out,
		    const struct cst_log *log)
{
	struct merge m = {.log = log};
	enum cst_merge_format first = fmt;
	int err = 0;

	if (!paths || n < 1 || !out)
		return -cste_invalid;
	for (int i = 0; i < n && !err; i++) {
		FILE *f = cst_fopen_input(paths[i], "r");
		enum cst_merge_format this;

		if (!f) {
			cst_logf(log, cst_log_error, "%s: cannot open: %s", paths[i],
				 cst_input_strerror(errno));
			err = -cste_not_found;
			break;
		}
		this = fmt ? fmt : sniff(f);
		if (!first)
			first = this;
		if (this == cst_merge_report_json && first == this) {
			fclose(f);
			continue; /* read whole below, with jansson */
		}
		m.path = paths[i];
		m.line = 0;
		if (this != first) {
			cst_logf(log, cst_log_error, "%s: is %s, the other inputs %s: merge files of one format",
				 paths[i], fmt_names[this], fmt_names[first]);
			err = -cste_format;
		} else if (this == cst_merge_lcov) {
			err = read_lcov(&m, f);
		} else if (this == cst_merge_autofdo) {
			err = read_autofdo(&m, f);
		} else if (this == cst_merge_profgen) {
			err = read_profgen(&m, f);
		} else {
			err = read_folded(&m, f);
		}
		fclose(f);
	}
	if (!err && first == cst_merge_report_json)
		return sym_merge_json(paths, n, out, log);
	if (!err) {
		/* lcov's FN carries a line, not a count: equal FN records stay one, with
		 * their line, rather than a sum of lines */
		for (size_t i = 0; i < m.n; i++)
			if (m.v[i].kind == k_fn)
				m.v[i].a = m.v[i].n;
		reduce(&m);
		for (size_t i = 0; i < m.n; i++)
			if (m.v[i].kind == k_fn)
				m.v[i].n = m.v[i].a;
		write_out(&m, first, out);
		if (ferror(out))
			err = -cste_io;
	}
	for (size_t i = 0; i < m.n; i++) {
		free(m.v[i].key);
		free(m.v[i].name);
	}
	free(m.v);
	return err;
}
