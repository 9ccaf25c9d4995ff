/* Memory images for the code walk: each file mmapped once (pread where mmap is
 * not possible), regions kept sorted by address, reads served by binary search.
 * Owned by one decoder, so decoders on different threads share nothing: OpenCSD's
 * own file accessors are shared process-wide and are not safe across threads. */
#include "mem_images.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct mem_file {
	char *path;
	struct cst_mapped_input in;
};

struct mem_region {
	uint64_t start, end; /* [start, end) */
	uint64_t file_offset;
	uint32_t space;
	int file;
};

struct mem_images {
	struct mem_file *files;
	int nfiles;
	struct mem_region *regions;
	int nregions;
	int last; /* region of the last hit: code walks stay in one image */
};

static int file_index(struct mem_images *m, const char *path, const struct cst_log *log)
{
	struct mem_file *f;

	for (int i = 0; i < m->nfiles; i++)
		if (!strcmp(m->files[i].path, path))
			return m->files[i].in.fd >= 0 ? i : -1;
	f = &m->files[m->nfiles];
	*f = (struct mem_file){.in.fd = -1};
	f->path = strdup(path);
	if (!f->path)
		return -1;
	f->in.fd = cst_open_input(path);
	if (f->in.fd < 0 || cst_mapped_input_map(&f->in) < 0) {
		cst_logf(log, cst_log_warning, "%s: cannot open memory image: %s", path,
			 cst_input_strerror(errno));
		cst_mapped_input_close(&f->in);
		m->nfiles++;
		return -1;
	}
	return m->nfiles++;
}

static int cmp_region(const void *a, const void *b)
{
	const struct mem_region *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct mem_images *dec_mem_images_open(const struct cst_trace *trace, const struct cst_log *log)
{
	struct mem_images *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->files = calloc((size_t)trace->nimages + 1, sizeof(*m->files));
	m->regions = calloc((size_t)trace->nimages + 1, sizeof(*m->regions));
	if (!m->files || !m->regions) {
		dec_mem_images_close(m);
		return NULL;
	}
	for (int i = 0; i < trace->nimages; i++) {
		const struct cst_mem_image *img = &trace->images[i];
		int fi = file_index(m, img->path, log);
		struct mem_region *r;
		uint64_t len;

		if (fi < 0)
			continue;
		if (img->file_offset >= m->files[fi].in.size)
			continue;
		len = m->files[fi].in.size - img->file_offset;
		if (img->length && img->length < len)
			len = img->length;
		if (img->address + len < img->address)
			len = UINT64_MAX - img->address; /* clamp at the top of the space */
		r = &m->regions[m->nregions++];
		r->start = img->address;
		r->end = img->address + len;
		r->file_offset = img->file_offset;
		r->space = img->space;
		r->file = fi;
	}
	m->last = -1;
	qsort(m->regions, (size_t)m->nregions, sizeof(*m->regions), cmp_region);
	return m;
}

void dec_mem_images_close(struct mem_images *m)
{
	if (!m)
		return;
	for (int i = 0; i < m->nfiles; i++) {
		cst_mapped_input_close(&m->files[i].in);
		free(m->files[i].path);
	}
	free(m->files);
	free(m->regions);
	free(m);
}

int dec_mem_images_count(const struct mem_images *m)
{
	return m ? m->nregions : 0;
}

/* The region holding @address in @space, or -1. */
static int find(struct mem_images *m, uint64_t address, uint32_t space)
{
	int lo;

	if (m->last >= 0 && m->last < m->nregions) {
		const struct mem_region *r = &m->regions[m->last];

		if (address >= r->start && address < r->end && (r->space & space))
			return m->last;
	}
	/* last region starting at or below address, then scan down for overlaps */
	lo = CST_PARTITION(i, 0, m->nregions, m->regions[i].start <= address);
	for (int i = lo - 1; i >= 0; i--) {
		const struct mem_region *r = &m->regions[i];

		if (address >= r->start && address < r->end && (r->space & space))
			return m->last = i;
	}
	return -1;
}

uint32_t dec_mem_images_read(struct mem_images *m, uint64_t address, uint32_t space, uint32_t len,
			 uint8_t *buf)
{
	const struct mem_region *r;
	const struct mem_file *f;
	uint64_t avail, off;
	int i;

	if (!m || !len)
		return 0;
	i = find(m, address, space);
	if (i < 0)
		return 0;
	r = &m->regions[i];
	f = &m->files[r->file];
	avail = r->end - address;
	if (len > avail)
		len = (uint32_t)avail;
	off = r->file_offset + (address - r->start);
	if (f->in.map) {
		memcpy(buf, f->in.map + off, len);
		return len;
	}
	{
		ssize_t got = pread(f->in.fd, buf, len, (off_t)off);

		return got > 0 ? (uint32_t)got : 0;
	}
}
