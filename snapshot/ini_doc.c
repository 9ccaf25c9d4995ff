/* An INI file as sections of key/value pairs, parsed by libinih. A key repeated
 * within one section starts a new section of the same name, so that files with
 * several "[dump]" sections in a row keep each dump apart. */
#include "ini_doc.h"

#include <ctype.h>
#include <errno.h>
#include <ini.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static struct ini_section *add_section(struct ini_doc *doc, const char *name)
{
	struct ini_section *s;

	if (CST_GROW(doc->sections, doc->cap, (size_t)doc->nsections + 1) < 0)
		return NULL;
	s = &doc->sections[doc->nsections];
	memset(s, 0, sizeof(*s));
	s->name = strdup(name);
	if (!s->name)
		return NULL;
	doc->nsections++;
	return s;
}

/* FNV-1a of the key in lower case: look-ups ignore case. */
static size_t key_hash(const char *key)
{
	size_t h = 2166136261u;

	for (; *key; key++)
		h = (h ^ (unsigned char)tolower((unsigned char)*key)) * 16777619u;
	return h;
}

/* The slot holding @key, or the empty slot where it would go. */
static unsigned *key_slot(const struct ini_section *s, const char *key)
{
	size_t mask = s->nslots - 1, i = key_hash(key) & mask;

	while (s->slots[i] && strcasecmp(s->kv[s->slots[i] - 1].key, key))
		i = (i + 1) & mask;
	return &s->slots[i];
}

/* Keep the index at most half full. */
static int index_grow(struct ini_section *s)
{
	size_t n = s->nslots ? s->nslots * 2 : 16;

	if ((size_t)s->nkv + 1 <= s->nslots / 2)
		return 0;
	free(s->slots);
	s->slots = calloc(n, sizeof(*s->slots));
	s->nslots = s->slots ? n : 0;
	if (!s->slots)
		return -1;
	for (int k = 0; k < s->nkv; k++)
		*key_slot(s, s->kv[k].key) = (unsigned)k + 1;
	return 0;
}

static int add_kv(struct ini_section *s, const char *key, const char *value)
{
	if (CST_GROW(s->kv, s->cap, (size_t)s->nkv + 1) < 0 || index_grow(s) < 0)
		return -1;
	s->kv[s->nkv].key = strdup(key);
	s->kv[s->nkv].value = strdup(value);
	if (!s->kv[s->nkv].key || !s->kv[s->nkv].value) {
		free(s->kv[s->nkv].key);
		free(s->kv[s->nkv].value);
		return -1;
	}
	*key_slot(s, key) = (unsigned)s->nkv + 1;
	s->nkv++;
	return 0;
}

/* libinih handler: returns nonzero on success. */
static int on_value(void *user, const char *section, const char *name, const char *value)
{
	struct ini_doc *doc = user;
	struct ini_section *cur = doc->nsections ? &doc->sections[doc->nsections - 1] : NULL;
	char joined[512];

	/* libinih also splits at ':', which register keys such as "TRCIDR0(id:0x78)"
	 * contain: put such a key back together and split at the '=' instead. */
	if (strchr(name, '(') && !strchr(name, ')') && strstr(value, ")=")) {
		const char *eq = strstr(value, ")=") + 1;

		if ((size_t)snprintf(joined, sizeof(joined), "%s:%.*s", name, (int)(eq - value),
				     value) < sizeof(joined)) {
			name = joined;
			value = eq + 1;
			while (*value == ' ' || *value == '\t')
				value++;
		}
	}

	if (!cur || strcasecmp(cur->name, section) != 0 || snap_ini_section_get(cur, name)) {
		cur = add_section(doc, section);
		if (!cur)
			return 0;
	}
	return add_kv(cur, name, value) == 0;
}

int snap_ini_doc_load(struct ini_doc *doc, const char *path, const struct cst_log *log,
		 int quiet_missing)
{
	FILE *f;
	int line;

	memset(doc, 0, sizeof(*doc));
	doc->path = strdup(path);
	if (!doc->path)
		return -cste_nomem;
	f = cst_fopen_input(path, "r");
	if (!f) {
		int e = errno;

		if (!quiet_missing || e != ENOENT)
			cst_logf(log, cst_log_error, "%s: cannot open: %s", path,
				 cst_input_strerror(e));
		return e == ENOENT ? -cste_not_found : -cste_io;
	}
	line = ini_parse_file(f, on_value, doc);
	fclose(f);
	if (line == -2) {
		cst_logf(log, cst_log_error, "%s: out of memory while reading", path);
		return -cste_nomem;
	}
	if (line > 0) {
		cst_logf(log, cst_log_error,
			 "%s:%d: malformed line (expected [section] or key=value)", path, line);
		return -cste_format;
	}
	if (line < 0) {
		cst_logf(log, cst_log_error, "%s: cannot read", path);
		return -cste_io;
	}
	return 0;
}

void snap_ini_doc_fini(struct ini_doc *doc)
{
	if (!doc)
		return;
	for (int i = 0; i < doc->nsections; i++) {
		struct ini_section *s = &doc->sections[i];

		for (int k = 0; k < s->nkv; k++) {
			free(s->kv[k].key);
			free(s->kv[k].value);
		}
		free(s->kv);
		free(s->slots);
		free(s->name);
	}
	free(doc->sections);
	free(doc->path);
	memset(doc, 0, sizeof(*doc));
}

const struct ini_section *snap_ini_doc_section(const struct ini_doc *doc, const char *name)
{
	return snap_ini_doc_section_next(doc, name, NULL);
}

const struct ini_section *snap_ini_doc_section_next(const struct ini_doc *doc, const char *name,
						    const struct ini_section *prev)
{
	for (int i = prev ? (int)(prev - doc->sections) + 1 : 0; i < doc->nsections; i++)
		if (!strcasecmp(doc->sections[i].name, name))
			return &doc->sections[i];
	return NULL;
}

const char *snap_ini_section_get(const struct ini_section *sec, const char *key)
{
	unsigned k;

	if (!sec || !sec->nslots)
		return NULL;
	k = *key_slot(sec, key);
	return k ? sec->kv[k - 1].value : NULL;
}

const char *snap_ini_doc_get(const struct ini_doc *doc, const char *section, const char *key)
{
	for (int i = 0; i < doc->nsections; i++) {
		if (!strcasecmp(doc->sections[i].name, section)) {
			const char *v = snap_ini_section_get(&doc->sections[i], key);

			if (v)
				return v;
		}
	}
	return NULL;
}

/* Strip surrounding quotes and blanks in place (values like file="a.bin"). */
char *snap_ini_unquote(char *s)
{
	size_t n;

	while (*s == '"' || *s == '\'' || isspace((unsigned char)*s))
		s++;
	n = strlen(s);
	while (n && (s[n - 1] == '"' || s[n - 1] == '\'' || isspace((unsigned char)s[n - 1])))
		s[--n] = '\0';
	return s;
}

/* A register by name from the [regs] sections: keys may carry "(0x004)" or
 * "(id:0x4,size:64)" after the name, and match in any case. */
const char *snap_ini_doc_reg(const struct ini_doc *doc, const char *reg)
{
	size_t len = strlen(reg);

	for (int i = 0; i < doc->nsections; i++) {
		const struct ini_section *s = &doc->sections[i];

		if (strcasecmp(s->name, "regs") != 0)
			continue;
		for (int k = 0; k < s->nkv; k++) {
			const char *key = s->kv[k].key;

			if (!strncasecmp(key, reg, len) && (key[len] == '\0' || key[len] == '(' ||
							    isspace((unsigned char)key[len])))
				return s->kv[k].value;
		}
	}
	return NULL;
}
