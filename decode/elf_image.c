/* An ELF file as code for a raw dump's decode: each PT_LOAD's file bytes become
 * one memory image, at its link address, or with the first segment moved to the
 * address given (the same placement the symbolizer gives --elf FILE@ADDR, so
 * one option names both the code and its symbols). */
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "decode_int.h"

static int add_segments(struct cst_trace *trace, Elf *e, const char *path, uint64_t addr,
			bool moved, const struct cst_log *log)
{
	size_t nph = 0;
	int64_t bias = 0;
	bool first = true;
	int added = 0, err;

	if (elf_getphdrnum(e, &nph)) {
		cst_logf(log, cst_log_error, "%s: cannot read its program headers: %s", path,
			 elf_errmsg(-1));
		return -cste_format;
	}
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		struct cst_mem_image img = {.path = path, .space = cst_mem_any};

		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (first)
			bias = (int64_t)cst_elf_place_bias(moved, addr, ph.p_vaddr);
		first = false;
		if (!ph.p_filesz)
			continue; /* bss: no bytes in the file */
		img.address = ph.p_vaddr + (uint64_t)bias;
		img.file_offset = ph.p_offset;
		img.length = ph.p_filesz;
		err = cst_trace_add_image(trace, &img);
		if (err)
			return err;
		added++;
	}
	if (!added) {
		cst_logf(log, cst_log_error, "%s: no loadable segment with file bytes", path);
		return -cste_format;
	}
	return 0;
}

int dec_trace_add_elf(struct cst_trace *trace, const char *spec, const struct cst_log *log)
{
	char path[4096];
	uint64_t addr;
	int moved, fd, err;
	Elf *e;

	moved = cst_parse_file_at(spec, path, sizeof(path), &addr);
	if (moved < 0) {
		cst_logf(log, cst_log_error, "--elf %s: expected FILE[@ADDR] (ADDR a number)", spec);
		return -cste_invalid;
	}
	fd = cst_open_input(path);
	if (fd < 0) {
		cst_logf(log, cst_log_error, "%s: cannot read: %s", path, cst_input_strerror(errno));
		return -cste_io;
	}
	elf_version(EV_CURRENT);
	e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF) {
		cst_logf(log, cst_log_error, "%s: offset 0: not an ELF file (expected \\177ELF)", path);
		err = -cste_format;
	} else {
		err = add_segments(trace, e, path, addr, moved == 1, log);
	}
	if (e)
		elf_end(e);
	close(fd);
	return err;
}
