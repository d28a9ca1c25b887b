// SPDX-License-Identifier: MIT
// CUPTI 13: when must the per-API activity records be on for a context to give them?
// (BENCHMARKS.md "Runs D, E and F"). Not built with the project; on a GPU machine:
//   nvcc -O2 -arch=sm_90 -cubin -o k.cubin cupti_api_records.cu
//   nvcc -O2 -arch=sm_90 -o cupti_api_records cupti_api_records.cu -lcupti -lcuda
//   for c in 1 2 3 4 5 6; do ./cupti_api_records $c; done
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cupti.h>
extern "C" __global__ void k(int *p) { if (p) p[threadIdx.x] += 1; }
static int nk, ndrv;
static void CUPTIAPI req(uint8_t **b, size_t *s, size_t *m) { *s = 1 << 20; *b = (uint8_t *)aligned_alloc(8, *s); *m = 0; }
static void CUPTIAPI done(CUcontext c, uint32_t sid, uint8_t *b, size_t s, size_t v) {
  CUpti_Activity *a = NULL;
  while (cuptiActivityGetNextRecord(b, v, &a) == CUPTI_SUCCESS) {
    if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) nk++;
    else if (a->kind == CUPTI_ACTIVITY_KIND_DRIVER) ndrv++;
  }
  free(b);
}
static void api(int on) {
  const char *name;
  for (uint32_t cb = 1; cb < CUPTI_DRIVER_TRACE_CBID_SIZE; cb++)
    if (cuptiGetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cb, &name) == CUPTI_SUCCESS && name && !strncmp(name, "cuLaunch", 8))
      cuptiActivityEnableDriverApi(cb, on);
}
static void launch(CUcontext ctx, const char *what) {
  CUmodule m; CUfunction f; int *p = NULL; void *args[] = { &p };
  cuCtxSetCurrent(ctx);

  // Runtime-compiled kernel is in this binary; get it through the driver entry.
  static CUfunction cached[8]; static CUcontext cctx[8]; int i;
  for (i = 0; i < 8 && cctx[i] && cctx[i] != ctx; i++);
  if (!cctx[i]) { cctx[i] = ctx; cuModuleLoad(&m, "k.cubin") == CUDA_SUCCESS ? (void)0 : (void)printf("module load failed\n"); cuModuleGetFunction(&cached[i], m, "k"); }
  f = cached[i];
  nk = ndrv = 0;
  for (int j = 0; j < 100; j++) cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, 0, args, 0);
  cuCtxSynchronize();
  cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
  printf("  %-55s kernels %4d driver %4d\n", what, nk, ndrv);
}
int main(int argc, char **argv) {
  int t = atoi(argv[1]);
  CUdevice d; CUcontext a, b;
  cuptiActivityRegisterCallbacks(req, done);
  cuptiActivityEnable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
  printf("case %d\n", t);
  switch (t) {
  case 1: api(1); cuInit(0); api(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&a, d);
          api(1); launch(a, "on at init, off at ctx creation, on at launch"); break;
  case 2: api(1); cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&a, d);
          api(0); launch(a, "on at ctx creation, off at launch");
          api(1); launch(a, "on again"); break;
  case 3: cuInit(0); api(1); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&a, d);
          launch(a, "off at init, on at ctx creation"); break;
  case 4: api(1); cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&a, d); launch(a, "ctx A on");
          api(0); { CUctxCreateParams p; memset(&p, 0, sizeof p); cuCtxCreate(&b, &p, 0, d); }
          api(1); launch(b, "ctx B created while off, on at launch"); launch(a, "ctx A again"); break;
  case 5: cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&a, d); api(1);
          launch(a, "on only after ctx creation"); break;
  case 6: api(1); cuInit(0); cuDeviceGet(&d, 0); cuDevicePrimaryCtxRetain(&a, d);
          api(0); { CUctxCreateParams p; memset(&p, 0, sizeof p); cuCtxCreate(&b, &p, 0, d); }
          launch(b, "ctx B created while off, off at launch");
          api(1); launch(b, "B on"); launch(a, "A on"); break;
  }
  return 0;
}
