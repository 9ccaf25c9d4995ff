/* Test helper: writes perf.data files around hand-encoded ETMv4/ETMv3/PTM packet
 * streams for the small test programs (a64.S, a32.S), for comparison with perf. */
#include <gelf.h>
#include <libelf.h>

#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cstrace/perfdata.h"

#define PID 4242
#define PMU_TYPE 8

struct buf {
	uint8_t b[4096];
	size_t n;
};

static void put(struct buf *b, const uint8_t *p, size_t n)
{
	if (b->n + n > sizeof(b->b)) {
		fprintf(stderr, "perf_gen: trace buffer overflow\n");
		exit(1);
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void put1(struct buf *b, uint8_t v)
{
	put(b, &v, 1);
}

/* ---------------------------------------------------------------- ELF */

struct prog {
	uint64_t sym[8]; /* _start, loop, func, end */
	uint64_t after_bl; /* where func returns to: "after_bl", else just before func */
	bool kernel;       /* a kernel module's code (--kmod): traced at EL1 */
	uint8_t build_id[20];
	uint8_t build_id_size;
	uint64_t load_vaddr, load_offset, load_size;
};

/* --kmod: where the kernel puts each section of a module, as the kernel's
 * layout_sections does it for the core text (every SHF_ALLOC|SHF_EXECINSTR
 * section not named .init*, in header order, aligned), from .text on (perf maps
 * a module's .text at its MMAP's address): this test's own statement of the
 * rule decode/kmod.c follows. UINT64_MAX for a section not laid out. */
static uint64_t kmod_sec[64];

static void kmod_layout(Elf *e)
{
	size_t shstrndx, n = 0;
	uint64_t end = 0, text = 0;
	Elf_Scn *scn = NULL;

	for (int i = 0; i < 64; i++)
		kmod_sec[i] = UINT64_MAX;
	elf_getshdrstrndx(e, &shstrndx);
	while ((scn = elf_nextscn(e, scn)) && ++n < 64) {
		GElf_Shdr sh;
		const char *name;
		uint64_t a;

		if (!gelf_getshdr(scn, &sh) || !(sh.sh_flags & SHF_ALLOC) ||
		    !(sh.sh_flags & SHF_EXECINSTR) || !sh.sh_size)
			continue;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (!name || !strncmp(name, ".init", 5))
			continue;
		a = sh.sh_addralign ? sh.sh_addralign : 1;
		end = (end + a - 1) / a * a;
		kmod_sec[elf_ndxscn(scn)] = end;
		if (!strcmp(name, ".text"))
			text = end;
		end += sh.sh_size;
	}
	for (int i = 0; i < 64; i++)
		if (kmod_sec[i] != UINT64_MAX)
			kmod_sec[i] = kmod_sec[i] >= text ? kmod_sec[i] - text : UINT64_MAX;
}

/* The symbol's address: its value, or in a module (@base set) where the kernel
 * put its section, from @base. UINT64_MAX when @must not and there is none. */
static uint64_t find_sym_at(Elf *e, const char *name, uint64_t base, bool must)
{
	Elf_Scn *scn = NULL;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_SYMTAB)
			continue;
		d = elf_getdata(scn, NULL);
		for (size_t i = 0; d && i < sh.sh_size / sh.sh_entsize; i++) {
			GElf_Sym s;
			const char *n;

			if (!gelf_getsym(d, (int)i, &s))
				continue;
			n = elf_strptr(e, sh.sh_link, s.st_name);
			if (n && !strcmp(n, name)) {
				if (!base)
					return s.st_value;
				if (s.st_shndx >= 64 || kmod_sec[s.st_shndx] == UINT64_MAX)
					break;
				return base + kmod_sec[s.st_shndx] + s.st_value;
			}
		}
	}
	if (!must)
		return UINT64_MAX;
	fprintf(stderr, "perf_gen: symbol %s not found\n", name);
	exit(1);
}


static void load_prog(const char *path, struct prog *p, uint64_t kmod)
{
	static const char *const names[] = {"_start", "loop", "func", "end"};
	int fd = open(path, O_RDONLY);
	Elf *e;
	Elf_Scn *scn = NULL;
	size_t nph;

	memset(p, 0, sizeof(*p));
	elf_version(EV_CURRENT);
	if (fd < 0 || !(e = elf_begin(fd, ELF_C_READ, NULL))) {
		fprintf(stderr, "perf_gen: cannot read %s\n", path);
		exit(1);
	}
	if (kmod)
		kmod_layout(e);
	for (int i = 0; i < 4; i++)
		p->sym[i] = find_sym_at(e, names[i], kmod, true);
	p->after_bl = find_sym_at(e, "after_bl", kmod, false);
	if (p->after_bl == UINT64_MAX)
		p->after_bl = p->sym[2] - 4; /* b end, just before func */
	p->kernel = kmod != 0;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		Elf_Data *d;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		d = elf_getdata(scn, NULL);
		/* NT_GNU_BUILD_ID named "GNU": 20 bytes (sha1) or 16 (md5, uuid) */
		if (d && d->d_size >= 16 && cst_le32((uint8_t *)d->d_buf) == 4 &&
		    cst_le32((uint8_t *)d->d_buf + 8) == 3) {
			uint32_t n = cst_le32((uint8_t *)d->d_buf + 4);

			if (n && n <= 20 && d->d_size >= 16 + n) {
				p->build_id_size = (uint8_t)n;
				memcpy(p->build_id, (uint8_t *)d->d_buf + 16, n);
			}
		}
	}
	if (kmod) {
		/* its MMAP: the module's memory from .text on */
		p->load_vaddr = kmod;
		p->load_size = 0x10000;
	}
	elf_getphdrnum(e, &nph);
	for (size_t i = 0; !kmod && i < nph; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			p->load_vaddr = ph.p_vaddr & ~0xfffull;
			p->load_offset = ph.p_offset & ~0xfffull;
			p->load_size = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull) - p->load_vaddr;
			break;
		}
	}
	elf_end(e);
	close(fd);
}

/* ------------------------------------------------------------ encoders */

/* ETMv4 (and ETE): the a64.S run: mov; 3x (sub; cbnz) taken, taken, not taken;
 * bl func; nop; ret -> b end; end: b end (taken twice). */
static void etmv4_stream(struct buf *b, const struct prog *p, bool ctxid, uint32_t tid)
{
	static const uint8_t async[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
	uint8_t a[16];
	uint64_t start = p->sym[0], after_bl = p->after_bl; /* b end */
	size_t k = 0;

	put(b, async, sizeof(async));
	put1(b, 0x01); /* trace info */
	put1(b, 0x01); /* plctl: info field present */
	put1(b, 0x00); /* info: no cycle counting, no cond trace */
	/* Address with context, 64-bit IS0: EL0, SF, NS (+ context ID) */
	a[k++] = 0x85;
	a[k++] = (uint8_t)((start >> 2) & 0x7f);
	a[k++] = (uint8_t)((start >> 9) & 0x7f);
	for (int i = 2; i < 8; i++)
		a[k++] = (uint8_t)(start >> (8 * i));
	/* the context: AArch64 (SF), non-secure, EL0 (a module: EL1), its ID */
	a[k++] = (uint8_t)((ctxid ? 0xb0 : 0x30) | (p->kernel ? 1 : 0));
	put(b, a, k);
	if (ctxid) {
		uint8_t c[4];

		cst_put_le32(c, tid);
		put(b, c, 4);
	}
	/* cbnz E, E, N; bl E; ret E (+ address of b end); b end E, E */
	put1(b, 0xf7);
	put1(b, 0xf7);
	put1(b, 0xf6);
	put1(b, 0xf7);
	put1(b, 0xf7);
	k = 0;
	a[k++] = 0x9d;
	a[k++] = (uint8_t)((after_bl >> 2) & 0x7f);
	a[k++] = (uint8_t)((after_bl >> 9) & 0x7f);
	for (int i = 2; i < 8; i++)
		a[k++] = (uint8_t)(after_bl >> (8 * i));
	put(b, a, k);
	put1(b, 0xf7);
	put1(b, 0xf7);
}

/* PTM: the a32.S run. Direct branches are atoms (one-atom header 0x80 = E, 0x82 = N),
 * indirect branches are branch address packets. */
static void ptm_addr(struct buf *b, uint32_t addr)
{
	/* ARM state, 5 bytes: v = addr >> 1; byte 0 holds v[6:1], then 7 bits a byte,
	 * byte 4 holds v[30:28] with ISA bits 00 (ARM). */
	uint32_t v = addr >> 1;

	put1(b, (uint8_t)(0x80 | (v & 0x7e) | 1));
	put1(b, (uint8_t)(0x80 | ((v >> 7) & 0x7f)));
	put1(b, (uint8_t)(0x80 | ((v >> 14) & 0x7f)));
	put1(b, (uint8_t)(0x80 | ((v >> 21) & 0x7f)));
	put1(b, (uint8_t)((v >> 28) & 0x07));
}

/* ETMv3 branch address, ARM state, 5 bytes: v = addr >> 2; byte 0 holds v[5:0],
 * byte 4 is 0b00001xxx (ARM) with v[29:27]. */
static void etmv3_addr(struct buf *b, uint32_t addr)
{
	uint32_t v = addr >> 2;

	put1(b, (uint8_t)(0x80 | ((v & 0x3f) << 1) | 1));
	put1(b, (uint8_t)(0x80 | ((v >> 6) & 0x7f)));
	put1(b, (uint8_t)(0x80 | ((v >> 13) & 0x7f)));
	put1(b, (uint8_t)(0x80 | ((v >> 20) & 0x7f)));
	put1(b, (uint8_t)(0x08 | ((v >> 27) & 0x07)));
}

static void ptm_stream(struct buf *b, const struct prog *p, bool ctxid, uint32_t tid)
{
	static const uint8_t async[6] = {0, 0, 0, 0, 0, 0x80};
	uint8_t a[16];
	uint32_t start = (uint32_t)p->sym[0];

	put(b, async, sizeof(async));
	/* I-sync: address (bit 0 = Thumb), info (reason 1 = trace on, NS), ctxid */
	a[0] = 0x08;
	cst_put_le32(a + 1, start & ~1u);
	a[5] = (1 << 5) | (1 << 3);
	put(b, a, 6);
	if (ctxid) {
		cst_put_le32(a, tid);
		put(b, a, 4);
	}
	/* atoms: bne E, E, N; bl E; then bx lr is an indirect branch: address */
	put1(b, 0x80);
	put1(b, 0x80);
	put1(b, 0x82);
	put1(b, 0x80);
	ptm_addr(b, (uint32_t)p->sym[2] - 4);
	put1(b, 0x80);
	put1(b, 0x80);
}

/* ETMv3: I-sync then P-headers; indirect branches add branch address packets.
 * Format 1 P-header: 0b1NEEEE00 = up to 15 E atoms then 0 or 1 N atom. */
static void etmv3_pheader(struct buf *b, int e, int n)
{
	put1(b, (uint8_t)(0x80 | ((n & 1) << 6) | ((e & 0xf) << 2)));
}

static void etmv3_stream(struct buf *b, const struct prog *p, bool ctxid, uint32_t tid)
{
	static const uint8_t async[6] = {0, 0, 0, 0, 0, 0x80};
	uint8_t a[16];
	uint32_t start = (uint32_t)p->sym[0];
	size_t k = 0;

	put(b, async, sizeof(async));
	/* I-sync: header, context ID (if configured), info byte, address */
	a[k++] = 0x08;
	if (ctxid) {
		cst_put_le32(a + k, tid);
		k += 4;
	}
	a[k++] = (1 << 5) | (1 << 3); /* reason trace on, NS */
	cst_put_le32(a + k, start & ~1u);
	k += 4;
	put(b, a, k);
	/* ETMv3 gives one atom per instruction (N: condition failed):
	 * mov subs bne subs bne subs E, bne N; bl nop bx E, then bx's target;
	 * b end, b end E */
	etmv3_pheader(b, 6, 1);
	etmv3_pheader(b, 3, 0);
	etmv3_addr(b, (uint32_t)p->sym[2] - 4);
	etmv3_pheader(b, 2, 0);
}

/* Wrap one source's bytes into 16-byte CoreSight frames with trace ID @id. */
static void frame(struct buf *out, const struct buf *in, uint8_t id)
{
	size_t i = 0;

	while (i < in->n) {
		uint8_t f[16] = {0}, aux = 0;

		f[0] = (uint8_t)((id << 1) | 1); /* ID change; aux bit 0 = 0: byte 1 is new ID */
		for (int pos = 1; pos < 15; pos++) {
			uint8_t d;

			if (i >= in->n) {
				/* switch to the null ID 0 and pad */
				if (pos % 2 == 0) {
					f[pos] = 0x01;
					for (int q = pos + 1; q < 15; q++)
						f[q] = 0;
					break;
				}
				d = 0;
			} else {
				d = in->b[i++];
			}
			if (pos % 2) {
				f[pos] = d;
			} else {
				f[pos] = d & 0xfe;
				aux |= (uint8_t)((d & 1) << (pos / 2));
			}
		}
		f[15] = aux;
		put(out, f, 16);
	}
}

/* ------------------------------------------------- real captured trace */

/* What --trace-file wraps, and how. */
struct wrap {
	const char *trace_files[8]; /* each written as one AUX record, in order */
	uint32_t trace_queues[8];   /* ... into this AUX queue (AUXTRACE idx) */
	int ntrace_files;
	char *images[16];
	int nimages;
	uint32_t traceid, idr1, trcconfigr;
	const char *etmv3;  /* ETMCR,ETMIDR,ETMCCER, or NULL for ETMv4 */
	bool raw;           /* unformatted data (AUX flag CORESIGHT_RAW) */
};

/* Wrap a captured ETMv4 frame buffer (e.g. a Juno snapshot's ETB dump) as
 * per-thread AUX fragments of a perf.data file, with raw memory dumps mapped by
 * MMAP2 (path@address). The ETM is a Cortex-A53 as in those snapshots. */
static int wrap_capture(const char *out, const struct wrap *wr)
{
	const char *etmv3 = wr->etmv3;
	char *const *images = wr->images;
	int nimages = wr->nimages;
	uint32_t traceid = wr->traceid, idr1 = wr->idr1;
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo), .hostname = "juno",
					  .osrelease = "6.1.0", .arch = "aarch64",
					  .nr_cpus_avail = 1, .nr_cpus_online = 1};
	struct cst_perf_sample_id sid = {.pid = PID, .tid = PID, .id = 200};
	struct cst_perf_etm_cpu cpu = {.magic = CST_PERF_ETMV4_MAGIC, .trctraceidr = traceid,
				       .trcidr0 = 0x28000ea1, .trcidr1 = idr1,
				       .trcidr2 = 0x488, .trcauthstatus = 0xcc,
				       .trcconfigr = wr->trcconfigr};
	struct cst_perf_etm_info info = {.version = 1, .pmu_type = PMU_TYPE, .nr_cpu = 1,
					 .cpus = &cpu};
	struct cst_perf_attr a = {0};
	struct cst_perf_writer *w;
	uint64_t id1 = 100, id2 = 200;

	if (etmv3) {
		/* ETMCR,ETMIDR,ETMCCER of an ETMv3 or PTM (PTM by its ETMIDR) */
		char *e;

		memset(&cpu, 0, sizeof(cpu));
		cpu.magic = CST_PERF_ETMV3_MAGIC;
		cpu.etmtraceidr = traceid;
		cpu.etmcr = (uint32_t)strtoul(etmv3, &e, 0);
		cpu.etmidr = (uint32_t)strtoul(*e ? e + 1 : e, &e, 0);
		cpu.etmccer = (uint32_t)strtoul(*e ? e + 1 : e, &e, 0);
	}
	FILE *f;
	if (cst_perf_writer_open(&w, out, &wo))
		return 1;
	a.type = PMU_TYPE;
	a.sample_period = 1;
	a.sample_type = CST_PERF_SAMPLE_IP | CST_PERF_SAMPLE_TID | CST_PERF_SAMPLE_IDENTIFIER;
	a.flags = CST_PERF_ATTR_DISABLED | CST_PERF_ATTR_EXCLUDE_KERNEL |
		  CST_PERF_ATTR_ENABLE_ON_EXEC | CST_PERF_ATTR_SAMPLE_ID_ALL;
	cst_perf_writer_add_attr(w, &a, &id1, 1);
	a.type = 1;
	a.config = 9;
	a.flags |= CST_PERF_ATTR_MMAP | CST_PERF_ATTR_COMM | CST_PERF_ATTR_TASK |
		   CST_PERF_ATTR_MMAP2 | CST_PERF_ATTR_COMM_EXEC;
	cst_perf_writer_add_attr(w, &a, &id2, 1);
	cst_perf_writer_etm_info(w, &info);
	cst_perf_writer_task(w, false, PID, 1, PID, 1, 0, &sid);
	cst_perf_writer_comm(w, true, PID, PID, "uname", &sid);
	for (int i = 0; i < nimages; i++) {
		/* DUMP@ADDR[:OFFSET[:LENGTH]] as in snapshot .ini dump sections */
		char path[PATH_MAX], *at = strrchr(images[i], '@'), *end;
		uint64_t addr, off = 0, len = 0;
		long sz;

		if (!at || !realpath((*at = '\0', images[i]), path))
			return 1;
		addr = strtoull(at + 1, &end, 0);
		if (*end == ':')
			off = strtoull(end + 1, &end, 0);
		if (*end == ':')
			len = strtoull(end + 1, &end, 0);
		f = fopen(path, "rb");
		if (!f || fseek(f, 0, SEEK_END) || (sz = ftell(f)) < 0)
			return 1;
		fclose(f);
		if (!len)
			len = (uint64_t)sz - off;
		cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, PID, PID, addr, len, off, 5, 2, NULL, 0,
				      path, &sid);
	}
	sid.id = 100;
	cst_perf_writer_itrace_start(w, PID, PID, &sid);
	uint64_t at[8] = {0}; /* each queue's AUX offset */

	for (int k = 0; k < wr->ntrace_files; k++) {
		const char *trace_file = wr->trace_files[k];
		uint32_t q = wr->trace_queues[k];
		uint8_t *data;
		long n;

		f = fopen(trace_file, "rb");
		if (!f || fseek(f, 0, SEEK_END) || (n = ftell(f)) <= 0 || fseek(f, 0, SEEK_SET)) {
			perror(trace_file);
			return 1;
		}
		data = malloc((size_t)n);
		if (!data || fread(data, 1, (size_t)n, f) != (size_t)n) {
			perror(trace_file);
			return 1;
		}
		fclose(f);
		cst_perf_writer_aux(w, at[q], (uint64_t)n, wr->raw ? CST_PERF_AUX_CORESIGHT_RAW : 0,
				    &sid);
		cst_perf_writer_auxtrace(w, at[q], 1, q, PID, UINT32_MAX, data, (uint64_t)n);
		at[q] += (uint64_t)n;
		free(data);
	}
	sid.id = 200;
	cst_perf_writer_task(w, true, PID, 1, PID, 1, 0, &sid);
	if (cst_perf_writer_finish(w))
		return 1;
	cst_perf_writer_free(w);
	return 0;
}

/* ---------------------------------------------------------------- main */

static void usage(void)
{
	fprintf(stderr, "usage: perf_gen --elf PROG --out FILE --proto etmv4|ete|etmv3|ptm "
			"[--raw] [--cpu-wide] [--snapshot] [--no-finish] [--hw-id] [--no-mmap]\n"
			"       [--no-ctxid] [--dump TRACE] [--auxtrace-idx N]\n"
			"       [--fragments N (with --cpu-wide)] [--mmap-name NAME]\n"
			"       [--mmap-unterminated] [--mmap-pgoff N] [--aux-gap N (per-thread)]\n"
			"       [--build-id-pad] [--comm NAME] [--kmod ADDR (--elf is a module\n"
			"       whose .text is at ADDR: a kernel MMAP, traced at EL1)]\n"
			"       [--mmap-build-id (--mmap-name keeps the build-id)]\n"
			"       perf_gen --out FILE --trace-file ETB.bin [--traceid ID] [--trcidr1 V]\n"
			"                [--etmv3-regs ETMCR,ETMIDR,ETMCCER] [--trcconfigr V] [--raw]\n"
			"                (--trace-file repeatable: one AUX record each,\n"
			"                 in the queue the --trace-queue N before it names)\n"
			"                [--image DUMP@ADDR[:OFFSET[:LENGTH]]]...\n"
			"       [--expect FILE]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option lo[] = {
		{"elf", 1, 0, 'e'},     {"out", 1, 0, 'o'},      {"proto", 1, 0, 'p'},
		{"raw", 0, 0, 'r'},     {"cpu-wide", 0, 0, 'c'}, {"snapshot", 0, 0, 's'},
		{"no-finish", 0, 0, 'f'}, {"dump", 1, 0, 'd'}, {"expect", 1, 0, 'x'},
		{"hw-id", 0, 0, 'H'},     {"no-mmap", 0, 0, 'M'},  {"no-ctxid", 0, 0, 'C'},
		{"trace-file", 1, 0, 'T'}, {"image", 1, 0, 'I'}, {"traceid", 1, 0, 'D'},
		{"trcidr1", 1, 0, 'R'},   {"etmv3-regs", 1, 0, 'V'}, {"trcconfigr", 1, 0, 'G'},
		{"auxtrace-idx", 1, 0, 'Q'}, {"fragments", 1, 0, 'N'},
		{"mmap-name", 1, 0, 'P'}, {"mmap-unterminated", 0, 0, 'U'},
		{"mmap-pgoff", 1, 0, 'O'}, {"aux-gap", 1, 0, 'A'},
		{"build-id-pad", 0, 0, 'B'}, {"comm", 1, 0, 'K'}, {"trace-queue", 1, 0, 'W'},
		{"kmod", 1, 0, 'k'},      {"mmap-build-id", 0, 0, 'b'},
		{0, 0, 0, 0},
	};
	const char *elf = NULL, *out = NULL, *proto = "etmv4", *dump = NULL, *expect = NULL;
	bool raw = false, cpu_wide = false, snapshot = false, finish = true, hw_id = false;
	bool mmap = true, ctxid = true;
	uint32_t idx2 = 1; /* --cpu-wide: the second AUXTRACE buffer's idx (queue) */
	uint32_t trace_queue = 0; /* --trace-file: the AUX queue of those that follow */
	unsigned long nfrag = 2; /* --cpu-wide: AUX records, each with its AUXTRACE */
	const char *mmap_name = NULL; /* the name MMAP2 records instead of the ELF's */
	bool mmap_unterminated = false; /* a second MMAP2 whose name has no NUL */
	bool set_pgoff = false;
	uint64_t pgoff = 0;   /* --mmap-pgoff: the MMAP2's pgoff instead of the ELF's */
	uint64_t aux_gap = 0; /* per-thread: AUX offset bytes skipped before the second */
	bool bid_pad = false; /* record the build-id as 20 bytes, zero-padded */
	const char *comm = "prog"; /* the command COMM records */
	uint64_t kmod = 0; /* --kmod ADDR: --elf is a kernel module whose .text is at ADDR */
	bool mmap_bid = false; /* --mmap-name keeps the build-id in the MMAP2 */
	struct wrap wr = {.traceid = 0x10, .idr1 = 0x4100f403};
	struct cst_perf_writer_opts wo = {.sz = sizeof(wo), .hostname = "cstrace-test",
					  .osrelease = "6.1.0", .arch = "aarch64",
					  .nr_cpus_avail = 2, .nr_cpus_online = 2};
	struct cst_perf_writer *w;
	struct cst_perf_attr a = {0};
	struct cst_perf_etm_info info = {0};
	struct cst_perf_etm_cpu cpus[2];
	struct prog p;
	char abspath[PATH_MAX];
	int c;
	bool v3;

	while ((c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
		switch (c) {
		case 'e': elf = optarg; break;
		case 'o': out = optarg; break;
		case 'p': proto = optarg; break;
		case 'r': raw = true; break;
		case 'c': cpu_wide = true; break;
		case 's': snapshot = true; break;
		case 'f': finish = false; break;
		case 'd': dump = optarg; break;
		case 'x': expect = optarg; break;
		case 'H': hw_id = true; break;
		case 'M': mmap = false; break;
		case 'C': ctxid = false; break;
		case 'T':
			if (wr.ntrace_files < 8) {
				wr.trace_queues[wr.ntrace_files] = trace_queue;
				wr.trace_files[wr.ntrace_files++] = optarg;
			}
			break;
		case 'W': trace_queue = (uint32_t)strtoul(optarg, NULL, 0) % 8; break;
		case 'D': wr.traceid = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'R': wr.idr1 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'G': wr.trcconfigr = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'Q': idx2 = (uint32_t)strtoul(optarg, NULL, 0); break;
		case 'N': nfrag = strtoul(optarg, NULL, 0); break;
		case 'P': mmap_name = optarg; break;
		case 'U': mmap_unterminated = true; break;
		case 'O': set_pgoff = true; pgoff = strtoull(optarg, NULL, 0); break;
		case 'A': aux_gap = strtoull(optarg, NULL, 0); break;
		case 'B': bid_pad = true; break;
		case 'K': comm = optarg; break;
		case 'k': kmod = strtoull(optarg, NULL, 0); break;
		case 'b': mmap_bid = true; break;
		case 'V': wr.etmv3 = optarg; break;
		case 'I':
			if (wr.nimages < 16)
				wr.images[wr.nimages++] = optarg;
			break;
		default: usage();
		}
	}
	if (out && wr.ntrace_files) {
		wr.raw = raw;
		return wrap_capture(out, &wr);
	}
	if (!elf || !out)
		usage();
	if (!realpath(elf, abspath)) {
		perror(elf);
		return 1;
	}
	load_prog(abspath, &p, kmod);
	if (bid_pad && p.build_id_size) /* as simpleperf and older perf record it */
		p.build_id_size = 20;
	v3 = !strcmp(proto, "etmv3") || !strcmp(proto, "ptm");

	/* Two CPUs; trace IDs as the kernel's legacy scheme: 0x10 + 2 * cpu. */
	memset(cpus, 0, sizeof(cpus));
	info.version = 1;
	info.pmu_type = PMU_TYPE;
	info.nr_cpu = 2;
	info.snapshot = snapshot;
	info.cpus = cpus;
	for (int i = 0; i < 2; i++) {
		struct cst_perf_etm_cpu *m = &cpus[i];

		m->cpu = (uint64_t)i;
		if (v3) {
			m->magic = CST_PERF_ETMV3_MAGIC;
			/* ETMCR: context ID size 32 bits (bits 15:14) when per-CPU */
			m->etmcr = cpu_wide && ctxid ? (3u << 14) : 0;
			m->etmtraceidr = 0x10 + 2 * (uint32_t)i;
			m->etmccer = 0x344008f2;
			m->etmidr = !strcmp(proto, "ptm") ? 0x411cf300 : 0x410cf250;
		} else {
			m->magic = !strcmp(proto, "ete") ? CST_PERF_ETE_MAGIC : CST_PERF_ETMV4_MAGIC;
			/* TRCCONFIGR bit 6: context ID tracing (perf's pid format) */
			m->trcconfigr = cpu_wide && ctxid ? (1u << 6) : 0;
			m->trctraceidr = 0x10 + 2 * (uint32_t)i;
			m->trcidr0 = 0x28000ea1;
			m->trcidr1 = !strcmp(proto, "ete") ? 0x4100fff0 : 0x4100f403;
			m->trcidr2 = 0x00000488;
			m->trcidr8 = 0;
			m->trcauthstatus = 0xcc;
			m->trcdevarch = 0x47705a13;
		}
	}

	if (cst_perf_writer_open(&w, out, &wo))
		return 1;
	/* cs_etm event: per-thread on one thread, or per-CPU (ids one per CPU). */
	a.type = PMU_TYPE;
	a.config = cpu_wide && ctxid ? (1ull << 14) : 0; /* contextid */
	a.sample_period = 1;
	/* As perf 6.1 records: CPU only for per-CPU buffers (its AUX matching needs
	 * sample->cpu == -1 for per-thread AUXTRACE buffers). Newer perf always sets
	 * CPU so that AUX_OUTPUT_HW_ID records name their CPU: so does --hw-id. */
	a.sample_type = CST_PERF_SAMPLE_IP | CST_PERF_SAMPLE_TID | CST_PERF_SAMPLE_IDENTIFIER |
			(cpu_wide || hw_id ? CST_PERF_SAMPLE_CPU : 0);
	a.flags = CST_PERF_ATTR_DISABLED | CST_PERF_ATTR_EXCLUDE_KERNEL |
		  CST_PERF_ATTR_EXCLUDE_HV | CST_PERF_ATTR_ENABLE_ON_EXEC |
		  CST_PERF_ATTR_SAMPLE_ID_ALL;
	{
		uint64_t ids[2] = {100, 101};

		cst_perf_writer_add_attr(w, &a, ids, cpu_wide ? 2 : 1);
	}
	a.type = 1; /* PERF_TYPE_SOFTWARE */
	a.config = 9; /* PERF_COUNT_SW_DUMMY */
	a.flags |= CST_PERF_ATTR_MMAP | CST_PERF_ATTR_COMM | CST_PERF_ATTR_TASK |
		   CST_PERF_ATTR_MMAP2 | CST_PERF_ATTR_COMM_EXEC | CST_PERF_ATTR_CONTEXT_SWITCH;
	{
		uint64_t ids[2] = {200, 201};

		cst_perf_writer_add_attr(w, &a, ids, cpu_wide ? 2 : 1);
	}
	cst_perf_writer_etm_info(w, &info);

	{
		struct cst_perf_sample_id sid = {.pid = PID, .tid = PID, .id = 200, .cpu = 0};
		struct cst_perf_sample_id sid2 = {.pid = PID, .tid = PID + 1, .id = 200, .cpu = 1};
		struct buf t1 = {0}, t2 = {0}, f1 = {0}, f2 = {0};
		const struct buf *d1, *d2;
		uint64_t flags = raw ? CST_PERF_AUX_CORESIGHT_RAW : 0;
		uint32_t cpu2 = cpu_wide ? 1 : 0;
		/* with --hw-id the sink uses IDs that only AUX_OUTPUT_HW_ID records tell
		 * (newer kernels allocate them dynamically); the metadata keeps 0x10+2n */
		uint8_t id_base = hw_id ? 0x20 : 0x10;

		cst_perf_writer_task(w, false, PID, 1, PID, 1, 0, &sid);
		cst_perf_writer_comm(w, true, PID, PID, comm, &sid);
		/* a module: the kernel's MMAP (pid -1), as perf and simpleperf write
		 * it, named --mmap-name or by the file; no build-id of its own */
		if (mmap && kmod) {
			const char *name = mmap_name ? mmap_name : abspath;
			size_t l = strlen(name) + 1, padded = (l + 7) & ~(size_t)7;
			size_t size = 8 + 32 + padded + 16; /* + the sample_id: tid, id */
			uint8_t r[8 + 32 + 4096 + 16] = {0};

			if (padded > 4096)
				return 1;
			cst_put_le32(r, 1); /* PERF_RECORD_MMAP */
			cst_put_le16(r + 4, CST_PERF_MISC_KERNEL);
			cst_put_le16(r + 6, (uint16_t)size);
			cst_put_le32(r + 8, UINT32_MAX);
			cst_put_le32(r + 12, 0);
			cst_put_le64(r + 16, p.load_vaddr);
			cst_put_le64(r + 24, p.load_size);
			cst_put_le64(r + 32, 0);
			memcpy(r + 40, name, l);
			cst_put_le32(r + 40 + padded, UINT32_MAX);
			cst_put_le64(r + 48 + padded, 200);
			if (cpu_wide || hw_id)
				return 1; /* the trailer above has no CPU */
			cst_perf_writer_raw(w, r, size);
		} else if (mmap)
			cst_perf_writer_mmap2(w, CST_PERF_MISC_USER, PID, PID, p.load_vaddr,
					      p.load_size, set_pgoff ? pgoff : p.load_offset, 5, 2,
					      p.build_id,
					      mmap_name && !mmap_bid ? 0 : p.build_id_size,
					      mmap_name ? mmap_name : abspath, &sid);
		if (mmap_unterminated) {
			/* over the same range, a name filling the record to its end:
			 * no NUL, no room for the sample_id trailer */
			uint8_t r[8 + 64 + 16];

			memset(r, 0, sizeof(r));
			cst_put_le32(r, 10); /* PERF_RECORD_MMAP2 */
			cst_put_le16(r + 4, CST_PERF_MISC_USER);
			cst_put_le16(r + 6, sizeof(r));
			cst_put_le32(r + 8, PID);
			cst_put_le32(r + 12, PID);
			cst_put_le64(r + 16, p.load_vaddr);
			cst_put_le64(r + 24, p.load_size);
			cst_put_le64(r + 32, p.load_offset);
			cst_put_le32(r + 64, 5);
			cst_put_le32(r + 68, 2);
			memset(r + 72, 'A', 16);
			cst_perf_writer_raw(w, r, sizeof(r));
		}
		/* a second thread of the same process */
		cst_perf_writer_task(w, false, PID, PID, PID + 1, PID, 0, &sid2);

		if (v3 && !strcmp(proto, "ptm")) {
			ptm_stream(&t1, &p, cpu_wide && ctxid, PID);
			ptm_stream(&t2, &p, cpu_wide && ctxid, PID + 1);
		} else if (v3) {
			etmv3_stream(&t1, &p, cpu_wide && ctxid, PID);
			etmv3_stream(&t2, &p, cpu_wide && ctxid, PID + 1);
		} else {
			etmv4_stream(&t1, &p, cpu_wide && ctxid, PID);
			etmv4_stream(&t2, &p, cpu_wide && ctxid, PID + 1);
		}
		if (raw) {
			d1 = &t1;
			d2 = &t2;
		} else {
			frame(&f1, &t1, id_base);
			frame(&f2, &t2, (uint8_t)(id_base + 2 * cpu2));
			d1 = &f1;
			d2 = &f2;
		}
		if (dump) {
			FILE *df = fopen(dump, "wb");

			if (df) {
				fwrite(t1.b, 1, t1.n, df);
				fclose(df);
			}
		}
		sid.id = 100;
		sid2.id = cpu_wide ? 101 : 100;
		/* Thread 1 on CPU 0, then thread 2 (CPU 1 when per-CPU). */
		if (hw_id) {
			/* minor version 1, sink id 0, trace ID in bits 7:0 */
			struct cst_perf_sample_id h0 = sid, h1 = sid2;

			h1.cpu = 1;
			cst_perf_writer_hw_id(w, (1ull << 56) | id_base, &h0);
			cst_perf_writer_hw_id(w, (1ull << 56) | (uint64_t)(id_base + 2), &h1);
		}
		cst_perf_writer_itrace_start(w, PID, PID, &sid);
		cst_perf_writer_aux(w, snapshot ? d1->n : 0, d1->n,
				    flags | (snapshot ? CST_PERF_AUX_OVERWRITE : 0), &sid);
		if (cpu_wide)
			cst_perf_writer_itrace_start(w, PID, PID + 1, &sid2);
		if (!cpu_wide) {
			/* per-thread: one buffer (idx 0) per traced thread; the second
			 * fragment is a second AUX record of the same thread */
			sid2.tid = PID;
			sid2.cpu = 0;
		}
		{
			uint64_t off2 = cpu_wide ? 0 : d1->n + aux_gap;

			cst_perf_writer_aux(w, snapshot ? off2 + d2->n : off2, d2->n,
					    flags | (snapshot ? CST_PERF_AUX_OVERWRITE : 0), &sid2);
		}
		/* more fragments: the two again and again, each ring's next AUX record
		 * after its last, every one with its own AUXTRACE buffer */
		for (unsigned long k = 2; cpu_wide && k < nfrag; k++) {
			const struct buf *d = k & 1 ? d2 : d1;
			uint64_t off = (k / 2) * d->n;

			cst_perf_writer_aux(w, off, d->n, flags, k & 1 ? &sid2 : &sid);
			cst_perf_writer_auxtrace(w, off, k + 1, k & 1 ? idx2 : 0, UINT32_MAX,
						 (uint32_t)(k & 1), d->b, d->n);
		}
		cst_perf_writer_finished_round(w);
		if (cpu_wide) {
			cst_perf_writer_auxtrace(w, 0, 1, 0, UINT32_MAX, 0, d1->b, d1->n);
			cst_perf_writer_auxtrace(w, 0, 2, idx2, UINT32_MAX, 1, d2->b, d2->n);
		} else {
			/* one AUXTRACE buffer holding both fragments, as perf writes it */
			struct buf both = *d1;

			put(&both, d2->b, d2->n);
			cst_perf_writer_auxtrace(w, 0, 1, 0, PID, UINT32_MAX, both.b, both.n);
		}
		sid.id = 200;
		sid2.id = 200;
		sid2.tid = PID + 1;
		cst_perf_writer_task(w, true, PID, PID, PID + 1, PID, 0, &sid2);
		cst_perf_writer_task(w, true, PID, 1, PID, 1, 0, &sid);
		if (p.build_id_size)
			cst_perf_writer_add_build_id(w, -1,
						     kmod ? CST_PERF_MISC_KERNEL : CST_PERF_MISC_USER,
						     p.build_id, p.build_id_size,
						     kmod && mmap_name ? mmap_name : abspath);
	}
	if (expect) {
		/* the instructions both fragments execute: mov; 3x (sub; cbnz); bl;
		 * func's nop, ret; b end; end */
		const uint64_t start = p.sym[0], loop = p.sym[1], func = p.sym[2];
		const uint64_t path[] = {start,    loop,     loop + 4, loop,     loop + 4, loop,
					 loop + 4, loop + 8, func,     func + 4, p.after_bl, p.sym[3]};
		FILE *ef = fopen(expect, "w");

		for (int frag = 0; ef && frag < 2; frag++)
			for (size_t i = 0; i < sizeof(path) / sizeof(path[0]); i++)
				fprintf(ef, "%" PRIx64 "\n", path[i]);
		if (ef)
			fclose(ef);
	}
	if (finish && cst_perf_writer_finish(w))
		return 1;
	cst_perf_writer_free(w);
	return 0;
}
