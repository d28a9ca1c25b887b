// SPDX-License-Identifier: MIT
/*
 * hooks_memory.c - wrappers for allocation and release: device, pitched, managed, pinned host,
 * host registration, stream-ordered (async and pool) and virtual memory management (create,
 * release, reserve, map, unmap, access). Output pointers are read only when the real call
 * succeeded. No I/O, no locks. Runs on: application threads.
 */
#define _GNU_SOURCE
#define SHIM_FILE_MEMORY YES
#include "shim.h"

struct mem_info {
	uint16_t kind;			/* enum trace_mem_kind */
	uint16_t op;			/* enum trace_mem_op */
	uint64_t addr;
	uint64_t bytes;
	uint64_t stream;
	uint64_t aux;
	int32_t device;
};

static void record_mem(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
		       const struct mem_info *m)
{
	struct trace_rec_mem *r = rec_begin(t, TRACE_REC_MEM, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->addr = m->addr;
	r->bytes = m->bytes;
	r->stream = m->stream;
	r->aux = m->aux;
	r->kind = m->kind;
	r->op = m->op;
	r->device = m->device;
	rec_commit(t, r);
}

/*
 * The bracket every hook here shares: enter, time the real call, fill @m with what is known
 * after it, record. @fill runs only when the call is recorded.
 */
#define MEM_HOOK(name, params, args, fill)                                                         \
	HOOK_DEFINE(hook_##name, params)                                              \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct mem_info m = { 0, 0, 0, 0, 0, 0, -1 };                                      \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name) args;                              \
		hook_begin(t, &h, 0);                                                              \
		res = REAL_ID(API_##name, hook_##name) args;                                       \
		hook_end(&h);                                                                      \
		fill;                                                                              \
		record_mem(t, &h, API_##name, res, &m);                                            \
		return hook_leave(t, &h, res);                                                     \
	}

#define OUT(p) (res == CUDA_SUCCESS && (p) ? (uint64_t)(uintptr_t) * (p) : 0)
#define DEVICE_NOW (res == CUDA_SUCCESS ? rec_current_device() : -1)

/* ---- Device memory ---- */

MEM_HOOK(cuMemAlloc_v2, (CUdeviceptr *dptr, size_t bytes), (dptr, bytes),
	 (m.kind = TRACE_MEM_DEVICE, m.op = TRACE_MEM_ALLOC, m.addr = OUT(dptr), m.bytes = bytes,
	  m.device = DEVICE_NOW))

MEM_HOOK(cuMemAllocPitch_v2,
	 (CUdeviceptr *dptr, size_t *pitch, size_t width, size_t height, unsigned int elem),
	 (dptr, pitch, width, height, elem),
	 (m.kind = TRACE_MEM_PITCH, m.op = TRACE_MEM_ALLOC, m.addr = OUT(dptr), m.aux = OUT(pitch),
	  m.bytes = m.aux ? m.aux * height : (uint64_t)width * height, m.device = DEVICE_NOW))

MEM_HOOK(cuMemAllocManaged, (CUdeviceptr *dptr, size_t bytes, unsigned int flags),
	 (dptr, bytes, flags),
	 (m.kind = TRACE_MEM_MANAGED, m.op = TRACE_MEM_ALLOC, m.addr = OUT(dptr), m.bytes = bytes,
	  m.aux = flags, m.device = DEVICE_NOW))

MEM_HOOK(cuMemFree_v2, (CUdeviceptr dptr), (dptr),
	 (m.kind = TRACE_MEM_DEVICE, m.op = TRACE_MEM_FREE, m.addr = dptr))

/* ---- Pinned host memory ---- */

MEM_HOOK(cuMemAllocHost_v2, (void **pp, size_t bytes), (pp, bytes),
	 (m.kind = TRACE_MEM_HOST, m.op = TRACE_MEM_ALLOC, m.addr = OUT(pp), m.bytes = bytes))

MEM_HOOK(cuMemHostAlloc, (void **pp, size_t bytes, unsigned int flags), (pp, bytes, flags),
	 (m.kind = TRACE_MEM_HOST, m.op = TRACE_MEM_ALLOC, m.addr = OUT(pp), m.bytes = bytes,
	  m.aux = flags))

MEM_HOOK(cuMemFreeHost, (void *p), (p),
	 (m.kind = TRACE_MEM_HOST, m.op = TRACE_MEM_FREE, m.addr = (uintptr_t)p))

MEM_HOOK(cuMemHostRegister, (void *p, size_t bytes, unsigned int flags), (p, bytes, flags),
	 (m.kind = TRACE_MEM_HOST_REGISTER, m.op = TRACE_MEM_ALLOC, m.addr = (uintptr_t)p,
	  m.bytes = bytes, m.aux = flags))

MEM_HOOK(cuMemHostRegister_v2, (void *p, size_t bytes, unsigned int flags), (p, bytes, flags),
	 (m.kind = TRACE_MEM_HOST_REGISTER, m.op = TRACE_MEM_ALLOC, m.addr = (uintptr_t)p,
	  m.bytes = bytes, m.aux = flags))

MEM_HOOK(cuMemHostUnregister, (void *p), (p),
	 (m.kind = TRACE_MEM_HOST_REGISTER, m.op = TRACE_MEM_FREE, m.addr = (uintptr_t)p))

/* ---- Stream-ordered allocation ---- */

#define ALLOC_ASYNC(name)                                                                          \
	MEM_HOOK(name, (CUdeviceptr * dptr, size_t bytes, CUstream s), (dptr, bytes, s),           \
		 (m.kind = TRACE_MEM_ASYNC, m.op = TRACE_MEM_ALLOC, m.addr = OUT(dptr),            \
		  m.bytes = bytes, m.stream = (uintptr_t)s, m.device = DEVICE_NOW))
ALLOC_ASYNC(cuMemAllocAsync)
ALLOC_ASYNC(cuMemAllocAsync_ptsz)

#define ALLOC_POOL(name)                                                                           \
	MEM_HOOK(name, (CUdeviceptr * dptr, size_t bytes, CUmemoryPool pool, CUstream s),          \
		 (dptr, bytes, pool, s),                                                           \
		 (m.kind = TRACE_MEM_POOL, m.op = TRACE_MEM_ALLOC, m.addr = OUT(dptr),             \
		  m.bytes = bytes, m.stream = (uintptr_t)s, m.aux = (uintptr_t)pool,               \
		  m.device = DEVICE_NOW))
ALLOC_POOL(cuMemAllocFromPoolAsync)
ALLOC_POOL(cuMemAllocFromPoolAsync_ptsz)

#define FREE_ASYNC(name)                                                                           \
	MEM_HOOK(name, (CUdeviceptr dptr, CUstream s), (dptr, s),                                  \
		 (m.kind = TRACE_MEM_ASYNC, m.op = TRACE_MEM_FREE, m.addr = dptr,                  \
		  m.stream = (uintptr_t)s))
FREE_ASYNC(cuMemFreeAsync)
FREE_ASYNC(cuMemFreeAsync_ptsz)

/* ---- Virtual memory management: physical memory is counted at create/release ---- */

static int32_t prop_device(const CUmemAllocationProp *prop)
{
	if (prop && prop->location.type == CU_MEM_LOCATION_TYPE_DEVICE)
		return prop->location.id;
	return -1;
}

MEM_HOOK(cuMemCreate,
	 (CUmemGenericAllocationHandle * handle, size_t size, const CUmemAllocationProp *prop,
	  unsigned long long flags),
	 (handle, size, prop, flags),
	 (m.kind = TRACE_MEM_VMM_PHYS, m.op = TRACE_MEM_ALLOC, m.addr = OUT(handle),
	  m.bytes = size, m.device = prop_device(prop)))

MEM_HOOK(cuMemRelease, (CUmemGenericAllocationHandle handle), (handle),
	 (m.kind = TRACE_MEM_VMM_PHYS, m.op = TRACE_MEM_FREE, m.addr = handle))

MEM_HOOK(cuMemAddressReserve,
	 (CUdeviceptr * ptr, size_t size, size_t align, CUdeviceptr addr, unsigned long long flags),
	 (ptr, size, align, addr, flags),
	 (m.kind = TRACE_MEM_VMM_VA, m.op = TRACE_MEM_ALLOC, m.addr = OUT(ptr), m.bytes = size))

MEM_HOOK(cuMemAddressFree, (CUdeviceptr ptr, size_t size), (ptr, size),
	 (m.kind = TRACE_MEM_VMM_VA, m.op = TRACE_MEM_FREE, m.addr = ptr, m.bytes = size))

MEM_HOOK(cuMemMap,
	 (CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle,
	  unsigned long long flags),
	 (ptr, size, offset, handle, flags),
	 (m.kind = TRACE_MEM_VMM_MAP, m.op = TRACE_MEM_ALLOC, m.addr = ptr, m.bytes = size,
	  m.aux = handle))

MEM_HOOK(cuMemUnmap, (CUdeviceptr ptr, size_t size), (ptr, size),
	 (m.kind = TRACE_MEM_VMM_MAP, m.op = TRACE_MEM_FREE, m.addr = ptr, m.bytes = size))

MEM_HOOK(cuMemSetAccess,
	 (CUdeviceptr ptr, size_t size, const CUmemAccessDesc *desc, size_t count),
	 (ptr, size, desc, count),
	 (m.kind = TRACE_MEM_VMM_ACCESS, m.op = TRACE_MEM_OTHER, m.addr = ptr, m.bytes = size,
	  m.aux = count))

/* ---- cuMemGetInfo: how full the device is, as the application asked ---- */

HOOK_DEFINE(hook_cuMemGetInfo_v2, (size_t *free_bytes, size_t *total_bytes))
{
	struct shim_tls *t = shim_enter();
	struct trace_rec_call *r;
	struct hook_ctx h;
	CUresult res;

	if (!t)
		return REAL(cuMemGetInfo_v2)(free_bytes, total_bytes);
	hook_begin(t, &h, 0);
	res = REAL(cuMemGetInfo_v2)(free_bytes, total_bytes);
	hook_end(&h);
	r = rec_begin(t, TRACE_REC_CALL, sizeof(*r), h.t0);
	if (r) {
		HOOK_CALL_FILL(r, API_cuMemGetInfo_v2, &h, res);
		r->arg0 = OUT(free_bytes);
		r->arg1 = OUT(total_bytes);
		rec_commit(t, r);
	}
	return hook_leave(t, &h, res);
}

GPUSHIM_APIS(SHIM_EXPORT_ENTRY)
