/* libFuzzer target for the report models and writers: the input is a stream of
 * decoded elements, 8 bytes each (ranges in the test program's code with DWARF,
 * FUZZ_ELF, or unmapped; exceptions and returns, context changes, timestamps,
 * gaps), symbolized and fed to the report, call, profile and flow models as
 * `cstrace report` feeds them; then every writer (folded, call graph text, flame
 * graph, Perfetto timeline, AutoFDO, profgen, llvm-sample, lcov, coverage, HTML)
 * writes into /dev/null. Must never crash, hang, leak or allocate without bound. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/symbolize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define BASE64 0x400000ull /* where the A64 program goes (FUZZ_ELF) */
#define BASE32 0x800000ull /* and the T32 one (FUZZ_ELF32) */

struct views {
	struct cst_report *rep;
	struct cst_calls *calls;
	struct cst_calltree *tree;
	struct cst_perfetto *timeline;
	struct cst_afdo *afdo;
	struct cst_flow *flow;
	uint64_t time;
};

static int call_event(void *ctx, const struct cst_call_event *ev)
{
	struct views *v = ctx;
	int err = cst_calltree_add(v->tree, ev);

	return err < 0 ? err : cst_perfetto_add(v->timeline, ev);
}

static int flow_event(void *ctx, const struct cst_flow_event *ev)
{
	(void)ctx;
	(void)ev;
	return 0;
}

static int sym_elem(void *ctx, const struct cst_sym_elem *se)
{
	struct views *v = ctx;
	int err = cst_report_add(v->rep, se);

	if (err >= 0)
		err = cst_calls_add(v->calls, se, v->time);
	if (err >= 0)
		err = cst_afdo_add(v->afdo, se, v->time);
	if (err >= 0)
		err = cst_flow_add(v->flow, se, v->time);
	return err < 0 ? err : 0;
}

/* Element @i of the stream from its 8 bytes. */
static void make_elem(const uint8_t *b, struct cst_elem *e, uint64_t *time)
{
	static const enum cst_isa isas[] = {cst_isa_a64, cst_isa_t32, cst_isa_a32, cst_isa_a64};
	static const enum cst_elem_type other[] = {
		cst_elem_exception, cst_elem_exception_ret, cst_elem_pe_context, cst_elem_timestamp,
		cst_elem_no_sync,   cst_elem_trace_on,      cst_elem_addr_nacc,  cst_elem_eot};
	unsigned off = (unsigned)(b[2] | b[3] << 8);
	unsigned k = b[0] % 16;

	memset(e, 0, sizeof(*e));
	e->type = k < 8 ? cst_elem_instr_range : other[k - 8];
	e->trace_id = (uint8_t)(0x10 + (b[1] & 3));
	e->source = b[1] & 3;
	e->isa = isas[(b[1] >> 2) & 3];
	e->ctx.bits64 = e->isa == cst_isa_a64;
	e->ctx.el = (b[1] >> 4) & 3;
	e->ctx.el_valid = true;
	e->ctx.ctxid_valid = b[1] & 0x40;
	e->ctx.context_id = b[6] & 7;
	e->pid = e->tid = (b[7] & 0x40) ? (int32_t)(b[6] & 7) : -1;
	e->cpu = -1;
	e->num_insns = 1 + (b[4] & 63);
	if (e->isa == cst_isa_t32) {
		e->start = BASE32 + (off & ~1u);
		e->last_size = (b[4] & 64) ? 4 : 2;
	} else {
		e->start = (e->isa == cst_isa_a32 ? BASE32 : BASE64) + (off & ~3u);
		e->last_size = 4;
	}
	if (b[7] & 0x80)
		e->start |= 0xffff000000000000ull; /* nothing mapped there */
	e->end = e->start + (uint64_t)e->num_insns * e->last_size;
	e->last_class = (enum cst_insn_class)(b[5] % 4);
	e->last_subclass = (enum cst_insn_subclass)((b[5] >> 2) % 3);
	e->last_executed = b[5] & 0x20;
	e->exception_number = b[6];
	e->exception_ret_addr = e->start;
	e->exception_ret_addr_valid = b[5] & 0x40;
	e->gap = (enum cst_gap_reason)(b[7] % 9);
	*time += b[6];
	e->timestamp = *time;
}

static void write_all(struct views *v, struct cst_symbolizer *sym, FILE *f, const char *dso)
{
	const struct cst_report_row *rows;
	int n = cst_report_rows(v->rep, &rows);

	cst_calltree_write_folded(v->tree, f);
	cst_calltree_write_text(v->tree, f, NULL);
	cst_calltree_write_flamegraph(v->tree, f, NULL);
	cst_perfetto_finish(v->timeline);
	cst_afdo_write_autofdo(v->afdo, f);
	cst_afdo_write_profgen(v->afdo, f, dso);
	cst_afdo_write_llvm_sample(v->afdo, f, dso);
	cst_afdo_write_lcov(v->afdo, f);
	cst_afdo_write_coverage(v->afdo, f);
	if (n >= 0)
		cst_html_write(f, &(struct cst_html_input){.sz = sizeof(struct cst_html_input),
							   .title = "fuzz",
							   .rows = rows,
							   .nrows = n,
							   .total = cst_report_total(v->rep),
							   .tree = v->tree,
							   .profile = v->afdo});
	(void)sym;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct cst_symbolizer *sym;
	static FILE *sink;
	static const char *dso = "prog-a64";
	struct views v = {0};
	struct cst_elem e;
	int err;

	if (!sym) {
		char spec[4200];

		sink = fopen("/dev/null", "w");
		if (!sink || cst_symbolizer_alloc(&sym, NULL) < 0)
			abort();
		if (getenv("FUZZ_ELF")) {
			snprintf(spec, sizeof(spec), "%s@%#llx", getenv("FUZZ_ELF"),
				 (unsigned long long)BASE64);
			cst_symbolizer_add_elf_spec(sym, spec, CST_SYM_PID_GLOBAL);
			dso = strrchr(getenv("FUZZ_ELF"), '/') ? strrchr(getenv("FUZZ_ELF"), '/') + 1
							       : getenv("FUZZ_ELF");
		}
		if (getenv("FUZZ_ELF32")) {
			snprintf(spec, sizeof(spec), "%s@%#llx", getenv("FUZZ_ELF32"),
				 (unsigned long long)BASE32);
			cst_symbolizer_add_elf_spec(sym, spec, CST_SYM_PID_GLOBAL);
		}
	}
	if (!size)
		return 0;
	err = cst_report_alloc(&v.rep, (data[0] & 7) ? data[0] & 7u : 3u);
	if (!err)
		err = cst_calltree_alloc(&v.tree);
	if (!err)
		err = cst_perfetto_alloc(&v.timeline, sink,
					 &(struct cst_perfetto_opts){.sz = sizeof(struct cst_perfetto_opts),
								     .sym = sym});
	if (!err)
		err = cst_calls_alloc(&v.calls, call_event, &v);
	if (!err)
		err = cst_afdo_alloc(&v.afdo, sym);
	if (!err)
		err = cst_flow_alloc(&v.flow, flow_event, NULL);
	for (size_t i = 1; !err && i + 8 <= size; i += 8) {
		make_elem(data + i, &e, &v.time);
		err = cst_symbolizer_feed(sym, &e, sym_elem, &v);
	}
	if (!err)
		err = cst_calls_finish(v.calls);
	if (!err)
		err = cst_flow_finish(v.flow);
	if (!err)
		err = cst_afdo_finish(v.afdo);
	if (!err)
		write_all(&v, sym, sink, dso);
	cst_flow_free(v.flow);
	cst_afdo_free(v.afdo);
	cst_calls_free(v.calls);
	cst_perfetto_free(v.timeline);
	cst_calltree_free(v.tree);
	cst_report_free(v.rep);
	return 0;
}
