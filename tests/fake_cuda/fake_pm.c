// SPDX-License-Identifier: MIT
/*
 * fake_pm.c - the fake CUPTI's PM sampling entry points, built with fake_cupti.c into
 * tests/fake_cupti/libcuda.so.1: the profiler's initialization, which checks the order the shim
 * keeps around it (shim/pm.c), and "not supported" from every other one, so the shim's sampling
 * thread stops at its first set-up step with a PM_OFF note.
 * The checks: cuptiProfilerInitialize is called once; the profiler's libraries are loaded by
 * then (libnvperf_host.so, which libcupti finds by bare name: the shim loads the copy next to
 * this library first, fake_nvperf.c); and no traced call (a launch, copy or set) runs before it
 * is done - every thread that calls cuInit is held until then, so none can go on to exit while
 * it runs. It takes FAKE_PM_INIT_MS (default 20 ms), as the real one loads its libraries.
 * FAKE_CUPTI_REPORT set: what it saw is printed on stderr at exit. Any thread may call it.
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "fake_cupti.h"

#define EXPORT __attribute__((visibility("default")))

enum { PROF_NONE, PROF_RUNNING, PROF_DONE };

static _Atomic int prof_state;
static _Atomic unsigned nr_inits;
static _Atomic unsigned nr_calls_early;	/* traced calls before the initialization ended */
static _Atomic int is_nvperf_first;	/* the libraries were loaded at the first initialization */

void fake_pm_note_call(void)
{
	if (atomic_load(&prof_state) != PROF_DONE)
		atomic_fetch_add(&nr_calls_early, 1);
}

__attribute__((destructor)) static void report(void)
{
	if (!getenv("FAKE_CUPTI_REPORT"))
		return;
	fprintf(stderr,
		"fake_cupti: profiler initialized %u time(s); its libraries loaded first: %s; "
		"traced calls before it was done: %u\n",
		atomic_load(&nr_inits), atomic_load(&is_nvperf_first) ? "yes" : "no",
		atomic_load(&nr_calls_early));
}

/* The parameter blocks are not read: every entry point here takes them as void *. */
EXPORT CUptiResult cuptiProfilerInitialize(void *params);
EXPORT CUptiResult cuptiProfilerInitialize(void *params)
{
	const char *ms = getenv("FAKE_PM_INIT_MS");
	long n = ms ? atol(ms) : 20;
	struct timespec ts = { n / 1000, n % 1000 * 1000000 };
	void *h;

	(void)params;
	if (atomic_fetch_add(&nr_inits, 1) == 0) {
		h = dlopen("libnvperf_host.so", RTLD_LAZY | RTLD_NOLOAD);
		atomic_store(&is_nvperf_first, h != NULL);
		if (h)
			dlclose(h);
	}
	atomic_store(&prof_state, PROF_RUNNING);
	nanosleep(&ts, NULL);
	atomic_store(&prof_state, PROF_DONE);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiGetResultString(CUptiResult result, const char **str)
{
	if (!str)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*str = result == CUPTI_ERROR_NOT_SUPPORTED ? "not supported by the fake CUPTI" :
						     "fake CUPTI error";
	return CUPTI_SUCCESS;
}

#define UNSUPPORTED(name)                                                                          \
	EXPORT CUptiResult name(void *params);                                                     \
	EXPORT CUptiResult name(void *params)                                                      \
	{                                                                                          \
		(void)params;                                                                      \
		return CUPTI_ERROR_NOT_SUPPORTED;                                                  \
	}

UNSUPPORTED(cuptiProfilerDeviceSupported)
UNSUPPORTED(cuptiDeviceGetChipName)
UNSUPPORTED(cuptiPmSamplingGetCounterAvailability)
UNSUPPORTED(cuptiProfilerHostInitialize)
UNSUPPORTED(cuptiProfilerHostDeinitialize)
UNSUPPORTED(cuptiProfilerHostConfigAddMetrics)
UNSUPPORTED(cuptiProfilerHostGetConfigImageSize)
UNSUPPORTED(cuptiProfilerHostGetConfigImage)
UNSUPPORTED(cuptiProfilerHostGetNumOfPasses)
UNSUPPORTED(cuptiProfilerHostEvaluateToGpuValues)
UNSUPPORTED(cuptiPmSamplingEnable)
UNSUPPORTED(cuptiPmSamplingSetConfig)
UNSUPPORTED(cuptiPmSamplingGetCounterDataSize)
UNSUPPORTED(cuptiPmSamplingCounterDataImageInitialize)
UNSUPPORTED(cuptiPmSamplingStart)
UNSUPPORTED(cuptiPmSamplingStop)
UNSUPPORTED(cuptiPmSamplingDecodeData)
UNSUPPORTED(cuptiPmSamplingGetCounterDataInfo)
UNSUPPORTED(cuptiPmSamplingCounterDataGetSampleInfo)
