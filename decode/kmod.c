/* Kernel modules: a .ko is a relocatable object (ET_REL) without program headers;
 * the kernel lays its sections out when it loads it and resolves its
 * relocations. Where its code is, and its branches once relocated, for decode's
 * code reads (perf/mem.c) and symbolize's binaries (dso.c) alike. */
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>

#include "cstrace/decode.h"

/* The kernel's core text (kernel/module/main.c, layout_sections): every section
 * with SHF_ALLOC and SHF_EXECINSTR whose name does not start with ".init" (those
 * go to the init area, freed after loading), in section header order, each
 * aligned to its sh_addralign after the one before. */
static bool core_text(Elf *e, size_t shstrndx, const GElf_Shdr *sh)
{
	const char *name = elf_strptr(e, shstrndx, sh->sh_name);

	return (sh->sh_flags & (SHF_ALLOC | SHF_EXECINSTR)) == (SHF_ALLOC | SHF_EXECINSTR) &&
	       sh->sh_size && name && strncmp(name, ".init", 5) != 0;
}

/* Lay out @e's core text, anchored at @anchor (UINT64_MAX: not known yet, lay
 * out from 0); what lies at or past the anchor goes to @out (room for @max).
 * Returns how many did, with the anchor found (.text, else the first) in
 * *@found. */
static int lay_out(Elf *e, size_t shstrndx, uint64_t anchor, struct cst_kmod_section *out,
		   int max, uint64_t *found)
{
	Elf_Scn *scn = NULL;
	uint64_t end = 0, text = UINT64_MAX, first = UINT64_MAX;
	int n = 0;

	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		uint64_t align, at;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !core_text(e, shstrndx, &sh))
			continue;
		align = sh.sh_addralign ? sh.sh_addralign : 1;
		if (align & (align - 1))
			return -cste_format; /* not a power of two: no layout to trust */
		at = (end + align - 1) & ~(align - 1);
		end = at + sh.sh_size;
		name = elf_strptr(e, shstrndx, sh.sh_name);
		if (first == UINT64_MAX)
			first = at;
		if (text == UINT64_MAX && name && !strcmp(name, ".text"))
			text = at;
		if (anchor == UINT64_MAX || at < anchor)
			continue;
		if (n < max)
			out[n] = (struct cst_kmod_section){at - anchor, sh.sh_offset, sh.sh_size,
							   sh.sh_type == SHT_NOBITS ? 0 : sh.sh_size,
							   (uint32_t)elf_ndxscn(scn)};
		n++;
	}
	*found = text != UINT64_MAX ? text : first;
	return n;
}

int cst_kmod_layout(Elf *e, struct cst_kmod_section *out, int max)
{
	GElf_Ehdr eh;
	size_t shstrndx;
	uint64_t anchor;
	int n;

	if (!e || (max && !out) || max < 0)
		return -cste_invalid;
	if (!gelf_getehdr(e, &eh) || eh.e_type != ET_REL || elf_getshdrstrndx(e, &shstrndx) < 0)
		return 0;
	/* perf (and its MMAP's address) puts .text at the mapping's start: what
	 * the kernel lays out before it is not in the mapping */
	n = lay_out(e, shstrndx, UINT64_MAX, NULL, 0, &anchor);
	if (n < 0 || anchor == UINT64_MAX)
		return n < 0 ? n : 0;
	return lay_out(e, shstrndx, anchor, out, max, &anchor);
}

static const struct cst_kmod_section *laid_out(const struct cst_kmod_section *secs, int n,
					       size_t index)
{
	for (int i = 0; i < n; i++)
		if (secs[i].index == index)
			return &secs[i];
	return NULL;
}

/* Patch the A64 branch at @p (little-endian) to go @delta bytes on: CALL26 and
 * JUMP26 (B, BL), CONDBR19 (B.cond, CBZ, CBNZ), TSTBR14 (TBZ, TBNZ). False when
 * the type is not a branch or the target is out of its reach. */
static bool patch_a64(uint32_t type, uint8_t *p, int64_t delta)
{
	uint32_t insn = cst_le32(p), bits, shift = 0;
	int64_t imm = delta >> 2;

	switch (type) {
	case R_AARCH64_CALL26:
	case R_AARCH64_JUMP26:
		bits = 26;
		break;
	case R_AARCH64_CONDBR19:
		bits = 19;
		shift = 5;
		break;
	case R_AARCH64_TSTBR14:
		bits = 14;
		shift = 5;
		break;
	default:
		return false;
	}
	if (delta & 3 || imm < -((int64_t)1 << (bits - 1)) || imm >= (int64_t)1 << (bits - 1))
		return false;
	insn &= ~(((1u << bits) - 1) << shift);
	insn |= ((uint32_t)imm & ((1u << bits) - 1)) << shift;
	cst_put_le32(p, insn);
	return true;
}

/* The relocations of one section (@rel, its header @rsh) into @target. */
static int relocate_section(Elf *e, Elf_Scn *rel, const GElf_Shdr *rsh,
			    const struct cst_kmod_section *target,
			    const struct cst_kmod_section *secs, int n, uint8_t *file, size_t size)
{
	Elf_Data *d = elf_getdata(rel, NULL), *syms;
	Elf_Scn *symscn = elf_getscn(e, rsh->sh_link);
	size_t count = rsh->sh_entsize ? rsh->sh_size / rsh->sh_entsize : 0;
	int done = 0;

	if (!d || !symscn || !(syms = elf_getdata(symscn, NULL)))
		return 0;
	for (size_t i = 0; i < count; i++) {
		const struct cst_kmod_section *to;
		GElf_Rela r;
		GElf_Sym s;
		int64_t addend;
		uint64_t at;

		if (rsh->sh_type == SHT_RELA) {
			if (!gelf_getrela(d, (int)i, &r))
				break;
			addend = r.r_addend;
		} else {
			GElf_Rel rr;

			if (!gelf_getrel(d, (int)i, &rr))
				break;
			r.r_offset = rr.r_offset;
			r.r_info = rr.r_info;
			addend = 0; /* REL: in the instruction; no A64 module has them */
		}
		/* a symbol the module defines in its laid-out code; the kernel's own
		 * (undefined here) are where only the running kernel knows */
		if (!gelf_getsym(syms, (int)GELF_R_SYM(r.r_info), &s) ||
		    s.st_shndx == SHN_UNDEF || s.st_shndx >= SHN_LORESERVE ||
		    !(to = laid_out(secs, n, s.st_shndx)))
			continue;
		if (r.r_offset + 4 > target->filesz)
			continue;
		at = target->offset + r.r_offset;
		if (at > size || size - at < 4)
			continue;
		done += patch_a64((uint32_t)GELF_R_TYPE(r.r_info), file + at,
				  (int64_t)(to->addr + s.st_value + (uint64_t)addend) -
					  (int64_t)(target->addr + r.r_offset));
	}
	return done;
}

int cst_kmod_relocate(Elf *e, const struct cst_kmod_section *secs, int n, uint8_t *file,
		      size_t size)
{
	GElf_Ehdr eh;
	Elf_Scn *scn = NULL;
	int done = 0;

	if (!e || (n && !secs) || n < 0 || (size && !file))
		return -cste_invalid;
	if (!gelf_getehdr(e, &eh) || eh.e_type != ET_REL || eh.e_machine != EM_AARCH64)
		return 0;
	while ((scn = elf_nextscn(e, scn))) {
		const struct cst_kmod_section *target;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_RELA && sh.sh_type != SHT_REL) ||
		    !(target = laid_out(secs, n, sh.sh_info)) || !target->filesz)
			continue;
		done += relocate_section(e, scn, &sh, target, secs, n, file, size);
	}
	return done;
}

bool cst_kmod_name(const char *recorded, char *file, size_t size)
{
	/* bracketed names of what is no module (user space's, or the kernel's own) */
	static const char *const special[] = {"vdso", "vdso32", "vsyscall", "vectors", "sigpage",
					      "uprobes", "heap", "stack", "vvar"};
	size_t n;

	if (!recorded || recorded[0] != '[')
		return false;
	n = strspn(recorded + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-");
	if (!n || recorded[1 + n] != ']' || recorded[2 + n])
		return false;
	for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++)
		if (strlen(special[i]) == n && !strncmp(recorded + 1, special[i], n))
			return false;
	if (file && size && snprintf(file, size, "%.*s.ko", (int)n, recorded + 1) >= (int)size)
		file[0] = '\0';
	return true;
}
