/* Test driver for the symbolize library: answers address questions in the formats
 * of addr2line -f -i and objdump so that scripts can cross-check it with binutils. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/symbolize.h"

static void log_fn(void *ctx, enum cst_log_level level, const char *msg)
{
	fprintf(stderr, "%s: %s\n", level == cst_log_warning ? "warning" : "log", msg);
}

static const char *base(const char *p)
{
	const char *s = p ? strrchr(p, '/') : NULL;

	return s ? s + 1 : p ? p : "??";
}

static enum cst_isa isa_of(const char *s)
{
	return !strcmp(s, "a64") ? cst_isa_a64 : !strcmp(s, "a32") ? cst_isa_a32
		: !strcmp(s, "t32") ? cst_isa_t32 : cst_isa_unknown;
}

static int print_range(void *ctx, const struct cst_sym_elem *se)
{
	for (uint32_t i = 0; i < se->npieces; i++) {
		const struct cst_sym_piece *p = &se->pieces[i];

		printf("piece %#llx %#llx %u %s %s+%#llx%s\n", (unsigned long long)p->start,
		       (unsigned long long)p->end, p->num_insns,
		       p->loc.func ? p->loc.func->name : "[unknown]", p->loc.dso,
		       (unsigned long long)(p->loc.func ? p->loc.func_offset : p->loc.dso_offset),
		       p->enters_func ? " entry" : "");
		for (uint32_t k = 0; k < p->nlines; k++)
			printf("line %s:%d %u\n", base(p->lines[k].file), p->lines[k].line,
			       p->lines[k].num_insns);
	}
	return 0;
}

/* usage: sym_query [--debug-dir D] [--vmlinux F] [--build-id HEX] [--map ADDR:LEN:PGOFF]
 *                  FILE[@ADDR]|-
 *                  (a2l ADDR... | dis ISA ADDR... | range ISA START END N) */
int main(int argc, char **argv)
{
	struct cst_log log = {log_fn, NULL};
	struct cst_symbolizer_opts opts = {.sz = sizeof(opts), .log = &log};
	struct cst_symbolizer *sym;
	uint8_t bid[64];
	uint32_t nbid = 0;
	const char *map = NULL;
	int i = 1, err;

	for (; i + 1 < argc && !strncmp(argv[i], "--", 2); i += 2) {
		if (!strcmp(argv[i], "--debug-dir"))
			opts.debug_dir = argv[i + 1];
		else if (!strcmp(argv[i], "--vmlinux"))
			opts.vmlinux = argv[i + 1];
		else if (!strcmp(argv[i], "--map"))
			map = argv[i + 1];
		else if (!strcmp(argv[i], "--build-id"))
			for (const char *h = argv[i + 1]; h[0] && h[1] && nbid < 64; h += 2)
				sscanf(h, "%2hhx", &bid[nbid++]);
	}
	if (argc - i < 2)
		return 2;
	err = cst_symbolizer_alloc(&sym, &opts);
	if (err)
		return 1;
	if (!strcmp(argv[i], "-")) {
		err = 0; /* no binary of its own: kernel only */
	} else if (map || nbid) {
		struct cst_sym_mapping m = {.pid = 7, .path = argv[i], .build_id = bid,
					    .build_id_size = nbid};
		unsigned long long a = 0, l = 0, o = 0;

		if (map && sscanf(map, "%llx:%llx:%llx", &a, &l, &o) != 3)
			return 2;
		m.addr = a;
		m.len = l;
		m.pgoff = o;
		m.elf_vaddr = !map;
		err = cst_symbolizer_add_mapping(sym, &m);
	} else {
		err = cst_symbolizer_add_elf_spec(sym, argv[i], 7);
	}
	if (err) {
		fprintf(stderr, "add: %s\n", cst_strerror(err));
		return 1;
	}
	i++;
	if (!strcmp(argv[i], "a2l")) {
		for (i++; i < argc; i++) {
			struct cst_sym_frame fr[16];
			int n = cst_symbolizer_inline_chain(sym, 7, strtoull(argv[i], NULL, 0), fr, 16);
			struct cst_sym_loc loc;

			if (n <= 0) {
				cst_symbolizer_lookup(sym, 7, strtoull(argv[i], NULL, 0), &loc);
				if (loc.func)
					printf("%s\n??:0\n", loc.func->name);
				else
					printf("[unknown] %s+%#llx\n", loc.dso,
					       (unsigned long long)loc.dso_offset);
				continue;
			}
			for (int k = 0; k < n; k++)
				printf("%s\n%s:%d\n", fr[k].func ? fr[k].func : "??", base(fr[k].file),
				       fr[k].line);
		}
	} else if (!strcmp(argv[i], "dis") && i + 1 < argc) {
		enum cst_isa isa = isa_of(argv[i + 1]);

		for (i += 2; i < argc; i++) {
			struct cst_sym_insn in;

			err = cst_symbolizer_disasm(sym, 7, strtoull(argv[i], NULL, 0), isa, &in);
			if (err)
				printf("%s error %s\n", argv[i], cst_strerror(err));
			else
				printf("%llx %u %s\n", (unsigned long long)in.addr, in.size, in.text);
		}
	} else if (!strcmp(argv[i], "range") && i + 4 < argc) {
		struct cst_elem e = {.type = cst_elem_instr_range, .pid = 7, .tid = 7, .cpu = 0};

		e.isa = isa_of(argv[i + 1]);
		e.start = strtoull(argv[i + 2], NULL, 0);
		e.end = strtoull(argv[i + 3], NULL, 0);
		e.num_insns = (uint32_t)strtoul(argv[i + 4], NULL, 0);
		/* twice: the second answer comes from the range cache and must match */
		cst_symbolizer_feed(sym, &e, print_range, NULL);
		cst_symbolizer_feed(sym, &e, print_range, NULL);
	} else {
		return 2;
	}
	cst_symbolizer_free(sym);
	return 0;
}
