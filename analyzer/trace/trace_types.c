// SPDX-License-Identifier: MIT
/*
 * trace_types.c - the record-type table: each type this reader knows, its name, its smallest
 * size and whether it is a thread record, indexed by type number (trace_internal.h); and the
 * public questions on it (trace_reader.h). Knows no field layouts and reads no records.
 */
#include "trace_internal.h"

#include <stdio.h>

#define TYPE(t, st, thread, nm) [t] = { nm, sizeof(struct st), thread }

const struct trace_type trace_types[TRACE_NR_TYPES] = {
	TYPE(TRACE_REC_STRING, trace_rec_string, 0, "string"),
	TYPE(TRACE_REC_API_DEF, trace_rec_api_def, 0, "api_def"),
	TYPE(TRACE_REC_BLOCK, trace_rec_block, 0, "block"),
	TYPE(TRACE_REC_TIME, trace_rec_time, 1, "time"),
	TYPE(TRACE_REC_LOST, trace_rec_lost, 1, "lost"),
	TYPE(TRACE_REC_END, trace_rec_end, 0, "end"),
	TYPE(TRACE_REC_DEVICE, trace_rec_device, 0, "device"),
	TYPE(TRACE_REC_FUNC, trace_rec_func, 0, "func"),
	TYPE(TRACE_REC_OCCUPANCY, trace_rec_occupancy, 0, "occupancy"),
	TYPE(TRACE_REC_NOTE, trace_rec_note, 0, "note"),
	TYPE(TRACE_REC_LAUNCH, trace_rec_launch, 1, "launch"),
	TYPE(TRACE_REC_GRAPH_LAUNCH, trace_rec_graph_launch, 1, "graph_launch"),
	TYPE(TRACE_REC_HOST_FUNC, trace_rec_host_func, 1, "host_func"),
	TYPE(TRACE_REC_MEM, trace_rec_mem, 1, "mem"),
	TYPE(TRACE_REC_COPY, trace_rec_copy, 1, "copy"),
	TYPE(TRACE_REC_SET, trace_rec_set, 1, "set"),
	TYPE(TRACE_REC_SYNC, trace_rec_sync, 1, "sync"),
	TYPE(TRACE_REC_CAPTURE, trace_rec_capture, 1, "capture"),
	TYPE(TRACE_REC_GRAPH, trace_rec_graph, 1, "graph"),
	TYPE(TRACE_REC_MODULE, trace_rec_module, 1, "module"),
	TYPE(TRACE_REC_CALL, trace_rec_call, 1, "call"),
	TYPE(TRACE_REC_LAUNCH_REPEAT, trace_rec_launch_repeat, 1, "launch_repeat"),
	TYPE(TRACE_REC_LAUNCH_RUN, trace_rec_launch_run, 1, "launch_run"),
	TYPE(TRACE_REC_LAUNCH_REFS, trace_rec_launch_refs, 1, "launch_refs"),
	TYPE(TRACE_REC_LAUNCH_GAP_RUN, trace_rec_launch_run, 1, "launch_gap_run"),
	TYPE(TRACE_REC_GPU_KERNEL, trace_rec_gpu_kernel, 0, "gpu_kernel"),
	TYPE(TRACE_REC_GPU_MEMCPY, trace_rec_gpu_memcpy, 0, "gpu_memcpy"),
	TYPE(TRACE_REC_GPU_MEMSET, trace_rec_gpu_memset, 0, "gpu_memset"),
	TYPE(TRACE_REC_GPU_INFO, trace_rec_gpu_info, 0, "gpu_info"),
	TYPE(TRACE_REC_GPU_CORR, trace_rec_gpu_corr, 0, "gpu_corr"),
	TYPE(TRACE_REC_GPU_API, trace_rec_gpu_api, 0, "gpu_api"),
	TYPE(TRACE_REC_GPU_KERNEL_RUN, trace_rec_gpu_run, 0, "gpu_kernel_run"),
	TYPE(TRACE_REC_GPU_API_RUN, trace_rec_gpu_run, 0, "gpu_api_run"),
	/* Grown at the tail in 1.7: the 1.1 size is the least (trace_format.h). */
	[TRACE_REC_PM_CONFIG] = { "pm_config", TRACE_PM_CONFIG_1_1_BYTES, 0 },
	[TRACE_REC_PM_SAMPLE] = { "pm_sample", TRACE_PM_SAMPLE_1_1_BYTES, 0 },
	TYPE(TRACE_REC_NVTX_DOMAIN, trace_rec_nvtx_domain, 0, "nvtx_domain"),
	TYPE(TRACE_REC_NVTX_PUSH, trace_rec_nvtx_range, 1, "nvtx_push"),
	TYPE(TRACE_REC_NVTX_POP, trace_rec_nvtx_end, 1, "nvtx_pop"),
	TYPE(TRACE_REC_NVTX_START, trace_rec_nvtx_range, 1, "nvtx_start"),
	TYPE(TRACE_REC_NVTX_END, trace_rec_nvtx_end, 1, "nvtx_end"),
	TYPE(TRACE_REC_NVTX_MARK, trace_rec_nvtx_range, 1, "nvtx_mark"),
	TYPE(TRACE_REC_STACK, trace_rec_stack, 0, "stack"),
	TYPE(TRACE_REC_PC, trace_rec_pc, 0, "pc"),
	TYPE(TRACE_REC_CALL_STACK, trace_rec_call_stack, 1, "call_stack"),
};

uint16_t trace_record_min_size(uint16_t type)
{
	const struct trace_type *t = trace_type_get(type);

	return t ? t->min_size : 0;
}

const char *trace_record_type_name(uint16_t type)
{
	static char buf[32];
	const struct trace_type *t = trace_type_get(type);

	if (t)
		return t->name;
	snprintf(buf, sizeof(buf), "type %u", type);
	return buf;
}

int trace_record_is_thread(uint16_t type)
{
	const struct trace_type *t = trace_type_get(type);

	return t && t->is_thread;
}
