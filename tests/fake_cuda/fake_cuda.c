// SPDX-License-Identifier: MIT
/*
 * fake_cuda.c - a deterministic stand-in for libcuda.so.1, for testing the shim where there is
 * no GPU. It answers cuGetProcAddress like the real driver (base name + requested version +
 * flags -> the newest exported variant, per-thread variants under the per-thread flag, status
 * codes for unknown names and too-old versions), and "runs" a few kernels on host memory so
 * client programs print results that prove the calls went through. It has no cuGetExportTable,
 * so the shim correctly finds no CUPTI support here - except in the variant built with
 * FAKE_CUPTI (tests/fake_cupti/libcuda.so.1), which carries a fake CUPTI (fake_cupti.c) that
 * records the kernels, copies and sets run here.
 * Environment: FAKE_CUDA_LAUNCH_NS makes each launch busy-wait that long (benchmarks).
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fake_cupti.h"

/* These exported names are macros in cuda.h; the fake defines the exact exports. */
#undef cuGetProcAddress
#undef cuStreamBeginCapture

#define EXPORT __attribute__((visibility("default")))

/* ---- Kernels ---- */

struct fake_kernel {
	uint32_t magic;			/* FUNC_MAGIC for CUfunction, KERNEL_MAGIC for CUkernel */
	const char *name;
	void (*run)(void **params, uint64_t threads);
};

#define FUNC_MAGIC 0x46554e43u
#define KERNEL_MAGIC 0x4b45524eu

static void run_vec_add(void **p, uint64_t threads)
{
	float *c = *(float **)p[0];
	const float *a = *(float **)p[1], *b = *(float **)p[2];
	int n = *(int *)p[3];
	uint64_t i;

	for (i = 0; i < threads && i < (uint64_t)n; i++)
		c[i] = a[i] + b[i];
}

static void run_scale(void **p, uint64_t threads)
{
	float *x = *(float **)p[0];
	float s = *(float *)p[1];
	int n = *(int *)p[2];
	uint64_t i;

	for (i = 0; i < threads && i < (uint64_t)n; i++)
		x[i] *= s;
}

static void run_nothing(void **p, uint64_t threads)
{
	(void)p;
	(void)threads;
}

static struct fake_kernel functions[] = {
	{ FUNC_MAGIC, "vec_add", run_vec_add },
	{ FUNC_MAGIC, "_Z4spinv", run_nothing },
	/* A name no exporter may pass through raw: quotes, commas, brackets, a backslash,
	 * control characters and a byte that is not UTF-8. */
	{ FUNC_MAGIC, "k<\"q\",[1,2]>{a\\b}\n\t\x01\xff", run_nothing },
};
static struct fake_kernel kernels[] = {
	{ KERNEL_MAGIC, "scale", run_scale },
	{ KERNEL_MAGIC, "_Z11tiny_kernelPfi", run_nothing },
};

static struct fake_kernel *find_kernel(const void *h)
{
	size_t i;

	for (i = 0; i < sizeof(functions) / sizeof(functions[0]); i++)
		if (h == &functions[i])
			return &functions[i];
	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++)
		if (h == &kernels[i])
			return &kernels[i];
	return NULL;
}

/* ---- State ---- */

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int is_initialized;
static uint64_t launch_ns;

#define MAX_ALLOCS 4096
static struct {
	uintptr_t addr;
	size_t bytes;
} allocs[MAX_ALLOCS];
static size_t used_bytes;
#define TOTAL_BYTES (16ull << 30)

static int module_token, library_token, ctx_token, stream_tokens[64], event_tokens[64];
static _Atomic int is_ctx_made;
static int nr_streams, nr_events;

/* Stream capture: launches on the capturing stream are kept and replayed by cuGraphLaunch. */
struct captured {
	struct fake_kernel *k;
	uint64_t threads;
	void *params[8];
	unsigned char storage[8][8];
};
static CUstream capturing;
static struct captured graph_ops[64];
static int nr_graph_ops;
static int graph_token, exec_token;

static void spin(uint64_t ns)
{
	struct timespec a, b;

	if (!ns)
		return;
	clock_gettime(CLOCK_MONOTONIC, &a);
	do {
		clock_gettime(CLOCK_MONOTONIC, &b);
	} while ((uint64_t)(b.tv_sec - a.tv_sec) * 1000000000u + (b.tv_nsec - a.tv_nsec) < ns);
}

static int add_alloc(uintptr_t addr, size_t bytes)
{
	size_t i;

	for (i = 0; i < MAX_ALLOCS; i++) {
		if (!allocs[i].addr) {
			allocs[i].addr = addr;
			allocs[i].bytes = bytes;
			used_bytes += bytes;
			return 0;
		}
	}
	return -1;
}

static int remove_alloc(uintptr_t addr)
{
	size_t i;

	for (i = 0; i < MAX_ALLOCS; i++) {
		if (allocs[i].addr == addr) {
			used_bytes -= allocs[i].bytes;
			allocs[i].addr = 0;
			return 0;
		}
	}
	return -1;
}

#define CHECK_INIT()                                                                               \
	do {                                                                                       \
		if (!is_initialized)                                                               \
			return CUDA_ERROR_NOT_INITIALIZED;                                         \
	} while (0)

/* ---- Init, devices, contexts ---- */

/* Like the driver, cuInit may be called by many threads at once: the set-up runs once. */
static void init_once(void)
{
	const char *ns = getenv("FAKE_CUDA_LAUNCH_NS");

	launch_ns = ns ? strtoull(ns, NULL, 10) : 0;
	is_initialized = 1;
}

EXPORT CUresult cuInit(unsigned int flags)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	if (flags)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_once(&once, init_once);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDriverGetVersion(int *v)
{
	*v = 13000;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetCount(int *n)
{
	CHECK_INIT();
	*n = 1;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGet(CUdevice *d, int ordinal)
{
	CHECK_INIT();
	if (ordinal != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*d = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetName(char *name, int len, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	strncpy(name, "Fake GPU", (size_t)len);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceTotalMem_v2(size_t *bytes, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	*bytes = TOTAL_BYTES;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDeviceGetAttribute(int *v, CUdevice_attribute a, CUdevice d)
{
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	switch ((int)a) {
	case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
		*v = 4;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
		*v = 9;
		break;
	case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
		*v = 0;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR:
		*v = 2048;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR:
		*v = 32;
		break;
	case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*v = 1024;
		break;
	default:
		*v = 0;
		break;
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *ctx, CUdevice d)
{
	CHECK_INIT();
	if (d != 0)
		return CUDA_ERROR_INVALID_DEVICE;
	/* The first retain creates the primary context (later ones return it). */
	if (!atomic_exchange(&is_ctx_made, 1))
		fake_cupti_context_created();
	*ctx = (CUcontext)&ctx_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxSetCurrent(CUcontext ctx)
{
	(void)ctx;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuCtxGetDevice(CUdevice *d)
{
	CHECK_INIT();
	*d = 0;
	return CUDA_SUCCESS;
}

/* ---- Modules and kernels ---- */

EXPORT CUresult cuModuleLoadData(CUmodule *m, const void *image)
{
	CHECK_INIT();
	if (!image)
		return CUDA_ERROR_INVALID_VALUE;
	*m = (CUmodule)&module_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuModuleUnload(CUmodule m)
{
	return m == (CUmodule)&module_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuModuleGetFunction(CUfunction *f, CUmodule m, const char *name)
{
	size_t i;

	if (m != (CUmodule)&module_token)
		return CUDA_ERROR_INVALID_HANDLE;
	for (i = 0; i < sizeof(functions) / sizeof(functions[0]); i++) {
		if (!strcmp(functions[i].name, name)) {
			*f = (CUfunction)&functions[i];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

EXPORT CUresult cuLibraryLoadData(CUlibrary *l, const void *code, CUjit_option *jo, void **jv,
				  unsigned int nj, CUlibraryOption *lo, void **lv, unsigned int nl)
{
	(void)jo, (void)jv, (void)nj, (void)lo, (void)lv, (void)nl;
	CHECK_INIT();
	if (!code)
		return CUDA_ERROR_INVALID_VALUE;
	*l = (CUlibrary)&library_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuLibraryUnload(CUlibrary l)
{
	return l == (CUlibrary)&library_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuLibraryGetKernel(CUkernel *k, CUlibrary l, const char *name)
{
	size_t i;

	if (l != (CUlibrary)&library_token)
		return CUDA_ERROR_INVALID_HANDLE;
	for (i = 0; i < sizeof(kernels) / sizeof(kernels[0]); i++) {
		if (!strcmp(kernels[i].name, name)) {
			*k = (CUkernel)&kernels[i];
			return CUDA_SUCCESS;
		}
	}
	return CUDA_ERROR_NOT_FOUND;
}

/* Like the real driver: names of CUkernels need cuKernelGetName, of CUfunctions cuFuncGetName. */
EXPORT CUresult cuFuncGetName(const char **name, CUfunction f)
{
	struct fake_kernel *k = find_kernel(f);

	if (!k || k->magic != FUNC_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = k->name;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuKernelGetName(const char **name, CUkernel h)
{
	struct fake_kernel *k = find_kernel(h);

	if (!k || k->magic != KERNEL_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	*name = k->name;
	return CUDA_SUCCESS;
}

static CUresult attr_value(int *v, CUfunction_attribute a)
{
	switch ((int)a) {
	case CU_FUNC_ATTRIBUTE_NUM_REGS:
		*v = 32;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
		*v = 0;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
		*v = 1024;
		return CUDA_SUCCESS;
	case CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES:
		*v = 0;
		return CUDA_SUCCESS;
	default:
		return CUDA_ERROR_INVALID_VALUE;
	}
}

EXPORT CUresult cuFuncGetAttribute(int *v, CUfunction_attribute a, CUfunction f)
{
	struct fake_kernel *k = find_kernel(f);

	if (!k || k->magic != FUNC_MAGIC)
		return CUDA_ERROR_INVALID_HANDLE;
	return attr_value(v, a);
}

EXPORT CUresult cuKernelGetAttribute(int *v, CUfunction_attribute a, CUkernel h, CUdevice d)
{
	struct fake_kernel *k = find_kernel(h);

	if (!k || k->magic != KERNEL_MAGIC || d != 0)
		return CUDA_ERROR_INVALID_HANDLE;
	return attr_value(v, a);
}

EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *n, CUfunction f, int block,
							     size_t smem)
{
	(void)smem;
	if (!find_kernel(f) || block <= 0)
		return CUDA_ERROR_INVALID_VALUE;
	*n = 2048 / block > 32 ? 32 : 2048 / block;
	return CUDA_SUCCESS;
}

/* ---- Launches ---- */

static CUresult launch(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
		       unsigned int bx, unsigned int by, unsigned int bz, CUstream s, void **params)
{
	struct fake_kernel *k;
	uint64_t threads = (uint64_t)gx * gy * gz * bx * by * bz;

	CHECK_INIT();
	if (!f || !(k = find_kernel(f)))
		return CUDA_ERROR_INVALID_HANDLE;
	if (!threads)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (capturing && s == capturing && nr_graph_ops < 64) {
		struct captured *c = &graph_ops[nr_graph_ops++];
		int i;

		c->k = k;
		c->threads = threads;
		for (i = 0; params && params[i] && i < 8; i++) {
			memcpy(c->storage[i], params[i], 8);
			c->params[i] = c->storage[i];
		}
		pthread_mutex_unlock(&lock);
		return CUDA_SUCCESS;
	}
	pthread_mutex_unlock(&lock);
	{
		const unsigned int grid[3] = { gx, gy, gz }, block[3] = { bx, by, bz };
		struct fake_api api;

		fake_cupti_enter(&api);
		k->run(params, threads);
		spin(launch_ns);
		fake_cupti_leave(&api, FAKE_API_LAUNCH);
		fake_cupti_kernel(&api, k->name, grid, block);
		fake_cupti_exit(FAKE_API_LAUNCH);
	}
	return CUDA_SUCCESS;
}

EXPORT CUresult cuLaunchKernel(CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,
			       unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,
			       CUstream s, void **params, void **extra)
{
	(void)smem, (void)extra;
	return launch(f, gx, gy, gz, bx, by, bz, s, params);
}

EXPORT CUresult cuLaunchKernel_ptsz(CUfunction f, unsigned int gx, unsigned int gy,
				    unsigned int gz, unsigned int bx, unsigned int by,
				    unsigned int bz, unsigned int smem, CUstream s, void **params,
				    void **extra)
{
	(void)smem, (void)extra;
	return launch(f, gx, gy, gz, bx, by, bz, s, params);
}

EXPORT CUresult cuLaunchKernelEx(const CUlaunchConfig *c, CUfunction f, void **params,
				 void **extra)
{
	(void)extra;
	if (!c)
		return CUDA_ERROR_INVALID_VALUE;
	return launch(f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX, c->blockDimY,
		      c->blockDimZ, c->hStream, params);
}

EXPORT CUresult cuLaunchHostFunc(CUstream s, CUhostFn fn, void *data)
{
	(void)s;
	CHECK_INIT();
	if (!fn)
		return CUDA_ERROR_INVALID_VALUE;
	fn(data);
	return CUDA_SUCCESS;
}

/* ---- Capture and graphs ---- */

EXPORT CUresult cuStreamBeginCapture_v2(CUstream s, CUstreamCaptureMode mode)
{
	(void)mode;
	fake_cupti_graph_call("cuStreamBeginCapture");
	if (!s || capturing)
		return CUDA_ERROR_ILLEGAL_STATE;
	capturing = s;
	nr_graph_ops = 0;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamEndCapture(CUstream s, CUgraph *g)
{
	if (!capturing || s != capturing)
		return CUDA_ERROR_ILLEGAL_STATE;
	capturing = NULL;
	*g = (CUgraph)&graph_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphInstantiateWithFlags(CUgraphExec *e, CUgraph g, unsigned long long flags)
{
	(void)flags;
	fake_cupti_graph_call("cuGraphInstantiate");
	if (g != (CUgraph)&graph_token)
		return CUDA_ERROR_INVALID_VALUE;
	*e = (CUgraphExec)&exec_token;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphLaunch(CUgraphExec e, CUstream s)
{
	int i;

	(void)s;
	fake_cupti_graph_call("cuGraphLaunch");
	if (e != (CUgraphExec)&exec_token)
		return CUDA_ERROR_INVALID_VALUE;
	for (i = 0; i < nr_graph_ops; i++)
		graph_ops[i].k->run(graph_ops[i].params, graph_ops[i].threads);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGraphExecDestroy(CUgraphExec e)
{
	return e == (CUgraphExec)&exec_token ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

/* ---- Memory ---- */

static CUresult device_alloc(CUdeviceptr *p, size_t bytes)
{
	void *mem;

	CHECK_INIT();
	if (!p || !bytes)
		return CUDA_ERROR_INVALID_VALUE;
	pthread_mutex_lock(&lock);
	if (used_bytes + bytes > TOTAL_BYTES || !(mem = calloc(1, bytes))) {
		pthread_mutex_unlock(&lock);
		return CUDA_ERROR_OUT_OF_MEMORY;
	}
	add_alloc((uintptr_t)mem, bytes);
	pthread_mutex_unlock(&lock);
	*p = (CUdeviceptr)(uintptr_t)mem;
	return CUDA_SUCCESS;
}

static CUresult device_free(CUdeviceptr p)
{
	int ret;

	pthread_mutex_lock(&lock);
	ret = remove_alloc((uintptr_t)p);
	pthread_mutex_unlock(&lock);
	if (ret < 0) {
		errno = EINVAL;		/* drivers leave errno behind; the shim must not touch it */
		return CUDA_ERROR_INVALID_VALUE;
	}
	free((void *)(uintptr_t)p);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *p, size_t bytes)
{
	return device_alloc(p, bytes);
}

EXPORT CUresult cuMemAllocManaged(CUdeviceptr *p, size_t bytes, unsigned int flags)
{
	(void)flags;
	return device_alloc(p, bytes);
}

EXPORT CUresult cuMemAllocPitch_v2(CUdeviceptr *p, size_t *pitch, size_t w, size_t h,
				   unsigned int elem)
{
	size_t pw = (w + 511) & ~(size_t)511;

	(void)elem;
	*pitch = pw;
	return device_alloc(p, pw * h);
}

EXPORT CUresult cuMemFree_v2(CUdeviceptr p)
{
	return device_free(p);
}

EXPORT CUresult cuMemAllocAsync(CUdeviceptr *p, size_t bytes, CUstream s)
{
	(void)s;
	return device_alloc(p, bytes);
}

EXPORT CUresult cuMemFreeAsync(CUdeviceptr p, CUstream s)
{
	(void)s;
	return device_free(p);
}

EXPORT CUresult cuMemAllocHost_v2(void **p, size_t bytes)
{
	*p = calloc(1, bytes);
	return *p ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}

EXPORT CUresult cuMemHostAlloc(void **p, size_t bytes, unsigned int flags)
{
	(void)flags;
	return cuMemAllocHost_v2(p, bytes);
}

EXPORT CUresult cuMemFreeHost(void *p)
{
	free(p);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemGetInfo_v2(size_t *free_bytes, size_t *total)
{
	CHECK_INIT();
	pthread_mutex_lock(&lock);
	*free_bytes = TOTAL_BYTES - used_bytes;
	pthread_mutex_unlock(&lock);
	*total = TOTAL_BYTES;
	return CUDA_SUCCESS;
}

/* VMM: a physical allocation handle is the address of its backing memory. */
EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle *h, size_t size,
			    const CUmemAllocationProp *prop, unsigned long long flags)
{
	CUdeviceptr p;
	CUresult r;

	(void)flags;
	if (!prop || size % (2u << 20))
		return CUDA_ERROR_INVALID_VALUE;
	r = device_alloc(&p, size);
	if (r == CUDA_SUCCESS)
		*h = (CUmemGenericAllocationHandle)p;
	return r;
}

EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle h)
{
	return device_free((CUdeviceptr)h);
}

EXPORT CUresult cuMemAddressReserve(CUdeviceptr *p, size_t size, size_t align, CUdeviceptr addr,
				    unsigned long long flags)
{
	static uintptr_t next = 0x7f0000000000ull;

	(void)align, (void)addr, (void)flags;
	*p = (CUdeviceptr)next;
	next += (size + 0xffff) & ~(uintptr_t)0xffff;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemAddressFree(CUdeviceptr p, size_t size)
{
	(void)p, (void)size;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemMap(CUdeviceptr p, size_t size, size_t off, CUmemGenericAllocationHandle h,
			 unsigned long long flags)
{
	(void)p, (void)size, (void)off, (void)flags;
	return h ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuMemUnmap(CUdeviceptr p, size_t size)
{
	(void)p, (void)size;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemSetAccess(CUdeviceptr p, size_t size, const CUmemAccessDesc *d, size_t n)
{
	(void)p, (void)size, (void)d, (void)n;
	return CUDA_SUCCESS;
}

/* ---- Copies and sets: device memory is host memory here ---- */

static CUresult copy(void *dst, const void *src, size_t n)
{
	struct fake_api api;

	CHECK_INIT();
	if (!dst || !src)
		return CUDA_ERROR_INVALID_VALUE;
	fake_cupti_enter(&api);
	memmove(dst, src, n);
	fake_cupti_leave(&api, FAKE_API_COPY);
	fake_cupti_copy(&api, n);
	fake_cupti_exit(FAKE_API_COPY);
	return CUDA_SUCCESS;
}

#define P(x) ((void *)(uintptr_t)(x))

EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr d, const void *s, size_t n)
{
	return copy(P(d), s, n);
}

EXPORT CUresult cuMemcpyHtoD_v2_ptds(CUdeviceptr d, const void *s, size_t n)
{
	return copy(P(d), s, n);
}

EXPORT CUresult cuMemcpyDtoH_v2(void *d, CUdeviceptr s, size_t n)
{
	return copy(d, P(s), n);
}

EXPORT CUresult cuMemcpyDtoH_v2_ptds(void *d, CUdeviceptr s, size_t n)
{
	return copy(d, P(s), n);
}

EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	return copy(P(d), P(s), n);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	(void)st;
	return copy(P(d), s, n);
}

EXPORT CUresult cuMemcpyHtoDAsync_v2_ptsz(CUdeviceptr d, const void *s, size_t n, CUstream st)
{
	(void)st;
	return copy(P(d), s, n);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	(void)st;
	return copy(d, P(s), n);
}

EXPORT CUresult cuMemcpyDtoHAsync_v2_ptsz(void *d, CUdeviceptr s, size_t n, CUstream st)
{
	(void)st;
	return copy(d, P(s), n);
}

EXPORT CUresult cuMemcpy(CUdeviceptr d, CUdeviceptr s, size_t n)
{
	return copy(P(d), P(s), n);
}

EXPORT CUresult cuMemcpyAsync(CUdeviceptr d, CUdeviceptr s, size_t n, CUstream st)
{
	(void)st;
	return copy(P(d), P(s), n);
}

EXPORT CUresult cuMemcpyBatchAsync_v2(CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
				      size_t count, CUmemcpyAttributes *attrs, size_t *idxs,
				      size_t nattrs, CUstream s)
{
	size_t i;

	(void)attrs, (void)idxs, (void)nattrs, (void)s;
	for (i = 0; i < count; i++)
		if (copy(P(dsts[i]), P(srcs[i]), sizes[i]) != CUDA_SUCCESS)
			return CUDA_ERROR_INVALID_VALUE;
	return CUDA_SUCCESS;
}

static CUresult set32(CUdeviceptr d, uint32_t v, size_t n)
{
	uint32_t *p = P(d);
	struct fake_api api;
	size_t i;

	CHECK_INIT();
	if (!p)
		return CUDA_ERROR_INVALID_VALUE;
	fake_cupti_enter(&api);
	for (i = 0; i < n; i++)
		p[i] = v;
	fake_cupti_leave(&api, FAKE_API_SET);
	fake_cupti_set(&api, (uint64_t)n * 4);
	fake_cupti_exit(FAKE_API_SET);
	return CUDA_SUCCESS;
}

#ifdef FAKE_CUPTI
/* Present, as in the real driver, so the shim starts CUPTI; nothing here asks for a table. */
EXPORT CUresult cuGetExportTable(const void **table, const CUuuid *id)
{
	(void)id;
	if (table)
		*table = NULL;
	return CUDA_ERROR_NOT_SUPPORTED;
}
#endif

EXPORT CUresult cuMemsetD8_v2(CUdeviceptr d, unsigned char v, size_t n)
{
	CHECK_INIT();
	memset(P(d), v, n);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuMemsetD32_v2(CUdeviceptr d, unsigned int v, size_t n)
{
	return set32(d, v, n);
}

EXPORT CUresult cuMemsetD32Async(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	(void)s;
	return set32(d, v, n);
}

EXPORT CUresult cuMemsetD32Async_ptsz(CUdeviceptr d, unsigned int v, size_t n, CUstream s)
{
	(void)s;
	return set32(d, v, n);
}

/* ---- Streams, events, synchronization ---- */

EXPORT CUresult cuStreamCreate(CUstream *s, unsigned int flags)
{
	(void)flags;
	CHECK_INIT();
	pthread_mutex_lock(&lock);
	*s = (CUstream)&stream_tokens[nr_streams++ % 64];
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamDestroy_v2(CUstream s)
{
	(void)s;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventCreate(CUevent *e, unsigned int flags)
{
	(void)flags;
	CHECK_INIT();
	pthread_mutex_lock(&lock);
	*e = (CUevent)&event_tokens[nr_events++ % 64];
	pthread_mutex_unlock(&lock);
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventDestroy_v2(CUevent e)
{
	(void)e;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuEventRecord(CUevent e, CUstream s)
{
	(void)s;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuEventSynchronize(CUevent e)
{
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuEventQuery(CUevent e)
{
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuStreamWaitEvent(CUstream s, CUevent e, unsigned int flags)
{
	(void)s, (void)flags;
	return e ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

EXPORT CUresult cuStreamSynchronize(CUstream s)
{
	(void)s;
	CHECK_INIT();
	return CUDA_SUCCESS;
}

EXPORT CUresult cuStreamSynchronize_ptsz(CUstream s)
{
	(void)s;
	CHECK_INIT();
	return CUDA_SUCCESS;
}

/* A query that finds work pending: NOT_READY, and errno left set as a real driver might. */
EXPORT CUresult cuStreamQuery(CUstream s)
{
	(void)s;
	CHECK_INIT();
	errno = EAGAIN;
	return CUDA_ERROR_NOT_READY;
}

EXPORT CUresult cuCtxSynchronize(void)
{
	CHECK_INIT();
	return CUDA_SUCCESS;
}

/* CUDA 13's ABI: the context is an argument. */
EXPORT CUresult cuCtxSynchronize_v2(CUcontext ctx)
{
	CHECK_INIT();
	return ctx == NULL || ctx == (CUcontext)&ctx_token ? CUDA_SUCCESS :
							      CUDA_ERROR_INVALID_CONTEXT;
}

/* ---- cuGetProcAddress ---- */

struct entry {
	const char *base;
	int version;			/* CUDA version that introduced this ABI */
	int is_per_thread;		/* _ptsz / _ptds */
	void *fn;
};

#define E(base, ver, pt, fn) { base, ver, pt, (void *)fn }

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags);
EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
				    cuuint64_t flags, CUdriverProcAddressQueryResult *status);

static const struct entry table[] = {
	E("cuGetProcAddress", 11030, 0, cuGetProcAddress),
	E("cuGetProcAddress", 12000, 0, cuGetProcAddress_v2),
	E("cuInit", 2000, 0, cuInit),
	E("cuDriverGetVersion", 2020, 0, cuDriverGetVersion),
	E("cuDeviceGet", 2000, 0, cuDeviceGet),
	E("cuDevicePrimaryCtxRetain", 7000, 0, cuDevicePrimaryCtxRetain),
	E("cuCtxSetCurrent", 4000, 0, cuCtxSetCurrent),
	E("cuModuleLoadData", 2000, 0, cuModuleLoadData),
	E("cuModuleGetFunction", 2000, 0, cuModuleGetFunction),
	E("cuModuleUnload", 2000, 0, cuModuleUnload),
	E("cuLibraryLoadData", 12000, 0, cuLibraryLoadData),
	E("cuLibraryGetKernel", 12000, 0, cuLibraryGetKernel),
	E("cuLaunchKernel", 4000, 0, cuLaunchKernel),
	E("cuLaunchKernel", 7000, 1, cuLaunchKernel_ptsz),
	E("cuLaunchKernelEx", 11060, 0, cuLaunchKernelEx),
	E("cuLaunchHostFunc", 10000, 0, cuLaunchHostFunc),
	E("cuMemAlloc", 3020, 0, cuMemAlloc_v2),
	E("cuMemFree", 3020, 0, cuMemFree_v2),
	E("cuMemAllocAsync", 11020, 0, cuMemAllocAsync),
	E("cuMemFreeAsync", 11020, 0, cuMemFreeAsync),
	E("cuMemHostAlloc", 2020, 0, cuMemHostAlloc),
	E("cuMemFreeHost", 2000, 0, cuMemFreeHost),
	E("cuMemCreate", 10020, 0, cuMemCreate),
	E("cuMemRelease", 10020, 0, cuMemRelease),
	E("cuMemAddressReserve", 10020, 0, cuMemAddressReserve),
	E("cuMemAddressFree", 10020, 0, cuMemAddressFree),
	E("cuMemMap", 10020, 0, cuMemMap),
	E("cuMemUnmap", 10020, 0, cuMemUnmap),
	E("cuMemcpyHtoD", 3020, 0, cuMemcpyHtoD_v2),
	E("cuMemcpyHtoD", 7000, 1, cuMemcpyHtoD_v2_ptds),
	E("cuMemcpyDtoH", 3020, 0, cuMemcpyDtoH_v2),
	E("cuMemcpyDtoH", 7000, 1, cuMemcpyDtoH_v2_ptds),
	E("cuMemcpyHtoDAsync", 3020, 0, cuMemcpyHtoDAsync_v2),
	E("cuMemcpyHtoDAsync", 7000, 1, cuMemcpyHtoDAsync_v2_ptsz),
	E("cuMemcpyDtoHAsync", 3020, 0, cuMemcpyDtoHAsync_v2),
	E("cuMemcpyDtoHAsync", 7000, 1, cuMemcpyDtoHAsync_v2_ptsz),
	E("cuMemsetD32", 3020, 0, cuMemsetD32_v2),
	E("cuMemsetD32Async", 3020, 0, cuMemsetD32Async),
	E("cuMemsetD32Async", 7000, 1, cuMemsetD32Async_ptsz),
	E("cuStreamCreate", 2000, 0, cuStreamCreate),
	E("cuStreamSynchronize", 2000, 0, cuStreamSynchronize),
	E("cuStreamSynchronize", 7000, 1, cuStreamSynchronize_ptsz),
	E("cuStreamQuery", 2000, 0, cuStreamQuery),
	E("cuEventCreate", 2000, 0, cuEventCreate),
	E("cuEventRecord", 2000, 0, cuEventRecord),
	E("cuEventSynchronize", 2000, 0, cuEventSynchronize),
	E("cuCtxSynchronize", 2000, 0, cuCtxSynchronize),
	E("cuCtxSynchronize", 13000, 0, cuCtxSynchronize_v2),
};

EXPORT CUresult cuGetProcAddress_v2(const char *symbol, void **pfn, int version,
				    cuuint64_t flags, CUdriverProcAddressQueryResult *status)
{
	const struct entry *best = NULL, *best_pt = NULL;
	int found = 0;
	size_t i;

	if (!pfn || !symbol)
		return CUDA_ERROR_INVALID_VALUE;
	if (version > 13000)
		return CUDA_ERROR_INVALID_VALUE;	/* newer than this driver */
	*pfn = NULL;
	for (i = 0; i < sizeof(table) / sizeof(table[0]); i++) {
		const struct entry *e = &table[i];

		if (strcmp(e->base, symbol))
			continue;
		found = 1;
		if (e->version > version)
			continue;
		if (e->is_per_thread) {
			if (!best_pt || e->version > best_pt->version)
				best_pt = e;
		} else if (!best || e->version > best->version) {
			best = e;
		}
	}
	if ((flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) && best_pt)
		best = best_pt;
	if (best)
		*pfn = best->fn;
	if (status)
		*status = best ? CU_GET_PROC_ADDRESS_SUCCESS :
			  found ? CU_GET_PROC_ADDRESS_VERSION_NOT_SUFFICIENT :
				  CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	return CUDA_SUCCESS;
}

EXPORT CUresult cuGetProcAddress(const char *symbol, void **pfn, int version, cuuint64_t flags)
{
	return cuGetProcAddress_v2(symbol, pfn, version, flags, NULL);
}
