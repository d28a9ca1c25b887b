// SPDX-License-Identifier: MIT
/*
 * launch_bound.cu - 10000 launches of a kernel doing almost nothing (one block, 32 threads):
 * each kernel is shorter than the host call that launches it.
 * Known bottleneck: launch overhead - the GPU waits for the next launch most of the time.
 * Expected (test_apps/expected/launch_bound.findings): primary launch_overhead.
 */
#include "common.h"

__global__ void tiny_add(float *x)
{
	x[threadIdx.x] += 1.0f;
}

int main(void)
{
	float *x;
	int i;

	CK(cudaMalloc(&x, 32 * sizeof(float)));
	CK(cudaMemset(x, 0, 32 * sizeof(float)));
	for (i = 0; i < 10000; i++)
		tiny_add<<<1, 32>>>(x);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaFree(x));
	printf("expect: launches=10000 kernel=tiny_add:10000\n");
	return 0;
}
