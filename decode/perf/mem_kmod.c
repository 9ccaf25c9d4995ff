/* A kernel module's code for perf.data decoding (mem.h): its sections where the
 * kernel lays them out, read from a copy of the file with its branches within
 * the module relocated, as the kernel loads it (decode/kmod.c says how). */
#include "mem.h"

#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

struct perf_kmod {
	uint8_t *file;
	uint64_t size;
	struct cst_kmod_section *secs; /* addr from .text, which the mapping starts with */
	int n;
};

void dec_perf_kmod_free(struct perf_kmod *k)
{
	if (!k)
		return;
	free(k->file);
	free(k->secs);
	free(k);
}

struct perf_kmod *dec_perf_kmod_load(Elf *e, int fd)
{
	struct stat st;
	struct perf_kmod *k;
	Elf *copy;
	int n = cst_kmod_layout(e, NULL, 0);

	if (n <= 0 || fstat(fd, &st) < 0 || st.st_size <= 0)
		return NULL;
	k = calloc(1, sizeof(*k));
	if (!k)
		return NULL;
	k->size = (uint64_t)st.st_size;
	k->secs = calloc((size_t)n, sizeof(*k->secs));
	k->file = malloc((size_t)st.st_size);
	if (!k->secs || !k->file || pread(fd, k->file, (size_t)st.st_size, 0) != st.st_size) {
		dec_perf_kmod_free(k);
		return NULL;
	}
	k->n = cst_kmod_layout(e, k->secs, n);
	copy = elf_memory((char *)k->file, (size_t)k->size);
	if (copy) {
		cst_kmod_relocate(copy, k->secs, k->n, k->file, (size_t)k->size);
		elf_end(copy);
	}
	return k;
}

uint32_t dec_perf_kmod_read(const struct perf_kmod *k, uint64_t at, uint32_t len, uint8_t *buf)
{
	for (int i = 0; i < k->n; i++) {
		const struct cst_kmod_section *s = &k->secs[i];
		uint64_t room;

		if (at < s->addr || at - s->addr >= s->filesz)
			continue; /* not here, or not in the file (NOBITS) */
		if (s->offset > k->size || s->filesz > k->size - s->offset)
			return 0;
		room = s->filesz - (at - s->addr);
		if (len > room)
			len = (uint32_t)room;
		memcpy(buf, k->file + s->offset + (at - s->addr), len);
		return len;
	}
	return 0;
}
