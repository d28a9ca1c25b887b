// SPDX-License-Identifier: MIT
/*
 * pm_layout.cc - the shim declares the profiler host API's parameter blocks in C
 * (shim/pm_host.h) because CUPTI's header is C++ only. This compares each of them with the real
 * header, field by field (offset and size) and as a whole; a mismatch fails the build of this
 * test and so the suite. Built only where a C++ compiler is present.
 */
#include <cupti_profiler_host.h>

#include <cstdio>

extern "C" {
#include "pm_host.h"
}

#define SAME(ours, theirs, f_ours, f_theirs)                                                        \
	static_assert(offsetof(ours, f_ours) == offsetof(theirs, f_theirs), #ours "." #f_ours);      \
	static_assert(sizeof(((ours *)0)->f_ours) == sizeof(((theirs *)0)->f_theirs),                \
		      #ours "." #f_ours " size")
#define SAME_SIZE(ours, theirs) static_assert(sizeof(ours) == sizeof(theirs), #ours)

SAME_SIZE(host_initialize_params, CUpti_Profiler_Host_Initialize_Params);
SAME(host_initialize_params, CUpti_Profiler_Host_Initialize_Params, profilerType, profilerType);
SAME(host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pChipName, pChipName);
SAME(host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pCounterAvailabilityImage,
     pCounterAvailabilityImage);
SAME(host_initialize_params, CUpti_Profiler_Host_Initialize_Params, pHostObject, pHostObject);
static_assert((int)HOST_PROFILER_PM_SAMPLING == (int)CUPTI_PROFILER_TYPE_PM_SAMPLING, "profiler type");

SAME_SIZE(host_deinitialize_params, CUpti_Profiler_Host_Deinitialize_Params);
SAME(host_deinitialize_params, CUpti_Profiler_Host_Deinitialize_Params, pHostObject, pHostObject);

SAME_SIZE(host_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params);
SAME(host_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, pHostObject,
     pHostObject);
SAME(host_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, ppMetricNames,
     ppMetricNames);
SAME(host_add_metrics_params, CUpti_Profiler_Host_ConfigAddMetrics_Params, numMetrics,
     numMetrics);

SAME_SIZE(host_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params);
SAME(host_config_size_params, CUpti_Profiler_Host_GetConfigImageSize_Params, configImageSize,
     configImageSize);

SAME_SIZE(host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params);
SAME(host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, configImageSize,
     configImageSize);
SAME(host_config_image_params, CUpti_Profiler_Host_GetConfigImage_Params, pConfigImage,
     pConfigImage);

SAME_SIZE(host_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params);
SAME(host_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, pConfigImage, pConfigImage);
SAME(host_passes_params, CUpti_Profiler_Host_GetNumOfPasses_Params, numOfPasses, numOfPasses);

SAME_SIZE(host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params);
SAME(host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pCounterDataImage,
     pCounterDataImage);
SAME(host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, rangeIndex,
     rangeIndex);
SAME(host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, ppMetricNames,
     ppMetricNames);
SAME(host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, numMetrics,
     numMetrics);
SAME(host_evaluate_params, CUpti_Profiler_Host_EvaluateToGpuValues_Params, pMetricValues,
     pMetricValues);

int main()
{
	std::puts("pm_host.h matches cupti_profiler_host.h: 8 structs, every field");
	return 0;
}
