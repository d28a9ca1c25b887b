// SPDX-License-Identifier: MIT
/*
 * cupti_rss.c - which state of an attached CUPTI makes a PyTorch process grow (BENCHMARKS.md
 * runs G, I, J: 2.4-4.3 MB/s, steadily, in full and sampled mode and with CUPTI alone, while a
 * C loop of driver launches stays flat). Run Q ran it while torch_overhead.py still captured
 * its CUDA graph at start whatever the loops (every case, plain included, had a graph); it
 * now captures one only for --loops graph: add it to the loops to run Q's case again, and
 * compare without (run R). A library preloaded into the program, no shim: it
 * attaches CUPTI as the case says and, from a thread of its own that makes no CUDA call,
 * opens windows or flushes. Not built with the project; on a GPU machine:
 *   gcc -O2 -shared -fPIC -o libcupti_rss.so cupti_rss.c -I$CUDA/include \
 *       -I$CUDA/extras/CUPTI/include -L$CUDA/extras/CUPTI/lib64 -lcupti -lpthread
 *   CUPTI_RSS_CASE=kwin LD_PRELOAD=$PWD/libcupti_rss.so python3 torch_overhead.py \
 *       --loops eager --seconds 10 --warm 1 --repeat 12
 * (torch_overhead.py prints rss_kb after each loop). Cases:
 *   reg    buffer callbacks registered, nothing enabled
 *   ts     reg and a timestamp callback (CLOCK_MONOTONIC)
 *   kwin   reg; CONCURRENT_KERNEL on for 50 ms every 500 ms, a forced flush at each close
 *   kon    reg; CONCURRENT_KERNEL on throughout, flushed every 100 ms
 *   rtwin  kwin, and the runtime API records of launches in the windows
 *   rton   kon, and the runtime API records of launches throughout
 * At exit prints "cupti_rss CASE: N kernel records, M runtime records, B buffers" to stderr.
 */
#include <cupti.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define BUF_BYTES (4u << 20)

static const char *mode;
static unsigned long long nr_kern, nr_rt, nr_bufs;

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
			       size_t valid)
{
	CUpti_Activity *a = NULL;

	(void)ctx;
	(void)stream;
	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &a) == CUPTI_SUCCESS) {
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			__atomic_fetch_add(&nr_kern, 1, __ATOMIC_RELAXED);
		else if (a->kind == CUPTI_ACTIVITY_KIND_RUNTIME)
			__atomic_fetch_add(&nr_rt, 1, __ATOMIC_RELAXED);
	}
	__atomic_fetch_add(&nr_bufs, 1, __ATOMIC_RELAXED);
	free(buf);
}

static uint64_t CUPTIAPI mono_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000u + (uint64_t)t.tv_nsec;
}

static void launch_records(uint8_t on)
{
	const char *name;
	uint32_t cb;

	for (cb = 1; cb < CUPTI_RUNTIME_TRACE_CBID_SIZE; cb++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cb, &name) == CUPTI_SUCCESS &&
		    name && !strncmp(name, "cudaLaunch", 10))
			cuptiActivityEnableRuntimeApi(cb, on);
}

static int is(const char *m)
{
	return !strcmp(mode, m);
}

static void *windows(void *arg)
{
	int win = is("kwin") || is("rtwin"), on = is("kon") || is("rton");
	int rt = is("rtwin") || is("rton");

	(void)arg;
	sleep(1);
	if (on) {
		if (rt)
			launch_records(1);
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		for (;;) {
			usleep(100000);
			cuptiActivityFlushAll(0);
		}
	}
	while (win) {
		if (rt)
			launch_records(1);
		cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		usleep(50000);
		cuptiActivityDisable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
		if (rt)
			launch_records(0);
		cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		usleep(450000);
	}
	return NULL;
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "cupti_rss %s: %llu kernel records, %llu runtime records, %llu buffers\n",
		mode, nr_kern, nr_rt, nr_bufs);
}

__attribute__((constructor)) static void start(void)
{
	pthread_t t;

	mode = getenv("CUPTI_RSS_CASE");
	if (!mode)
		return;
	if (is("ts") && cuptiActivityRegisterTimestampCallback(mono_ns) != CUPTI_SUCCESS)
		fprintf(stderr, "cupti_rss: no timestamp callback\n");
	if (cuptiActivityRegisterCallbacks(requested, completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_rss: no buffer callbacks\n");
		return;
	}
	atexit(at_exit);
	if (!is("reg") && !is("ts"))
		pthread_create(&t, NULL, windows, NULL);
}
