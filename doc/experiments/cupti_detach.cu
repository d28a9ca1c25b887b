// SPDX-License-Identifier: MIT
// CUPTI 13: what CUPTI costs a launch-bound runtime-API loop while it is attached with every
// activity kind and API record off, and whether detaching it (cuptiFinalize) between windows
// gives that back (BENCHMARKS.md "Runs G, H, I and J": sampled mode cost +10-15 % on an eager
// PyTorch loop, between windows too, and the process grew with the calls made). Not built with
// the project; on a GPU machine:
//   nvcc -O2 -arch=sm_90 -o cupti_detach cupti_detach.cu -lcupti
//   for c in plain off detach; do ./cupti_detach $c; done
// Each case runs 10 phases of 2 s of back-to-back launches of an empty kernel through the
// runtime (cudaLaunchKernel, as PyTorch does), synchronizing every 600; a "window" (kernel
// records and the launches' runtime and driver API records on) opens for the first 100 ms of
// every phase. Prints per phase the host's ns a launch outside the window, the records seen,
// and the resident memory; at the end the cost of each attach and detach.
//   plain   CUPTI never touched
//   off     attached once; kinds and API records turned on and off around each window
//   detach  attached for each window, cuptiFinalize after it (buffers flushed first)
//   early-off, early-detach
//           the same, but the first window opens before the context is created (API
//           records on at its creation, which a context needs to give them while CUPTI stays
//           attached: cupti_api_records.cu): do they come in the later windows, and after a
//           detach?
// The records are counted by kind: kernels, and the launches' API records (runtime and driver).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <cuda_runtime.h>
#include <cupti.h>

__global__ void empty(void) {}

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + t.tv_nsec;
}

static long nrec, nkern, napi;
static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m)
{
	*s = 4 << 20;
	*b = (uint8_t *)aligned_alloc(8, *s);
	*m = 0;
}
static void CUPTIAPI done(CUcontext c, uint32_t sid, uint8_t *b, size_t s, size_t v)
{
	CUpti_Activity *a = NULL;
	while (cuptiActivityGetNextRecord(b, v, &a) == CUPTI_SUCCESS) {
		nrec++;
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL ||
		    a->kind == CUPTI_ACTIVITY_KIND_KERNEL)
			nkern++;
		else if (a->kind == CUPTI_ACTIVITY_KIND_DRIVER || a->kind == CUPTI_ACTIVITY_KIND_RUNTIME)
			napi++;
	}
	free(b);
}

static void api(int on)
{
	const char *name;
	for (uint32_t cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &name) == CUPTI_SUCCESS &&
		    name && !strncmp(name, "cuLaunch", 8))
			cuptiActivityEnableDriverApi(cb, on);
	for (uint32_t cb = 1; cb < CUPTI_RUNTIME_TRACE_CBID_SIZE; cb++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cb, &name) == CUPTI_SUCCESS &&
		    name && !strncmp(name, "cudaLaunch", 10))
			cuptiActivityEnableRuntimeApi(cb, on);
}

static uint64_t t_attach, t_detach;
static int n_attach;

static void window(int on, int detach)
{
	uint64_t t = now_ns();

	if (on) {
		if (detach || !n_attach)
			cuptiActivityRegisterCallbacks(req, done);
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		api(1);
		if (detach || !n_attach) {
			n_attach++;
			t_attach += now_ns() - t;
		}
	} else {
		api(0);
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		if (detach) {
			cuptiFinalize();
			t_detach += now_ns() - t;
		}
	}
}

static long rss_kb(void)
{
	char line[256];
	long kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof line, f))
		if (!strncmp(line, "VmRSS:", 6))
			kb = atol(line + 6);
	if (f)
		fclose(f);
	return kb;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "plain";
	int use = strcmp(mode, "plain") != 0, detach = strstr(mode, "detach") != NULL;
	int early = !strncmp(mode, "early", 5);

	if (early)
		window(1, detach);
	cudaFree(0);
	if (early)
		window(0, detach);
	for (int i = 0; i < 6000; i++)
		empty<<<1, 1>>>();
	cudaDeviceSynchronize();
	printf("%s\n", mode);
	for (int phase = 0; phase < 10; phase++) {
		uint64_t t0 = now_ns(), t_out = 0, n_out = 0;
		int open = 0;

		if (use) {
			window(1, detach);
			open = 1;
		}
		while (now_ns() - t0 < 2000000000ull) {
			uint64_t t = now_ns();

			if (open && t - t0 >= 100000000ull) {
				window(0, detach);
				open = 0;
				t = now_ns();
			}
			for (int i = 0; i < 600; i++)
				empty<<<1, 1>>>();
			if (!open) {
				t_out += now_ns() - t;
				n_out += 600;
			}
			cudaDeviceSynchronize();
		}
		if (open)
			window(0, detach);
		printf("  phase %d: %.1f ns a launch outside the window, records %ld (kernels %ld, "
		       "API %ld), rss %ld kB\n",
		       phase, n_out ? (double)t_out / n_out : 0.0, nrec, nkern, napi, rss_kb());
		fflush(stdout);
	}
	if (n_attach)
		printf("  attach %.3f ms, detach %.3f ms on average (%d)\n", t_attach / 1e6 / n_attach,
		       detach ? t_detach / 1e6 / n_attach : 0.0, n_attach);
	return 0;
}
