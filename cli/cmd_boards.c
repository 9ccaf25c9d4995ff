/* `cstrace boards`: list and show the board profiles, write fixture trees from them,
 * and print the decode sources a profile gives. Option parsing only; work is in boards/. */
#include "cli.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cstrace/boards.h"

static void boards_usage(FILE *out)
{
	fprintf(out,
		"usage: cstrace boards list [--boards-dir DIR]\n"
		"       cstrace boards show NAME [--boards-dir DIR]\n"
		"       cstrace boards fixture NAME DIR [--fault F]... [--reverse-probe]\n"
		"                                      [--boards-dir DIR]\n"
		"       cstrace boards sources NAME [--cpu LIST] [--stm] [--boards-dir DIR]\n"
		"\n"
		"Board profiles say what cstrace knows about a board's CoreSight set-up: cores,\n"
		"trace sources with their expected ID registers, links and sinks by base address,\n"
		"the kernel configuration, firmware prerequisites and known issues.\n"
		"\n"
		"  list      the profiles found (NAME and title)\n"
		"  show      everything a profile says, with the trace topology\n"
		"  fixture   write a fake system tree (/sys, /proc, /boot) for tests and 'doctor --root';\n"
		"            faults: missing-sink, wrong-etm-arch, paranoid, cpuidle-on, no-kconfig,\n"
		"            kconfig-etm-off, no-debugfs, no-pmu, no-coresight\n"
		"  sources   the trace-source settings 'decode --board' uses for a raw dump\n"
		"\n"
		"  --boards-dir DIR  read profiles from DIR (default: $CSTRACE_BOARDS_DIR, else %s)\n"
		"  --cpu LIST        CPUs to include, e.g. 0,1 or 0-3 (default: all)\n"
		"  --stm             also list the STM source\n",
		cst_boards_default_dir());
}

static int print_name(void *ctx, const char *name)
{
	const char *dir = ctx;
	struct cst_board *b;

	if (cst_board_find(&b, dir, name, &cli_log) < 0) {
		printf("%-14s (unreadable: see the error above)\n", name);
		return 0;
	}
	printf("%-14s %s\n", name, cst_board_title(b));
	cst_board_free(b);
	return 0;
}

static int boards_list(const char *dir)
{
	int err = cst_boards_foreach(dir, print_name, (void *)dir);

	if (err < 0) {
		cli_error("cannot list board profiles in %s: %s",
			  dir ? dir : cst_boards_default_dir(), cst_strerror(err));
		return 1;
	}
	return 0;
}

static int boards_show(const char *dir, const char *name)
{
	struct cst_board *b;

	if (cst_board_find(&b, dir, name, &cli_log) < 0)
		return 1;
	cst_board_print(b, stdout, dir ? dir : cst_boards_default_dir());
	cst_board_free(b);
	return 0;
}

static int boards_fixture(const char *dir, const char *name, const char *out, unsigned faults,
			  bool reverse)
{
	struct cst_fixture_opts o = {sizeof(o), faults, reverse, NULL};
	struct cst_board *b;
	int e, err = cst_board_find(&b, dir, name, &cli_log);

	if (err < 0)
		return 1;
	err = cst_board_fixture_write(b, out, &o);
	e = errno;
	cst_board_free(b);
	if (err < 0) {
		cli_error("%s: cannot write the fixture tree: %s", out,
			  err == -cste_io && e ? strerror(e) : cst_strerror(err));
		return 1;
	}
	return 0;
}

/* "0,1" or "0-3,5" into a bit mask. Returns 0 or -1. */
static int parse_cpu_list(const char *s, uint64_t *mask)
{
	char *end;

	*mask = 0;
	while (*s) {
		unsigned long a = strtoul(s, &end, 10), b = a;

		if (end == s)
			return -1;
		if (*end == '-') {
			s = end + 1;
			b = strtoul(s, &end, 10);
			if (end == s)
				return -1;
		}
		if (a > b || b > 63)
			return -1;
		for (unsigned long c = a; c <= b; c++)
			*mask |= 1ull << c;
		s = end;
		if (*s == ',')
			s++;
		else if (*s)
			return -1;
	}
	return *mask ? 0 : -1;
}

static int boards_sources(const char *dir, const char *name, uint64_t mask, bool stm)
{
	struct cst_board_sources_opts o = {.sz = sizeof(o), .cpu_mask = mask, .with_stm = stm};
	struct cst_source_cfg src[64];
	struct cst_board *b;
	int n, err = cst_board_find(&b, dir, name, &cli_log);

	if (err < 0)
		return 1;
	n = cst_board_sources(b, &o, src, 64);
	cst_board_free(b);
	if (n < 0) {
		cli_error("%s: no trace sources for that selection: %s", name, cst_strerror(n));
		return 1;
	}
	for (int i = 0; i < n && i < 64; i++) {
		const struct cst_source_cfg *c = &src[i];

		printf("%s cpu=%d core=%s protocol=%s", c->name, c->cpu,
		       c->core_name[0] ? c->core_name : "-", cst_protocol_name(c->protocol));
		if (c->protocol == cst_proto_etmv3 || c->protocol == cst_proto_ptm)
			printf(" etmidr=0x%08x etmccer=0x%08x etmcr=0x%08x traceid=0x%02x\n",
			       c->regs.etmv3.etmidr, c->regs.etmv3.etmccer, c->regs.etmv3.etmcr,
			       c->regs.etmv3.etmtraceidr);
		else if (c->protocol == cst_proto_stm)
			printf(" stmtcsr=0x%08x\n", c->regs.stm.stmtcsr);
		else
			printf(" trcidr0=0x%08x trcidr1=0x%08x trcidr2=0x%08x trcidr8=0x%08x "
			       "trcauthstatus=0x%08x trcconfigr=0x%08x traceid=0x%02x\n",
			       c->regs.etmv4.trcidr0, c->regs.etmv4.trcidr1, c->regs.etmv4.trcidr2,
			       c->regs.etmv4.trcidr8, c->regs.etmv4.trcauthstatus,
			       c->regs.etmv4.trcconfigr, c->regs.etmv4.trctraceidr);
	}
	return 0;
}

int cmd_boards(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"boards-dir", required_argument, NULL, 'd'},
		{"fault", required_argument, NULL, 'f'},
		{"reverse-probe", no_argument, NULL, 'r'},
		{"cpu", required_argument, NULL, 'c'},
		{"stm", no_argument, NULL, 's'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *sub;
	unsigned faults = 0;
	bool reverse = false, stm = false;
	uint64_t mask = 0;
	int c;

	if (argc < 2) {
		boards_usage(stderr);
		return 2;
	}
	sub = argv[1];
	if (!strcmp(sub, "--help") || !strcmp(sub, "-h") || !strcmp(sub, "help")) {
		boards_usage(stdout);
		return 0;
	}
	argc--;
	argv++;
	optind = 1;
	while ((c = cli_getopt("boards", argc, argv, "h", longopts)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 'f': {
			unsigned f = cst_fixture_fault_parse(optarg);

			if (!f) {
				cli_error("unknown fault '%s'; see 'cstrace boards --help'", optarg);
				return 2;
			}
			faults |= f;
			break;
		}
		case 'r':
			reverse = true;
			break;
		case 'c':
			if (parse_cpu_list(optarg, &mask) < 0) {
				cli_error("--cpu wants a list like 0,1 or 0-3, not '%s'", optarg);
				return 2;
			}
			break;
		case 's':
			stm = true;
			break;
		case 'h':
			boards_usage(stdout);
			return 0;
		default:
			return 2; /* cli_getopt said what was wrong, in one line */
		}
	}
	argc -= optind;
	argv += optind;
	if (!strcmp(sub, "list") && argc == 0)
		return boards_list(dir);
	if (!strcmp(sub, "show") && argc == 1)
		return boards_show(dir, argv[0]);
	if (!strcmp(sub, "fixture") && argc == 2)
		return boards_fixture(dir, argv[0], argv[1], faults, reverse);
	if (!strcmp(sub, "sources") && argc == 1)
		return boards_sources(dir, argv[0], mask, stm);
	boards_usage(stderr);
	return 2;
}
