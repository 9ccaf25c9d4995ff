/* The consumer log's cost: the kernel model (tests/capture/kmodel.c) feeds the consumer
 * record runs with real-sized rings; the consumer's CPU time (the drains only, not the
 * model) is measured, waking when the model's kernel wakes it (the AUX watermark),
 * without a log, with record's default log (no AUX bytes) and with
 * a full stream (--aux-log), interleaved and best of N. Files go to $TMPDIR.
 * usage: consumer_bench [runs] [MiB of trace] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cstrace/capture.h"
#include "cstrace/perfdata.h"
#include "kmodel.h"

static double cpu_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One capture of @mib MiB; returns the consumer's CPU seconds. */
static double run(int mode, uint64_t mib, const char *dir)
{
	char data[512], log[512], old[600];
	uint64_t id = 1;
	struct cst_perf_attr pa = {.type = 0x55, .size = CST_PERF_ATTR_SIZE, .sample_period = 1,
				   .sample_type = cst_capture_sample_type(),
				   .flags = CST_PERF_ATTR_SAMPLE_ID_ALL, .ids = &id, .nids = 1};
	struct kmodel_opts ko = {.data_size = 1 << 18, .aux_size = 4 << 20, .sink_size = 64 << 10,
				 .pid = 1, .tid = 1, .id = 1};
	struct cst_consumer_opts co = {.sz = sizeof(co), .output = data, .attrs = &pa,
				       .nattrs = 1, .page_size = 4096};
	struct cst_record_result res;
	struct cst_consumer *c;
	struct kmodel *m = kmodel_new(&ko);
	struct cst_ring_desc d;
	double spent = 0, t;

	snprintf(data, sizeof(data), "%s/consumer-bench-%d.data", dir, (int)getpid());
	snprintf(log, sizeof(log), "%s/consumer-bench-%d.auxlog", dir, (int)getpid());
	co.aux_log = mode ? log : NULL;
	co.aux_log_light = mode == 1;
	if (!m || cst_consumer_open(&c, &co) < 0)
		exit(1);
	d = kmodel_desc(m);
	cst_consumer_add_ring(c, &d);
	for (uint64_t done = 0; done < mib << 20; done += 48 << 10) {
		kmodel_sched_in(m);
		kmodel_run(m, 48 << 10); /* fits the sink: no truncation */
		kmodel_sched_out(m);
		if (!kmodel_poll(m))
			continue; /* as record: the consumer sleeps until the kernel wakes it */
		t = cpu_now();
		cst_consumer_note_wake(c, 1, 1);
		cst_consumer_drain(c);
		spent += cpu_now() - t;
	}
	t = cpu_now();
	cst_consumer_drain(c);
	spent += cpu_now() - t;
	memset(&res, 0, sizeof(res));
	t = cpu_now();
	cst_consumer_finish(c, 0, &res);
	spent += cpu_now() - t;
	cst_consumer_free(c);
	kmodel_free(m);
	unlink(data);
	unlink(log);
	snprintf(old, sizeof(old), "%s.old", data);
	unlink(old);
	return spent;
}

int main(int argc, char **argv)
{
	int runs = argc > 1 ? atoi(argv[1]) : 5;
	uint64_t mib = argc > 2 ? strtoull(argv[2], NULL, 0) : 256;
	const char *dir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	static const char *const names[] = {"no log", "default log (no AUX bytes)",
					    "full stream (--aux-log)"};
	double best[3] = {1e9, 1e9, 1e9};

	for (int r = 0; r < runs; r++)
		for (int mode = 0; mode < 3; mode++) {
			double s = run(mode, mib, dir);

			if (s < best[mode])
				best[mode] = s;
		}
	printf("consumer CPU time for %llu MiB of AUX through a 4 MiB ring, best of %d:\n",
	       (unsigned long long)mib, runs);
	for (int mode = 0; mode < 3; mode++)
		printf("  %-28s %.3f s  (%+.1f%% against no log)\n", names[mode], best[mode],
		       100.0 * (best[mode] - best[0]) / best[0]);
	printf("goal: the default log adds at most 2%%: %s\n",
	       best[1] <= best[0] * 1.02 ? "met" : "NOT met");
	return 0;
}
