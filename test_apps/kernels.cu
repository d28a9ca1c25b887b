// SPDX-License-Identifier: MIT
/*
 * kernels.cu - compiled to a cubin that driver_api loads with cuModuleLoad (the driver-API
 * path: CUfunction handles, as Triton and XLA use).
 */
extern "C" __global__ void vec_add(float *c, const float *a, const float *b, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		c[i] = a[i] + b[i];
}

extern "C" __global__ void scale(float *x, float f, int n)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] *= f;
}
