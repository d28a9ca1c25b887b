/* SPDX-License-Identifier: MIT */
/*
 * pm_host.h - the parameter blocks of CUPTI's profiler host API that pm.c uses, declared in C:
 * cupti_profiler_host.h includes <string>, so it is C++ only. Field for field as in CUDA 13.0
 * (POD structs of extern "C" functions); tests/unit/pm_layout.cc checks every offset and size
 * against the real header wherever a C++ compiler is present.
 */
#ifndef GPUSHIM_PM_HOST_H
#define GPUSHIM_PM_HOST_H

#include <stddef.h>
#include <stdint.h>

enum { HOST_PROFILER_PM_SAMPLING = 1 };	/* CUpti_ProfilerType */

struct host_initialize_params {
	size_t structSize;
	void *pPriv;
	int profilerType;
	const char *pChipName;
	const uint8_t *pCounterAvailabilityImage;
	void *pHostObject;
};
struct host_deinitialize_params {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
};
struct host_add_metrics_params {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	const char **ppMetricNames;
	size_t numMetrics;
};
struct host_config_size_params {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	size_t configImageSize;
};
struct host_config_image_params {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	size_t configImageSize;
	uint8_t *pConfigImage;
};
struct host_passes_params {
	size_t structSize;
	void *pPriv;
	size_t configImageSize;
	uint8_t *pConfigImage;
	size_t numOfPasses;
};
struct host_evaluate_params {
	size_t structSize;
	void *pPriv;
	void *pHostObject;
	const uint8_t *pCounterDataImage;
	size_t counterDataImageSize;
	size_t rangeIndex;
	const char **ppMetricNames;
	size_t numMetrics;
	double *pMetricValues;
};

#endif /* GPUSHIM_PM_HOST_H */
