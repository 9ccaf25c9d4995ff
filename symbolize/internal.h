/* Internal to symbolize/: binaries (dso), their symbol and line tables, address
 * spaces and the range cache, shared by the files of this folder only. */
#ifndef CSTRACE_SYMBOLIZE_INTERNAL_H
#define CSTRACE_SYMBOLIZE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>
#include <pthread.h>
#include <string.h>

#include <capstone/capstone.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include "cstrace/symbolize.h"

/* The process an element ran in: its own pid, else its context ID, else
 * CST_SYM_PID_GLOBAL (cst_sym_elem's pid). */
static inline int32_t sym_elem_pid(const struct cst_elem *e)
{
	return e->pid >= 0 ? e->pid : e->ctx.ctxid_valid ? (int32_t)e->ctx.context_id
							 : CST_SYM_PID_GLOBAL;
}

/* ---- functions and line rows ---- */

struct sym_line_slot {
	const char *file;
	int line;
};

struct sym_func {
	struct cst_sym_func pub;
	uint64_t end;              /* addr + size (link addresses) */
	uint8_t rank;              /* which alias names an address (symtab.c) */
	bool label;                /* a local code label, not a declared function */
	bool slots_done;
	struct sym_line_slot *slots; /* distinct lines, pub.nlines of them */
};

/* One row of a module's line table (link addresses). */
struct sym_row {
	uint64_t addr;
	const char *file;
	uint32_t line;             /* 0: no line (end of sequence or compiler-made) */
	uint32_t discriminator;    /* the row's DWARF discriminator (0: none) */
};

/* A compile unit's address range (module addresses), for binaries without
 * .debug_aranges (clang does not write it). */
struct sym_cu_range {
	uint64_t lo, hi;
	Dwarf_Die cu;
	Dwarf_Addr bias;
};

/* Arm mapping symbol: code state from @addr on. */
enum sym_mapkind { sym_map_a32 = 'a', sym_map_t32 = 't', sym_map_data = 'd', sym_map_a64 = 'x' };

struct sym_mapsym {
	uint64_t addr;
	char kind;
};

struct sym_segment {
	uint64_t vaddr, offset, filesz, memsz;
};

enum dso_kind {
	dso_missing = 0,           /* no usable file: dso+offset only */
	dso_elf,
	dso_raw,                   /* bytes only (memory dump) */
	dso_kallsyms,
};

struct psym;
struct dso {
	char *path;                /* as recorded / given */
	char *short_name;          /* for display: as recorded */
	char *file;                /* what was opened (symfs applied), NULL if none */
	enum dso_kind kind;
	uint8_t build_id[64];      /* wanted (recorded) build-id */
	uint32_t build_id_size;
	bool raw_wanted;
	bool given;                /* named by the user (--elf): the file as given */
	bool image;                /* a trace's memory image: no --elf stands for it */

	/* the opened file */
	const uint8_t *map;
	size_t map_size;
	Elf *elf;
	uint16_t machine;          /* EM_AARCH64, EM_ARM */
	struct sym_segment *segs;  /* PT_LOAD: file offset <-> link address */
	uint32_t nsegs;
	struct sym_segment *secs;  /* allocated PROGBITS sections: where bytes really are */
	uint32_t nsecs;
	/* a kernel module (ET_REL): its code as the kernel lays it out (its branches
	 * relocated in the map), and where libdwfl, which lays out such a file its own
	 * way, put each of those sections: the module's link addresses */
	struct cst_kmod_section *kmod;
	uint64_t *kmod_vaddr;      /* NULL until sym_dso_kmod_place */
	int nkmod;

	/* symbols (link addresses, Thumb bit cleared), sorted by address */
	struct sym_func *funcs;
	uint32_t nfuncs;
	struct sym_mapsym *mapsyms;
	uint32_t nmapsyms;
	bool syms_done;
	/* the table Linux perf 6.1 names code by (perfnames.c), for perf's lines */
	struct psym *perf_tree;    /* its nodes, as perf's red-black tree holds them */
	uint32_t nperf_syms;
	int32_t perf_root;
	bool perf_syms_done;
	bool perf_syms_built;      /* done and in place (read with acquire: reader.c) */

	/* DWARF through libdwfl: one Dwfl per binary, reported at its own addresses */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwarf_Addr bias;
	bool dwarf_done, has_dwarf;
	struct sym_row *rows;
	uint32_t nrows;
	struct sym_cu_range *cu_ranges; /* built when libdw's aranges miss an address */
	uint32_t ncu_ranges;
	bool cu_ranges_done;
	struct sym_scopes *scopes; /* scopes.c: where inlined code is, per compile unit */
	char *debug_file;          /* separate debug file dwfl found, if any */

	char *why;                 /* what was looked for, for the warning */
	bool warned;
	bool isa_warned;           /* trace ISA and mapping symbols disagreed once */
	struct dso *next;
};

/* ---- address spaces ---- */

/* Space of user-given ELF files for every pid (--elf): consulted first. */
#define SYM_PID_USER (-2)

struct mapping {
	uint64_t start, end;       /* runtime */
	int64_t vaddr_adj;         /* link address = runtime + vaddr_adj */
	uint64_t off_adj;          /* file offset = runtime + off_adj (mod 2^64) */
	struct dso *dso;
};

struct space {
	int32_t pid;
	uint32_t gen;              /* bumped on change: keys the range cache */
	struct mapping *maps;      /* sorted by start, no overlaps */
	uint32_t nmaps, cap;
};

/* ---- range cache ---- */

struct range_entry {
	const struct space *space;
	uint32_t gen;
	uint64_t start, end;
	uint32_t num_insns;
	uint8_t isa;
	uint32_t npieces;
	struct cst_sym_piece *pieces;
};

/* A recent range, by pid rather than by space (range.c): SYM_RANGE_FRONT of them. */
#define SYM_RANGE_FRONT 4096u
struct range_front {
	uint64_t start, end;
	int32_t pid;
	uint32_t num_insns;
	uint32_t epoch; /* spaces_epoch it was found in; 0: empty */
	uint8_t isa;
	uint32_t npieces;
	struct cst_sym_piece *pieces;
};

/* perf's name of a recent address (range.c), by pid: SYM_PERF_MEMO of them. */
#define SYM_PERF_MEMO 16384u
struct perf_memo {
	uint64_t addr, vaddr;      /* vaddr: addr at its binary's link address */
	int32_t pid;
	uint32_t epoch;            /* spaces_epoch it was found in; 0: empty */
	bool elf;                  /* an ELF's mapping holds addr: perf names it (or not) */
	const struct sym_func *f;
};

/* An instruction's disassembly (disasm.c): its text depends on nothing but the
 * instruction set, the address (PC-relative operands) and the code bytes, all in
 * the key, so no change of the spaces makes it stale. SYM_DISASM_MEMO of them. */
#define SYM_DISASM_MEMO 65536u
struct disasm_memo {
	uint64_t addr;
	uint32_t code;             /* the bytes, little-endian, zero-padded */
	uint8_t size, isa;         /* size 0: empty */
	/* the rest of one 64-byte cache line: a look-up touches one line, and a
	 * longer text is not kept */
	char text[64 - sizeof(uint64_t) - sizeof(uint32_t) - 2];
};
_Static_assert(sizeof(struct disasm_memo) == 64, "a disassembly memo slot is one cache line");

struct arena_chunk;

struct comm {
	int32_t tid;
	char name[32];
};

/* What each thread that symbolizes keeps for itself: caches, memos and counts.
 * A reader (cst_symbolizer_reader_alloc) has its own, and shares the rest. */
struct sym_own {
	struct range_entry *cache; /* open addressing, power of two */
	uint32_t cache_cap, cache_used;
	struct range_front *front; /* before it: see range.c */
	struct perf_memo *perf_memo; /* cst_symbolizer_perf_name's answers (range.c) */
	/* sym_find_mapping's last answer, while spaces_epoch stands (space.c) */
	struct {
		int32_t pid;
		uint32_t epoch;    /* 0: none */
		const struct mapping *m;
		const struct space *sp;
	} map_memo;
	struct arena_chunk *arena;

	csh cs_a64, cs_a32, cs_t32;
	bool cs_ok;
	cs_insn *cs_insn;
	struct disasm_memo *disasm_memo; /* cst_symbolizer_disasm's answers */

	struct cst_sym_line_count *scratch; /* per-line counts being built */
	size_t scratch_cap;
	struct cst_sym_piece *pscratch;     /* pieces being built */
	size_t pscratch_cap;
	/* the totals, and instructions per binary (by its name's address), all and
	 * without a function: what a view that names nothing tells the user */
	struct cst_sym_counts counts;
};

struct cst_symbolizer {
	struct cst_symbolizer_opts opts;
	struct cst_log log;
	char *debuginfo_path;      /* for Dwfl_Callbacks: "debug_dir:.debug:/usr/lib/debug" */
	Dwfl_Callbacks callbacks;

	struct dso *dsos;
	uint32_t next_func_id;
	/* --elf FILE without @ADDR (cst_bin_places.elfs): each stands for the
	 * recorded binary with its build-id or base name */
	char **given;
	int ngiven;

	struct space **spaces;     /* sorted by pid */
	uint32_t nspaces;
	size_t spaces_cap;
	struct space *kernel;      /* kallsyms / vmlinux: consulted last */
	uint32_t spaces_epoch;     /* bumped when any space changes */

	struct comm *comms;
	size_t ncomms, comms_cap;

	struct sym_own own;
	/* Readers on other threads (cst_symbolizer_share): @main is the symbolizer
	 * a reader reads (NULL in that one), whose @lock guards what loads lazily
	 * (binaries' tables) while @sharing. */
	struct cst_symbolizer *main;
	pthread_mutex_t lock;
	bool sharing;

	/* cst_sb_lost sideband not yet given to an element, per CPU (-1: any) */
	struct sym_lost_pending {
		int32_t cpu;
		struct cst_sym_lost lost;
	} *lost;
	size_t nlost, lost_cap;
	struct cst_sym_lost lost_now; /* given with the element being fed */
};

/* The symbolizer a reader reads (itself if none): what is shared lives there
 * (function IDs, libdwfl's callbacks). */
static inline struct cst_symbolizer *sym_main(struct cst_symbolizer *sym)
{
	return sym->main ? sym->main : sym;
}

/* Around what loads a binary's tables lazily, or reads them, while readers run
 * (cst_symbolizer_share, reader.c); nothing otherwise. */
static inline void sym_lock(struct cst_symbolizer *sym)
{
	struct cst_symbolizer *m = sym_main(sym);

	if (m->sharing)
		pthread_mutex_lock(&m->lock);
}

static inline void sym_unlock(struct cst_symbolizer *sym)
{
	struct cst_symbolizer *m = sym_main(sym);

	if (m->sharing)
		pthread_mutex_unlock(&m->lock);
}


/* symbolizer.c: the lost sideband that goes with @elem, taken from what is
 * pending (NULL: none). */
const struct cst_sym_lost *sym_lost_take(struct cst_symbolizer *sym, const struct cst_elem *elem);

/* A space changed: what the range front and the memos remember is void. */
static inline void sym_spaces_changed(struct cst_symbolizer *sym)
{
	if (++sym->spaces_epoch == 0) {
		sym->spaces_epoch = 1; /* 0 marks an empty entry */
		sym->own.map_memo.m = NULL; /* its epoch may be 1 from before the wrap */
		if (sym->own.front)
			memset(sym->own.front, 0, SYM_RANGE_FRONT * sizeof(*sym->own.front));
		if (sym->own.perf_memo)
			memset(sym->own.perf_memo, 0, SYM_PERF_MEMO * sizeof(*sym->own.perf_memo));
	}
}

/* arena.c: cache memory freed all at once */
void *sym_arena_alloc(struct cst_symbolizer *sym, size_t size);
void sym_arena_free_all(struct cst_symbolizer *sym);

/* dso.c */
/* The binary recorded as @path (@raw: plain bytes will do), found where decode
 * finds it; an @image of the trace is that file, never one --elf names. */
struct dso *sym_dso_get(struct cst_symbolizer *sym, const char *path, const uint8_t *build_id,
		    uint32_t build_id_size, bool raw, bool image);
/* The binary the user named (--elf FILE), opened as given (never under symfs). */
struct dso *sym_dso_get_given(struct cst_symbolizer *sym, const char *path);
void sym_dso_free(struct dso *dso);
/* Bytes of the file at @offset (NULL if not there). */
const uint8_t *sym_dso_bytes(const struct dso *dso, uint64_t offset, uint64_t len);
/* Code bytes at link address @vaddr (never the empty sections of a debug file). */
const uint8_t *sym_dso_code(const struct dso *dso, uint64_t vaddr, uint64_t len);
/* Link address of file offset @off, false if no segment holds it. */
bool sym_dso_off_to_vaddr(const struct dso *dso, uint64_t off, uint64_t *vaddr);
/* A kernel module's sections get their link addresses (libdwfl's layout, and the
 * code bytes there): false when @dso is none or libdwfl cannot read it. */
bool sym_dso_kmod_place(struct cst_symbolizer *sym, struct dso *dso);
/* A kernel module's link address @vaddr (libdwfl's layout) as the module's own
 * address: from its .text, where the kernel lays its code out (what simpleperf
 * names a module's addresses by). False outside its code or for no module. */
bool sym_dso_kmod_addr(const struct dso *dso, uint64_t vaddr, uint64_t *addr);
/* The binary a loc's dso string names (cst_symbolizer_dso_info's rule), or NULL. */
struct dso *sym_dso_named(struct cst_symbolizer *sym, const char *name);
/* Warn once that @dso lacks what is needed. */
void sym_dso_warn(struct cst_symbolizer *sym, struct dso *dso);

/* symtab.c */
void sym_dso_load_symbols(struct cst_symbolizer *sym, struct dso *dso);
const struct sym_func *sym_dso_find_func(const struct dso *dso, uint64_t vaddr);
/* The symbol named by relocation @i of a .rel(a).plt section (@rel_type SHT_RELA
 * or SHT_REL), its names in section @strndx: 1 with *name set, 0 none, -1 the
 * relocation is unreadable (stop). */
int sym_plt_reloc_name(const struct dso *dso, Elf_Data *rel, GElf_Word rel_type,
		       Elf_Data *symdata, GElf_Word strndx, size_t i, const char **name);
/* perfnames.c: the function Linux perf 6.1 names @vaddr of an ELF by, or NULL. */
const struct sym_func *sym_dso_find_perf_func(struct cst_symbolizer *sym, struct dso *dso,
					      uint64_t vaddr);
void sym_dso_free_perf_syms(struct dso *dso);
/* Whether @dso's perf table is built: then other threads read it without the lock. */
static inline bool sym_dso_perf_built(const struct dso *dso)
{
	return __atomic_load_n(&dso->perf_syms_built, __ATOMIC_ACQUIRE);
}
/* First function starting after @vaddr, or UINT64_MAX. */
uint64_t sym_dso_next_func(const struct dso *dso, uint64_t vaddr);
char sym_dso_mapping_kind(const struct dso *dso, uint64_t vaddr);
int sym_dso_load_kallsyms(struct cst_symbolizer *sym, struct dso *dso, const char *path,
		      uint64_t *lo, uint64_t *hi);

/* srcline.c */
bool sym_dso_load_dwarf(struct cst_symbolizer *sym, struct dso *dso);
const struct sym_row *sym_dso_find_row(const struct dso *dso, uint64_t vaddr);
/* Index of the first line-table row at or above @vaddr (nrows if none). */
uint32_t sym_dso_row_index(const struct dso *dso, uint64_t vaddr);
void sym_func_load_slots(struct dso *dso, struct sym_func *f);
uint32_t sym_func_slot(const struct sym_func *f, const struct sym_row *row);
/* The compile unit holding @vaddr (libdw's aranges, else the units' own ranges);
 * *@cubias turns link addresses into the unit's. NULL when none does. */
Dwarf_Die *sym_dso_cu_at(struct dso *dso, uint64_t vaddr, Dwarf_Addr *cubias);
/* The innermost inlined function at @vaddr as dwarf_getscopes tells it from the
 * unit's top (slow: see scopes.c), or NULL. */
const char *sym_dso_inlined_at_walk(struct dso *dso, uint64_t vaddr);
/* The name of DIE @die as symbols spell it (linkage name first). */
const char *sym_die_name(Dwarf_Die *die);
int sym_dso_inline_chain(struct cst_symbolizer *sym, struct dso *dso, uint64_t vaddr,
		     const struct sym_func *f, struct cst_sym_frame *frames, int max);
/* The concrete DIEs of the inline chain at @vaddr, innermost first: each
 * DW_TAG_inlined_subroutine, then the DW_TAG_subprogram holding them (at most
 * @max). Returns how many (0: no DWARF function covers the address). */
int sym_dso_inline_dies(struct dso *dso, uint64_t vaddr, Dwarf_Die *dies, int max);
/* The last line-table row at or below @vaddr, line 0 rows included; NULL
 * outside every sequence. */
const struct sym_row *sym_dso_row_at(const struct dso *dso, uint64_t vaddr);

/* scopes.c */
/* The innermost inlined function at @vaddr, or NULL: sym_dso_inlined_at_walk's
 * answer without its walk from the unit's top at each address. */
const char *sym_dso_inlined_at(struct dso *dso, uint64_t vaddr);
void sym_scopes_free(struct sym_scopes *s);

/* space.c */
struct space *sym_space_get(struct cst_symbolizer *sym, int32_t pid, bool create);
const struct mapping *sym_space_find(const struct space *sp, uint64_t addr);
int sym_space_insert(struct cst_symbolizer *sym, struct space *sp, const struct mapping *m);
/* Find the mapping of @addr for @pid: pid space, global space, kernel. */
const struct mapping *sym_find_mapping(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
				       const struct space **in);
void sym_space_free(struct space *sp);
/** A forked process starts with its parent's mappings (dso objects are shared);
 *  a child that already has mappings keeps them. Returns 0 or -cste_nomem. */
int sym_space_fork(struct cst_symbolizer *sym, int32_t parent, int32_t child);
/** An exec replaces the process's program: forget its mappings. */
void sym_space_exec(struct cst_symbolizer *sym, int32_t pid);

/* disasm.c */
int sym_disasm_open(struct cst_symbolizer *sym);
void sym_disasm_close(struct cst_symbolizer *sym);
/* Size of the instruction at @p (T32 needs its first halfword). */
static inline unsigned sym_insn_size(enum cst_isa isa, const uint8_t *p)
{
	if (isa != cst_isa_t32)
		return 4;
	if (!p)
		return 2;
	return cst_t32_insn_size(cst_le16(p));
}

/* Size of the instruction at link address @a of @dso: A64 always 4; in an Arm
 * binary the mapping symbols tell T32 from A32 (data counts as A32). */
static inline unsigned sym_dso_insn_size(const struct dso *dso, uint64_t a)
{
	if (dso->machine != EM_ARM)
		return 4;
	if (sym_dso_mapping_kind(dso, a) != sym_map_t32)
		return 4;
	return sym_insn_size(cst_isa_t32, sym_dso_code(dso, a, 2));
}

/* range.c */
void sym_fill_loc(struct cst_symbolizer *sym, const struct mapping *m, uint64_t addr,
		  struct cst_sym_loc *loc);

#endif
