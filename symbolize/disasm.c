/* Disassembly with capstone: one handle per instruction set, chosen by the ISA the
 * trace reports for the range (never guessed from the address). */
#include "internal.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int sym_disasm_open(struct cst_symbolizer *sym)
{
	if (cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &sym->own.cs_a64) != CS_ERR_OK)
		return -cste_internal;
	if (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &sym->own.cs_a32) != CS_ERR_OK) {
		cs_close(&sym->own.cs_a64);
		return -cste_internal;
	}
	if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &sym->own.cs_t32) != CS_ERR_OK) {
		cs_close(&sym->own.cs_a64);
		cs_close(&sym->own.cs_a32);
		return -cste_internal;
	}
	sym->own.cs_insn = cs_malloc(sym->own.cs_a64);
	sym->own.cs_ok = sym->own.cs_insn != NULL;
	return sym->own.cs_ok ? 0 : -cste_nomem;
}

void sym_disasm_close(struct cst_symbolizer *sym)
{
	free(sym->own.disasm_memo);
	sym->own.disasm_memo = NULL;
	if (!sym->own.cs_ok)
		return;
	cs_free(sym->own.cs_insn, 1);
	cs_close(&sym->own.cs_a64);
	cs_close(&sym->own.cs_a32);
	cs_close(&sym->own.cs_t32);
	sym->own.cs_ok = false;
}

/* The first of the two slots (ways, a 128-byte pair) of the disassembly memo
 * that may hold @addr: Fibonacci hashing, since the low bits of A64 addresses
 * are always zero. */
static inline size_t disasm_slot(uint64_t addr)
{
	return (size_t)(((addr >> 1) * 0x9e3779b97f4a7c15ull) >> 40) & (SYM_DISASM_MEMO - 2);
}

/* The code bytes mapped at @addr, @n of them, or NULL. */
static const uint8_t *code_at(struct cst_symbolizer *sym, int32_t pid, uint64_t addr, size_t n)
{
	const struct space *sp;
	const struct mapping *m = sym_find_mapping(sym, pid, addr, &sp);

	if (!m || (m->dso->kind != dso_elf && m->dso->kind != dso_raw))
		return NULL;
	return sym_dso_code(m->dso, addr + m->vaddr_adj, n);
}

int cst_symbolizer_read_code(struct cst_symbolizer *sym, int32_t pid, uint64_t addr, void *buf,
			     size_t n)
{
	const uint8_t *p;

	if (!sym || (!buf && n))
		return -cste_invalid;
	p = code_at(sym, pid, addr, n);
	if (!p)
		return -cste_not_found;
	memcpy(buf, p, n);
	return 0;
}

int cst_symbolizer_disasm(struct cst_symbolizer *sym, int32_t pid, uint64_t addr,
			  enum cst_isa isa, struct cst_sym_insn *insn)
{
	const uint8_t *p;
	unsigned size;
	csh h;
	const uint8_t *code;
	size_t left;
	uint64_t a = addr;
	uint32_t word;
	struct disasm_memo *dm;
	size_t len;

	if (!sym || !insn)
		return -cste_invalid;
	switch (isa) {
	case cst_isa_a64: h = sym->own.cs_a64; break;
	case cst_isa_a32: h = sym->own.cs_a32; break;
	case cst_isa_t32: h = sym->own.cs_t32; break;
	default: return -cste_unsupported;
	}
	/* only T32 reads its first halfword for the size: A64 and A32 find
	 * their mapping once per instruction, not twice */
	size = sym_insn_size(isa, isa == cst_isa_t32 ? code_at(sym, pid, addr, 2) : NULL);
	p = code_at(sym, pid, addr, size);
	if (!p)
		return -cste_not_found;
	/* field by field: clearing the whole struct first (rep stos) cost more
	 * than the look-up in the memo */
	insn->addr = addr;
	insn->size = (uint8_t)size;
	memset(insn->bytes, 0, sizeof(insn->bytes));
	memcpy(insn->bytes, p, size);
	word = cst_le32(insn->bytes);
	/* a loop runs the same instructions millions of times: capstone's
	 * printer (string compares and printf on every call) was most of
	 * `script --insn`, so an answer is kept by what it depends on. Not in
	 * T32: capstone carries an IT block's state from one call to the next,
	 * so the text there depends on the instructions before it too. */
	dm = NULL;
	if (isa != cst_isa_t32) {
		if (!sym->own.disasm_memo &&
		    (sym->own.disasm_memo = aligned_alloc(128, SYM_DISASM_MEMO * sizeof(*dm))))
			memset(sym->own.disasm_memo, 0, SYM_DISASM_MEMO * sizeof(*dm));
		if (sym->own.disasm_memo)
			dm = &sym->own.disasm_memo[disasm_slot(addr)];
	}
	for (int way = 0; dm && way < 2; way++) {
		const struct disasm_memo *w = &dm[way];

		if (w->size == size && w->addr == addr && w->code == word && w->isa == isa) {
			memcpy(insn->text, w->text, sizeof(w->text));
			return 0;
		}
	}
	code = p;
	left = size;
	if (cs_disasm_iter(h, &code, &left, &a, sym->own.cs_insn))
		snprintf(insn->text, sizeof(insn->text), "%.31s%s%.63s", sym->own.cs_insn->mnemonic,
			 sym->own.cs_insn->op_str[0] ? " " : "", sym->own.cs_insn->op_str);
	else
		snprintf(insn->text, sizeof(insn->text), "(bad)");
	len = strlen(insn->text);
	if (dm && len < sizeof(dm->text)) {
		dm[1] = dm[0]; /* the older answer moves to the second way */
		dm->addr = addr;
		dm->code = word;
		dm->size = (uint8_t)size;
		dm->isa = (uint8_t)isa;
		memcpy(dm->text, insn->text, len + 1);
	}
	return 0;
}
