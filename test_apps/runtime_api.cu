// SPDX-License-Identifier: MIT
/*
 * runtime_api.cu - the CUDA runtime path (static cudart, as nvcc builds it): kernels launched
 * with <<<>>> reach the driver through cudart's cuGetProcAddress table. Known numbers:
 * 25 launches, 3 cudaMalloc, 3 copies (2 H2D, 1 D2H), 1 memset, 4 host syncs (2 stream,
 * 1 device, 1 event), 3 frees. Checked by scripts/gpu-check.sh against `gpushim report`.
 */
#include "common.h"

__global__ void vec_add(float *c, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

int main(void)
{
	const int n = 1 << 22;
	size_t bytes = n * sizeof(float);
	float *ha = (float *)malloc(bytes), *hc = (float *)malloc(bytes), *a, *b, *c;
	cudaStream_t s;
	cudaEvent_t ev;
	double sum = 0, want = 0;
	int i;

	for (i = 0; i < n; i++) {
		ha[i] = (float)(i % 10);
		want += 2.0 * ha[i];
	}
	CK(cudaStreamCreate(&s));
	CK(cudaEventCreate(&ev));
	CK(cudaMalloc(&a, bytes));
	CK(cudaMalloc(&b, bytes));
	CK(cudaMalloc(&c, bytes));
	CK(cudaMemcpy(a, ha, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemcpy(b, ha, bytes, cudaMemcpyHostToDevice));
	CK(cudaMemsetAsync(c, 0, bytes, s));
	for (i = 0; i < 25; i++) {
		vec_add<<<n / 256, 256, 0, s>>>(c, a, b, n);
		CK_LAUNCH();
		if (i == 9)
			CK(cudaStreamSynchronize(s));
	}
	CK(cudaEventRecord(ev, s));
	CK(cudaEventSynchronize(ev));
	CK(cudaStreamSynchronize(s));
	CK(cudaDeviceSynchronize());
	CK(cudaMemcpy(hc, c, bytes, cudaMemcpyDeviceToHost));
	for (i = 0; i < n; i++)
		sum += hc[i];
	CK(cudaFree(a));
	CK(cudaFree(b));
	CK(cudaFree(c));
	printf("runtime_api: sum %.0f (want %.0f)\n", sum, want);
	printf("expect: launches=25 allocs=3 frees=3 memcpys=3 memsets=1 syncs=4 "
	       "kernel=vec_add:25\n");
	return sum == want ? 0 : 1;
}
