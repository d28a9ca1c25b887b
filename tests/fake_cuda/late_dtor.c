// SPDX-License-Identifier: MIT
/* late_dtor.c - liblate.so (late_dtor.h): CUDA calls from a destructor that runs after the shim's. */
#include <stdio.h>

#include "late_dtor.h"

static CUfunction late_f;
static int late_n;

void late_dtor_arm(CUfunction f, int n)
{
	late_f = f;
	late_n = n;
}

__attribute__((destructor)) static void late_dtor(void)
{
	int i, ok = 0;

	for (i = 0; i < late_n; i++)
		ok += cuLaunchKernel(late_f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) == CUDA_SUCCESS;
	if (late_n)
		fprintf(stderr, "late_dtor: %d launches\n", ok);
}
