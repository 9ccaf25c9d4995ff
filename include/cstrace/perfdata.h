/* cstrace perf.data stage: reads perf.data files recorded with cs_etm (header,
 * attrs, features, records, cs_etm AUXTRACE_INFO) and writes files Linux perf reads. */
#ifndef CSTRACE_PERFDATA_H
#define CSTRACE_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Constants of the format (tools/perf/util/header.h, uapi perf_event.h).
 * ------------------------------------------------------------------------ */

#define CST_PERF_MAGIC 0x32454c4946524550ULL /* "PERFILE2" read little-endian */
#define CST_PERF_HEADER_SIZE 104
#define CST_PERF_ATTR_SIZE 128 /* PERF_ATTR_SIZE_VER7: the size perf 6.1 knows */

/** Record types (PERF_RECORD_*). */
enum cst_perf_record_type {
	cst_perf_rec_mmap = 1,
	cst_perf_rec_lost = 2,
	cst_perf_rec_comm = 3,
	cst_perf_rec_exit = 4,
	cst_perf_rec_throttle = 5,
	cst_perf_rec_unthrottle = 6,
	cst_perf_rec_fork = 7,
	cst_perf_rec_read = 8,
	cst_perf_rec_sample = 9,
	cst_perf_rec_mmap2 = 10,
	cst_perf_rec_aux = 11,
	cst_perf_rec_itrace_start = 12,
	cst_perf_rec_lost_samples = 13,
	cst_perf_rec_switch = 14,
	cst_perf_rec_switch_cpu_wide = 15,
	cst_perf_rec_namespaces = 16,
	cst_perf_rec_ksymbol = 17,
	cst_perf_rec_bpf_event = 18,
	cst_perf_rec_cgroup = 19,
	cst_perf_rec_text_poke = 20,
	cst_perf_rec_aux_output_hw_id = 21,
	/* perf's own records */
	cst_perf_rec_header_attr = 64,
	cst_perf_rec_finished_round = 68,
	cst_perf_rec_id_index = 69,
	cst_perf_rec_auxtrace_info = 70,
	cst_perf_rec_auxtrace = 71,
	cst_perf_rec_auxtrace_error = 72,
	cst_perf_rec_thread_map = 73,
	cst_perf_rec_cpu_map = 74,
	cst_perf_rec_stat_config = 75,
	cst_perf_rec_stat = 76,
	cst_perf_rec_stat_round = 77,
	cst_perf_rec_event_update = 78,
	cst_perf_rec_time_conv = 79,
	cst_perf_rec_header_feature = 80,
	cst_perf_rec_compressed = 81,
	cst_perf_rec_finished_init = 82,
};

/** Record header misc bits used here. */
#define CST_PERF_MISC_CPUMODE_MASK 0x7
#define CST_PERF_MISC_KERNEL 1
#define CST_PERF_MISC_USER 2
#define CST_PERF_MISC_MMAP_BUILD_ID (1u << 14) /* MMAP2 carries a build-id */
#define CST_PERF_MISC_SWITCH_OUT (1u << 13)
#define CST_PERF_MISC_SWITCH_OUT_PREEMPT (1u << 14)

/** attr.sample_type bits (PERF_SAMPLE_*). */
#define CST_PERF_SAMPLE_IP (1ULL << 0)
#define CST_PERF_SAMPLE_TID (1ULL << 1)
#define CST_PERF_SAMPLE_TIME (1ULL << 2)
#define CST_PERF_SAMPLE_ADDR (1ULL << 3)
#define CST_PERF_SAMPLE_READ (1ULL << 4)
#define CST_PERF_SAMPLE_CALLCHAIN (1ULL << 5)
#define CST_PERF_SAMPLE_ID (1ULL << 6)
#define CST_PERF_SAMPLE_CPU (1ULL << 7)
#define CST_PERF_SAMPLE_PERIOD (1ULL << 8)
#define CST_PERF_SAMPLE_STREAM_ID (1ULL << 9)
#define CST_PERF_SAMPLE_RAW (1ULL << 10)
#define CST_PERF_SAMPLE_IDENTIFIER (1ULL << 16)

/** attr flag bits (the u64 bitfield word after bp_type/read_format). */
#define CST_PERF_ATTR_DISABLED (1ULL << 0)
#define CST_PERF_ATTR_INHERIT (1ULL << 1)
#define CST_PERF_ATTR_EXCLUDE_KERNEL (1ULL << 5)
#define CST_PERF_ATTR_EXCLUDE_HV (1ULL << 6)
#define CST_PERF_ATTR_MMAP (1ULL << 8)
#define CST_PERF_ATTR_COMM (1ULL << 9)
#define CST_PERF_ATTR_FREQ (1ULL << 10)
#define CST_PERF_ATTR_ENABLE_ON_EXEC (1ULL << 12)
#define CST_PERF_ATTR_TASK (1ULL << 13)
#define CST_PERF_ATTR_SAMPLE_ID_ALL (1ULL << 18)
#define CST_PERF_ATTR_MMAP2 (1ULL << 23)
#define CST_PERF_ATTR_COMM_EXEC (1ULL << 24)
#define CST_PERF_ATTR_CONTEXT_SWITCH (1ULL << 26)
#define CST_PERF_ATTR_BUILD_ID (1ULL << 34)

/** Feature bits (HEADER_*). */
enum cst_perf_feature {
	cst_perf_feat_tracing_data = 1,
	cst_perf_feat_build_id = 2,
	cst_perf_feat_hostname = 3,
	cst_perf_feat_osrelease = 4,
	cst_perf_feat_version = 5,
	cst_perf_feat_arch = 6,
	cst_perf_feat_nrcpus = 7,
	cst_perf_feat_cpudesc = 8,
	cst_perf_feat_cpuid = 9,
	cst_perf_feat_total_mem = 10,
	cst_perf_feat_cmdline = 11,
	cst_perf_feat_event_desc = 12,
	cst_perf_feat_cpu_topology = 13,
	cst_perf_feat_numa_topology = 14,
	cst_perf_feat_branch_stack = 15,
	cst_perf_feat_pmu_mappings = 16,
	cst_perf_feat_group_desc = 17,
	cst_perf_feat_auxtrace = 18,
	cst_perf_feat_compressed = 27,
	cst_perf_feat_max = 256,
};

/** AUX record flags (PERF_AUX_FLAG_*). */
#define CST_PERF_AUX_TRUNCATED 0x01ULL
#define CST_PERF_AUX_OVERWRITE 0x02ULL
#define CST_PERF_AUX_PARTIAL 0x04ULL
#define CST_PERF_AUX_COLLISION 0x08ULL
#define CST_PERF_AUX_PMU_FORMAT_MASK 0xff00ULL
#define CST_PERF_AUX_CORESIGHT_RAW 0x0100ULL /* unformatted (TRBE/ETE) */

/** cs_etm AUXTRACE_INFO magics and type (tools/perf/util/cs-etm.h). */
#define CST_PERF_AUXTRACE_CS_ETM 3
#define CST_PERF_ETMV3_MAGIC 0x3030303030303030ULL
#define CST_PERF_ETMV4_MAGIC 0x4040404040404040ULL
#define CST_PERF_ETE_MAGIC 0x5050505050505050ULL

/* ------------------------------------------------------------------------
 * Parsed pieces.
 * ------------------------------------------------------------------------ */

/** The fields of perf_event_attr cstrace uses, plus the raw bytes as read. */
struct cst_perf_attr {
	uint32_t type;
	uint32_t size;  /* attr.size as in the file */
	uint64_t config;
	uint64_t sample_period;
	uint64_t sample_type;
	uint64_t read_format;
	uint64_t flags; /* the bitfield word: CST_PERF_ATTR_* */
	uint32_t wakeup_events;
	uint32_t bp_type;
	uint64_t config1;
	uint64_t config2;
	uint64_t config3;
	uint32_t aux_watermark;
	uint32_t aux_sample_size;
	uint64_t *ids;  /* sample ids of this attr (reader-owned) */
	uint64_t nids;
};

/** The sample_id trailer of a non-sample record (sample_id_all), or the
 *  matching fields of a SAMPLE. A field not present in the layout stays as the
 *  caller set it (the reader sets -1 / 0 and clears the have_ bits). */
struct cst_perf_sample_id {
	uint32_t pid, tid;
	uint64_t time;
	uint64_t id;
	uint64_t stream_id;
	uint32_t cpu;
	uint32_t res;
	bool have_tid, have_time, have_id, have_stream_id, have_cpu;
};

/** One per-CPU block of cs_etm AUXTRACE_INFO. */
struct cst_perf_etm_cpu {
	uint64_t magic;     /* CST_PERF_ETMV3_MAGIC, _ETMV4_ or _ETE_ */
	uint64_t cpu;
	uint32_t nr_params; /* parameters in the file (known ones + extra) */
	uint64_t param_word;/* where the first parameter sits in priv[] (parsed) */
	bool is_ptm;        /* ETMv3 magic with (ETMIDR & 0x300) == 0x300 */
	/* ETMv3 / PTM */
	uint32_t etmcr, etmtraceidr, etmccer, etmidr;
	/* ETMv4 / ETE */
	uint32_t trcconfigr, trctraceidr, trcidr0, trcidr1, trcidr2, trcidr8;
	uint32_t trcauthstatus, trcdevarch;
	uint64_t ts_source;
	bool has_ts_source;
};

/** cs_etm AUXTRACE_INFO. */
struct cst_perf_etm_info {
	uint64_t version;  /* 0, 1 or 2 */
	uint32_t pmu_type;
	uint32_t nr_cpu;
	bool snapshot;
	struct cst_perf_etm_cpu *cpus; /* nr_cpu entries */
};

/** Parse cs_etm AUXTRACE_INFO priv[] (@n u64 words, little-endian bytes).
 *  Fills @info; free its cpus with cst_perf_etm_info_fini(). What is wrong
 *  goes to @log as one line (the caller's log adds the file and offset).
 *  Errors: -cste_invalid, -cste_format, -cste_unsupported (unknown version or
 *  magic), -cste_nomem. */
int cst_perf_etm_info_parse(struct cst_perf_etm_info *info, const uint8_t *priv, uint64_t n,
			    const struct cst_log *log);
void cst_perf_etm_info_fini(struct cst_perf_etm_info *info);

/** The u64 words of priv[] that encoding @info takes: the header and, per CPU, the
 *  block @info->version lays out for its magic (version 0: fixed ETMv3 and ETMv4
 *  blocks without TS_SOURCE; 1 and 2: counted blocks, ETE too). 0 when @info
 *  cannot be encoded (version > 2, unknown magic, ETE in version 0, no CPUs). */
uint64_t cst_perf_etm_info_words(const struct cst_perf_etm_info *info);

/** Encode @info as priv[] into @priv (@n words, little-endian), the inverse of
 *  cst_perf_etm_info_parse. Returns 0 or -cste_invalid (see _words, or @n short). */
int cst_perf_etm_info_encode(const struct cst_perf_etm_info *info, uint8_t *priv, uint64_t n);

/** Rewrite the TRACEIDR parameter of each CPU in @have in the cs_etm AUXTRACE_INFO
 *  of the finished file @path with @ids[cpu]: perf 6.1 takes trace IDs only from
 *  there, while the kernel reported the real ones in AUX_OUTPUT_HW_ID records.
 *  Returns the number of words changed or -cste_not_found (no cs_etm
 *  AUXTRACE_INFO), -cste_format, -cste_unsupported, -cste_io, -cste_invalid. */
int cst_perf_etm_info_patch_ids(const char *path, const uint8_t *ids, const bool *have, int n);

/** Parse the sample_id trailer of the non-sample record @rec (@size bytes, of
 *  which the first @body are its own fields) by the layout of the file's first
 *  attr @first (NULL or no sample_id_all: nothing, pid/tid/cpu -1). */
struct cst_perf_sample_id;
void cst_perf_sample_id_parse(const struct cst_perf_attr *first, const uint8_t *rec,
			      uint16_t size, uint16_t body, struct cst_perf_sample_id *sid);

/** TIME_CONV: how the timestamp counter (the one ETMs put in trace when their
 *  TS_SOURCE is 1) maps to perf's clock, copied by perf record from the event's
 *  mmap page. Older records stop after time_zero (has_cycles false). */
struct cst_perf_time_conv {
	uint64_t time_shift, time_mult, time_zero;
	uint64_t time_cycles, time_mask; /* the counter's low bits only (cap_user_time_short) */
	bool cap_user_time_zero, cap_user_time_short;
	bool has_cycles;
};

/** perf's time in ns of counter value @ticks, computed exactly as perf's
 *  tsc_to_perf_time (its 16-bit shift, 32-bit multiplier and wrapping included). */
uint64_t cst_perf_time_from_ticks(const struct cst_perf_time_conv *tc, uint64_t ticks);

/** A record as read. Pointers are valid until the next call on the reader. */
struct cst_perf_record {
	uint32_t type;
	uint16_t misc;
	uint16_t size;          /* header.size */
	uint64_t file_offset;   /* where the record header sits in the file */
	const uint8_t *raw;     /* the record's @size bytes, header included */
	struct cst_perf_sample_id sid; /* trailer of non-sample records if sample_id_all */
	union {
		struct { uint32_t pid, tid; uint64_t addr, len, pgoff;
			 uint32_t maj, min; uint64_t ino, ino_generation;
			 uint32_t prot, flags;
			 uint8_t build_id_size; uint8_t build_id[20];
			 const char *filename; } mmap; /* MMAP and MMAP2 */
		struct { uint32_t pid, tid; const char *comm; } comm;
		struct { uint32_t pid, ppid, tid, ptid; uint64_t time; } fork; /* also EXIT */
		struct { uint64_t id, lost; } lost;
		struct { uint64_t lost; } lost_samples;
		struct { uint64_t aux_offset, aux_size, flags; } aux;
		struct { uint32_t pid, tid; } itrace_start;
		struct { uint64_t hw_id; } hw_id;
		struct { uint32_t next_prev_pid, next_prev_tid; bool out; } sw;
		/* AUXTRACE: the payload is not in @raw; read it with
		 * cst_perf_reader_pread(data_offset, size). */
		struct { uint64_t size, offset, reference; uint32_t idx, tid, cpu;
			 uint64_t data_offset; } auxtrace;
		struct { uint32_t type; const uint8_t *priv; uint64_t npriv; } auxtrace_info;
		struct cst_perf_time_conv time_conv;
	} u;
};

/** A BUILD_ID feature entry. */
struct cst_perf_build_id {
	int32_t pid;
	uint16_t misc;
	uint8_t size;       /* bytes of id used (20 when unknown) */
	uint8_t id[20];
	char *filename;
};

/** What the feature sections said. Strings are NULL when absent. */
struct cst_perf_features {
	char *hostname, *osrelease, *version, *arch, *cpudesc, *cpuid;
	char **cmdline;
	uint32_t ncmdline;
	uint32_t nr_cpus_avail, nr_cpus_online;
	bool has_nrcpus;
	struct cst_perf_build_id *build_ids;
	uint64_t nbuild_ids;
	/* HEADER_AUXTRACE: record header offsets of AUXTRACE records */
	uint64_t *auxtrace_offsets;
	uint64_t nauxtrace;
	bool has_auxtrace_index;
	/* EVENT_DESC: each event's name as recorded ("cs_etm/@tmc_etr0/u"), in the
	 * attrs' order */
	char **event_names;
	uint32_t nevent_names;
};

/* ------------------------------------------------------------------------
 * Reader.
 * ------------------------------------------------------------------------ */

struct cst_perf_reader_opts {
	size_t sz;                 /* sizeof(struct cst_perf_reader_opts) */
	const struct cst_log *log;
	size_t window;             /* read window in bytes; 0 = 256 KiB */
};

struct cst_perf_reader;

/** Open @path and read its header, attrs and feature sections. A file whose
 *  header marks it unfinished (data.size 0) is read up to EOF with a warning.
 *  Errors are logged as one line "<file>: offset <n>: <what was expected>".
 *  Errors: -cste_invalid, -cste_io, -cste_not_found, -cste_format (bad magic,
 *  sizes that lie), -cste_unsupported (pipe-mode or compressed files), -cste_nomem. */
int cst_perf_reader_open(struct cst_perf_reader **out, const char *path,
			 const struct cst_perf_reader_opts *opts);
void cst_perf_reader_free(struct cst_perf_reader *r);

/** The file's path as given to open. */
const char *cst_perf_reader_path(const struct cst_perf_reader *r);
/** True when the header marked the file unfinished (a crashed writer). */
bool cst_perf_reader_incomplete(const struct cst_perf_reader *r);
/** Feature bitmap test. */
bool cst_perf_reader_has_feature(const struct cst_perf_reader *r, int bit);
const struct cst_perf_features *cst_perf_reader_features(const struct cst_perf_reader *r);

int cst_perf_reader_nattrs(const struct cst_perf_reader *r);
const struct cst_perf_attr *cst_perf_reader_attr(const struct cst_perf_reader *r, int i);
/** The attr a sample id belongs to, or NULL. */
const struct cst_perf_attr *cst_perf_reader_attr_by_id(const struct cst_perf_reader *r,
						       uint64_t id);

/** Read the next record of the data section. AUXTRACE payloads are skipped
 *  (their location is in rec->u.auxtrace). Returns 0, -cste_eos at the end,
 *  -cste_truncated when the data ends inside a record (logged with offset; the
 *  records before it were valid), -cste_format for a record that cannot be
 *  parsed (size smaller than its fields), -cste_io. An unknown type is
 *  returned as is (only header and raw filled). */
int cst_perf_reader_next(struct cst_perf_reader *r, struct cst_perf_record *rec);
/** Go back to the first record of the data section. */
int cst_perf_reader_rewind(struct cst_perf_reader *r);
/** Records returned so far since the last rewind. */
uint64_t cst_perf_reader_count(const struct cst_perf_reader *r);

/** Read @len bytes at file offset @offset. Returns bytes read (short at EOF)
 *  or -cste_io / -cste_invalid. */
int64_t cst_perf_reader_pread(struct cst_perf_reader *r, uint64_t offset, void *buf,
			      uint64_t len);

/** Find the cs_etm AUXTRACE_INFO record (scanning from the start of data) and
 *  parse it into @info (free with cst_perf_etm_info_fini). The reader is left
 *  rewound. Errors: -cste_not_found (no AUXTRACE_INFO, or not cs_etm),
 *  -cste_format, -cste_unsupported, -cste_io, -cste_nomem. */
int cst_perf_reader_etm_info(struct cst_perf_reader *r, struct cst_perf_etm_info *info);

/* ------------------------------------------------------------------------
 * Writer.
 * ------------------------------------------------------------------------ */

struct cst_perf_writer_opts {
	size_t sz;                 /* sizeof(struct cst_perf_writer_opts) */
	const struct cst_log *log;
	/* feature strings; NULL = taken from uname() */
	const char *hostname, *osrelease, *arch, *version;
	uint32_t nr_cpus_avail, nr_cpus_online; /* 0 = from the host */
	const char *const *cmdline; /* NULL-terminated, optional */
	/* Files the command reads: @path may not be one (refused, -cste_invalid). */
	const struct cst_file_set *inputs;
	/* A file made at once (synth), not a recording that must survive a crash:
	 * written under a temporary name beside @path and renamed over it by
	 * cst_perf_writer_finish (cst_out); freed unfinished or failed, nothing
	 * remains and @path is as it was (no .old is kept). */
	bool whole;
	uint8_t reserved[7];
};

struct cst_perf_writer;

/** Create @path and write a header that marks the file unfinished (data.size 0,
 *  no features) as perf itself does, so that a crash leaves a file readers can
 *  recover. As perf record: a previous @path is kept as @path.old, the new file
 *  is 0600 (trace holds program memory); with opts->whole it appears at finish
 *  instead. Errors: -cste_invalid (also: @path is one of opts->inputs), -cste_io,
 *  -cste_nomem. */
int cst_perf_writer_open(struct cst_perf_writer **out, const char *path,
			 const struct cst_perf_writer_opts *opts);

/** Add an event attr with its sample ids (copied). All attrs must be added
 *  before the first record. Non-sample records carry a sample_id trailer laid
 *  out by the first attr's sample_type when it has sample_id_all.
 *  Returns the attr index or -cste_invalid / -cste_nomem. */
int cst_perf_writer_add_attr(struct cst_perf_writer *w, const struct cst_perf_attr *attr,
			     const uint64_t *ids, uint64_t nids);

/** Add a BUILD_ID feature entry (written at finish). */
int cst_perf_writer_add_build_id(struct cst_perf_writer *w, int32_t pid, uint16_t misc,
				 const uint8_t *id, uint8_t size, const char *filename);

/** Write a complete record as given (header included; @len = header.size).
 *  Errors: -cste_invalid, -cste_io. */
int cst_perf_writer_raw(struct cst_perf_writer *w, const void *rec, size_t len);

/** cs_etm AUXTRACE_INFO: version 1 layout with per-CPU blocks of 4 (ETMv3/PTM),
 *  8 (ETMv4) or 9 (ETE) params whatever info->version says (only versions 0
 *  and 1 are accepted by Debian's perf 6.1; 2 is written if asked). */
int cst_perf_writer_etm_info(struct cst_perf_writer *w, const struct cst_perf_etm_info *info);

/** AUXTRACE record plus payload (padded to 8 bytes); indexed for HEADER_AUXTRACE. */
int cst_perf_writer_auxtrace(struct cst_perf_writer *w, uint64_t aux_offset,
			     uint64_t reference, uint32_t idx, uint32_t tid, uint32_t cpu,
			     const void *data, uint64_t len);

/* Kernel records. @sid (may be NULL = all zero) fills the sample_id trailer. */
int cst_perf_writer_aux(struct cst_perf_writer *w, uint64_t aux_offset, uint64_t aux_size,
			uint64_t flags, const struct cst_perf_sample_id *sid);
int cst_perf_writer_itrace_start(struct cst_perf_writer *w, uint32_t pid, uint32_t tid,
				 const struct cst_perf_sample_id *sid);
int cst_perf_writer_hw_id(struct cst_perf_writer *w, uint64_t hw_id,
			  const struct cst_perf_sample_id *sid);
/** MMAP2; with @build_id (size 1..20) the build-id variant is written. */
int cst_perf_writer_mmap2(struct cst_perf_writer *w, uint16_t misc, uint32_t pid, uint32_t tid,
			  uint64_t addr, uint64_t len, uint64_t pgoff, uint32_t prot,
			  uint32_t flags, const uint8_t *build_id, uint8_t build_id_size,
			  const char *filename, const struct cst_perf_sample_id *sid);
int cst_perf_writer_comm(struct cst_perf_writer *w, bool exec, uint32_t pid, uint32_t tid,
			 const char *comm, const struct cst_perf_sample_id *sid);
/** FORK (@exit false) or EXIT (@exit true). */
int cst_perf_writer_task(struct cst_perf_writer *w, bool exit, uint32_t pid, uint32_t ppid,
			 uint32_t tid, uint32_t ptid, uint64_t time,
			 const struct cst_perf_sample_id *sid);
/** SWITCH (@cpu_wide false) or SWITCH_CPU_WIDE with next/prev pid/tid. */
int cst_perf_writer_switch(struct cst_perf_writer *w, bool out, bool cpu_wide,
			   uint32_t next_prev_pid, uint32_t next_prev_tid,
			   const struct cst_perf_sample_id *sid);
int cst_perf_writer_lost(struct cst_perf_writer *w, uint64_t id, uint64_t lost,
			 const struct cst_perf_sample_id *sid);
int cst_perf_writer_finished_round(struct cst_perf_writer *w);

/** Records written so far. */
uint64_t cst_perf_writer_count(const struct cst_perf_writer *w);

/** The feature strings, CPU counts and command line the file gets, defaults
 *  resolved (pointers owned by @w; log NULL). Returns 0 or -cste_invalid. */
int cst_perf_writer_get_opts(const struct cst_perf_writer *w, struct cst_perf_writer_opts *o);

/** Write the features (BUILD_ID, HOSTNAME, OSRELEASE, VERSION, ARCH, NRCPUS,
 *  CMDLINE, AUXTRACE index) and the final header, then sync (and with
 *  opts->whole move the file into place). The writer stays allocated; free it
 *  with cst_perf_writer_free(). Errors: -cste_io (logged, naming the file and
 *  why: "No space left on device"). */
int cst_perf_writer_finish(struct cst_perf_writer *w);

/** Close and free. Without a prior finish the file stays marked unfinished
 *  (what a crash leaves). */
void cst_perf_writer_free(struct cst_perf_writer *w);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_PERFDATA_H */
