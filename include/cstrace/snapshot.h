/* cstrace snapshot format: "ARM Trace and Debug Snapshot" directories as OpenCSD's
 * reader, DS-5 and cstrace read them (snapshot.ini, trace.ini, one .ini per device,
 * buffers and memory dumps). Decode reads them through this library; capture and
 * synth write them through it, its files created 0600, since they hold trace and
 * memory of a program. */
#ifndef CSTRACE_SNAPSHOT_H
#define CSTRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"
#include "cstrace/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Reading.
 * ------------------------------------------------------------------------ */

/** Where a snapshot's contents go, in reading order: each buffer, then the sources
 *  it carries in name order (as trc_pkt_lister sets them up), each followed by the
 *  memory dumps of the core it traces. Strings are valid during the call only. */
struct cst_snap_reader_cbs {
	size_t sz;                 /* sizeof(struct cst_snap_reader_cbs) */
	/** A trace buffer; returns its index for the sources (>= 0) or an error. */
	int (*buffer)(void *ctx, const struct cst_buffer_info *info);
	/** A trace source in buffer @buffer; returns >= 0 or an error. */
	int (*source)(void *ctx, int buffer, const struct cst_source_cfg *cfg);
	/** A memory dump of a core (may be NULL: dumps are not wanted). */
	int (*image)(void *ctx, const struct cst_mem_image *img);
	/** Files named outside the directory (an absolute path, or one climbing out
	 *  with ..) are read with a warning naming each; with @confine the snapshot
	 *  is refused instead (for services that decode untrusted uploads): so is a
	 *  name inside it that a symlink takes out of it. */
	bool confine;
	uint8_t reserved[7];
	/** Every file the snapshot reads (its .ini files, buffers and dumps), named
	 *  as it is opened, before it is read; may be NULL. A caller that writes
	 *  files learns which it must not write over. */
	int (*file)(void *ctx, const char *path);
};

/** Read the snapshot directory @dir. Keys match in any case; paths may be relative
 *  to the directory or absolute; sources cstrace cannot decode, missing dumps and
 *  other faults that leave the rest usable are logged through @log and skipped.
 *  Returns the number of sources given (> 0) or a negative error, logged with file
 *  and line: -cste_invalid, -cste_not_found, -cste_format, -cste_io, -cste_nomem,
 *  -cste_no_trace (nothing decodable), or what a callback returned. */
int cst_snap_read(const char *dir, const struct cst_snap_reader_cbs *cbs, void *ctx,
		  const struct cst_log *log);

/* ------------------------------------------------------------------------
 * Writing.
 * ------------------------------------------------------------------------ */

struct cst_snap_writer;

struct cst_snap_writer_opts {
	size_t sz;                 /* sizeof(struct cst_snap_writer_opts) */
	const struct cst_log *log;
};

/** Start writing a snapshot to appear as @dir. Files go into a temporary
 *  directory beside it (0700) until cst_snap_writer_finish moves it into place,
 *  so @dir never holds half a snapshot. @dir may be missing or empty; a
 *  previous snapshot there is kept as @dir.old (refused, -cste_invalid, when
 *  that exists too: nothing is deleted). Errors: -cste_invalid, -cste_io
 *  (logged with the path), -cste_nomem. */
int cst_snap_writer_open(struct cst_snap_writer **out, const char *dir,
			 const struct cst_snap_writer_opts *opts);
/** Free @w (NULL is ignored). Without a successful cst_snap_writer_finish, the
 *  temporary directory and its files are removed; @dir is untouched. */
void cst_snap_writer_free(struct cst_snap_writer *w);

/** Write @len bytes to @file in the directory (0600; a buffer or a memory dump).
 *  Errors: -cste_invalid, -cste_io (logged). */
int cst_snap_writer_write_file(struct cst_snap_writer *w, const char *file, const void *bytes,
			       uint64_t len);

/** The path of @file in the directory, for a caller that streams a large buffer
 *  itself (create it 0600). Returns the length or -cste_nomem (too long). */
int cst_snap_writer_path(const struct cst_snap_writer *w, const char *file, char *buf,
			 size_t size);

/** List the trace buffer: @name ("ETB_0") held in @file, CoreSight-formatted.
 *  Every source added goes to it. Errors: -cste_invalid, -cste_nomem. */
int cst_snap_writer_set_buffer(struct cst_snap_writer *w, const char *name, const char *file);

/** A core and the trace source that traces it. */
struct cst_snap_core {
	const char *name;          /* "cpu_0" */
	const char *file;          /* its device file: "cpu_0.ini" */
	const char *type;          /* the core's name: "Cortex-A53" */
	const char *regs;          /* lines of its [regs] section ("PC(size:64)=0x..."), or NULL */
	const char *source_file;   /* the source's device file: "etm_0.ini" */
	const struct cst_source_cfg *source; /* protocol, device name and registers */
};

/** Add a core and its source. Returns the core's index or -cste_invalid, -cste_nomem. */
int cst_snap_writer_add_core(struct cst_snap_writer *w, const struct cst_snap_core *core);

/** List a memory dump under core @core: @len bytes at @addr held in @file. With
 *  @bytes, the file is written too (0600); without, another core's dump is named
 *  again. Errors: -cste_invalid, -cste_io, -cste_nomem. */
int cst_snap_writer_add_dump(struct cst_snap_writer *w, int core, const char *file,
			     uint64_t addr, const void *bytes, uint64_t len);

/** Write snapshot.ini, trace.ini and every device file. A source's device type
 *  names its protocol as snapshot readers expect ("ETM3.5", "PTM1.1", "ETM4",
 *  "ETE", "STM"); its registers are
 *  written as the source table names and numbers them ("TRCIDR0(0x078)=0x..."),
 *  all of their protocol (TRCDEVARCH for ETE only). Then the directory is moved
 *  into place (a previous snapshot there becomes @dir.old).
 *  Errors: -cste_invalid (no buffer or no core), -cste_io (logged), -cste_nomem. */
int cst_snap_writer_finish(struct cst_snap_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_SNAPSHOT_H */
