/* Reads QEMU's -d exec,nochain,page,strace,in_asm log: the executed PCs (ground truth),
 * the bytes of each translated instruction, and where executable files were mapped. */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "synth_int.h"

static int qlog_add_map(struct synth_qlog *q, uint64_t addr, uint64_t len, uint64_t pgoff,
			const char *host, const char *guest)
{
	if (CST_GROW(q->maps, q->cap_maps, (size_t)q->nmaps + 1) < 0)
		return -cste_nomem;
	struct synth_mapping *m = &q->maps[q->nmaps++];
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	m->len = len;
	m->pgoff = pgoff;
	snprintf(m->path, sizeof(m->path), "%s", host);
	snprintf(m->guest_path, sizeof(m->guest_path), "%s", guest);
	return 0;
}

/* QEMU opens guest paths under the -L prefix first and falls back to the host's. */
static void qlog_host_path(const struct synth_qlog *q, const char *guest, char *out, size_t size)
{
	if (guest[0] == '/' && q->sysroot) {
		snprintf(out, size, "%s%s", q->sysroot, guest);
		if (access(out, R_OK) == 0)
			return;
	}
	snprintf(out, size, "%s", guest);
}

/* Map the executable segments of an ELF file loaded with @bias. */
static int qlog_map_elf(struct synth_qlog *q, const char *host, const char *guest,
			const struct synth_elf *elf, uint64_t bias)
{
	for (int i = 0; i < elf->nseg; i++) {
		const struct synth_elf_seg *s = &elf->seg[i];
		if (!s->exec)
			continue;
		int rc = qlog_add_map(q, s->vaddr + bias, s->filesz, s->offset, host, guest);
		if (rc)
			return rc;
	}
	return 0;
}

/* The main image and ld.so are loaded by QEMU itself: the page lines give
 * start_code and the entry point (ld.so's when there is one). */
static int qlog_map_main(struct synth_qlog *q, const struct cst_log *log)
{
	struct synth_elf elf, interp;
	int rc = synth_elf_read(q->prog, &elf);
	if (rc) {
		cst_logf(log, cst_log_warning, "%s: cannot read its ELF headers", q->prog);
		return 0;
	}
	uint64_t low = UINT64_MAX;
	for (int i = 0; i < elf.nseg; i++)
		if (elf.seg[i].vaddr < low)
			low = elf.seg[i].vaddr;
	uint64_t bias = elf.dyn ? q->start_code - (low & ~(uint64_t)0xfff) : 0;
	rc = qlog_map_elf(q, q->prog, q->prog, &elf, bias);
	if (rc || !elf.interp[0])
		return rc;
	char host[512];
	qlog_host_path(q, elf.interp, host, sizeof(host));
	if (synth_elf_read(host, &interp)) {
		cst_logf(log, cst_log_warning, "%s: cannot read the interpreter %s", q->prog, host);
		return 0;
	}
	return qlog_map_elf(q, host, elf.interp, &interp, (q->entry & ~(uint64_t)1) - interp.entry);
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c = tolower(c);
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

/* "0x00010340:  f04f 0b00  mov.w ..." : halfword tokens (T32) or one word. */
static int qlog_in_asm(struct synth_qlog *q, const char *line)
{
	char *end;
	uint64_t addr = strtoull(line, &end, 16);
	if (end[0] != ':' || end[1] != ' ' || end[2] != ' ')
		return 0;
	const char *p = end + 3;
	uint8_t bytes[8];
	size_t n = 0;
	while (n < sizeof(bytes)) {
		int digits = 0;
		uint32_t v = 0;
		while (hexval(p[digits]) >= 0 && digits < 9) {
			v = (v << 4) | (uint32_t)hexval(p[digits]);
			digits++;
		}
		if (digits == 8 && n + 4 <= sizeof(bytes)) {
			cst_put_le32(bytes + n, v);
			n += 4;
		} else if (digits == 4) {
			cst_put_le16(bytes + n, (uint16_t)v);
			n += 2;
		} else {
			break;
		}
		p += digits;
		if (p[0] != ' ' || p[1] == ' ')
			break;
		p++;
	}
	return n ? synth_codemap_put(q->code, addr, bytes, n) : 0;
}

/* strace: remember which fd names which file, and executable mmaps of files. */
static int qlog_mmap_result(struct synth_qlog *q, const char *res);

static int qlog_strace(struct synth_qlog *q, const char *line, const struct cst_log *log)
{
	char *end;
	long pid = strtol(line, &end, 10);
	if (end == line || *end != ' ')
		return 0;
	const char *call = end + 1;
	if (!q->pid)
		q->pid = (int)pid;
	if (!strncmp(call, "openat(", 7)) {
		const char *a = strchr(call, '"'), *b = a ? strchr(a + 1, '"') : NULL;
		const char *r = strstr(call, ") = ");
		if (!a || !b || !r)
			return 0;
		long fd = strtol(r + 4, NULL, 10);
		if (fd >= 0 && fd < 64) {
			size_t n = (size_t)(b - a - 1);
			if (n >= sizeof(q->fd_path[0]))
				n = sizeof(q->fd_path[0]) - 1;
			memcpy(q->fd_path[fd], a + 1, n);
			q->fd_path[fd][n] = 0;
		}
	} else if (!strncmp(call, "mmap(", 5) || !strncmp(call, "mmap2(", 6)) {
		snprintf(q->pending_mmap, sizeof(q->pending_mmap), "%s", call);
		q->mmap_pending = true;
		const char *r = strstr(call, ") = ");
		if (r) /* no page layout dump in between: the result is on this line */
			return qlog_mmap_result(q, r + 4);
	}
	return 0;
}

/* The result line of a pending mmap: " = 0x...". */
static int qlog_mmap_result(struct synth_qlog *q, const char *res)
{
	q->mmap_pending = false;
	const char *call = q->pending_mmap;
	bool mmap2 = !strncmp(call, "mmap2(", 6);
	const char *args = strchr(call, '(');
	if (!args || !strstr(call, "PROT_EXEC"))
		return 0;
	/* addr,len,prot,flags,fd,off */
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", args + 1);
	char *f[6] = {0}, *save = NULL;
	char *t = strtok_r(buf, ",", &save);
	for (int i = 0; i < 6 && t; i++, t = strtok_r(NULL, ",)", &save))
		f[i] = t;
	if (!f[5])
		return 0;
	long fd = strtol(f[4], NULL, 10);
	if (fd < 0 || fd >= 64 || !q->fd_path[fd][0])
		return 0;
	uint64_t addr = strtoull(res, NULL, 0);
	if (addr == (uint64_t)-1 || !strncmp(res, "-1", 2))
		return 0;
	uint64_t len = strtoull(f[1], NULL, 0), off = strtoull(f[5], NULL, 0);
	if (mmap2)
		off *= 4096;
	char host[512];
	qlog_host_path(q, q->fd_path[fd], host, sizeof(host));
	return qlog_add_map(q, addr, len, off, host, q->fd_path[fd]);
}

/* Find an exec line QEMU's other threads wrote into the middle of this one
 * ("...child_tidptr=0x...)Trace 1: 0x..."): it is an executed instruction too. */
static char *qlog_embedded_trace(char *line)
{
	for (char *t = strstr(line + 1, "Trace "); t; t = strstr(t + 1, "Trace ")) {
		char *e;
		strtoul(t + 6, &e, 10);
		if (e != t + 6 && e[0] == ':' && e[1] == ' ' && e[2] == '0' && e[3] == 'x')
			return t;
	}
	return NULL;
}

/* "Trace 0: 0x7f.. [0000000001009331/0000000000400580/00000001/00000201] sym" */
static int qlog_trace_line(struct synth_qlog *q, const char *line, synth_qlog_insn_fn fn,
			   void *ctx, const struct cst_log *log)
{
	const char *b = strchr(line, '[');
	char *e;
	if (!b)
		return -cste_format;
	uint64_t flags = strtoull(b + 1, &e, 16);
	if (*e != '/')
		return -cste_format;
	uint64_t pc = strtoull(e + 1, &e, 16);
	if (*e != '/')
		return -cste_format;
	if (!q->main_mapped && q->start_code) {
		q->main_mapped = true;
		int rc = qlog_map_main(q, log);
		if (rc)
			return rc;
	}
	/* AArch32: the Thumb state is bit 23 of the first field (QEMU 7.2). */
	bool thumb = q->arm && ((flags >> 23) & 1);
	int cpu = (int)strtol(line + 6, NULL, 10);
	return fn ? fn(ctx, cpu, pc, thumb) : 0;
}

/* One line of the log, by what it starts with. */
static int qlog_line(struct synth_qlog *q, char *line, synth_qlog_insn_fn fn, void *ctx,
		     const struct cst_log *log)
{
	if (line[0] == 'T' && !strncmp(line, "Trace ", 6))
		return qlog_trace_line(q, line, fn, ctx, log);
	if (line[0] == '0' && line[1] == 'x')
		return qlog_in_asm(q, line);
	if (q->mmap_pending && !strncmp(line, " = ", 3))
		return qlog_mmap_result(q, line + 3);
	if (isdigit((unsigned char)line[0])) {
		if (!strchr(line, '-') || strchr(line, '('))
			return qlog_strace(q, line, log);
	} else if (!strncmp(line, "start_code ", 11)) {
		if (!q->start_code)
			q->start_code = strtoull(line + 11, NULL, 0);
	} else if (!strncmp(line, "entry ", 6)) {
		if (!q->entry)
			q->entry = strtoull(line + 6, NULL, 0);
	}
	return 0;
}

int synth_qlog_parse(struct synth_qlog *q, const char *log_path, synth_qlog_insn_fn fn, void *ctx,
		     const struct cst_log *log)
{
	if (!q || !log_path || !q->code)
		return -cste_invalid;
	FILE *f = fopen(log_path, "r");
	if (!f) {
		cst_logf(log, cst_log_error, "%s: cannot open the QEMU log", log_path);
		return -cste_io;
	}
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = 0;
	uint64_t lineno = 0;
	while (!rc && (n = getline(&line, &cap, f)) > 0) {
		lineno++;
		if (q->stop && *q->stop) {
			rc = -cste_interrupted;
			break;
		}
		char *emb = line[0] == 'T' ? NULL : qlog_embedded_trace(line);
		if (emb) {
			/* the exec line goes after the text it interrupted */
			char *tail = strdup(emb);
			*emb = 0;
			rc = tail ? qlog_line(q, line, fn, ctx, log) : -cste_nomem;
			if (!rc)
				rc = qlog_line(q, tail, fn, ctx, log);
			free(tail);
			continue;
		}
		rc = qlog_line(q, line, fn, ctx, log);
	}
	if (rc < 0 && rc != -cste_interrupted)
		cst_logf(log, cst_log_error, "%s:%llu: cannot read this QEMU log line", log_path,
			 (unsigned long long)lineno);
	if (!rc && !q->main_mapped && q->start_code) {
		q->main_mapped = true;
		rc = qlog_map_main(q, log);
	}
	free(line);
	fclose(f);
	return rc;
}

void synth_qlog_fini(struct synth_qlog *q)
{
	if (!q)
		return;
	free(q->maps);
	q->maps = NULL;
	q->nmaps = q->cap_maps = 0;
}

/* The value of a syscall's result " = N" at @p, if it is a decimal. */
static bool qlog_result(const char *p, unsigned long long *v)
{
	char *end;

	if (!p || !isdigit((unsigned char)p[0]))
		return false;
	*v = strtoull(p, &end, 10);
	return end != p;
}

/* Whether the clone() whose arguments start at @args makes a thread (CLONE_THREAD)
 * rather than a process (fork, vfork, which QEMU's user mode runs as a fork). QEMU
 * prints the flags by name, with what it has no name for in hex: "CLONE_VM|...|0x11". */
static bool clone_is_thread(const char *args)
{
	size_t len = strcspn(args, ",)");
	unsigned long long bits = 0;

	for (const char *p = args; p < args + len; p++) {
		if (!strncmp(p, "CLONE_THREAD", 12) && (p[12] == '|' || p[12] == ',' || p[12] == ')'))
			return true;
		if (p[0] == '0' && p[1] == 'x' && (p == args || p[-1] == '|' || p[-1] == '('))
			bits |= strtoull(p, NULL, 16);
	}
	return (bits & 0x10000) != 0; /* CLONE_THREAD */
}

/* QEMU's -strace prints a call ("PID name(args)") and its result (" = N") in two
 * writes, and its threads write between them: a clone's result may end another
 * thread's line ("PID rt_sigprocmask(...) = TID") while that call's own result
 * ends the clone's line. So results are not matched to calls by place: each clone
 * leaves a thread ID owed, and the next result that can be a new thread's ID pays
 * it: above the process ID (IDs grow), and not seen before. (QEMU prints the
 * process ID before every thread's calls, so a call names no thread.) A forked
 * child's QEMU writes to the same log with its own process ID: its lines make no
 * thread of the traced process and pay none, and the fork's own result (the
 * child's ID) pays none either. */
uint32_t synth_qlog_ids(const char *log_path, struct synth_qlog_ids *ids)
{
	FILE *f = fopen(log_path, "r");
	char *line = NULL;
	size_t cap = 0;
	uint32_t pid = 0, children[64];
	int owed = 0, nchildren = 0;

	ids->ntids = ids->nclones = ids->nforks = 0;
	if (!f)
		return 0;
	while (getline(&line, &cap, f) > 0) {
		char *end;
		const char *res = NULL;
		unsigned long long v;

		if (line[0] == 'T' || line[0] == '0')
			continue; /* exec and in_asm lines: the bulk of the log */
		if (isdigit((unsigned char)line[0])) {
			unsigned long id = strtoul(line, &end, 10);

			if (*end != ' ' || !isalpha((unsigned char)end[1]) || !strchr(end, '('))
				continue;
			if (!pid)
				pid = (uint32_t)id;
			if (id != pid) { /* a forked child's: its ID is no thread's */
				bool known = false;

				for (int i = 0; i < nchildren; i++)
					known |= children[i] == id;
				if (!known && nchildren < 64)
					children[nchildren++] = (uint32_t)id;
				continue;
			}
			res = strstr(end, ") = ");
			if (res)
				res += 4;
			if (!strncmp(end + 1, "clone(", 6)) {
				if (clone_is_thread(end + 7)) {
					owed++;
					ids->nclones++;
				} else {
					ids->nforks++;
					res = NULL;
				}
			}
		} else if (!strncmp(line, " = ", 3)) {
			res = line + 3;
		}
		if (owed && ids->ntids < SYNTH_MAX_CPUS && qlog_result(res, &v) && v > pid &&
		    v <= UINT32_MAX) {
			bool seen = false;

			for (int i = 0; i < ids->ntids; i++)
				seen |= ids->tids[i] == v;
			for (int i = 0; i < nchildren; i++)
				seen |= children[i] == v;
			if (!seen) {
				ids->tids[ids->ntids++] = (uint32_t)v;
				owed--;
			}
		}
	}
	free(line);
	fclose(f);
	return pid;
}
