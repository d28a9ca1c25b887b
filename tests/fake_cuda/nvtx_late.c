// SPDX-License-Identifier: MIT
/* nvtx_late.c - libnvtxlate.so (nvtx_late.h): NVTX calls from a destructor after the shim's. */
#include <stdio.h>

#include <nvtx3/nvToolsExt.h>

#include "nvtx_late.h"

static int late_n;

void nvtx_late_arm(int n)
{
	nvtxMarkA("late armed");
	late_n = n;
}

__attribute__((destructor)) static void nvtx_late_dtor(void)
{
	int i;

	for (i = 0; i < late_n; i++) {
		nvtxRangePushA("late");
		nvtxRangePop();
	}
	if (late_n)
		fprintf(stderr, "nvtx_late: %d ranges\n", late_n);
}
