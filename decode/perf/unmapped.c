/* Files the BUILD_ID feature names that no MMAP record maps (the record lost): a
 * position-dependent executable is read at its ELF addresses; others are said. */
#include "perf_int.h"
#include "elf_build_id.h"

#include <fcntl.h>
#include <inttypes.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The file found for a BUILD_ID entry: its ELF type and executable PT_LOADs. */
struct found {
	const struct cst_perf_build_id *b;
	GElf_Half type;
	GElf_Phdr *ph;
	size_t nph;
};

static bool try_file(void *ctx, const char *path, enum cst_bin_place place)
{
	struct found *fd = ctx;
	int f = cst_open_input(path);
	uint8_t bid[20];
	uint8_t n;
	GElf_Ehdr eh;
	size_t nph = 0;
	Elf *e;

	(void)place;
	if (f < 0)
		return false;
	e = elf_begin(f, ELF_C_READ, NULL);
	if (!e || elf_kind(e) != ELF_K_ELF || !gelf_getehdr(e, &eh) ||
	    ((n = dec_elf_build_id(e, bid)) && !cst_build_id_equal(bid, n, fd->b->id, fd->b->size)) ||
	    elf_getphdrnum(e, &nph) || !(fd->ph = calloc(nph ? nph : 1, sizeof(*fd->ph)))) {
		if (e)
			elf_end(e);
		close(f);
		return false;
	}
	fd->type = eh.e_type;
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr p;

		if (gelf_getphdr(e, (int)i, &p) && p.p_type == PT_LOAD && (p.p_flags & PF_X) &&
		    p.p_filesz)
			fd->ph[fd->nph++] = p;
	}
	elf_end(e);
	close(f);
	return true;
}

static int keep(struct cst_perf_input *in, const struct cst_perf_build_id *b, const GElf_Phdr *p)
{
	if (CST_GROW(in->unmapped, in->cap_unmapped, in->nunmapped + 1) < 0)
		return -cste_nomem;
	in->unmapped[in->nunmapped++] = (struct unmapped){p->p_vaddr, p->p_filesz, p->p_offset, b};
	return dec_perf_mem_add_map(in->mem, -1, p->p_vaddr, p->p_filesz, p->p_offset, b->filename,
				    b->id, b->size);
}

int dec_pi_unmapped(struct cst_perf_input *in, const bool *mapped,
		    const struct cst_bin_places *places)
{
	const struct cst_perf_features *f = cst_perf_reader_features(in->r);
	char shown[256], hex[41];
	int err = 0;

	for (uint64_t i = 0; i < f->nbuild_ids && !err; i++) {
		const struct cst_perf_build_id *b = &f->build_ids[i];
		struct found fd = {b, 0, NULL, 0};
		uint64_t lo = UINT64_MAX, hi = 0;

		/* [kernel.kallsyms], [vdso]: not files */
		if (mapped[i] || !b->filename || b->filename[0] != '/')
			continue;
		hex[0] = '\0';
		for (unsigned k = 0; k < b->size && k < 20; k++)
			sprintf(hex + 2 * k, "%02x", b->id[k]);
		cst_printable(b->filename, shown, sizeof(shown));
		if (cst_bin_lookup(places, b->filename, b->id, b->size, cst_symdir_code, try_file,
				   &fd) < 0) {
			cst_logf(&in->log, cst_log_warning,
				 "%s: no MMAP record maps %s (build-id %s, in the BUILD_ID feature), "
				 "and it is not found here: its code is not decoded (gaps)",
				 in->path, shown, hex);
			continue;
		}
		if (fd.type != ET_EXEC || !fd.nph) {
			cst_logf(&in->log, cst_log_warning,
				 "%s: no MMAP record maps %s (build-id %s, in the BUILD_ID feature): "
				 "where it was loaded is not known (not a position-dependent "
				 "executable); its code is not decoded (gaps)",
				 in->path, shown, hex);
			free(fd.ph);
			continue;
		}
		for (size_t k = 0; k < fd.nph && !err; k++) {
			err = keep(in, b, &fd.ph[k]);
			lo = fd.ph[k].p_vaddr < lo ? fd.ph[k].p_vaddr : lo;
			if (fd.ph[k].p_vaddr + fd.ph[k].p_filesz > hi)
				hi = fd.ph[k].p_vaddr + fd.ph[k].p_filesz;
		}
		free(fd.ph);
		cst_logf(&in->log, cst_log_warning,
			 "%s: no MMAP record maps %s (build-id %s, in the BUILD_ID feature): "
			 "reading its code at its ELF addresses 0x%" PRIx64 "-0x%" PRIx64
			 ", where a position-dependent executable loads (perf does not read it)",
			 in->path, shown, hex, lo, hi - 1);
	}
	return err;
}

int dec_pi_unmapped_sideband(struct cst_perf_input *in, cst_sideband_fn sb_fn, void *ctx)
{
	int ret = 0;

	for (size_t i = 0; sb_fn && i < in->nunmapped && !ret; i++) {
		const struct unmapped *u = &in->unmapped[i];
		struct cst_sideband sb = {.type = cst_sb_mmap, .pid = -1, .tid = -1, .cpu = -1,
					  .addr = u->addr, .len = u->len, .pgoff = u->pgoff,
					  .filename = u->b->filename, .build_id = u->b->id,
					  .build_id_size = u->b->size};

		ret = sb_fn(ctx, &sb);
	}
	return ret;
}
