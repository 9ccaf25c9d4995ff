/* perf.data sideband: who runs on each CPU or in each per-thread buffer
 * (ITRACE_START, SWITCH), the threads table (COMM, FORK, MMAP), memory maps. */
#include "perf_int.h"

#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PROT_EXEC_BIT 0x4
#define MISC_COMM_EXEC (1u << 13)
#define MISC_MMAP_DATA (1u << 13)

/* ------------------------------------------------------------- threads */

static struct thread *thread_find(const struct cst_perf_input *in, int32_t tid)
{
	for (size_t i = in->nthreads; i-- > 0;)
		if (in->threads[i].tid == tid)
			return &in->threads[i];
	return NULL;
}

void dec_pi_thread_set(struct cst_perf_input *in, int32_t tid, int32_t pid)
{
	struct thread *t = thread_find(in, tid);

	if (t) {
		t->pid = pid;
		return;
	}
	if (CST_GROW(in->threads, in->cap_threads, in->nthreads + 1) < 0)
		return;
	in->threads[in->nthreads++] = (struct thread){tid, pid};
}

int32_t dec_pi_pid_of(const struct cst_perf_input *in, int32_t tid)
{
	struct thread *t = thread_find(in, tid);

	return t ? t->pid : -1;
}

struct running *dec_pi_running_get(struct cst_perf_input *in, int32_t key)
{
	for (size_t i = 0; i < in->nrun; i++)
		if (in->run[i].key == key)
			return &in->run[i];
	if (CST_GROW(in->run, in->cap_run, in->nrun + 1) < 0)
		return NULL;
	in->run[in->nrun] = (struct running){key, -1, -1};
	return &in->run[in->nrun++];
}
int dec_pi_sideband(struct cst_perf_input *in, const struct cst_perf_record *rec,
		    cst_sideband_fn sb_fn, void *ctx)
{
	struct cst_sideband sb;
	struct running *run;
	int32_t cpu = rec->sid.have_cpu ? (int32_t)rec->sid.cpu : -1;

	memset(&sb, 0, sizeof(sb));
	sb.pid = rec->sid.have_tid ? (int32_t)rec->sid.pid : -1;
	sb.tid = rec->sid.have_tid ? (int32_t)rec->sid.tid : -1;
	sb.cpu = cpu;
	sb.time = rec->sid.have_time ? rec->sid.time : 0;
	switch (rec->type) {
	case cst_perf_rec_comm:
		if (in->sb_apply) {
			dec_pi_thread_set(in, (int32_t)rec->u.comm.tid, (int32_t)rec->u.comm.pid);
			if (rec->misc & MISC_COMM_EXEC)
				dec_perf_mem_drop_pid(in->mem, (int32_t)rec->u.comm.pid);
		}
		sb.type = cst_sb_comm;
		sb.exec = rec->misc & MISC_COMM_EXEC;
		sb.pid = (int32_t)rec->u.comm.pid;
		sb.tid = (int32_t)rec->u.comm.tid;
		sb.filename = rec->u.comm.comm;
		break;
	case cst_perf_rec_fork:
	case cst_perf_rec_exit:
		if (rec->type == cst_perf_rec_fork && in->sb_apply)
			dec_pi_thread_set(in, (int32_t)rec->u.fork.tid, (int32_t)rec->u.fork.pid);
		sb.type = rec->type == cst_perf_rec_fork ? cst_sb_fork : cst_sb_exit;
		sb.pid = (int32_t)rec->u.fork.pid;
		sb.tid = (int32_t)rec->u.fork.tid;
		sb.ppid = (int32_t)rec->u.fork.ppid;
		sb.ptid = (int32_t)rec->u.fork.ptid;
		sb.time = rec->u.fork.time;
		break;
	case cst_perf_rec_mmap:
	case cst_perf_rec_mmap2: {
		bool exec = rec->type == cst_perf_rec_mmap2 ? (rec->u.mmap.prot & PROT_EXEC_BIT)
							    : !(rec->misc & MISC_MMAP_DATA);

		if (!exec)
			return 0;
		if (in->sb_apply) {
			dec_pi_thread_set(in, (int32_t)rec->u.mmap.tid, (int32_t)rec->u.mmap.pid);
			dec_perf_mem_add_map(in->mem, (int32_t)rec->u.mmap.pid, rec->u.mmap.addr,
					 rec->u.mmap.len, rec->u.mmap.pgoff, rec->u.mmap.filename,
					 rec->u.mmap.build_id, rec->u.mmap.build_id_size);
		}
		sb.type = cst_sb_mmap;
		sb.pid = (int32_t)rec->u.mmap.pid;
		sb.tid = (int32_t)rec->u.mmap.tid;
		sb.addr = rec->u.mmap.addr;
		sb.len = rec->u.mmap.len;
		sb.pgoff = rec->u.mmap.pgoff;
		sb.filename = rec->u.mmap.filename;
		sb.build_id = rec->u.mmap.build_id_size ? rec->u.mmap.build_id : NULL;
		sb.build_id_size = rec->u.mmap.build_id_size;
		if (!sb.build_id) {
			/* an MMAP without one (perf's kernel and modules, simpleperf's):
			 * the BUILD_ID feature's, which code reads check too */
			uint8_t n = 0;

			sb.build_id = dec_perf_mem_build_id(in->mem, sb.filename, &n);
			sb.build_id_size = sb.build_id ? n : 0;
		}
		break;
	}
	case cst_perf_rec_itrace_start:
		if (!in->sb_apply)
			return 0;
		dec_pi_thread_set(in, (int32_t)rec->u.itrace_start.tid, (int32_t)rec->u.itrace_start.pid);
		/* per-CPU: keyed by CPU; without a CPU (per-thread), by thread */
		run = dec_pi_running_get(in, cpu >= 0 ? cpu : -2 - (int32_t)rec->u.itrace_start.tid);
		if (run) {
			run->pid = (int32_t)rec->u.itrace_start.pid;
			run->tid = (int32_t)rec->u.itrace_start.tid;
		}
		return 0;
	case cst_perf_rec_switch:
	case cst_perf_rec_switch_cpu_wide:
		sb.type = rec->u.sw.out ? cst_sb_switch_out : cst_sb_switch_in;
		if (in->sb_apply && cpu >= 0 && (run = dec_pi_running_get(in, cpu))) {
			if (!rec->u.sw.out) {
				run->pid = sb.pid;
				run->tid = sb.tid;
			} else if (rec->type == cst_perf_rec_switch_cpu_wide) {
				run->pid = (int32_t)rec->u.sw.next_prev_pid;
				run->tid = (int32_t)rec->u.sw.next_prev_tid;
			}
		}
		break;
	case cst_perf_rec_lost:
		sb.type = cst_sb_lost;
		sb.lost = rec->u.lost.lost;
		break;
	case cst_perf_rec_lost_samples:
		sb.type = cst_sb_lost;
		sb.loss = cst_sb_loss_samples;
		sb.lost = rec->u.lost_samples.lost;
		break;
	default:
		return 0;
	}
	return sb_fn ? sb_fn(ctx, &sb) : 0;
}
