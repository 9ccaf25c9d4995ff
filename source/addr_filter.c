/* Address filters in perf's --filter syntax: parsed, turned into the string the
 * kernel takes, checked against a trace unit's address comparators, and placed
 * on a mapping as the kernel places them. Symbols are resolved in elf_sym.c. */
#include "cstrace/source.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "source_int.h"

#define MAX_ENTRIES 64 /* far past any ETM's comparators: a sanity bound on input */

static const char *const action_names[] = {"filter", "start", "stop"};

static const char *skip_ws(const char *p)
{
	while (*p == ' ' || *p == '\t' || *p == '\n')
		p++;
	return p;
}

/* Copy the word at @p (up to whitespace or one of @stops) into @buf; returns its
 * length (0: none), or -1 when it does not fit. */
static int word(const char *p, const char *stops, char *buf, size_t size)
{
	size_t n = 0;

	while (p[n] && !strchr(" \t\n", p[n]) && !strchr(stops, p[n]))
		n++;
	if (n >= size)
		return -1;
	memcpy(buf, p, n);
	buf[n] = 0;
	return (int)n;
}

static bool is_number(const char *s, uint64_t *v)
{
	return isdigit((unsigned char)s[0]) && cst_parse_u64(s, v) == 0;
}

/* The entry as written, for messages: from @from up to @to (at most 80 bytes). */
static const char *quote(const char *from, const char *to, char *buf, size_t size)
{
	size_t n = (size_t)(to - from);

	while (n && strchr(" \t\n,", from[n - 1]))
		n--;
	if (n >= size)
		n = size - 1;
	memcpy(buf, from, n);
	buf[n] = 0;
	return buf;
}

static int parse_one(struct cst_addr_filter_entry *e, const char **pp, const struct cst_log *log)
{
	const char *begin = *pp, *p = *pp;
	char act[16], tok[256], q[96];
	int n;

	memset(e, 0, sizeof(*e));
	n = word(p, ",/@#", act, sizeof(act));
	if (n <= 0 || (strcmp(act, "filter") && strcmp(act, "start") && strcmp(act, "stop") &&
		       strcmp(act, "tracestop"))) {
		cst_logf(log, cst_log_error,
			 "address filter '%s': expected filter, start or stop, then a symbol or an "
			 "address", quote(begin, p + strcspn(p, ","), q, sizeof(q)));
		return -cste_format;
	}
	p = skip_ws(p + n);
	n = word(p, ",/@#", tok, sizeof(tok));
	if (n <= 0) {
		cst_logf(log, cst_log_error, "address filter '%s': %s needs a symbol or an address",
			 quote(begin, p, q, sizeof(q)), act);
		return -cste_format;
	}
	if (!is_number(tok, &e->addr))
		snprintf(e->sym, sizeof(e->sym), "%s", tok);
	p = skip_ws(p + n);
	if (*p == '#') {
		char idx[32];
		uint64_t v = 0;

		n = word(p + 1, ",/@", idx, sizeof(idx));
		if (!e->sym[0] || !strcmp(e->sym, "*") || n <= 0 ||
		    (strcmp(idx, "g") && strcmp(idx, "G") && (cst_parse_u64(idx, &v) || v > 1000000))) {
			cst_logf(log, cst_log_error,
				 "address filter '%s': #N picks the Nth symbol of a name (#g or #0 the "
				 "global one) and follows a symbol",
				 quote(begin, p + 1 + (n > 0 ? n : 0), q, sizeof(q)));
			return -cste_format;
		}
		e->sym_index = v ? (int)v : -1;
		p = skip_ws(p + 1 + n);
	}
	if (*p == '/') {
		p = skip_ws(p + 1);
		n = word(p, ",@", tok, sizeof(tok));
		if (n <= 0) {
			cst_logf(log, cst_log_error, "address filter '%s': a size follows '/'",
				 quote(begin, p, q, sizeof(q)));
			return -cste_format;
		}
		e->has_size = true;
		if (!is_number(tok, &e->size))
			snprintf(e->size_sym, sizeof(e->size_sym), "%s", tok);
		else if (!e->size) {
			cst_logf(log, cst_log_error, "address filter '%s': a size of 0",
				 quote(begin, p + n, q, sizeof(q)));
			return -cste_format;
		}
		p = skip_ws(p + n);
	}
	if (*p == '@') {
		p = skip_ws(p + 1);
		n = word(p, ",", e->file, sizeof(e->file));
		if (n <= 0) {
			cst_logf(log, cst_log_error, "address filter '%s': a file follows '@'",
				 quote(begin, p, q, sizeof(q)));
			return -cste_format;
		}
		p = skip_ws(p + n);
	}
	*pp = p;
	quote(begin, p, q, sizeof(q));
	if (!strcmp(act, "tracestop")) {
		cst_logf(log, cst_log_error,
			 "address filter '%s': tracestop (a range where tracing stops) is not for "
			 "cs_etm: the CoreSight driver takes filter ranges and start/stop points", q);
		return -cste_unsupported;
	}
	e->action = !strcmp(act, "filter") ? cst_addr_filter_range
		    : !strcmp(act, "start") ? cst_addr_filter_start : cst_addr_filter_stop;
	if (e->action != cst_addr_filter_range && (e->has_size || !strcmp(e->sym, "*"))) {
		cst_logf(log, cst_log_error,
			 "address filter '%s': %s takes one address, not a range (the CoreSight "
			 "driver refuses a %s with a size)", q, act, act);
		return -cste_unsupported;
	}
	if (!strcmp(e->sym, "*") && (!e->file[0] || e->has_size)) {
		cst_logf(log, cst_log_error,
			 "address filter '%s': '*' is the whole of a file: write 'filter * @ FILE'", q);
		return -cste_format;
	}
	if (e->action == cst_addr_filter_range && !e->sym[0] && !e->has_size) {
		cst_logf(log, cst_log_error,
			 "address filter '%s': a range at an address needs a size (ADDR/SIZE)", q);
		return -cste_format;
	}
	return 0;
}

int cst_addr_filter_parse(struct cst_addr_filter **out, const char *text,
			  const struct cst_log *log)
{
	struct cst_addr_filter *f;
	const char *p;
	int err = 0;

	if (!out || !text)
		return -cste_invalid;
	*out = NULL;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -cste_nomem;
	for (p = skip_ws(text); *p && !err;) {
		if (*p == ',') {
			p = skip_ws(p + 1);
			continue;
		}
		if (f->n == MAX_ENTRIES) {
			cst_logf(log, cst_log_error, "address filter: more than %d entries",
				 MAX_ENTRIES);
			err = -cste_format;
		} else if (CST_GROW(f->v, f->cap, f->n + 1) < 0) {
			err = -cste_nomem;
		} else if (!(err = parse_one(&f->v[f->n], &p, log))) {
			f->n++;
		}
	}
	if (!err && !f->n) {
		cst_logf(log, cst_log_error,
			 "address filter '%s': no entry; write e.g. 'filter main @ ./prog' or "
			 "'start 0x400/0x80 @ ./prog'", text);
		err = -cste_format;
	}
	if (err) {
		cst_addr_filter_free(f);
		return err;
	}
	*out = f;
	return 0;
}

void cst_addr_filter_free(struct cst_addr_filter *f)
{
	if (!f)
		return;
	free(f->v);
	free(f);
}

int cst_addr_filter_count(const struct cst_addr_filter *f)
{
	return f ? (int)f->n : 0;
}

const struct cst_addr_filter_entry *cst_addr_filter_get(const struct cst_addr_filter *f, int i)
{
	return f && i >= 0 && (size_t)i < f->n ? &f->v[i] : NULL;
}

int cst_addr_filter_format(const struct cst_addr_filter *f, char *buf, size_t size)
{
	size_t len = 0;

	if (!f || !buf || !size)
		return -cste_invalid;
	buf[0] = 0;
	for (size_t i = 0; i < f->n; i++) {
		const struct cst_addr_filter_entry *e = &f->v[i];
		int n;

		if (!e->resolved)
			return -cste_invalid;
		/* perf's addr_filter__to_str: "%s 0x%lx/0x%lx@%s" or "%s 0x%lx@%s" */
		if (e->action == cst_addr_filter_range)
			n = snprintf(buf + len, size - len, "%s%s 0x%llx/0x%llx%s%s", i ? "," : "",
				     action_names[e->action], (unsigned long long)e->start,
				     (unsigned long long)e->len, e->path[0] ? "@" : "", e->path);
		else
			n = snprintf(buf + len, size - len, "%s%s 0x%llx%s%s", i ? "," : "",
				     action_names[e->action], (unsigned long long)e->start,
				     e->path[0] ? "@" : "", e->path);
		if (n < 0 || (size_t)n >= size - len)
			return -cste_nomem;
		len += (size_t)n;
	}
	return (int)len;
}

int cst_addr_filter_check(const struct cst_addr_filter *f, unsigned pairs, bool perf,
			  const char *etm, const struct cst_log *log)
{
	unsigned ranges = 0, points = 0;

	if (!f)
		return -cste_invalid;
	for (size_t i = 0; i < f->n; i++) {
		if (f->v[i].action == cst_addr_filter_range)
			ranges++;
		else
			points++;
	}
	if (perf && ranges && points) {
		cst_logf(log, cst_log_error,
			 "address filter: %u range(s) and %u start/stop point(s): the CoreSight perf "
			 "driver takes one kind or the other, not both (coresight-etm-perf.c)",
			 ranges, points);
		return -cste_unsupported;
	}
	if (perf && ranges + points > 8) {
		cst_logf(log, cst_log_error,
			 "address filter: %u entries; the CoreSight perf driver takes at most 8 "
			 "(ETM_ADDR_CMP_MAX)", ranges + points);
		return -cste_unsupported;
	}
	if (ranges > pairs || 2 * ranges + points > 2 * pairs) {
		cst_logf(log, cst_log_error,
			 "address filter: %u range(s) (a comparator pair each) and %u start/stop "
			 "point(s) (one comparator each) do not fit %s: it has %u address "
			 "comparator pair(s)",
			 ranges, points, etm ? etm : "the ETM", pairs);
		return -cste_unsupported;
	}
	return 0;
}

bool cst_addr_filter_place(const struct cst_addr_filter_entry *e, uint64_t vm_start,
			   uint64_t vm_len, uint64_t vm_off, uint64_t *start, uint64_t *len)
{
	/* kernel/events/core.c: perf_addr_filter_match, perf_addr_filter_vma_adjust */
	if (!e || !e->resolved || !e->path[0] || !vm_len)
		return false;
	if (e->len ? e->start + e->len <= vm_off : e->start < vm_off)
		return false;
	if (e->start >= vm_off + vm_len)
		return false;
	if (e->start < vm_off) {
		*start = vm_start;
		*len = e->len - (vm_off - e->start) < vm_len ? e->len - (vm_off - e->start) : vm_len;
	} else {
		*start = vm_start + (e->start - vm_off);
		*len = e->len < vm_start + vm_len - *start ? e->len : vm_start + vm_len - *start;
	}
	return true;
}
