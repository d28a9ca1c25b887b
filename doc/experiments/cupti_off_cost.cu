// SPDX-License-Identifier: MIT
// CUPTI 13: which part of CUPTI being attached costs a runtime launch while every activity kind
// is off (BENCHMARKS.md run K: +42-47 % on this loop with the shim's set-up; sampled mode's
// +10-15 % on an eager PyTorch loop, between windows). Not built with the project; on a GPU
// machine:
//   nvcc -O2 -arch=sm_90 -o cupti_off_cost cupti_off_cost.cu -lcupti
//   for c in plain reg ts kinds drv rt shim; do ./cupti_off_cost $c; done
// Each case runs 6 phases of 2 s of back-to-back runtime launches of an empty kernel
// (cudaLaunchKernel, as PyTorch does), synchronizing every 600; a "window" opens for the first
// 100 ms of every phase with what the case turns on, and is closed again. Prints per phase the
// host's ns a launch outside the window, the records seen (kernels; driver and runtime API
// records apart), and the resident memory.
//   plain  CUPTI never touched
//   reg    buffer callbacks registered; nothing else, no window
//   ts     reg and the timestamp callback, no window
//   kinds  reg; windows of CONCURRENT_KERNEL only
//   drv    kinds, and the launches' driver API records in the windows
//   rt     kinds, and the launches' runtime API records in the windows
//   shim   as the shim: timestamp callback, thread id type, reg; windows of kernels, copies,
//          sets and the driver and runtime API records of launches, copies and sets
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

static uint64_t CUPTIAPI ts_cb(void) { return now_ns(); }

static long nkern, ndrv, nrt;
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
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			nkern++;
		else if (a->kind == CUPTI_ACTIVITY_KIND_DRIVER)
			ndrv++;
		else if (a->kind == CUPTI_ACTIVITY_KIND_RUNTIME)
			nrt++;
	}
	free(b);
}

static int wanted(const char *name, const char *const *p)
{
	for (; *p; p++)
		if (!strncmp(name, *p, strlen(*p)))
			return 1;
	return 0;
}

static void api(int drv, int rt, int on)
{
	static const char *const dp[] = { "cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch", NULL };
	static const char *const rp[] = { "cudaLaunch", "cudaMemcpy", "cudaMemset",
					  "cudaGraphLaunch", NULL };
	const char *name;
	for (uint32_t cb = 1; drv && cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &name) == CUPTI_SUCCESS &&
		    name && wanted(name, dp))
			cuptiActivityEnableDriverApi(cb, on);
	for (uint32_t cb = 1; rt && cb < CUPTI_RUNTIME_TRACE_CBID_SIZE; cb++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cb, &name) == CUPTI_SUCCESS &&
		    name && wanted(name, rp))
			cuptiActivityEnableRuntimeApi(cb, on);
}

static const CUpti_ActivityKind all_kinds[] = { CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
						CUPTI_ACTIVITY_KIND_MEMCPY,
						CUPTI_ACTIVITY_KIND_MEMSET,
						CUPTI_ACTIVITY_KIND_MEMCPY2 };

static const char *mode;
static int has_window;

static void window(int on)
{
	int shim = !strcmp(mode, "shim"), drv = shim || !strcmp(mode, "drv");
	int rt = shim || !strcmp(mode, "rt");
	size_t nk = shim ? 4 : 1;

	if (on) {
		api(drv, rt, 1);
		for (size_t i = 0; i < nk; i++)
			cuptiActivityEnable(all_kinds[i]);
	} else {
		for (size_t i = 0; i < nk; i++)
			cuptiActivityDisable(all_kinds[i]);
		api(drv, rt, 0);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
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
	mode = argc > 1 ? argv[1] : "plain";
	if (strcmp(mode, "plain")) {
		if (!strcmp(mode, "ts") || !strcmp(mode, "shim"))
			cuptiActivityRegisterTimestampCallback(ts_cb);
		if (!strcmp(mode, "shim"))
			cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		cuptiActivityRegisterCallbacks(req, done);
		has_window = strcmp(mode, "reg") && strcmp(mode, "ts");
	}
	if (has_window)
		window(1);	/* on at the context's creation, as the shim's first window */
	cudaFree(0);
	for (int i = 0; i < 6000; i++)
		empty<<<1, 1>>>();
	cudaDeviceSynchronize();
	if (has_window)
		window(0);
	printf("%s\n", mode);
	for (int phase = 0; phase < 6; phase++) {
		uint64_t t0 = now_ns(), t_out = 0, n_out = 0;
		int open = 0;

		if (has_window) {
			window(1);
			open = 1;
		}
		while (now_ns() - t0 < 2000000000ull) {
			uint64_t t = now_ns();

			if (open && t - t0 >= 100000000ull) {
				window(0);
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
			window(0);
		printf("  phase %d: %.1f ns a launch outside the window, kernels %ld, driver API %ld, "
		       "runtime API %ld, rss %ld kB\n",
		       phase, n_out ? (double)t_out / n_out : 0.0, nkern, ndrv, nrt, rss_kb());
		fflush(stdout);
	}
	return 0;
}
