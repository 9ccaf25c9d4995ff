/* Minimal ELF reader for synth: program headers (which file bytes back which executable
 * addresses), the interpreter path and the GNU build ID, for 32- and 64-bit Arm files. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "synth_int.h"

#define PT_LOAD 1
#define PT_INTERP 3
#define PT_NOTE 4
#define PF_X 1
#define NT_GNU_BUILD_ID 3

static int read_at(FILE *f, uint64_t off, void *buf, size_t len)
{
	if (fseeko(f, (off_t)off, SEEK_SET) != 0 || fread(buf, 1, len, f) != len)
		return -cste_format;
	return 0;
}

static void elf_note_build_id(FILE *f, uint64_t off, uint64_t size, struct synth_elf *elf)
{
	uint8_t buf[4096];
	if (size > sizeof(buf))
		size = sizeof(buf);
	if (read_at(f, off, buf, (size_t)size))
		return;
	uint64_t p = 0;
	while (p + 12 <= size) {
		uint32_t namesz = cst_le32(buf + p), descsz = cst_le32(buf + p + 4);
		uint32_t type = cst_le32(buf + p + 8);
		uint64_t name = p + 12, desc = name + ((namesz + 3u) & ~3u);
		if (desc + descsz > size)
			return;
		if (type == NT_GNU_BUILD_ID && namesz == 4 && !memcmp(buf + name, "GNU", 4)) {
			elf->build_id_size = descsz > 20 ? 20 : descsz;
			memcpy(elf->build_id, buf + desc, elf->build_id_size);
			return;
		}
		p = desc + ((descsz + 3u) & ~3u);
	}
}

int synth_elf_read(const char *path, struct synth_elf *elf)
{
	if (!path || !elf)
		return -cste_invalid;
	memset(elf, 0, sizeof(*elf));
	FILE *f = fopen(path, "rb");
	if (!f)
		return -cste_not_found;
	uint8_t eh[64];
	int rc = read_at(f, 0, eh, sizeof(eh));
	if (rc || memcmp(eh, "\177ELF", 4) || eh[5] != 1 /* little-endian */) {
		fclose(f);
		return -cste_format;
	}
	elf->is64 = eh[4] == 2;
	elf->dyn = cst_le16(eh + 16) == 3;
	uint64_t phoff;
	uint32_t phentsize, phnum;
	if (elf->is64) {
		elf->entry = cst_le64(eh + 24);
		phoff = cst_le64(eh + 32);
		phentsize = cst_le16(eh + 54);
		phnum = cst_le16(eh + 56);
	} else {
		elf->entry = cst_le32(eh + 24);
		phoff = cst_le32(eh + 28);
		phentsize = cst_le16(eh + 42);
		phnum = cst_le16(eh + 44);
	}
	for (uint32_t i = 0; i < phnum && phentsize <= 64; i++) {
		uint8_t ph[64];
		if (read_at(f, phoff + (uint64_t)i * phentsize, ph, phentsize))
			break;
		uint32_t type = cst_le32(ph), flags;
		uint64_t off, vaddr, filesz, memsz;
		if (elf->is64) {
			flags = cst_le32(ph + 4);
			off = cst_le64(ph + 8);
			vaddr = cst_le64(ph + 16);
			filesz = cst_le64(ph + 32);
			memsz = cst_le64(ph + 40);
		} else {
			off = cst_le32(ph + 4);
			vaddr = cst_le32(ph + 8);
			filesz = cst_le32(ph + 16);
			memsz = cst_le32(ph + 20);
			flags = cst_le32(ph + 24);
		}
		if (type == PT_LOAD && elf->nseg < (int)(sizeof(elf->seg) / sizeof(elf->seg[0]))) {
			struct synth_elf_seg *s = &elf->seg[elf->nseg++];
			s->vaddr = vaddr;
			s->memsz = memsz;
			s->offset = off;
			s->filesz = filesz;
			s->exec = (flags & PF_X) != 0;
		} else if (type == PT_INTERP && filesz < sizeof(elf->interp)) {
			if (read_at(f, off, elf->interp, (size_t)filesz) == 0)
				elf->interp[filesz] = 0;
		} else if (type == PT_NOTE && !elf->build_id_size) {
			elf_note_build_id(f, off, filesz, elf);
		}
	}
	fclose(f);
	return 0;
}
