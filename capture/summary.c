/* The recording summary on stderr: what was captured, and every loss by cause with
 * its exact count where the kernel reports one. */
#include "cstrace/capture.h"

#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

static void ring_line(FILE *fp, const char *who, const struct cst_ring_stats *st)
{
	fprintf(fp, "cstrace: %s: %llu bytes of trace in %llu chunk(s), %llu AUX record(s), "
		    "%llu sideband record(s)\n",
		who, (unsigned long long)st->aux_bytes, (unsigned long long)st->chunks,
		(unsigned long long)st->aux_records,
		(unsigned long long)(st->records - st->aux_records));
	if (st->truncated) {
		char words[512];

		fprintf(fp, "cstrace: %s: LOST: %s the event was re-enabled %llu time(s)\n", who,
			cst_aux_truncation_words(st->truncated, st->empty_truncated,
						 st->truncated_late, words, sizeof(words)),
			(unsigned long long)st->reenables);
	} else if (st->reenables)
		fprintf(fp, "cstrace: %s: the AUX area was full %llu time(s): trace was off "
			    "until re-enabled\n",
			who, (unsigned long long)st->reenables);
	if (st->reenable_failures)
		fprintf(fp, "cstrace: %s: LOST: re-enabling the event failed %llu time(s): trace "
			    "stayed off from there\n",
			who, (unsigned long long)st->reenable_failures);
	if (st->collision || st->partial)
		fprintf(fp, "cstrace: %s: %llu AUX record(s) flagged COLLISION, %llu PARTIAL\n", who,
			(unsigned long long)st->collision, (unsigned long long)st->partial);
	if (st->lost_events)
		fprintf(fp, "cstrace: %s: LOST: %llu sideband/AUX record(s) dropped by the kernel "
			    "(data area full, %llu PERF_RECORD_LOST)\n",
			who, (unsigned long long)st->lost_events,
			(unsigned long long)st->lost_records);
	if (st->snapshot_overwritten)
		fprintf(fp, "cstrace: %s: %llu byte(s) overwritten before a snapshot took them "
			    "(snapshot mode keeps the newest)\n",
			who, (unsigned long long)st->snapshot_overwritten);
	if (st->unwritten_bytes)
		fprintf(fp, "cstrace: %s: LOST: %llu byte(s) not written: the output refused them\n",
			who, (unsigned long long)st->unwritten_bytes);
}

const char *cst_aux_truncation_words(uint64_t truncated, uint64_t empty, uint64_t late,
				     char *buf, size_t size)
{
	size_t n = 0;

#define SAY(...) (n += (size_t)snprintf(buf + n, n < size ? size - n : 0, __VA_ARGS__))
	if (!buf || !size)
		return "";
	buf[0] = 0;
	SAY("%llu truncation(s) (AUX records flagged TRUNCATED, %llu with nothing kept): trace "
	    "was dropped, by an amount "
	    "the kernel does not count;",
	    (unsigned long long)truncated, (unsigned long long)empty);
	if (late)
		SAY(" %llu with the ring full because the consumer was late (a bigger AUX area, "
		    "-m, or a consumer that wakes sooner avoids it);",
		    (unsigned long long)late);
	if (truncated > late)
		SAY(" %llu with room in the ring: the sink's own buffer filled before the driver "
		    "copied it out (a bigger sink, the ETR rather than an ETF, or less trace: "
		    "filters, or snapshot mode, avoid it);",
		    (unsigned long long)(truncated - late));
#undef SAY
	return buf;
}

void cst_record_summary(const struct cst_record_result *res, void *out)
{
	FILE *fp = out;
	const struct cst_ring_stats *t;
	bool lost;

	if (!res || !fp)
		return;
	t = &res->total;
	for (int i = 0; i < res->nrings; i++) {
		char who[32];

		if (res->ring_cpu[i] < 0)
			snprintf(who, sizeof(who), "per-thread");
		else
			snprintf(who, sizeof(who), "cpu %d", res->ring_cpu[i]);
		ring_line(fp, who, &res->per_ring[i]);
	}
	fprintf(fp, "cstrace: wrote %s: %llu bytes, %llu bytes of trace%s\n",
		res->output ? res->output : "perf.data", (unsigned long long)res->file_bytes,
		(unsigned long long)t->aux_bytes,
		res->snapshot ? " (snapshot mode)" : "");
	if (res->triggered)
		fprintf(fp, "cstrace: the trigger fired (%s) at 0x%llx: the snapshot holds what led "
			    "up to it%s\n",
			res->trigger_what, (unsigned long long)res->trigger_ip,
			res->trigger_paused ? "" : ", and what ran until cstrace took it");
	else if (res->trigger)
		fprintf(fp, "cstrace: the trigger (%s) never fired: the snapshot is the one taken at "
			    "the end\n", res->trigger_what);
	lost = t->truncated || t->lost_events || t->unwritten_bytes || t->reenables;
	if (!lost)
		fprintf(fp, "cstrace: nothing lost%s\n",
			t->snapshot_overwritten ? " beyond what snapshots overwrite" : "");
	if (res->output_failed)
		fprintf(fp, "cstrace: the output ran out of space: the file is finished and holds "
			    "everything up to the last complete chunk; %llu byte(s) were not written\n",
			(unsigned long long)t->unwritten_bytes);
	if (res->interrupted)
		fprintf(fp, "cstrace: interrupted: the file holds the trace up to that point\n");
	if (res->exit_status >= 0) {
		if (WIFSIGNALED(res->exit_status))
			fprintf(fp, "cstrace: the command was killed by signal %d (%s)%s\n",
				WTERMSIG(res->exit_status), strsignal(WTERMSIG(res->exit_status)),
				WCOREDUMP(res->exit_status) ? ", core dumped" : "");
		else if (WIFEXITED(res->exit_status) && WEXITSTATUS(res->exit_status))
			fprintf(fp, "cstrace: the command exited with status %d\n",
				WEXITSTATUS(res->exit_status));
	}
}
