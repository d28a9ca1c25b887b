// SPDX-License-Identifier: MIT
/*
 * twins.cu - one known cause of GPU idle time per CASE, each in two variants: `cause`, the loop
 * that has it, and `fixed`, its twin with the usual fix, doing the same GPU math (the checksum
 * is the same). Ground truth for the what-if replay (issue 26): gpu_check.py's part `twins`
 * measures the fixed twin's real speedup and compares it with what the report predicts.
 *   sync    4 FMA kernels of ~85 us on a 16 MiB buffer, a 1-thread kernel adding the step's
 *           value to a device accumulator, then 100 us of host work (logging, bookkeeping).
 *           cause: a 4-byte cudaMemcpy of the value after every step drains the queue, so the
 *           host work is exposed. fixed: the accumulator is read back every 50 steps and at
 *           the end. Expected: primary host_sync.
 *   launch  200 tiny kernels a step on a side stream (one warp; ~3.5 us each launched, ~0.8 us
 *           replayed). cause: launched one by one. fixed: captured once into a CUDA graph
 *           (cudaStreamBeginCapture), replayed by cudaGraphLaunch every step.
 *           Expected: primary launch_overhead.
 *   memcpy  a 64 MiB batch copied to the device every step, then a kernel over it.
 *           cause: from malloc'd (pageable) memory, blocking cudaMemcpy. fixed: from pinned
 *           memory (cudaMallocHost), cudaMemcpyAsync on a copy stream into two device buffers
 *           in turn, the copy of step i+1 overlapping the kernel of step i (events order the
 *           two streams). Expected: primary memcpy.
 *   alloc   a 256 MiB buffer filled and folded into an accumulator every step.
 *           cause: cudaMalloc and cudaFree of the buffer every step (cudaFree waits for the
 *           GPU). fixed: allocated once, reused. Expected: primary allocation.
 *   cpu     every step's 1 MiB input made on the host (~2 ms of integer hashing, deterministic,
 *           into one of two pinned buffers), copied with cudaMemcpyAsync, then ~2 ms of GPU
 *           work (a kernel over the input, 4 spin kernels of 0.5 ms that fill every SM), then
 *           1.5 ms of the loop's own host work (what a framework spends building and
 *           launching a step). cause: the input made inline, so the host's 3.5 ms a step
 *           exceed the GPU's 2. fixed: a second host thread makes step i+1's input while step
 *           i runs (double buffer; same inputs). The loop's own host work is needed: without
 *           it the inline loop already overlaps its input with the GPU (launches do not
 *           wait), and there would be nothing to fix. Expected: primary cpu_bound.
 * Each run measures its own steady rate with CLOCK_MONOTONIC over the steps after the first
 * 10 % (a device synchronization at either end) and prints it.
 * Usage: twins CASE VARIANT [STEPS] - CASE sync|launch|memcpy|alloc|cpu, VARIANT cause|fixed;
 * STEPS defaults to about 1-3 s of the cause variant on an H200.
 * Prints an expect: line (kernel counts), then
 * "twins CASE VARIANT: steps N steady_steps_per_s X checksum Y".
 */
#include "common.h"

#include <pthread.h>
#include <stdint.h>
#include <string.h>

#define WARM_SHARE 10		/* the first STEPS/10 steps are warm-up, outside the rate */

struct run {
	int steps, is_fixed;
	int warm;		/* the step at which the steady clock starts */
	double t0, t1;
	double checksum;
};

/* Called at the top of every step: the steady window starts at step run->warm. */
static void step_begin(struct run *r, int i)
{
	if (i == r->warm) {
		CK(cudaDeviceSynchronize());
		r->t0 = now_s();
	}
}

static void run_end(struct run *r)
{
	CK(cudaDeviceSynchronize());
	r->t1 = now_s();
}

/* Sum of @n device floats, in order, in double (identical in both variants). */
static double device_sum(const float *d, size_t n)
{
	float *h = (float *)malloc(n * sizeof(float));
	double s = 0;
	size_t i;

	CK(cudaMemcpy(h, d, n * sizeof(float), cudaMemcpyDeviceToHost));
	for (i = 0; i < n; i++)
		s += h[i];
	free(h);
	return s;
}

__global__ void init_ramp(float *x, size_t n)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = (float)(i % 1000) * 1e-3f;
}

/* ---- sync: a per-step read-back ---- */

#define SYNC_N (4 << 20)	/* 16 MiB of floats */
#define SYNC_ITERS 512		/* FMAs per element: ~85 us a kernel on an H200 (4 M x 512 FMAs) */
#define SYNC_EVERY 50

__global__ void fma_pass(float *x, int n, int iters)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;
	float a;
	int k;

	if (i >= n)
		return;
	a = x[i];
	for (k = 0; k < iters; k++)
		a = fmaf(a, 0.9999f, 1e-4f);
	x[i] = a;
}

/* The step's "loss": one element, added to the accumulator on the GPU in both variants. */
__global__ void take_loss(const float *x, float *loss, double *acc, int step)
{
	float v = x[(unsigned)step * 7919u % SYNC_N];

	*loss = v;
	*acc += v;
}

static void run_sync(struct run *r)
{
	float *x, *loss, host_loss = 0;
	double *acc, host_acc = 0;
	int i, k;

	CK(cudaMalloc(&x, SYNC_N * sizeof(float)));
	CK(cudaMalloc(&loss, sizeof(float)));
	CK(cudaMalloc(&acc, sizeof(double)));
	CK(cudaMemset(acc, 0, sizeof(double)));
	init_ramp<<<SYNC_N / 256, 256>>>(x, SYNC_N);
	CK_LAUNCH();
	for (i = 0; i < r->steps; i++) {
		step_begin(r, i);
		for (k = 0; k < 4; k++)
			fma_pass<<<SYNC_N / 256, 256>>>(x, SYNC_N, SYNC_ITERS);
		take_loss<<<1, 1>>>(x, loss, acc, i);
		CK_LAUNCH();
		if (!r->is_fixed)
			CK(cudaMemcpy(&host_loss, loss, sizeof(float), cudaMemcpyDeviceToHost));
		else if ((i + 1) % SYNC_EVERY == 0 || i == r->steps - 1)
			CK(cudaMemcpy(&host_acc, acc, sizeof(double), cudaMemcpyDeviceToHost));
		host_busy_us(100);	/* the host looks at the value, logs, keeps its books */
	}
	run_end(r);
	CK(cudaMemcpy(&host_acc, acc, sizeof(double), cudaMemcpyDeviceToHost));
	r->checksum = host_acc + device_sum(x, SYNC_N);
	printf("expect: kernel=fma_pass:%d kernel=take_loss:%d\n", 4 * r->steps, r->steps);
	CK(cudaFree(x));
	CK(cudaFree(loss));
	CK(cudaFree(acc));
}

/* ---- launch: many tiny kernels ---- */

#define LAUNCH_KERNELS 200

/* One warp, 16 FMAs: far shorter than the host call that launches it. */
__global__ void tiny_step(float *x, unsigned *count, int k)
{
	float a = 1.0f - (k + 1) * 1e-6f, b = k * 1e-7f, v = x[threadIdx.x];
	int j;

	for (j = 0; j < 16; j++)
		v = fmaf(v, a, b);
	x[threadIdx.x] = v;
	if (k == 0 && threadIdx.x == 0)
		(*count)++;
}

static void launch_step(float *x, unsigned *count, cudaStream_t s)
{
	int k;

	for (k = 0; k < LAUNCH_KERNELS; k++)
		tiny_step<<<1, 32, 0, s>>>(x, count, k);
	CK_LAUNCH();
}

static void run_launch(struct run *r)
{
	cudaGraphExec_t exec = NULL;
	cudaGraph_t graph = NULL;
	cudaStream_t s;
	unsigned *count, host_count = 0;
	float *x;
	int i;

	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&x, 32 * sizeof(float)));
	CK(cudaMalloc(&count, sizeof(unsigned)));
	CK(cudaMemset(count, 0, sizeof(unsigned)));
	init_ramp<<<1, 32, 0, s>>>(x, 32);
	CK_LAUNCH();
	if (r->is_fixed) {
		/* Capture records the launches; nothing runs until the first replay. */
		CK(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal));
		launch_step(x, count, s);
		CK(cudaStreamEndCapture(s, &graph));
		CK(cudaGraphInstantiate(&exec, graph, 0));
	}
	for (i = 0; i < r->steps; i++) {
		step_begin(r, i);
		if (r->is_fixed)
			CK(cudaGraphLaunch(exec, s));
		else
			launch_step(x, count, s);
	}
	run_end(r);
	CK(cudaMemcpy(&host_count, count, sizeof(unsigned), cudaMemcpyDeviceToHost));
	r->checksum = device_sum(x, 32) + host_count;
	printf("expect: kernel=tiny_step:%d\n", r->is_fixed ? LAUNCH_KERNELS :
							    LAUNCH_KERNELS * r->steps);
	if (exec) {
		CK(cudaGraphExecDestroy(exec));
		CK(cudaGraphDestroy(graph));
	}
	CK(cudaFree(x));
	CK(cudaFree(count));
	CK(cudaStreamDestroy(s));
}

/* ---- memcpy: a pageable host-to-device copy every step ---- */

#define COPY_BYTES ((size_t)64 << 20)
#define COPY_N (COPY_BYTES / sizeof(float))

__global__ void consume(float *out, const float *in, size_t n, float w)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		out[i] = fmaf(out[i], 0.5f, in[i] * w);
}

static float copy_weight(int step)
{
	return 1.0f / (1 + step % 16);
}

static void run_memcpy(struct run *r)
{
	const unsigned blocks = (unsigned)(COPY_N / 256);
	cudaEvent_t copied[2], consumed[2];
	cudaStream_t sc, sk;
	float *h, *in[2], *out;
	size_t j;
	int i, b;

	if (r->is_fixed)
		CK(cudaMallocHost(&h, COPY_BYTES));
	else
		h = (float *)malloc(COPY_BYTES);
	for (j = 0; j < COPY_N; j++)
		h[j] = (float)(j % 1000) * 1e-3f;
	CK(cudaMalloc(&in[0], COPY_BYTES));
	CK(cudaMalloc(&in[1], COPY_BYTES));
	CK(cudaMalloc(&out, COPY_BYTES));
	CK(cudaMemset(out, 0, COPY_BYTES));
	CK(cudaStreamCreateWithFlags(&sc, cudaStreamNonBlocking));
	CK(cudaStreamCreateWithFlags(&sk, cudaStreamNonBlocking));
	for (b = 0; b < 2; b++) {
		CK(cudaEventCreateWithFlags(&copied[b], cudaEventDisableTiming));
		CK(cudaEventCreateWithFlags(&consumed[b], cudaEventDisableTiming));
	}
	CK(cudaDeviceSynchronize());
	if (r->is_fixed) {
		/* The copy into buffer b waits for the kernel that last read b, and the kernel
		 * for the copy: step i+1's copy runs while step i's kernel does. */
		CK(cudaMemcpyAsync(in[0], h, COPY_BYTES, cudaMemcpyHostToDevice, sc));
		CK(cudaEventRecord(copied[0], sc));
	}
	for (i = 0; i < r->steps; i++) {
		step_begin(r, i);
		if (!r->is_fixed) {
			CK(cudaMemcpy(in[0], h, COPY_BYTES, cudaMemcpyHostToDevice));
			consume<<<blocks, 256>>>(out, in[0], COPY_N, copy_weight(i));
			CK_LAUNCH();
			continue;
		}
		b = i % 2;
		if (i + 1 < r->steps) {
			if (i >= 1)
				CK(cudaStreamWaitEvent(sc, consumed[!b], 0));
			CK(cudaMemcpyAsync(in[!b], h, COPY_BYTES, cudaMemcpyHostToDevice, sc));
			CK(cudaEventRecord(copied[!b], sc));
		}
		CK(cudaStreamWaitEvent(sk, copied[b], 0));
		consume<<<blocks, 256, 0, sk>>>(out, in[b], COPY_N, copy_weight(i));
		CK_LAUNCH();
		CK(cudaEventRecord(consumed[b], sk));
	}
	run_end(r);
	r->checksum = device_sum(out, COPY_N);
	printf("expect: kernel=consume:%d\n", r->steps);
	for (b = 0; b < 2; b++) {
		CK(cudaEventDestroy(copied[b]));
		CK(cudaEventDestroy(consumed[b]));
	}
	CK(cudaStreamDestroy(sc));
	CK(cudaStreamDestroy(sk));
	CK(cudaFree(in[0]));
	CK(cudaFree(in[1]));
	CK(cudaFree(out));
	if (r->is_fixed)
		CK(cudaFreeHost(h));
	else
		free(h);
}

/* ---- alloc: a large buffer allocated and freed every step ---- */

#define ALLOC_BYTES ((size_t)256 << 20)
#define ALLOC_N (ALLOC_BYTES / sizeof(float))
#define ALLOC_FOLD (1 << 20)	/* accumulator length: the buffer folds 64 times onto it */

__global__ void fill(float *buf, size_t n, int step)
{
	size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		buf[i] = (float)((i + step) & 1023) * (1.0f / 1024);
}

__global__ void fold(const float *buf, float *acc)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;
	float s = 0;
	int k;

	for (k = 0; k < (int)(ALLOC_N / ALLOC_FOLD); k++)
		s += buf[(size_t)k * ALLOC_FOLD + j];
	acc[j] = fmaf(acc[j], 0.5f, s * (1.0f / 64));
}

static void run_alloc(struct run *r)
{
	float *buf = NULL, *acc;
	int i;

	CK(cudaMalloc(&acc, ALLOC_FOLD * sizeof(float)));
	CK(cudaMemset(acc, 0, ALLOC_FOLD * sizeof(float)));
	if (r->is_fixed)
		CK(cudaMalloc(&buf, ALLOC_BYTES));
	for (i = 0; i < r->steps; i++) {
		step_begin(r, i);
		if (!r->is_fixed)
			CK(cudaMalloc(&buf, ALLOC_BYTES));
		fill<<<(unsigned)(ALLOC_N / 256), 256>>>(buf, ALLOC_N, i);
		fold<<<ALLOC_FOLD / 256, 256>>>(buf, acc);
		CK_LAUNCH();
		if (!r->is_fixed)
			CK(cudaFree(buf));	/* waits for the GPU: the queue drains every step */
	}
	run_end(r);
	if (r->is_fixed)
		CK(cudaFree(buf));
	r->checksum = device_sum(acc, ALLOC_FOLD);
	printf("expect: kernel=fill:%d kernel=fold:%d\n", r->steps, r->steps);
	CK(cudaFree(acc));
}

/* ---- cpu: the input made on the host ---- */

#define CPU_N (256 << 10)	/* 1 MiB of floats a step */
#define CPU_PASSES 4		/* passes over the input: ~2 ms a step on one core (see below) */
#define CPU_SPIN_NS 500000ull	/* 4 of them: the step's 2 ms of GPU time */
#define CPU_LOOP_US 1500	/* the loop's own host work a step */

/*
 * The step's input: each element an integer hash of (step, index), CPU_PASSES passes of 4
 * multiply-xorshift rounds over the whole array in @scratch, then scaled to [0, 1) into @dst.
 * Exact integer work: the same bits whichever thread makes it. CPU_PASSES was set for ~2 ms a
 * step on the H200 machine's host (1.7-2.9 ms seen); the program prints what it took (prep_ms)
 * so the balance can be checked.
 */
static void cpu_prepare(int step, uint32_t *scratch, float *dst)
{
	uint32_t j, v;
	int p, k;

	for (j = 0; j < CPU_N; j++)
		scratch[j] = (uint32_t)step * 0x9E3779B1u ^ (j * 0x85EBCA77u);
	for (p = 0; p < CPU_PASSES; p++)
		for (j = 0; j < CPU_N; j++) {
			v = scratch[j];
			for (k = 0; k < 4; k++) {
				v = v * 0xC2B2AE3Du + 0x27D4EB2Fu;
				v ^= v >> 15;
			}
			scratch[j] = v;
		}
	for (j = 0; j < CPU_N; j++)
		dst[j] = (float)(scratch[j] >> 8) * (1.0f / 16777216);
}

__global__ void take_input(float *acc, const float *in)
{
	int j = blockIdx.x * blockDim.x + threadIdx.x;

	acc[j] = fmaf(acc[j], 0.75f, in[j]);
}

/* The producer of the fixed variant: step i's input into pinned[i % 2], one or two ahead. */
struct cpu_feed {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	int ready[2];		/* the step whose input buffer b holds, -1: free */
	int steps;
	float *pinned[2];
	uint32_t *scratch;	/* the preparing thread's (one at a time) */
	cudaEvent_t copied[2];	/* the copy that last read buffer b */
	double prep_s;
};

static void *cpu_producer(void *arg)
{
	struct cpu_feed *f = (struct cpu_feed *)arg;
	double t;
	int i, b;

	for (i = 0; i < f->steps; i++) {
		b = i % 2;
		pthread_mutex_lock(&f->lock);
		while (f->ready[b] != -1)
			pthread_cond_wait(&f->cond, &f->lock);
		pthread_mutex_unlock(&f->lock);
		CK(cudaEventSynchronize(f->copied[b]));
		t = now_s();
		cpu_prepare(i, f->scratch, f->pinned[b]);
		f->prep_s += now_s() - t;
		pthread_mutex_lock(&f->lock);
		f->ready[b] = i;
		pthread_cond_broadcast(&f->cond);
		pthread_mutex_unlock(&f->lock);
	}
	return NULL;
}

static void run_cpu(struct run *r)
{
	struct cpu_feed f;
	pthread_t producer;
	cudaStream_t s;
	float *in, *acc;
	double t;
	int i, b, k, spin_blocks;

	/* 16 blocks of 128 threads fill an SM: the spin keeps every SM busy (no low fill) */
	CK(cudaDeviceGetAttribute(&spin_blocks, cudaDevAttrMultiProcessorCount, 0));
	spin_blocks *= 16;
	memset(&f, 0, sizeof(f));
	pthread_mutex_init(&f.lock, NULL);
	pthread_cond_init(&f.cond, NULL);
	f.steps = r->steps;
	f.scratch = (uint32_t *)malloc(CPU_N * sizeof(uint32_t));
	for (b = 0; b < 2; b++) {
		f.ready[b] = -1;
		CK(cudaMallocHost(&f.pinned[b], CPU_N * sizeof(float)));
		CK(cudaEventCreateWithFlags(&f.copied[b], cudaEventDisableTiming));
	}
	CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
	CK(cudaMalloc(&in, CPU_N * sizeof(float)));
	CK(cudaMalloc(&acc, CPU_N * sizeof(float)));
	CK(cudaMemset(acc, 0, CPU_N * sizeof(float)));
	CK(cudaDeviceSynchronize());
	if (r->is_fixed && pthread_create(&producer, NULL, cpu_producer, &f) != 0) {
		fprintf(stderr, "twins: pthread_create failed\n");
		exit(1);
	}
	for (i = 0; i < r->steps; i++) {
		step_begin(r, i);
		b = i % 2;
		if (r->is_fixed) {
			pthread_mutex_lock(&f.lock);
			while (f.ready[b] != i)
				pthread_cond_wait(&f.cond, &f.lock);
			pthread_mutex_unlock(&f.lock);
		} else {
			CK(cudaEventSynchronize(f.copied[b]));
			t = now_s();
			cpu_prepare(i, f.scratch, f.pinned[b]);
			f.prep_s += now_s() - t;
		}
		CK(cudaMemcpyAsync(in, f.pinned[b], CPU_N * sizeof(float), cudaMemcpyHostToDevice,
				   s));
		CK(cudaEventRecord(f.copied[b], s));
		if (r->is_fixed) {
			/* recorded before the buffer is handed back: the producer waits for it */
			pthread_mutex_lock(&f.lock);
			f.ready[b] = -1;
			pthread_cond_broadcast(&f.cond);
			pthread_mutex_unlock(&f.lock);
		}
		take_input<<<CPU_N / 256, 256, 0, s>>>(acc, in);
		for (k = 0; k < 4; k++)
			spin_kernel<<<spin_blocks, 128, 0, s>>>(CPU_SPIN_NS);
		CK_LAUNCH();
		host_busy_us(CPU_LOOP_US);
	}
	if (r->is_fixed)
		pthread_join(producer, NULL);
	run_end(r);
	r->checksum = device_sum(acc, CPU_N);
	printf("twins cpu %s: prep_ms %.3f a step\n", r->is_fixed ? "fixed" : "cause",
	       f.prep_s * 1e3 / r->steps);
	printf("expect: kernel=take_input:%d kernel=spin_kernel:%d\n", r->steps, 4 * r->steps);
	for (b = 0; b < 2; b++) {
		CK(cudaFreeHost(f.pinned[b]));
		CK(cudaEventDestroy(f.copied[b]));
	}
	free(f.scratch);
	CK(cudaFree(in));
	CK(cudaFree(acc));
	CK(cudaStreamDestroy(s));
}

/* ---- main ---- */

static const struct twin_case {
	const char *name;
	void (*run)(struct run *r);
	int default_steps;	/* ~1-3 s of the cause variant on an H200 */
} cases[] = {
	{ "sync", run_sync, 4000 },	/* 0.46 ms a step (fixed 0.34) */
	{ "launch", run_launch, 3000 },	/* 200 launches, 0.7-0.8 ms a step (fixed 0.15) */
	{ "memcpy", run_memcpy, 200 },	/* 64 MiB pageable, 6-13 ms a step (fixed 1.2) */
	{ "alloc", run_alloc, 2000 },	/* cudaMalloc + cudaFree of 256 MiB, 0.5-0.6 ms */
	{ "cpu", run_cpu, 500 },	/* 3.5-4.3 ms a step (fixed 2-3: the producer's) */
};

static int usage(void)
{
	fprintf(stderr, "usage: twins sync|launch|memcpy|alloc|cpu cause|fixed [STEPS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	const struct twin_case *c = NULL;
	struct run r;
	size_t k;

	if (argc < 3 || argc > 4)
		return usage();
	for (k = 0; k < sizeof(cases) / sizeof(cases[0]); k++)
		if (!strcmp(argv[1], cases[k].name))
			c = &cases[k];
	if (!c || (strcmp(argv[2], "cause") && strcmp(argv[2], "fixed")))
		return usage();
	memset(&r, 0, sizeof(r));
	r.is_fixed = !strcmp(argv[2], "fixed");
	r.steps = argc > 3 ? atoi(argv[3]) : c->default_steps;
	if (r.steps < WARM_SHARE)
		return usage();
	r.warm = r.steps / WARM_SHARE;
	c->run(&r);
	printf("twins %s %s: steps %d steady_steps_per_s %.3f checksum %.10e\n", c->name, argv[2],
	       r.steps, (r.steps - r.warm) / (r.t1 - r.t0), r.checksum);
	return 0;
}
