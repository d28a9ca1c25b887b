/* SPDX-License-Identifier: MIT */
/*
 * trace_api.h - the list of driver entry points the shim intercepts, one line per *exported
 * variant* (cuLaunchKernel and cuLaunchKernel_ptsz are different functions). From it come the
 * enum of entry-point ids, the names written into API_DEF records, the table that maps a real
 * libcuda address to its wrapper, and the exported aliases. Only libc headers.
 *
 * GPUSHIM_APIS(X) calls X(name, FAMILY, flags) where FAMILY names enum trace_api_family without
 * its TRACE_FAM_ prefix. Expansions must use `name` only with # or ## : some exported names
 * (cuGetProcAddress, cuStreamBeginCapture) are also version macros in cuda.h.
 *
 * Not covered: the 32-bit CUDA 2.x ABIs (cuMemAlloc, cuMemcpyHtoD without _v2, ...) and the
 * deprecated cuLaunch/cuLaunchGrid[Async], which no current runtime or framework calls.
 */
#ifndef GPUSHIM_TRACE_API_H
#define GPUSHIM_TRACE_API_H

#include "gpushim/trace_format.h"

#define API_PT TRACE_API_PER_THREAD
#define API_AS TRACE_API_ASYNC

/* clang-format off */
#define GPUSHIM_APIS(X) \
	X(cuInit,				INIT,	0) \
	X(cuGetProcAddress,			INIT,	0) \
	X(cuGetProcAddress_v2,			INIT,	0) \
	X(cuCtxDestroy_v2,			INIT,	0) \
	X(cuDevicePrimaryCtxRelease_v2,		INIT,	0) \
	X(cuDevicePrimaryCtxReset_v2,		INIT,	0) \
	X(cuDevicePrimaryCtxRetain,		INIT,	0) \
	X(cuCtxCreate_v2,			INIT,	0) \
	X(cuCtxCreate_v3,			INIT,	0) \
	X(cuCtxCreate_v4,			INIT,	0) \
	X(cuGreenCtxCreate,			INIT,	0) \
	\
	X(cuLaunchKernel,			LAUNCH,	API_AS) \
	X(cuLaunchKernel_ptsz,			LAUNCH,	API_AS | API_PT) \
	X(cuLaunchKernelEx,			LAUNCH,	API_AS) \
	X(cuLaunchKernelEx_ptsz,		LAUNCH,	API_AS | API_PT) \
	X(cuLaunchCooperativeKernel,		LAUNCH,	API_AS) \
	X(cuLaunchCooperativeKernel_ptsz,	LAUNCH,	API_AS | API_PT) \
	X(cuLaunchCooperativeKernelMultiDevice,	LAUNCH,	API_AS) \
	X(cuGraphLaunch,			LAUNCH,	API_AS) \
	X(cuGraphLaunch_ptsz,			LAUNCH,	API_AS | API_PT) \
	X(cuLaunchHostFunc,			LAUNCH,	API_AS) \
	X(cuLaunchHostFunc_ptsz,		LAUNCH,	API_AS | API_PT) \
	X(cuStreamAddCallback,			LAUNCH,	API_AS) \
	X(cuStreamAddCallback_ptsz,		LAUNCH,	API_AS | API_PT) \
	\
	X(cuMemAlloc_v2,			MEMORY,	0) \
	X(cuMemAllocPitch_v2,			MEMORY,	0) \
	X(cuMemAllocManaged,			MEMORY,	0) \
	X(cuMemFree_v2,				MEMORY,	0) \
	X(cuMemAllocHost_v2,			MEMORY,	0) \
	X(cuMemHostAlloc,			MEMORY,	0) \
	X(cuMemFreeHost,			MEMORY,	0) \
	X(cuMemHostRegister,			MEMORY,	0) \
	X(cuMemHostRegister_v2,			MEMORY,	0) \
	X(cuMemHostUnregister,			MEMORY,	0) \
	X(cuMemAllocAsync,			MEMORY,	API_AS) \
	X(cuMemAllocAsync_ptsz,			MEMORY,	API_AS | API_PT) \
	X(cuMemAllocFromPoolAsync,		MEMORY,	API_AS) \
	X(cuMemAllocFromPoolAsync_ptsz,		MEMORY,	API_AS | API_PT) \
	X(cuMemFreeAsync,			MEMORY,	API_AS) \
	X(cuMemFreeAsync_ptsz,			MEMORY,	API_AS | API_PT) \
	X(cuMemCreate,				MEMORY,	0) \
	X(cuMemRelease,				MEMORY,	0) \
	X(cuMemAddressReserve,			MEMORY,	0) \
	X(cuMemAddressFree,			MEMORY,	0) \
	X(cuMemMap,				MEMORY,	0) \
	X(cuMemUnmap,				MEMORY,	0) \
	X(cuMemSetAccess,			MEMORY,	0) \
	X(cuMemGetInfo_v2,			MEMORY,	0) \
	\
	X(cuMemcpy,				COPY,	0) \
	X(cuMemcpy_ptds,			COPY,	API_PT) \
	X(cuMemcpyAsync,			COPY,	API_AS) \
	X(cuMemcpyAsync_ptsz,			COPY,	API_AS | API_PT) \
	X(cuMemcpyPeer,				COPY,	0) \
	X(cuMemcpyPeer_ptds,			COPY,	API_PT) \
	X(cuMemcpyPeerAsync,			COPY,	API_AS) \
	X(cuMemcpyPeerAsync_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpy3DPeer,			COPY,	0) \
	X(cuMemcpy3DPeer_ptds,			COPY,	API_PT) \
	X(cuMemcpy3DPeerAsync,			COPY,	API_AS) \
	X(cuMemcpy3DPeerAsync_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyHtoD_v2,			COPY,	0) \
	X(cuMemcpyHtoD_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyDtoH_v2,			COPY,	0) \
	X(cuMemcpyDtoH_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyDtoD_v2,			COPY,	0) \
	X(cuMemcpyDtoD_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyDtoA_v2,			COPY,	0) \
	X(cuMemcpyDtoA_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyAtoD_v2,			COPY,	0) \
	X(cuMemcpyAtoD_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyHtoA_v2,			COPY,	0) \
	X(cuMemcpyHtoA_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyAtoH_v2,			COPY,	0) \
	X(cuMemcpyAtoH_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyAtoA_v2,			COPY,	0) \
	X(cuMemcpyAtoA_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpyHtoDAsync_v2,			COPY,	API_AS) \
	X(cuMemcpyHtoDAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyDtoHAsync_v2,			COPY,	API_AS) \
	X(cuMemcpyDtoHAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyDtoDAsync_v2,			COPY,	API_AS) \
	X(cuMemcpyDtoDAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyHtoAAsync_v2,			COPY,	API_AS) \
	X(cuMemcpyHtoAAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyAtoHAsync_v2,			COPY,	API_AS) \
	X(cuMemcpyAtoHAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpy2D_v2,			COPY,	0) \
	X(cuMemcpy2D_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpy2DUnaligned_v2,		COPY,	0) \
	X(cuMemcpy2DUnaligned_v2_ptds,		COPY,	API_PT) \
	X(cuMemcpy3D_v2,			COPY,	0) \
	X(cuMemcpy3D_v2_ptds,			COPY,	API_PT) \
	X(cuMemcpy2DAsync_v2,			COPY,	API_AS) \
	X(cuMemcpy2DAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpy3DAsync_v2,			COPY,	API_AS) \
	X(cuMemcpy3DAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyBatchAsync,			COPY,	API_AS) \
	X(cuMemcpyBatchAsync_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpyBatchAsync_v2,		COPY,	API_AS) \
	X(cuMemcpyBatchAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpy3DBatchAsync,			COPY,	API_AS) \
	X(cuMemcpy3DBatchAsync_ptsz,		COPY,	API_AS | API_PT) \
	X(cuMemcpy3DBatchAsync_v2,		COPY,	API_AS) \
	X(cuMemcpy3DBatchAsync_v2_ptsz,		COPY,	API_AS | API_PT) \
	\
	X(cuMemsetD8_v2,			SET,	0) \
	X(cuMemsetD8_v2_ptds,			SET,	API_PT) \
	X(cuMemsetD16_v2,			SET,	0) \
	X(cuMemsetD16_v2_ptds,			SET,	API_PT) \
	X(cuMemsetD32_v2,			SET,	0) \
	X(cuMemsetD32_v2_ptds,			SET,	API_PT) \
	X(cuMemsetD2D8_v2,			SET,	0) \
	X(cuMemsetD2D8_v2_ptds,			SET,	API_PT) \
	X(cuMemsetD2D16_v2,			SET,	0) \
	X(cuMemsetD2D16_v2_ptds,		SET,	API_PT) \
	X(cuMemsetD2D32_v2,			SET,	0) \
	X(cuMemsetD2D32_v2_ptds,		SET,	API_PT) \
	X(cuMemsetD8Async,			SET,	API_AS) \
	X(cuMemsetD8Async_ptsz,			SET,	API_AS | API_PT) \
	X(cuMemsetD16Async,			SET,	API_AS) \
	X(cuMemsetD16Async_ptsz,		SET,	API_AS | API_PT) \
	X(cuMemsetD32Async,			SET,	API_AS) \
	X(cuMemsetD32Async_ptsz,		SET,	API_AS | API_PT) \
	X(cuMemsetD2D8Async,			SET,	API_AS) \
	X(cuMemsetD2D8Async_ptsz,		SET,	API_AS | API_PT) \
	X(cuMemsetD2D16Async,			SET,	API_AS) \
	X(cuMemsetD2D16Async_ptsz,		SET,	API_AS | API_PT) \
	X(cuMemsetD2D32Async,			SET,	API_AS) \
	X(cuMemsetD2D32Async_ptsz,		SET,	API_AS | API_PT) \
	\
	X(cuCtxSynchronize,			SYNC,	0) \
	X(cuCtxSynchronize_v2,			SYNC,	0) \
	X(cuStreamSynchronize,			SYNC,	0) \
	X(cuStreamSynchronize_ptsz,		SYNC,	API_PT) \
	X(cuEventSynchronize,			SYNC,	0) \
	X(cuStreamWaitEvent,			SYNC,	API_AS) \
	X(cuStreamWaitEvent_ptsz,		SYNC,	API_AS | API_PT) \
	X(cuStreamQuery,			SYNC,	0) \
	X(cuStreamQuery_ptsz,			SYNC,	API_PT) \
	X(cuEventQuery,				SYNC,	0) \
	X(cuEventRecord,			SYNC,	API_AS) \
	X(cuEventRecord_ptsz,			SYNC,	API_AS | API_PT) \
	X(cuEventRecordWithFlags,		SYNC,	API_AS) \
	X(cuEventRecordWithFlags_ptsz,		SYNC,	API_AS | API_PT) \
	\
	X(cuStreamBeginCapture,			CAPTURE, 0) \
	X(cuStreamBeginCapture_ptsz,		CAPTURE, API_PT) \
	X(cuStreamBeginCapture_v2,		CAPTURE, 0) \
	X(cuStreamBeginCapture_v2_ptsz,		CAPTURE, API_PT) \
	X(cuStreamBeginCaptureToGraph,		CAPTURE, 0) \
	X(cuStreamBeginCaptureToGraph_ptsz,	CAPTURE, API_PT) \
	X(cuStreamEndCapture,			CAPTURE, 0) \
	X(cuStreamEndCapture_ptsz,		CAPTURE, API_PT) \
	X(cuGraphInstantiateWithFlags,		CAPTURE, 0) \
	X(cuGraphInstantiateWithParams,		CAPTURE, 0) \
	X(cuGraphInstantiateWithParams_ptsz,	CAPTURE, API_PT) \
	X(cuGraphExecDestroy,			CAPTURE, 0) \
	X(cuGraphUpload,			CAPTURE, API_AS) \
	X(cuGraphUpload_ptsz,			CAPTURE, API_AS | API_PT) \
	\
	X(cuModuleLoad,				MODULE,	0) \
	X(cuModuleLoadData,			MODULE,	0) \
	X(cuModuleLoadDataEx,			MODULE,	0) \
	X(cuModuleLoadFatBinary,		MODULE,	0) \
	X(cuModuleUnload,			MODULE,	0) \
	X(cuLibraryLoadData,			MODULE,	0) \
	X(cuLibraryLoadFromFile,		MODULE,	0) \
	X(cuLibraryUnload,			MODULE,	0)
/* clang-format on */

#define GPUSHIM_API_ENUM(name, fam, flags) API_##name,
enum gpushim_api {
	API__NONE = 0,		/* id 0 is never used: records with api 0 are malformed */
	GPUSHIM_APIS(GPUSHIM_API_ENUM)
	API__COUNT
};
#undef GPUSHIM_API_ENUM

#endif /* GPUSHIM_TRACE_API_H */
