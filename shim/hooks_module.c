// SPDX-License-Identifier: MIT
/*
 * hooks_module.c - cuInit (where recording, device discovery and CUPTI begin), the two
 * cuGetProcAddress entry points (the door through which every CUDA runtime fetches the driver
 * table: answered by address, never by name), and module/library load and unload (unloads
 * forget cached kernel handles, which the driver may reuse). No I/O, no locks on hot paths.
 * Runs on: application threads.
 */
#define _GNU_SOURCE
#define SHIM_FILE_INIT YES
#define SHIM_FILE_MODULE YES
#include "shim.h"

#include "futex.h"

/* ---- cuInit ---- */

/*
 * CUPTI must be set up before the driver loads any module (CONCURRENT_KERNEL instruments
 * kernels at module load), and the first cuInit comes before any module exists. Threads that
 * call cuInit while the first one sets CUPTI up wait until it is done: otherwise they load
 * modules and launch kernels CUPTI never sees, and reach pm_after_cuinit before pm_start has
 * loaded the profiler's libraries and registered its exit handler. No lock is held and no CUDA
 * call made while waiting. Bounded: a set-up stuck on one of the waiters (a library
 * constructor calling cuInit under the loader's lock while the set-up loads libcupti) costs
 * this long once; then nobody waits any more.
 */
#define CUPTI_SETUP_WAIT_MS 2000

enum { SETUP_NONE, SETUP_RUNNING, SETUP_DONE };

static _Atomic int cupti_setup = SETUP_NONE;	/* futex word */

static void cupti_setup_once(void)
{
	uint64_t deadline;
	int st = SETUP_NONE;

	if (atomic_load_explicit(&cupti_setup, memory_order_acquire) == SETUP_DONE)
		return;
	if (atomic_compare_exchange_strong(&cupti_setup, &st, SETUP_RUNNING)) {
		cupti_start();
		atomic_store_explicit(&cupti_setup, SETUP_DONE, memory_order_release);
		futex_wake_all(&cupti_setup);
		return;
	}
	deadline = clock_now_ns() + (uint64_t)CUPTI_SETUP_WAIT_MS * 1000000u;
	while (atomic_load_explicit(&cupti_setup, memory_order_acquire) == SETUP_RUNNING &&
	       futex_wait_until(&cupti_setup, SETUP_RUNNING, deadline))
		;
	/* Waited in vain (or a fork's child, where the set-up's thread is gone): never again. */
	st = SETUP_RUNNING;
	atomic_compare_exchange_strong(&cupti_setup, &st, SETUP_DONE);
}

HOOK_DEFINE(hook_cuInit, (unsigned int flags))
{
	struct shim_tls *t = shim_enter();
	struct trace_rec_call *r;
	struct hook_ctx h;
	CUresult res;

	if (!t)
		return REAL(cuInit)(flags);
	cupti_setup_once();
	hook_begin(t, &h, 0);
	res = REAL(cuInit)(flags);
	hook_end(&h);
	if (res == CUDA_SUCCESS) {
		rec_devices_once();
		pm_after_cuinit();
	}
	r = rec_begin(t, TRACE_REC_CALL, sizeof(*r), h.t0);
	if (r) {
		HOOK_CALL_FILL(r, API_cuInit, &h, res);
		r->arg0 = flags;
		rec_commit(t, r);
	}
	return hook_leave(t, &h, res);
}

/*
 * ---- Contexts: created and torn down, recorded as CALLs with their context or device ----
 * @pre runs first, even where nothing is recorded; @begin and @end bracket the real call of a
 * recorded one. Teardown: hardware-counter sampling stops first (the CUDA runtime's exit
 * handler and cudaDeviceReset() release the primary context; sampling that outlives its
 * context crashes inside the profiler libraries). Creation: in sampled mode CUPTI's API
 * records are on for it (a context created while they are off never gives them;
 * cupti_context_begin); a retain of a primary context that exists already counts too.
 */

#define CTX_HOOK(name, params, args, arg, pre, begin, end)                                         \
	HOOK_DEFINE(hook_##name, params)                                                           \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct trace_rec_call *r;                                                          \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		pre;                                                                               \
		if (!t)                                                                            \
			return REAL(name) args;                                                    \
		begin;                                                                             \
		hook_begin(t, &h, 0);                                                              \
		res = REAL(name) args;                                                             \
		hook_end(&h);                                                                      \
		end;                                                                               \
		r = rec_begin(t, TRACE_REC_CALL, sizeof(*r), h.t0);                                \
		if (r) {                                                                           \
			HOOK_CALL_FILL(r, API_##name, &h, res);                                    \
			r->arg0 = (uint64_t)(arg);                                                 \
			rec_commit(t, r);                                                          \
		}                                                                                  \
		return hook_leave(t, &h, res);                                                     \
	}

#define CTX_TEARDOWN_HOOK(name, params, args, arg)                                                 \
	CTX_HOOK(name, params, args, arg, pm_before_context_teardown(), (void)0, (void)0)
#define CTX_CREATE_HOOK(name, params, args, dev)                                                   \
	CTX_HOOK(name, params, args, dev, (void)0, cupti_context_begin(), cupti_context_end())

CTX_TEARDOWN_HOOK(cuCtxDestroy_v2, (CUcontext ctx), (ctx), (uintptr_t)ctx)
CTX_TEARDOWN_HOOK(cuDevicePrimaryCtxRelease_v2, (CUdevice dev), (dev), dev)
CTX_TEARDOWN_HOOK(cuDevicePrimaryCtxReset_v2, (CUdevice dev), (dev), dev)

CTX_CREATE_HOOK(cuDevicePrimaryCtxRetain, (CUcontext * ctx, CUdevice dev), (ctx, dev), dev)
CTX_CREATE_HOOK(cuCtxCreate_v2, (CUcontext * ctx, unsigned int flags, CUdevice dev),
		(ctx, flags, dev), dev)
CTX_CREATE_HOOK(cuCtxCreate_v3,
		(CUcontext * ctx, CUexecAffinityParam *params, int nr_params, unsigned int flags,
		 CUdevice dev),
		(ctx, params, nr_params, flags, dev), dev)
CTX_CREATE_HOOK(cuCtxCreate_v4,
		(CUcontext * ctx, CUctxCreateParams *params, unsigned int flags, CUdevice dev),
		(ctx, params, flags, dev), dev)
CTX_CREATE_HOOK(cuGreenCtxCreate,
		(CUgreenCtx * ctx, CUdevResourceDesc desc, CUdevice dev, unsigned int flags),
		(ctx, desc, dev, flags), dev)

/* ---- cuGetProcAddress: not recorded (hundreds per runtime at start-up), only answered ---- */

static void substitute(CUresult res, void **pfn)
{
	void *w;

	if (res != CUDA_SUCCESS || !pfn || !*pfn || atomic_load(&shim.mode) == SHIM_OFF)
		return;
	w = resolve_wrapper_for(*pfn);
	if (w) {
		*pfn = w;
		resolve_count_gpa();
	}
}

HOOK_DEFINE(hook_cuGetProcAddress,
	    (const char *symbol, void **pfn, int version, cuuint64_t flags))
{
	CUresult res = REAL(cuGetProcAddress)(symbol, pfn, version, flags);
	int after = errno;

	substitute(res, pfn);
	errno = after;
	return res;
}

HOOK_DEFINE(hook_cuGetProcAddress_v2, (const char *symbol, void **pfn, int version,
				      cuuint64_t flags, CUdriverProcAddressQueryResult *status))
{
	CUresult res = REAL(cuGetProcAddress_v2)(symbol, pfn, version, flags, status);
	int after = errno;

	/* The driver's own status and result go back untouched; only the pointer is swapped. */
	substitute(res, pfn);
	errno = after;
	return res;
}

/* ---- Modules and libraries ---- */

static void record_module(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			  uint16_t op, uint16_t kind, uint64_t handle)
{
	struct trace_rec_module *r = rec_begin(t, TRACE_REC_MODULE, sizeof(*r), h->t0);

	if (op == TRACE_MODULE_UNLOAD && res == CUDA_SUCCESS)
		rec_flush_funcs();
	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->op = op;
	r->kind = kind;
	r->handle = handle;
	rec_commit(t, r);
}

#define MODULE_HOOK(name, params, args, op, kind, handle)                                          \
	HOOK_DEFINE(hook_##name, params)                                              \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name) args;                              \
		hook_begin(t, &h, 0);                                                              \
		res = REAL_ID(API_##name, hook_##name) args;                                       \
		hook_end(&h);                                                                      \
		record_module(t, &h, API_##name, res, op, kind, handle);                           \
		return hook_leave(t, &h, res);                                                     \
	}

#define HANDLE_OUT(p) (res == CUDA_SUCCESS && (p) ? (uint64_t)(uintptr_t) * (p) : 0)

MODULE_HOOK(cuModuleLoad, (CUmodule * m, const char *fname), (m, fname), TRACE_MODULE_LOAD,
	    TRACE_MODULE_MODULE, HANDLE_OUT(m))
MODULE_HOOK(cuModuleLoadData, (CUmodule * m, const void *image), (m, image), TRACE_MODULE_LOAD,
	    TRACE_MODULE_MODULE, HANDLE_OUT(m))
MODULE_HOOK(cuModuleLoadDataEx,
	    (CUmodule * m, const void *image, unsigned int n, CUjit_option *opts, void **vals),
	    (m, image, n, opts, vals), TRACE_MODULE_LOAD, TRACE_MODULE_MODULE, HANDLE_OUT(m))
MODULE_HOOK(cuModuleLoadFatBinary, (CUmodule * m, const void *fatbin), (m, fatbin),
	    TRACE_MODULE_LOAD, TRACE_MODULE_MODULE, HANDLE_OUT(m))
MODULE_HOOK(cuModuleUnload, (CUmodule m), (m), TRACE_MODULE_UNLOAD, TRACE_MODULE_MODULE,
	    (uintptr_t)m)
MODULE_HOOK(cuLibraryLoadData,
	    (CUlibrary * l, const void *code, CUjit_option *jit_opts, void **jit_vals,
	     unsigned int nr_jit, CUlibraryOption *lib_opts, void **lib_vals, unsigned int nr_lib),
	    (l, code, jit_opts, jit_vals, nr_jit, lib_opts, lib_vals, nr_lib), TRACE_MODULE_LOAD,
	    TRACE_MODULE_LIBRARY, HANDLE_OUT(l))
MODULE_HOOK(cuLibraryLoadFromFile,
	    (CUlibrary * l, const char *file, CUjit_option *jit_opts, void **jit_vals,
	     unsigned int nr_jit, CUlibraryOption *lib_opts, void **lib_vals, unsigned int nr_lib),
	    (l, file, jit_opts, jit_vals, nr_jit, lib_opts, lib_vals, nr_lib), TRACE_MODULE_LOAD,
	    TRACE_MODULE_LIBRARY, HANDLE_OUT(l))
MODULE_HOOK(cuLibraryUnload, (CUlibrary l), (l), TRACE_MODULE_UNLOAD, TRACE_MODULE_LIBRARY,
	    (uintptr_t)l)

GPUSHIM_APIS(SHIM_EXPORT_ENTRY)
