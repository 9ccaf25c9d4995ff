/* Checks that the inline lookup of symbolize/scopes.c answers as libdw's own walk
 * (dwarf_getscopes from the unit's top) at every STRIDE-th address of every
 * function of each ELF given: prints the counts, exits 1 on any difference, and
 * also when no address was inside inlined code (the check would prove nothing). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../symbolize/internal.h"

static int check(struct cst_symbolizer *sym, struct dso *dso, uint64_t stride)
{
	uint64_t n = 0, inlined = 0, differ = 0;

	sym_dso_load_symbols(sym, dso);
	if (!sym_dso_load_dwarf(sym, dso)) {
		fprintf(stderr, "%s: no DWARF\n", dso->path);
		return 1;
	}
	for (uint32_t i = 0; i < dso->nfuncs; i++) {
		const struct sym_func *f = &dso->funcs[i];

		for (uint64_t a = f->pub.addr; a < f->end; a += stride) {
			const char *fast = sym_dso_inlined_at(dso, a);
			const char *walk = sym_dso_inlined_at_walk(dso, a);

			n++;
			inlined += walk != NULL;
			if ((fast == NULL) != (walk == NULL) || (fast && strcmp(fast, walk))) {
				if (differ++ < 10)
					printf("%s: %#llx: %s, libdw's walk: %s\n", dso->path,
					       (unsigned long long)a, fast ? fast : "(none)",
					       walk ? walk : "(none)");
			}
		}
	}
	printf("%s: %llu addresses, %llu in inlined code, %llu differ\n", dso->path,
	       (unsigned long long)n, (unsigned long long)inlined, (unsigned long long)differ);
	return differ || !inlined;
}

int main(int argc, char **argv)
{
	struct cst_symbolizer_opts opts = {.sz = sizeof(opts)};
	struct cst_symbolizer *sym;
	uint64_t stride;
	int bad = 0;

	if (argc < 3) {
		fprintf(stderr, "usage: scopes_check STRIDE ELF...\n");
		return 2;
	}
	stride = strtoull(argv[1], NULL, 0);
	if (!stride || cst_symbolizer_alloc(&sym, &opts) < 0)
		return 2;
	for (int i = 2; i < argc; i++)
		if (cst_symbolizer_add_elf_spec(sym, argv[i], CST_SYM_PID_GLOBAL) < 0) {
			fprintf(stderr, "%s: cannot add\n", argv[i]);
			return 2;
		}
	for (struct dso *d = sym->dsos; d; d = d->next)
		bad |= check(sym, d, stride);
	cst_symbolizer_free(sym);
	return bad;
}
