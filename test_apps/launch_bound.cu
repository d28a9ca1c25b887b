// SPDX-License-Identifier: MIT
/*
 * launch_bound.cu - 10000 launches of a kernel doing almost nothing (one block, 32 threads):
 * each kernel is shorter than the host call that launches it.
 * Known bottleneck: launch overhead - the GPU waits for the next launch most of the time.
 * Expected (test_apps/expected/launch_bound.findings): primary launch_overhead.
 * Usage: launch_bound [LAUNCHES] (default 10000).
 */
#include "common.h"

__global__ void tiny_add(float *x)
{
	x[threadIdx.x] += 1.0f;
}

int main(int argc, char **argv)
{
	const int launches = argc > 1 ? atoi(argv[1]) : 10000;
	float *x;
	int i;

	CK(cudaMalloc(&x, 32 * sizeof(float)));
	CK(cudaMemset(x, 0, 32 * sizeof(float)));
	for (i = 0; i < launches; i++)
		tiny_add<<<1, 32>>>(x);
	CK_LAUNCH();
	CK(cudaDeviceSynchronize());
	CK(cudaFree(x));
	printf("expect: launches=%d kernel=tiny_add:%d\n", launches, launches);
	return 0;
}
