/* ETMv3.5 instruction-trace encoder (Cortex-A7): A-sync, I-sync with context ID,
 * P-header atoms (one per instruction), branch address packets for indirect branches. */
#include <string.h>

#include "synth_int.h"

#define ETM3_EXC_SVC 0xa         /* exception number in a branch packet */
#define ETM3_SVC_VECTOR 0xffff0008u /* Linux uses the high vectors */

enum { isync_periodic = 0, isync_trace_on = 1 };

uint32_t synth_etm3_etmcr(bool timestamps)
{
	/* [15:14] = 3: four-byte context IDs in I-sync; [28]: timestamps. No cycle
	 * accuracy, no data trace, no branch broadcast. */
	return 0xc000u | (timestamps ? 0x10000000u : 0);
}

/* Format 1 P-headers: up to 15 E atoms then at most one N (1 N EEEE 0 0). */
static void e3_flush_atoms(struct synth_enc *e)
{
	uint8_t out[80];
	size_t n = 0;
	int es = 0;
	for (int i = 0; i < e->natoms; i++) {
		if (e->atoms[i]) {
			if (++es == 15) {
				out[n++] = (uint8_t)(0x80 | (15 << 2));
				es = 0;
			}
		} else {
			out[n++] = (uint8_t)(0x80 | 0x40 | (es << 2));
			es = 0;
		}
	}
	if (es)
		out[n++] = (uint8_t)(0x80 | (es << 2));
	e->natoms = 0;
	if (n)
		synth_enc_emit(e, out, n);
}

static void e3_atom(struct synth_enc *e, bool executed)
{
	e->atoms[e->natoms++] = executed ? 1 : 0;
	if (e->natoms == 60)
		e3_flush_atoms(e);
}

/* Full five-byte branch address (standard encoding): the last byte names the
 * instruction set, and with bit 6 an exception byte follows. */
static void e3_branch(struct synth_enc *e, uint32_t addr, bool thumb, int exc)
{
	uint8_t p[8];
	int shift = thumb ? 1 : 2;
	uint32_t v = addr >> shift;
	uint32_t l = (uint32_t)e->last_addr >> shift;
	/* Only the low bits that changed go out (1-4 bytes); an instruction set change
	 * or an exception needs the fifth byte. */
	int nb = 5;
	if (e->last_valid && e->last_thumb == thumb && exc < 0) {
		static const int bits[4] = {6, 13, 20, 27};
		for (int i = 0; i < 4; i++)
			if ((v >> bits[i]) == (l >> bits[i])) {
				nb = i + 1;
				break;
			}
	}
	p[0] = (uint8_t)(((v & 0x3f) << 1) | 1);
	p[1] = (uint8_t)((v >> 6) & 0x7f);
	p[2] = (uint8_t)((v >> 13) & 0x7f);
	p[3] = (uint8_t)((v >> 20) & 0x7f);
	if (thumb)
		p[4] = (uint8_t)(0x10 | ((v >> 27) & 0xf));
	else
		p[4] = (uint8_t)(0x08 | ((v >> 27) & 0x7));
	for (int i = 0; i < nb - 1 && i < 4; i++)
		p[i] |= 0x80;
	size_t n = (size_t)nb;
	if (exc >= 0) {
		p[4] |= 0x40;
		p[n++] = (uint8_t)(0x01 /* NS */ | ((exc & 0xf) << 1));
	}
	e->last_addr = addr;
	e->last_thumb = thumb;
	e->last_valid = true;
	synth_enc_emit(e, p, n);
}

static void e3_timestamp(struct synth_enc *e, uint64_t ts)
{
	uint8_t p[12];
	size_t n = 0;
	p[n++] = 0x42;
	n += synth_ts_value(p + n, ts);
	synth_enc_emit(e, p, n);
}

static void e3_isync(struct synth_enc *e, uint32_t addr, bool thumb, int reason, uint64_t icount)
{
	uint8_t p[12];
	size_t n = 0;
	p[n++] = 0x08;
	cst_put_le32(p + n, e->cfg.context_id);
	n += 4;
	p[n++] = (uint8_t)((reason << 5) | 0x08 /* NS */);
	cst_put_le32(p + n, addr | (thumb ? 1u : 0));
	n += 4;
	e->last_addr = addr;
	e->last_thumb = thumb;
	e->last_valid = true;
	synth_enc_emit(e, p, n);
	if (e->cfg.timestamps)
		e3_timestamp(e, icount);
}

static void e3_sync(struct synth_enc *e, uint32_t addr, bool thumb, int reason, uint64_t icount)
{
	static const uint8_t async[6] = {0, 0, 0, 0, 0, 0x80};
	e3_flush_atoms(e);
	synth_enc_emit(e, async, sizeof(async));
	e->since_sync = 0;
	e3_isync(e, addr, thumb, reason, icount);
	e->synced = true;
}

void synth_etm3_init(struct synth_enc *e, const struct synth_enc_cfg *cfg)
{
	memset(e, 0, sizeof(*e));
	e->cfg = *cfg;
	if (!e->cfg.sync_period)
		e->cfg.sync_period = 4096;
}

/* Trace leaves user space (SVC or an asynchronous signal): the exception goes out
 * as a branch to its vector, and trace resumes with an I-sync where user code does. */
static void e3_exception(struct synth_enc *e, int exc, const struct synth_step *s)
{
	e3_flush_atoms(e);
	e3_branch(e, ETM3_SVC_VECTOR + (exc == ETM3_EXC_SVC ? 0 : 0x10), false, exc);
	e->exceptions++;
	if (s->last || s->stop)
		return;
	if (!s->next_traced) {
		e->off = true; /* it resumes outside the filter: an I-sync when it comes back */
		return;
	}
	if (e->since_sync >= e->cfg.sync_period)
		e3_sync(e, (uint32_t)s->next_pc, s->next_thumb, isync_trace_on, s->icount);
	else
		e3_isync(e, (uint32_t)s->next_pc, s->next_thumb, isync_trace_on, s->icount);
}

int synth_etm3_step(struct synth_enc *e, const struct synth_step *s)
{
	/* TraceEnable off: no atom; on again: an I-sync (reason trace on) where it
	 * resumes. ETMv3 has an atom per instruction, so the cut is exact. */
	if (!s->traced) {
		e->off = e->synced;
		return e->err;
	}
	if (!e->synced) {
		e3_sync(e, (uint32_t)s->pc, s->thumb, isync_trace_on, s->icount);
	} else if (e->off) {
		e3_flush_atoms(e);
		if (e->since_sync >= e->cfg.sync_period)
			e3_sync(e, (uint32_t)s->pc, s->thumb, isync_trace_on, s->icount);
		else
			e3_isync(e, (uint32_t)s->pc, s->thumb, isync_trace_on, s->icount);
	}
	e->off = false;
	const struct synth_insn_info *in = &s->info;
	uint32_t seq = (uint32_t)s->pc + in->size;
	bool same_state = s->next_thumb == s->thumb;
	switch (in->cls) {
	case synth_i_svc:
		e3_atom(e, true);
		e3_exception(e, ETM3_EXC_SVC, s);
		return e->err;
	case synth_i_indirect:
		if (s->last) {
			e3_atom(e, true);
			break;
		}
		if (s->next_pc == seq && same_state) {
			/* Not taken (condition failed): no address needed. */
			e3_atom(e, false);
			e->branches++;
			break;
		}
		e3_atom(e, true);
		e->branches++;
		if (!s->next_traced)
			break; /* the I-sync at re-entry gives the address */
		e3_flush_atoms(e);
		e3_branch(e, (uint32_t)s->next_pc, s->next_thumb, -1);
		break;
	case synth_i_direct:
		if (s->last) {
			e3_atom(e, true);
			break;
		}
		e->branches++;
		if (s->next_pc == in->target && s->next_thumb == in->target_thumb) {
			e3_atom(e, true);
			/* A state change (BLX immediate) is traced with an address packet:
			 * the packet stream carries the instruction set, not the atoms. */
			if (s->next_thumb != s->thumb && s->next_traced) {
				e3_flush_atoms(e);
				e3_branch(e, (uint32_t)s->next_pc, s->next_thumb, -1);
			}
		} else if (s->next_pc == seq && same_state) {
			e3_atom(e, false);
		} else {
			/* Neither path: a signal was delivered; IRQ-like exception. */
			e3_atom(e, false);
			e3_exception(e, 0xe, s);
			return e->err;
		}
		break;
	default:
		e3_atom(e, true);
		if (!s->last && (s->next_pc != seq || !same_state)) {
			e3_exception(e, 0xe, s);
			return e->err;
		}
		break;
	}
	if (!s->last && s->next_traced && e->since_sync >= e->cfg.sync_period)
		e3_sync(e, (uint32_t)s->next_pc, s->next_thumb, isync_periodic, s->icount);
	return e->err;
}

int synth_etm3_stop(struct synth_enc *e)
{
	e3_flush_atoms(e);
	e->synced = false;
	e->last_valid = false;
	return e->err;
}
