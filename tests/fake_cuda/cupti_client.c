// SPDX-License-Identifier: MIT
/*
 * cupti_client.c - a CUDA program with a CUPTI client of its own, calling CUPTI in the orders
 * torch.profiler's Kineto does (libkineto/src/CuptiActivityApi.cpp: its timestamp callback,
 * cuptiActivityRegisterCallbacks, then cuptiActivityEnable per kind; at the end
 * cuptiActivityDisable per kind and a flush to collect), so tests/e2e/shim_cupti_clients.sh
 * can check what the shim keeps and notes while the client holds CUPTI. CUPTI comes from
 * dlsym(RTLD_DEFAULT): the fake CUPTI inside tests/fake_cupti/libcuda.so.1, or the shim's
 * interposers in front of it. Output on stdout is the same with and without the shim; the
 * times of the client's first CUPTI call go to stderr (CLOCK_MONOTONIC ns, the trace's clock).
 *
 *   cupti_client held      5 launches; the client's session (register, enable); 20 launches;
 *                          it never disables (a profiler held to the end); flush to count
 *   cupti_client early     the session before CUDA is initialized; 10 launches; disable,
 *                          flush; 10 launches; exit with no flush of its own
 *   cupti_client forceload kernels enabled with no callbacks (Kineto's "force load"); 5
 *                          launches; register and enable copies only; 3 launches; disable
 *                          both, flush; 5 launches
 *   cupti_client again     5 launches; a session of 3 launches; disable without a flush; a
 *                          second session at once: 3 launches, 1.3 s, 3 launches; disable,
 *                          flush; 5 launches
 *   cupti_client cycles    3 times: 5 launches, a session of 3 launches (torch.profiler's
 *                          schedule: warm-up and active steps, then collection); 5 launches
 *   cupti_client slow      cycles with 60 ms of launches, one a millisecond, before each
 *                          session and after it (sampled windows open, close and detach
 *                          CUPTI meanwhile)
 *   cupti_client slowapi   slow, each session also with the runtime API records' kind on,
 *                          as Kineto's (after it, no detach: the fake CUPTI aborts there);
 *                          300 ms before the first session
 *   cupti_client subscribe 150 ms of launches, one a millisecond; then, with no CUDA call,
 *                          waits (at most 2 s) until the one callback subscription is held
 *                          (a detaching sampled shim arms its detach so at a window's close)
 *                          and takes it itself (cuptiSubscribe, the driver domain on); 300
 *                          ms of launches, counting its callbacks, in the last 100 ms apart;
 *                          prints whether it was held when asked, the subscribe's result and
 *                          both counts (no kernel records of its own)
 *
 * Each prints the kernel records its own session received and whether every one carried its
 * own clock's timestamps.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static struct {
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*clock)(CUpti_TimestampCallbackFunc);
	CUptiResult (*enable)(CUpti_ActivityKind);
	CUptiResult (*disable)(CUpti_ActivityKind);
	CUptiResult (*flush)(uint32_t);
	CUptiResult (*next)(uint8_t *, size_t, CUpti_Activity **);
} cupti;

static unsigned long long kernels, off_clock;
static int failures;
static CUfunction fn;

/* The client's clock: CLOCK_REALTIME moved a day ahead, so its records are told apart. */
#define CLIENT_CLOCK_OFFSET_NS (86400ull * 1000000000ull)

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t CUPTIAPI client_clock(void)
{
	return clock_ns(CLOCK_REALTIME) + CLIENT_CLOCK_OFFSET_NS;
}

static void CUPTIAPI client_request(uint8_t **b, size_t *size, size_t *max_records)
{
	*b = aligned_alloc(8, 1 << 16);
	*size = *b ? 1 << 16 : 0;
	*max_records = 0;
}

static void CUPTIAPI client_complete(CUcontext ctx, uint32_t stream, uint8_t *b, size_t size,
				     size_t valid)
{
	uint64_t lo = client_clock() - 3600ull * 1000000000u, hi = client_clock() + 1000000000u;
	CUpti_Activity *r = NULL;

	(void)ctx, (void)stream, (void)size;
	while (cupti.next(b, valid, &r) == CUPTI_SUCCESS) {
		const CUpti_ActivityKernel10 *k = (const void *)r;

		if (r->kind != CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			continue;
		kernels++;
		off_clock += k->start < lo || k->start > hi;
	}
	free(b);
}

static void check(const char *what, CUptiResult r)
{
	if (r != CUPTI_SUCCESS) {
		printf("%s: %d\n", what, r);
		failures++;
	}
}

static void launch(int n)
{
	int i;

	for (i = 0; i < n; i++)
		cuLaunchKernel(fn, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
}

static void cuda_up(void)
{
	CUmodule mod;

	cuInit(0);
	cuModuleLoadData(&mod, "image");
	cuModuleGetFunction(&fn, mod, "_Z4spinv");
}

/* Kineto's enableCuptiActivities: its clock, its buffers, then its kinds. */
static void session_begin(const char *tag)
{
	uint64_t t0 = clock_ns(CLOCK_MONOTONIC);

	check("clock", cupti.clock(client_clock));
	check("register", cupti.reg(client_request, client_complete));
	check("enable kernels", cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	check("enable copies", cupti.enable(CUPTI_ACTIVITY_KIND_MEMCPY));
	fprintf(stderr, "%s: session %llu %llu\n", tag, (unsigned long long)t0,
		(unsigned long long)clock_ns(CLOCK_MONOTONIC));
}

/* Kineto's stopTrace, then its collection: every kind off, then a forced flush. */
static void session_end(void)
{
	check("disable kernels", cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
	check("disable copies", cupti.disable(CUPTI_ACTIVITY_KIND_MEMCPY));
	check("flush", cupti.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
}

static void pause_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000 };

	nanosleep(&ts, NULL);
}

/* The client's callback subscription (mode subscribe): API exits counted. */
static _Atomic unsigned long long callbacks;

static void CUPTIAPI on_callback(void *data, CUpti_CallbackDomain domain, CUpti_CallbackId cbid,
				 const void *info)
{
	(void)data;
	(void)cbid;
	if (domain == CUPTI_CB_DOMAIN_DRIVER_API &&
	    ((const CUpti_CallbackData *)info)->callbackSite == CUPTI_API_EXIT)
		callbacks++;
}

/* @ms of the program's own work: a launch every millisecond (the shim's windows see some). */
static void work_ms(long ms)
{
	long i;

	for (i = 0; i < ms; i++) {
		launch(1);
		pause_ms(1);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";
	int i;

	cupti.reg = (__typeof__(cupti.reg))dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks");
	cupti.clock = (__typeof__(cupti.clock))dlsym(RTLD_DEFAULT,
						      "cuptiActivityRegisterTimestampCallback");
	cupti.enable = (__typeof__(cupti.enable))dlsym(RTLD_DEFAULT, "cuptiActivityEnable");
	cupti.disable = (__typeof__(cupti.disable))dlsym(RTLD_DEFAULT, "cuptiActivityDisable");
	cupti.flush = (__typeof__(cupti.flush))dlsym(RTLD_DEFAULT, "cuptiActivityFlushAll");
	cupti.next = (__typeof__(cupti.next))dlsym(RTLD_DEFAULT, "cuptiActivityGetNextRecord");
	if (!cupti.reg || !cupti.clock || !cupti.enable || !cupti.disable || !cupti.flush ||
	    !cupti.next) {
		printf("%s: no CUPTI here\n", mode);
		return 1;
	}
	if (!strcmp(mode, "held")) {
		cuda_up();
		launch(5);
		session_begin(mode);
		launch(20);
		cuCtxSynchronize();
		check("flush", cupti.flush(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED));
	} else if (!strcmp(mode, "early")) {
		session_begin(mode);
		cuda_up();
		launch(10);
		session_end();
		launch(10);
		cuCtxSynchronize();
	} else if (!strcmp(mode, "forceload")) {
		cuda_up();
		check("force load", cupti.enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		launch(5);
		fprintf(stderr, "%s: session %llu\n", mode,
			(unsigned long long)clock_ns(CLOCK_MONOTONIC));
		check("clock", cupti.clock(client_clock));
		check("register", cupti.reg(client_request, client_complete));
		check("enable copies", cupti.enable(CUPTI_ACTIVITY_KIND_MEMCPY));
		launch(3);
		session_end();
		launch(5);
		cuCtxSynchronize();
	} else if (!strcmp(mode, "slow") || !strcmp(mode, "slowapi")) {
		int api = !strcmp(mode, "slowapi");

		cuda_up();
		for (i = 0; i < 3; i++) {
			launch(5);
			/* slowapi: time for windows to detach before its first session */
			work_ms(api && !i ? 300 : 60);
			session_begin(mode);
			if (api)
				check("enable runtime", cupti.enable(CUPTI_ACTIVITY_KIND_RUNTIME));
			launch(3);
			cuCtxSynchronize();
			if (api)
				check("disable runtime", cupti.disable(CUPTI_ACTIVITY_KIND_RUNTIME));
			session_end();
			work_ms(60);
		}
		launch(5);
		cuCtxSynchronize();
	} else if (!strcmp(mode, "again")) {
		cuda_up();
		launch(5);
		session_begin(mode);
		launch(3);
		check("disable kernels", cupti.disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL));
		check("disable copies", cupti.disable(CUPTI_ACTIVITY_KIND_MEMCPY));
		session_begin(mode);
		launch(3);
		pause_ms(1300);		/* longer than the shim waits for a flush after a stop */
		launch(3);
		session_end();
		launch(5);
		cuCtxSynchronize();
	} else if (!strcmp(mode, "cycles")) {
		cuda_up();
		for (i = 0; i < 3; i++) {
			launch(5);
			session_begin(mode);
			launch(3);
			cuCtxSynchronize();
			session_end();
		}
		launch(5);
		cuCtxSynchronize();
	} else if (!strcmp(mode, "subscribe")) {
		CUptiResult (*subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *) =
			(__typeof__(subscribe))dlsym(RTLD_DEFAULT, "cuptiSubscribe");
		CUptiResult (*domain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain) =
			(__typeof__(domain))dlsym(RTLD_DEFAULT, "cuptiEnableDomain");
		CUptiResult (*unsubscribe)(CUpti_SubscriberHandle) =
			(__typeof__(unsubscribe))dlsym(RTLD_DEFAULT, "cuptiUnsubscribe");
		int (*held)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "fake_cupti_subscribed");
		CUpti_SubscriberHandle h = NULL;
		unsigned long long late;
		int was_held = 0;
		CUptiResult r;

		if (!subscribe || !domain || !unsubscribe || !held) {
			printf("%s: no callback API here\n", mode);
			return 1;
		}
		cuda_up();
		work_ms(150);
		for (i = 0; i < 2000 && !(was_held = held()); i++)
			pause_ms(1);
		r = subscribe(&h, on_callback, NULL);
		if (r == CUPTI_SUCCESS)
			check("enable domain", domain(1, h, CUPTI_CB_DOMAIN_DRIVER_API));
		work_ms(200);
		late = callbacks;
		work_ms(100);
		late = callbacks - late;
		cuCtxSynchronize();
		if (r == CUPTI_SUCCESS)
			check("unsubscribe", unsubscribe(h));
		fprintf(stderr, "%s: held when asked %d\n", mode, was_held);
		printf("%s: subscribe %d, %llu callbacks, %llu in the last 100 ms, %d failed CUPTI "
		       "calls\n", mode, (int)r, callbacks, late, failures);
		return 0;
	} else {
		fprintf(stderr, "usage: cupti_client held|early|forceload|again|cycles|slow|slowapi|"
			"subscribe\n");
		return 2;
	}
	printf("%s: %d failed CUPTI calls, %llu kernel records, %llu not on its clock\n", mode,
	       failures, kernels, off_clock);
	return 0;
}
