// SPDX-License-Identifier: MIT
/*
 * cupti_baseline.c - CUPTI's own cost, for the benchmark the shim is measured against: a
 * preloaded library that turns on the activity records the shim collects and nothing else -
 * concurrent kernels, memcpy, memcpy2, memset, and API records for the
 * driver and runtime calls that create GPU work (cuLaunch*, cuMemcpy*, cuMemset*,
 * cuGraphLaunch*, their cuda* counterparts) - with buffers of the shim's default size
 * (4 MiB), and walks every completed buffer record by record. It records no host calls, writes
 * nothing, and keeps CUPTI's own clock. At exit it flushes and prints the record count to
 * stderr: "cupti_baseline: N records, M dropped".
 * Usage: LD_PRELOAD=libcupti_baseline.so PROGRAM (scripts/gpu_check.py, part bench and perf).
 */
#include <cupti.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define BUF_BYTES (4u << 20)

static unsigned long long nr_records, nr_dropped;

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size, size_t *max_records)
{
	*buf = aligned_alloc(8, BUF_BYTES);
	*size = *buf ? BUF_BYTES : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buf, size_t size,
				      size_t valid)
{
	CUpti_Activity *rec = NULL;
	size_t dropped = 0;

	(void)size;
	while (cuptiActivityGetNextRecord(buf, valid, &rec) == CUPTI_SUCCESS)
		nr_records++;
	if (cuptiActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS)
		nr_dropped += dropped;
	free(buf);
}

static int wanted(const char *name, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(name, *prefixes, strlen(*prefixes)))
			return 1;
	return 0;
}

static void at_exit(void)
{
	cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	fprintf(stderr, "cupti_baseline: %llu records, %llu dropped\n", nr_records, nr_dropped);
}

__attribute__((constructor)) static void start(void)
{
	static const CUpti_ActivityKind kinds[] = {
		CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
		CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMCPY2,
	};
	static const char *const drv[] = { "cuLaunch", "cuMemcpy", "cuMemset", "cuGraphLaunch",
					   NULL };
	static const char *const rt[] = { "cudaLaunch", "cudaMemcpy", "cudaMemset",
					  "cudaGraphLaunch", NULL };
	const char *name;
	uint32_t cbid;
	size_t i;

	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "cupti_baseline: cannot register buffer callbacks\n");
		return;
	}
	for (i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		cuptiActivityEnable(kinds[i]);
	for (cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS &&
		    name && wanted(name, drv))
			cuptiActivityEnableDriverApi(cbid, 1);
	for (cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++)
		if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS &&
		    name && wanted(name, rt))
			cuptiActivityEnableRuntimeApi(cbid, 1);
	atexit(at_exit);
}
