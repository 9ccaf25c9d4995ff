/* Merging `report --format=json` files (cstrace merge): rows summed by sym, dso
 * and srcline, shares recomputed, rows in order of instructions. */
#include "views_int.h"

#include <stdlib.h>
#include <string.h>

#include <jansson.h>

/* report --format=json: rows summed by (sym, dso, srcline); line coverage of a
 * function is the most any capture reached (which lines is not recorded). */
static const char *const row_sums[] = {"insns", "entries", "taken", "not_taken", "children"};
static const char *const row_maxes[] = {"lines_hit", "lines_total"};

static const char *str_or(json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

static int json_row_key(const void *x, const void *y)
{
	json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	int c = strcmp(str_or(a, "sym"), str_or(b, "sym"));

	if (!c)
		c = strcmp(str_or(a, "dso"), str_or(b, "dso"));
	return c ? c : strcmp(str_or(a, "srcline"), str_or(b, "srcline"));
}

static int json_row_order(const void *x, const void *y)
{
	json_t *a = *(json_t *const *)x, *b = *(json_t *const *)y;
	json_int_t i = json_integer_value(json_object_get(a, "insns"));
	json_int_t k = json_integer_value(json_object_get(b, "insns"));

	return i != k ? (i < k ? 1 : -1) : json_row_key(x, y);
}

int sym_merge_json(const char *const *paths, int n, FILE *out, const struct cst_log *log)
{
	json_t **rows = NULL;
	size_t nrows = 0, cap = 0, w = 0;
	json_int_t total = 0, ranges = 0;
	json_t *root, *arr;
	int err = 0;

	for (int i = 0; i < n && !err; i++) {
		json_error_t je;
		json_t *doc = json_load_file(paths[i], 0, &je), *r;
		size_t k;

		if (!doc || !json_is_array(json_object_get(doc, "rows")) ||
		    !json_is_integer(json_object_get(doc, "total_insns"))) {
			cst_logf(log, cst_log_error, "%s:%d: %s", paths[i], doc ? 1 : je.line,
				 doc ? "expected cstrace report JSON (total_insns, rows)" : je.text);
			json_decref(doc);
			err = -cste_format;
			break;
		}
		total += json_integer_value(json_object_get(doc, "total_insns"));
		ranges += json_integer_value(json_object_get(doc, "ranges"));
		json_array_foreach(json_object_get(doc, "rows"), k, r) {
			if (!json_is_object(r) || !json_is_integer(json_object_get(r, "insns"))) {
				cst_logf(log, cst_log_error, "%s:1: row %zu: expected an object with insns",
					 paths[i], k);
				err = -cste_format;
				break;
			}
			if (CST_GROW(rows, cap, nrows + 1) < 0) {
				err = -cste_nomem;
				break;
			}
			rows[nrows++] = json_deep_copy(r);
		}
		json_decref(doc);
	}
	if (!err) {
		if (nrows > 1) /* no rows: rows is NULL, which qsort must not see */
			qsort(rows, nrows, sizeof(*rows), json_row_key);
		for (size_t i = 0; i < nrows; i++) {
			if (w && !json_row_key(&rows[w - 1], &rows[i])) {
				for (size_t k = 0; k < sizeof(row_sums) / sizeof(row_sums[0]); k++) {
					json_t *a = json_object_get(rows[w - 1], row_sums[k]);
					json_t *b = json_object_get(rows[i], row_sums[k]);

					if (a && b)
						json_integer_set(a, json_integer_value(a) + json_integer_value(b));
				}
				for (size_t k = 0; k < sizeof(row_maxes) / sizeof(row_maxes[0]); k++) {
					json_t *a = json_object_get(rows[w - 1], row_maxes[k]);
					json_t *b = json_object_get(rows[i], row_maxes[k]);

					if (a && b && json_integer_value(b) > json_integer_value(a))
						json_integer_set(a, json_integer_value(b));
				}
				json_decref(rows[i]);
			} else {
				rows[w++] = rows[i];
			}
		}
		nrows = w;
		if (nrows > 1)
			qsort(rows, nrows, sizeof(*rows), json_row_order);
		root = json_object();
		arr = json_array();
		json_object_set_new(root, "total_insns", json_integer(total));
		json_object_set_new(root, "ranges", json_integer(ranges));
		for (size_t i = 0; i < nrows; i++) {
			json_int_t insns = json_integer_value(json_object_get(rows[i], "insns"));

			json_object_set_new(rows[i], "share",
					    json_real(total ? (double)insns / (double)total : 0));
			json_array_append_new(arr, rows[i]);
		}
		nrows = 0;
		json_object_set_new(root, "rows", arr);
		if (json_dumpf(root, out, JSON_INDENT(1)) < 0)
			err = -cste_io;
		fputc('\n', out);
		json_decref(root);
	}
	for (size_t i = 0; i < nrows; i++)
		json_decref(rows[i]);
	free(rows);
	return err;
}

