// SPDX-License-Identifier: MIT
// CUPTI 13: does a CUDA graph's kernel records depend on whether the kernel kind was on when
// the graph was instantiated (BENCHMARKS.md "Runs G, H, I and J")? Sampled mode turns
// CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL on and off around windows; a graph built between two
// windows gave implausible records. Not built with the project; on a GPU machine:
//   nvcc -O2 -arch=sm_90 -cubin -o k.cubin cupti_graph_records.cu
//   nvcc -O2 -arch=sm_90 -o cupti_graph_records cupti_graph_records.cu -lcupti -lcuda
//   for c in 1 2 3 4 5 6 7 8; do ./cupti_graph_records $c; done
// Each launch prints the kernel records that came for it: how many, how many with a zero or
// inverted timestamp, the sum of their durations, and the span they cover against the host's
// time around the launch (CLOCK_MONOTONIC, the clock the shim gives CUPTI).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda.h>
#include <cupti.h>

#define NODES 600
extern "C" __global__ void k(float *p) { p[threadIdx.x] = tanhf(p[threadIdx.x]); }

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}
static uint64_t CUPTIAPI ts(void) { return now_ns(); }

static int nk, nbad;
static uint64_t sum_ns, lo, hi;
static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m)
{
	*s = 8 << 20;
	*b = (uint8_t *)aligned_alloc(8, *s);
	*m = 0;
}
static void CUPTIAPI done(CUcontext c, uint32_t sid, uint8_t *b, size_t s, size_t v)
{
	CUpti_Activity *a = NULL;
	while (cuptiActivityGetNextRecord(b, v, &a) == CUPTI_SUCCESS) {
		if (a->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		CUpti_ActivityKernel10 *r = (CUpti_ActivityKernel10 *)a;
		nk++;
		if (!r->start || r->end <= r->start) {
			nbad++;
			continue;
		}
		sum_ns += r->end - r->start;
		if (!lo || r->start < lo)
			lo = r->start;
		if (r->end > hi)
			hi = r->end;
	}
	free(b);
}
static void kinds(int on)
{
	if (on)
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	else
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static CUfunction f;
static float *buf;
static CUstream st;

static CUgraph capture(void)
{
	CUgraph g;
	void *args[] = { &buf };
	cuStreamBeginCapture(st, CU_STREAM_CAPTURE_MODE_GLOBAL);
	for (int i = 0; i < NODES; i++)
		cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, st, args, 0);
	cuStreamEndCapture(st, &g);
	return g;
}
static CUgraphExec instantiate(CUgraph g)
{
	CUgraphExec e;
	if (cuGraphInstantiateWithFlags(&e, g, 0) != CUDA_SUCCESS)
		printf("instantiate failed\n");
	return e;
}
static void launch(CUgraphExec e, int times, const char *what)
{
	uint64_t t0, t1;

	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	nk = nbad = 0;
	sum_ns = lo = hi = 0;
	t0 = now_ns();
	for (int i = 0; i < times; i++)
		cuGraphLaunch(e, st);
	cuStreamSynchronize(st);
	t1 = now_ns();
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	printf("  %-52s records %5d/%5d bad %5d sum %9.3f ms span %8.3f ms host %8.3f ms "
	       "start-t0 %+.3f ms t1-end %+.3f ms\n",
	       what, nk, times * NODES, nbad, sum_ns / 1e6, hi > lo ? (hi - lo) / 1e6 : 0.0,
	       (t1 - t0) / 1e6, lo ? ((double)lo - (double)t0) / 1e6 : 0.0,
	       hi ? ((double)t1 - (double)hi) / 1e6 : 0.0);
}

int main(int argc, char **argv)
{
	int t = argc > 1 ? atoi(argv[1]) : 1;
	CUdevice d;
	CUcontext c;
	CUmodule m;
	CUgraph g;
	CUgraphExec e, e2;

	cuptiActivityRegisterTimestampCallback(ts);
	cuptiActivityRegisterCallbacks(req, done);
	kinds(1);
	cuInit(0);
	cuDeviceGet(&d, 0);
	cuDevicePrimaryCtxRetain(&c, d);
	cuCtxSetCurrent(c);
	if (cuModuleLoad(&m, "k.cubin") != CUDA_SUCCESS) {
		printf("module load failed (nvcc -O2 -arch=sm_90 -cubin -o k.cubin %s)\n", __FILE__);
		return 1;
	}
	cuModuleGetFunction(&f, m, "k");
	cuMemAlloc((CUdeviceptr *)&buf, 256 * sizeof(float));
	cuMemsetD32((CUdeviceptr)buf, 0, 256);
	cuStreamCreate(&st, CU_STREAM_NON_BLOCKING);
	printf("case %d\n", t);
	switch (t) {
	case 1:
		g = capture();
		e = instantiate(g);
		launch(e, 20, "on at capture, instantiation and launch");
		break;
	case 2:
		g = capture();
		kinds(0);
		e = instantiate(g);
		kinds(1);
		launch(e, 20, "captured on, instantiated off, launched on");
		break;
	case 3:
		kinds(0);
		g = capture();
		e = instantiate(g);
		kinds(1);
		launch(e, 20, "captured and instantiated off, launched on");
		break;
	case 4:
		kinds(0);
		g = capture();
		kinds(1);
		e = instantiate(g);
		launch(e, 20, "captured off, instantiated on, launched on");
		kinds(0);
		launch(e, 20, "  then launched off");
		kinds(1);
		launch(e, 20, "  then on again");
		break;
	case 5:
		kinds(0);
		g = capture();
		e = instantiate(g);
		kinds(1);
		launch(e, 20, "instantiated off, launched on");
		cuGraphUpload(e, st);
		launch(e, 20, "  after cuGraphUpload with kinds on");
		e2 = instantiate(g);
		launch(e2, 20, "  the same graph instantiated again, kinds on");
		break;
	case 7:
	case 8: {
		/*
		 * Memory: eager launches for 120 s with the kernel kind on (7), and the launch's
		 * API records too (8); the process's resident memory every 10 s. Buffers are
		 * freed as they come back, so growth is CUPTI's own.
		 */
		void *args[] = { &buf };
		const char *name;
		uint64_t t0 = now_ns(), next = t0;
		long n = 0;
		if (t == 8)
			for (uint32_t cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++)
				if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &name) ==
					    CUPTI_SUCCESS &&
				    name && !strncmp(name, "cuLaunch", 8))
					cuptiActivityEnableDriverApi(cb, 1);
		while (now_ns() - t0 < 120000000000ull) {
			for (int i = 0; i < 600; i++)
				cuLaunchKernel(f, 1, 1, 1, 256, 1, 1, 0, st, args, 0);
			cuStreamSynchronize(st);
			n += 600;
			if (now_ns() >= next) {
				char line[256];
				FILE *s = fopen("/proc/self/status", "r");
				cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
				while (s && fgets(line, sizeof line, s))
					if (!strncmp(line, "VmRSS:", 6))
						printf("  %s t %5.1f s kernels %9ld records %9d rss %s",
						       t == 7 ? "kinds" : "kinds+api",
						       (now_ns() - t0) / 1e9, n, nk, line + 6);
				if (s)
					fclose(s);
				fflush(stdout);
				next += 10000000000ull;
			}
		}
		break;
	}
	case 6:
		/* The shim's window: kinds on, then off, with a graph instantiated in between. */
		g = capture();
		e = instantiate(g);
		launch(e, 5, "instantiated on (window 1)");
		kinds(0);
		e2 = instantiate(g);
		kinds(1);
		launch(e, 5, "  window 2: the graph instantiated in window 1");
		launch(e2, 5, "  window 2: the graph instantiated between windows");
		break;
	}
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	return 0;
}
