// SPDX-License-Identifier: MIT
/*
 * oom_retry.cu - memory pressure as a caching allocator meets it: 4 GiB buffers allocated
 * until the device refuses one (CUDA_ERROR_OUT_OF_MEMORY), then two buffers freed and the
 * refused allocation retried, which succeeds: one reclaim. Then 20 steps each freeing a
 * 256 MiB buffer and allocating it again (churn), a kernel between.
 * Expected: memory.pressure.failed_allocations 1 (the first refusal; a second refusal is
 * possible only when the device's free memory changed meanwhile), reclaims 1 with 2 frees,
 * churn_allocations 20.
 */
#include "common.h"

int main(void)
{
	const size_t chunk = 4ull << 30, small = 256u << 20;
	void *blocks[128], *retry = NULL, *b = NULL;
	int nr = 0, refused = 0, i;

	CK(cudaFree(0));
	while (nr < 128) {
		if (cudaMalloc(&blocks[nr], chunk) != cudaSuccess) {
			cudaGetLastError();
			refused = 1;
			break;
		}
		nr++;
	}
	if (!refused || nr < 2) {
		fprintf(stderr, "oom_retry: no refusal after %d buffers of 4 GiB\n", nr);
		return 1;
	}
	/* The reclaim: give two buffers back, then the same size again. */
	CK(cudaFree(blocks[--nr]));
	CK(cudaFree(blocks[--nr]));
	CK(cudaMalloc(&retry, chunk));
	CK(cudaFree(retry));
	for (i = 0; i < nr; i++)
		CK(cudaFree(blocks[i]));
	/* The churn: a buffer given back and taken again every step. */
	for (i = 0; i < 20; i++) {
		CK(cudaMalloc(&b, small));
		spin_kernel<<<132, 128>>>(20000);
		CK_LAUNCH();
		CK(cudaDeviceSynchronize());
		CK(cudaFree(b));
	}
	printf("oom_retry: %d buffers of 4 GiB before the refusal\n", nr + 2);
	printf("expect: launches=20\n");
	return 0;
}
