/* Declarations shared by the files of the source library. */
#ifndef CSTRACE_SOURCE_INT_H
#define CSTRACE_SOURCE_INT_H

#include <stddef.h>

#include "cstrace/source.h"

struct cst_addr_filter {
	struct cst_addr_filter_entry *v;
	size_t n, cap;
};

#endif
