/* Disassembly with capstone: one handle per instruction set, chosen by the ISA the
 * trace reports for the range (never guessed from the address). */
#include "internal.h"

#include <stdio.h>
#include <string.h>

int sym_disasm_open(struct cst_symbolizer *sym)
{
	if (cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &sym->cs_a64) != CS_ERR_OK)
		return -cste_internal;
	if (cs_open(CS_ARCH_ARM, CS_MODE_ARM, &sym->cs_a32) != CS_ERR_OK) {
		cs_close(&sym->cs_a64);
		return -cste_internal;
	}
	if (cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &sym->cs_t32) != CS_ERR_OK) {
		cs_close(&sym->cs_a64);
		cs_close(&sym->cs_a32);
		return -cste_internal;
	}
	sym->cs_insn = cs_malloc(sym->cs_a64);
	sym->cs_ok = sym->cs_insn != NULL;
	return sym->cs_ok ? 0 : -cste_nomem;
}

void sym_disasm_close(struct cst_symbolizer *sym)
{
	if (!sym->cs_ok)
		return;
	cs_free(sym->cs_insn, 1);
	cs_close(&sym->cs_a64);
	cs_close(&sym->cs_a32);
	cs_close(&sym->cs_t32);
	sym->cs_ok = false;
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

	if (!sym || !insn)
		return -cste_invalid;
	switch (isa) {
	case cst_isa_a64: h = sym->cs_a64; break;
	case cst_isa_a32: h = sym->cs_a32; break;
	case cst_isa_t32: h = sym->cs_t32; break;
	default: return -cste_unsupported;
	}
	p = code_at(sym, pid, addr, 2);
	if (!p)
		return -cste_not_found;
	size = sym_insn_size(isa, p);
	p = code_at(sym, pid, addr, size);
	if (!p)
		return -cste_not_found;
	memset(insn, 0, sizeof(*insn));
	insn->addr = addr;
	insn->size = (uint8_t)size;
	memcpy(insn->bytes, p, size);
	code = p;
	left = size;
	if (cs_disasm_iter(h, &code, &left, &a, sym->cs_insn))
		snprintf(insn->text, sizeof(insn->text), "%.31s%s%.63s", sym->cs_insn->mnemonic,
			 sym->cs_insn->op_str[0] ? " " : "", sym->cs_insn->op_str);
	else
		snprintf(insn->text, sizeof(insn->text), "(bad)");
	return 0;
}
