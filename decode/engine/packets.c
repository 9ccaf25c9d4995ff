/* Packet listings (`dump`): OpenCSD's packet monitor for each source; for ETE,
 * which has no packet callback in OpenCSD 1.3.3, its packet printer's lines
 * parsed back into packets. */
#include "decoder_int.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

static void deliver_packet(struct cst_decoder *dec, ocsd_trc_index_t index_sop, uint8_t trace_id,
			 enum cst_protocol protocol, const uint8_t *raw, uint32_t raw_size,
			 const char *text)
{
	struct cst_packet pkt = {
		.offset = dec_decoder_offset(dec, index_sop), .trace_id = trace_id,
		.protocol = protocol, .raw = raw, .raw_size = raw_size, .text = text};
	int ret = dec->pkt_fn(dec->pkt_ctx, &pkt);

	if (ret)
		dec->stop = ret;
}

static void on_packet(const void *p_context, const ocsd_datapath_op_t op,
		      const ocsd_trc_index_t index_sop, const void *p_packet_in, const uint32_t size,
		      const uint8_t *p_data)
{
	const struct pkt_ctx *pc = p_context;
	struct cst_decoder *dec = pc->dec;
	char text[512];

	if (op != OCSD_OP_DATA || dec->stop)
		return;
	dec->stats.packets++;
	if (!dec->pkt_fn)
		return;
	text[0] = '\0';
	ocsd_pkt_str(dec_protocol_to_ocsd(pc->protocol), p_packet_in, text, sizeof(text));
	deliver_packet(dec, index_sop, pc->trace_id, pc->protocol, p_data, size, text);
}

/* OpenCSD 1.3.3's C API has no packet callback for ETE. Its own packet printer
 * does print ETE packets, through the library's default logger, which is one per
 * process: so while a decoder uses it, it holds printer_lock, and the printed lines
 * ("Idx:N; ID:X; [0x.. ];\tTEXT") are parsed back into packets. */
static pthread_mutex_t printer_lock = PTHREAD_MUTEX_INITIALIZER;

static void on_printed(const void *p_context, const char *msg, const int len)
{
	struct cst_decoder *dec = (struct cst_decoder *)p_context;
	uint8_t raw[64];
	uint32_t nraw = 0;
	unsigned long long idx;
	unsigned id;
	const char *p, *tab;
	char text[512];

	if (dec->stop || sscanf(msg, "Idx:%llu; ID:%x;", &idx, &id) != 2)
		return;
	tab = memchr(msg, '\t', (size_t)len);
	if (!tab)
		return;
	p = memchr(msg, '[', (size_t)(tab - msg));
	while (p && p < tab && nraw < sizeof(raw)) {
		unsigned byte;

		p = strstr(p, "0x");
		if (!p || p > tab || sscanf(p, "0x%2x", &byte) != 1)
			break;
		raw[nraw++] = (uint8_t)byte;
		p += 2;
	}
	snprintf(text, sizeof(text), "%.*s", (int)(len - (tab + 1 - msg)), tab + 1);
	text[strcspn(text, "\r\n")] = '\0';
	dec->stats.packets++;
	if (!dec->pkt_fn)
		return;
	deliver_packet(dec, (ocsd_trc_index_t)idx, (uint8_t)id,
			    dec->pkt_ids[id & 0x7f].protocol, raw, nraw, text);
}

static int attach_printer(struct cst_decoder *dec, uint8_t csid)
{
	if (!dec->printer_locked) {
		pthread_mutex_lock(&printer_lock);
		dec->printer_locked = true;
		/* the printer takes the logger's output printer when it is created; that
		 * output logger is made once per process (asking OpenCSD for it again
		 * makes a new one and leaks the old): configuring fails until it exists */
		ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 0);
		if (ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL) != OCSD_OK) {
			ocsd_def_errlog_init(OCSD_ERR_SEV_ERROR, 1);
			ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL);
		}
		ocsd_def_errlog_set_strprint_cb(dec->tree, dec, on_printed);
	}
	if (ocsd_dt_set_pkt_protocol_printer(dec->tree, csid, 1) != OCSD_OK) {
		cst_logf(dec->opts.log, cst_log_warning,
			 "trace ID 0x%x: OpenCSD cannot list this protocol's packets", csid);
		return -cste_unsupported;
	}
	return 0;
}

/* Called while dec->tree still exists: the logger's string callback object lives in
 * the tree's C API data, so the logger must stop calling it before the tree goes
 * (a NULL handle finds no tree and clears nothing: the next decoder's errors then
 * reached this freed decoder through the freed object, as the raw-dump fuzzer
 * found). */
void dec_packets_release(struct cst_decoder *dec)
{
	if (dec->printer_locked) {
		/* setting the callback turns the string output on again: off after it */
		if (dec->tree)
			ocsd_def_errlog_set_strprint_cb(dec->tree, NULL, NULL);
		ocsd_def_errlog_config_output(C_API_MSGLOGOUT_FLG_NONE, NULL);
		pthread_mutex_unlock(&printer_lock);
		dec->printer_locked = false;
	}
}

int dec_packets_attach(struct cst_decoder *dec, uint8_t csid, enum cst_protocol protocol)
{
	dec->pkt_ids[csid] = (struct pkt_ctx){dec, csid, protocol};
	if (ocsd_dt_attach_packet_callback(dec->tree, csid, OCSD_C_API_CB_PKT_MON,
					   (void *)on_packet, &dec->pkt_ids[csid]) == OCSD_OK)
		return 0;
	return attach_printer(dec, csid);
}
