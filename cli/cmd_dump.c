/* `cstrace dump`: the trace packets of every trace ID with their byte offsets and
 * raw bytes, in the layout of OpenCSD's trc_pkt_lister. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "trace_opts.h"

static const char dump_usage[] =
	"usage: cstrace dump [options] TRACE\n"
	"\n"
	"List the trace packets of TRACE (snapshot directory, perf.data or raw dump), per\n"
	"trace ID, as 'Idx:<offset>; ID:<id>; [bytes];\\t<packet>'.\n"
	"\n"
	"options:\n"
	TRACE_OPTS_HELP
	"  -h, --help           this text\n";

struct dump_out {
	FILE *f;
	uint64_t packets;
	bool io_error;
};

static int on_packet(void *ctx, const struct cst_packet *p)
{
	struct dump_out *o = ctx;

	o->packets++;
	cli_note_offset(p->offset);
	fprintf(o->f, "Idx:%" PRIu64 "; ID:%x; [", p->offset, p->trace_id);
	for (uint32_t i = 0; i < p->raw_size; i++)
		fprintf(o->f, "0x%02x ", p->raw[i]);
	if (fprintf(o->f, "];\t%s\n", p->text) < 0) {
		o->io_error = true;
		return -cste_io;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"help", no_argument, NULL, 'h'},
		TRACE_OPTS_LONG,
		{NULL, 0, NULL, 0},
	};
	struct dump_out out = {.f = stdout};
	struct trace_opts topts;
	struct cst_session *session = NULL;
	int opt, ret, status = 1;

	trace_opts_init(&topts);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		int t = trace_opts_parse(&topts, opt, optarg);

		if (t < 0)
			goto usage_error;
		if (t > 0)
			continue;
		if (opt == 'h') {
			fputs(dump_usage, stdout);
			trace_opts_fini(&topts);
			return 0;
		}
		goto usage_error;
	}
	if (optind != argc - 1) {
		cli_error("dump: one TRACE expected\n%s", dump_usage);
		goto usage_error;
	}
	if (trace_opts_finish(&topts) < 0)
		goto usage_error;
	setvbuf(stdout, NULL, _IOFBF, 1 << 20);
	ret = trace_opts_open(&topts, argv[optind], stdout, &session);
	if (ret < 0)
		goto out;
	ret = cst_session_dump(session, on_packet, &out);
	cli_progress_end();
	fflush(stdout);
	if (out.io_error || ret < 0)
		goto out;
	if (!out.packets && !topts.session.start_offset) {
		cli_error("%s: no packets found", argv[optind]);
		goto out;
	}
	status = 0;
out:
	cst_session_free(session);
	trace_opts_fini(&topts);
	return status;
usage_error:
	trace_opts_fini(&topts);
	return 2;
}
