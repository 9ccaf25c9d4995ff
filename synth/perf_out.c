/* perf.data output of synth: AUX records as perf_aux_output_end cuts them, with the
 * cs_etm AUXTRACE_INFO and the MMAP2/COMM sideband learnt from QEMU's log. */
#include <stdlib.h>
#include <string.h>

#include "synth_int.h"

int synth_perf_chunk(void *ctx, const struct synth_aux_chunk *c)
{
	struct synth_perf_out *p = ctx;
	if (p->naux == p->cap_aux) {
		size_t nc = p->cap_aux ? p->cap_aux * 2 : 16;
		struct synth_perf_aux *na = realloc(p->aux, nc * sizeof(*na));
		if (!na)
			return -cste_nomem;
		p->aux = na;
		p->cap_aux = nc;
	}
	struct synth_perf_aux *a = &p->aux[p->naux];
	a->data = malloc(c->size ? c->size : 1);
	if (!a->data)
		return -cste_nomem;
	memcpy(a->data, c->data, c->size);
	a->offset = c->aux_offset;
	a->size = c->size;
	a->head = c->aux_head;
	a->truncated = c->truncated;
	a->overwrite = c->overwrite;
	p->naux++;
	return 0;
}

void synth_perf_fini(struct synth_perf_out *p)
{
	for (size_t i = 0; i < p->naux; i++)
		free(p->aux[i].data);
	free(p->aux);
	p->aux = NULL;
	p->naux = p->cap_aux = 0;
}

int synth_perf_write(struct synth_perf_out *p, const char *path)
{
	(void)p;
	(void)path;
	return -cste_unsupported;
}
