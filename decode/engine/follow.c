/* What cstrace's own decoders share (follow.h): their base, and the one packet
 * sink that OpenCSD's packet processors call for every one of them. */
#include "follow.h"

#include <string.h>

void dec_follow_init(struct follow_base *b, const struct dec_follower *ops, uint8_t trace_id,
		     const struct follow_io *io)
{
	memset(b, 0, sizeof(*b));
	b->ops = ops;
	b->io = *io;
	b->trace_id = trace_id;
	b->elem_isa = cst_isa_unknown;
	b->gen = 1;
}

ocsd_datapath_resp_t dec_follow_packet(const void *ctx, const ocsd_datapath_op_t op,
				       const ocsd_trc_index_t index, const void *packet)
{
	struct follow_base *b = (struct follow_base *)ctx;
	int ret = 0;

	if (b->declined)
		return OCSD_RESP_FATAL_SYS_ERR;
	switch (op) {
	case OCSD_OP_DATA:
		b->index = index;
		ret = b->ops->data(b, packet);
		if (b->resyncing) {
			b->resyncing = false;
			ret = b->ops->resync(b);
		}
		break;
	case OCSD_OP_EOT:
		ret = b->ops->eot(b);
		break;
	case OCSD_OP_RESET:
		ret = b->ops->reset(b);
		break;
	case OCSD_OP_FLUSH:
		break;
	}
	return ret ? OCSD_RESP_FATAL_SYS_ERR : OCSD_RESP_CONT;
}

int dec_follow_decline(struct follow_base *b, const char *why)
{
	if (b->recover) {
		if (!b->resyncing)
			b->io.resync(b->io.ctx, b->index, b->trace_id, why);
		b->resyncing = true;
		return -cste_unsupported;
	}
	if (!b->declined)
		b->io.decline(b->io.ctx, b->index, b->trace_id, why);
	b->declined = true;
	return -cste_unsupported;
}

int dec_follow_put(struct follow_base *b, uint32_t index, struct cst_elem *e)
{
	if (e->type != cst_elem_pe_context && e->type != cst_elem_instr_range)
		e->isa = b->elem_isa;
	b->elem_isa = e->isa;
	return b->io.elem(b->io.ctx, index, b->trace_id, e);
}

int dec_follow_put_type(struct follow_base *b, uint32_t index, enum cst_elem_type type)
{
	struct cst_elem e = {.type = type};

	return dec_follow_put(b, index, &e);
}

int dec_follow_put_no_sync(struct follow_base *b, enum cst_gap_reason gap)
{
	struct cst_elem e = {.type = cst_elem_no_sync, .gap = gap};

	return dec_follow_put(b, b->index, &e);
}

const uint8_t *dec_follow_code(struct follow_base *b, uint64_t pc, uint32_t space)
{
	if (pc < b->code_addr || pc - b->code_addr + 4 > b->code_len) {
		b->code_addr = pc;
		b->code_len = b->io.read(b->io.ctx, b->trace_id, pc, space, FOLLOW_READ_AHEAD,
					 b->code);
		if (b->code_len > FOLLOW_READ_AHEAD)
			b->code_len = 0;
		if (b->code_len < 4)
			return NULL;
	}
	return b->code + (pc - b->code_addr);
}

void dec_follow_forget(struct follow_base *b, void *table, size_t size)
{
	b->code_len = 0;
	if (++b->gen)
		return;
	b->gen = 1;
	memset(table, 0, size);
}

bool dec_follow_same_code(const struct cst_pe_context *a, const struct cst_pe_context *b)
{
	return a->el == b->el && a->el_valid == b->el_valid && a->security == b->security &&
	       a->bits64 == b->bits64 && a->ctxid_valid == b->ctxid_valid &&
	       a->context_id == b->context_id && a->vmid_valid == b->vmid_valid &&
	       a->vmid == b->vmid;
}
