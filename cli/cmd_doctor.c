/* `cstrace doctor`: check a live system (or a fixture tree) for CoreSight tracing and
 * print each check as ok / problem with the exact fix. The checks live in boards/. */
#include "cli.h"

#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cstrace/boards.h"

static void doctor_usage(FILE *out)
{
	fprintf(out,
		"usage: cstrace doctor [--board NAME] [--root DIR] [--boards-dir DIR]\n"
		"\n"
		"Check this system for CoreSight tracing: kernel configuration, the cs_etm PMU and\n"
		"its sinks, every device of the board profile (matched by base address), each\n"
		"ETM's ID registers, perf_event_paranoid, CPU idle states on boards that lose\n"
		"trace in idle, and debugfs. Each check prints 'ok' or 'problem' with the fix;\n"
		"what fails only because of a problem above ('so') is listed under it, once.\n"
		"\n"
		"  --board NAME      check against this profile (default: recognise the board from\n"
		"                    /proc/device-tree/compatible; see 'cstrace boards list')\n"
		"  --root DIR        read /sys, /proc and /boot under DIR (a fixture tree, see\n"
		"                    'cstrace boards fixture')\n"
		"  --boards-dir DIR  read profiles from DIR\n"
		"\n"
		"Exit status: 0 all checks passed, 1 problems found, 2 usage error,\n"
		"3 this system has no CoreSight at all.\n");
}

struct counts {
	int problems, follows;
};

static void print_check(void *ctx, const struct cst_check *c)
{
	static const char *const words[] = {"ok", "problem", "skip", "  so"};
	struct counts *n = ctx;

	/* a consequence sits under its cause: its fix is the cause's */
	printf("%-8s %-9s %s: %s\n", words[c->verdict], c->id, c->subject, c->detail);
	if (c->verdict == cst_verdict_follows)
		n->follows++;
	if (c->verdict == cst_verdict_problem) {
		n->problems++;
		if (c->fix)
			printf("%-8s %-9s fix: %s\n", "", "", c->fix);
	}
}

int cmd_doctor(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"board", required_argument, NULL, 'b'},
		{"root", required_argument, NULL, 'r'},
		{"boards-dir", required_argument, NULL, 'd'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *board_name = NULL, *root_dir = "/", *dir = NULL;
	struct cst_doctor_opts o = {.sz = sizeof(o), .log = &cli_log};
	struct cst_board *board = NULL;
	struct cst_sysroot *root;
	struct counts n = {0, 0};
	int c, ret;

	optind = 1;
	while ((c = cli_getopt("doctor", argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 'b':
			board_name = optarg;
			break;
		case 'r':
			root_dir = optarg;
			break;
		case 'd':
			dir = optarg;
			break;
		case 'h':
			doctor_usage(stdout);
			return 0;
		default:
			return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	if (optind != argc) {
		doctor_usage(stderr);
		return 2;
	}
	if (board_name && cst_board_find(&board, dir, board_name, &cli_log) < 0)
		return 2;
	if (cst_sysroot_alloc(&root, root_dir) < 0) {
		cli_error("--root %s: path too long", root_dir);
		cst_board_free(board);
		return 2;
	}
	o.board = board;
	o.boards_dir = dir;
	ret = cst_doctor_run(root, &o, print_check, &n);
	cst_sysroot_free(root);
	cst_board_free(board);
	if (ret < 0) {
		cli_error("doctor failed: %s", cst_strerror(ret));
		return 1;
	}
	if (ret == cst_doctor_no_coresight) {
		printf("\nno CoreSight on this system: nothing to trace with\n");
		return 3;
	}
	if (n.problems && n.follows)
		printf("\n%d problem%s found (%d more follow%s from %s, listed under %s)\n",
		       n.problems, n.problems > 1 ? "s" : "", n.follows, n.follows > 1 ? "" : "s",
		       n.problems > 1 ? "them" : "it", n.problems > 1 ? "its cause" : "it");
	else if (n.problems)
		printf("\n%d problem%s found\n", n.problems, n.problems > 1 ? "s" : "");
	else
		printf("\nall checks passed: ready for 'cstrace record'\n");
	return n.problems ? 1 : 0;
}
