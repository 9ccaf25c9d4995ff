/* Writing snapshot directories: the ini files OpenCSD's snapshot reader expects
 * (cores first in the device list, then their sources; one buffer that every
 * source goes to), the sources' registers from the source table, and the buffer
 * and dump files, all created 0600. The directory appears whole: files go into a
 * temporary one beside it, renamed into place by cst_snap_writer_finish (a
 * previous snapshot there kept as DIR.old); an unfinished one is removed. */
#include "cstrace/snapshot.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

struct dump {
	int core;
	char *file;
	uint64_t addr, len;
};

struct core {
	char *name, *file, *type, *regs, *source_file;
	struct cst_source_cfg source;
};

struct cst_snap_writer {
	char *dir;   /* where files go: the temporary directory */
	char *final; /* where the snapshot appears */
	bool done;
	const struct cst_log *log;
	char *buffer_name, *buffer_file;
	struct core *cores;
	size_t ncores, cap_cores;
	struct dump *dumps;
	size_t ndumps, cap_dumps;
};

/* True when @path is a directory holding nothing. */
static bool dir_empty(const char *path)
{
	DIR *d = opendir(path);
	struct dirent *e;
	bool empty = d != NULL;

	while (d && empty && (e = readdir(d)))
		empty = !strcmp(e->d_name, ".") || !strcmp(e->d_name, "..");
	if (d)
		closedir(d);
	return empty;
}

/* The destination may be missing, an empty directory, or a directory to keep as
 * DIR.old (refused when DIR.old exists too: nothing is ever deleted). */
static int check_destination(struct cst_snap_writer *w)
{
	struct stat st;
	char *old;
	int err = 0;

	if (lstat(w->final, &st) != 0)
		return 0;
	if (!S_ISDIR(st.st_mode)) {
		cst_logf(w->log, cst_log_error, "%s: exists and is not a directory", w->final);
		return -cste_invalid;
	}
	if (dir_empty(w->final))
		return 0;
	if (asprintf(&old, "%s.old", w->final) < 0)
		return -cste_nomem;
	if (lstat(old, &st) == 0) {
		cst_logf(w->log, cst_log_error,
			 "%s: exists, and so does %s, where it would be kept: remove one", w->final,
			 old);
		err = -cste_invalid;
	}
	free(old);
	return err;
}

/* Remove the temporary directory of an unfinished snapshot (only files: the
 * writer makes no subdirectories). */
static void remove_temporary(struct cst_snap_writer *w)
{
	DIR *d = opendir(w->dir);
	struct dirent *e;
	char path[4096];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", w->dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(w->dir);
}

int cst_snap_writer_open(struct cst_snap_writer **out, const char *dir,
			 const struct cst_snap_writer_opts *opts)
{
	struct cst_snap_writer_opts o = {0};
	struct cst_snap_writer *w;
	int err;

	if (!out || !dir || !*dir ||
	    cst_opts_load(&o, sizeof(o), opts, "cst_snap_writer_opts", opts ? opts->log : NULL) < 0)
		return -cste_invalid;
	*out = NULL;
	w = calloc(1, sizeof(*w));
	if (!w || !(w->final = strdup(dir))) {
		free(w);
		return -cste_nomem;
	}
	w->log = o.log;
	/* "out/" and "out" are one place: the temporary goes beside it, not in it */
	for (size_t n = strlen(w->final); n > 1 && w->final[n - 1] == '/'; n--)
		w->final[n - 1] = '\0';
	err = check_destination(w);
	if (!err && asprintf(&w->dir, "%s.tmp.XXXXXX", w->final) < 0) {
		w->dir = NULL;
		err = -cste_nomem;
	}
	if (!err && !mkdtemp(w->dir)) { /* 0700 */
		cst_logf(o.log, cst_log_error, "%s: cannot create the directory: %s", w->dir,
			 strerror(errno));
		err = -cste_io;
	}
	if (err) {
		free(w->dir);
		w->dir = NULL;
		cst_snap_writer_free(w);
		return err;
	}
	*out = w;
	return 0;
}

void cst_snap_writer_free(struct cst_snap_writer *w)
{
	if (!w)
		return;
	if (w->dir && !w->done)
		remove_temporary(w);
	for (size_t i = 0; i < w->ncores; i++) {
		struct core *c = &w->cores[i];

		free(c->name);
		free(c->file);
		free(c->type);
		free(c->regs);
		free(c->source_file);
	}
	for (size_t i = 0; i < w->ndumps; i++)
		free(w->dumps[i].file);
	free(w->cores);
	free(w->dumps);
	free(w->buffer_name);
	free(w->buffer_file);
	free(w->dir);
	free(w->final);
	free(w);
}

int cst_snap_writer_path(const struct cst_snap_writer *w, const char *file, char *buf,
			 size_t size)
{
	int n;

	if (!w || !file || !buf)
		return -cste_invalid;
	n = snprintf(buf, size, "%s/%s", w->dir, file);
	return n < 0 || (size_t)n >= size ? -cste_nomem : n;
}

/* Open @file for writing, 0600, as a stdio stream. */
static FILE *create(struct cst_snap_writer *w, const char *file, const char *mode)
{
	char path[4096];
	int fd;
	FILE *f;

	if (cst_snap_writer_path(w, file, path, sizeof(path)) < 0)
		return NULL;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0 || !(f = fdopen(fd, mode))) {
		cst_logf(w->log, cst_log_error, "%s: cannot create: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	return f;
}

static int finish_file(struct cst_snap_writer *w, FILE *f, const char *file, bool ok)
{
	ok = !ferror(f) && ok;
	ok = fclose(f) == 0 && ok;
	if (!ok)
		cst_logf(w->log, cst_log_error, "%s/%s: write failed", w->dir, file);
	return ok ? 0 : -cste_io;
}

int cst_snap_writer_write_file(struct cst_snap_writer *w, const char *file, const void *bytes,
			       uint64_t len)
{
	FILE *f;

	if (!w || !file || (!bytes && len))
		return -cste_invalid;
	f = create(w, file, "wb");
	if (!f)
		return -cste_io;
	return finish_file(w, f, file, !len || fwrite(bytes, 1, (size_t)len, f) == len);
}

static int set_str(char **dst, const char *s)
{
	char *c = s ? strdup(s) : NULL;

	if (s && !c)
		return -cste_nomem;
	free(*dst);
	*dst = c;
	return 0;
}

int cst_snap_writer_set_buffer(struct cst_snap_writer *w, const char *name, const char *file)
{
	if (!w || !name || !file)
		return -cste_invalid;
	if (set_str(&w->buffer_name, name) < 0 || set_str(&w->buffer_file, file) < 0)
		return -cste_nomem;
	return 0;
}

/* A source's device type, as the snapshot readers of Arm's tools and OpenCSD name
 * it (the version is the one the cores cstrace writes for implement); NULL for a
 * protocol without one. */
static const char *device_type(enum cst_protocol protocol)
{
	switch (protocol) {
	case cst_proto_etmv3: return "ETM3.5";
	case cst_proto_ptm: return "PTM1.1";
	case cst_proto_etmv4i: return "ETM4";
	case cst_proto_ete: return "ETE";
	case cst_proto_stm: return "STM";
	default: return NULL;
	}
}

int cst_snap_writer_add_core(struct cst_snap_writer *w, const struct cst_snap_core *core)
{
	struct core *c;

	if (!w || !core || !core->name || !core->file || !core->type || !core->source_file ||
	    !core->source || !device_type(core->source->protocol))
		return -cste_invalid;
	if (CST_GROW(w->cores, w->cap_cores, w->ncores + 1) < 0)
		return -cste_nomem;
	c = &w->cores[w->ncores];
	memset(c, 0, sizeof(*c));
	c->source = *core->source;
	if (set_str(&c->name, core->name) < 0 || set_str(&c->file, core->file) < 0 ||
	    set_str(&c->type, core->type) < 0 || set_str(&c->regs, core->regs) < 0 ||
	    set_str(&c->source_file, core->source_file) < 0) {
		w->ncores++; /* freed with the writer */
		return -cste_nomem;
	}
	return (int)w->ncores++;
}

int cst_snap_writer_add_dump(struct cst_snap_writer *w, int core, const char *file,
			     uint64_t addr, const void *bytes, uint64_t len)
{
	struct dump *d;
	int err;

	if (!w || !file || core < 0 || (size_t)core >= w->ncores)
		return -cste_invalid;
	if (bytes && (err = cst_snap_writer_write_file(w, file, bytes, len)) < 0)
		return err;
	if (CST_GROW(w->dumps, w->cap_dumps, w->ndumps + 1) < 0)
		return -cste_nomem;
	d = &w->dumps[w->ndumps];
	*d = (struct dump){core, strdup(file), addr, len};
	if (!d->file)
		return -cste_nomem;
	w->ndumps++;
	return 0;
}

/* snapshot.ini: cores first, then their sources. */
static int write_snapshot_ini(struct cst_snap_writer *w)
{
	FILE *f = create(w, "snapshot.ini", "w");
	size_t n = w->ncores;

	if (!f)
		return -cste_io;
	fprintf(f, "[snapshot]\nversion=1.0\n\n[device_list]\n");
	for (size_t k = 0; k < n; k++)
		fprintf(f, "device%zu=%s\n", k, w->cores[k].file);
	for (size_t k = 0; k < n; k++)
		fprintf(f, "device%zu=%s\n", n + k, w->cores[k].source_file);
	fprintf(f, "\n[trace]\nmetadata=trace.ini\n");
	return finish_file(w, f, "snapshot.ini", true);
}

/* trace.ini: the buffer, every source in it, and which core each traces. */
static int write_trace_ini(struct cst_snap_writer *w)
{
	FILE *f = create(w, "trace.ini", "w");

	if (!f)
		return -cste_io;
	fprintf(f, "[trace_buffers]\nbuffers=buffer0\n\n[buffer0]\nname=%s\nfile=%s\n"
		   "format=coresight\n\n[source_buffers]\n",
		w->buffer_name, w->buffer_file);
	for (size_t k = 0; k < w->ncores; k++)
		fprintf(f, "%s=%s\n", w->cores[k].source.name, w->buffer_name);
	fprintf(f, "\n[core_trace_sources]\n");
	for (size_t k = 0; k < w->ncores; k++)
		fprintf(f, "%s=%s\n", w->cores[k].name, w->cores[k].source.name);
	return finish_file(w, f, "trace.ini", true);
}

/* The core's device file: its type, registers and the memory dumps listed under it. */
static int write_core(struct cst_snap_writer *w, size_t k)
{
	const struct core *c = &w->cores[k];
	FILE *f = create(w, c->file, "w");
	int n = 0;

	if (!f)
		return -cste_io;
	fprintf(f, "[device]\nname=%s\nclass=core\ntype=%s\n\n[regs]\n%s", c->name, c->type,
		c->regs ? c->regs : "");
	for (size_t i = 0; i < w->ndumps; i++) {
		const struct dump *d = &w->dumps[i];

		if ((size_t)d->core != k)
			continue;
		fprintf(f, "\n[dump%d]\nfile=%s\naddress=0x%" PRIx64 "\nlength=0x%" PRIx64 "\n", n++,
			d->file, d->addr, d->len);
	}
	return finish_file(w, f, c->file, true);
}

/* The source's device file: every register of its protocol, named and numbered as
 * the source table has them (the number is what OpenCSD's reader matches). */
static int write_source(struct cst_snap_writer *w, size_t k)
{
	struct core *c = &w->cores[k];
	FILE *f = create(w, c->source_file, "w");

	if (!f)
		return -cste_io;
	fprintf(f, "[device]\nname=%s\nclass=trace_source\ntype=%s\n\n[regs]\n", c->source.name,
		device_type(c->source.protocol));
	for (const struct cst_source_reg *r = cst_source_regs(c->source.protocol); r->name; r++) {
		if (r->ete_only && c->source.protocol != cst_proto_ete)
			continue;
		fprintf(f, "%s(0x%03X)=0x%08X\n", r->name, r->word,
			cst_source_reg_get(&c->source, r));
	}
	return finish_file(w, f, c->source_file, true);
}

/* The whole snapshot appears at its destination; a previous one becomes .old. */
static int move_into_place(struct cst_snap_writer *w)
{
	struct stat st;
	char *old = NULL;
	int err = 0;

	if (lstat(w->final, &st) == 0) {
		if (dir_empty(w->final)) {
			if (rmdir(w->final) != 0)
				err = -cste_io;
		} else if (asprintf(&old, "%s.old", w->final) < 0) {
			old = NULL;
			err = -cste_nomem;
		} else if (rename(w->final, old) != 0) {
			err = -cste_io;
		}
	}
	if (!err && rename(w->dir, w->final) != 0)
		err = -cste_io;
	if (err)
		cst_logf(w->log, cst_log_error, "%s: cannot put the snapshot in place: %s", w->final,
			 strerror(errno));
	else
		w->done = true;
	free(old);
	return err;
}

int cst_snap_writer_finish(struct cst_snap_writer *w)
{
	int err;

	if (!w || !w->buffer_name || !w->ncores)
		return -cste_invalid;
	err = write_snapshot_ini(w);
	if (!err)
		err = write_trace_ini(w);
	for (size_t k = 0; k < w->ncores && !err; k++) {
		err = write_core(w, k);
		if (!err)
			err = write_source(w, k);
	}
	if (!err)
		err = move_into_place(w);
	return err;
}
