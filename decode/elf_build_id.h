/* The GNU build-id note of an ELF file, read through libelf (decode's one reader of
 * it: perf.data code lookups and --symdir both check files by it). */
#ifndef CSTRACE_DECODE_ELF_BUILD_ID_H
#define CSTRACE_DECODE_ELF_BUILD_ID_H

#include <gelf.h>
#include <stdint.h>

/** The build-id of @e (at most 20 bytes into @out), or 0 bytes when it has none:
 *  from a PT_NOTE segment, or where the file has none (a kernel module, ET_REL),
 *  from a note section. */
uint8_t dec_elf_build_id(Elf *e, uint8_t out[20]);

#endif
