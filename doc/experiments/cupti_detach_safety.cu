// SPDX-License-Identifier: MIT
// CUPTI 13: is detaching CUPTI (cuptiFinalize) between sampled windows safe for the program
// it is attached to? A shim build that detached from its writer thread ended PyTorch processes
// with "malloc(): unsorted double linked list corrupted" and a CUDA graph loop with
// "unspecified launch failure" (BENCHMARKS.md run L). Not built with the project; on a GPU
// machine:
//   nvcc -O2 -arch=sm_90 -o cupti_detach_safety cupti_detach_safety.cu -lcupti -lpthread
//   for c in graph-synced graph-inflight other-thread own-thread; do ./cupti_detach_safety $c; done
// Cases (each prints its CUDA errors and the records seen, and ends "done" if it got there):
//   graph-synced    a CUDA graph of 200 kernels captured and instantiated while CUPTI records
//                   kernels, launched 50 times; kinds off, flush, device synchronized,
//                   cuptiFinalize; the graph launched 2,000 times detached, then attached again
//                   (kernels on) 50 times
//   graph-inflight  the same, cuptiFinalize with the graph's launches still running
//   other-thread    a thread launches empty kernels without pause; the main thread opens a
//                   window (kernels and launch API records), closes it, flushes and detaches,
//                   40 times at 50 ms (the shim's writer did this)
//   own-thread      the same, but the detach is done by the launching thread itself, right after
//                   one of its launches returned (as at a hook's exit), while a second thread
//                   launches too
//   other-pool      other-thread with the buffers from a pool of 16 that is reused, as the
//                   shim's are (the other cases allocate a buffer for every request and free
//                   it on completion); prints how many buffers CUPTI still held after each
//                   detach
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <pthread.h>
#include <unistd.h>
#include <cuda_runtime.h>
#include <cupti.h>

__global__ void k(float *p) { if (p) p[threadIdx.x] += 1.0f; }

static std::atomic<long> nkern, napi;
static int use_pool;
static pthread_mutex_t pool_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *pool_free[16];
static int nr_pool_free, nr_pool_all, nr_held;
static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m)
{
	*s = 4 << 20;
	*m = 0;
	if (!use_pool) {
		*b = (uint8_t *)aligned_alloc(8, *s);
		return;
	}
	pthread_mutex_lock(&pool_lock);
	if (nr_pool_free)
		*b = pool_free[--nr_pool_free];
	else if (nr_pool_all < 16)
		*b = (uint8_t *)aligned_alloc(8, *s), nr_pool_all++;
	else
		*b = NULL, *s = 0;
	if (*b)
		nr_held++;
	pthread_mutex_unlock(&pool_lock);
}
static void CUPTIAPI done(CUcontext c, uint32_t sid, uint8_t *b, size_t s, size_t v)
{
	CUpti_Activity *a = NULL;
	while (cuptiActivityGetNextRecord(b, v, &a) == CUPTI_SUCCESS) {
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			nkern++;
		else
			napi++;
	}
	if (!use_pool) {
		free(b);
		return;
	}
	pthread_mutex_lock(&pool_lock);
	pool_free[nr_pool_free++] = b;
	nr_held--;
	pthread_mutex_unlock(&pool_lock);
}

static void api(int on)
{
	const char *name;
	for (uint32_t cb = 1; cb < CUPTI_RUNTIME_TRACE_CBID_SIZE; cb++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cb, &name) == CUPTI_SUCCESS &&
		    name && !strncmp(name, "cudaLaunch", 10))
			cuptiActivityEnableRuntimeApi(cb, on);
}

static void attach(void)
{
	cuptiActivityRegisterCallbacks(req, done);
	api(1);
	cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
}

static void off_and_flush(void)
{
	cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	api(0);
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
}

static void check(const char *what)
{
	cudaError_t e = cudaDeviceSynchronize();
	printf("  %s: %s; kernels %ld, API %ld\n", what, e ? cudaGetErrorString(e) : "ok",
	       nkern.load(), napi.load());
	fflush(stdout);
}

static int graph_case(int synced)
{
	cudaStream_t s;
	cudaGraph_t g;
	cudaGraphExec_t ge;
	float *p;

	cudaMalloc(&p, 4096);
	cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking);
	attach();
	cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
	for (int i = 0; i < 200; i++)
		k<<<1, 32, 0, s>>>(p);
	cudaStreamEndCapture(s, &g);
	cudaGraphInstantiate(&ge, g, 0);
	for (int i = 0; i < 50; i++)
		cudaGraphLaunch(ge, s);
	if (synced)
		check("attached");
	off_and_flush();
	cuptiFinalize();
	for (int i = 0; i < 2000; i++)
		cudaGraphLaunch(ge, s);
	check("detached");
	attach();
	for (int i = 0; i < 50; i++)
		cudaGraphLaunch(ge, s);
	check("attached again");
	off_and_flush();
	return 0;
}

static std::atomic<int> stop, detach_req, detach_done;

static void *launcher(void *arg)
{
	int own = arg != NULL;
	long n = 0;

	while (!stop.load()) {
		k<<<1, 32>>>(NULL);
		if (own && detach_req.load() && !detach_done.load()) {
			cuptiFinalize();
			detach_done = 1;
		}
		if (++n % 600 == 0)
			cudaStreamSynchronize(0);
	}
	return NULL;
}

static int thread_case(int own)
{
	pthread_t a, b;

	cudaFree(0);
	attach();
	pthread_create(&a, NULL, launcher, own ? (void *)1 : NULL);
	pthread_create(&b, NULL, launcher, NULL);
	for (int i = 0; i < 40; i++) {
		usleep(50000);
		off_and_flush();
		if (own) {
			detach_done = 0;
			detach_req = 1;
			while (!detach_done.load())
				usleep(100);
			detach_req = 0;
		} else {
			cuptiFinalize();
			if (use_pool && i < 5)
				printf("  detach %d: CUPTI holds %d of the pool's %d buffers\n", i,
				       nr_held, nr_pool_all);
		}
		usleep(50000);
		attach();
	}
	off_and_flush();
	stop = 1;
	pthread_join(a, NULL);
	pthread_join(b, NULL);
	check("threads");
	return 0;
}

int main(int argc, char **argv)
{
	const char *c = argc > 1 ? argv[1] : "";

	printf("%s\n", c);
	if (!strcmp(c, "graph-synced"))
		graph_case(1);
	else if (!strcmp(c, "graph-inflight"))
		graph_case(0);
	else if (!strcmp(c, "other-thread"))
		thread_case(0);
	else if (!strcmp(c, "own-thread"))
		thread_case(1);
	else if (!strcmp(c, "other-pool"))
		use_pool = 1, thread_case(0);
	else
		return 2;
	printf("  done\n");
	return 0;
}
