/* Error words for cstrace's error codes: one table, one lookup. */
#include "cstrace/common.h"

static const char *const cst_error_words[cste_max] = {
	[cste_ok] = "success",
	[cste_internal] = "internal error",
	[cste_invalid] = "invalid argument",
	[cste_nomem] = "out of memory",
	[cste_io] = "input/output error",
	[cste_not_found] = "not found",
	[cste_format] = "malformed input",
	[cste_unsupported] = "not supported",
	[cste_decoder] = "trace decoder error",
	[cste_eos] = "end of stream",
	[cste_truncated] = "input truncated",
	[cste_no_trace] = "no trace decoded",
	[cste_busy] = "resource busy",
	[cste_permission] = "permission denied",
	[cste_interrupted] = "interrupted",
	[cste_crashed] = "the decoding thread crashed",
};

const char *cst_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= cste_max || !cst_error_words[err])
		return "unknown error";
	return cst_error_words[err];
}
