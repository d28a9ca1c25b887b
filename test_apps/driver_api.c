// SPDX-License-Identifier: MIT
/*
 * driver_api.c - the driver API directly (linked with -lcuda: the exported-symbol door), with
 * CUfunction handles from cuModuleLoad. Known numbers: 30 launches (20 cuLaunchKernel, 10
 * cuLaunchKernelEx), 3 cuMemAlloc + 1 pinned host allocation, 3 copies (sync H2D, async H2D
 * from pinned memory, sync D2H), 2 async memsets, 4 host syncs (2 stream, 1 context, 1 event),
 * 3 frees. Usage: driver_api KERNELS.cubin
 */
#include <cuda.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CK(call)                                                                                   \
	do {                                                                                       \
		CUresult r_ = (call);                                                              \
		if (r_ != CUDA_SUCCESS) {                                                          \
			const char *s_ = "?";                                                      \
			cuGetErrorName(r_, &s_);                                                   \
			fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call, s_);         \
			exit(1);                                                                   \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	const int n = 1 << 22;
	size_t bytes = n * sizeof(float);
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUfunction add, scale;
	CUstream s;
	CUevent ev;
	CUdeviceptr a, b, c;
	CUlaunchConfig cfg;
	float *pinned, *hc = malloc(bytes), factor = 2.0f;
	void *add_args[] = { &c, &a, &b, (void *)&n };
	void *scale_args[] = { &c, &factor, (void *)&n };
	double sum = 0, want = 0;
	int i;

	if (argc < 2) {
		fprintf(stderr, "usage: driver_api KERNELS.cubin\n");
		return 2;
	}
	CK(cuInit(0));
	CK(cuDeviceGet(&dev, 0));
	CK(cuDevicePrimaryCtxRetain(&ctx, dev));
	CK(cuCtxSetCurrent(ctx));
	CK(cuModuleLoad(&mod, argv[1]));
	CK(cuModuleGetFunction(&add, mod, "vec_add"));
	CK(cuModuleGetFunction(&scale, mod, "scale"));
	CK(cuStreamCreate(&s, CU_STREAM_NON_BLOCKING));
	CK(cuEventCreate(&ev, 0));
	CK(cuMemAlloc(&a, bytes));
	CK(cuMemAlloc(&b, bytes));
	CK(cuMemAlloc(&c, bytes));
	CK(cuMemAllocHost((void **)&pinned, bytes));
	for (i = 0; i < n; i++) {
		pinned[i] = (float)(i % 10);
		want += 4.0 * pinned[i];	/* (a + b) * 2 */
	}
	CK(cuMemcpyHtoD(a, pinned, bytes));
	CK(cuMemcpyHtoDAsync(b, pinned, bytes, s));
	CK(cuMemsetD32Async(c, 0, n, s));
	for (i = 0; i < 20; i++)
		CK(cuLaunchKernel(add, n / 256, 1, 1, 256, 1, 1, 0, s, add_args, NULL));
	CK(cuStreamSynchronize(s));
	memset(&cfg, 0, sizeof(cfg));
	cfg.gridDimX = n / 256;
	cfg.gridDimY = cfg.gridDimZ = 1;
	cfg.blockDimX = 256;
	cfg.blockDimY = cfg.blockDimZ = 1;
	cfg.hStream = s;
	for (i = 0; i < 10; i++)
		CK(cuLaunchKernelEx(&cfg, i < 9 ? add : scale, i < 9 ? add_args : scale_args, NULL));
	CK(cuMemsetD32Async(a, 0, n, s));
	CK(cuEventRecord(ev, s));
	CK(cuEventSynchronize(ev));
	CK(cuStreamSynchronize(s));
	CK(cuCtxSynchronize());
	CK(cuMemcpyDtoH(hc, c, bytes));
	for (i = 0; i < n; i++)
		sum += hc[i];
	CK(cuMemFree(a));
	CK(cuMemFree(b));
	CK(cuMemFree(c));
	CK(cuMemFreeHost(pinned));
	printf("driver_api: sum %.0f (want %.0f)\n", sum, want);
	printf("expect: launches=30 allocs=3 frees=3 memcpys=3 memsets=2 syncs=4 "
	       "kernel=vec_add:29 kernel=scale:1\n");
	return sum == want ? 0 : 1;
}
