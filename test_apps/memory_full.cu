// SPDX-License-Identifier: MIT
/*
 * memory_full.cu - the seed's headline case: device memory filled to over 90 % (as a large
 * model's weights and caches fill it), while the GPU computes little: each step is a 20 us
 * kernel followed by 2 ms of host-side work. nvidia-smi would show the memory nearly full;
 * the GPU is idle most of the time.
 * Expected: memory_capacity flagged (peak >= 90 % of the device), primary cpu_bound.
 */
#include "common.h"

int main(void)
{
	size_t free_b, total_b, target, got = 0, chunk = 4ull << 30;
	void *blocks[256];
	int nr = 0, i;

	CK(cudaMemGetInfo(&free_b, &total_b));
	target = (size_t)(total_b * 0.93) - (total_b - free_b);
	while (got < target && nr < 256) {
		size_t want = target - got < chunk ? target - got : chunk;

		if (cudaMalloc(&blocks[nr], want) != cudaSuccess) {
			cudaGetLastError();
			if (chunk <= (64u << 20))
				break;
			chunk /= 2;
			continue;
		}
		got += want;
		nr++;
	}
	for (i = 0; i < 100; i++) {
		spin_kernel<<<132, 128>>>(20000);
		CK_LAUNCH();
		host_busy_us(2000);
	}
	CK(cudaDeviceSynchronize());
	for (i = 0; i < nr; i++)
		CK(cudaFree(blocks[i]));
	printf("memory_full: allocated %.1f GiB of %.1f GiB in %d blocks\n", got / 1073741824.0,
	       total_b / 1073741824.0, nr);
	printf("expect: launches=100\n");
	return 0;
}
