/* Build-id comparison, one rule for decode and symbolize. */
#include "cstrace/common.h"

#include <string.h>

int cst_build_id_equal(const uint8_t *file_id, size_t file_len, const uint8_t *rec_id,
		       size_t rec_len)
{
	if (!file_len || file_len > rec_len || memcmp(file_id, rec_id, file_len))
		return 0;
	/* the recorded id's bytes past the file's: padding, so zeros */
	for (size_t i = file_len; i < rec_len; i++)
		if (rec_id[i])
			return 0;
	return 1;
}
