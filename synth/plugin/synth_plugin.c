/* QEMU TCG plugin for synth: streams every executed instruction (about 30x faster than
 * the -d exec log) as 4-byte IDs, each ID defined once with the instruction's bytes. */
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "qemu_plugin_api.h"

/* The stream (little-endian u32 words): an executed instruction is its ID (< 2^31);
 * a definition is 0xffffffff, ID, vaddr low, vaddr high, size, then the bytes padded
 * to 4; 0xfffffffe, N says that vCPU N (guest thread N) executes what follows;
 * 0xfffffffd, T that the vCPU's thread is T (said before its first instruction,
 * and again when a later thread takes the vCPU over). Definitions come before the
 * first execution of their ID. */
#define DEF_MARK 0xffffffffu
#define CPU_MARK 0xfffffffeu
#define THREAD_MARK 0xfffffffdu
#define MAX_VCPUS 64

__attribute__((visibility("default"))) int qemu_plugin_version = 1;

/* What the stream holds that the FIFO has not had yet. QEMU 7.2 ends on a guest's
 * fatal signal (a crash, abort()) without calling the plugin's exit callback:
 * what sat in this process's memory alone would be lost, and it is the end of the
 * run, where the crash is. So it sits in a file synth names (tail=), mapped
 * shared: the kernel keeps what was stored there whatever becomes of QEMU, and
 * synth takes from it, after the FIFO's end, what the FIFO did not bring
 * (synth/plugin_reader.c reads this layout). */
#define TAIL_MAGIC 0x4c49415448545953ull /* "SYTHTAIL" */
struct tail {
	uint64_t magic;
	uint64_t start; /* the stream offset of data[0] */
	uint64_t len;   /* bytes of data not yet written to the FIFO */
	uint8_t data[1 << 20];
};

/* One plugin instance per QEMU process: the output state has to live somewhere the
 * C callbacks reach, and QEMU passes no context to the exec callbacks but userdata. */
static int out_fd = -1;
static struct tail *tail;
static uint32_t next_id;
static unsigned int last_vcpu;
/* each vCPU's thread as last said; a guest thread is a host thread in QEMU's
 * user mode, with the same ID */
static uint32_t vcpu_tid[MAX_VCPUS];
static __thread uint32_t my_tid;
/* Guest threads run in parallel host threads: one stream, so one lock. */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* Whatever point QEMU dies at, synth finds each byte in the FIFO or past what
 * the FIFO brought in the tail: start moves only after the write. */
static void flush_out(void)
{
	uint64_t off = 0, len = tail->len;

	while (off < len) {
		ssize_t n = write(out_fd, tail->data + off, len - off);
		if (n <= 0)
			_exit(120); /* the reader is gone: nothing useful left to do */
		off += (uint64_t)n;
	}
	tail->start += len;
	tail->len = 0;
}

static void put32(uint32_t v)
{
	uint8_t *p;

	if (tail->len + 4 > sizeof(tail->data))
		flush_out();
	p = tail->data + tail->len;
	p[0] = (uint8_t)v;
	p[1] = (uint8_t)(v >> 8);
	p[2] = (uint8_t)(v >> 16);
	p[3] = (uint8_t)(v >> 24);
	tail->len += 4;
}

/* A guest fork() forks QEMU: the child would go on writing this stream, with
 * IDs the parent hands out too and what the parent had not written yet. The
 * stream is the parent's: it is written out before the fork, and the child
 * writes nothing (synth says that the children went untraced). */
static void before_fork(void)
{
	pthread_mutex_lock(&out_lock);
	if (out_fd >= 0)
		flush_out();
}

static void after_fork_parent(void)
{
	pthread_mutex_unlock(&out_lock);
}

static void after_fork_child(void)
{
	if (out_fd >= 0)
		close(out_fd);
	out_fd = -1; /* the tail is the parent's: the child never touches it */
	pthread_mutex_unlock(&out_lock);
}

static void on_exec(unsigned int vcpu, void *udata)
{
	pthread_mutex_lock(&out_lock);
	if (out_fd < 0) { /* a forked child */
		pthread_mutex_unlock(&out_lock);
		return;
	}
	if (vcpu != last_vcpu) {
		put32(CPU_MARK);
		put32(vcpu);
		last_vcpu = vcpu;
	}
	if (!my_tid)
		my_tid = (uint32_t)syscall(SYS_gettid);
	if (vcpu < MAX_VCPUS && vcpu_tid[vcpu] != my_tid) {
		put32(THREAD_MARK);
		put32(my_tid);
		vcpu_tid[vcpu] = my_tid;
	}
	put32((uint32_t)(uintptr_t)udata);
	pthread_mutex_unlock(&out_lock);
}

static void on_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb);
	pthread_mutex_lock(&out_lock);
	if (out_fd < 0) { /* a forked child: nothing is traced (before_fork) */
		pthread_mutex_unlock(&out_lock);
		return;
	}
	for (size_t i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		uint64_t va = qemu_plugin_insn_vaddr(insn);
		uint32_t size = (uint32_t)qemu_plugin_insn_size(insn);
		const uint8_t *data = qemu_plugin_insn_data(insn);
		uint32_t iid = next_id++;
		put32(DEF_MARK);
		put32(iid);
		put32((uint32_t)va);
		put32((uint32_t)(va >> 32));
		put32(size);
		for (uint32_t b = 0; b < size; b += 4) {
			uint32_t w = 0;
			for (uint32_t k = 0; k < 4 && b + k < size; k++)
				w |= (uint32_t)data[b + k] << (8 * k);
			put32(w);
		}
		qemu_plugin_register_vcpu_insn_exec_cb(insn, on_exec, QEMU_PLUGIN_CB_NO_REGS,
						       (void *)(uintptr_t)iid);
	}
	pthread_mutex_unlock(&out_lock);
}

static void on_exit_cb(qemu_plugin_id_t id, void *p)
{
	pthread_mutex_lock(&out_lock);
	if (out_fd >= 0) {
		flush_out();
		close(out_fd);
		out_fd = -1;
	}
	pthread_mutex_unlock(&out_lock);
}

__attribute__((visibility("default"))) int qemu_plugin_install(qemu_plugin_id_t id,
							       const qemu_info_t *info, int argc,
							       char **argv)
{
	const char *path = NULL, *tail_path = NULL;
	for (int i = 0; i < argc; i++) {
		if (!strncmp(argv[i], "out=", 4))
			path = argv[i] + 4;
		if (!strncmp(argv[i], "tail=", 5))
			tail_path = argv[i] + 5;
	}
	if (!path)
		return -1;
	out_fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600); /* executed addresses: private */
	if (out_fd < 0)
		return -1;
	if (tail_path) {
		int fd = open(tail_path, O_RDWR | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return -1;
		tail = ftruncate(fd, sizeof(*tail)) != 0
			       ? MAP_FAILED
			       : mmap(NULL, sizeof(*tail), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		close(fd);
		if (tail == MAP_FAILED)
			return -1;
	} else {
		/* no one to take a tail: a private one */
		tail = mmap(NULL, sizeof(*tail), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			    -1, 0);
		if (tail == MAP_FAILED)
			return -1;
	}
	tail->start = tail->len = 0;
	tail->magic = TAIL_MAGIC;
	if (pthread_atfork(before_fork, after_fork_parent, after_fork_child))
		return -1;
	qemu_plugin_register_vcpu_tb_trans_cb(id, on_trans);
	qemu_plugin_register_atexit_cb(id, on_exit_cb, NULL);
	return 0;
}
