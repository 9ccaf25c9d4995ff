/* Internal to snapshot/: an INI file read whole into sections of key/value pairs
 * (libinih does the parsing), with case-insensitive look-ups. */
#ifndef CSTRACE_SNAPSHOT_INI_DOC_H
#define CSTRACE_SNAPSHOT_INI_DOC_H

#include "cstrace/common.h"

struct ini_kv {
	char *key;
	char *value;
};

struct ini_section {
	char *name;
	struct ini_kv *kv;
	int nkv;
	size_t cap;
	/* open-addressed index of the keys (kv index + 1; 0 = empty), so that a
	 * section of many keys ([device_list] of a big system, or a hostile one) is
	 * read in linear time: each new key is looked up before it is added */
	unsigned *slots;
	size_t nslots;
};

struct ini_doc {
	char *path;
	struct ini_section *sections;
	int nsections;
	size_t cap;
};

/** Read @path. On a malformed line, logs "PATH:LINE: ..." and returns -cste_format;
 *  a missing file gives -cste_not_found (logged unless @quiet_missing). */
int snap_ini_doc_load(struct ini_doc *doc, const char *path, const struct cst_log *log,
		 int quiet_missing);
void snap_ini_doc_fini(struct ini_doc *doc);

/** First section named @name (case-insensitive), or NULL. A key given twice in a
 *  section starts another section of the same name (OpenCSD's snapshots name a
 *  core once per source: "cpu_0=ETE_0_s1", "cpu_0=ETE_0_s2"): lists read every
 *  one of them, with snap_ini_doc_section_next. */
const struct ini_section *snap_ini_doc_section(const struct ini_doc *doc, const char *name);
/** The next section named @name after @prev (NULL: the first), or NULL. */
const struct ini_section *snap_ini_doc_section_next(const struct ini_doc *doc, const char *name,
						    const struct ini_section *prev);
/** Value of @key in @sec (case-insensitive), or NULL. */
const char *snap_ini_section_get(const struct ini_section *sec, const char *key);
/** Value of @key in the first section @section that has it, or NULL. */
const char *snap_ini_doc_get(const struct ini_doc *doc, const char *section, const char *key);
/** A register's value from the [regs] sections of @doc, or NULL: keys may carry
 *  "(0x004)" or "(id:0x4,size:64)" after the name, and match in any case. */
const char *snap_ini_doc_reg(const struct ini_doc *doc, const char *reg);
/** @s without surrounding quotes and blanks, in place (values like file="a.bin"). */
char *snap_ini_unquote(char *s);

#endif
