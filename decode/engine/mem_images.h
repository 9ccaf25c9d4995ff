/* Internal to decode/: the memory images of a trace, mapped once per decoder and
 * read by address for OpenCSD's code walk (no shared OpenCSD file accessors). */
#ifndef CSTRACE_DECODE_MEM_IMAGES_H
#define CSTRACE_DECODE_MEM_IMAGES_H

#include "decode_int.h"

struct mem_images;

/** Map every image of @trace (files opened once each). Images that cannot be read
 *  are reported through @log and left out. Returns NULL only when out of memory. */
struct mem_images *dec_mem_images_open(const struct cst_trace *trace, const struct cst_log *log);
void dec_mem_images_close(struct mem_images *m);

/** Copy up to @len bytes at @address in memory space @space into @buf.
 *  Returns the bytes copied: 0 when no image holds @address. */
uint32_t dec_mem_images_read(struct mem_images *m, uint64_t address, uint32_t space, uint32_t len,
			 uint8_t *buf);

/** Number of mapped regions. */
int dec_mem_images_count(const struct mem_images *m);

#endif
