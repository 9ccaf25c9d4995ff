/* cstrace trace-source model: the protocols CoreSight trace sources speak, the Arm
 * cores they trace, the registers that describe how a source was programmed, and
 * the buffers and memory images a capture holds besides. Every stage that names a
 * protocol, a core or a trace register takes it from here, so that one table
 * answers "what is a Cortex-A7" or "where does TRCIDR1 live". */
#ifndef CSTRACE_SOURCE_H
#define CSTRACE_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cstrace/common.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * Protocols.
 * ------------------------------------------------------------------------ */

/** Trace protocols of CoreSight sources. */
enum cst_protocol {
	cst_proto_unknown = 0,
	cst_proto_etmv3,  /* ETMv3.x (Cortex-A7, A5, A8, R4, R5, M3, M4) */
	cst_proto_ptm,    /* PTM / PFT 1.x (Cortex-A9, A12, A15, A17) */
	cst_proto_etmv4i, /* ETMv4 instruction trace (A53, A57, A72, ...) */
	cst_proto_ete,    /* Embedded Trace Extension (Armv9) */
	cst_proto_stm,    /* System Trace Macrocell */
};

/** The name cstrace prints: "ETMv3", "PTM", "ETMv4", "ETE", "STM"; "?" otherwise. */
const char *cst_protocol_name(enum cst_protocol protocol);

/** Read a protocol as people and tools write it, in any case: cstrace's names and
 *  board profiles' ("etmv3", "ptm", "etmv4", "etmv4i", "ete", "stm") and snapshot
 *  device types, whose version after a dot is ignored ("ETM3.5", "ETM4.2",
 *  "PTM1.1", "PFT1.0", "ETE", "STM"). Returns cst_proto_unknown for anything else. */
enum cst_protocol cst_protocol_parse(const char *name);

/** ETMv3 and PTM share one register set (struct cst_etmv3_regs). */
static inline bool cst_protocol_is_v3(enum cst_protocol p)
{
	return p == cst_proto_etmv3 || p == cst_proto_ptm;
}

/** ETMv4 and ETE share one register set (struct cst_etmv4_regs). */
static inline bool cst_protocol_is_v4(enum cst_protocol p)
{
	return p == cst_proto_etmv4i || p == cst_proto_ete;
}

/* ------------------------------------------------------------------------
 * Instruction sets: what every stage that walks Arm code needs to know alike.
 * ------------------------------------------------------------------------ */

/** Bytes of the T32 instruction whose first halfword is @hw: 4 when its top five
 *  bits are 0b11101, 0b11110 or 0b11111 (a 32-bit encoding), else 2. */
static inline unsigned cst_t32_insn_size(uint16_t hw)
{
	return (hw >> 11) >= 0x1d ? 4 : 2;
}

/* ------------------------------------------------------------------------
 * Cores.
 * ------------------------------------------------------------------------ */

/** Architecture a core implements, as OpenCSD needs it to walk code. */
enum cst_core_arch {
	cst_core_arch_unknown = 0,
	cst_core_arch_v7,
	cst_core_arch_v8,
	cst_core_arch_v8r3,
	cst_core_arch_aa64,
};

enum cst_core_profile {
	cst_core_profile_unknown = 0,
	cst_core_profile_a,
	cst_core_profile_r,
	cst_core_profile_m,
};

/** One Arm core, with the values its Technical Reference Manual documents. */
struct cst_core_info {
	const char *name;              /* "Cortex-A53", as snapshots and profiles name it */
	uint16_t midr_part;            /* MIDR PartNum ("CPU part" in /proc/cpuinfo) */
	uint8_t arch_major, arch_minor;/* Arm architecture version: 8, 2 for Armv8.2 */
	enum cst_core_profile profile;
	enum cst_protocol protocol;    /* its trace macrocell; unknown: it has none */
	enum cst_core_arch arch;       /* what OpenCSD needs, from the version above */
};

/** The core named @name (any case), or NULL. */
const struct cst_core_info *cst_core_find(const char *name);

/** The Arm core whose MIDR PartNum is @part, or NULL. */
const struct cst_core_info *cst_core_by_part(unsigned part);

/** The table itself, for listing and checking: @i from 0 while non-NULL. */
const struct cst_core_info *cst_core_at(size_t i);

/** Resolve a core name ("Cortex-A53", "ARMv8.2-A", "ARM-AA64") to architecture
 *  and profile. Returns 0, or -cste_not_found for a name it does not know. */
int cst_core_lookup(const char *core_name, enum cst_core_arch *arch,
		    enum cst_core_profile *profile);

/* ------------------------------------------------------------------------
 * Registers and sources.
 * ------------------------------------------------------------------------ */

/** ETMv3 / PTM programming as read from the ETM at capture time. */
struct cst_etmv3_regs {
	uint32_t etmidr;
	uint32_t etmcr;
	uint32_t etmccer;
	uint32_t etmtraceidr;
	uint32_t etmccr;     /* configuration code: the address comparator pairs */
};

/** ETMv4 / ETE programming as read from the ETM at capture time. */
struct cst_etmv4_regs {
	uint32_t trcconfigr;
	uint32_t trctraceidr;
	uint32_t trcidr0, trcidr1, trcidr2, trcidr8;
	uint32_t trcidr9, trcidr10, trcidr11, trcidr12, trcidr13;
	uint32_t trcauthstatus;
	uint32_t trcdevarch; /* ETE only */
	uint32_t trcidr4;    /* the address comparator pairs */
};

struct cst_stm_regs {
	uint32_t stmtcsr;
};

/** One trace source (an ETM, PTM, ETE or STM) and the core it traces. */
struct cst_source_cfg {
	enum cst_protocol protocol;
	char name[64];      /* device name, e.g. "ETM_0" */
	char core_name[64]; /* core type, e.g. "Cortex-A53"; empty for STM */
	int cpu;            /* CPU number when known, else -1 */
	enum cst_core_arch arch;
	enum cst_core_profile profile;
	union {
		struct cst_etmv3_regs etmv3; /* etmv3 and ptm */
		struct cst_etmv4_regs etmv4; /* etmv4i and ete */
		struct cst_stm_regs stm;
	} regs;
};

/** One register of a source's description. */
struct cst_source_reg {
	const char *name;   /* Arm's name, as snapshot files write it: "TRCIDR0" */
	const char *key;    /* the name in lower case, as options and profiles write it */
	const char *alias;  /* the short option form: "idr0" */
	unsigned word;      /* offset in the programmer's model / 4 (OpenCSD's number) */
	const char *idfile; /* ID register: its file in the device's sysfs directory;
			     * NULL for a register the capture programs */
	bool essential;     /* a description without it cannot be decoded */
	bool ete_only;      /* only ETE descriptions carry it (ETMv4.0 drivers and perf
			     * publish it for ETE alone, whose architecture it tells) */
	uint32_t fallback;  /* value assumed when a description omits it */
	size_t offset;      /* of its uint32_t in struct cst_source_cfg */
};

/** The registers describing a source of @protocol, ending with a NULL name;
 *  NULL for cst_proto_unknown. */
const struct cst_source_reg *cst_source_regs(enum cst_protocol protocol);

/** The register of @protocol called @name (its name, key or alias, any case), or NULL. */
const struct cst_source_reg *cst_source_reg_find(enum cst_protocol protocol, const char *name);

/** Where @reg's value lives in @cfg. */
static inline uint32_t *cst_source_reg_ptr(struct cst_source_cfg *cfg,
					   const struct cst_source_reg *reg)
{
	return (uint32_t *)((char *)cfg + reg->offset);
}

/** The value of @reg in @cfg. */
static inline uint32_t cst_source_reg_get(const struct cst_source_cfg *cfg,
					  const struct cst_source_reg *reg)
{
	return *(const uint32_t *)((const char *)cfg + reg->offset);
}

/** The trace ID a source emits, from its programming (0 if none). */
uint8_t cst_source_trace_id(const struct cst_source_cfg *src);

/** Whether a source's programming lets it emit timestamps: TRCCONFIGR.TS (bit
 *  11) of an ETMv4 or ETE, ETMCR bit 28 of an ETMv3 or PTM. An STM, or a source
 *  of no known protocol, may. */
bool cst_source_timestamps(const struct cst_source_cfg *src);

/** ETMIDR of a PTM (branch-broadcast program flow trace) rather than an ETMv3. */
static inline bool cst_etmidr_is_ptm(uint32_t etmidr)
{
	return (etmidr & 0x300) == 0x300;
}

/** Address comparator pairs of an ETMv4/ETE (TRCIDR4.NUMACPAIRS, bits 3:0) and of
 *  an ETMv3/PTM (ETMCCR bits 3:0): what bounds its address filters. */
static inline unsigned cst_trcidr4_addr_pairs(uint32_t trcidr4)
{
	return trcidr4 & 0xf;
}

static inline unsigned cst_etmccr_addr_pairs(uint32_t etmccr)
{
	return etmccr & 0xf;
}

/** TRCDEVARCH of an ETE (architecture version 5 or later) rather than an ETMv4. */
static inline bool cst_trcdevarch_is_ete(uint32_t trcdevarch)
{
	return ((trcdevarch >> 12) & 0xf) >= 5;
}

/** Parse "key=value,key=value" register settings into @cfg for @protocol
 *  (e.g. "trcidr0=0x28000ea1,trcidr1=0x4100f403,traceid=0x10"); unknown keys are an
 *  error naming the key. Missing ID registers get the values of a Cortex-A53
 *  (ETMv4) or Cortex-A7 (ETMv3). What is wrong goes to @log as one line.
 *  Returns 0, -cste_format, -cste_invalid or -cste_nomem. */
int cst_source_cfg_parse(struct cst_source_cfg *cfg, enum cst_protocol protocol,
			 const char *spec, const struct cst_log *log);

/* ------------------------------------------------------------------------
 * What a capture holds besides its sources: trace buffers and memory images.
 * ------------------------------------------------------------------------ */

/** How a trace buffer is laid out. */
enum cst_buffer_format {
	cst_bufmt_frames = 0, /* CoreSight 16-byte frames, memory aligned (ETB/ETF/ETR) */
	cst_bufmt_raw,        /* a single unformatted source (TRBE, bypassed formatter) */
	cst_bufmt_tpiu,       /* frames with frame syncs from a TPIU port */
	cst_bufmt_dstream,    /* DSTREAM TPIU capture (frame syncs, dstream framing) */
};

/** Memory spaces an image belongs to (OpenCSD's values). */
enum cst_mem_space {
	cst_mem_el1s = 0x1,
	cst_mem_el1n = 0x2,
	cst_mem_el2 = 0x4,
	cst_mem_el3 = 0x8,
	cst_mem_el2s = 0x10,
	cst_mem_secure = 0x19,
	cst_mem_nonsecure = 0x6,
	cst_mem_any = 0x1f,
};

/** A memory image: bytes of a file mapped at an address for the code walk. */
struct cst_mem_image {
	const char *path;     /* copied by cst_trace_add_image */
	uint64_t address;     /* where the first mapped byte sits */
	uint64_t file_offset; /* where in the file the mapping starts */
	uint64_t length;      /* bytes mapped; 0 = to the end of the file */
	enum cst_mem_space space;
};

/** A trace buffer: a file (or a slice of one) holding captured trace bytes. */
struct cst_buffer_info {
	const char *name;  /* buffer name, e.g. "ETB_0" */
	const char *path;  /* file holding the bytes */
	uint64_t offset;   /* first byte within the file */
	uint64_t size;     /* bytes; UINT64_MAX = to the end of the file */
	enum cst_buffer_format format;
};

/* ------------------------------------------------------------------------
 * Address filters: perf's `--filter` for cs_etm, as record sends it to the kernel
 * (PERF_EVENT_IOC_SET_FILTER) or programs it through sysfs, and as synth models it
 * in the trace unit. Syntax (perf record --filter), entries separated by commas:
 *   filter SYM|ADDR[/SIZE] [@FILE]   trace only inside the range (ViewInst include)
 *   start SYM|ADDR [@FILE]           tracing switches on at that instruction
 *   stop SYM|ADDR [@FILE]            tracing switches off after that instruction
 * SYM may carry #N (the Nth symbol of that name in address order) or #g (the
 * global one); "*" is the whole file; SIZE may be a symbol (up to its end). With
 * FILE, ADDR and the resolved start are offsets in the file (the kernel places
 * them on each mapping of it); without, kernel addresses.
 * ------------------------------------------------------------------------ */

enum cst_addr_filter_action {
	cst_addr_filter_range = 0, /* "filter" */
	cst_addr_filter_start,     /* "start" */
	cst_addr_filter_stop,      /* "stop" */
};

/** One entry, as written and as resolved. */
struct cst_addr_filter_entry {
	enum cst_addr_filter_action action;
	char sym[256];       /* the symbol named; "" for an address, "*" for the whole file */
	int sym_index;       /* #N: the Nth of that name (from 1); 0 any; -1 (#g) the global */
	char size_sym[256];  /* SIZE given as a symbol: up to that symbol's end */
	uint64_t addr;       /* ADDR as written (no symbol) */
	uint64_t size;       /* SIZE as written (has_size, no size_sym) */
	bool has_size;
	char file[4096];     /* FILE as written; "" = the kernel */
	/* what cst_addr_filter_resolve found */
	bool resolved;
	char path[4096];     /* FILE's absolute path, as the kernel is told */
	uint64_t start;      /* file offset (with FILE) or kernel address */
	uint64_t len;        /* bytes of a range; 0 for start and stop */
	uint64_t vaddr;      /* the ELF virtual address of @start (with FILE) */
};

struct cst_addr_filter;

/** Parse @text. Every error is one line through @log naming the entry and what
 *  was expected. Errors: -cste_format, -cste_unsupported (what cs_etm cannot do:
 *  tracestop, a start or stop with a size), -cste_invalid, -cste_nomem. */
int cst_addr_filter_parse(struct cst_addr_filter **out, const char *text,
			  const struct cst_log *log);
void cst_addr_filter_free(struct cst_addr_filter *f);
/** The entries, in the order written. */
int cst_addr_filter_count(const struct cst_addr_filter *f);
const struct cst_addr_filter_entry *cst_addr_filter_get(const struct cst_addr_filter *f, int i);

/** Resolve every entry: symbols through FILE's ELF symbol table (libelf) to file
 *  offsets, as perf does; kernel symbols through @root's /proc/kallsyms (NULL: /).
 *  Entries without FILE take @default_file when it is given (a trigger names the
 *  traced program), else they are the kernel's. Errors (one line each, naming
 *  the file and the symbol): -cste_not_found, -cste_format (an ambiguous symbol,
 *  a symbol without a size, an address outside every segment), -cste_io. */
int cst_addr_filter_resolve(struct cst_addr_filter *f, const char *root,
			    const char *default_file, const struct cst_log *log);

/** The string perf sends with PERF_EVENT_IOC_SET_FILTER for the resolved entries:
 *  "filter 0xOFF/0xSIZE@/abs/file,start 0xOFF@/abs/file,stop 0xADDR". Returns
 *  its length, or -cste_invalid (unresolved) or -cste_nomem (@size too small). */
int cst_addr_filter_format(const struct cst_addr_filter *f, char *buf, size_t size);

/** Whether a trace unit with @pairs address comparator pairs holds @f: a range
 *  takes a pair, a start or stop point one comparator. With @perf, also the
 *  CoreSight perf driver's rules: at most 8 entries, and ranges not mixed with
 *  start/stop points. @etm names the unit in the message (e.g. "cpu 0's ETM
 *  (TRCIDR4 0x11170001)"). Returns 0 or -cste_unsupported with one line logged. */
int cst_addr_filter_check(const struct cst_addr_filter *f, unsigned pairs, bool perf,
			  const char *etm, const struct cst_log *log);

/** Where the kernel puts resolved entry @e on a mapping of its file (start @vm_start,
 *  @vm_len bytes, from file offset @vm_off), as perf_addr_filter_vma_adjust does.
 *  Returns true with *@start and *@len set when the mapping holds it. */
bool cst_addr_filter_place(const struct cst_addr_filter_entry *e, uint64_t vm_start,
			   uint64_t vm_len, uint64_t vm_off, uint64_t *start, uint64_t *len);

#ifdef __cplusplus
}
#endif

#endif
