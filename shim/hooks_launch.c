// SPDX-License-Identifier: MIT
/*
 * hooks_launch.c - wrappers for every launch entry point: kernels (plain, Ex, cooperative,
 * multi-device), graph launches and host functions, each exported variant separately. A wrapper
 * times the real call, records it, and returns the real result; the kernel name is resolved
 * after the real call returned, once per handle. No I/O, no locks on the common path.
 * Runs on: application threads.
 */
#define _GNU_SOURCE
#define SHIM_FILE_LAUNCH YES
#include "shim.h"

#include <string.h>

/*
 * Inlined into each launch hook: passing its fourteen arguments on to a call cost 45 of the
 * ~300 instructions the shim adds to a launch (callgrind, BENCHMARKS.md).
 */
static inline __attribute__((always_inline)) void
record_launch(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res, CUfunction f,
	      unsigned int gx, unsigned int gy, unsigned int gz, unsigned int bx, unsigned int by,
	      unsigned int bz, unsigned int smem, CUstream s, const unsigned int *cluster)
{
	struct launch_args a = {
		.f = (uintptr_t)f, .stream = (uintptr_t)s,
		.grid = { gx, gy, gz }, .block = { bx, by, bz }, .smem = smem,
		.result = (uint32_t)res, .api = (uint16_t)api,
	};
	struct tbuf *b = tbuf_get(t);
	struct trace_rec_launch *r;
	uint32_t dur, func;

	if (unlikely(!b)) {
		tbuf_count_unringed();
		return;
	}
	if (cluster) {
		a.cluster[0] = cluster[0];
		a.cluster[1] = cluster[1];
		a.cluster[2] = cluster[2];
	}
	dur = rec_call_dur(h->t0, h->t1, &a.flags);
	if (res == CUDA_SUCCESS)
		pm_note_launch();

	/* The same launch as this thread's last one (a training loop): 16 bytes, no lookups. */
	if (b->p_launch_set && !memcmp(&b->p_launch, &a, sizeof(a))) {
		struct trace_rec_launch_repeat *rep =
			rec_begin(t, TRACE_REC_LAUNCH_REPEAT, sizeof(*rep), h->t0);

		if (rep) {
			rep->dur = dur;
			rep->seq = h->seq;
			rec_commit(t, rep);
			stacks_note_launch(t, h, api);
		}
		return;
	}

	func = f ? rec_func_id(t, (uintptr_t)f) : 0;
	if (res == CUDA_SUCCESS && func)
		rec_occupancy(t, func, (uintptr_t)f, bx * by * bz, smem);
	r = rec_begin(t, TRACE_REC_LAUNCH, sizeof(*r), h->t0);
	if (!r)
		return;
	r->call.dur = dur;
	r->call.result = a.result;
	r->call.api = a.api;
	r->call.flags = a.flags;
	r->call.seq = h->seq;
	r->stream = a.stream;
	r->func = func;
	r->dyn_smem_bytes = smem;
	r->grid[0] = gx;
	r->grid[1] = gy;
	r->grid[2] = gz;
	r->block[0] = (uint16_t)bx;
	r->block[1] = (uint16_t)by;
	r->block[2] = (uint16_t)bz;
	r->cluster[0] = (uint16_t)a.cluster[0];
	r->cluster[1] = (uint16_t)a.cluster[1];
	r->cluster[2] = (uint16_t)a.cluster[2];
	rec_commit(t, r);
	b->p_launch = a;
	b->p_launch_set = 1;
	stacks_note_launch(t, h, api);
}

/* ---- cuLaunchKernel, cuLaunchCooperativeKernel ---- */

#define HOOK_LAUNCH(name, extra_params, extra_args)                                                \
	HOOK_DEFINE(hook_##name,                                                                   \
		    (CUfunction f, unsigned int gx, unsigned int gy, unsigned int gz,              \
		     unsigned int bx, unsigned int by, unsigned int bz, unsigned int smem,         \
		     CUstream s, void **params extra_params))                                      \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name)(f, gx, gy, gz, bx, by, bz, smem, s, params extra_args);  \
		hook_begin(t, &h, 1);                                                              \
		res = REAL_ID(API_##name, hook_##name)(f, gx, gy, gz, bx, by, bz, smem, s, params extra_args);           \
		hook_end(&h);                                                                      \
		record_launch(t, &h, API_##name, res, f, gx, gy, gz, bx, by, bz, smem, s, NULL);   \
		return hook_leave(t, &h, res);                                                     \
	}

#define WITH_EXTRA , void **extra
#define PASS_EXTRA , extra
#define NOTHING

HOOK_LAUNCH(cuLaunchKernel, WITH_EXTRA, PASS_EXTRA)
HOOK_LAUNCH(cuLaunchKernel_ptsz, WITH_EXTRA, PASS_EXTRA)
HOOK_LAUNCH(cuLaunchCooperativeKernel, NOTHING, NOTHING)
HOOK_LAUNCH(cuLaunchCooperativeKernel_ptsz, NOTHING, NOTHING)

/* ---- cuLaunchKernelEx: geometry and stream live in the config ---- */

static void record_launch_ex(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			     const CUlaunchConfig *c, CUfunction f)
{
	unsigned int cluster[3] = { 0, 0, 0 };
	const unsigned int *cl = NULL;
	unsigned int i;

	if (!c) {
		record_launch(t, h, api, res, f, 0, 0, 0, 0, 0, 0, 0, NULL, NULL);
		return;
	}
	for (i = 0; c->attrs && i < c->numAttrs; i++) {
		if (c->attrs[i].id == CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION) {
			cluster[0] = c->attrs[i].value.clusterDim.x;
			cluster[1] = c->attrs[i].value.clusterDim.y;
			cluster[2] = c->attrs[i].value.clusterDim.z;
			cl = cluster;
		}
	}
	record_launch(t, h, api, res, f, c->gridDimX, c->gridDimY, c->gridDimZ, c->blockDimX,
		      c->blockDimY, c->blockDimZ, c->sharedMemBytes, c->hStream, cl);
}

#define HOOK_LAUNCH_EX(name)                                                                       \
	HOOK_DEFINE(hook_##name,                                                                   \
		    (const CUlaunchConfig *config, CUfunction f, void **params, void **extra))     \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name)(config, f, params, extra);                               \
		hook_begin(t, &h, 1);                                                              \
		res = REAL_ID(API_##name, hook_##name)(config, f, params, extra);                                        \
		hook_end(&h);                                                                      \
		record_launch_ex(t, &h, API_##name, res, config, f);                               \
		return hook_leave(t, &h, res);                                                     \
	}

HOOK_LAUNCH_EX(cuLaunchKernelEx)
HOOK_LAUNCH_EX(cuLaunchKernelEx_ptsz)

/* ---- cuLaunchCooperativeKernelMultiDevice (deprecated): one record per device ---- */

HOOK_DEFINE(hook_cuLaunchCooperativeKernelMultiDevice,
	    (CUDA_LAUNCH_PARAMS *list, unsigned int nr, unsigned int flags))
{
	struct shim_tls *t = shim_enter();
	struct hook_ctx h;
	CUresult res;
	unsigned int i;

	if (!t)
		return REAL(cuLaunchCooperativeKernelMultiDevice)(list, nr, flags);
	hook_begin(t, &h, 1);
	res = REAL(cuLaunchCooperativeKernelMultiDevice)(list, nr, flags);
	hook_end(&h);
	for (i = 0; list && i < nr; i++)
		record_launch(t, &h, API_cuLaunchCooperativeKernelMultiDevice, res, list[i].function,
			      list[i].gridDimX, list[i].gridDimY, list[i].gridDimZ,
			      list[i].blockDimX, list[i].blockDimY, list[i].blockDimZ,
			      list[i].sharedMemBytes, list[i].hStream, NULL);
	return hook_leave(t, &h, res);
}

/* ---- cuGraphLaunch ---- */

#define HOOK_GRAPH_LAUNCH(name)                                                                    \
	HOOK_DEFINE(hook_##name, (CUgraphExec exec, CUstream s))                                   \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct trace_rec_graph_launch *r;                                                  \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name)(exec, s);                                                \
		cupti_graph_use();                                                                 \
		hook_begin(t, &h, 1);                                                              \
		res = REAL_ID(API_##name, hook_##name)(exec, s);                                                         \
		hook_end(&h);                                                                      \
		if (res == CUDA_SUCCESS)                                                           \
			pm_note_launch();                                                          \
		r = rec_begin(t, TRACE_REC_GRAPH_LAUNCH, sizeof(*r), h.t0);                        \
		if (r) {                                                                           \
			HOOK_CALL_FILL(r, API_##name, &h, res);                                    \
			r->stream = (uintptr_t)s;                                                  \
			r->exec = (uintptr_t)exec;                                                 \
			rec_commit(t, r);                                                          \
		}                                                                                  \
		return hook_leave(t, &h, res);                                                     \
	}

HOOK_GRAPH_LAUNCH(cuGraphLaunch)
HOOK_GRAPH_LAUNCH(cuGraphLaunch_ptsz)

/* ---- Host functions ---- */

static void record_host_func(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			     CUstream s, const void *fn)
{
	struct trace_rec_host_func *r = rec_begin(t, TRACE_REC_HOST_FUNC, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->stream = (uintptr_t)s;
	r->fn = (uintptr_t)fn;
	rec_commit(t, r);
}

#define HOOK_HOST_FUNC(name)                                                                       \
	HOOK_DEFINE(hook_##name, (CUstream s, CUhostFn fn, void *data))                            \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name)(s, fn, data);                                            \
		hook_begin(t, &h, 0);                                                              \
		res = REAL_ID(API_##name, hook_##name)(s, fn, data);                                                     \
		hook_end(&h);                                                                      \
		record_host_func(t, &h, API_##name, res, s, (const void *)fn);                     \
		return hook_leave(t, &h, res);                                                     \
	}

HOOK_HOST_FUNC(cuLaunchHostFunc)
HOOK_HOST_FUNC(cuLaunchHostFunc_ptsz)

#define HOOK_STREAM_CALLBACK(name)                                                                 \
	HOOK_DEFINE(hook_##name, (CUstream s, CUstreamCallback cb, void *data, unsigned int flags)) \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name)(s, cb, data, flags);                                     \
		hook_begin(t, &h, 0);                                                              \
		res = REAL_ID(API_##name, hook_##name)(s, cb, data, flags);                                              \
		hook_end(&h);                                                                      \
		record_host_func(t, &h, API_##name, res, s, (const void *)cb);                     \
		return hook_leave(t, &h, res);                                                     \
	}

HOOK_STREAM_CALLBACK(cuStreamAddCallback)
HOOK_STREAM_CALLBACK(cuStreamAddCallback_ptsz)

GPUSHIM_APIS(SHIM_EXPORT_ENTRY)
