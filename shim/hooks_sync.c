// SPDX-License-Identifier: MIT
/*
 * hooks_sync.c - wrappers for host synchronization (context v1 and the CUDA 13 v2 ABI, stream,
 * event), queries, device-side waits, event records, stream capture begin/end and the graph
 * objects a capture produces. The shim itself never synchronizes, records events or touches a
 * stream here: it only times the application's own calls. No I/O, no locks.
 * Runs on: application threads.
 */
#define _GNU_SOURCE
#define SHIM_FILE_SYNC YES
#define SHIM_FILE_CAPTURE YES
#include "shim.h"

static void record_sync(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			uint16_t kind, uint64_t target, uint64_t aux)
{
	struct trace_rec_sync *r = rec_begin(t, TRACE_REC_SYNC, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->kind = kind;
	r->target = target;
	r->aux = aux;
	rec_commit(t, r);
}

#define SYNC_HOOK(name, params, args, kind, target, aux)                                           \
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
		record_sync(t, &h, API_##name, res, kind, (uint64_t)(uintptr_t)(target),           \
			    (uint64_t)(uintptr_t)(aux));                                           \
		return hook_leave(t, &h, res);                                                     \
	}

SYNC_HOOK(cuCtxSynchronize, (void), (), TRACE_SYNC_CTX, 0, 0)
SYNC_HOOK(cuCtxSynchronize_v2, (CUcontext ctx), (ctx), TRACE_SYNC_CTX, ctx, 0)
SYNC_HOOK(cuStreamSynchronize, (CUstream s), (s), TRACE_SYNC_STREAM, s, 0)
SYNC_HOOK(cuStreamSynchronize_ptsz, (CUstream s), (s), TRACE_SYNC_STREAM, s, 0)
SYNC_HOOK(cuEventSynchronize, (CUevent e), (e), TRACE_SYNC_EVENT, e, 0)
SYNC_HOOK(cuStreamWaitEvent, (CUstream s, CUevent e, unsigned int flags), (s, e, flags),
	  TRACE_SYNC_STREAM_WAIT_EVENT, s, e)
SYNC_HOOK(cuStreamWaitEvent_ptsz, (CUstream s, CUevent e, unsigned int flags), (s, e, flags),
	  TRACE_SYNC_STREAM_WAIT_EVENT, s, e)
SYNC_HOOK(cuStreamQuery, (CUstream s), (s), TRACE_SYNC_STREAM_QUERY, s, 0)
SYNC_HOOK(cuStreamQuery_ptsz, (CUstream s), (s), TRACE_SYNC_STREAM_QUERY, s, 0)
SYNC_HOOK(cuEventQuery, (CUevent e), (e), TRACE_SYNC_EVENT_QUERY, e, 0)
SYNC_HOOK(cuEventRecord, (CUevent e, CUstream s), (e, s), TRACE_SYNC_EVENT_RECORD, e, s)
SYNC_HOOK(cuEventRecord_ptsz, (CUevent e, CUstream s), (e, s), TRACE_SYNC_EVENT_RECORD, e, s)
SYNC_HOOK(cuEventRecordWithFlags, (CUevent e, CUstream s, unsigned int flags), (e, s, flags),
	  TRACE_SYNC_EVENT_RECORD, e, s)
SYNC_HOOK(cuEventRecordWithFlags_ptsz, (CUevent e, CUstream s, unsigned int flags),
	  (e, s, flags), TRACE_SYNC_EVENT_RECORD, e, s)

/* ---- Stream capture ---- */

/*
 * nr_captures counts captures in progress in the process; while it is nonzero every record is
 * flagged TRACE_CALL_CAPTURING (those kernels do not run now: a later cuGraphLaunch runs them).
 */
static void capture_begun(CUresult res)
{
	if (res == CUDA_SUCCESS)
		atomic_fetch_add(&shim.nr_captures, 1);
}

static void capture_ended(CUresult res)
{
	int n = atomic_load(&shim.nr_captures);

	/* Invalidated or unjoined captures end too; "not capturing" ends nothing. */
	if (res == CUDA_ERROR_STREAM_CAPTURE_UNMATCHED || res == CUDA_ERROR_ILLEGAL_STATE)
		return;
	while (n > 0 && !atomic_compare_exchange_weak(&shim.nr_captures, &n, n - 1))
		;
}

static void record_capture(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			   uint32_t op, CUstream s, uint64_t graph, uint32_t mode)
{
	struct trace_rec_capture *r = rec_begin(t, TRACE_REC_CAPTURE, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->op = op;
	r->stream = (uintptr_t)s;
	r->graph = graph;
	r->mode = mode;
	rec_commit(t, r);
}

#define CAPTURE_HOOK(name, params, args, op, s, graph, mode, after)                                \
	HOOK_DEFINE(hook_##name, params)                                              \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name) args;                              \
		cupti_graph_use();                                                                 \
		hook_begin(t, &h, 0);                                                              \
		res = REAL_ID(API_##name, hook_##name) args;                                       \
		hook_end(&h);                                                                      \
		after(res);                                                                        \
		record_capture(t, &h, API_##name, res, op, s, graph, mode);                        \
		return hook_leave(t, &h, res);                                                     \
	}

/* CUDA 10.0's cuStreamBeginCapture took no mode: it meant global mode. */
CAPTURE_HOOK(cuStreamBeginCapture, (CUstream s), (s), TRACE_CAPTURE_BEGIN, s, 0,
	     CU_STREAM_CAPTURE_MODE_GLOBAL, capture_begun)
CAPTURE_HOOK(cuStreamBeginCapture_ptsz, (CUstream s), (s), TRACE_CAPTURE_BEGIN, s, 0,
	     CU_STREAM_CAPTURE_MODE_GLOBAL, capture_begun)
CAPTURE_HOOK(cuStreamBeginCapture_v2, (CUstream s, CUstreamCaptureMode mode), (s, mode),
	     TRACE_CAPTURE_BEGIN, s, 0, mode, capture_begun)
CAPTURE_HOOK(cuStreamBeginCapture_v2_ptsz, (CUstream s, CUstreamCaptureMode mode), (s, mode),
	     TRACE_CAPTURE_BEGIN, s, 0, mode, capture_begun)

#define BEGIN_TO_GRAPH(name)                                                                       \
	CAPTURE_HOOK(name,                                                                         \
		     (CUstream s, CUgraph g, const CUgraphNode *deps,                              \
		      const CUgraphEdgeData *dep_data, size_t nr_deps, CUstreamCaptureMode mode),  \
		     (s, g, deps, dep_data, nr_deps, mode), TRACE_CAPTURE_BEGIN, s,                \
		     (uintptr_t)g, mode, capture_begun)
BEGIN_TO_GRAPH(cuStreamBeginCaptureToGraph)
BEGIN_TO_GRAPH(cuStreamBeginCaptureToGraph_ptsz)

#define GRAPH_OUT(pg) (res == CUDA_SUCCESS && (pg) ? (uint64_t)(uintptr_t) * (pg) : 0)
CAPTURE_HOOK(cuStreamEndCapture, (CUstream s, CUgraph *pg), (s, pg), TRACE_CAPTURE_END, s,
	     GRAPH_OUT(pg), 0, capture_ended)
CAPTURE_HOOK(cuStreamEndCapture_ptsz, (CUstream s, CUgraph *pg), (s, pg), TRACE_CAPTURE_END, s,
	     GRAPH_OUT(pg), 0, capture_ended)

/* ---- Graph objects: which executable graph came from which graph ---- */

static void record_graph(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			 uint32_t op, uint64_t exec, uint64_t graph, uint64_t stream)
{
	struct trace_rec_graph *r = rec_begin(t, TRACE_REC_GRAPH, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->op = op;
	r->exec = exec;
	r->graph = graph;
	r->stream = stream;
	rec_commit(t, r);
}

#define GRAPH_HOOK(name, params, args, op, exec, graph, stream)                                    \
	HOOK_DEFINE(hook_##name, params)                                              \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name) args;                              \
		cupti_graph_use();                                                                 \
		hook_begin(t, &h, 0);                                                              \
		res = REAL_ID(API_##name, hook_##name) args;                                       \
		hook_end(&h);                                                                      \
		record_graph(t, &h, API_##name, res, op, exec, graph, stream);                     \
		return hook_leave(t, &h, res);                                                     \
	}

#define EXEC_OUT(pe) (res == CUDA_SUCCESS && (pe) ? (uint64_t)(uintptr_t) * (pe) : 0)
GRAPH_HOOK(cuGraphInstantiateWithFlags,
	   (CUgraphExec * pe, CUgraph g, unsigned long long flags), (pe, g, flags),
	   TRACE_GRAPH_INSTANTIATE, EXEC_OUT(pe), (uintptr_t)g, 0)
GRAPH_HOOK(cuGraphInstantiateWithParams,
	   (CUgraphExec * pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p), (pe, g, p),
	   TRACE_GRAPH_INSTANTIATE, EXEC_OUT(pe), (uintptr_t)g, 0)
GRAPH_HOOK(cuGraphInstantiateWithParams_ptsz,
	   (CUgraphExec * pe, CUgraph g, CUDA_GRAPH_INSTANTIATE_PARAMS *p), (pe, g, p),
	   TRACE_GRAPH_INSTANTIATE, EXEC_OUT(pe), (uintptr_t)g, 0)
GRAPH_HOOK(cuGraphExecDestroy, (CUgraphExec e), (e), TRACE_GRAPH_EXEC_DESTROY, (uintptr_t)e,
	   0, 0)
GRAPH_HOOK(cuGraphUpload, (CUgraphExec e, CUstream s), (e, s), TRACE_GRAPH_UPLOAD,
	   (uintptr_t)e, 0, (uintptr_t)s)
GRAPH_HOOK(cuGraphUpload_ptsz, (CUgraphExec e, CUstream s), (e, s), TRACE_GRAPH_UPLOAD,
	   (uintptr_t)e, 0, (uintptr_t)s)

GPUSHIM_APIS(SHIM_EXPORT_ENTRY)
