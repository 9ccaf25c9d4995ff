/* Which decoder makes a source's elements: the user's choice turned into a
 * session's engines once, the OpenCSD version cstrace's decoders are pinned to,
 * and the one table of cstrace's own decoders. */
#include "decoder_int.h"

#include <opencsd/ocsd_if_version.h>

/* Built against another OpenCSD than the one cstrace's decoders copy: the check
 * at start (dec_engine_choose) keeps them out then; this says it at build time. */
#if OCSD_VER_NUM != DEC_OCSD_PINNED
#warning "OpenCSD is not 1.3.3: cstrace's own decoders stay off (docs/decode.md)"
#endif

/* cstrace's own decoders, one operations table each: a new one is a row here. */
static const struct dec_follower *const followers[] = {&dec_etm4_follower,
						       &dec_etm3_follower};

uint32_t dec_ocsd_version(void)
{
	return ocsd_get_version();
}

int dec_engine_choose(enum cst_decoder_choice choice, uint32_t ocsd_version,
		      const struct cst_log *log, struct dec_engines *out)
{
	bool pinned = ocsd_version == DEC_OCSD_PINNED;

	*out = (struct dec_engines){0};
	switch (choice) {
	case cst_decoder_opencsd:
		return 0;
	case cst_decoder_cstrace:
	case cst_decoder_recover:
		if (!pinned) {
			cst_logf(log, cst_log_error,
				 "--decoder=%s: cstrace's decoders give the elements of OpenCSD "
				 "%u.%u.%u, and this is OpenCSD %u.%u.%u; use --decoder=opencsd",
				 choice == cst_decoder_cstrace ? "cstrace" : "recover",
				 DEC_OCSD_PINNED >> 16, (DEC_OCSD_PINNED >> 8) & 0xff,
				 DEC_OCSD_PINNED & 0xff, ocsd_version >> 16,
				 (ocsd_version >> 8) & 0xff, ocsd_version & 0xff);
			return -cste_unsupported;
		}
		out->serial = out->workers =
			choice == cst_decoder_cstrace
				? (struct dec_engine){.own = true, .strict = true}
				: (struct dec_engine){.own = true, .recover = true};
		return 0;
	case cst_decoder_auto:
		if (!pinned) {
			cst_logf(log, cst_log_warning,
				 "OpenCSD %u.%u.%u is not the %u.%u.%u whose elements cstrace's "
				 "decoders give: decoding with OpenCSD's decoders only (slower)",
				 ocsd_version >> 16, (ocsd_version >> 8) & 0xff, ocsd_version & 0xff,
				 DEC_OCSD_PINNED >> 16, (DEC_OCSD_PINNED >> 8) & 0xff,
				 DEC_OCSD_PINNED & 0xff);
			return 0;
		}
		/* every thread: where cstrace's declines, OpenCSD's decodes that
		 * trace again, on the caller's thread (session.c, perf/) */
		out->serial = out->workers = (struct dec_engine){.own = true};
		return 0;
	}
	return -cste_invalid;
}

const struct dec_follower *dec_follower_for(const struct dec_engine *engine,
					    const struct follow_cfg *c)
{
	if (!engine || !engine->own)
		return NULL;
	for (size_t i = 0; i < sizeof(followers) / sizeof(followers[0]); i++)
		if (followers[i]->covers(c))
			return followers[i];
	return NULL;
}
