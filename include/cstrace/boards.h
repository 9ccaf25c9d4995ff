/* cstrace boards stage: what is known about each supported board's CoreSight set-up
 * (profiles in boards/NAME.ini), a system root every sysfs/procfs access goes through,
 * fixture trees that imitate a board's sysfs, and the `doctor` checks of a live system. */
#ifndef CSTRACE_BOARDS_H
#define CSTRACE_BOARDS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "cstrace/common.h"
#include "cstrace/source.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ------------------------------------------------------------------------
 * System root: one prefix in front of every /sys, /proc, /dev and /boot path,
 * so that tests (and `--root`) can point the whole program at a fixture tree.
 * Paths given to these functions are absolute paths as seen on the target
 * ("/sys/bus/coresight/devices"); symbolic links are followed inside the root
 * (relative links as they are; absolute links are re-rooted).
 * ------------------------------------------------------------------------ */

struct cst_sysroot;

/** A system root at @dir; NULL or "" means "/" (the live system). Returns 0 and
 *  sets *@out, or -cste_invalid (@out NULL, or @dir too long) or -cste_nomem. */
int cst_sysroot_alloc(struct cst_sysroot **out, const char *dir);
void cst_sysroot_free(struct cst_sysroot *root);

/** The root directory ("/" for the live system). Never NULL for a valid root. */
const char *cst_sysroot_dir(const struct cst_sysroot *root);

/** True when @root is the live system ("/"). */
bool cst_sysroot_is_live(const struct cst_sysroot *root);

/** Build the host path of target path @path into @buf.
 *  Returns the length, or -cste_invalid (NULL, relative @path), -cste_nomem (too long). */
int cst_sysroot_path(const struct cst_sysroot *root, const char *path, char *buf, size_t size);

/** True when @path exists under the root (following links). */
bool cst_sysroot_exists(const struct cst_sysroot *root, const char *path);

/** open(2) @path under the root. Returns a file descriptor or a negative error:
 *  -cste_not_found (ENOENT), -cste_permission (EACCES/EPERM), -cste_io, -cste_invalid. */
int cst_sysroot_open(const struct cst_sysroot *root, const char *path, int flags);

/** Read a small text file (sysfs attribute) into @buf, NUL-terminated, with the
 *  trailing newline removed. Returns the length or -cste_not_found,
 *  -cste_permission, -cste_io, -cste_invalid. */
int cst_sysroot_read(const struct cst_sysroot *root, const char *path, char *buf, size_t size);

/** Read a file holding one number ("0x410cf250", "-1", "8").
 *  Returns 0, a read error as cst_sysroot_read, or -cste_format. */
int cst_sysroot_read_s64(const struct cst_sysroot *root, const char *path, int64_t *out);

/** Write @text to an existing file (a sysfs attribute). Returns 0 or -cste_not_found,
 *  -cste_permission, -cste_io, -cste_invalid. */
int cst_sysroot_write(const struct cst_sysroot *root, const char *path, const char *text);

/** Resolve @path (all links, inside the root) and store the resolved target path,
 *  without the root prefix, in @buf ("/sys/devices/platform/20010000.etf/tmc_etf0").
 *  Returns the length or -cste_not_found, -cste_nomem, -cste_invalid. */
int cst_sysroot_realpath(const struct cst_sysroot *root, const char *path, char *buf,
			 size_t size);

/** Directory entry callback: return 0 to go on, non-zero to stop (returned). */
typedef int (*cst_sysroot_dir_fn)(void *ctx, const char *name);

/** Call @fn for each entry of directory @path except "." and "..", in name order
 *  ("etm10" after "etm9": numbers compare as numbers). Returns 0, what @fn returned,
 *  or -cste_not_found, -cste_permission, -cste_nomem, -cste_invalid. */
int cst_sysroot_foreach(const struct cst_sysroot *root, const char *path, cst_sysroot_dir_fn fn,
			void *ctx);

/* ------------------------------------------------------------------------
 * Board profiles.
 * ------------------------------------------------------------------------ */

/** Kinds of CoreSight components a profile lists. */
enum cst_bdev_type {
	cst_bdev_etm = 0,    /* ETMv3/PTM/ETMv4/ETE: sysfs "etmN" (N = cpu) */
	cst_bdev_stm,        /* "stmN" */
	cst_bdev_funnel,     /* "funnelN" */
	cst_bdev_replicator, /* "replicatorN" */
	cst_bdev_etf,        /* TMC as FIFO/buffer: "tmc_etfN" */
	cst_bdev_etr,        /* TMC routing to memory: "tmc_etrN" */
	cst_bdev_etb,        /* TMC-ETB or ETB10: "tmc_etbN" */
	cst_bdev_tpiu,       /* "tpiuN" */
	cst_bdev_cti,        /* "cti_sysN" / "cti_cpuN" */
	cst_bdev_max
};

/** Lower-case name of a type as profiles spell it ("etm", "etf"); "?" if invalid. */
const char *cst_bdev_type_name(enum cst_bdev_type type);

/** An ID register the profile expects: a read value v matches when
 *  (v & mask) == value. */
struct cst_board_idreg {
	char name[16];  /* register, lower case: "etmidr", "trcidr1" */
	char file[32];  /* sysfs attribute under the device: "mgmt/etmidr" */
	uint32_t value;
	uint32_t mask;
};

#define CST_BOARD_MAX_IDREGS 12

/** One CoreSight component, identified by its base address (never by the
 *  probe-order name the kernel gives it). */
struct cst_board_device {
	char *name;          /* the profile's name for it: "etm0", "funnel_main" */
	enum cst_bdev_type type;
	uint64_t base;       /* physical base address: the identity */
	char *dt_node;       /* device-tree node name: "etm@500dc000" */
	char *compatible;    /* DT compatible: "arm,coresight-etm3x" */
	int cpu;             /* CPU it traces (ETM) or belongs to (CPU CTI), else -1 */
	/* trace sources (etm, stm) */
	char *arch;          /* architecture as people say it: "ETMv3.5", "ETMv4.0" */
	struct cst_source_cfg source; /* protocol, core, cpu and decode register defaults */
	int nidregs;
	struct cst_board_idreg idregs[CST_BOARD_MAX_IDREGS];
	/* sinks (etf, etr, etb, tpiu) */
	uint64_t capacity;   /* buffer bytes (0 = unknown or not a buffer) */
	bool perf_sink;      /* listed in cs_etm/sinks: usable as cs_etm/@name/ */
	bool preferred;      /* the sink to use with perf on this board */
	bool scatter_gather; /* ETR that can use scattered pages */
	char *note;          /* one line for `boards show`, or NULL */
};

/** A trace-bus connection: output port @from_port of device @from feeds input
 *  port @to_port of device @to (indices into cst_board.devices). */
struct cst_board_link {
	int from, from_port;
	int to, to_port;
};

struct cst_board_cpu {
	int cpu;        /* logical CPU number Linux gives it with the stock firmware */
	char *core;     /* "Cortex-A7" */
	uint64_t mpidr; /* MPIDR affinity (the DT cpu node's reg) */
	char *cluster;  /* "big", "LITTLE", or NULL */
};

/** A known problem with its workaround; @check names the doctor check that
 *  detects it ("cpuidle", "kconfig", ...) or is NULL. */
struct cst_board_issue {
	char *id;
	char *symptom;
	char *workaround;
	char *check;
};

/** How the kernel assigns trace IDs to ETMs. */
enum cst_trace_id_policy {
	cst_trace_id_legacy = 0, /* 0x10 + 2 * cpu (kernels before 6.4 and perf's fallback) */
	cst_trace_id_sequential, /* 0x10 + cpu (DS-5 / snapshot convention) */
	cst_trace_id_dynamic,    /* allocated at run time, recorded in AUX_OUTPUT_HW_ID */
};

/** A board profile, read from one .ini file: opaque; `cst_board_print` shows all of
 *  it, the functions below answer what decode, capture and the doctor ask of it. */
struct cst_board;

/** The compiled-in profile directory: $CSTRACE_BOARDS_DIR if set, else the build
 *  tree's boards/ when the binary runs from its build tree, else the installed
 *  <datadir>/cstrace/boards. Never NULL. */
const char *cst_boards_default_dir(void);

/** Read the profile @path. Errors are logged as one line "FILE:LINE: what".
 *  Returns 0 and sets *out, or -cste_invalid, -cste_not_found, -cste_io,
 *  -cste_format, -cste_nomem. */
int cst_board_load(struct cst_board **out, const char *path, const struct cst_log *log);

/** Read profile @name ("juno-r1") from directory @dir (NULL = default dir).
 *  Returns as cst_board_load; -cste_not_found names the directory in the log. */
int cst_board_find(struct cst_board **out, const char *dir, const char *name,
		   const struct cst_log *log);

void cst_board_free(struct cst_board *board);

/** The profile's name ("juno-r1"), title (one line, "" if none) and the file it was
 *  read from. */
const char *cst_board_name(const struct cst_board *board);
const char *cst_board_title(const struct cst_board *board);
const char *cst_board_file(const struct cst_board *board);
/** Number of devices, and device @i (NULL when out of range): indices are those
 *  cst_board_device_by_base and _by_name return. */
int cst_board_ndevices(const struct cst_board *board);
const struct cst_board_device *cst_board_device(const struct cst_board *board, int i);

/** Write everything @board says to @out, for people: its identity, CPUs, trace
 *  sources with their ID registers, links and sinks, the topology drawn from each
 *  sink back to its sources, the kernel configuration, firmware prerequisites and
 *  known issues. @dir is the profile directory, named where the overlay lives. */
void cst_board_print(const struct cst_board *board, FILE *out, const char *dir);

/** Call @fn with the name of each profile (NAME.ini) in @dir (NULL = default), in name
 *  order. Returns 0, what @fn returned, or -cste_not_found, -cste_invalid. */
int cst_boards_foreach(const char *dir, cst_sysroot_dir_fn fn, void *ctx);

/** Device index with base address @base, or -cste_not_found. */
int cst_board_device_by_base(const struct cst_board *board, uint64_t base);
/** Device index with profile name @name, or -cste_not_found. */
int cst_board_device_by_name(const struct cst_board *board, const char *name);

/** Identify the running board from @root's /proc/device-tree/compatible against the
 *  profiles in @dir (NULL = default). Returns 0 and sets *out; -cste_not_found when
 *  no profile matches (or the system has no device tree); other errors as
 *  cst_board_load. */
int cst_board_detect(struct cst_board **out, const struct cst_sysroot *root, const char *dir,
		     const struct cst_log *log);

/** The trace ID the board's policy gives @cpu (0 for cst_trace_id_dynamic). */
uint8_t cst_board_trace_id(const struct cst_board *board, int cpu);

/* ------------------------------------------------------------------------
 * Decode configuration from a profile (`cstrace decode --board NAME dump.bin`).
 * ------------------------------------------------------------------------ */

struct cst_board_sources_opts {
	size_t sz;          /* sizeof(struct cst_board_sources_opts) */
	uint64_t cpu_mask;  /* bit N = include CPU N's ETM; 0 = all CPUs */
	bool with_stm;      /* also add the STM source(s) */
	/* Trace IDs: use this policy instead of the profile's (for a dump made with
	 * a kernel that numbered differently); ignored when @override_policy is false. */
	bool override_policy;
	enum cst_trace_id_policy policy;
};

/** Fill @out with up to @max trace-source configurations for a raw dump from
 *  @board: one per selected ETM in CPU order (then STMs if asked), each with the
 *  profile's core name, architecture, ID registers, control-register defaults
 *  (what perf programs: see the profile) and the trace ID its policy gives
 *  (legacy 0x10 + 2*cpu unless overridden). The result is ready for
 *  cst_session_opts.raw_sources. @opts may be NULL.
 *  Returns the number of sources selected (which may exceed @max: only @max are
 *  written), or -cste_invalid (NULL board, @out NULL with @max > 0),
 *  -cste_not_found (no ETM matches @cpu_mask),
 *  -cste_unsupported (dynamic trace IDs: the dump alone cannot say which ID
 *  is which CPU; pass override_policy). */
int cst_board_sources(const struct cst_board *board, const struct cst_board_sources_opts *opts,
		      struct cst_source_cfg *out, int max);

/* ------------------------------------------------------------------------
 * Fixture trees: what a board's /sys, /proc and /boot look like, for tests.
 * ------------------------------------------------------------------------ */

/** Faults a fixture can carry (bit mask). */
enum cst_fixture_fault {
	cst_fault_missing_sink = 1u << 0,    /* the preferred perf sink did not probe */
	cst_fault_wrong_etm_arch = 1u << 1,  /* the first ETM shows the other architecture */
	cst_fault_paranoid = 1u << 2,        /* perf_event_paranoid = 3 */
	cst_fault_cpuidle_on = 1u << 3,      /* deep idle states enabled */
	cst_fault_no_kconfig = 1u << 4,      /* no /proc/config.gz and no /boot/config-* */
	cst_fault_kconfig_etm_off = 1u << 5, /* the ETM driver option is not set */
	cst_fault_no_debugfs = 1u << 6,      /* debugfs not mounted */
	cst_fault_no_pmu = 1u << 7,          /* no cs_etm PMU (CoreSight not built/probed) */
	cst_fault_no_coresight = 1u << 8,    /* a kernel built without CoreSight: no option
						set, no bus, no PMU */
};

/** Fault for a command-line word ("missing-sink", "wrong-etm-arch", "paranoid",
 *  "cpuidle-on", "no-kconfig", "kconfig-etm-off", "no-debugfs", "no-pmu",
 *  "no-coresight"), or 0 if unknown. */
unsigned cst_fixture_fault_parse(const char *word);

struct cst_fixture_opts {
	size_t sz;              /* sizeof(struct cst_fixture_opts) */
	unsigned faults;        /* enum cst_fixture_fault bits */
	bool reverse_probe;     /* number funnelN/tmc_etfN... in reverse DT order */
	const char *osrelease;  /* kernel release; NULL = "6.12.0-cstrace" */
};

/** Write a fixture system tree for @board as directory @dir (missing or empty;
 *  its parents are created). The tree is made beside it and renamed onto it when
 *  complete, so a failure leaves nothing under @dir. Devices are named as the
 *  kernel does, in probe order (DT order), and sit under directories named
 *  "<base>.<node>" with a uevent carrying OF_FULLNAME, so that base addresses can
 *  be recovered. Returns 0 or -cste_invalid, -cste_io (errno says why: ENOSPC,
 *  ENOTEMPTY when @dir holds files), -cste_nomem. */
int cst_board_fixture_write(const struct cst_board *board, const char *dir,
			    const struct cst_fixture_opts *opts);

/* ------------------------------------------------------------------------
 * Live-system discovery and the doctor.
 * ------------------------------------------------------------------------ */

/** A CoreSight device found under /sys/bus/coresight/devices. */
struct cst_sys_device {
	char sysname[64];  /* "tmc_etr0" */
	char path[256];    /* target path of the device directory, resolved */
	uint64_t base;     /* base address, or UINT64_MAX when not recoverable */
	int cpu;           /* from the "cpu" attribute, else -1 */
};

/** Base address of CoreSight device @sysname: from the "<hex>.<node>" component of
 *  its resolved sysfs path, else OF_FULLNAME ("/etf@20010000") in the uevent of its
 *  parent. Returns 0 or -cste_not_found. */
int cst_sys_device_base(const struct cst_sysroot *root, const char *sysname, uint64_t *base);

/** List the CoreSight devices of @root into @out (up to @max). Returns the number
 *  found (may exceed @max), 0 if the bus directory is empty, or -cste_not_found when
 *  there is no /sys/bus/coresight at all. */
int cst_sys_devices(const struct cst_sysroot *root, struct cst_sys_device *out, int max);

/** Find the sysfs name of the device at @base ("tmc_etr0"). Returns 0 or -cste_not_found. */
int cst_sys_device_by_base(const struct cst_sysroot *root, uint64_t base, char *sysname,
			   size_t size);

enum cst_verdict {
	cst_verdict_ok = 0,
	cst_verdict_problem,
	cst_verdict_skip,    /* does not apply or cannot be checked here */
	cst_verdict_follows, /* a consequence of the problem @cause reported before it:
				its fix is that problem's */
};

/** One doctor finding. Strings are valid during the callback only. */
struct cst_check {
	const char *id;      /* stable check name: "kconfig", "pmu", "sink", "etm", ... */
	enum cst_verdict verdict;
	const char *subject; /* what was checked: "etm0 @ 0x500dc000" */
	const char *detail;  /* what was found */
	const char *fix;     /* for problems: the exact fix; else NULL */
	const char *cause;   /* cst_verdict_follows: the id of the problem it follows */
};

typedef void (*cst_check_fn)(void *ctx, const struct cst_check *check);

/** Overall results of cst_doctor_run. */
enum cst_doctor_result {
	cst_doctor_ok = 0,        /* every check passed */
	cst_doctor_problems = 1,  /* at least one problem */
	cst_doctor_no_coresight = 2, /* this system has no CoreSight at all */
};

struct cst_doctor_opts {
	size_t sz;                 /* sizeof(struct cst_doctor_opts) */
	const struct cst_log *log;
	const char *boards_dir;    /* NULL = default */
	const struct cst_board *board; /* NULL = detect from the device tree */
};

/** Check the system under @root for CoreSight tracing: kernel config, cs_etm PMU
 *  and its sinks, every profile device present by base address, each ETM's ID
 *  registers against the profile, perf_event_paranoid, CPU idle states (boards
 *  that lose trace in idle), debugfs. Each finding goes to @fn.
 *  Returns an enum cst_doctor_result (>= 0) or -cste_invalid, -cste_nomem. */
int cst_doctor_run(const struct cst_sysroot *root, const struct cst_doctor_opts *opts,
		   cst_check_fn fn, void *ctx);

#ifdef __cplusplus
}
#endif

#endif /* CSTRACE_BOARDS_H */
