// SPDX-License-Identifier: MIT
/*
 * nvtx_steps.cu - a training-like loop annotated with NVTX v3 (the header-only API in the CUDA
 * toolkit; no library linked): a slow start-up of 2 s of host work in a "startup" range before
 * CUDA is touched, then STEPS steps, each a "step" range (default domain) around 4 kernels and a
 * 4-byte read-back, with "forward" and "backward" ranges of domain "trainer" (registered
 * strings) nested inside. The shim records the ranges through NVTX's injection interface.
 * Expected (scripts/gpu_check.py, part nvtx): exactly STEPS "step" pushes and as many pops of
 * domain 0 after the start-up's, STEPS "forward" and "backward" pushes in the trainer domain,
 * every range balanced, the start-up range before the first CUDA call, 4 * STEPS launches.
 * Usage: nvtx_steps [STEPS]   (default 100)
 */
#include <nvtx3/nvToolsExt.h>

#include "common.h"

__global__ void layer_kernel(float *x, int n, float a)
{
	int i = blockIdx.x * blockDim.x + threadIdx.x;

	if (i < n)
		x[i] = x[i] * a + 0.001f;
}

int main(int argc, char **argv)
{
	const int n = 1 << 22, steps = argc > 1 ? atoi(argv[1]) : 100;
	nvtxEventAttributes_t attr = {};
	nvtxStringHandle_t fwd, bwd;
	nvtxDomainHandle_t dom;
	float *x, loss = 0;
	int i;

	/* Start-up: what imports, data loading and model building cost a real program. */
	nvtxRangePushA("startup");
	host_busy_us(2e6);
	nvtxRangePop();

	dom = nvtxDomainCreateA("trainer");
	fwd = nvtxDomainRegisterStringA(dom, "forward");
	bwd = nvtxDomainRegisterStringA(dom, "backward");
	attr.version = NVTX_VERSION;
	attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	attr.colorType = NVTX_COLOR_ARGB;
	attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;

	CK(cudaMalloc(&x, (size_t)n * sizeof(float)));
	CK(cudaMemset(x, 0, (size_t)n * sizeof(float)));
	for (i = 0; i < steps; i++) {
		nvtxRangePushA("step");
		attr.message.registered = fwd;
		attr.color = 0xff00ff00u;
		nvtxDomainRangePushEx(dom, &attr);
		layer_kernel<<<n / 256, 256>>>(x, n, 0.999f);
		layer_kernel<<<n / 256, 256>>>(x, n, 0.998f);
		CK_LAUNCH();
		nvtxDomainRangePop(dom);
		attr.message.registered = bwd;
		attr.color = 0xffff0000u;
		nvtxDomainRangePushEx(dom, &attr);
		layer_kernel<<<n / 256, 256>>>(x, n, 0.997f);
		layer_kernel<<<n / 256, 256>>>(x, n, 0.996f);
		CK_LAUNCH();
		nvtxDomainRangePop(dom);
		CK(cudaMemcpy(&loss, x, sizeof(float), cudaMemcpyDeviceToHost));
		nvtxRangePop();
	}
	CK(cudaFree(x));
	printf("nvtx_steps: %d steps, loss %.4f\n", steps, loss);
	printf("expect: launches=%d kernel=layer_kernel:%d\n", 4 * steps, 4 * steps);
	return 0;
}
