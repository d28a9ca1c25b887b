// SPDX-License-Identifier: MIT
/*
 * trace_fields.c - the field layout of each record type (trace_fields.h), the tables gpushim
 * dump prints records through. Offsets and sizes come from trace_format.h's structs; the kinds
 * say only how to show a value. Reads no records and prints nothing.
 */
#include "trace_fields.h"

#include "gpushim/trace_format.h"

/* Field @fld of struct @st, shown as TRACE_FIELD_@kind under its own name or @name. */
#define FN(st, fld, name, kind)                                                                    \
	{ name, (uint16_t)offsetof(struct st, fld), (uint8_t)sizeof(((struct st *)0)->fld),        \
	  TRACE_FIELD_##kind }
#define F(st, fld, kind) FN(st, fld, #fld, kind)
#define CALL_FIELDS(st)                                                                            \
	FN(st, call.dur, "dur", U), FN(st, call.result, "result", U),                              \
		FN(st, call.api, "api", API), FN(st, call.flags, "flags", X),                      \
		FN(st, call.seq, "seq", U)

static const struct trace_field f_string[] = {
	F(trace_rec_string, id, U),
	F(trace_rec_string, len, TEXT),
};
static const struct trace_field f_api_def[] = {
	F(trace_rec_api_def, api, U),
	F(trace_rec_api_def, family, U),
	F(trace_rec_api_def, flags, X),
	F(trace_rec_api_def, name, STR),
};
static const struct trace_field f_block[] = {
	F(trace_rec_block, tid, U),
	F(trace_rec_block, thread_index, U),
	F(trace_rec_block, base_ns, U),
};
static const struct trace_field f_time[] = {
	F(trace_rec_time, ts_ns, U),
};
static const struct trace_field f_lost[] = {
	F(trace_rec_lost, nr_records, U),
	F(trace_rec_lost, nr_bytes, U),
};
static const struct trace_field f_end[] = {
	F(trace_rec_end, nr_records, U),
	F(trace_rec_end, nr_lost, U),
	F(trace_rec_end, nr_chunks, U),
	F(trace_rec_end, end_ns, U),
	F(trace_rec_end, reason, U),
	F(trace_rec_end, nr_threads, U),
};
static const struct trace_field f_device[] = {
	F(trace_rec_device, ordinal, U),
	F(trace_rec_device, name, STR),
	F(trace_rec_device, total_bytes, U),
	F(trace_rec_device, sm_count, U),
	F(trace_rec_device, cc_major, U),
	F(trace_rec_device, cc_minor, U),
	F(trace_rec_device, max_threads_per_sm, U),
	F(trace_rec_device, max_blocks_per_sm, U),
	F(trace_rec_device, max_threads_per_block, U),
	F(trace_rec_device, regs_per_sm, U),
	F(trace_rec_device, smem_per_sm, U),
	F(trace_rec_device, clock_khz, U),
	F(trace_rec_device, mem_clock_khz, U),
	F(trace_rec_device, mem_bus_bits, U),
};
static const struct trace_field f_func[] = {
	F(trace_rec_func, handle, X),
	F(trace_rec_func, id, U),
	F(trace_rec_func, name, STR),
	F(trace_rec_func, kind, U),
	F(trace_rec_func, regs_per_thread, U),
	F(trace_rec_func, static_smem_bytes, U),
	F(trace_rec_func, max_threads_per_block, U),
	F(trace_rec_func, local_bytes_per_thread, U),
	F(trace_rec_func, have, X),
};
static const struct trace_field f_occupancy[] = {
	F(trace_rec_occupancy, func, U),
	F(trace_rec_occupancy, block_threads, U),
	F(trace_rec_occupancy, dyn_smem_bytes, U),
	F(trace_rec_occupancy, device, I),
	F(trace_rec_occupancy, max_blocks_per_sm, U),
	F(trace_rec_occupancy, result, U),
};
static const struct trace_field f_note[] = {
	F(trace_rec_note, ts_ns, U),
	F(trace_rec_note, kind, U),
	F(trace_rec_note, text, STR),
};
static const struct trace_field f_launch[] = {
	CALL_FIELDS(trace_rec_launch),
	F(trace_rec_launch, stream, X),
	F(trace_rec_launch, func, U),
	F(trace_rec_launch, dyn_smem_bytes, U),
	F(trace_rec_launch, grid, U32X3),
	F(trace_rec_launch, block, U16X3),
	F(trace_rec_launch, cluster, U16X3),
};
static const struct trace_field f_graph_launch[] = {
	CALL_FIELDS(trace_rec_graph_launch),
	F(trace_rec_graph_launch, stream, X),
	F(trace_rec_graph_launch, exec, X),
};
static const struct trace_field f_host_func[] = {
	CALL_FIELDS(trace_rec_host_func),
	F(trace_rec_host_func, stream, X),
	F(trace_rec_host_func, fn, X),
};
static const struct trace_field f_mem[] = {
	CALL_FIELDS(trace_rec_mem),
	F(trace_rec_mem, addr, X),
	F(trace_rec_mem, bytes, U),
	F(trace_rec_mem, stream, X),
	F(trace_rec_mem, aux, X),
	F(trace_rec_mem, kind, U),
	F(trace_rec_mem, op, U),
	F(trace_rec_mem, device, I),
};
static const struct trace_field f_copy[] = {
	CALL_FIELDS(trace_rec_copy),
	F(trace_rec_copy, dst, X),
	F(trace_rec_copy, src, X),
	F(trace_rec_copy, bytes, U),
	F(trace_rec_copy, stream, X),
	F(trace_rec_copy, dir, U),
	F(trace_rec_copy, shape, U),
	F(trace_rec_copy, count, U),
};
static const struct trace_field f_set[] = {
	CALL_FIELDS(trace_rec_set),
	F(trace_rec_set, dst, X),
	F(trace_rec_set, bytes, U),
	F(trace_rec_set, stream, X),
	F(trace_rec_set, value, X),
	F(trace_rec_set, elem_bytes, U),
};
static const struct trace_field f_sync[] = {
	CALL_FIELDS(trace_rec_sync),
	F(trace_rec_sync, target, X),
	F(trace_rec_sync, aux, X),
	F(trace_rec_sync, kind, U),
};
static const struct trace_field f_capture[] = {
	CALL_FIELDS(trace_rec_capture),
	F(trace_rec_capture, stream, X),
	F(trace_rec_capture, graph, X),
	F(trace_rec_capture, op, U),
	F(trace_rec_capture, mode, U),
};
static const struct trace_field f_graph[] = {
	CALL_FIELDS(trace_rec_graph),
	F(trace_rec_graph, exec, X),
	F(trace_rec_graph, graph, X),
	F(trace_rec_graph, stream, X),
	F(trace_rec_graph, op, U),
};
static const struct trace_field f_module[] = {
	CALL_FIELDS(trace_rec_module),
	F(trace_rec_module, handle, X),
	F(trace_rec_module, op, U),
	F(trace_rec_module, kind, U),
};
static const struct trace_field f_call[] = {
	CALL_FIELDS(trace_rec_call),
	F(trace_rec_call, arg0, X),
	F(trace_rec_call, arg1, X),
};
static const struct trace_field f_gpu_kernel[] = {
	F(trace_rec_gpu_kernel, start_ns, U),
	F(trace_rec_gpu_kernel, end_ns, U),
	F(trace_rec_gpu_kernel, graph_node, U),
	F(trace_rec_gpu_kernel, cupti_corr, U),
	F(trace_rec_gpu_kernel, device, U),
	F(trace_rec_gpu_kernel, context, U),
	F(trace_rec_gpu_kernel, stream, U),
	F(trace_rec_gpu_kernel, graph_id, U),
	F(trace_rec_gpu_kernel, name, STR),
	F(trace_rec_gpu_kernel, grid, U32X3),
	F(trace_rec_gpu_kernel, block, U16X3),
	F(trace_rec_gpu_kernel, regs_per_thread, U),
	F(trace_rec_gpu_kernel, static_smem_bytes, U),
	F(trace_rec_gpu_kernel, dyn_smem_bytes, U),
};
static const struct trace_field f_gpu_memcpy[] = {
	F(trace_rec_gpu_memcpy, start_ns, U),
	F(trace_rec_gpu_memcpy, end_ns, U),
	F(trace_rec_gpu_memcpy, bytes, U),
	F(trace_rec_gpu_memcpy, graph_node, U),
	F(trace_rec_gpu_memcpy, cupti_corr, U),
	F(trace_rec_gpu_memcpy, device, U),
	F(trace_rec_gpu_memcpy, context, U),
	F(trace_rec_gpu_memcpy, stream, U),
	F(trace_rec_gpu_memcpy, graph_id, U),
	F(trace_rec_gpu_memcpy, copy_kind, U),
	F(trace_rec_gpu_memcpy, src_kind, U),
	F(trace_rec_gpu_memcpy, dst_kind, U),
	F(trace_rec_gpu_memcpy, is_async, U),
	F(trace_rec_gpu_memcpy, src_device, U),
	F(trace_rec_gpu_memcpy, dst_device, U),
};
static const struct trace_field f_gpu_memset[] = {
	F(trace_rec_gpu_memset, start_ns, U),
	F(trace_rec_gpu_memset, end_ns, U),
	F(trace_rec_gpu_memset, bytes, U),
	F(trace_rec_gpu_memset, graph_node, U),
	F(trace_rec_gpu_memset, cupti_corr, U),
	F(trace_rec_gpu_memset, device, U),
	F(trace_rec_gpu_memset, context, U),
	F(trace_rec_gpu_memset, stream, U),
	F(trace_rec_gpu_memset, graph_id, U),
	F(trace_rec_gpu_memset, value, X),
	F(trace_rec_gpu_memset, mem_kind, U),
	F(trace_rec_gpu_memset, is_async, U),
};
static const struct trace_field f_gpu_info[] = {
	F(trace_rec_gpu_info, ts_ns, U),
	F(trace_rec_gpu_info, nr_records, U),
	F(trace_rec_gpu_info, nr_dropped, U),
	F(trace_rec_gpu_info, nr_zero_ts, U),
	F(trace_rec_gpu_info, nr_buffers, U),
	F(trace_rec_gpu_info, cupti_version, U),
	F(trace_rec_gpu_info, state, U),
};
static const struct trace_field f_gpu_corr[] = {
	F(trace_rec_gpu_corr, ext_id, X),
	F(trace_rec_gpu_corr, cupti_corr, U),
};
static const struct trace_field f_gpu_api[] = {
	F(trace_rec_gpu_api, start_ns, U),
	F(trace_rec_gpu_api, end_ns, U),
	F(trace_rec_gpu_api, cupti_corr, U),
	F(trace_rec_gpu_api, tid, U),
	F(trace_rec_gpu_api, cbid, U),
	F(trace_rec_gpu_api, domain, U),
};

static const struct trace_field f_pm_config[] = {
	F(trace_rec_pm_config, device, U),
	F(trace_rec_pm_config, chip, STR),
	F(trace_rec_pm_config, interval_ns, U),
	FN(trace_rec_pm_config, metric[TRACE_PM_SM_ACTIVE], "sm_active", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_DRAM], "dram", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_TENSOR], "tensor", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_GR_ACTIVE], "gr_active", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_SM_THROUGHPUT], "sm_throughput", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_L2], "l2", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_ISSUE], "issue", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_FMA], "fma", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_ALU], "alu", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_XU], "xu", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_FP64], "fp64", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_LSU], "lsu", STR),
	FN(trace_rec_pm_config, metric[TRACE_PM_WARPS], "warps", STR),
};
static const struct trace_field f_pm_sample[] = {
	F(trace_rec_pm_sample, device, U),
	F(trace_rec_pm_sample, flags, X),
	F(trace_rec_pm_sample, start_ns, U),
	F(trace_rec_pm_sample, end_ns, U),
	FN(trace_rec_pm_sample, value[TRACE_PM_SM_ACTIVE], "sm_active", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_DRAM], "dram", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_TENSOR], "tensor", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_GR_ACTIVE], "gr_active", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_SM_THROUGHPUT], "sm_throughput", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_L2], "l2", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_ISSUE], "issue", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_FMA], "fma", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_ALU], "alu", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_XU], "xu", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_FP64], "fp64", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_LSU], "lsu", F32),
	FN(trace_rec_pm_sample, value[TRACE_PM_WARPS], "warps", F32),
};
static const struct trace_field f_nvtx_domain[] = {
	F(trace_rec_nvtx_domain, id, U),
	F(trace_rec_nvtx_domain, name, STR),
};
/* PUSH, START and MARK */
static const struct trace_field f_nvtx_range[] = {
	F(trace_rec_nvtx_range, domain, U),
	F(trace_rec_nvtx_range, name, STR),
	F(trace_rec_nvtx_range, category, U),
	F(trace_rec_nvtx_range, color, X),
	F(trace_rec_nvtx_range, id, U),
	F(trace_rec_nvtx_range, flags, X),
};
/* POP (id: the domain) and END (id: the range) */
static const struct trace_field f_nvtx_end[] = {
	F(trace_rec_nvtx_end, id, U),
};

static const struct trace_field f_stack[] = {
	F(trace_rec_stack, id, U),
	F(trace_rec_stack, nr_native, U),
	F(trace_rec_stack, nr_python, U),
	F(trace_rec_stack, flags, X),
	{ "frames", sizeof(struct trace_rec_stack), 0, TRACE_FIELD_FRAMES },
};
static const struct trace_field f_pc[] = {
	F(trace_rec_pc, pc, X),
	F(trace_rec_pc, offset, X),
	F(trace_rec_pc, module, STR),
	F(trace_rec_pc, build_id, STR),
	F(trace_rec_pc, symbol, STR),
	F(trace_rec_pc, sym_offset, X),
};
static const struct trace_field f_call_stack[] = {
	F(trace_rec_call_stack, stack, STACK),
	F(trace_rec_call_stack, api, API),
	F(trace_rec_call_stack, why, U),
	F(trace_rec_call_stack, seq, U),
};

#define FIELDS(t, arr)                                                                             \
	case t:                                                                                    \
		*n = sizeof(arr) / sizeof(arr[0]);                                                 \
		return arr

const struct trace_field *trace_record_fields(uint16_t type, size_t *n)
{
	switch (type) {
		FIELDS(TRACE_REC_STRING, f_string);
		FIELDS(TRACE_REC_API_DEF, f_api_def);
		FIELDS(TRACE_REC_BLOCK, f_block);
		FIELDS(TRACE_REC_TIME, f_time);
		FIELDS(TRACE_REC_LOST, f_lost);
		FIELDS(TRACE_REC_END, f_end);
		FIELDS(TRACE_REC_DEVICE, f_device);
		FIELDS(TRACE_REC_FUNC, f_func);
		FIELDS(TRACE_REC_OCCUPANCY, f_occupancy);
		FIELDS(TRACE_REC_NOTE, f_note);
		FIELDS(TRACE_REC_LAUNCH, f_launch);
		FIELDS(TRACE_REC_GRAPH_LAUNCH, f_graph_launch);
		FIELDS(TRACE_REC_HOST_FUNC, f_host_func);
		FIELDS(TRACE_REC_MEM, f_mem);
		FIELDS(TRACE_REC_COPY, f_copy);
		FIELDS(TRACE_REC_SET, f_set);
		FIELDS(TRACE_REC_SYNC, f_sync);
		FIELDS(TRACE_REC_CAPTURE, f_capture);
		FIELDS(TRACE_REC_GRAPH, f_graph);
		FIELDS(TRACE_REC_MODULE, f_module);
		FIELDS(TRACE_REC_CALL, f_call);
		FIELDS(TRACE_REC_GPU_KERNEL, f_gpu_kernel);
		FIELDS(TRACE_REC_GPU_MEMCPY, f_gpu_memcpy);
		FIELDS(TRACE_REC_GPU_MEMSET, f_gpu_memset);
		FIELDS(TRACE_REC_PM_CONFIG, f_pm_config);
		FIELDS(TRACE_REC_PM_SAMPLE, f_pm_sample);
		FIELDS(TRACE_REC_GPU_INFO, f_gpu_info);
		FIELDS(TRACE_REC_GPU_CORR, f_gpu_corr);
		FIELDS(TRACE_REC_GPU_API, f_gpu_api);
		FIELDS(TRACE_REC_NVTX_DOMAIN, f_nvtx_domain);
		FIELDS(TRACE_REC_NVTX_PUSH, f_nvtx_range);
		FIELDS(TRACE_REC_NVTX_START, f_nvtx_range);
		FIELDS(TRACE_REC_NVTX_MARK, f_nvtx_range);
		FIELDS(TRACE_REC_NVTX_POP, f_nvtx_end);
		FIELDS(TRACE_REC_NVTX_END, f_nvtx_end);
		FIELDS(TRACE_REC_STACK, f_stack);
		FIELDS(TRACE_REC_PC, f_pc);
		FIELDS(TRACE_REC_CALL_STACK, f_call_stack);
	default:
		*n = 0;
		return NULL;
	}
}
