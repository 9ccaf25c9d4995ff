/* ETMv4 instruction-trace encoder: turns the executed A64 instruction stream into the
 * packets a Cortex-A53 ETM emits (A-sync, trace info, context, atoms, addresses, exceptions). */
#include <string.h>

#include "synth_int.h"

/* ETMv4 exception types (TRCEXCEPTION numbering for ARMv8-A). */
#define ETM4_EXC_CALL 0x2 /* SVC, HVC, SMC */
#define ETM4_EXC_IRQ 0xe

/* Atoms go out as a Cortex-A53 packs them: format 6 for runs of E (3 to 23 E then one
 * E or N, as loops give), else format 3 (three atoms), then format 2 or 1 for the
 * rest; bit 0 is the oldest atom, 1 = E. */
static void e4_flush_atoms(struct synth_enc *e)
{
	int i = 0;
	uint8_t out[64];
	size_t n = 0;
	while (i < e->natoms) {
		int run = 0;
		while (i + run < e->natoms && e->atoms[i + run])
			run++;
		if (run >= 3 && run <= 23 && i + run < e->natoms) {
			out[n++] = (uint8_t)(0xe0 | (run - 3)); /* run E then N */
			i += run + 1;
			continue;
		}
		if (run >= 4) {
			int k = run > 24 ? 24 : run;
			out[n++] = (uint8_t)(0xc0 | (k - 4)); /* k - 1 E then E */
			i += k;
			continue;
		}
		int left = e->natoms - i;
		if (left >= 3) {
			out[n++] = (uint8_t)(0xf8 | e->atoms[i] | (e->atoms[i + 1] << 1) |
					     (e->atoms[i + 2] << 2));
			i += 3;
		} else if (left == 2) {
			out[n++] = (uint8_t)(0xd8 | e->atoms[i] | (e->atoms[i + 1] << 1));
			i += 2;
		} else {
			out[n++] = (uint8_t)(0xf6 | e->atoms[i]);
			i += 1;
		}
	}
	e->natoms = 0;
	if (n)
		synth_enc_emit(e, out, n);
}

static void e4_atom(struct synth_enc *e, bool taken)
{
	e->atoms[e->natoms++] = taken ? 1 : 0;
	e->branches++;
	if (e->natoms == 63)
		e4_flush_atoms(e);
}

/* 64-bit IS0 address bytes: A[8:2], A[15:9], then A[63:16] a byte at a time. */
static size_t e4_addr64(uint8_t *p, uint64_t a)
{
	p[0] = (uint8_t)((a >> 2) & 0x7f);
	p[1] = (uint8_t)((a >> 9) & 0x7f);
	for (int i = 2; i < 8; i++)
		p[i] = (uint8_t)(a >> (8 * i));
	return 8;
}

/* Addresses are compressed against the last one sent, as the trace unit does:
 * short (bits 8:2 or 16:2), 32-bit long, or the full 64-bit form. */
static void e4_address(struct synth_enc *e, uint64_t a)
{
	uint8_t p[10];
	size_t n = 0;
	uint64_t l = e->last_addr;
	if (e->last_valid && (a >> 9) == (l >> 9)) {
		p[n++] = 0x95;
		p[n++] = (uint8_t)((a >> 2) & 0x7f);
	} else if (e->last_valid && (a >> 17) == (l >> 17)) {
		p[n++] = 0x95;
		p[n++] = (uint8_t)(0x80 | ((a >> 2) & 0x7f));
		p[n++] = (uint8_t)(a >> 9);
	} else if (e->last_valid && (a >> 32) == (l >> 32)) {
		p[n++] = 0x9a;
		p[n++] = (uint8_t)((a >> 2) & 0x7f);
		p[n++] = (uint8_t)((a >> 9) & 0x7f);
		p[n++] = (uint8_t)(a >> 16);
		p[n++] = (uint8_t)(a >> 24);
	} else {
		p[n++] = 0x9d; /* long address, 64-bit, IS0 */
		n += e4_addr64(p + n, a);
	}
	e->last_addr = a;
	e->last_valid = true;
	synth_enc_emit(e, p, n);
}

/* Address with context: where trace (re)starts and which process runs there. */
static void e4_address_ctxt(struct synth_enc *e, uint64_t a)
{
	uint8_t p[16];
	size_t n = 0;
	p[n++] = 0x85; /* 64-bit IS0 address with context */
	n += e4_addr64(p + n, a);
	/* C (context ID follows), NS, SF (AArch64), EL0 */
	p[n++] = 0x80 | 0x20 | 0x10;
	cst_put_le32(p + n, e->cfg.context_id);
	n += 4;
	e->last_addr = a;
	e->last_valid = true;
	synth_enc_emit(e, p, n);
}

static void e4_timestamp(struct synth_enc *e, uint64_t ts)
{
	uint8_t p[12];
	size_t n = 0;
	p[n++] = 0x02;
	n += synth_ts_value(p + n, ts);
	synth_enc_emit(e, p, n);
}

/* A-sync and Trace Info: where a decoder can start. */
static void e4_async_info(struct synth_enc *e)
{
	static const uint8_t async[12] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80};
	static const uint8_t tinfo[3] = {0x01, 0x01, 0x00}; /* INFO section: no CC, no cond */
	e4_flush_atoms(e);
	synth_enc_emit(e, async, sizeof(async));
	e->since_sync = 0;
	synth_enc_emit(e, tinfo, sizeof(tinfo));
}

static void e4_sync(struct synth_enc *e, uint64_t pc, uint64_t icount)
{
	e4_async_info(e);
	if (e->cfg.timestamps)
		e4_timestamp(e, icount);
	e4_address_ctxt(e, pc);
	e->synced = true;
	e->need_sync = false;
}

/* ViewInst active again after the filter kept it off: Trace On, then the address
 * and context, as at a return from the kernel; a sync first when one is due. */
static void e4_trace_on(struct synth_enc *e, uint64_t pc, uint64_t icount)
{
	uint8_t on = 0x04;
	e4_flush_atoms(e);
	if (e->since_sync >= e->cfg.sync_period)
		e4_async_info(e);
	synth_enc_emit(e, &on, 1);
	if (e->cfg.timestamps)
		e4_timestamp(e, icount);
	e4_address_ctxt(e, pc);
}

/* Trace leaves for the kernel: an exception packet whose address is the preferred
 * return address; trace comes back (Trace On) wherever user code resumes. */
static void e4_exception(struct synth_enc *e, unsigned type, uint64_t ret, const struct synth_step *s)
{
	uint8_t p[2] = {0x06, (uint8_t)(0x01 | (type << 1))}; /* E1:E0 = 01: address follows */
	e4_flush_atoms(e);
	synth_enc_emit(e, p, 2);
	e4_address(e, ret);
	e->exceptions++;
	if (s->last || s->stop)
		return;
	if (!s->next_traced) {
		e->off = true; /* it resumes outside ViewInst: Trace On when it comes back */
		return;
	}
	if (e->since_sync >= e->cfg.sync_period) {
		e4_sync(e, s->next_pc, s->icount);
		return;
	}
	uint8_t on = 0x04;
	synth_enc_emit(e, &on, 1);
	if (e->cfg.timestamps)
		e4_timestamp(e, s->icount);
	e4_address_ctxt(e, s->next_pc);
}

void synth_etm4_init(struct synth_enc *e, const struct synth_enc_cfg *cfg)
{
	memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
	if (!e->cfg.sync_period)
		e->cfg.sync_period = 4096;
}

int synth_etm4_step(struct synth_enc *e, const struct synth_step *s)
{
	/* Outside ViewInst nothing is traced. ETMv4 traces P0 elements: instructions
	 * after the last waypoint before ViewInst goes inactive are in no atom, and
	 * the decoder never sees them. */
	if (!s->traced) {
		e->off = e->synced;
		return e->err;
	}
	if (!e->synced)
		e4_sync(e, s->pc, s->icount);
	else if (e->off)
		e4_trace_on(e, s->pc, s->icount);
	e->off = false;
	const struct synth_insn_info *in = &s->info;
	uint64_t seq = s->pc + in->size;
	bool waypoint = false;
	switch (in->cls) {
	case synth_i_svc:
		e4_exception(e, ETM4_EXC_CALL, seq, s);
		return e->err;
	case synth_i_indirect:
		e4_atom(e, true);
		/* the target's address only when it is traced: else Trace On gives it */
		if (!s->last && s->next_traced) {
			e4_flush_atoms(e);
			e4_address(e, s->next_pc);
		}
		waypoint = true;
		break;
	case synth_i_direct:
		if (s->last)
			break;
		if (s->next_pc == in->target) {
			e4_atom(e, true);
		} else {
			e4_atom(e, false);
			/* Neither path: an asynchronous signal arrived after the branch. */
			if (s->next_pc != seq) {
				e4_exception(e, ETM4_EXC_IRQ, seq, s);
				return e->err;
			}
		}
		waypoint = true;
		break;
	case synth_i_isb:
		e4_atom(e, true);
		waypoint = true;
		/* the next instruction must still be the sequential one */
		__attribute__((fallthrough));
	case synth_i_other:
		/* A signal came after it; or, as the run's last, ended the thread
		 * (a fault the program did not handle, a kill): its instructions
		 * since the last waypoint are then in the exception's address, as
		 * a crash's last steps are in a real trace (docs/synth.md). */
		if (s->last ? in->cls == synth_i_other : s->next_pc != seq) {
			e4_exception(e, ETM4_EXC_IRQ, seq, s);
			return e->err;
		}
		break;
	}
	if (waypoint && !s->last && s->next_traced && e->since_sync >= e->cfg.sync_period)
		e4_sync(e, s->next_pc, s->icount);
	return e->err;
}

int synth_etm4_stop(struct synth_enc *e)
{
	e4_flush_atoms(e);
	e->synced = false;
	e->last_valid = false;
	return e->err;
}

uint32_t synth_etm4_configr(bool timestamps)
{
	/* bit 0 as the Juno capture has it, CID (bit 6): context ID in context
	 * packets, TS (bit 11): timestamps. */
	return 0x1u | 0x40u | (timestamps ? 0x800u : 0);
}

size_t synth_ts_value(uint8_t *p, uint64_t ts)
{
	size_t n = 0;

	for (int i = 0; i < 9; i++) {
		uint8_t b;

		if (i == 8) {
			p[n++] = (uint8_t)ts;
			break;
		}
		b = ts & 0x7f;
		ts >>= 7;
		if (ts)
			b |= 0x80;
		p[n++] = b;
		if (!ts)
			break;
	}
	return n;
}

void synth_enc_emit(struct synth_enc *e, const uint8_t *p, size_t n)
{
	int rc;

	if (e->err)
		return;
	rc = e->cfg.out(e->cfg.out_ctx, p, n);
	if (rc)
		e->err = rc;
	e->bytes += n;
	e->since_sync += n;
}
