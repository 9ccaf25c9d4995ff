/* Reader for "ARM Trace and Debug Snapshot" directories (snapshot.ini, trace.ini,
 * device files, buffers, memory dumps), as trc_pkt_lister and Arm DS read them:
 * what it finds goes to the caller's callbacks. */
#include "cstrace/snapshot.h"
#include "ini_doc.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

struct snap_device {
	struct ini_doc doc;
	const char *name;  /* [device] name */
	const char *klass; /* [device] class */
	const char *type;  /* [device] type */
};

/* Names already warned of, searched linearly: a warning's worth of them. */
struct seen {
	char **v;
	int n;
	size_t cap;
};

static void seen_fini(struct seen *s)
{
	for (int i = 0; i < s->n; i++)
		free(s->v[i]);
	free(s->v);
}

struct snap {
	const char *dir;
	const struct cst_log *log;
	const struct cst_snap_reader_cbs *cbs;
	void *ctx;
	int nsources; /* sources given to the caller */
	struct snap_device *devices;
	int ndevices;
	struct ini_doc snapshot_ini;
	struct ini_doc trace_ini;
	const struct ini_doc *trace_doc; /* trace.ini, or snapshot.ini holding the sections */
	struct seen missing; /* memory dumps already reported missing: report each once */
	struct seen outside; /* files outside the directory already warned of */
	char *real_dir;      /* the directory, symlinks resolved (confined reads) */
};

/* True the first time @path is put in @list (report each once). */
static bool first_time(struct seen *list, const char *path)
{
	for (int i = 0; i < list->n; i++)
		if (!strcmp(list->v[i], path))
			return false;
	if (CST_GROW(list->v, list->cap, (size_t)list->n + 1) < 0)
		return true;
	list->v[list->n] = strdup(path);
	if (list->v[list->n])
		list->n++;
	return true;
}

static bool first_missing(struct snap *ss, const char *path)
{
	return first_time(&ss->missing, path);
}

/* An absolute name, or one with a ".." component: outside the directory. */
static bool names_outside(const char *file)
{
	if (file[0] == '/')
		return true;
	for (const char *p = file; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
		if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || !p[2]))
			return true;
	return false;
}

/* A file the snapshot is about to read: with @confine it must resolve inside the
 * directory (a name that stays in it may still be a symlink out of it); then the
 * caller's file callback hears of it. */
static int snap_file(struct snap *ss, const char *by, const char *path)
{
	if (ss->cbs->confine) {
		char *real = realpath(path, NULL);
		size_t n;
		bool inside;

		if (!real && errno == ENOMEM)
			return -cste_nomem;
		if (real && !ss->real_dir && !(ss->real_dir = realpath(ss->dir, NULL))) {
			free(real);
			return errno == ENOMEM ? -cste_nomem : -cste_io;
		}
		/* a name that resolves to nothing is reported missing by its reader */
		n = real ? strlen(ss->real_dir) : 0;
		inside = !real || (!strncmp(real, ss->real_dir, n) && (n == 1 || real[n] == '/'));
		if (!inside) {
			cst_logf(ss->log, cst_log_error,
				 "%s: names %s, which resolves to %s, outside the snapshot "
				 "directory: refused (confined)",
				 by, path, real);
			free(real);
			return -cste_permission;
		}
		free(real);
	}
	return ss->cbs->file ? ss->cbs->file(ss->ctx, path) : 0;
}

/* Join @dir and @file unless @file is absolute; Windows separators become '/'.
 * A file outside the directory is named in a warning (once), or refused with
 * @confine. NULL with *err set when out of memory or refused. @by: the file
 * that names it. */
static char *snap_path(struct snap *ss, const char *by, const char *file, int *err)
{
	char *name = strdup(file), *out;

	*err = -cste_nomem;
	if (!name)
		return NULL;
	for (char *c = name; *c; c++)
		if (*c == '\\')
			*c = '/';
	if (names_outside(name)) {
		if (ss->cbs->confine) {
			cst_logf(ss->log, cst_log_error,
				 "%s: names %s, outside the snapshot directory: refused (confined)",
				 by, name);
			free(name);
			*err = -cste_permission;
			return NULL;
		}
		if (first_time(&ss->outside, name))
			cst_logf(ss->log, cst_log_warning,
				 "%s: reads %s, outside the snapshot directory", by, name);
	}
	if (name[0] == '/') {
		out = name;
	} else {
		if (asprintf(&out, "%s/%s", ss->dir, name) < 0)
			out = NULL;
		free(name);
	}
	if (out && (*err = snap_file(ss, by, out)) < 0) {
		free(out);
		return NULL;
	}
	return out;
}

static struct snap_device *snap_find_device(struct snap *ss, const char *name)
{
	for (int i = 0; i < ss->ndevices; i++)
		if (ss->devices[i].name && !strcasecmp(ss->devices[i].name, name))
			return &ss->devices[i];
	return NULL;
}

/* Read every register of @cfg's protocol from @dev's [regs]: a missing essential
 * one skips the source, a missing optional one takes the table's fallback. */
static int read_regs(struct snap *ss, const struct snap_device *dev, struct cst_source_cfg *cfg)
{
	for (const struct cst_source_reg *r = cst_source_regs(cfg->protocol); r->name; r++) {
		const char *v = snap_ini_doc_reg(&dev->doc, r->name);
		uint64_t val;

		if (!v) {
			if (r->essential) {
				cst_logf(ss->log, cst_log_warning,
					 "%s: register %s missing: source %s skipped",
					 dev->doc.path, r->name, dev->name);
				return -cste_format;
			}
			*cst_source_reg_ptr(cfg, r) = r->fallback;
			continue;
		}
		if (cst_parse_u64(v, &val) < 0 || val > UINT32_MAX) {
			cst_logf(ss->log, cst_log_warning,
				 "%s: register %s value '%s' is not a 32-bit number: source %s skipped",
				 dev->doc.path, r->name, v, dev->name);
			return -cste_format;
		}
		*cst_source_reg_ptr(cfg, r) = (uint32_t)val;
	}
	return 0;
}

/* Core devices named "cpu_N" (as OpenCSD's and perf's snapshot writers name them)
 * give the CPU number; other names (DS-5's "Cortex-A15_0") say nothing certain. */
static int cpu_of_core(const char *name)
{
	const char *p = name;

	if (strncasecmp(p, "cpu", 3) != 0)
		return -1;
	p += 3;
	if (*p == '_')
		p++;
	if (!isdigit((unsigned char)*p))
		return -1;
	for (const char *q = p; *q; q++)
		if (!isdigit((unsigned char)*q))
			return -1;
	return atoi(p);
}

static int source_from_device(struct snap *ss, const struct snap_device *dev,
			      const struct snap_device *core, struct cst_source_cfg *cfg)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->cpu = -1;
	cfg->protocol = cst_protocol_parse(dev->type ? dev->type : "");
	snprintf(cfg->name, sizeof(cfg->name), "%s", dev->name);

	if (cfg->protocol == cst_proto_unknown) {
		cst_logf(ss->log, cst_log_warning,
			 "%s: device %s has type '%s', which cstrace cannot decode "
			 "(expected ETM3.x, PTM1.x/PFT1.x, ETM4.x, ETE or STM): skipped",
			 dev->doc.path, dev->name, dev->type ? dev->type : "(none)");
		return -cste_unsupported;
	}
	if (read_regs(ss, dev, cfg) < 0)
		return -cste_format;
	if (cfg->protocol == cst_proto_stm)
		return 0; /* no core */

	if (!core) {
		cst_logf(ss->log, cst_log_warning,
			 "%s: source %s is not linked to a core in [core_trace_sources]: skipped",
			 ss->trace_doc->path, dev->name);
		return -cste_not_found;
	}
	snprintf(cfg->core_name, sizeof(cfg->core_name), "%s", core->type ? core->type : "");
	cfg->cpu = cpu_of_core(core->name);
	if (cst_core_lookup(cfg->core_name, &cfg->arch, &cfg->profile) < 0) {
		cst_logf(ss->log, cst_log_warning,
			 "%s: core type '%s' is unknown (expected e.g. Cortex-A53): source %s skipped",
			 core->doc.path, cfg->core_name, dev->name);
		return -cste_unsupported;
	}
	return 0;
}

static enum cst_mem_space space_of(const char *s)
{
	static const struct {
		const char *name;
		enum cst_mem_space space;
	} map[] = {
		{"EL1S", cst_mem_el1s}, {"EL1N", cst_mem_el1n}, {"EL2", cst_mem_el2},
		{"EL2N", cst_mem_el2},  {"EL2S", cst_mem_el2s}, {"EL3", cst_mem_el3},
		{"S", cst_mem_secure},  {"N", cst_mem_nonsecure}, {"ANY", cst_mem_any},
		{"H", cst_mem_el2},     {"P", cst_mem_el1n},   {"NP", cst_mem_el1n},
		{"SP", cst_mem_el1s},
	};

	for (size_t i = 0; s && i < sizeof(map) / sizeof(map[0]); i++)
		if (!strcasecmp(map[i].name, s))
			return map[i].space;
	return cst_mem_any; /* absent, or realm spaces 1.3.3 does not know */
}

/* Memory dumps of a core: [dump*] sections with file, address, length, offset, space. */
static int add_core_dumps(struct snap *ss, const struct snap_device *core)
{
	for (int i = 0; i < core->doc.nsections; i++) {
		const struct ini_section *s = &core->doc.sections[i];
		const char *file, *addr, *len, *off, *space;
		struct cst_mem_image img = {0};
		char *path, *fname;
		int perr;
		struct stat st;
		int err;

		if (strncasecmp(s->name, "dump", 4) != 0)
			continue;
		file = snap_ini_section_get(s, "file");
		addr = snap_ini_section_get(s, "address");
		len = snap_ini_section_get(s, "length");
		off = snap_ini_section_get(s, "offset");
		space = snap_ini_section_get(s, "space");
		if (!file || !addr) {
			cst_logf(ss->log, cst_log_warning,
				 "%s: [%s] needs file= and address=: dump skipped", core->doc.path,
				 s->name);
			continue;
		}
		if (cst_parse_u64(addr, &img.address) < 0 ||
		    (len && cst_parse_u64(len, &img.length) < 0) ||
		    (off && cst_parse_u64(off, &img.file_offset) < 0)) {
			cst_logf(ss->log, cst_log_warning,
				 "%s: [%s] address, length or offset is not a number: dump skipped",
				 core->doc.path, s->name);
			continue;
		}
		fname = strdup(file);
		if (!fname)
			return -cste_nomem;
		path = snap_path(ss, core->doc.path, snap_ini_unquote(fname), &perr);
		free(fname);
		if (!path)
			return perr;
		if (stat(path, &st) < 0 || !S_ISREG(st.st_mode)) {
			if (first_missing(ss, path))
				cst_logf(ss->log, cst_log_warning,
				 "%s: memory dump %s (for 0x%llx) is missing: code there cannot be "
				 "followed and shows as inaccessible (ADDR_NACC)",
				 core->doc.path, path, (unsigned long long)img.address);
			free(path);
			continue;
		}
		if (img.file_offset >= (uint64_t)st.st_size ||
		    (img.length && img.file_offset + img.length > (uint64_t)st.st_size)) {
			uint64_t avail = img.file_offset < (uint64_t)st.st_size
						 ? (uint64_t)st.st_size - img.file_offset
						 : 0;
			cst_logf(ss->log, cst_log_warning,
				 "%s: [%s] wants %llu bytes at offset %llu of %s, which has %llu: "
				 "mapping what is there",
				 core->doc.path, s->name, (unsigned long long)img.length,
				 (unsigned long long)img.file_offset, path, (unsigned long long)st.st_size);
			img.length = avail;
			if (!avail) {
				free(path);
				continue;
			}
		}
		img.path = path;
		img.space = space_of(space ? space : NULL);
		err = ss->cbs->image ? ss->cbs->image(ss->ctx, &img) : 0;
		free(path);
		if (err < 0)
			return err;
	}
	return 0;
}

static int load_devices(struct snap *ss)
{
	const struct ini_section *list = snap_ini_doc_section(&ss->snapshot_ini, "device_list");
	size_t n = 0;

	if (!list) {
		cst_logf(ss->log, cst_log_error, "%s: no [device_list] section",
			 ss->snapshot_ini.path);
		return -cste_format;
	}
	/* every [device_list] (a repeated key starts another): OpenCSD numbers the
	 * devices itself and takes them all; a file named again is read once */
	for (const struct ini_section *l = list; l;
	     l = snap_ini_doc_section_next(&ss->snapshot_ini, "device_list", l))
		n += (size_t)l->nkv;
	ss->devices = calloc(n, sizeof(*ss->devices));
	if (!ss->devices)
		return -cste_nomem;
	for (; list; list = snap_ini_doc_section_next(&ss->snapshot_ini, "device_list", list))
	for (int k = 0; k < list->nkv; k++) {
		struct snap_device *dev = &ss->devices[ss->ndevices];
		int err;
		char *path = snap_path(ss, ss->snapshot_ini.path, list->kv[k].value, &err);

		bool again = false;

		if (!path)
			return err;
		for (int i = 0; i < ss->ndevices && !again; i++)
			again = !strcmp(ss->devices[i].doc.path, path);
		if (again) {
			free(path);
			continue;
		}
		err = snap_ini_doc_load(&dev->doc, path, ss->log, 0);
		free(path);
		if (err == -cste_nomem)
			return err;
		if (err < 0) {
			snap_ini_doc_fini(&dev->doc);
			cst_logf(ss->log, cst_log_warning, "%s: device %s skipped",
				 ss->snapshot_ini.path, list->kv[k].key);
			continue;
		}
		dev->name = snap_ini_doc_get(&dev->doc, "device", "name");
		dev->klass = snap_ini_doc_get(&dev->doc, "device", "class");
		dev->type = snap_ini_doc_get(&dev->doc, "device", "type");
		if (!dev->name) {
			cst_logf(ss->log, cst_log_warning,
				 "%s: no [device] name=: device skipped", dev->doc.path);
			snap_ini_doc_fini(&dev->doc);
			continue;
		}
		ss->ndevices++;
	}
	return 0;
}

static int buffer_format(struct snap *ss, const char *fmt, enum cst_buffer_format *out)
{
	if (!fmt || !strcasecmp(fmt, "coresight"))
		*out = cst_bufmt_frames;
	else if (!strcasecmp(fmt, "source_data"))
		*out = cst_bufmt_raw;
	else if (!strcasecmp(fmt, "dstream_coresight"))
		*out = cst_bufmt_dstream;
	else if (!strcasecmp(fmt, "tpiu") || !strcasecmp(fmt, "tpiu_coresight"))
		*out = cst_bufmt_tpiu;
	else {
		cst_logf(ss->log, cst_log_error,
			 "%s: buffer format '%s' unknown (expected coresight, source_data or "
			 "dstream_coresight)",
			 ss->trace_doc->path, fmt);
		return -cste_format;
	}
	return 0;
}

static int cmp_kv_key(const void *a, const void *b)
{
	return strcmp(((const struct ini_kv *)a)->key, ((const struct ini_kv *)b)->key);
}

/* The core device that a source traces, from [core_trace_sources] core=source:
 * a core may be named once per source (a key given again starts another section),
 * and a source named twice has its last core, as OpenCSD reads it. */
static struct snap_device *core_of_source(struct snap *ss, const char *source)
{
	const char *core = NULL;

	for (const struct ini_section *c = snap_ini_doc_section(ss->trace_doc, "core_trace_sources");
	     c; c = snap_ini_doc_section_next(ss->trace_doc, "core_trace_sources", c))
		for (int k = 0; k < c->nkv; k++)
			if (!strcasecmp(c->kv[k].value, source))
				core = c->kv[k].key;
	return core ? snap_find_device(ss, core) : NULL;
}

/* The buffer source @source is in: the last [source_buffers] entry naming it. */
static const char *source_buffer(struct snap *ss, const char *source)
{
	const char *buf = NULL;

	for (const struct ini_section *sb = snap_ini_doc_section(ss->trace_doc, "source_buffers");
	     sb; sb = snap_ini_doc_section_next(ss->trace_doc, "source_buffers", sb))
		for (int k = 0; k < sb->nkv; k++)
			if (!strcasecmp(sb->kv[k].key, source))
				buf = sb->kv[k].value;
	return buf;
}

static int load_buffer(struct snap *ss, const char *section)
{
	const struct ini_section *sec = snap_ini_doc_section(ss->trace_doc, section);
	const struct ini_section *srcbuf = snap_ini_doc_section(ss->trace_doc, "source_buffers");
	struct cst_buffer_info info = {0};
	const char *name, *file;
	struct ini_kv *sources = NULL;
	int nsources = 0, buffer, ndecoders = 0, err = 0;
	char *path;

	if (!sec) {
		cst_logf(ss->log, cst_log_error, "%s: buffer section [%s] listed but missing",
			 ss->trace_doc->path, section);
		return -cste_format;
	}
	name = snap_ini_section_get(sec, "name");
	file = snap_ini_section_get(sec, "file");
	if (!name || !file) {
		cst_logf(ss->log, cst_log_error, "%s: [%s] needs name= and file=",
			 ss->trace_doc->path, section);
		return -cste_format;
	}
	err = buffer_format(ss, snap_ini_section_get(sec, "format"), &info.format);
	if (err)
		return err;
	path = snap_path(ss, ss->trace_doc->path, file, &err);
	if (!path)
		return err;
	info.name = name;
	info.path = path;
	info.size = UINT64_MAX;
	buffer = ss->cbs->buffer(ss->ctx, &info);
	free(path);
	if (buffer < 0)
		return buffer;

	/* trc_pkt_lister walks the buffer's sources in name order; so do we, so that
	 * decoders and memory images are set up identically. Every [source_buffers]
	 * counts (a key given again starts another), a source's last buffer wins. */
	for (const struct ini_section *sb = srcbuf; sb;
	     sb = snap_ini_doc_section_next(ss->trace_doc, "source_buffers", sb)) {
		struct ini_kv *more = realloc(sources, ((size_t)nsources + (size_t)sb->nkv + 1) *
							       sizeof(*sources));

		if (!more) {
			free(sources);
			return -cste_nomem;
		}
		sources = more;
		for (int k = 0; k < sb->nkv; k++) {
			if (source_buffer(ss, sb->kv[k].key) != sb->kv[k].value)
				continue; /* named again later, for another buffer */
			if (!strcasecmp(sb->kv[k].value, name))
				sources[nsources++] = sb->kv[k];
		}
	}
	if (nsources)
		qsort(sources, (size_t)nsources, sizeof(*sources), cmp_kv_key);
	for (int i = 0; i < nsources; i++) {
		struct snap_device *dev = snap_find_device(ss, sources[i].key);
		struct snap_device *core;
		struct cst_source_cfg cfg;

		if (!dev) {
			/* DS-5 lists every source of a system, traced or not */
			cst_logf(ss->log, cst_log_debug,
				 "%s: source %s has no device file in [device_list]: skipped",
				 ss->trace_doc->path, sources[i].key);
			continue;
		}
		if (info.format == cst_bufmt_raw && ndecoders > 0) {
			cst_logf(ss->log, cst_log_warning,
				 "%s: buffer %s is unformatted and carries one source: %s ignored",
				 ss->trace_doc->path, name, sources[i].key);
			continue;
		}
		core = core_of_source(ss, dev->name);
		if (source_from_device(ss, dev, core, &cfg) < 0)
			continue;
		err = ss->cbs->source(ss->ctx, buffer, &cfg);
		if (err < 0)
			break;
		ss->nsources++;
		ndecoders++;
		if (core) {
			err = add_core_dumps(ss, core);
			if (err < 0)
				break;
		}
	}
	free(sources);
	return err < 0 ? err : 0;
}

static int load_trace_metadata(struct snap *ss)
{
	const char *meta = snap_ini_doc_get(&ss->snapshot_ini, "trace", "metadata");
	const char *list;
	char *copy, *tok, *save = NULL;
	int err = 0;

	ss->trace_doc = &ss->snapshot_ini;
	if (meta) {
		char *path = snap_path(ss, ss->snapshot_ini.path, meta, &err);

		if (!path)
			return err;
		err = snap_ini_doc_load(&ss->trace_ini, path, ss->log, 0);
		free(path);
		if (err < 0)
			return err;
		ss->trace_doc = &ss->trace_ini;
	}
	list = snap_ini_doc_get(ss->trace_doc, "trace_buffers", "buffers");
	if (!list) {
		cst_logf(ss->log, cst_log_error, "%s: no [trace_buffers] buffers= list",
			 ss->trace_doc->path);
		return -cste_format;
	}
	copy = strdup(list);
	if (!copy)
		return -cste_nomem;
	for (tok = strtok_r(copy, ",", &save); tok && !err; tok = strtok_r(NULL, ",", &save))
		err = load_buffer(ss, snap_ini_unquote(tok));
	free(copy);
	return err;
}

static void snap_fini(struct snap *ss)
{
	for (int i = 0; i < ss->ndevices; i++)
		snap_ini_doc_fini(&ss->devices[i].doc);
	free(ss->devices);
	seen_fini(&ss->missing);
	seen_fini(&ss->outside);
	free(ss->real_dir);
	snap_ini_doc_fini(&ss->snapshot_ini);
	snap_ini_doc_fini(&ss->trace_ini);
}

int cst_snap_read(const char *dir, const struct cst_snap_reader_cbs *cbs, void *ctx,
		  const struct cst_log *log)
{
	struct cst_snap_reader_cbs c = {0};
	struct snap ss = {.dir = dir, .log = log, .cbs = &c, .ctx = ctx};
	const char *version;
	char *path;
	int err;

	if (!dir || !cbs || cst_opts_load(&c, sizeof(c), cbs, "cst_snap_reader_cbs", log) < 0 ||
	    !c.buffer || !c.source)
		return -cste_invalid;
	if (asprintf(&path, "%s/snapshot.ini", dir) < 0)
		return -cste_nomem;
	err = snap_file(&ss, dir, path);
	if (err < 0) {
		free(path);
		goto out;
	}
	err = snap_ini_doc_load(&ss.snapshot_ini, path, log, 0);
	free(path);
	if (err < 0)
		goto out;
	version = snap_ini_doc_get(&ss.snapshot_ini, "snapshot", "version");
	if (version && strcmp(version, "1.0") != 0 && strcmp(version, "1") != 0)
		cst_logf(log, cst_log_warning, "%s: snapshot version '%s' (expected 1.0): reading anyway",
			 ss.snapshot_ini.path, version);
	err = load_devices(&ss);
	if (err < 0)
		goto out;
	err = load_trace_metadata(&ss);
	if (err < 0)
		goto out;
	if (ss.nsources == 0) {
		cst_logf(log, cst_log_error, "%s: no trace source cstrace can decode",
			 ss.trace_doc->path);
		err = -cste_no_trace;
	}
out:
	snap_fini(&ss);
	return err < 0 ? err : ss.nsources;
}
