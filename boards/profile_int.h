/* Board profiles while they are read: the parser's state, shared by the INI handlers
 * (profile.c) and the checks of the whole file (profile_check.c). */
#ifndef CSTRACE_PROFILE_INT_H
#define CSTRACE_PROFILE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "board_int.h"

struct parse {
	struct cst_board *b;
	const char *file;
	int line;        /* line being parsed (counted by the reader) */
	FILE *fp;
	char err[256];   /* first error */
	int err_line;
	char section[128];
	int dev;         /* current device, or -1 */
	int cpu;         /* current cpu entry, or -1 */
	int issue;       /* current issue, or -1 */
	int *dev_line;   /* line where each device's section starts */
	int *base_line;  /* line of each device's base (0: none yet) */
	bool cont;       /* the line being parsed is an indented continuation */
	/* The text value set last, which a continuation extends: kept as the array
	 * it lives in (NULL: the board itself) and a byte offset into it, never as
	 * a pointer, since a later CST_GROW may move the array. */
	void **last_arr;
	size_t last_off;
	bool has_last;
	int long_line;   /* first line too long for libinih, or 0 */
	int section_line;/* line of the last [section] header read */
	size_t cap_dev_line, cap_base_line;
};

/* Record the first error, at line p->line; returns 0 (stop parsing). */
int brd_fail(struct parse *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Set *@dst, a field of the board (@arr NULL) or of an element of the array
 * *@arr, to a copy of @v. Returns 1, or 0 after brd_fail. */
int brd_set_str(struct parse *p, void **arr, char **dst, const char *v);
/* The checks of the whole file; 1 when it passes, else 0 after brd_fail. */
int brd_profile_finish(struct parse *p);

#endif
