// SPDX-License-Identifier: MIT
/*
 * test_export.c - `gpushim export` goes through the trace as a report does: a long hand-built
 * run (two threads, two devices, GPU records that come late and out of order, copies,
 * allocations, counter samples, an idle gap every step) exported at two lengths, each in a
 * process of its own (this program run again: its peak RSS is the export's), reads the trace
 * twice and holds about as much for twice the run; the streamed document, written to a file or
 * through a pipe, is the one loaded whole (GPUSHIM_STREAM=0) makes, byte for byte, for that
 * run and one with failed calls.
 */
#define _GNU_SOURCE
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "cmd/cmds.h"
#include "model/model.h"
#include "trace_builder.h"

enum { API_LAUNCH = 1, API_COPY, API_ALLOC, API_SYNC };
enum { S_LAUNCH = 1, S_COPY, S_ALLOC, S_SYNC, S_KERN_A, S_KERN_B, S_DEV, S_CHIP };

#define TID_A 100
#define TID_B 200
#define BASE 1000000000ull
#define STEP 50000ull			/* a step every 50 us: the GPU idle 45 us of it */
#define LATE 40			/* GPU records come this many steps after their calls */

static void rec_call(struct tb *t, uint32_t tid, uint64_t ts, void *rec, uint16_t type,
		     uint16_t size, uint16_t api, uint32_t dur, uint32_t result)
{
	tb_block(t, tid, tid == TID_A ? 0 : 1, ts);
	tb_call(rec, type, size, 0, api, dur, result, 0);
	tb_rec(t, rec, size);
}

static void dict(struct tb *t)
{
	static const struct {
		uint16_t api;
		uint8_t family;
		uint32_t name;
		const char *s;
	} apis[] = {
		{ API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH, "cuLaunchKernel" },
		{ API_COPY, TRACE_FAM_COPY, S_COPY, "cuMemcpyDtoH_v2" },
		{ API_ALLOC, TRACE_FAM_MEMORY, S_ALLOC, "cuMemAlloc_v2" },
		{ API_SYNC, TRACE_FAM_SYNC, S_SYNC, "cuStreamSynchronize" },
	};
	struct trace_rec_pm_config pc;
	size_t i;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	for (i = 0; i < sizeof(apis) / sizeof(apis[0]); i++) {
		tb_string(t, apis[i].name, apis[i].s);
		tb_api_def(t, apis[i].api, apis[i].family, apis[i].name);
	}
	tb_string(t, S_KERN_A, "kern_a");
	tb_string(t, S_KERN_B, "kern_b");
	tb_string(t, S_DEV, "NVIDIA H200");
	tb_string(t, S_CHIP, "GH100");
	tb_func(t, 1, S_KERN_A);
	tb_func(t, 2, S_KERN_B);
	tb_device(t, 0, S_DEV);
	tb_device(t, 1, S_DEV);
	memset(&pc, 0, sizeof(pc));
	pc.hdr.type = TRACE_REC_PM_CONFIG;
	pc.hdr.size = sizeof(pc);
	pc.chip = S_CHIP;
	pc.interval_ns = 1000000;
	tb_rec(t, &pc, sizeof(pc));
}

/*
 * Step @i's calls: thread A launches (a sync every 50), thread B copies every 10 and allocates
 * every 100, freeing 50 steps later. With @fail, one launch in 1000 fails.
 */
static void step_calls(struct tb *t, size_t i, int fail)
{
	const uint64_t ts = BASE + STEP * i;
	struct trace_rec_launch l;
	struct trace_rec_sync sy;
	struct trace_rec_copy c;
	struct trace_rec_mem mem;

	memset(&l, 0, sizeof(l));
	l.func = i % 5 ? 1 : 2;
	l.grid[0] = (uint32_t)(i % 7 + 1) * 8;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 128;
	l.block[1] = l.block[2] = 1;
	rec_call(t, TID_A, ts, &l, TRACE_REC_LAUNCH, sizeof(l), API_LAUNCH,
		 5000 + (uint32_t)(i % 3) * 700, fail && i % 1000 == 500 ? 1 : 0);
	if (i % 50 == 49) {
		memset(&sy, 0, sizeof(sy));
		sy.kind = TRACE_SYNC_STREAM;
		rec_call(t, TID_A, ts + 10000, &sy, TRACE_REC_SYNC, sizeof(sy), API_SYNC, 30000, 0);
	}
	if (i % 10 == 3) {
		memset(&c, 0, sizeof(c));
		c.dir = TRACE_COPY_D2H;
		c.bytes = 1 << 20;
		rec_call(t, TID_B, ts + 20000, &c, TRACE_REC_COPY, sizeof(c), API_COPY, 12000, 0);
	}
	if (i % 100 == 7 || i % 100 == 57) {
		memset(&mem, 0, sizeof(mem));
		mem.kind = TRACE_MEM_DEVICE;
		mem.op = i % 100 == 7 ? TRACE_MEM_ALLOC : TRACE_MEM_FREE;
		mem.addr = 0x7000000 + 0x100000 * ((i - i % 100) / 100 % 300);
		mem.bytes = mem.op == TRACE_MEM_ALLOC ? 1 << 22 : 0;
		rec_call(t, TID_B, ts + 35000, &mem, TRACE_REC_MEM, sizeof(mem), API_ALLOC, 3000,
			 0);
	}
}

/* Step @i's GPU records: its kernel on device 0, a copy on device 1 every 10 steps, a counter
 * sample every 20. */
static void step_gpu(struct tb *t, size_t i)
{
	const uint64_t ts = BASE + STEP * i;
	const uint32_t corr = (uint32_t)i * 2 + 1;
	struct trace_rec_gpu_memcpy c;
	struct trace_rec_pm_sample ps;
	int k;

	tb_gpu_api(t, ts + 100, ts + 4900, corr, TID_A);
	tb_gpu_kernel(t, ts + (i % 3 ? 9000 : 3000), ts + 14000 + (i % 13) * 150, corr,
		      i % 5 ? S_KERN_A : S_KERN_B, (uint32_t)(i % 7 + 1) * 8, 128);
	if (i % 10 == 3) {
		tb_gpu_api(t, ts + 20100, ts + 31900, corr + 1, TID_B);
		memset(&c, 0, sizeof(c));
		c.hdr.type = TRACE_REC_GPU_MEMCPY;
		c.hdr.size = sizeof(c);
		c.start_ns = ts + 21000;
		c.end_ns = ts + 30000;
		c.bytes = 1 << 20;
		c.cupti_corr = corr + 1;
		c.device = 1;
		c.copy_kind = TRACE_GPU_COPY_DTOH;
		c.dst_kind = TRACE_GPU_MEM_PAGEABLE;
		tb_rec(t, &c, sizeof(c));
	}
	if (i % 20 == 9) {
		memset(&ps, 0, sizeof(ps));
		ps.hdr.type = TRACE_REC_PM_SAMPLE;
		ps.hdr.size = sizeof(ps);
		ps.start_ns = ts;
		ps.end_ns = ts + (i % 60 == 9 ? 300000 : 1000000);	/* holes now and then */
		for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
			ps.value[k] = (float)((i * 7 + (size_t)k * 13) % 100);
		tb_rec(t, &ps, sizeof(ps));
	}
}

/* @n steps, the GPU records of a step written LATE steps after its calls, in reverse. */
static const char *build_run(size_t n, int fail, const char *name)
{
	const char *path;
	struct tb t;
	size_t i, j;

	dict(&t);
	for (i = 0; i < n + LATE; i++) {
		if (i < n)
			step_calls(&t, i, fail);
		if (i >= LATE && (i - LATE) % 8 == 7)
			for (j = 0; j < 8; j++)
				step_gpu(&t, i - LATE - j);
		if (i % 64 == 63)
			tb_flush(&t);
	}
	for (j = n - n % 8; j < n; j++)
		step_gpu(&t, j);
	tb_end(&t, 0, BASE + STEP * (n + 1), TRACE_END_EXIT);
	tb_flush(&t);
	path = tb_write(&t, name, 0);
	tb_free(&t);
	return path;
}

/* ---- The export in a process of its own ---- */

/* Its reads and its peak RSS in KiB, on descriptor 3; the exit code is the export's. */
static int export_child(int argc, char **argv)
{
	unsigned long reads = model_nr_reads();
	char line[256];
	long hwm = -1;
	FILE *f;
	int rc;

	mallopt(M_MMAP_THRESHOLD, 256 * 1024);	/* as gpushim's main does */
	rc = cmd_export(argc, argv);
	fflush(stdout);
	f = fopen("/proc/self/status", "r");
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmHWM:", 6))
			hwm = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	dprintf(3, "%lu %ld\n", model_nr_reads() - reads, hwm);
	return rc;
}

static const char *self;

enum { TO_FILE, WHOLE_TO_FILE, TO_PIPE };

/*
 * What comes through @fd into file @out (the other end of an export's standard output); the
 * reader closes @other_1 and @other_2, write ends that would keep it from seeing the end.
 */
static pid_t pipe_reader(int fd, const char *out, int other_1, int other_2)
{
	pid_t pid = fork();
	char buf[1 << 16];
	ssize_t n;
	FILE *f;

	if (pid)
		return pid;
	close(other_1);
	close(other_2);
	f = fopen(out, "wb");
	while (f && (n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, f);
	_exit(!f || fclose(f) ? 1 : 0);
}

/*
 * `gpushim export --format chrome -o @out @path` in a new process (WHOLE_TO_FILE: with
 * GPUSHIM_STREAM=0; TO_PIPE: to its standard output, a pipe whose reader writes @out): its
 * exit code, *@reads and *@hwm_kib.
 */
static int export_run(const char *path, const char *out, int how, unsigned long *reads,
		      long *hwm_kib)
{
	int fd[2], doc[2] = { -1, -1 }, status = -1;
	pid_t pid, reader = 0;
	FILE *f;

	CHECK_EQ(pipe(fd), 0);
	if (how == TO_PIPE) {
		CHECK_EQ(pipe(doc), 0);
		reader = pipe_reader(doc[0], out, doc[1], fd[1]);
		close(doc[0]);
	}
	pid = fork();
	if (pid == 0) {
		const char *asan = getenv("ASAN_OPTIONS");
		char opts[1024];

		/* Under AddressSanitizer: freed memory is not held back in quarantine, which
		 * would grow with the run what the export lets go of. */
		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=0", asan ? asan : "",
			 asan && *asan ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
		dup2(fd[1], 3);
		if (how == TO_PIPE)
			dup2(doc[1], 1);
		if (how == WHOLE_TO_FILE)
			setenv("GPUSHIM_STREAM", "0", 1);
		if (how == TO_PIPE)
			execl(self, self, "--export", "--format", "chrome", path, (char *)NULL);
		else
			execl(self, self, "--export", "--format", "chrome", "-o", out, path,
			      (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	if (doc[1] >= 0)
		close(doc[1]);
	f = fdopen(fd[0], "r");
	*reads = 0;
	*hwm_kib = -1;
	if (!f || fscanf(f, "%lu %ld", reads, hwm_kib) != 2)
		CHECK(!"the export said how it went");
	if (f)
		fclose(f);
	CHECK(waitpid(pid, &status, 0) == pid);
	if (reader) {
		int rs = -1;

		CHECK(waitpid(reader, &rs, 0) == reader);
		CHECK(WIFEXITED(rs) && WEXITSTATUS(rs) == 0);
	}
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int same_file(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	int ca, cb, same = fa && fb;

	while (same) {
		ca = getc(fa);
		cb = getc(fb);
		same = ca == cb;
		if (ca == EOF)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/*
 * 100,000 and 200,000 steps (about 330,000 and 660,000 records, an idle gap every step):
 * loaded whole, the second export would hold some 30 MiB more (the calls, operations, API
 * records and gaps); streamed, a few hundred steps are held.
 */
static void test_export_bounded(void)
{
	const char *paths[2] = { NULL, NULL };
	unsigned long reads[2];
	long hwm[2];
	int i;

	paths[0] = strdup(build_run(100000, 0, "export_100k.trace"));
	paths[1] = strdup(build_run(200000, 0, "export_200k.trace"));
	for (i = 0; i < 2; i++) {
		CHECK_EQ(export_run(paths[i], "/dev/null", TO_FILE, &reads[i], &hwm[i]), 0);
		CHECK(reads[i] <= 2);
		CHECK(hwm[i] > 0);
	}
	fprintf(stderr, "export: peak RSS %ld and %ld KiB (100,000 and 200,000 steps), %lu and %lu "
			"reads\n", hwm[0], hwm[1], reads[0], reads[1]);
	CHECK(hwm[1] < hwm[0] + 4096);
	for (i = 0; i < 2; i++) {
		unlink(paths[i]);
		free((char *)paths[i]);
	}
}

/*
 * The document streamed, to a file or through a pipe (its calls then spooled too), is the one
 * loaded whole; with failed calls too (the stream keeps no result: exported again, loaded
 * whole, after the calls were written once).
 */
static void test_export_same(void)
{
	int fail, how;

	for (fail = 0; fail < 2; fail++) {
		const char *path = strdup(build_run(3000, fail, "export_same.trace"));
		char whole[512], doc[512];
		unsigned long reads;
		long hwm;

		snprintf(whole, sizeof(whole), "%s.whole.json", path);
		snprintf(doc, sizeof(doc), "%s.json", path);
		CHECK_EQ(export_run(path, whole, WHOLE_TO_FILE, &reads, &hwm), 0);
		CHECK_EQ(reads, 1);
		for (how = TO_FILE; how <= TO_PIPE; how += TO_PIPE - TO_FILE) {
			CHECK_EQ(export_run(path, doc, how, &reads, &hwm), 0);
			CHECK_EQ(reads, 2);	/* failed calls too: the stream keeps results */
			CHECK(same_file(doc, whole));
			unlink(doc);
		}
		unlink(whole);
		unlink(path);
		free((char *)path);
	}
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--export"))
		return export_child(argc - 1, argv + 1);
	self = "/proc/self/exe";
	self = realpath(self, NULL);
	RUN(test_export_bounded);
	RUN(test_export_same);
	return TEST_RESULT();
}
