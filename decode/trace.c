/* The trace description: buffers, trace sources and memory images, owned copies.
 * Filled by the snapshot reader, the perf.data input or the command line. */
#include "decode_int.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int cst_trace_alloc(struct cst_trace **out)
{
	if (!out)
		return -cste_invalid;
	*out = calloc(1, sizeof(struct cst_trace));
	return *out ? 0 : -cste_nomem;
}

void cst_trace_free(struct cst_trace *trace)
{
	if (!trace)
		return;
	for (int i = 0; i < trace->nbuffers; i++) {
		free((char *)trace->buffers[i].name);
		free((char *)trace->buffers[i].path);
	}
	for (int i = 0; i < trace->nimages; i++)
		free((char *)trace->images[i].path);
	free(trace->buffers);
	free(trace->sources);
	free(trace->source_buffer);
	free(trace->images);
	free(trace);
}

int cst_trace_add_buffer(struct cst_trace *trace, const struct cst_buffer_info *info)
{
	struct cst_buffer_info *b;
	int err;

	if (!trace || !info || !info->path)
		return -cste_invalid;
	err = CST_GROW(trace->buffers, trace->cap_buffers, (size_t)trace->nbuffers + 1);
	if (err)
		return err;
	b = &trace->buffers[trace->nbuffers];
	*b = *info;
	b->name = strdup(info->name ? info->name : "buffer");
	b->path = strdup(info->path);
	if (!b->name || !b->path) {
		free((char *)b->name);
		free((char *)b->path);
		return -cste_nomem;
	}
	return trace->nbuffers++;
}

int cst_trace_add_source(struct cst_trace *trace, int buffer, const struct cst_source_cfg *cfg)
{
	int err;

	if (!trace || !cfg || buffer < 0 || buffer >= trace->nbuffers)
		return -cste_invalid;
	err = CST_GROW(trace->sources, trace->cap_sources, (size_t)trace->nsources + 1);
	if (!err)
		err = CST_GROW(trace->source_buffer, trace->cap_source_buffer,
			       (size_t)trace->nsources + 1);
	if (err)
		return err;
	trace->sources[trace->nsources] = *cfg;
	trace->source_buffer[trace->nsources] = buffer;
	return trace->nsources++;
}

static bool image_same(const struct cst_mem_image *a, const struct cst_mem_image *b)
{
	return !strcmp(a->path, b->path) && a->address == b->address &&
	       a->file_offset == b->file_offset && a->length == b->length &&
	       a->space == b->space;
}

int cst_trace_add_image(struct cst_trace *trace, const struct cst_mem_image *img)
{
	struct cst_mem_image *m;
	int err;

	if (!trace || !img || !img->path)
		return -cste_invalid;
	/* snapshots list the same image once per core: keep one */
	for (int i = 0; i < trace->nimages; i++)
		if (image_same(&trace->images[i], img))
			return 0;
	err = CST_GROW(trace->images, trace->cap_images, (size_t)trace->nimages + 1);
	if (err)
		return err;
	m = &trace->images[trace->nimages];
	*m = *img;
	m->path = strdup(img->path);
	if (!m->path)
		return -cste_nomem;
	trace->nimages++;
	return 0;
}

int cst_trace_default_buffer(const struct cst_trace *trace)
{
	if (!trace)
		return -cste_invalid;
	return trace->nbuffers ? 0 : -cste_not_found;
}

int cst_trace_nbuffers(const struct cst_trace *trace)
{
	return trace ? trace->nbuffers : -cste_invalid;
}

const struct cst_buffer_info *cst_trace_buffer(const struct cst_trace *trace, int buffer)
{
	if (!trace || buffer < 0 || buffer >= trace->nbuffers)
		return NULL;
	return &trace->buffers[buffer];
}

int cst_trace_find_buffer(const struct cst_trace *trace, const char *name)
{
	if (!trace || !name)
		return -cste_invalid;
	for (int i = 0; i < trace->nbuffers; i++)
		if (!strcasecmp(trace->buffers[i].name, name))
			return i;
	return -cste_not_found;
}

int cst_trace_nsources(const struct cst_trace *trace)
{
	return trace ? trace->nsources : -cste_invalid;
}

const struct cst_source_cfg *cst_trace_source(const struct cst_trace *trace, int source)
{
	if (!trace || source < 0 || source >= trace->nsources)
		return NULL;
	return &trace->sources[source];
}

const struct cst_source_cfg *cst_trace_elem_source(const struct cst_trace *trace,
						   const struct cst_elem *e)
{
	if (!trace || !e)
		return NULL;
	if (e->source >= 0 && e->source < trace->nsources)
		return &trace->sources[e->source];
	for (int i = 0; i < trace->nsources; i++)
		if (cst_source_trace_id(&trace->sources[i]) == (e->trace_id & 0x7f))
			return &trace->sources[i];
	return NULL;
}

int cst_trace_source_buffer(const struct cst_trace *trace, int source)
{
	if (!trace || source < 0 || source >= trace->nsources)
		return -cste_invalid;
	return trace->source_buffer[source];
}

int cst_trace_nimages(const struct cst_trace *trace)
{
	return trace ? trace->nimages : -cste_invalid;
}

const struct cst_mem_image *cst_trace_image(const struct cst_trace *trace, int image)
{
	if (!trace || image < 0 || image >= trace->nimages)
		return NULL;
	return &trace->images[image];
}
