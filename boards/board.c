/* The board model: device-type names, freeing a profile and what callers may ask of
 * one (struct cst_board is opaque to them). */
#include "board_int.h"

#include <stdlib.h>

static const char *const bdev_names[cst_bdev_max] = {
	[cst_bdev_etm] = "etm",       [cst_bdev_stm] = "stm",   [cst_bdev_funnel] = "funnel",
	[cst_bdev_replicator] = "replicator", [cst_bdev_etf] = "etf", [cst_bdev_etr] = "etr",
	[cst_bdev_etb] = "etb",       [cst_bdev_tpiu] = "tpiu", [cst_bdev_cti] = "cti",
};

const char *cst_bdev_type_name(enum cst_bdev_type type)
{
	if ((unsigned)type >= cst_bdev_max)
		return "?";
	return bdev_names[type];
}

void cst_board_free(struct cst_board *b)
{
	if (!b)
		return;
	free(b->name);
	free(b->title);
	free(b->file);
	for (int i = 0; i < b->ncompatibles; i++)
		free(b->compatibles[i]);
	free(b->compatibles);
	free(b->sysfs_parent);
	free(b->dt_overlay);
	free(b->dt_upstream);
	for (int i = 0; i < b->ncpus; i++) {
		free(b->cpus[i].core);
		free(b->cpus[i].cluster);
	}
	free(b->cpus);
	for (int i = 0; i < b->ndevices; i++) {
		struct cst_board_device *d = &b->devices[i];

		free(d->name);
		free(d->dt_node);
		free(d->compatible);
		free(d->arch);
		free(d->note);
	}
	free(b->devices);
	free(b->links);
	for (int i = 0; i < b->nkconfig; i++)
		free(b->kconfig[i]);
	free(b->kconfig);
	for (int i = 0; i < b->nfirmware; i++)
		free(b->firmware[i]);
	free(b->firmware);
	for (int i = 0; i < b->nissues; i++) {
		free(b->issues[i].id);
		free(b->issues[i].symptom);
		free(b->issues[i].workaround);
		free(b->issues[i].check);
	}
	free(b->issues);
	free(b);
}

const char *cst_board_name(const struct cst_board *b)
{
	return b ? b->name : NULL;
}

const char *cst_board_title(const struct cst_board *b)
{
	return b && b->title ? b->title : "";
}

const char *cst_board_file(const struct cst_board *b)
{
	return b ? b->file : NULL;
}

int cst_board_ndevices(const struct cst_board *b)
{
	return b ? b->ndevices : 0;
}

const struct cst_board_device *cst_board_device(const struct cst_board *b, int i)
{
	return b && i >= 0 && i < b->ndevices ? &b->devices[i] : NULL;
}
