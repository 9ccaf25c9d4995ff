/* Internal interfaces between the synth files: QEMU log parsing, code memory,
 * instruction classes, protocol encoders, the frame formatter and the sink model. */
#ifndef CSTRACE_SYNTH_INT_H
#define CSTRACE_SYNTH_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cstrace/source.h"
#include "cstrace/synth.h"

/* ---- code memory: bytes of executed code, page by page ---------------- */

struct synth_codemap;

struct synth_codemap *synth_codemap_alloc(void);
void synth_codemap_free(struct synth_codemap *cm);
/* Store @len bytes at @addr (marks them known). */
int synth_codemap_put(struct synth_codemap *cm, uint64_t addr, const uint8_t *p, size_t len);
/* Read @len bytes at @addr; returns false if any byte is unknown. */
bool synth_codemap_get(const struct synth_codemap *cm, uint64_t addr, uint8_t *p, size_t len);
/* Visit the pages holding known bytes in ascending address order. */
typedef int (*synth_page_fn)(void *ctx, uint64_t addr, const uint8_t *bytes, size_t len);
int synth_codemap_pages(const struct synth_codemap *cm, synth_page_fn fn, void *ctx);
#define SYNTH_PAGE_SIZE 4096u

/* ---- ELF files: executable segments and build IDs --------------------- */

struct synth_elf_seg {
	uint64_t vaddr, memsz, offset, filesz;
	bool exec;
};

struct synth_elf {
	bool is64, dyn;        /* ELFCLASS64; ET_DYN (PIE or shared object) */
	uint64_t entry;
	struct synth_elf_seg seg[16];
	int nseg;
	char interp[256];      /* PT_INTERP, empty if none */
	uint8_t build_id[20];
	uint32_t build_id_size;
};

int synth_elf_read(const char *path, struct synth_elf *elf);

/* ---- QEMU: run and parse the log ------------------------------------- */

/* An executable file mapping learnt from the log (main image, ld.so, mmap). */
struct synth_mapping {
	uint64_t addr, len, pgoff;
	char path[512]; /* host path of the file (sysroot resolved) */
	char guest_path[512];
};

struct synth_qlog {
	bool arm;                  /* parse AArch32 flags (Thumb bit) */
	const char *sysroot;
	const char *prog;          /* host path of the program */
	struct synth_codemap *code;
	struct synth_mapping *maps;
	int nmaps;
	size_t cap_maps;
	int pid;                   /* the guest pid strace lines carry */
	char comm[16];
	const volatile sig_atomic_t *stop; /* cst_synth_opts.stop */
	/* internal parsing state */
	uint64_t start_code, entry;
	bool main_mapped;
	char fd_path[64][512];
	char pending_mmap[512];
	bool mmap_pending;
};

/* Run QEMU for @argv with exec,nochain,page,strace,in_asm logging into @log_path.
 * Returns the guest's exit status (>= 0) or a negative error. */
int synth_qemu_run(const struct cst_synth_opts *opts, char *const argv[], const char *log_path);

/* Start QEMU (as synth_qemu_run) without waiting; with @plugin, the TCG plugin
 * streams the executed instructions as @plugin_args say ("out=FIFO,tail=FILE") and
 * the exec log is not asked for.
 * Returns the child's pid or a negative error. */
int synth_qemu_spawn(const struct cst_synth_opts *opts, char *const argv[], const char *log_path,
		     const char *plugin, const char *plugin_args);
/* Wait for a spawned QEMU: its exit status (>= 0) or a negative error. */
int synth_qemu_wait(const struct cst_synth_opts *opts, int pid);
/* @prog exists and can be run, or the error is logged: -cste_not_found. */
int synth_program_check(const struct cst_synth_opts *opts, const char *prog);

/* Called per executed instruction while the log is read; @cpu is QEMU's vCPU index
 * (one per guest thread in user mode). */
typedef int (*synth_qlog_insn_fn)(void *ctx, int cpu, uint64_t pc, bool thumb);

/* guest threads traced, one vCPU each */
#define SYNTH_MAX_CPUS 8

/* What QEMU's -strace lines say of the traced process's threads and children. */
struct synth_qlog_ids {
	/* the thread IDs clone() returned, in order (QEMU numbers vCPUs in thread
	 * creation order while no thread has ended), at most SYNTH_MAX_CPUS */
	uint32_t tids[SYNTH_MAX_CPUS];
	int ntids;
	int nclones; /* clone() calls that made a thread */
	int nforks;  /* and that made a process (fork, vfork) */
};

/* The guest pid named by the first strace line (0 if none), and @ids. */
uint32_t synth_qlog_ids(const char *log_path, struct synth_qlog_ids *ids);
/* Read the whole log: instruction bytes go to q->code, mappings to q->maps,
 * every executed instruction to @fn. Returns 0, @fn's non-zero value, or an error. */
int synth_qlog_parse(struct synth_qlog *q, const char *log_path, synth_qlog_insn_fn fn, void *ctx,
		     const struct cst_log *log);
void synth_qlog_fini(struct synth_qlog *q);

/* The thread vCPU @cpu runs from here on: a guest thread ID, which the plugin
 * says before the vCPU's first instruction and when a later thread takes the vCPU
 * over. Returns 0 or an error. */
typedef int (*synth_plugin_thread_fn)(void *ctx, int cpu, uint32_t tid);

/* Read the plugin's stream from @fd (the FIFO @path, open while QEMU runs; closed
 * here), then what its tail file @tail_path (NULL: none) holds past what the FIFO
 * brought, where QEMU ended without the plugin's exit callback (synth_plugin.c):
 * bytes of each translated instruction to @code, each executed PC to @fn, each
 * vCPU's thread to @thread_fn. */
int synth_plugin_read(int fd, const char *path, const char *tail_path, struct synth_codemap *code,
		      synth_qlog_insn_fn fn, synth_plugin_thread_fn thread_fn, void *ctx,
		      const struct cst_log *log);

/* ---- instruction classes --------------------------------------------- */

enum synth_icls {
	synth_i_other = 0,  /* not a waypoint */
	synth_i_direct,     /* direct branch (maybe conditional): target known */
	synth_i_indirect,   /* branch to a register or loaded PC: needs an address */
	synth_i_isb,        /* ISB: a waypoint with an E atom on ETMv4 */
	synth_i_svc,        /* SVC: an exception to the (untraced) kernel */
};

struct synth_insn_info {
	enum synth_icls cls;
	uint64_t target;    /* direct branches */
	bool cond;          /* may be not taken (A32/T32: condition or IT block) */
	bool link;
	bool target_thumb;  /* AArch32: the state at the target (BLX imm switches) */
	uint32_t size;      /* bytes: 4, or 2 for 16-bit T32 */
};

/* Classify the A64 instruction @op at @pc. */
void synth_a64_classify(uint32_t op, uint64_t pc, struct synth_insn_info *info);
/* Classify the A32 (thumb false) or T32 instruction at @pc from its first bytes
 * (@b holds 4 bytes, the second halfword may be garbage for 16-bit T32). */
void synth_a32_classify(const uint8_t *b, uint32_t pc, bool thumb, struct synth_insn_info *info);

/* ---- byte streams between stages ------------------------------------- */

typedef int (*synth_bytes_fn)(void *ctx, const uint8_t *p, size_t len);

/* ---- protocol encoders ------------------------------------------------ */

/* What the encoder needs to know of the next executed instruction. */
struct synth_step {
	uint64_t pc;
	bool thumb;
	struct synth_insn_info info;
	uint64_t next_pc;   /* the instruction executed after this one */
	bool next_thumb;
	bool last;          /* no next instruction: the program ended */
	bool stop;          /* the trace unit stops after this instruction (sink read-out) */
	uint64_t icount;    /* instructions executed so far (for timestamps) */
	/* ViewInst (address filters): this instruction is traced, the next one is */
	bool traced, next_traced;
};

struct synth_enc_cfg {
	uint32_t context_id;
	bool timestamps;
	uint32_t sync_period;
	synth_bytes_fn out;
	void *out_ctx;
};

struct synth_enc {
	struct synth_enc_cfg cfg;
	bool synced;        /* sync sequence emitted since the last (re)start */
	bool off;           /* ViewInst went inactive since: Trace On / I-sync on re-entry */
	bool need_sync;     /* periodic sync due at the next waypoint */
	uint64_t since_sync;
	uint64_t bytes;
	uint8_t atoms[64];  /* pending atoms, 1 = E */
	int natoms;
	uint8_t pkt[64];    /* packet under construction */
	int err;
	/* address compression: the last address the decoder holds */
	uint64_t last_addr;
	bool last_valid;
	bool last_thumb;
	uint64_t branches, exceptions;
};

/** Send packet bytes to the encoder's output (both protocols); the first output
 *  error is kept in e->err and later packets are dropped. */
void synth_enc_emit(struct synth_enc *e, const uint8_t *p, size_t n);

/** Write a timestamp value as ETMv3 and ETMv4 both encode it (7 bits a byte, bit 7
 *  = more follows, a ninth byte carries 8 bits) into @p (9 bytes at most).
 *  Returns the bytes written. */
size_t synth_ts_value(uint8_t *p, uint64_t ts);

void synth_etm4_init(struct synth_enc *e, const struct synth_enc_cfg *cfg);
int synth_etm4_step(struct synth_enc *e, const struct synth_step *s);
/* Stop tracing (sink read-out): flush atoms; the next step starts with a sync. */
int synth_etm4_stop(struct synth_enc *e);

/* TRCCONFIGR matching the packets synth_etm4_step emits. */
uint32_t synth_etm4_configr(bool timestamps);
/* ETMCR matching the packets synth_etm3_step emits. */
uint32_t synth_etm3_etmcr(bool timestamps);

void synth_etm3_init(struct synth_enc *e, const struct synth_enc_cfg *cfg);
int synth_etm3_step(struct synth_enc *e, const struct synth_step *s);
int synth_etm3_stop(struct synth_enc *e);

/* ---- CoreSight frame formatter ----------------------------------------- */

struct synth_fmt {
	uint8_t frame[16];
	int pos;            /* next byte slot in frame */
	uint8_t trace_id;
	synth_bytes_fn out;
	void *out_ctx;
	uint64_t frames;
};

void synth_fmt_init(struct synth_fmt *f, uint8_t trace_id, synth_bytes_fn out, void *ctx);
/* Format protocol bytes of the formatter's current source. */
int synth_fmt_put(void *fmt, const uint8_t *p, size_t len);
/* Format bytes of source @id, switching sources inside the frame as a funnel does. */
int synth_fmt_put_id(struct synth_fmt *f, uint8_t id, const uint8_t *p, size_t len);
/* Pad the open frame as the TMC does on a flush (rest goes to ID 0). */
int synth_fmt_flush(struct synth_fmt *f);

/* ---- sink model: what the ETR/ETF keeps and how perf receives it --------- */

struct synth_aux_chunk {
	uint64_t aux_offset;   /* AUX ring position of the first byte (normal mode) */
	uint64_t aux_head;     /* ring head after this chunk */
	const uint8_t *data;
	uint64_t size;
	bool truncated;        /* the sink lost older data */
	bool overwrite;        /* snapshot mode */
};

typedef int (*synth_chunk_fn)(void *ctx, const struct synth_aux_chunk *c);

struct synth_sink {
	uint64_t capacity;     /* sink bytes (multiple of 16) */
	bool barrier;          /* insert barrier packets on loss (perf mode) */
	uint8_t *buf;          /* pending bytes since the last read-out (linear) */
	uint64_t len;
	size_t cap_buf;
	uint64_t written, lost;
	uint64_t aux_head;
	bool snapshot_mode;
	uint8_t *ring;         /* snapshot mode: the AUX ring */
	uint64_t ring_size;
	synth_chunk_fn chunk_fn;
	void *chunk_ctx;
	/* all data the sink ever kept, for a snapshot directory (newest capacity bytes) */
	uint8_t *keep;
	bool pending_loss;     /* pending data already lost its oldest part */
	uint64_t chunks;
};

int synth_sink_init(struct synth_sink *s, uint64_t capacity, bool barrier, bool snapshot_mode,
		    uint64_t ring_size, synth_chunk_fn fn, void *ctx);
void synth_sink_fini(struct synth_sink *s);
int synth_sink_put(void *sink, const uint8_t *p, size_t len);
/* pmu::stop: the sink content is read out (an AUX record). */
int synth_sink_readout(struct synth_sink *s);
/* End of the session: snapshot mode writes the newest ring bytes as one record. */
int synth_sink_finish(struct synth_sink *s);
/* Circular (no perf reader) mode: the bytes the sink holds, oldest first (malloc'd). */
int synth_sink_contents(const struct synth_sink *s, uint8_t **out, uint64_t *len);

/* ---- outputs ------------------------------------------------------------ */

/* cst_out options of synth's outputs: 0600 (a program's addresses and code), none
 * of the run's inputs. */
struct cst_out_opts synth_out_opts(const struct cst_synth_opts *o, bool stream);

/* Outputs moved into place before the run's main one: removed again when the run
 * fails after all. */
struct synth_outs {
	char **path;
	size_t n, cap;
};
/* Commit @o (cst_out_commit: the failure logged) and remember its name. */
int synth_outs_commit(struct synth_outs *s, struct cst_out *o);
/* The run failed: remove what was committed (and forget it). */
void synth_outs_undo(struct synth_outs *s);
void synth_outs_fini(struct synth_outs *s);
/* None of the run's outputs (@out, the truth, the kept log) is one of its inputs;
 * else the error is logged: -cste_invalid. */
int synth_outputs_check(const struct cst_synth_opts *o, const char *out);

/* QEMU writes its log itself and says nothing when a write fails: 0 when one byte
 * more can be added to the log at @path (then restored), else the errno (ENOSPC,
 * EDQUOT) that cut it short. */
int synth_log_cut(const char *path);

/* ---- address filters and the trigger (filter.c) ------------------------- */

#define SYNTH_MAX_FILTERS 64

struct synth_placed {
	uint64_t start, len;
	bool placed;
};

struct synth_filter {
	struct cst_addr_filter *f;         /* NULL: everything is traced */
	struct synth_placed at[SYNTH_MAX_FILTERS]; /* each entry on the newest mapping of its file */
	bool ranges, starts;               /* include ranges / start points present */
	struct cst_addr_filter *trig;      /* NULL: no trigger */
	struct synth_placed trig_at;
	uint64_t trig_count, trig_hits;
	int nmaps;                         /* mappings placed so far */
};

/* Whether @o's other options allow a filter and a trigger (one error line logged). */
int synth_filter_check_opts(const struct cst_synth_opts *o);
/* Parse and resolve @o->filter and @o->trigger (a trigger's file defaults to @prog). */
int synth_filter_init(struct synth_filter *sf, const struct cst_synth_opts *o, const char *prog);
void synth_filter_fini(struct synth_filter *sf);
/* Place the entries on the mappings @q learnt since the last call. */
void synth_filter_update(struct synth_filter *sf, const struct synth_qlog *q);
/* Whether the instruction at @pc is traced; moves the ETM's start/stop logic @started. */
bool synth_filter_traced(const struct synth_filter *sf, bool *started, uint64_t pc);
/* True at the trigger's Nth entry (the instruction at its address about to run). */
bool synth_filter_trigger(struct synth_filter *sf, uint64_t pc);

/* ---- perf.data output -------------------------------------------------- */

struct synth_perf_out {
	const struct cst_synth_opts *opts;
	const struct synth_qlog *q;
	bool arm;
	int ncpus;
	uint8_t trace_id[SYNTH_MAX_CPUS];
	uint32_t tid[SYNTH_MAX_CPUS];
	uint32_t pid;
	uint32_t regs[8];
	const uint64_t *clock; /* instructions so far: the perf clock (1 ns each) */
	/* AUX records gathered from the sink, written at the end */
	struct synth_perf_aux {
		int cpu;
		uint64_t offset, size, head, time;
		uint8_t *data;
		bool truncated, overwrite;
	} *aux;
	size_t naux, cap_aux;
	struct synth_outs *outs; /* code pages written beside the perf.data */
};

/* Sink read-outs of one CPU go to its AUX buffer. */
struct synth_perf_cpu {
	struct synth_perf_out *p;
	int cpu;
};
int synth_perf_chunk(void *ctx, const struct synth_aux_chunk *c); /* ctx: synth_perf_cpu */
int synth_perf_write(struct synth_perf_out *p, const char *path);
void synth_perf_fini(struct synth_perf_out *p);

/* ---- snapshot directory ------------------------------------------------ */

struct synth_snap_cfg {
	bool arm;
	const char *core_name;   /* "Cortex-A53" */
	int ncpus;
	uint8_t trace_id[SYNTH_MAX_CPUS];
	uint32_t regs[8];        /* ETMv4: CONFIGR, IDR0, IDR1, IDR2, IDR8, AUTH; v3: CR, IDR, CCER */
	uint64_t start_pc[SYNTH_MAX_CPUS];
	const uint8_t *buf;
	uint64_t buf_len;
	const struct synth_qlog *q;
};

int synth_snapshot_write(const char *dir, const struct synth_snap_cfg *cfg, const struct cst_log *log);

#endif /* CSTRACE_SYNTH_INT_H */
