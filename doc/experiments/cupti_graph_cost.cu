// SPDX-License-Identifier: MIT
// CUPTI 13: what a CUDA graph of tiny kernels costs on the GPU while CUPTI is attached with
// every activity kind off, depending on when CUPTI was attached (BENCHMARKS.md run S: sampled
// mode that detaches between windows cost +20 % on torch_overhead.py's graph loop once the
// graph had attached CUPTI again for good, against +0.7 % for sampled mode attached all along).
// Not built with the project; on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o cupti_graph_cost cupti_graph_cost.cu -lcupti
//   for c in plain early late redetach ctx loadon detach0; do for h in off api capture-on inst-on; do
//     ./cupti_graph_cost $c $h; done; done
// Cases (one process each):
//   plain     CUPTI never touched
//   early     attached (timestamp callback, thread id type, buffer callbacks) before the first
//             CUDA call, as the shim's attached sampled mode
//   late      the context made, the kernel loaded and launched 1,000 times before CUPTI is
//             attached (a graph's first call attaching a CUPTI that was never attached)
//   redetach  early, then a window, cuptiFinalize, 1,000 launches detached, attached again
//             (the detaching sampled mode when a graph's first call comes between windows)
//   ctx       attached once the context exists (cudaFree(0)), before the kernel's module loads
//   loadon    early, and kernel records on while the kernel's module loads (its first 1,000
//             launches), off after: a module first used inside a sampled window
//   detach0   attached and detached (cuptiFinalize) before the first CUDA call, then as late
// Second argument: "api" (the windows also ask for the launches' API records, as the attached
// sampled mode's do), "capture-on" (kernel records on while the graph is captured, off before
// it is instantiated), "inst-on" (on while it is instantiated): a graph made inside a window.
// Each case then captures a graph of 200 tiny kernels and prints the GPU's ns a kernel (CUDA
// events over 100 launches of the graph; median of 7), and the host's us to launch the graph
// and wait for it (PyTorch's replay and synchronize; median of 7 x 20), with kinds off,
// after a 100 ms window of kernel records (kinds on, then off), after a window in which the
// graph was launched, and
// with kernel records on.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <vector>
#include <cuda_runtime.h>
#include <cupti.h>

__global__ void k(float *p) { p[threadIdx.x] = p[threadIdx.x] * 0.999f + 1.0f; }

static long nkern;
static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m)
{
	*s = 8 << 20;
	*m = 0;
	*b = (uint8_t *)aligned_alloc(8, *s);
}
static void CUPTIAPI done(CUcontext c, uint32_t sid, uint8_t *b, size_t s, size_t v)
{
	CUpti_Activity *a = NULL;
	(void)c, (void)sid, (void)s;
	while (cuptiActivityGetNextRecord(b, v, &a) == CUPTI_SUCCESS)
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			nkern++;
	free(b);
}
static uint64_t CUPTIAPI ts(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}
static void attach(void)
{
	if (cuptiActivityRegisterTimestampCallback(ts) != CUPTI_SUCCESS ||
	    cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM) != CUPTI_SUCCESS ||
	    cuptiActivityRegisterCallbacks(req, done) != CUPTI_SUCCESS)
		printf("attach failed\n");
}
static void kinds(int on)
{
	if (on)
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	else
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}
static float *buf;
static cudaStream_t st;
static void eager(int n)
{
	for (int i = 0; i < n; i++)
		k<<<1, 128, 0, st>>>(buf);
	cudaStreamSynchronize(st);
}
static int with_api;		/* the windows ask for the launches' API records too */
static void api(int on)
{
	if (!with_api)
		return;
	cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuGraphLaunch, on);
	cuptiActivityEnableDriverApi(CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, on);
	cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaGraphLaunch_v10000, on);
	cuptiActivityEnableRuntimeApi(CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000, on);
}
static cudaGraphExec_t in_window;	/* launched inside the windows once it exists */
static void window(void)
{
	struct timespec d = { 0, 100000000 };

	api(1);
	kinds(1);
	eager(1000);
	if (in_window) {
		for (int i = 0; i < 100; i++)
			cudaGraphLaunch(in_window, st);
		cudaStreamSynchronize(st);
	}
	nanosleep(&d, NULL);
	kinds(0);
	api(0);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}
static double per_kernel(cudaGraphExec_t ge)
{
	cudaEvent_t a, b;
	std::vector<double> v;

	cudaEventCreate(&a);
	cudaEventCreate(&b);
	for (int r = 0; r < 7; r++) {
		float ms;

		cudaEventRecord(a, st);
		for (int i = 0; i < 100; i++)
			cudaGraphLaunch(ge, st);
		cudaEventRecord(b, st);
		cudaEventSynchronize(b);
		cudaEventElapsedTime(&ms, a, b);
		v.push_back(ms * 1e6 / (100 * 200));
	}
	std::sort(v.begin(), v.end());
	return v[3];
}

/* The host's view: one launch of the graph and a wait for it (as PyTorch's replay and a
 * synchronize), microseconds, median of 7 x 20. */
static double per_replay(cudaGraphExec_t ge)
{
	std::vector<double> v;

	for (int r = 0; r < 7; r++) {
		double t0 = (double)ts();

		for (int i = 0; i < 20; i++) {
			cudaGraphLaunch(ge, st);
			cudaStreamSynchronize(st);
		}
		v.push_back(((double)ts() - t0) / 1e3 / 20);
	}
	std::sort(v.begin(), v.end());
	return v[3];
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "plain";
	int traced = strcmp(c, "plain") != 0;

	const char *how = argc > 2 ? argv[2] : "";

	with_api = !strcmp(how, "api");
	cudaGraph_t g;
	cudaGraphExec_t ge;

	if (!strcmp(c, "early") || !strcmp(c, "redetach") || !strcmp(c, "loadon") ||
	    !strcmp(c, "detach0"))
		attach();
	if (!strcmp(c, "detach0") && cuptiFinalize() != CUPTI_SUCCESS)
		printf("finalize failed\n");
	if (!strcmp(c, "ctx")) {
		cudaFree(0);		/* the context made, no module loaded yet */
		attach();
	}
	cudaMalloc(&buf, 128 * sizeof(float));
	cudaMemset(buf, 0, 128 * sizeof(float));
	cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking);
	if (!strcmp(c, "loadon"))
		kinds(1);
	eager(1000);
	if (!strcmp(c, "loadon")) {
		kinds(0);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	}
	if (!strcmp(c, "redetach")) {
		window();
		if (cuptiFinalize() != CUPTI_SUCCESS)
			printf("finalize failed\n");
		eager(1000);
		attach();
	} else if (!strcmp(c, "late") || !strcmp(c, "detach0")) {
		attach();
	}
	if (!strcmp(how, "capture-on"))
		kinds(1);
	cudaStreamBeginCapture(st, cudaStreamCaptureModeThreadLocal);
	for (int i = 0; i < 200; i++)
		k<<<1, 128, 0, st>>>(buf);
	cudaStreamEndCapture(st, &g);
	if (!strcmp(how, "capture-on"))
		kinds(0);
	if (!strcmp(how, "inst-on"))
		kinds(1);
	cudaGraphInstantiate(&ge, g, 0);
	if (!strcmp(how, "inst-on"))
		kinds(0);
	cudaGraphLaunch(ge, st);
	cudaStreamSynchronize(st);
	printf("%-9s %-10s kinds off: %.1f ns a kernel\n", c, how, per_kernel(ge));
	printf("%-9s %-10s kinds off: launch and wait %.1f us a graph\n", c, how, per_replay(ge));
	if (traced) {
		window();
		printf("%-9s after a window, kinds off: %.1f ns a kernel\n", c, per_kernel(ge));
		in_window = ge;
		window();
		printf("%-9s after a window with the graph in it%s, kinds off: %.1f ns a kernel\n", c,
		       with_api ? " (API records)" : "", per_kernel(ge));
		printf("%-9s after the windows, kinds off: launch and wait %.1f us a graph\n", c,
		       per_replay(ge));
		kinds(1);
		printf("%-9s kernel records on: %.1f ns a kernel\n", c, per_kernel(ge));
		kinds(0);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		printf("%-9s kernel records seen: %ld\n", c, nkern);
	}
	printf("%-9s CUDA: %s\n", c, cudaGetErrorString(cudaGetLastError()));
	return 0;
}
