// SPDX-License-Identifier: MIT
/*
 * hostile_trace.c - writes traces no shim writes, for tests/e2e/analyzer_hostile.sh (and the
 * bomb of tests/fuzz/regressions/reader_chunk_ratio_bomb.bin, written with NR_CHUNKS 1), and
 * traces whose times are exact, for tests/e2e/diff_cli.sh:
 *   hostile_trace bomb OUT NR_CHUNKS  NR_CHUNKS chunks of 16 MiB of launch runs, 1.6 KB each
 *                                     (tb_launch_bomb): 8.4 M launches a chunk
 *   hostile_trace escapes OUT         a complete trace whose every string (header, API, device,
 *                                     kernel and note names) holds terminal controls, each
 *                                     tagged: "ESC]0;<TAG>BEL ESC[31m CSI(C1)2J"
 *   hostile_trace markup OUT          the same trace with strings that are markup instead: a
 *                                     script, a tag that would fetch a URL, references, quotes,
 *                                     a comment, a line separator and a byte that is not UTF-8
 *                                     (tests/e2e/html_report.py)
 *   hostile_trace stacks OUT PATH     the escapes trace's calls with call stacks no shim writes:
 *                                     Python frames in PATH (a FIFO: never to be read) at line
 *                                     1 and INT32_MAX, native ones in /dev/zero and PATH at
 *                                     offsets up to 2^64 - 1, a stack without frames, one
 *                                     defined out of order, CALL_STACKs naming no stack, an
 *                                     undefined one and no call
 *   hostile_trace job DIR N DELAY OFFSET [SPIKE [NAME]]
 *                                     a two-rank job, DIR/rank0.trace and DIR/rank1.trace: N
 *                                     steps of 10 ms, each a 2 ms kernel and then an NCCL
 *                                     all-reduce kernel; rank 1 launches its step DELAY ns late
 *                                     (CPU work), so each all-reduce waits DELAY ns for it;
 *                                     OFFSET ns nonzero: rank 1 on another host, its clock
 *                                     OFFSET ns ahead; SPIKE given: each step also launches
 *                                     two 10 us kernels after the all-reduce (four launches a
 *                                     step: steps found in the launch stream), and rank 1's
 *                                     step N / 2 (from 0) starts SPIKE ns later again; NAME:
 *                                     the all-reduce kernel's name
 *   hostile_trace launches OUT N GAP  a complete trace of N launches of _Z4spinv, each GAP ns
 *                                     long and the next GAP ns after it: a span of exactly
 *                                     N x GAP ns, host timestamps only
 * Test-only; follows trace_format.h through trace_builder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "trace_builder.h"

/* A tagged string of terminal controls: a window title, a color, and CSI as UTF-8 and raw. */
#define HOSTILE(tag) "\x1b]0;" tag "\x07\x1b[31m\xc2\x9b" "2J\x9b" "2J"

enum { API_LAUNCH = 1, API_ALLOC = 2 };
enum { S_LAUNCH = 1, S_ALLOC, S_DEVICE, S_KERNEL, S_NOTE, S_SIGNAL };

#define TID 100
#define BASE 2000000000ull

static void def_device(struct tb *t)
{
	struct trace_rec_device d;

	memset(&d, 0, sizeof(d));
	d.hdr.type = TRACE_REC_DEVICE;
	d.hdr.size = sizeof(d);
	d.name = S_DEVICE;
	d.total_bytes = 1ull << 30;
	d.sm_count = 132;
	d.cc_major = 9;
	d.max_threads_per_sm = 2048;
	d.max_blocks_per_sm = 32;
	d.max_threads_per_block = 1024;
	tb_rec(t, &d, sizeof(d));
}

static void def_func(struct tb *t)
{
	struct trace_rec_func f;

	memset(&f, 0, sizeof(f));
	f.hdr.type = TRACE_REC_FUNC;
	f.hdr.size = sizeof(f);
	f.handle = 0x1000;
	f.id = 1;
	f.name = S_KERNEL;
	tb_rec(t, &f, sizeof(f));
}

static void alloc(struct tb *t, uint32_t dt, uint32_t seq)
{
	struct trace_rec_mem m;

	memset(&m, 0, sizeof(m));
	tb_call(&m.call, TRACE_REC_MEM, sizeof(m), dt, API_ALLOC, 3000, 0, seq);
	m.addr = 0x7f0000000000ull;
	m.bytes = 1ull << 29;
	m.kind = TRACE_MEM_DEVICE;
	m.op = TRACE_MEM_ALLOC;
	tb_rec(t, &m, sizeof(m));
}

static void launch(struct tb *t, uint32_t dt, uint32_t dur, uint32_t seq)
{
	struct trace_rec_launch l;

	memset(&l, 0, sizeof(l));
	tb_call(&l.call, TRACE_REC_LAUNCH, sizeof(l), dt, API_LAUNCH, dur, 0, seq);
	l.func = 1;
	l.grid[0] = 264;
	l.grid[1] = l.grid[2] = 1;
	l.block[0] = 256;
	l.block[1] = l.block[2] = 1;
	tb_rec(t, &l, sizeof(l));
}

/* The strings of a hostile trace: its header's, its entry points', device's, kernel's, notes'. */
struct hostile_names {
	const char *shim, *host, *cmd;
	size_t cmd_len;			/* with its NULs: argv joined */
	const char *launch, *alloc, *device, *kernel, *note, *signal;
};

static const char escapes_cmd[] = "python\0" HOSTILE("CMD");
static const struct hostile_names escapes = {
	"0.1" HOSTILE("SHIM"),
	"h\xc3\xa9" HOSTILE("HOST"),
	escapes_cmd,
	sizeof(escapes_cmd) - 1,
	"cuLaunchKernel" HOSTILE("API"),
	"cuMemAlloc_v2" HOSTILE("ALLOC"),
	"NVIDIA" HOSTILE("DEVICE"),
	"_Z6kernelv" HOSTILE("KERNEL"),
	"CUPTI" HOSTILE("NOTE"),
	"SIGTERM (15)" HOSTILE("SIGNAL"),
};

/* Markup where a page would take it as such: each tagged, to be found back as text. */
#define MARKUP(tag)                                                                                \
	"<script>alert('" tag "')</script><img src=\"http://example.invalid/" tag                 \
	".png\" onerror=alert(1)>&amp;&lt;</title></style><!-- \"x\" --> \xe2\x80\xa8 \xff]]>"
static const char markup_cmd[] = "python\0" MARKUP("CMD");
static const struct hostile_names markup = {
	"0.1" MARKUP("SHIM"),
	"h\xc3\xa9" MARKUP("HOST"),
	markup_cmd,
	sizeof(markup_cmd) - 1,
	"cuLaunchKernel" MARKUP("API"),
	"cuMemAlloc_v2" MARKUP("ALLOC"),
	"NVIDIA" MARKUP("DEVICE"),
	"kernel<float, &ref>" MARKUP("KERNEL"),
	"CUPTI" MARKUP("NOTE"),
	"SIGTERM (15)" MARKUP("SIGNAL"),
};

/* An allocation and four launches of one kernel, each run by the GPU and joined to its call. */
static void build_hostile(struct tb *t, const struct hostile_names *n)
{
	uint32_t i;

	tb_init_named(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR, n->shim, n->host, n->cmd,
		      n->cmd_len);
	tb_string(t, S_LAUNCH, n->launch);
	tb_string(t, S_ALLOC, n->alloc);
	tb_string(t, S_DEVICE, n->device);
	tb_string(t, S_KERNEL, n->kernel);
	tb_string(t, S_NOTE, n->note);
	tb_string(t, S_SIGNAL, n->signal);
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	tb_api_def(t, API_ALLOC, TRACE_FAM_MEMORY, S_ALLOC);
	def_device(t);
	def_func(t);
	tb_note(t, BASE - 1000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	tb_block(t, TID, 0, BASE);
	alloc(t, 0, 1);
	for (i = 0; i < 4; i++)
		launch(t, i ? 100000 : 10000, 5000, i + 2);
	for (i = 0; i < 4; i++) {
		uint64_t call = BASE + 10000 + 100000ull * i;

		tb_gpu_api(t, call + 500, call + 4000, 10 + i, TID);
		tb_gpu_kernel(t, call + 6000, call + 86000, 10 + i, S_KERNEL, 264, 256);
	}
	tb_note(t, BASE + 900000, TRACE_NOTE_SIGNAL, S_SIGNAL);
	tb_end(t, 25, BASE + 1000000, TRACE_END_SIGNAL);
	tb_flush(t);
}

static void stack_def(struct tb *t, uint32_t id, const uint64_t *pcs, uint16_t nr_pcs,
		      const struct trace_stack_py *py, uint16_t nr_py)
{
	uint8_t buf[TRACE_STACK_BYTES(4, 4)];
	struct trace_rec_stack *s = (void *)buf;
	const size_t size = TRACE_STACK_BYTES(nr_pcs, nr_py);

	memset(buf, 0, sizeof(buf));
	s->hdr.type = TRACE_REC_STACK;
	s->hdr.size = (uint16_t)size;
	s->id = id;
	s->nr_native = nr_pcs;
	s->nr_python = nr_py;
	s->flags = nr_py ? TRACE_STACK_PYTHON : 0;
	if (nr_pcs)
		memcpy(s + 1, pcs, nr_pcs * sizeof(*pcs));
	if (nr_py)
		memcpy((uint8_t *)(s + 1) + nr_pcs * sizeof(*pcs), py, nr_py * sizeof(*py));
	tb_rec(t, buf, size);
}

static void pc_def(struct tb *t, uint64_t pc, uint64_t offset, uint32_t module, uint32_t symbol)
{
	struct trace_rec_pc p;

	memset(&p, 0, sizeof(p));
	p.hdr.type = TRACE_REC_PC;
	p.hdr.size = sizeof(p);
	p.pc = pc;
	p.offset = offset;
	p.module = module;
	p.symbol = symbol;
	p.sym_offset = UINT32_MAX;
	tb_rec(t, &p, sizeof(p));
}

static void call_stack(struct tb *t, uint32_t dt, uint16_t api, uint32_t stack, uint32_t seq)
{
	struct trace_rec_call_stack c;

	memset(&c, 0, sizeof(c));
	c.hdr.type = TRACE_REC_CALL_STACK;
	c.hdr.size = sizeof(c);
	c.hdr.dt_ns = dt;
	c.stack = stack;
	c.api = api;
	c.seq = seq;
	tb_rec(t, &c, sizeof(c));
}

enum { S_PATH = 20, S_FUNC, S_ZERO, S_SYM };

/* build_hostile's calls, with stacks (see the usage above). */
static void build_stacks(struct tb *t, const char *path)
{
	const uint64_t pcs[2] = { 0x1000, 0xdead };
	const struct trace_stack_py py[2] = { { S_PATH, S_FUNC, 1, 0 },
					      { S_PATH, S_FUNC, INT32_MAX, 0 } };
	uint32_t i;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_ALLOC, "cuMemAlloc_v2");
	tb_string(t, S_DEVICE, "dev");
	tb_string(t, S_KERNEL, "_Z4spinv");
	tb_string(t, S_NOTE, "on");
	tb_string(t, S_PATH, path);
	tb_string(t, S_FUNC, "step");
	tb_string(t, S_ZERO, "/dev/zero");
	tb_string(t, S_SYM, "_ZN1a1bILi1EEEvv");
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	tb_api_def(t, API_ALLOC, TRACE_FAM_MEMORY, S_ALLOC);
	def_device(t);
	def_func(t);
	pc_def(t, 0x1000, UINT64_MAX, S_ZERO, 0);
	pc_def(t, 0xdead, 5, S_PATH, S_SYM);
	pc_def(t, 0xdead, 0, 999, 999);	/* twice, naming strings never defined */
	stack_def(t, 1, pcs, 2, py, 2);
	stack_def(t, 7, pcs, 1, py, 1);		/* out of order: not taken */
	stack_def(t, 2, pcs, 0, py, 0);		/* no frames */
	stack_def(t, 3, pcs + 1, 1, NULL, 0);	/* native only: in PATH, at 0xdead */
	tb_note(t, BASE - 1000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	tb_block(t, TID, 0, BASE);
	alloc(t, 0, 1);
	call_stack(t, 0, API_ALLOC, 1, 1);
	call_stack(t, 0, API_ALLOC, 0, 1);	/* no stack */
	for (i = 0; i < 4; i++) {
		static const uint32_t stacks[4] = { 1, 999, 2, 3 };

		launch(t, i ? 100000 : 10000, 5000, i + 2);
		call_stack(t, 0, API_LAUNCH, stacks[i], i + 2);
	}
	call_stack(t, 7, 77, 1, 0);		/* no such call */
	for (i = 0; i < 4; i++) {
		uint64_t call = BASE + 10000 + 100000ull * i;

		tb_gpu_api(t, call + 500, call + 4000, 10 + i, TID);
		tb_gpu_kernel(t, call + 6000, call + 86000, 10 + i, S_KERNEL, 264, 256);
	}
	tb_end(t, 30, BASE + 1000000, TRACE_END_EXIT);
	tb_flush(t);
}

enum { S_NCCL = 30, S_COMPUTE, S_UPDATE };

/*
 * Rank @rank of hostile_trace job (see the usage above): on the common clock, step k begins at
 * BASE + k x 10 ms; the rank launches its 2 ms kernel 100 us later (rank 1: @delay_ns more),
 * and the all-reduce right after it; the all-reduce starts when the kernel ends and ends on
 * both ranks 300 us after the later rank's started. Rank 1's times are @offset_ns ahead.
 * @stepped: two 10 us kernels launched after the all-reduce run after it, and rank 1's step
 * n / 2 starts @spike_ns later again (< 7 ms: within the step).
 */
static void build_rank(struct tb *t, int rank, uint32_t n, uint64_t delay_ns, uint64_t offset_ns,
		       int stepped, uint64_t spike_ns, const char *nccl)
{
	static const char cmd[] = "train.py";
	const uint64_t off = rank ? offset_ns : 0, late = rank ? delay_ns : 0;
	uint64_t prev = BASE + off;
	struct trace_file_header *h;
	uint32_t k, corr = 1;

	tb_init_named(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR, "test",
		      rank && offset_ns ? "hostB" : "hostA", cmd, sizeof(cmd) - 1);
	h = (void *)t->file;
	h->rank = rank;
	h->pid = 5000 + (uint32_t)rank;
	h->start_mono_ns += off;	/* its host's clock */
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_DEVICE, "dev");
	tb_string(t, S_NOTE, "on");
	tb_string(t, S_COMPUTE, "_Z7computePf");
	tb_string(t, S_NCCL, nccl);
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	def_device(t);
	tb_func(t, 1, S_COMPUTE);
	tb_func(t, 2, S_NCCL);
	if (stepped) {
		tb_string(t, S_UPDATE, "_Z6updatePf");
		tb_func(t, 3, S_UPDATE);
	}
	tb_note(t, BASE + off - 1000, TRACE_NOTE_CUPTI_ON, S_NOTE);
	for (k = 0; k < n; k++) {
		const uint64_t step = BASE + 10000000ull * k, spike = k == n / 2 ? spike_ns : 0;
		/* on the common clock: each rank's launches and its kernel's end */
		const uint64_t l0 = step + 100000 + late + (rank ? spike : 0);
		const uint64_t k_end = l0 + 10000 + 2000000;
		const uint64_t slow_end = step + 100000 + delay_ns + spike + 10000 + 2000000;
		const uint64_t ar_end = (k_end > slow_end ? k_end : slow_end) + 300000;
		struct trace_rec_launch l;
		int i;

		tb_block(t, TID, 0, prev);
		for (i = 0; i < (stepped ? 4 : 2); i++) {
			const uint64_t at = l0 + 50000ull * (uint64_t)i + off;

			memset(&l, 0, sizeof(l));
			tb_call(&l.call, TRACE_REC_LAUNCH, sizeof(l), (uint32_t)(at - prev), API_LAUNCH,
				20000, 0, corr + (uint32_t)i);
			l.func = i < 2 ? 1 + (uint32_t)i : 3;
			l.grid[0] = 1024;
			l.grid[1] = l.grid[2] = 1;
			l.block[0] = 256;
			l.block[1] = l.block[2] = 1;
			tb_rec(t, &l, sizeof(l));
			prev = at;
			tb_gpu_api(t, at + 1000, at + 19000, corr + (uint32_t)i, TID);
		}
		tb_gpu_kernel(t, l0 + 10000 + off, k_end + off, corr, S_COMPUTE, 1024, 256);
		tb_gpu_kernel(t, k_end + off, ar_end + off, corr + 1, S_NCCL, 1024, 256);
		for (i = 2; i < (stepped ? 4 : 2); i++)
			tb_gpu_kernel(t, ar_end + off + 10000ull * (uint64_t)(i - 2),
				      ar_end + off + 10000ull * (uint64_t)(i - 1), corr + (uint32_t)i,
				      S_UPDATE, 1024, 256);
		corr += stepped ? 4 : 2;
		if (k % 64 == 63)
			tb_flush(t);
	}
	tb_end(t, (stepped ? 12ull : 6ull) * n + 8, BASE + 10000000ull * n + off, TRACE_END_EXIT);
	tb_flush(t);
}

/* @n launches back to back, each @gap_ns long: the first starts at BASE, the last ends at
 * BASE + @n x @gap_ns. */
static void build_launches(struct tb *t, uint32_t n, uint32_t gap_ns)
{
	uint32_t i;

	tb_init(t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
	tb_string(t, S_LAUNCH, "cuLaunchKernel");
	tb_string(t, S_KERNEL, "_Z4spinv");
	tb_api_def(t, API_LAUNCH, TRACE_FAM_LAUNCH, S_LAUNCH);
	def_func(t);
	tb_block(t, TID, 0, BASE);
	for (i = 0; i < n; i++)
		launch(t, i ? gap_ns : 0, gap_ns, i + 1);
	tb_end(t, 4 + (uint64_t)n, BASE + (uint64_t)n * gap_ns, TRACE_END_EXIT);
	tb_flush(t);
}

static int write_file(const struct tb *t, const char *path)
{
	FILE *f = fopen(path, "wb");

	if (!f || fwrite(t->file, 1, t->len, f) != t->len || fclose(f)) {
		perror(path);
		return 1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct tb t;
	int ret, i;

	if (argc == 4 && !strcmp(argv[1], "bomb") && atoi(argv[3]) > 0) {
		tb_init(&t, TRACE_VERSION_MAJOR, TRACE_VERSION_MINOR);
		tb_string(&t, 1, "cuLaunchKernel");
		tb_api_def(&t, 1, TRACE_FAM_LAUNCH, 1);
		for (i = 0; i < atoi(argv[3]); i++) {
			tb_launch_bomb(&t, 16u << 20);
			tb_flush(&t);
		}
	} else if (argc == 3 && !strcmp(argv[1], "escapes")) {
		build_hostile(&t, &escapes);
	} else if (argc == 3 && !strcmp(argv[1], "markup")) {
		build_hostile(&t, &markup);
	} else if (argc >= 6 && argc <= 8 && !strcmp(argv[1], "job") && atoi(argv[3]) > 0) {
		char path[4096];

		for (i = 0; i < 2; i++) {
			build_rank(&t, i, (uint32_t)atoi(argv[3]), strtoull(argv[4], NULL, 10),
				   strtoull(argv[5], NULL, 10), argc >= 7,
				   argc >= 7 ? strtoull(argv[6], NULL, 10) : 0,
				   argc == 8 ? argv[7] : "ncclDevKernel_AllReduce_Sum_f32_RING_LL");
			snprintf(path, sizeof(path), "%s/rank%d.trace", argv[2], i);
			ret = write_file(&t, path);
			tb_free(&t);
			if (ret)
				return ret;
		}
		return 0;
	} else if (argc == 4 && !strcmp(argv[1], "stacks")) {
		build_stacks(&t, argv[3]);
	} else if (argc == 5 && !strcmp(argv[1], "launches") && atoi(argv[3]) > 0 &&
		   atoi(argv[4]) > 0) {
		build_launches(&t, (uint32_t)atoi(argv[3]), (uint32_t)atoi(argv[4]));
	} else {
		fprintf(stderr, "usage: hostile_trace bomb OUT NR_CHUNKS | escapes OUT | "
				"markup OUT | stacks OUT PATH | job DIR N DELAY_NS OFFSET_NS [SPIKE_NS [NAME]] | "
				"launches OUT N GAP_NS\n");
		return 2;
	}
	ret = write_file(&t, argv[2]);
	tb_free(&t);
	return ret;
}
