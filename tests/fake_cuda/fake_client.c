// SPDX-License-Identifier: MIT
/*
 * fake_client.c - a CUDA driver-API client that reaches the driver through each of the three
 * doors the shim covers, running one fixed workload with exactly known numbers of launches,
 * syncs, copies, sets, allocations and failing calls. It prints results (including CUresults and
 * errno after the calls) that must be byte-identical with and without the shim.
 *
 *   fake_client direct    calls the exported symbols (linked against libcuda.so.1)
 *   fake_client dlsym     dlopen("libcuda.so.1") + dlsym(handle, name), as JAX/XLA and Triton
 *   fake_client cudart    the CUDA runtime's bootstrap: dlsym of cuGetProcAddress_v2, the empty
 *                         probe, the self-query at 12000, every lookup through the pointer
 *                         returned, with flags 0 and per-thread, the CUDA 13 cuCtxSynchronize
 *   fake_client threads   four threads launching at once (direct), 2500 launches each
 *   fake_client serial    eight threads one after another, 100 launches each, pausing between
 *                         them so the shim frees each exited thread's buffer before the next
 *   fake_client fork      launches in a parent and in its forked child
 *   fake_client capture   stream capture, instantiate, two graph launches
 *   fake_client nocuda    touches no CUDA at all
 *   fake_client loop      launches for up to 20 s (to be killed by a test)
 *   fake_client initrace  16 threads, released at once, each initializing CUDA (cuInit, a
 *                         module, a function) through its own door and launching 100 times
 *   fake_client quickexit 2 launches, then quick_exit(3)
 *   fake_client exec      2 launches, then exec of itself in direct mode (the same pid)
 *   fake_client execfail  2 launches, every exec form failing (errno printed), 2 launches
 *   fake_client die N HOW N launches, then death by HOW: segv, abort, term or int
 *   fake_client ownsig    its own SIGTERM handler and SIGINT ignored, both raised, survives
 *   fake_client names     3 launches of a kernel whose name needs escaping everywhere
 *   fake_client errno     launches with errno set beforehand, on the main thread and on a
 *                         fresh one (whose first call maps the shim's ring): errno printed
 *   fake_client steps N S N launches, a stream synchronization after every S-th (0: none)
 *                         and one at the end; with FAKE_CUDA_LAUNCH_NS each launch takes time
 *   fake_client pacedgraph N US  paced's N launches US apart, then a graph of one launch
 *                         captured, instantiated and launched N times US apart
 *   fake_client cupticlient  a CUPTI client of its own, as torch.profiler is: 5 launches, its
 *                         session (its buffers, kernels on, 3 launches, kernels off, flush),
 *                         5 launches; prints the kernel records it received. CUPTI comes from
 *                         dlsym(RTLD_DEFAULT): the fake CUPTI of tests/fake_cupti/libcuda.so.1,
 *                         or the shim's interposers in front of it
 *
 * Expected numbers per workload run (tests/shim_doors.sh pins them in the report):
 *   launches 14: 10 vec_add + 2 scale (a CUkernel) + 1 failing NULL handle, + 1 host function
 *   syncs 3 (2 stream, 1 context), queries 1 (answers NOT_READY: not an error)
 *   memcpys 3 (2 HtoD, 1 DtoH, 12 MiB), memsets 1
 *   allocs 6 (3 cuMemAlloc, 1 failing zero-byte cuMemAlloc, 1 cuMemCreate, 1 async)
 *   frees 6 (3 cuMemFree, 1 failing unknown address, 1 cuMemRelease, 1 async)
 *   peak 3 x 4 MiB = 12582912 bytes; failing calls 3 (launch, alloc, free)
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <cupti.h>
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define N (1 << 20)

struct api {
	CUresult (*Init)(unsigned int);
	CUresult (*DeviceGet)(CUdevice *, int);
	CUresult (*PrimaryCtxRetain)(CUcontext *, CUdevice);
	CUresult (*CtxSetCurrent)(CUcontext);
	CUresult (*ModuleLoadData)(CUmodule *, const void *);
	CUresult (*ModuleGetFunction)(CUfunction *, CUmodule, const char *);
	CUresult (*LibraryLoadData)(CUlibrary *, const void *, CUjit_option *, void **,
				    unsigned int, CUlibraryOption *, void **, unsigned int);
	CUresult (*LibraryGetKernel)(CUkernel *, CUlibrary, const char *);
	CUresult (*MemAlloc)(CUdeviceptr *, size_t);
	CUresult (*MemFree)(CUdeviceptr);
	CUresult (*MemAllocAsync)(CUdeviceptr *, size_t, CUstream);
	CUresult (*MemFreeAsync)(CUdeviceptr, CUstream);
	CUresult (*MemCreate)(CUmemGenericAllocationHandle *, size_t, const CUmemAllocationProp *,
			      unsigned long long);
	CUresult (*MemRelease)(CUmemGenericAllocationHandle);
	CUresult (*MemAddressReserve)(CUdeviceptr *, size_t, size_t, CUdeviceptr,
				      unsigned long long);
	CUresult (*MemAddressFree)(CUdeviceptr, size_t);
	CUresult (*MemMap)(CUdeviceptr, size_t, size_t, CUmemGenericAllocationHandle,
			   unsigned long long);
	CUresult (*MemUnmap)(CUdeviceptr, size_t);
	CUresult (*MemcpyHtoD)(CUdeviceptr, const void *, size_t);
	CUresult (*MemcpyDtoH)(void *, CUdeviceptr, size_t);
	CUresult (*MemsetD32)(CUdeviceptr, unsigned int, size_t);
	CUresult (*LaunchKernel)(CUfunction, unsigned int, unsigned int, unsigned int,
				 unsigned int, unsigned int, unsigned int, unsigned int, CUstream,
				 void **, void **);
	CUresult (*LaunchKernelAlt)(CUfunction, unsigned int, unsigned int, unsigned int,
				    unsigned int, unsigned int, unsigned int, unsigned int,
				    CUstream, void **, void **);
	CUresult (*LaunchHostFunc)(CUstream, CUhostFn, void *);
	CUresult (*StreamCreate)(CUstream *, unsigned int);
	CUresult (*StreamSynchronize)(CUstream);
	CUresult (*StreamQuery)(CUstream);
	CUresult (*CtxSynchronizeV2)(CUcontext);	/* NULL: use the void ABI below */
	CUresult (*CtxSynchronize)(void);
};

static void host_fn(void *data)
{
	++*(int *)data;
}

/* The workload: same calls, same numbers, whichever door filled @a. */
static int workload(const struct api *a, const char *tag)
{
	static const char image[] = "fake module image";
	CUdevice dev;
	CUcontext ctx;
	CUmodule mod;
	CUlibrary lib;
	CUfunction add;
	CUkernel scale;
	CUstream s;
	CUdeviceptr da, db, dc, bad = 0, adyn, va;
	CUmemGenericAllocationHandle h;
	CUmemAllocationProp prop;
	float *ha = malloc(N * sizeof(float)), *hb = malloc(N * sizeof(float));
	float *hc = calloc(N, sizeof(float)), factor = 0.5f;
	int n = N, i, host_calls = 0;
	void *add_args[] = { &dc, &da, &db, &n };
	void *scale_args[] = { &dc, &factor, &n };
	double sum = 0;
	CUresult r, r1, r2, r3, r4, r5, r6;

	for (i = 0; i < N; i++) {
		ha[i] = (float)(i % 7);
		hb[i] = (float)(i % 5);
	}
	if ((r = a->Init(0)) || (r = a->DeviceGet(&dev, 0)) ||
	    (r = a->PrimaryCtxRetain(&ctx, dev)) || (r = a->CtxSetCurrent(ctx))) {
		printf("%s: init failed: %d\n", tag, r);
		return 1;
	}
	a->ModuleLoadData(&mod, image);
	a->ModuleGetFunction(&add, mod, "vec_add");
	a->LibraryLoadData(&lib, image, NULL, NULL, 0, NULL, NULL, 0);
	a->LibraryGetKernel(&scale, lib, "scale");
	a->StreamCreate(&s, 0);

	/* One call per statement: argument evaluation order is unspecified. */
	r1 = a->MemAlloc(&da, N * sizeof(float));
	r2 = a->MemAlloc(&db, N * sizeof(float));
	r3 = a->MemAlloc(&dc, N * sizeof(float));
	printf("%s: alloc %d %d %d\n", tag, r1, r2, r3);
	printf("%s: zero-byte alloc -> %d\n", tag, a->MemAlloc(&bad, 0));
	r1 = a->MemcpyHtoD(da, ha, N * sizeof(float));
	r2 = a->MemcpyHtoD(db, hb, N * sizeof(float));
	printf("%s: copies %d %d\n", tag, r1, r2);
	for (i = 0; i < 10; i++) {
		CUresult (*launch)(CUfunction, unsigned int, unsigned int, unsigned int,
				   unsigned int, unsigned int, unsigned int, unsigned int, CUstream,
				   void **, void **) = i % 2 ? a->LaunchKernelAlt : a->LaunchKernel;

		r = launch(add, N / 256, 1, 1, 256, 1, 1, 0, i % 2 ? s : NULL, add_args, NULL);
		if (r)
			printf("%s: launch %d -> %d\n", tag, i, r);
	}
	/* A CUkernel handle (cudart's kind) through cuLaunchKernel. */
	for (i = 0; i < 2; i++)
		a->LaunchKernel((CUfunction)scale, N / 128, 1, 1, 128, 1, 1, 0, s, scale_args, NULL);
	printf("%s: NULL kernel -> %d\n", tag,
	       a->LaunchKernel(NULL, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL));
	printf("%s: host func -> %d\n", tag, a->LaunchHostFunc(s, host_fn, &host_calls));
	printf("%s: memset -> %d\n", tag, a->MemsetD32(db, 0, N));
	errno = 0;
	r = a->StreamQuery(s);
	printf("%s: query -> %d errno=%d\n", tag, r, errno);
	r1 = a->StreamSynchronize(s);
	r2 = a->CtxSynchronizeV2 ? a->CtxSynchronizeV2(NULL) : a->CtxSynchronize();
	printf("%s: sync %d %d\n", tag, r1, r2);
	printf("%s: copy back %d\n", tag, a->MemcpyDtoH(hc, dc, N * sizeof(float)));
	for (i = 0; i < N; i++)
		sum += hc[i];
	printf("%s: sum %.1f, host funcs %d\n", tag, sum, host_calls);

	errno = 0;
	r = a->MemFree((CUdeviceptr)0xdead0000);
	printf("%s: free unknown -> %d errno=%d\n", tag, r, errno);
	r1 = a->MemFree(da);
	r2 = a->MemFree(db);
	r3 = a->MemFree(dc);
	printf("%s: free %d %d %d\n", tag, r1, r2, r3);

	memset(&prop, 0, sizeof(prop));
	prop.type = CU_MEM_ALLOCATION_TYPE_PINNED;
	prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
	prop.location.id = 0;
	r1 = a->MemCreate(&h, 2u << 20, &prop, 0);
	r2 = a->MemAddressReserve(&va, 2u << 20, 0, 0, 0);
	r3 = a->MemMap(va, 2u << 20, 0, h, 0);
	r4 = a->MemUnmap(va, 2u << 20);
	r5 = a->MemRelease(h);
	r6 = a->MemAddressFree(va, 2u << 20);
	printf("%s: vmm %d %d %d %d %d %d\n", tag, r1, r2, r3, r4, r5, r6);
	r1 = a->MemAllocAsync(&adyn, 1u << 20, s);
	r2 = a->MemFreeAsync(adyn, s);
	r3 = a->StreamSynchronize(s);
	printf("%s: async %d %d %d\n", tag, r1, r2, r3);
	free(ha);
	free(hb);
	free(hc);
	return 0;
}

/* ---- Door 3: exported symbols ---- */

static void fill_direct(struct api *a)
{
	a->Init = cuInit;
	a->DeviceGet = cuDeviceGet;
	a->PrimaryCtxRetain = cuDevicePrimaryCtxRetain;
	a->CtxSetCurrent = cuCtxSetCurrent;
	a->ModuleLoadData = cuModuleLoadData;
	a->ModuleGetFunction = cuModuleGetFunction;
	a->LibraryLoadData = cuLibraryLoadData;
	a->LibraryGetKernel = cuLibraryGetKernel;
	a->MemAlloc = cuMemAlloc;
	a->MemFree = cuMemFree;
	a->MemAllocAsync = cuMemAllocAsync;
	a->MemFreeAsync = cuMemFreeAsync;
	a->MemCreate = cuMemCreate;
	a->MemRelease = cuMemRelease;
	a->MemAddressReserve = cuMemAddressReserve;
	a->MemAddressFree = cuMemAddressFree;
	a->MemMap = cuMemMap;
	a->MemUnmap = cuMemUnmap;
	a->MemcpyHtoD = cuMemcpyHtoD;
	a->MemcpyDtoH = cuMemcpyDtoH;
	a->MemsetD32 = cuMemsetD32;
	a->LaunchKernel = cuLaunchKernel;
	a->LaunchKernelAlt = cuLaunchKernel;
	a->LaunchHostFunc = cuLaunchHostFunc;
	a->StreamCreate = cuStreamCreate;
	a->StreamSynchronize = cuStreamSynchronize;
	a->StreamQuery = cuStreamQuery;
	a->CtxSynchronizeV2 = NULL;
	a->CtxSynchronize = cuCtxSynchronize;
}

/* ---- Door 2: dlsym on the libcuda handle ---- */

static void *need(void *h, const char *name)
{
	void *p = dlsym(h, name);

	if (!p) {
		fprintf(stderr, "dlsym %s failed\n", name);
		exit(3);
	}
	return p;
}

#define SYM(field, name) a->field = (__typeof__(a->field))need(h, name)

static void fill_dlsym(struct api *a)
{
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(3);
	}
	SYM(Init, "cuInit");
	SYM(DeviceGet, "cuDeviceGet");
	SYM(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain");
	SYM(CtxSetCurrent, "cuCtxSetCurrent");
	SYM(ModuleLoadData, "cuModuleLoadData");
	SYM(ModuleGetFunction, "cuModuleGetFunction");
	SYM(LibraryLoadData, "cuLibraryLoadData");
	SYM(LibraryGetKernel, "cuLibraryGetKernel");
	SYM(MemAlloc, "cuMemAlloc_v2");
	SYM(MemFree, "cuMemFree_v2");
	SYM(MemAllocAsync, "cuMemAllocAsync");
	SYM(MemFreeAsync, "cuMemFreeAsync");
	SYM(MemCreate, "cuMemCreate");
	SYM(MemRelease, "cuMemRelease");
	SYM(MemAddressReserve, "cuMemAddressReserve");
	SYM(MemAddressFree, "cuMemAddressFree");
	SYM(MemMap, "cuMemMap");
	SYM(MemUnmap, "cuMemUnmap");
	SYM(MemcpyHtoD, "cuMemcpyHtoD_v2");
	SYM(MemcpyDtoH, "cuMemcpyDtoH_v2");
	SYM(MemsetD32, "cuMemsetD32_v2");
	SYM(LaunchKernel, "cuLaunchKernel");
	SYM(LaunchKernelAlt, "cuLaunchKernel_ptsz");
	SYM(LaunchHostFunc, "cuLaunchHostFunc");
	SYM(StreamCreate, "cuStreamCreate");
	SYM(StreamSynchronize, "cuStreamSynchronize");
	SYM(StreamQuery, "cuStreamQuery");
	SYM(CtxSynchronizeV2, "cuCtxSynchronize_v2");
	SYM(CtxSynchronize, "cuCtxSynchronize");
}

/* ---- Door 1: the CUDA runtime's cuGetProcAddress bootstrap ---- */

typedef CUresult (*gpa_v2_fn)(const char *, void **, int, cuuint64_t,
			      CUdriverProcAddressQueryResult *);

static gpa_v2_fn gpa;

static void *lookup(const char *name, int version, cuuint64_t flags)
{
	CUdriverProcAddressQueryResult st = CU_GET_PROC_ADDRESS_SYMBOL_NOT_FOUND;
	void *p = NULL;
	CUresult r = gpa(name, &p, version, flags, &st);

	if (r || !p || st != CU_GET_PROC_ADDRESS_SUCCESS) {
		fprintf(stderr, "cuGetProcAddress %s@%d/%llu: %d status %d\n", name, version,
			(unsigned long long)flags, r, st);
		exit(3);
	}
	return p;
}

#define GPA(field, name, ver, fl) a->field = (__typeof__(a->field))lookup(name, ver, fl)
#define PT CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM

static void fill_cudart(struct api *a)
{
	CUdriverProcAddressQueryResult st;
	void *h = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
	gpa_v2_fn boot;
	void *p = (void *)1;
	CUresult r;

	if (!h) {
		fprintf(stderr, "dlopen: %s\n", dlerror());
		exit(3);
	}
	boot = (gpa_v2_fn)need(h, "cuGetProcAddress_v2");
	r = boot("", &p, 0, 0, &st);
	printf("cudart: probe -> %d %s status %d\n", r, p ? "non-null" : "null", st);
	gpa = boot;	/* the self-query: every later lookup goes through its answer */
	gpa = (gpa_v2_fn)lookup("cuGetProcAddress", 12000, 0);
	(void)lookup("cuGetProcAddress", 11030, 0);
	p = (void *)1;
	r = gpa("cuNoSuchEntryPoint", &p, 12000, 0, &st);
	printf("cudart: unknown -> %d %s status %d\n", r, p ? "non-null" : "null", st);
	p = (void *)1;
	r = gpa("cuLibraryLoadData", &p, 11000, 0, &st);
	printf("cudart: too old -> %d %s status %d\n", r, p ? "non-null" : "null", st);
	r = gpa("cuInit", &p, 99000, 0, &st);
	printf("cudart: too new -> %d\n", r);

	GPA(Init, "cuInit", 2000, 0);
	GPA(DeviceGet, "cuDeviceGet", 2000, 0);
	GPA(PrimaryCtxRetain, "cuDevicePrimaryCtxRetain", 7000, 0);
	GPA(CtxSetCurrent, "cuCtxSetCurrent", 4000, 0);
	GPA(ModuleLoadData, "cuModuleLoadData", 2000, 0);
	GPA(ModuleGetFunction, "cuModuleGetFunction", 2000, 0);
	GPA(LibraryLoadData, "cuLibraryLoadData", 12000, 0);
	GPA(LibraryGetKernel, "cuLibraryGetKernel", 12000, 0);
	GPA(MemAlloc, "cuMemAlloc", 3020, 0);
	GPA(MemFree, "cuMemFree", 3020, 0);
	GPA(MemAllocAsync, "cuMemAllocAsync", 11020, 0);
	GPA(MemFreeAsync, "cuMemFreeAsync", 11020, 0);
	GPA(MemCreate, "cuMemCreate", 10020, 0);
	GPA(MemRelease, "cuMemRelease", 10020, 0);
	GPA(MemAddressReserve, "cuMemAddressReserve", 10020, 0);
	GPA(MemAddressFree, "cuMemAddressFree", 10020, 0);
	GPA(MemMap, "cuMemMap", 10020, 0);
	GPA(MemUnmap, "cuMemUnmap", 10020, 0);
	GPA(MemcpyHtoD, "cuMemcpyHtoD", 3020, 0);
	GPA(MemcpyDtoH, "cuMemcpyDtoH", 7000, PT);
	GPA(MemsetD32, "cuMemsetD32", 3020, 0);
	GPA(LaunchKernel, "cuLaunchKernel", 4000, 0);
	GPA(LaunchKernelAlt, "cuLaunchKernel", 7000, PT);
	GPA(LaunchHostFunc, "cuLaunchHostFunc", 10000, 0);
	GPA(StreamCreate, "cuStreamCreate", 2000, 0);
	GPA(StreamSynchronize, "cuStreamSynchronize", 7000, PT);
	GPA(StreamQuery, "cuStreamQuery", 2000, 0);
	GPA(CtxSynchronizeV2, "cuCtxSynchronize", 13000, 0);
	a->CtxSynchronize = NULL;
}

/* ---- Other modes ---- */

static CUfunction spin_fn;

static void *thread_main(void *arg)
{
	int i, fails = 0;

	(void)arg;
	for (i = 0; i < 2500; i++)
		fails += cuLaunchKernel(spin_fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != 0;
	return (void *)(long)fails;
}

/* cuInit, the image's module and its spin kernel: how most modes begin. */
static CUfunction spin_kernel(void)
{
	CUmodule mod;
	CUfunction f = NULL;

	cuInit(0);
	cuModuleLoadData(&mod, "image");
	cuModuleGetFunction(&f, mod, "_Z4spinv");
	return f;
}

static int run_threads(void)
{
	pthread_t t[4];
	long fails = 0;
	void *ret;
	int i;

	spin_fn = spin_kernel();
	for (i = 0; i < 4; i++)
		pthread_create(&t[i], NULL, thread_main, NULL);
	for (i = 0; i < 4; i++) {
		pthread_join(t[i], &ret);
		fails += (long)ret;
	}
	cuCtxSynchronize();
	printf("threads: 10000 launches, %ld failed\n", fails);
	return 0;
}

static void *serial_main(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 100; i++)
		cuLaunchKernel(spin_fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	return NULL;
}

static int run_serial(void)
{
	pthread_t t;
	int i;

	spin_fn = spin_kernel();
	for (i = 0; i < 8; i++) {
		pthread_create(&t, NULL, serial_main, NULL);
		pthread_join(t, NULL);
		usleep(80 * 1000);
	}
	printf("serial: 8 threads, 800 launches\n");
	return 0;
}

static int run_fork(void)
{
	CUfunction f;
	int i, status = 0;
	pid_t pid;

	f = spin_kernel();
	for (i = 0; i < 3; i++)
		cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		for (i = 0; i < 5; i++)
			cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		cuCtxSynchronize();
		printf("fork: child done\n");
		exit(0);
	}
	waitpid(pid, &status, 0);
	for (i = 0; i < 2; i++)
		cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	cuCtxSynchronize();
	printf("fork: parent done, child exit %d\n", WEXITSTATUS(status));
	return 0;
}

static int run_capture(void)
{
	CUfunction f;
	CUstream s;
	CUgraph g;
	CUgraphExec e;
	int i;

	f = spin_kernel();
	cuStreamCreate(&s, 0);
	printf("capture: begin %d\n", cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL));
	for (i = 0; i < 3; i++)
		cuLaunchKernel(f, 2, 1, 1, 64, 1, 1, 0, s, NULL, NULL);
	printf("capture: end %d\n", cuStreamEndCapture(s, &g));
	printf("capture: instantiate %d\n", cuGraphInstantiateWithFlags(&e, g, 0));
	printf("capture: replay %d %d\n", cuGraphLaunch(e, s), cuGraphLaunch(e, s));
	printf("capture: sync %d\n", cuStreamSynchronize(s));
	return 0;
}

static int run_loop(void)
{
	CUfunction f;
	int i;

	f = spin_kernel();
	for (i = 0; i < 200000; i++) {
		cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
		if (i == 100) {
			printf("loop: running\n");
			fflush(stdout);
		}
		usleep(100);
	}
	return 0;
}

/* @n launches, a sync every @sync_every; grids take @shapes sizes in turn (1: a repeat loop). */
static int run_steps(int n, int sync_every, int shapes)
{
	CUfunction f;
	CUstream s;
	int i;

	if (shapes < 1)
		shapes = 1;
	f = spin_kernel();
	cuStreamCreate(&s, 0);
	for (i = 1; i <= n; i++) {
		cuLaunchKernel(f, 132 + (unsigned int)(i % shapes), 1, 1, 256, 1, 1, 0, s, NULL,
			       NULL);
		if (sync_every > 0 && i % sync_every == 0)
			cuStreamSynchronize(s);
	}
	cuStreamSynchronize(s);
	printf("steps: %d launches, sync every %d, %d shapes\n", n, sync_every, shapes);
	return 0;
}

/*
 * @n launches @us apart (a sync every 10): a run long enough for sampled mode's windows,
 * each launch at its own time. The primary context is retained @ctx_ms after cuInit (between
 * two windows, when that is longer than the first).
 */
static int run_paced(int n, int us, int ctx_ms)
{
	CUcontext ctx;
	CUfunction f;
	CUstream s;
	int i;

	f = spin_kernel();
	usleep((useconds_t)ctx_ms * 1000);
	cuDevicePrimaryCtxRetain(&ctx, 0);
	cuCtxSetCurrent(ctx);
	cuStreamCreate(&s, 0);
	for (i = 1; i <= n; i++) {
		cuLaunchKernel(f, 132, 1, 1, 256, 1, 1, 0, s, NULL, NULL);
		if (i % 10 == 0)
			cuStreamSynchronize(s);
		usleep((useconds_t)us);
	}
	cuStreamSynchronize(s);
	printf("paced: %d launches\n", n);
	return 0;
}

/* run_paced's @n launches, then a graph of one launch captured and launched @n times so. */
static int run_paced_graph(int n, int us)
{
	CUfunction f = spin_kernel();
	CUgraphExec e;
	CUstream s;
	CUgraph g;
	int i;

	run_paced(n, us, 0);
	cuStreamCreate(&s, 0);
	cuStreamBeginCapture(s, CU_STREAM_CAPTURE_MODE_GLOBAL);
	cuLaunchKernel(f, 132, 1, 1, 256, 1, 1, 0, s, NULL, NULL);
	cuStreamEndCapture(s, &g);
	cuGraphInstantiateWithFlags(&e, g, 0);
	for (i = 1; i <= n; i++) {
		cuGraphLaunch(e, s);
		if (i % 10 == 0)
			cuStreamSynchronize(s);
		usleep((useconds_t)us);
	}
	printf("pacedgraph: %d graph launches: %d\n", n, cuStreamSynchronize(s));
	return 0;
}

static unsigned long long client_kernels;
static CUptiResult (*client_next)(uint8_t *, size_t, CUpti_Activity **);

static void CUPTIAPI client_request(uint8_t **b, size_t *size, size_t *max_records)
{
	*b = aligned_alloc(8, 1 << 16);
	*size = *b ? 1 << 16 : 0;
	*max_records = 0;
}

static void CUPTIAPI client_complete(CUcontext ctx, uint32_t stream, uint8_t *b, size_t size,
				     size_t valid)
{
	CUpti_Activity *r = NULL;

	(void)ctx, (void)stream, (void)size;
	while (client_next(b, valid, &r) == CUPTI_SUCCESS)
		client_kernels += r->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	free(b);
}

static int run_cupti_client(void)
{
	CUptiResult (*reg)(CUpti_BuffersCallbackRequestFunc, CUpti_BuffersCallbackCompleteFunc) =
		(__typeof__(reg))dlsym(RTLD_DEFAULT, "cuptiActivityRegisterCallbacks");
	CUptiResult (*enable)(CUpti_ActivityKind) =
		(__typeof__(enable))dlsym(RTLD_DEFAULT, "cuptiActivityEnable");
	CUptiResult (*disable)(CUpti_ActivityKind) =
		(__typeof__(disable))dlsym(RTLD_DEFAULT, "cuptiActivityDisable");
	CUptiResult (*flush)(uint32_t) = (__typeof__(flush))dlsym(RTLD_DEFAULT,
								  "cuptiActivityFlushAll");
	CUfunction f;
	int i, r[4];

	client_next = (__typeof__(client_next))dlsym(RTLD_DEFAULT, "cuptiActivityGetNextRecord");
	if (!reg || !enable || !disable || !flush || !client_next) {
		printf("cupticlient: no CUPTI here\n");
		return 1;
	}
	f = spin_kernel();
	for (i = 0; i < 5; i++)
		cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	r[0] = reg(client_request, client_complete);
	r[1] = enable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	for (i = 0; i < 3; i++)
		cuLaunchKernel(f, 2, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	r[2] = disable(CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	r[3] = flush(0);
	for (i = 0; i < 5; i++)
		cuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	cuCtxSynchronize();
	printf("cupticlient: register %d enable %d disable %d flush %d, %llu kernel records\n",
	       r[0], r[1], r[2], r[3], client_kernels);
	return 0;
}

static pthread_barrier_t init_barrier;

static void *init_main(void *arg)
{
	CUresult (*launch)(CUfunction, unsigned int, unsigned int, unsigned int, unsigned int,
			   unsigned int, unsigned int, unsigned int, CUstream, void **, void **);
	CUresult (*init)(unsigned int);
	long door = (long)arg % 2, fails = 0;
	CUmodule mod;
	CUfunction f;
	int i;

	if (door) {
		void *h = dlopen("libcuda.so.1", RTLD_NOW);

		init = (CUresult(*)(unsigned int))dlsym(h, "cuInit");
		launch = (__typeof__(launch))dlsym(h, "cuLaunchKernel");
	} else {
		init = cuInit;
		launch = cuLaunchKernel;
	}
	pthread_barrier_wait(&init_barrier);
	fails += init(0) != CUDA_SUCCESS;
	fails += cuModuleLoadData(&mod, "image") != CUDA_SUCCESS;
	fails += cuModuleGetFunction(&f, mod, "_Z4spinv") != CUDA_SUCCESS;
	for (i = 0; i < 100; i++)
		fails += launch(f, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL) != CUDA_SUCCESS;
	return (void *)fails;
}

static int run_initrace(void)
{
	pthread_t t[16];
	long fails = 0;
	void *ret;
	int i;

	pthread_barrier_init(&init_barrier, NULL, 16);
	for (i = 0; i < 16; i++)
		pthread_create(&t[i], NULL, init_main, (void *)(long)i);
	for (i = 0; i < 16; i++) {
		pthread_join(t[i], &ret);
		fails += (long)ret;
	}
	printf("initrace: 16 threads, 1600 launches, %ld failed\n", fails);
	return 0;
}

static void two_launches(void)
{
	CUfunction f;

	f = spin_kernel();
	cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	cuCtxSynchronize();
}

static int run_quickexit(void)
{
	two_launches();
	printf("quickexit: 2 launches\n");
	fflush(stdout);
	quick_exit(3);
}

static int run_exec(void)
{
	char *args[] = { "fake_client", "direct", NULL };

	two_launches();
	printf("exec: 2 launches, then direct\n");
	fflush(stdout);
	execv("/proc/self/exe", args);
	return 1;
}

/* Exec that fails, through every form the shim wraps: each returns -1 with errno kept. */
static int run_execfail(void)
{
	char *args[] = { "x", NULL };
	char *env[] = { "A=1", NULL };
	const char *missing = "/nonexistent/gpushim-test";
	int r;

	two_launches();
	r = execv(missing, args);
	printf("execv %d %d\n", r, errno);
	r = execve(missing, args, env);
	printf("execve %d %d\n", r, errno);
	r = execvp("gpushim-no-such-program", args);
	printf("execvp %d %d\n", r, errno);
	r = execvpe("gpushim-no-such-program", args, env);
	printf("execvpe %d %d\n", r, errno);
	r = execl(missing, "x", "y", (char *)NULL);
	printf("execl %d %d\n", r, errno);
	r = execlp("gpushim-no-such-program", "x", (char *)NULL);
	printf("execlp %d %d\n", r, errno);
	r = execle(missing, "x", (char *)NULL, env);
	printf("execle %d %d\n", r, errno);
	r = fexecve(-1, args, env);
	printf("fexecve %d %d\n", r, errno);
	two_launches();
	printf("execfail: 4 launches\n");
	return 0;
}

/* @n launches, then death by @how: segv (a real fault), abort, term or int (sent to itself). */
static int run_die(int n, const char *how)
{
	CUfunction f;
	int i;

	f = spin_kernel();
	for (i = 0; i < n; i++)
		cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	printf("die: %d launches, then %s\n", n, how);
	fflush(stdout);
	if (!strcmp(how, "segv")) {
		/* Not NULL: UBSan would report a null store before the fault. */
		volatile int *volatile nowhere = (volatile int *)(uintptr_t)16;

		*nowhere = 1;
	}
	else if (!strcmp(how, "abort"))
		abort();
	else if (!strcmp(how, "term"))
		kill(getpid(), SIGTERM);
	else if (!strcmp(how, "int"))
		raise(SIGINT);
	sleep(5);		/* a signal is pending; never reached */
	return 0;
}

static volatile sig_atomic_t got_term;

static void on_term(int sig)
{
	(void)sig;
	got_term = 1;
}

/* The program's own dispositions (a SIGTERM handler, SIGINT ignored) survive the shim. */
static int run_ownsig(void)
{
	struct sigaction sa, now;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGINT, SIG_IGN);
	two_launches();
	sigaction(SIGTERM, NULL, &now);
	printf("SIGTERM handler kept: %d\n", now.sa_handler == on_term);
	sigaction(SIGINT, NULL, &now);
	printf("SIGINT ignore kept: %d\n", now.sa_handler == SIG_IGN);
	raise(SIGTERM);
	raise(SIGINT);
	printf("handled SIGTERM: %d, survived SIGINT\n", (int)got_term);
	two_launches();
	return 0;
}

/* The first launches of a thread, errno set by the program before each: the driver leaves it. */
static void *errno_main(void *arg)
{
	int *seen = arg;

	errno = 4242;
	cuLaunchKernel(spin_fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	seen[0] = errno;
	errno = 4343;
	cuLaunchKernel(spin_fn, 1, 1, 1, 32, 1, 1, 0, NULL, NULL, NULL);
	seen[1] = errno;
	return NULL;
}

static int run_errno(void)
{
	int main_seen[2], seen[2];
	pthread_t t;

	spin_fn = spin_kernel();
	errno_main(main_seen);
	pthread_create(&t, NULL, errno_main, seen);
	pthread_join(t, NULL);
	cuCtxSynchronize();
	printf("errno: main %d %d, fresh thread %d %d\n", main_seen[0], main_seen[1], seen[0],
	       seen[1]);
	return 0;
}

static int run_names(void)
{
	CUmodule mod;
	CUfunction f;
	int i;

	cuInit(0);
	cuModuleLoadData(&mod, "image");
	if (cuModuleGetFunction(&f, mod, "k<\"q\",[1,2]>{a\\b}\n\t\x01\xff") != CUDA_SUCCESS)
		return 1;
	for (i = 0; i < 3; i++)
		cuLaunchKernel(f, 1, 1, 1, 1, 1, 1, 0, NULL, NULL, NULL);
	cuCtxSynchronize();
	printf("names: 3 launches\n");
	return 0;
}

int main(int argc, char **argv)
{
	struct api a;
	const char *mode = argc > 1 ? argv[1] : "";

	memset(&a, 0, sizeof(a));
	if (!strcmp(mode, "direct")) {
		fill_direct(&a);
		return workload(&a, mode);
	}
	if (!strcmp(mode, "dlsym")) {
		fill_dlsym(&a);
		return workload(&a, mode);
	}
	if (!strcmp(mode, "cudart")) {
		fill_cudart(&a);
		return workload(&a, mode);
	}
	if (!strcmp(mode, "threads"))
		return run_threads();
	if (!strcmp(mode, "serial"))
		return run_serial();
	if (!strcmp(mode, "fork"))
		return run_fork();
	if (!strcmp(mode, "capture"))
		return run_capture();
	if (!strcmp(mode, "loop"))
		return run_loop();
	if (!strcmp(mode, "initrace"))
		return run_initrace();
	if (!strcmp(mode, "quickexit"))
		return run_quickexit();
	if (!strcmp(mode, "exec"))
		return run_exec();
	if (!strcmp(mode, "errno"))
		return run_errno();
	if (!strcmp(mode, "names"))
		return run_names();
	if (!strcmp(mode, "execfail"))
		return run_execfail();
	if (!strcmp(mode, "die") && argc > 3)
		return run_die(atoi(argv[2]), argv[3]);
	if (!strcmp(mode, "ownsig"))
		return run_ownsig();
	if (!strcmp(mode, "cupticlient"))
		return run_cupti_client();
	if (!strcmp(mode, "steps") && argc > 3)
		return run_steps(atoi(argv[2]), atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 1);
	if (!strcmp(mode, "paced") && argc > 3)
		return run_paced(atoi(argv[2]), atoi(argv[3]), argc > 4 ? atoi(argv[4]) : 0);
	if (!strcmp(mode, "pacedgraph") && argc > 3)
		return run_paced_graph(atoi(argv[2]), atoi(argv[3]));
	if (!strcmp(mode, "nocuda")) {
		printf("nocuda: %d\n", getpid() > 0);
		return 0;
	}
	fprintf(stderr, "usage: fake_client direct|dlsym|cudart|threads|serial|fork|capture|loop|nocuda|names|initrace|quickexit|exec|execfail|die N HOW|ownsig|steps N S [SHAPES]|paced N US [CTX_MS]|pacedgraph N US|cupticlient\n");
	return 2;
}
