/* Build-id comparison, one rule for decode and symbolize. */
#include "cstrace/common.h"

#include <string.h>

int cst_build_id_equal(const uint8_t *a, size_t a_len, const uint8_t *b, size_t b_len)
{
	const uint8_t *longer = a_len > b_len ? a : b;
	size_t n = a_len < b_len ? a_len : b_len, m = a_len > b_len ? a_len : b_len;

	if (!n || memcmp(a, b, n))
		return 0;
	/* the longer one's bytes past the shorter's: padding, so zeros */
	for (size_t i = n; i < m; i++)
		if (longer[i])
			return 0;
	return 1;
}
