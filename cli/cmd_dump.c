/* `cstrace dump`: the trace packets of every trace ID with their byte offsets and
 * raw bytes, in the layout of OpenCSD's trc_pkt_lister. */
#include <getopt.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "trace_opts.h"
#include "verb.h"

static const char dump_usage[] =
	"usage: cstrace dump [options] [TRACE]\n"
	"\n"
	"List the trace packets of TRACE (snapshot directory, perf.data or raw dump), per\n"
	"trace ID, as 'Idx:<offset>; ID:<id>; [bytes];\\t<packet>'.\n"
	"\n"
	"options:\n"
	VERB_INPUT_HELP TRACE_OPTS_HELP
	"  -h, --help           this text\n";

struct dump_out {
	FILE *f;
	uint64_t packets;
	int io_errno; /* a write failed (cli_write_failed) */
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
		cli_write_failed(&o->io_errno);
		return -cste_io;
	}
	return 0;
}

int cmd_dump(int argc, char **argv)
{
	static const struct option longopts[] = {
		VERB_LONG_END,
	};
	struct dump_out out = {.f = stdout};
	struct trace_opts topts;
	struct cst_session *session = NULL;
	const char *trace;
	enum verb_parsed parsed;
	int ret, status = 1;

	trace_opts_init(&topts);
	parsed = verb_parse(&(struct verb){"dump", dump_usage, "", longopts, NULL, NULL}, argc, argv,
			    &topts, NULL, &trace);
	if (parsed != verb_run)
		return verb_exit(parsed);
	cli_out_buffer(stdout);
	cli_progress_off(stdout); /* its lines to a terminal: no progress over them */
	ret = trace_opts_open(&topts, trace, stdout, &session);
	if (ret < 0)
		goto out;
	ret = cst_session_dump(session, on_packet, &out);
	ret < 0 ? cli_progress_end() : cli_progress_finish();
	if (!cli_flush_output(stdout, NULL, out.io_errno))
		goto out;
	if (ret < 0)
		goto out;
	if (!out.packets && !topts.session.start_offset) {
		cli_error("%s: no packets found", trace);
		goto out;
	}
	status = 0;
out:
	cst_session_free(session);
	trace_opts_fini(&topts);
	return status;
}
