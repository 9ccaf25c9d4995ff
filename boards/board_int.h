/* The board profile as the boards library keeps it. Callers see struct cst_board as
 * an opaque handle (include/cstrace/boards.h); the files of boards/ and its tests
 * read the fields here. */
#ifndef CSTRACE_BOARD_INT_H
#define CSTRACE_BOARD_INT_H

#include "cstrace/boards.h"

/* Each array grows through CST_GROW: n* counts the elements, cap_* the room. */
struct cst_board {
	char *name;        /* "stm32mp157", file name without .ini */
	char *title;       /* one line */
	char *file;        /* the file it was read from */
	char **compatibles;/* DT compatibles that identify it, most specific first */
	int ncompatibles;
	char *sysfs_parent;/* where its AMBA devices sit in sysfs ("/sys/devices/platform") */
	enum cst_trace_id_policy trace_id_policy;
	char *dt_overlay;  /* overlay source shipped beside the profile, or NULL */
	char *dt_upstream; /* first Linux version with upstream DT nodes, or NULL */
	bool loses_context_in_idle; /* trace units lose state in CPU idle (cpuidle check) */
	struct cst_board_cpu *cpus;
	int ncpus;
	struct cst_board_device *devices;
	int ndevices;
	struct cst_board_link *links;
	int nlinks;
	char **kconfig;    /* "CONFIG_CORESIGHT=y" lines */
	int nkconfig;
	char **firmware;   /* firmware prerequisites, one sentence each */
	int nfirmware;
	struct cst_board_issue *issues;
	int nissues;
	size_t cap_compatibles, cap_cpus, cap_devices, cap_links, cap_kconfig, cap_firmware,
		cap_issues;
};

/* kconfig.c: the kernel's configuration, gzipped (/proc/config.gz) or plain
 * (/boot/config-RELEASE), as a malloc'ed text with @where naming the file; NULL
 * when neither can be read. */
char *brd_kconfig_read(const struct cst_sysroot *root, char *where, size_t wsize);
/* The value of CONFIG_X (@name) in @text ("y", "m", "0x10") copied to @buf, or
 * NULL when it is not set. */
const char *brd_kconfig_value(const char *text, const char *name, char *buf, size_t size);

#endif
