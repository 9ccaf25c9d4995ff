/* Board profiles: read boards/NAME.ini with libinih into struct cst_board, with
 * every mistake reported as one "FILE:LINE: what" line. */
#include "profile_int.h"

#include <errno.h>
#include <stdarg.h>
#include <ini.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
/* A register a profile gives, by its lower-case name, in either ETM family: ID
 * registers are both checked by the doctor and used as decode defaults; the
 * others are decode defaults only. */
static const struct cst_source_reg *etm_reg(const char *key)
{
	static const enum cst_protocol families[] = {cst_proto_etmv3, cst_proto_etmv4i};

	for (size_t f = 0; f < sizeof(families) / sizeof(families[0]); f++)
		for (const struct cst_source_reg *r = cst_source_regs(families[f]); r->name; r++)
			if (!strcmp(key, r->key))
				return r;
	return NULL;
}


static char *reader(char *str, int num, void *stream)
{
	struct parse *p = stream;
	char *r = fgets(str, num, p->fp);
	size_t n;

	if (!r)
		return r;
	p->line++;
	n = strlen(r);
	/* libinih reads at most @num bytes a line: a longer one would come back in
	 * pieces and be misread, so it is an error of its own. */
	if (n == (size_t)num - 1 && r[n - 1] != '\n' && !feof(p->fp) && !p->long_line)
		p->long_line = p->line;
	p->cont = (r[0] == ' ' || r[0] == '\t') && r[strspn(r, " \t\r\n")] != '\0';
	/* libinih tells the handler of a section only at its first key: remember
	 * where the header was, so errors about the section point at it. */
	if (r[strspn(r, " \t")] == '[')
		p->section_line = p->line;
	return r;
}

int brd_fail(struct parse *p, const char *fmt, ...)
{
	va_list ap;

	if (!p->err[0]) {
		va_start(ap, fmt);
		vsnprintf(p->err, sizeof(p->err), fmt, ap);
		va_end(ap);
		p->err_line = p->line;
	}
	return 0;
}

static int push_str(struct parse *p, char ***arr, int *n, size_t *cap, const char *v)
{
	char *s = strdup(v);

	if (!s || cst_grow(arr, cap, (size_t)*n + 1, sizeof(char *)) < 0) {
		free(s);
		return brd_fail(p, "out of memory");
	}
	(*arr)[(*n)++] = s;
	p->last_arr = (void **)arr;
	p->last_off = (size_t)(*n - 1) * sizeof(char *);
	p->has_last = true;
	return 1;
}

/* The text value set last, found afresh in its array; NULL if none. */
static char **last_text(struct parse *p)
{
	char *base = p->last_arr ? *p->last_arr : (char *)p->b;

	return p->has_last ? (char **)(base + p->last_off) : NULL;
}

/* Set *@dst, a field of the board (@arr NULL) or of an element of the array
 * *@arr, to a copy of @v. */
int brd_set_str(struct parse *p, void **arr, char **dst, const char *v)
{
	char *s = strdup(v);

	if (!s)
		return brd_fail(p, "out of memory");
	free(*dst);
	*dst = s;
	p->last_arr = arr;
	p->last_off = (size_t)((char *)dst - (arr ? (char *)*arr : (char *)p->b));
	p->has_last = true;
	return 1;
}

static int parse_bool(const char *v, bool *out)
{
	if (!strcasecmp(v, "yes") || !strcasecmp(v, "true") || !strcmp(v, "1"))
		*out = true;
	else if (!strcasecmp(v, "no") || !strcasecmp(v, "false") || !strcmp(v, "0"))
		*out = false;
	else
		return -1;
	return 0;
}

/* "4K", "64M", "0x1000", "4096". */
static int parse_size(const char *v, uint64_t *out)
{
	char buf[64];
	size_t n = strlen(v);
	uint64_t mul = 1;

	if (!n || n >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	if (buf[n - 1] == 'K' || buf[n - 1] == 'k')
		mul = 1024;
	else if (buf[n - 1] == 'M' || buf[n - 1] == 'm')
		mul = 1024 * 1024;
	else if (buf[n - 1] == 'G' || buf[n - 1] == 'g')
		mul = 1024ull * 1024 * 1024;
	if (mul != 1)
		buf[n - 1] = '\0';
	if (cst_parse_u64(buf, out) < 0)
		return -1;
	*out *= mul;
	return 0;
}

static int parse_int(const char *v, int *out)
{
	uint64_t u;

	if (cst_parse_u64(v, &u) < 0 || u > INT_MAX)
		return -1;
	*out = (int)u;
	return 0;
}

static int handle_board(struct parse *p, const char *k, const char *v)
{
	struct cst_board *b = p->b;

	if (!strcmp(k, "name"))
		return brd_set_str(p, NULL, &b->name, v);
	if (!strcmp(k, "title"))
		return brd_set_str(p, NULL, &b->title, v);
	if (!strcmp(k, "compatible"))
		return push_str(p, &b->compatibles, &b->ncompatibles, &b->cap_compatibles, v);
	if (!strcmp(k, "sysfs_parent")) {
		if (v[0] != '/')
			return brd_fail(p, "sysfs_parent must be an absolute path, not '%s'", v);
		return brd_set_str(p, NULL, &b->sysfs_parent, v);
	}
	if (!strcmp(k, "dt_overlay"))
		return brd_set_str(p, NULL, &b->dt_overlay, v);
	if (!strcmp(k, "dt_upstream"))
		return brd_set_str(p, NULL, &b->dt_upstream, v);
	if (!strcmp(k, "loses_context_in_idle")) {
		if (parse_bool(v, &b->loses_context_in_idle) < 0)
			return brd_fail(p, "loses_context_in_idle wants yes or no, not '%s'", v);
		return 1;
	}
	if (!strcmp(k, "trace_id")) {
		if (!strcmp(v, "legacy"))
			b->trace_id_policy = cst_trace_id_legacy;
		else if (!strcmp(v, "sequential"))
			b->trace_id_policy = cst_trace_id_sequential;
		else if (!strcmp(v, "dynamic"))
			b->trace_id_policy = cst_trace_id_dynamic;
		else
			return brd_fail(p, "trace_id wants legacy, sequential or dynamic, not '%s'", v);
		return 1;
	}
	return brd_fail(p, "unknown key '%s' in [board]", k);
}

static int handle_cpu(struct parse *p, const char *k, const char *v)
{
	struct cst_board_cpu *c = &p->b->cpus[p->cpu];

	if (!strcmp(k, "core"))
		return brd_set_str(p, (void **)&p->b->cpus, &c->core, v);
	if (!strcmp(k, "cluster"))
		return brd_set_str(p, (void **)&p->b->cpus, &c->cluster, v);
	if (!strcmp(k, "mpidr")) {
		if (cst_parse_u64(v, &c->mpidr) < 0)
			return brd_fail(p, "mpidr '%s' is not a number", v);
		return 1;
	}
	return brd_fail(p, "unknown key '%s' in [%s]", k, p->section);
}

/* "VALUE" or "VALUE/MASK"; @value keeps all bits (the decode default), the check
 * compares only @mask's bits, and MASK 0 means "decode default, do not check". */
static int parse_reg_value(const char *v, uint32_t *value, uint32_t *mask)
{
	char buf[64];
	const char *slash = strchr(v, '/');
	uint64_t a, m = 0xffffffffu;

	if (strlen(v) >= sizeof(buf))
		return -1;
	strcpy(buf, v);
	if (slash) {
		buf[slash - v] = '\0';
		if (cst_parse_u64(slash + 1, &m) < 0 || m > 0xffffffffu)
			return -1;
	}
	if (cst_parse_u64(buf, &a) < 0 || a > 0xffffffffu)
		return -1;
	*value = (uint32_t)a;
	*mask = (uint32_t)m;
	return 0;
}

static int handle_device(struct parse *p, const char *k, const char *v)
{
	struct cst_board_device *d = &p->b->devices[p->dev];
	const struct cst_source_reg *reg;

	if (!strcmp(k, "base")) {
		if (cst_parse_u64(v, &d->base) < 0)
			return brd_fail(p, "base '%s' is not an address", v);
		p->base_line[p->dev] = p->line; /* shared bases: check_bases, at the end */
		return 1;
	}
	if (!strcmp(k, "node"))
		return brd_set_str(p, (void **)&p->b->devices, &d->dt_node, v);
	if (!strcmp(k, "compatible"))
		return brd_set_str(p, (void **)&p->b->devices, &d->compatible, v);
	if (!strcmp(k, "note"))
		return brd_set_str(p, (void **)&p->b->devices, &d->note, v);
	if (!strcmp(k, "arch"))
		return brd_set_str(p, (void **)&p->b->devices, &d->arch, v);
	if (!strcmp(k, "cpu")) {
		if (parse_int(v, &d->cpu) < 0 || d->cpu > 63)
			return brd_fail(p, "cpu '%s' is not a CPU number (0-63)", v);
		d->source.cpu = d->cpu;
		return 1;
	}
	if (!strcmp(k, "core")) {
		snprintf(d->source.core_name, sizeof(d->source.core_name), "%s", v);
		return 1;
	}
	if (!strcmp(k, "protocol")) {
		d->source.protocol = cst_protocol_parse(v);
		if (d->source.protocol != cst_proto_unknown)
			return 1;
		return brd_fail(p, "protocol '%s' is not etmv3, ptm, etmv4, ete or stm", v);
	}
	if (!strcmp(k, "capacity")) {
		if (parse_size(v, &d->capacity) < 0)
			return brd_fail(p, "capacity '%s' is not a size (4096, 64K, 8M)", v);
		return 1;
	}
	if (!strcmp(k, "perf_sink") || !strcmp(k, "preferred") || !strcmp(k, "scatter_gather")) {
		bool *dst = !strcmp(k, "perf_sink") ? &d->perf_sink :
			    !strcmp(k, "preferred") ? &d->preferred : &d->scatter_gather;

		if (parse_bool(v, dst) < 0)
			return brd_fail(p, "%s wants yes or no, not '%s'", k, v);
		return 1;
	}
	if (!strcmp(k, "stmtcsr")) {
		uint64_t x;

		if (cst_parse_u64(v, &x) < 0 || x > 0xffffffffu)
			return brd_fail(p, "stmtcsr '%s' is not a 32-bit value", v);
		d->source.regs.stm.stmtcsr = (uint32_t)x;
		return 1;
	}
	reg = etm_reg(k);
	if (reg) {
		uint32_t value, mask;

		if (d->type != cst_bdev_etm)
			return brd_fail(p, "%s is an ETM register but [%s] is not an ETM", k, p->section);
		if (parse_reg_value(v, &value, &mask) < 0)
			return brd_fail(p, "%s '%s' is not a 32-bit value (VALUE or VALUE/MASK)", k, v);
		*cst_source_reg_ptr(&d->source, reg) = value;
		if (reg->idfile && mask) {
			struct cst_board_idreg *r;

			if (d->nidregs == CST_BOARD_MAX_IDREGS)
				return brd_fail(p, "too many ID registers in [%s]", p->section);
			r = &d->idregs[d->nidregs++];
			snprintf(r->name, sizeof(r->name), "%s", reg->key);
			snprintf(r->file, sizeof(r->file), "%s", reg->idfile);
			r->value = value & mask;
			r->mask = mask;
		}
		return 1;
	}
	return brd_fail(p, "unknown key '%s' in [%s]", k, p->section);
}

/* "etm0:0 -> funnel_big:1"; a missing port means 0. */
static int parse_endpoint(struct parse *p, char *s, int *dev, int *port)
{
	char *colon;

	while (*s == ' ')
		s++;
	for (char *e = s + strlen(s); e > s && e[-1] == ' ';)
		*--e = '\0';
	*port = 0;
	colon = strchr(s, ':');
	if (colon) {
		*colon = '\0';
		if (parse_int(colon + 1, port) < 0)
			return brd_fail(p, "port '%s' is not a number", colon + 1);
	}
	*dev = cst_board_device_by_name(p->b, s);
	if (*dev < 0)
		return brd_fail(p, "link names '%s', which no section above defines", s);
	return 1;
}

static int handle_graph(struct parse *p, const char *k, const char *v)
{
	struct cst_board *b = p->b;
	struct cst_board_link l;
	char buf[256], *arrow;

	if (strcmp(k, "link"))
		return brd_fail(p, "unknown key '%s' in [graph] (only link = A:port -> B:port)", k);
	if (strlen(v) >= sizeof(buf))
		return brd_fail(p, "link too long");
	strcpy(buf, v);
	arrow = strstr(buf, "->");
	if (!arrow)
		return brd_fail(p, "link '%s' has no '->'", v);
	*arrow = '\0';
	if (!parse_endpoint(p, buf, &l.from, &l.from_port) ||
	    !parse_endpoint(p, arrow + 2, &l.to, &l.to_port))
		return 0;
	if (CST_GROW(b->links, b->cap_links, (size_t)b->nlinks + 1) < 0)
		return brd_fail(p, "out of memory");
	b->links[b->nlinks++] = l;
	return 1;
}

static int handle_issue(struct parse *p, const char *k, const char *v)
{
	struct cst_board_issue *is = &p->b->issues[p->issue];

	if (!strcmp(k, "symptom"))
		return brd_set_str(p, (void **)&p->b->issues, &is->symptom, v);
	if (!strcmp(k, "workaround"))
		return brd_set_str(p, (void **)&p->b->issues, &is->workaround, v);
	if (!strcmp(k, "check"))
		return brd_set_str(p, (void **)&p->b->issues, &is->check, v);
	return brd_fail(p, "unknown key '%s' in [%s]", k, p->section);
}

/* A new section: set up the entry it describes. */
static int enter_section(struct parse *p, const char *section)
{
	struct cst_board *b = p->b;
	char kind[32], name[96], extra[8];
	int n;

	snprintf(p->section, sizeof(p->section), "%s", section);
	p->dev = p->cpu = p->issue = -1;
	if (!strcmp(section, "board") || !strcmp(section, "kernel") ||
	    !strcmp(section, "firmware") || !strcmp(section, "graph"))
		return 1;
	n = sscanf(section, "%31s %95s %7s", kind, name, extra);
	if (n != 2)
		return brd_fail(p, "section [%s] is not [board], [kernel], [firmware], [graph] or "
			       "[KIND NAME]", section);
	if (!strcmp(kind, "cpu")) {
		int cpu;

		if (parse_int(name, &cpu) < 0 || cpu > 63)
			return brd_fail(p, "[cpu %s]: not a CPU number (0-63)", name);
		for (int i = 0; i < b->ncpus; i++)
			if (b->cpus[i].cpu == cpu)
				return brd_fail(p, "[cpu %d] appears twice", cpu);
		if (CST_GROW(b->cpus, b->cap_cpus, (size_t)b->ncpus + 1) < 0)
			return brd_fail(p, "out of memory");
		b->cpus[b->ncpus].cpu = cpu;
		p->cpu = b->ncpus++;
		return 1;
	}
	if (!strcmp(kind, "issue")) {
		if (CST_GROW(b->issues, b->cap_issues, (size_t)b->nissues + 1) < 0)
			return brd_fail(p, "out of memory");
		p->issue = b->nissues++;
		return brd_set_str(p, (void **)&b->issues, &b->issues[p->issue].id, name);
	}
	for (int t = 0; t < cst_bdev_max; t++) {
		struct cst_board_device *d;

		if (strcmp(kind, cst_bdev_type_name(t)))
			continue;
		if (strlen(name) >= sizeof(b->devices[0].source.name))
			return brd_fail(p, "device name '%s' is longer than %zu characters", name,
				    sizeof(b->devices[0].source.name) - 1);
		if (CST_GROW(b->devices, b->cap_devices, (size_t)b->ndevices + 1) < 0 ||
		    CST_GROW(p->dev_line, p->cap_dev_line, (size_t)b->ndevices + 1) < 0 ||
		    CST_GROW(p->base_line, p->cap_base_line, (size_t)b->ndevices + 1) < 0)
			return brd_fail(p, "out of memory");
		d = &b->devices[b->ndevices];
		d->type = (enum cst_bdev_type)t;
		d->cpu = -1;
		d->source.cpu = -1;
		d->base = UINT64_MAX;
		memcpy(d->source.name, name, strlen(name) + 1);
		if (t == cst_bdev_stm)
			d->source.protocol = cst_proto_stm;
		p->dev_line[b->ndevices] = p->section_line;
		p->dev = b->ndevices++;
		return brd_set_str(p, (void **)&p->b->devices, &d->name, name);
	}
	return brd_fail(p, "section [%s]: unknown kind '%s'", section, kind);
}

static int handler(void *user, const char *section, const char *name, const char *value)
{
	struct parse *p = user;

	if (p->err[0])
		return 1; /* keep the first error only */
	if (strcmp(section, p->section) || !p->section[0]) {
		int line = p->line, ok;

		p->line = p->section_line;
		ok = enter_section(p, section);
		p->line = line;
		if (!ok)
			return 0;
		/* A continuation never crosses a section header, not even into the
		 * name an [issue NAME] header has just set. */
		p->has_last = false;
	}
	if (!name)
		return 1;
	if (p->cont) {
		/* An indented line continues the previous text value. */
		char **last = last_text(p);

		if (!last || !*last)
			return brd_fail(p, "indented line continues nothing");
		if (cst_str_append(last, " ", value) < 0)
			return brd_fail(p, "out of memory");
		return 1;
	}
	p->has_last = false;
	if (!*value)
		return brd_fail(p, "key '%s' has no value", name);
	if (!strcmp(section, "board"))
		return handle_board(p, name, value);
	if (!strcmp(section, "kernel")) {
		if (strcmp(name, "config"))
			return brd_fail(p, "unknown key '%s' in [kernel] (only config = CONFIG_X=y)", name);
		if (strncmp(value, "CONFIG_", 7) || !strchr(value, '='))
			return brd_fail(p, "config '%s' is not CONFIG_NAME=value", value);
		return push_str(p, &p->b->kconfig, &p->b->nkconfig, &p->b->cap_kconfig, value);
	}
	if (!strcmp(section, "firmware")) {
		if (strcmp(name, "require"))
			return brd_fail(p, "unknown key '%s' in [firmware] (only require = ...)", name);
		return push_str(p, &p->b->firmware, &p->b->nfirmware, &p->b->cap_firmware, value);
	}
	if (!strcmp(section, "graph"))
		return handle_graph(p, name, value);
	if (p->cpu >= 0)
		return handle_cpu(p, name, value);
	if (p->issue >= 0)
		return handle_issue(p, name, value);
	if (p->dev >= 0)
		return handle_device(p, name, value);
	return brd_fail(p, "internal: no entry for [%s]", section);
}
int cst_board_load(struct cst_board **out, const char *path, const struct cst_log *log)
{
	struct parse p = {0};
	int ret;

	if (!out || !path)
		return -cste_invalid;
	*out = NULL;
	p.file = path;
	p.dev = p.cpu = p.issue = -1;
	p.fp = cst_fopen_input(path, "r");
	if (!p.fp) {
		int e = errno;

		cst_logf(log, cst_log_error, "%s: %s", path, cst_input_strerror(e));
		return e == ENOENT ? -cste_not_found : -cste_io;
	}
	p.b = calloc(1, sizeof(*p.b));
	if (!p.b || !(p.b->file = strdup(path))) {
		fclose(p.fp);
		free(p.b);
		return -cste_nomem;
	}
	ret = ini_parse_stream(reader, &p, handler, &p);
	fclose(p.fp);
	if (p.long_line && (!p.err[0] || p.err_line >= p.long_line)) {
		snprintf(p.err, sizeof(p.err),
			 "line too long: break it and indent the rest on the next lines");
		p.err_line = p.long_line;
	}
	if (ret > 0 && !p.err[0]) {
		/* libinih found a line it could not read as [section] or key = value. */
		snprintf(p.err, sizeof(p.err), "syntax error (expected [section] or key = value)");
		p.err_line = ret;
	} else if (ret < 0 && !p.err[0]) {
		snprintf(p.err, sizeof(p.err), "cannot read the file");
		p.err_line = 0;
	}
	if (!p.err[0])
		brd_profile_finish(&p);
	free(p.dev_line);
	free(p.base_line);
	if (p.err[0]) {
		cst_logf(log, cst_log_error, "%s:%d: %s", path, p.err_line, p.err);
		cst_board_free(p.b);
		return strstr(p.err, "out of memory") ? -cste_nomem : -cste_format;
	}
	*out = p.b;
	return 0;
}
