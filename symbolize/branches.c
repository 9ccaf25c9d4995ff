/* Branch outcomes for line coverage: every conditional branch of a function with
 * debug information, how often it ran and how often it was taken. Which
 * instructions are conditional branches comes from capstone (condition codes, and
 * CBZ/CBNZ/TBZ/TBNZ); how often each ran comes from the profile's ranges, how often
 * it was taken from the profile's taken branches, so "not taken" is the rest. */
#include "internal.h"
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

struct taken_acc {
	struct sym_addr_count *v;
	size_t n, cap;
	int err;
};

static void add_taken(void *ctx, uint64_t from, uint64_t to, uint64_t n)
{
	struct taken_acc *a = ctx;

	(void)to;
	if (CST_GROW(a->v, a->cap, a->n + 1) < 0) {
		a->err = -cste_nomem;
		return;
	}
	a->v[a->n++] = (struct sym_addr_count){from, n};
}

static bool conditional(const cs_insn *in, bool a64)
{
	if (a64) {
		const cs_arm64 *d = &in->detail->arm64;

		if (in->id == ARM64_INS_CBZ || in->id == ARM64_INS_CBNZ || in->id == ARM64_INS_TBZ ||
		    in->id == ARM64_INS_TBNZ)
			return true;
		return in->id == ARM64_INS_B && d->cc != ARM64_CC_INVALID && d->cc != ARM64_CC_AL;
	}
	if (in->id == ARM_INS_CBZ || in->id == ARM_INS_CBNZ)
		return true;
	return (in->id == ARM_INS_B || in->id == ARM_INS_BX) && in->detail->arm.cc != ARM_CC_AL &&
	       in->detail->arm.cc != ARM_CC_INVALID;
}

int sym_cov_branches(struct cst_afdo *p, struct dso *dso, struct sym_func *f,
		     uint64_t (*executed)(void *ctx, uint64_t addr), void *ctx, struct sym_cov *c)
{
	bool a64 = dso->machine == EM_AARCH64;
	struct taken_acc acc = {0};
	csh a = 0, t = 0;
	cs_insn *in = NULL;
	size_t m = 0;
	int err = 0;

	if ((a64 && cs_open(CS_ARCH_ARM64, CS_MODE_LITTLE_ENDIAN, &a) != CS_ERR_OK) ||
	    (!a64 && cs_open(CS_ARCH_ARM, CS_MODE_ARM, &a) != CS_ERR_OK) ||
	    (!a64 && cs_open(CS_ARCH_ARM, CS_MODE_THUMB, &t) != CS_ERR_OK))
		err = -cste_internal;
	if (!err) {
		cs_option(a, CS_OPT_DETAIL, CS_OPT_ON);
		if (t)
			cs_option(t, CS_OPT_DETAIL, CS_OPT_ON);
		in = cs_malloc(a);
		sym_afdo_branches(p, dso->short_name, add_taken, &acc);
		err = in ? acc.err : -cste_nomem;
	}
	if (!err)
		m = sym_counts_reduce(acc.v, acc.n); /* one total per branch instruction */
	for (uint64_t addr = f->pub.addr; !err && addr < f->end;) {
		bool thumb = !a64 && sym_dso_mapping_kind(dso, addr) == sym_map_t32;
		const uint8_t *code = sym_dso_code(dso, addr, thumb ? 2 : 4);
		unsigned size = thumb ? cst_t32_insn_size(code ? cst_le16(code) : 0) : 4;
		const uint8_t *p8;
		size_t len = size;
		uint64_t at = addr;
		const struct sym_row *row;

		if (!code || !(code = sym_dso_code(dso, addr, size)))
			break;
		p8 = code;
		addr += size;
		if (!cs_disasm_iter(thumb ? t : a, &p8, &len, &at, in) || !conditional(in, a64))
			continue;
		row = sym_dso_find_row(dso, at - size);
		if (!row || !row->line)
			continue;
		if (CST_GROW(c->branches, c->bcap, c->nbranches + 1) < 0) {
			err = -cste_nomem;
			break;
		}
		{
			uint64_t ran = executed(ctx, at - size), tk = sym_counts_at(acc.v, m, at - size);

			c->branches[c->nbranches++] = (struct sym_cov_branch){
				row->file, (int)row->line, at - size, ran, tk, ran > tk ? ran - tk : 0};
		}
	}
	if (in)
		cs_free(in, 1);
	if (a)
		cs_close(&a);
	if (t)
		cs_close(&t);
	free(acc.v);
	return err;
}
