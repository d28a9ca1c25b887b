// SPDX-License-Identifier: MIT
/*
 * hooks_copy.c - wrappers for every memcpy and memset entry point: 1D by direction, unified
 * (cuMemcpy/cuMemcpyAsync), peer, 2D/3D, arrays, batches (CUDA 12.8 and 13.0 ABIs), and the
 * 8/16/32-bit sets, each synchronous, _ptds, async and _ptsz variant. Each records direction,
 * bytes, stream and whether it was async (from the entry point). No I/O, no locks.
 * Runs on: application threads.
 */
#define _GNU_SOURCE
#define SHIM_FILE_COPY YES
#define SHIM_FILE_SET YES
#include "shim.h"

struct copy_info {
	uint64_t dst, src, bytes, stream;
	uint16_t dir, shape;
	uint32_t count;
};

static void record_copy(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
			const struct copy_info *c)
{
	struct trace_rec_copy *r = rec_begin(t, TRACE_REC_COPY, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->dst = c->dst;
	r->src = c->src;
	r->bytes = c->bytes;
	r->stream = c->stream;
	r->dir = c->dir;
	r->shape = c->shape;
	r->count = c->count;
	rec_commit(t, r);
}

#define COPY_HOOK(name, params, args, fill)                                                        \
	HOOK_DEFINE(hook_##name, params)                                              \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct copy_info c = { 0, 0, 0, 0, 0, TRACE_COPY_1D, 1 };                          \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name) args;                              \
		hook_begin(t, &h, 1);                                                              \
		res = REAL_ID(API_##name, hook_##name) args;                                       \
		hook_end(&h);                                                                      \
		fill;                                                                              \
		record_copy(t, &h, API_##name, res, &c);                                           \
		return hook_leave(t, &h, res);                                                     \
	}

#define U(x) ((uint64_t)(uintptr_t)(x))

/* ---- 1D, direction known from the entry point ---- */

#define COPY_1D(name, dir_, dst_t, src_t)                                                          \
	COPY_HOOK(name, (dst_t dst, src_t src, size_t bytes), (dst, src, bytes),                   \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = dir_))
#define COPY_1D_ASYNC(name, dir_, dst_t, src_t)                                                    \
	COPY_HOOK(name, (dst_t dst, src_t src, size_t bytes, CUstream s), (dst, src, bytes, s),    \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = dir_,                  \
		   c.stream = U(s)))

COPY_1D(cuMemcpy, TRACE_COPY_UNKNOWN, CUdeviceptr, CUdeviceptr)
COPY_1D(cuMemcpy_ptds, TRACE_COPY_UNKNOWN, CUdeviceptr, CUdeviceptr)
COPY_1D_ASYNC(cuMemcpyAsync, TRACE_COPY_UNKNOWN, CUdeviceptr, CUdeviceptr)
COPY_1D_ASYNC(cuMemcpyAsync_ptsz, TRACE_COPY_UNKNOWN, CUdeviceptr, CUdeviceptr)
COPY_1D(cuMemcpyHtoD_v2, TRACE_COPY_H2D, CUdeviceptr, const void *)
COPY_1D(cuMemcpyHtoD_v2_ptds, TRACE_COPY_H2D, CUdeviceptr, const void *)
COPY_1D(cuMemcpyDtoH_v2, TRACE_COPY_D2H, void *, CUdeviceptr)
COPY_1D(cuMemcpyDtoH_v2_ptds, TRACE_COPY_D2H, void *, CUdeviceptr)
COPY_1D(cuMemcpyDtoD_v2, TRACE_COPY_D2D, CUdeviceptr, CUdeviceptr)
COPY_1D(cuMemcpyDtoD_v2_ptds, TRACE_COPY_D2D, CUdeviceptr, CUdeviceptr)
COPY_1D_ASYNC(cuMemcpyHtoDAsync_v2, TRACE_COPY_H2D, CUdeviceptr, const void *)
COPY_1D_ASYNC(cuMemcpyHtoDAsync_v2_ptsz, TRACE_COPY_H2D, CUdeviceptr, const void *)
COPY_1D_ASYNC(cuMemcpyDtoHAsync_v2, TRACE_COPY_D2H, void *, CUdeviceptr)
COPY_1D_ASYNC(cuMemcpyDtoHAsync_v2_ptsz, TRACE_COPY_D2H, void *, CUdeviceptr)
COPY_1D_ASYNC(cuMemcpyDtoDAsync_v2, TRACE_COPY_D2D, CUdeviceptr, CUdeviceptr)
COPY_1D_ASYNC(cuMemcpyDtoDAsync_v2_ptsz, TRACE_COPY_D2D, CUdeviceptr, CUdeviceptr)

/* ---- Peer ---- */

#define COPY_PEER(name)                                                                            \
	COPY_HOOK(name,                                                                            \
		  (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes), \
		  (dst, dctx, src, sctx, bytes),                                                   \
		  (c.dst = dst, c.src = src, c.bytes = bytes, c.dir = TRACE_COPY_PEER))
#define COPY_PEER_ASYNC(name)                                                                      \
	COPY_HOOK(name,                                                                            \
		  (CUdeviceptr dst, CUcontext dctx, CUdeviceptr src, CUcontext sctx, size_t bytes, \
		   CUstream s),                                                                    \
		  (dst, dctx, src, sctx, bytes, s),                                                \
		  (c.dst = dst, c.src = src, c.bytes = bytes, c.dir = TRACE_COPY_PEER,             \
		   c.stream = U(s)))

COPY_PEER(cuMemcpyPeer)
COPY_PEER(cuMemcpyPeer_ptds)
COPY_PEER_ASYNC(cuMemcpyPeerAsync)
COPY_PEER_ASYNC(cuMemcpyPeerAsync_ptsz)

static void fill_3d_peer(struct copy_info *c, const CUDA_MEMCPY3D_PEER *p)
{
	c->shape = TRACE_COPY_3D;
	c->dir = TRACE_COPY_PEER;
	if (!p)
		return;
	c->dst = p->dstMemoryType == CU_MEMORYTYPE_HOST ? U(p->dstHost) : p->dstDevice;
	c->src = p->srcMemoryType == CU_MEMORYTYPE_HOST ? U(p->srcHost) : p->srcDevice;
	c->bytes = (uint64_t)p->WidthInBytes * (p->Height ? p->Height : 1) *
		   (p->Depth ? p->Depth : 1);
}

COPY_HOOK(cuMemcpy3DPeer, (const CUDA_MEMCPY3D_PEER *p), (p), fill_3d_peer(&c, p))
COPY_HOOK(cuMemcpy3DPeer_ptds, (const CUDA_MEMCPY3D_PEER *p), (p), fill_3d_peer(&c, p))
COPY_HOOK(cuMemcpy3DPeerAsync, (const CUDA_MEMCPY3D_PEER *p, CUstream s), (p, s),
	  (fill_3d_peer(&c, p), c.stream = U(s)))
COPY_HOOK(cuMemcpy3DPeerAsync_ptsz, (const CUDA_MEMCPY3D_PEER *p, CUstream s), (p, s),
	  (fill_3d_peer(&c, p), c.stream = U(s)))

/* ---- Arrays ---- */

#define COPY_TO_ARRAY(name, dir_, src_t)                                                           \
	COPY_HOOK(name, (CUarray dst, size_t off, src_t src, size_t bytes), (dst, off, src, bytes), \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = dir_))
#define COPY_FROM_ARRAY(name, dir_, dst_t)                                                         \
	COPY_HOOK(name, (dst_t dst, CUarray src, size_t off, size_t bytes), (dst, src, off, bytes), \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = dir_))

COPY_TO_ARRAY(cuMemcpyDtoA_v2, TRACE_COPY_D2A, CUdeviceptr)
COPY_TO_ARRAY(cuMemcpyDtoA_v2_ptds, TRACE_COPY_D2A, CUdeviceptr)
COPY_TO_ARRAY(cuMemcpyHtoA_v2, TRACE_COPY_H2A, const void *)
COPY_TO_ARRAY(cuMemcpyHtoA_v2_ptds, TRACE_COPY_H2A, const void *)
COPY_FROM_ARRAY(cuMemcpyAtoD_v2, TRACE_COPY_A2D, CUdeviceptr)
COPY_FROM_ARRAY(cuMemcpyAtoD_v2_ptds, TRACE_COPY_A2D, CUdeviceptr)
COPY_FROM_ARRAY(cuMemcpyAtoH_v2, TRACE_COPY_A2H, void *)
COPY_FROM_ARRAY(cuMemcpyAtoH_v2_ptds, TRACE_COPY_A2H, void *)

#define COPY_A2A(name)                                                                             \
	COPY_HOOK(name, (CUarray dst, size_t doff, CUarray src, size_t soff, size_t bytes),        \
		  (dst, doff, src, soff, bytes),                                                   \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = TRACE_COPY_A2A))
COPY_A2A(cuMemcpyAtoA_v2)
COPY_A2A(cuMemcpyAtoA_v2_ptds)

#define COPY_TO_ARRAY_ASYNC(name)                                                                  \
	COPY_HOOK(name, (CUarray dst, size_t off, const void *src, size_t bytes, CUstream s),      \
		  (dst, off, src, bytes, s),                                                       \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = TRACE_COPY_H2A,        \
		   c.stream = U(s)))
#define COPY_FROM_ARRAY_ASYNC(name)                                                                \
	COPY_HOOK(name, (void *dst, CUarray src, size_t off, size_t bytes, CUstream s),            \
		  (dst, src, off, bytes, s),                                                       \
		  (c.dst = U(dst), c.src = U(src), c.bytes = bytes, c.dir = TRACE_COPY_A2H,        \
		   c.stream = U(s)))
COPY_TO_ARRAY_ASYNC(cuMemcpyHtoAAsync_v2)
COPY_TO_ARRAY_ASYNC(cuMemcpyHtoAAsync_v2_ptsz)
COPY_FROM_ARRAY_ASYNC(cuMemcpyAtoHAsync_v2)
COPY_FROM_ARRAY_ASYNC(cuMemcpyAtoHAsync_v2_ptsz)

/* ---- 2D / 3D: direction from the memory types of the descriptor ---- */

static uint16_t dir_from_types(CUmemorytype src, CUmemorytype dst)
{
	int s = src == CU_MEMORYTYPE_HOST ? 'H' : src == CU_MEMORYTYPE_DEVICE ? 'D' :
		src == CU_MEMORYTYPE_ARRAY ? 'A' : 'U';
	int d = dst == CU_MEMORYTYPE_HOST ? 'H' : dst == CU_MEMORYTYPE_DEVICE ? 'D' :
		dst == CU_MEMORYTYPE_ARRAY ? 'A' : 'U';

	if (s == 'H' && d == 'D')
		return TRACE_COPY_H2D;
	if (s == 'D' && d == 'H')
		return TRACE_COPY_D2H;
	if (s == 'D' && d == 'D')
		return TRACE_COPY_D2D;
	if (s == 'H' && d == 'H')
		return TRACE_COPY_H2H;
	if (s == 'D' && d == 'A')
		return TRACE_COPY_D2A;
	if (s == 'A' && d == 'D')
		return TRACE_COPY_A2D;
	if (s == 'H' && d == 'A')
		return TRACE_COPY_H2A;
	if (s == 'A' && d == 'H')
		return TRACE_COPY_A2H;
	if (s == 'A' && d == 'A')
		return TRACE_COPY_A2A;
	return TRACE_COPY_UNKNOWN;
}

static uint64_t operand(CUmemorytype type, const void *host, CUdeviceptr dev, CUarray array)
{
	switch (type) {
	case CU_MEMORYTYPE_HOST:
		return U(host);
	case CU_MEMORYTYPE_ARRAY:
		return U(array);
	case CU_MEMORYTYPE_DEVICE:
	case CU_MEMORYTYPE_UNIFIED:
		return dev;
	}
	return 0;
}

static void fill_2d(struct copy_info *c, const CUDA_MEMCPY2D *p)
{
	c->shape = TRACE_COPY_2D;
	if (!p)
		return;
	c->dir = dir_from_types(p->srcMemoryType, p->dstMemoryType);
	c->dst = operand(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray);
	c->src = operand(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray);
	c->bytes = (uint64_t)p->WidthInBytes * p->Height;
}

static void fill_3d(struct copy_info *c, const CUDA_MEMCPY3D *p)
{
	c->shape = TRACE_COPY_3D;
	if (!p)
		return;
	c->dir = dir_from_types(p->srcMemoryType, p->dstMemoryType);
	c->dst = operand(p->dstMemoryType, p->dstHost, p->dstDevice, p->dstArray);
	c->src = operand(p->srcMemoryType, p->srcHost, p->srcDevice, p->srcArray);
	c->bytes = (uint64_t)p->WidthInBytes * (p->Height ? p->Height : 1) *
		   (p->Depth ? p->Depth : 1);
}

COPY_HOOK(cuMemcpy2D_v2, (const CUDA_MEMCPY2D *p), (p), fill_2d(&c, p))
COPY_HOOK(cuMemcpy2D_v2_ptds, (const CUDA_MEMCPY2D *p), (p), fill_2d(&c, p))
COPY_HOOK(cuMemcpy2DUnaligned_v2, (const CUDA_MEMCPY2D *p), (p), fill_2d(&c, p))
COPY_HOOK(cuMemcpy2DUnaligned_v2_ptds, (const CUDA_MEMCPY2D *p), (p), fill_2d(&c, p))
COPY_HOOK(cuMemcpy2DAsync_v2, (const CUDA_MEMCPY2D *p, CUstream s), (p, s),
	  (fill_2d(&c, p), c.stream = U(s)))
COPY_HOOK(cuMemcpy2DAsync_v2_ptsz, (const CUDA_MEMCPY2D *p, CUstream s), (p, s),
	  (fill_2d(&c, p), c.stream = U(s)))
COPY_HOOK(cuMemcpy3D_v2, (const CUDA_MEMCPY3D *p), (p), fill_3d(&c, p))
COPY_HOOK(cuMemcpy3D_v2_ptds, (const CUDA_MEMCPY3D *p), (p), fill_3d(&c, p))
COPY_HOOK(cuMemcpy3DAsync_v2, (const CUDA_MEMCPY3D *p, CUstream s), (p, s),
	  (fill_3d(&c, p), c.stream = U(s)))
COPY_HOOK(cuMemcpy3DAsync_v2_ptsz, (const CUDA_MEMCPY3D *p, CUstream s), (p, s),
	  (fill_3d(&c, p), c.stream = U(s)))

/* ---- Batches: CUDA 12.8 ABI (with failIdx) and CUDA 13.0 ABI (_v2, without) ---- */

static void fill_batch(struct copy_info *c, CUdeviceptr *dsts, CUdeviceptr *srcs, size_t *sizes,
		       size_t count, CUstream s)
{
	size_t i;

	c->shape = TRACE_COPY_BATCH;
	c->count = (uint32_t)(count > UINT32_MAX ? UINT32_MAX : count);
	c->stream = U(s);
	c->dst = dsts && count ? dsts[0] : 0;
	c->src = srcs && count ? srcs[0] : 0;
	for (i = 0; sizes && i < count; i++)
		c->bytes += sizes[i];
}

/* cuMemcpyBatchAsync and cuMemcpy3DBatchAsync are cuda.h macros: those two names go to
 * COPY_HOOK directly, never through another macro that would rewrite them to _v2. */
#define BATCH_V1_PARAMS                                                                            \
	(CUdeviceptr * dsts, CUdeviceptr * srcs, size_t * sizes, size_t count,                     \
	 CUmemcpyAttributes * attrs, size_t * attr_idxs, size_t nr_attrs, size_t * fail_idx,       \
	 CUstream s)
#define BATCH_V1_ARGS (dsts, srcs, sizes, count, attrs, attr_idxs, nr_attrs, fail_idx, s)
#define BATCH_V2_PARAMS                                                                            \
	(CUdeviceptr * dsts, CUdeviceptr * srcs, size_t * sizes, size_t count,                     \
	 CUmemcpyAttributes * attrs, size_t * attr_idxs, size_t nr_attrs, CUstream s)
#define BATCH_V2_ARGS (dsts, srcs, sizes, count, attrs, attr_idxs, nr_attrs, s)
#define BATCH_FILL fill_batch(&c, dsts, srcs, sizes, count, s)

COPY_HOOK(cuMemcpyBatchAsync, BATCH_V1_PARAMS, BATCH_V1_ARGS, BATCH_FILL)
COPY_HOOK(cuMemcpyBatchAsync_ptsz, BATCH_V1_PARAMS, BATCH_V1_ARGS, BATCH_FILL)
COPY_HOOK(cuMemcpyBatchAsync_v2, BATCH_V2_PARAMS, BATCH_V2_ARGS, BATCH_FILL)
COPY_HOOK(cuMemcpyBatchAsync_v2_ptsz, BATCH_V2_PARAMS, BATCH_V2_ARGS, BATCH_FILL)

/* Bytes of a 3D batch are the product of each extent, in the caller's units (bytes for pointers). */
static void fill_batch_3d(struct copy_info *c, size_t nr, const CUDA_MEMCPY3D_BATCH_OP *ops,
			  CUstream s)
{
	size_t i;

	c->shape = TRACE_COPY_BATCH;
	c->count = (uint32_t)(nr > UINT32_MAX ? UINT32_MAX : nr);
	c->stream = U(s);
	for (i = 0; ops && i < nr; i++)
		c->bytes += (uint64_t)ops[i].extent.width * ops[i].extent.height *
			    ops[i].extent.depth;
	if (ops && nr) {
		c->dst = ops[0].dst.type == CU_MEMCPY_OPERAND_TYPE_POINTER ? ops[0].dst.op.ptr.ptr :
									      U(ops[0].dst.op.array.array);
		c->src = ops[0].src.type == CU_MEMCPY_OPERAND_TYPE_POINTER ? ops[0].src.op.ptr.ptr :
									      U(ops[0].src.op.array.array);
	}
}

#define BATCH3D_V1_PARAMS                                                                          \
	(size_t nr, CUDA_MEMCPY3D_BATCH_OP * ops, size_t * fail_idx, unsigned long long flags,     \
	 CUstream s)
#define BATCH3D_V1_ARGS (nr, ops, fail_idx, flags, s)
#define BATCH3D_V2_PARAMS (size_t nr, CUDA_MEMCPY3D_BATCH_OP * ops, unsigned long long flags, CUstream s)
#define BATCH3D_V2_ARGS (nr, ops, flags, s)
#define BATCH3D_FILL fill_batch_3d(&c, nr, ops, s)

COPY_HOOK(cuMemcpy3DBatchAsync, BATCH3D_V1_PARAMS, BATCH3D_V1_ARGS, BATCH3D_FILL)
COPY_HOOK(cuMemcpy3DBatchAsync_ptsz, BATCH3D_V1_PARAMS, BATCH3D_V1_ARGS, BATCH3D_FILL)
COPY_HOOK(cuMemcpy3DBatchAsync_v2, BATCH3D_V2_PARAMS, BATCH3D_V2_ARGS, BATCH3D_FILL)
COPY_HOOK(cuMemcpy3DBatchAsync_v2_ptsz, BATCH3D_V2_PARAMS, BATCH3D_V2_ARGS, BATCH3D_FILL)

/* ---- Memset ---- */

static void record_set(struct shim_tls *t, struct hook_ctx *h, int api, CUresult res,
		       uint64_t dst, uint64_t bytes, uint64_t stream, uint32_t value,
		       uint16_t elem_bytes)
{
	struct trace_rec_set *r = rec_begin(t, TRACE_REC_SET, sizeof(*r), h->t0);

	if (!r)
		return;
	HOOK_CALL_FILL(r, api, h, res);
	r->dst = dst;
	r->bytes = bytes;
	r->stream = stream;
	r->value = value;
	r->elem_bytes = elem_bytes;
	rec_commit(t, r);
}

#define SET_HOOK(name, params, args, dst, bytes, stream, value, elem)                              \
	HOOK_DEFINE(hook_##name, params)                                              \
	{                                                                                          \
		struct shim_tls *t = shim_enter();                                                 \
		struct hook_ctx h;                                                                 \
		CUresult res;                                                                      \
                                                                                                   \
		if (!t)                                                                            \
			return REAL_ID(API_##name, hook_##name) args;                              \
		hook_begin(t, &h, 1);                                                              \
		res = REAL_ID(API_##name, hook_##name) args;                                       \
		hook_end(&h);                                                                      \
		record_set(t, &h, API_##name, res, dst, bytes, stream, value, elem);               \
		return hook_leave(t, &h, res);                                                     \
	}

#define SET_1D(name, val_t, elem)                                                                  \
	SET_HOOK(name, (CUdeviceptr dst, val_t v, size_t n), (dst, v, n), dst,                     \
		 (uint64_t)n * (elem), 0, v, elem)
#define SET_1D_ASYNC(name, val_t, elem)                                                            \
	SET_HOOK(name, (CUdeviceptr dst, val_t v, size_t n, CUstream s), (dst, v, n, s), dst,      \
		 (uint64_t)n * (elem), U(s), v, elem)
#define SET_2D(name, val_t, elem)                                                                  \
	SET_HOOK(name, (CUdeviceptr dst, size_t pitch, val_t v, size_t w, size_t hgt),             \
		 (dst, pitch, v, w, hgt), dst, (uint64_t)w * hgt * (elem), 0, v, elem)
#define SET_2D_ASYNC(name, val_t, elem)                                                            \
	SET_HOOK(name, (CUdeviceptr dst, size_t pitch, val_t v, size_t w, size_t hgt, CUstream s), \
		 (dst, pitch, v, w, hgt, s), dst, (uint64_t)w * hgt * (elem), U(s), v, elem)

SET_1D(cuMemsetD8_v2, unsigned char, 1)
SET_1D(cuMemsetD8_v2_ptds, unsigned char, 1)
SET_1D(cuMemsetD16_v2, unsigned short, 2)
SET_1D(cuMemsetD16_v2_ptds, unsigned short, 2)
SET_1D(cuMemsetD32_v2, unsigned int, 4)
SET_1D(cuMemsetD32_v2_ptds, unsigned int, 4)
SET_2D(cuMemsetD2D8_v2, unsigned char, 1)
SET_2D(cuMemsetD2D8_v2_ptds, unsigned char, 1)
SET_2D(cuMemsetD2D16_v2, unsigned short, 2)
SET_2D(cuMemsetD2D16_v2_ptds, unsigned short, 2)
SET_2D(cuMemsetD2D32_v2, unsigned int, 4)
SET_2D(cuMemsetD2D32_v2_ptds, unsigned int, 4)
SET_1D_ASYNC(cuMemsetD8Async, unsigned char, 1)
SET_1D_ASYNC(cuMemsetD8Async_ptsz, unsigned char, 1)
SET_1D_ASYNC(cuMemsetD16Async, unsigned short, 2)
SET_1D_ASYNC(cuMemsetD16Async_ptsz, unsigned short, 2)
SET_1D_ASYNC(cuMemsetD32Async, unsigned int, 4)
SET_1D_ASYNC(cuMemsetD32Async_ptsz, unsigned int, 4)
SET_2D_ASYNC(cuMemsetD2D8Async, unsigned char, 1)
SET_2D_ASYNC(cuMemsetD2D8Async_ptsz, unsigned char, 1)
SET_2D_ASYNC(cuMemsetD2D16Async, unsigned short, 2)
SET_2D_ASYNC(cuMemsetD2D16Async_ptsz, unsigned short, 2)
SET_2D_ASYNC(cuMemsetD2D32Async, unsigned int, 4)
SET_2D_ASYNC(cuMemsetD2D32Async_ptsz, unsigned int, 4)

GPUSHIM_APIS(SHIM_EXPORT_ENTRY)
