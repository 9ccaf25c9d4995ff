/* The report formats whose models write themselves (call tree, timeline, sample
 * profile, HTML page): each writer only hands the view's model over. */
#include "report_view.h"

int sym_report_write_callgraph(struct cst_report_view *v, FILE *f)
{
	return cst_calltree_write_text(
		v->tree, f,
		&(struct cst_calltree_text_opts){.sz = sizeof(struct cst_calltree_text_opts),
						 .min_share = v->o.min_share});
}

int sym_report_write_folded(struct cst_report_view *v, FILE *f)
{
	return cst_calltree_write_folded(v->tree, f);
}

int sym_report_write_flamegraph(struct cst_report_view *v, FILE *f)
{
	return cst_calltree_write_flamegraph(
		v->tree, f,
		&(struct cst_flamegraph_opts){.sz = sizeof(struct cst_flamegraph_opts),
					      .title = v->o.title});
}

/* The timeline was written while the trace decoded: only its end is left. */
int sym_report_write_perfetto(struct cst_report_view *v, FILE *f)
{
	(void)f;
	return cst_perfetto_finish(v->timeline);
}

int sym_report_write_autofdo(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_autofdo(v->afdo, f);
}

int sym_report_write_profgen(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_profgen(v->afdo, f, v->o.dso);
}

int sym_report_write_llvm_sample(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_llvm_sample(v->afdo, f, v->o.dso);
}

int sym_report_write_lcov(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_lcov(v->afdo, f);
}

int sym_report_write_coverage(struct cst_report_view *v, FILE *f)
{
	return cst_afdo_write_coverage(v->afdo, f);
}

int sym_report_write_html(struct cst_report_view *v, FILE *f)
{
	return cst_html_write(f, &(struct cst_html_input){
					 .sz = sizeof(struct cst_html_input),
					 .title = v->o.title,
					 .rows = v->rows,
					 .nrows = v->nrows,
					 .total = v->total,
					 .tree = v->tree,
					 .profile = v->afdo,
				 });
}
