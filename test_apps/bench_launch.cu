// SPDX-License-Identifier: MIT
/*
 * bench_launch.cu - host cost of a kernel launch: N back-to-back launches of an empty kernel,
 * timed on the host around the loop (the GPU cannot keep up, so each launch's host cost is
 * what the loop measures). Prints "launch_ns=<ns per launch>". Run plain, under the shim
 * without CUPTI and under the shim with CUPTI by scripts/gpu-check.sh (BENCHMARKS.md).
 * Usage: bench_launch [N]
 */
#include "common.h"

__global__ void empty_kernel(void)
{
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100000, i;
	double t0, t1;

	empty_kernel<<<1, 1>>>();	/* module load and first-launch costs stay out */
	CK(cudaDeviceSynchronize());
	t0 = now_s();
	for (i = 0; i < n; i++)
		empty_kernel<<<1, 1>>>();
	t1 = now_s();
	CK(cudaDeviceSynchronize());
	CK_LAUNCH();
	printf("launch_ns=%.1f\n", (t1 - t0) * 1e9 / n);
	return 0;
}
