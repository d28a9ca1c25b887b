// SPDX-License-Identifier: MIT
/*
 * pageable_copy.cu - every step copies a 128 MiB batch from pageable (malloc) host memory to
 * the device with a blocking cudaMemcpy, then runs a short kernel on it. Pageable copies are
 * staged by the driver at a fraction of the link's bandwidth and block the host.
 * Known bottleneck: host-device copies. Expected: primary memcpy.
 */
#include "common.h"

__global__ void touch(float *x, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] += 1.0f;
}

int main(void)
{
	const size_t bytes = 128u << 20;
	const int n = (int)(bytes / sizeof(float)), steps = 20;
	float *h = (float *)malloc(bytes), *d;
	int i;

	for (i = 0; i < n; i++)
		h[i] = (float)i;
	CK(cudaMalloc(&d, bytes));
	for (i = 0; i < steps; i++) {
		CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
		touch<<<n / 256, 256>>>(d, n);
		CK_LAUNCH();
	}
	CK(cudaDeviceSynchronize());
	CK(cudaFree(d));
	free(h);
	printf("expect: launches=%d memcpys=%d\n", steps, steps);
	return 0;
}
