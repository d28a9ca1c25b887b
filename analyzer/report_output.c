// SPDX-License-Identifier: MIT
/*
 * report_output.c - text and JSON renderings of a report. Deterministic: every list is already
 * sorted by stats; numbers have fixed precision. Strings from the trace are escaped (JSON) or
 * cleaned of control characters (text).
 */
#include "report_output.h"

#include <string.h>

#include "output.h"

static const char *family_name(uint8_t f)
{
	switch (f) {
	case TRACE_FAM_INIT:
		return "init";
	case TRACE_FAM_LAUNCH:
		return "launch";
	case TRACE_FAM_MEMORY:
		return "memory";
	case TRACE_FAM_COPY:
		return "copy";
	case TRACE_FAM_SET:
		return "set";
	case TRACE_FAM_SYNC:
		return "sync";
	case TRACE_FAM_CAPTURE:
		return "capture";
	case TRACE_FAM_MODULE:
		return "module";
	default:
		return "other";
	}
}

static const char *mem_kind_name(uint8_t k)
{
	static const char *const names[] = { "?",	 "device",   "pitch",	      "managed",
					     "async",	 "pool",     "host",	      "host_register",
					     "vmm",	 "vmm_va",   "vmm_map",	      "vmm_access" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

static const char *device_name(const struct model *m, int dev)
{
	const struct trace_rec_device *d = model_device(m, dev);

	return d ? model_string(m, d->name, "?") : "?";
}

/* ---- Text ---- */

#define TOP_KERNELS 15
#define TOP_APIS 15
#define TOP_ALLOCS 8

static void text_header(FILE *f, const struct model *m)
{
	fprintf(f, "# gpushim report: ");
	print_clean(f, m->path, 400);
	fprintf(f, "\n# command: ");
	print_clean(f, m->cmdline, 400);
	fprintf(f, "\n# pid %u on ", m->pid);
	print_clean(f, m->host, 100);
	fprintf(f, ", shim %s, trace format %u.%u, %s", m->shim_version, m->version_major,
		m->version_minor,
		m->is_complete ? "complete" : "TRUNCATED (partial results)");
	if (m->lost_records)
		fprintf(f, ", %llu records LOST", (unsigned long long)m->lost_records);
	fprintf(f, "\n");
}

static void text_summary(FILE *f, const struct model *m, const struct stats *s)
{
	const struct s_counts *n = &s->counts;
	char span[32], launches[32], failed[32], syncs[32], copies[32], bytes[32], sets[32];
	char allocs[32], frees[32], a[32], b[32], c[32];

	fprintf(f,
		"\nspan %s: %s launches (%s failed), %s syncs, %s copies (%s), %s sets, "
		"%s allocations, %s frees\n",
		fmt_ns(span, sizeof(span), s->span_ns), fmt_count(launches, 32, n->launches),
		fmt_count(failed, 32, n->launch_errors), fmt_count(syncs, 32, n->syncs),
		fmt_count(copies, 32, n->memcpys), fmt_bytes(bytes, 32, n->memcpy_bytes),
		fmt_count(sets, 32, n->memsets), fmt_count(allocs, 32, n->allocs),
		fmt_count(frees, 32, n->frees));
	if (s->gpu.has_cupti)
		fprintf(f,
			"gpu  busy %.1f%% of the span (what nvidia-smi calls utilization), "
			"SM fill %.1f%%; kernels %s, copies %s, idle %s\n",
			s->gpu.busy_pct, s->gpu.fill_pct, fmt_ns(a, sizeof(a), s->gpu.kernel_ns),
			fmt_ns(b, sizeof(b), s->gpu.memcpy_ns), fmt_ns(c, sizeof(c), s->gpu.idle_ns));
	else
		fprintf(f, "gpu  unknown: no GPU timestamps in this trace (host timestamps only)\n");
	fprintf(f, "mem  peak %s", fmt_bytes(a, sizeof(a), s->mem.peak_bytes));
	if (s->mem.device_total_bytes)
		fprintf(f, " of %s (%.1f%%) on device %d (%s)",
			fmt_bytes(b, sizeof(b), s->mem.device_total_bytes), s->mem.peak_pct,
			s->mem.peak_device, device_name(m, s->mem.peak_device));
	fprintf(f, "\n");
}

static void text_kernels(FILE *f, const struct stats *s)
{
	char a[32], b[32], c[32];
	size_t i;

	if (!s->nr_kernels)
		return;
	fprintf(f, "\nkernels (by GPU time)\n");
	fprintf(f, "  %10s %10s %10s %6s  %-18s %s\n", "launches", "gpu time", "mean", "fill",
		"grid/block", "name");
	for (i = 0; i < s->nr_kernels && i < TOP_KERNELS; i++) {
		const struct s_kernel *k = &s->kernels[i];
		char shape[48], fill[16];

		snprintf(shape, sizeof(shape), "%u,%u,%u/%u,%u,%u", k->grid_first[0],
			 k->grid_first[1], k->grid_first[2], k->block_first[0], k->block_first[1],
			 k->block_first[2]);
		if (k->fill >= 0)
			snprintf(fill, sizeof(fill), "%.0f%%%s", 100 * k->fill,
				 k->fill_is_estimate ? "~" : "");
		else
			snprintf(fill, sizeof(fill), "-");
		fprintf(f, "  %10s %10s %10s %6s  %-18s ", fmt_count(a, sizeof(a), k->launches),
			k->gpu_count ? fmt_ns(b, sizeof(b), k->gpu_total_ns) : "-",
			k->gpu_count ? fmt_ns(c, sizeof(c), k->gpu_total_ns / k->gpu_count) : "-",
			fill, k->launches ? shape : "(graph)");
		print_clean(f, k->name, 90);
		fprintf(f, "\n");
	}
	if (s->nr_kernels > TOP_KERNELS)
		fprintf(f, "  ... %zu more\n", s->nr_kernels - TOP_KERNELS);
}

static void text_apis(FILE *f, const struct stats *s)
{
	char a[32], b[32], c[32];
	size_t i;

	if (!s->nr_apis)
		return;
	fprintf(f, "\nAPI calls (by host time)\n");
	fprintf(f, "  %10s %10s %10s %8s  %s\n", "calls", "total", "max", "errors", "entry point");
	for (i = 0; i < s->nr_apis && i < TOP_APIS; i++) {
		const struct s_api *p = &s->apis[i];

		fprintf(f, "  %10s %10s %10s %8llu  %s\n", fmt_count(a, sizeof(a), p->calls),
			fmt_ns(b, sizeof(b), p->total_ns), fmt_ns(c, sizeof(c), p->max_ns),
			(unsigned long long)p->errors, p->name);
	}
	if (s->nr_apis > TOP_APIS)
		fprintf(f, "  ... %zu more\n", s->nr_apis - TOP_APIS);
}

static void text_memory(FILE *f, const struct model *m, const struct stats *s)
{
	char a[32], b[32];
	size_t i;

	if (!s->mem.nr_allocs)
		return;
	fprintf(f, "\nmemory: %zu device allocations, %s allocated in total, %s live at the end\n",
		s->mem.nr_allocs, fmt_bytes(a, sizeof(a), s->mem.alloc_bytes_total),
		fmt_bytes(b, sizeof(b), s->mem.final_bytes));
	if (s->mem.nr_live_at_peak) {
		fprintf(f, "  live at the peak (+%s):\n",
			fmt_ns(a, sizeof(a), s->mem.peak_ts - s->span_start));
		for (i = 0; i < s->mem.nr_live_at_peak && i < TOP_ALLOCS; i++) {
			const struct s_alloc *al = &s->mem.allocs[s->mem.live_at_peak[i]];

			fprintf(f, "  %12s  %-8s device %d  %s\n", fmt_bytes(a, sizeof(a), al->bytes),
				mem_kind_name(al->kind), al->device, model_api_name(m, al->api));
		}
		if (s->mem.nr_live_at_peak > TOP_ALLOCS)
			fprintf(f, "  ... %zu more\n", s->mem.nr_live_at_peak - TOP_ALLOCS);
	}
}

void report_print_text(FILE *f, const struct model *m, const struct stats *s, int has_header)
{
	if (has_header)
		text_header(f, m);
	text_summary(f, m, s);
	text_kernels(f, s);
	text_apis(f, s);
	text_memory(f, m, s);
}

/* ---- JSON ---- */

static void json_pct(struct json *j, const char *key, double v)
{
	if (v < 0)
		json_null(j, key);
	else
		json_double(j, key, v, 2);
}

void report_json_members(struct json *j, const struct model *m, const struct stats *s)
{
	const struct s_counts *n = &s->counts;
	char v[64];
	size_t i;

	json_object_begin(j, "trace");
	json_str(j, "path", m->path);
	json_u64(j, "pid", m->pid);
	json_u64(j, "ppid", m->ppid);
	json_str(j, "host", m->host);
	json_i64(j, "rank", m->rank);
	json_str(j, "command", m->cmdline);
	json_str(j, "shim_version", m->shim_version);
	snprintf(v, sizeof(v), "%u.%u", m->version_major, m->version_minor);
	json_str(j, "format_version", v);
	json_bool(j, "complete", m->is_complete);
	json_u64(j, "lost_records", m->lost_records);
	json_u64(j, "records", m->nr_records);
	json_u64(j, "chunks", m->nr_chunks);
	json_object_end(j);

	json_u64(j, "span_ns", s->span_ns);

	json_array_begin(j, "devices");
	for (i = 0; i < m->nr_devices; i++) {
		const struct trace_rec_device *d = &m->devices[i];

		json_object_begin(j, NULL);
		json_u64(j, "ordinal", d->ordinal);
		json_str(j, "name", model_string(m, d->name, NULL));
		json_u64(j, "sm_count", d->sm_count);
		json_u64(j, "total_bytes", d->total_bytes);
		json_object_end(j);
	}
	json_array_end(j);

	json_object_begin(j, "counts");
	json_u64(j, "launches", n->launches);
	json_u64(j, "kernel_launches", n->kernel_launches);
	json_u64(j, "graph_launches", n->graph_launches);
	json_u64(j, "host_funcs", n->host_funcs);
	json_u64(j, "launch_errors", n->launch_errors);
	json_u64(j, "captured_launches", n->captured_launches);
	json_u64(j, "syncs", n->syncs);
	json_u64(j, "ctx_syncs", n->ctx_syncs);
	json_u64(j, "stream_syncs", n->stream_syncs);
	json_u64(j, "event_syncs", n->event_syncs);
	json_u64(j, "queries", n->queries);
	json_u64(j, "stream_waits", n->stream_waits);
	json_u64(j, "event_records", n->event_records);
	json_u64(j, "allocs", n->allocs);
	json_u64(j, "frees", n->frees);
	json_u64(j, "alloc_errors", n->alloc_errors);
	json_u64(j, "host_allocs", n->host_allocs);
	json_u64(j, "host_frees", n->host_frees);
	json_u64(j, "memcpys", n->memcpys);
	json_u64(j, "memcpy_bytes", n->memcpy_bytes);
	json_u64(j, "memsets", n->memsets);
	json_u64(j, "memset_bytes", n->memset_bytes);
	json_u64(j, "calls", n->calls);
	json_u64(j, "errors", n->errors);
	json_object_end(j);

	json_array_begin(j, "api");
	for (i = 0; i < s->nr_apis; i++) {
		const struct s_api *p = &s->apis[i];

		json_object_begin(j, NULL);
		json_str(j, "name", p->name);
		json_str(j, "family", family_name(p->family));
		json_u64(j, "calls", p->calls);
		json_u64(j, "total_ns", p->total_ns);
		json_u64(j, "max_ns", p->max_ns);
		json_u64(j, "errors", p->errors);
		json_object_end(j);
	}
	json_array_end(j);

	json_object_begin(j, "memory");
	json_u64(j, "peak_bytes", s->mem.peak_bytes);
	json_u64(j, "peak_at_ns", s->mem.peak_bytes ? s->mem.peak_ts - s->span_start : 0);
	if (s->mem.device_total_bytes)
		json_u64(j, "device_total_bytes", s->mem.device_total_bytes);
	else
		json_null(j, "device_total_bytes");
	json_pct(j, "peak_pct", s->mem.peak_pct);
	json_i64(j, "peak_device", s->mem.peak_device);
	json_u64(j, "final_bytes", s->mem.final_bytes);
	json_u64(j, "allocations", s->mem.nr_allocs);
	json_u64(j, "allocated_bytes_total", s->mem.alloc_bytes_total);
	json_u64(j, "alloc_call_ns", s->mem.alloc_ns);
	json_u64(j, "unmatched_frees", s->mem.unmatched_frees);
	json_array_begin(j, "devices");
	for (i = 0; i < s->mem.nr_devices; i++) {
		const struct s_device_mem *d = &s->mem.devices[i];

		json_object_begin(j, NULL);
		json_i64(j, "device", d->device);
		json_u64(j, "peak_bytes", d->peak_bytes);
		json_u64(j, "total_bytes", d->total_bytes);
		json_pct(j, "peak_pct", d->peak_pct);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "live_at_peak");
	for (i = 0; i < s->mem.nr_live_at_peak && i < 20; i++) {
		const struct s_alloc *al = &s->mem.allocs[s->mem.live_at_peak[i]];

		json_object_begin(j, NULL);
		json_u64(j, "bytes", al->bytes);
		json_str(j, "kind", mem_kind_name(al->kind));
		json_str(j, "api", model_api_name(m, al->api));
		json_i64(j, "device", al->device);
		json_u64(j, "allocated_at_ns", al->t_alloc - s->span_start);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);

	json_object_begin(j, "gpu");
	json_str(j, "source", s->gpu.has_cupti ? "cupti" : "host");
	if (s->gpu.has_cupti) {
		json_double(j, "busy_pct", s->gpu.busy_pct, 2);
		json_double(j, "fill_pct", s->gpu.fill_pct, 2);
		json_u64(j, "busy_ns", s->gpu.busy_ns);
		json_u64(j, "kernel_ns", s->gpu.kernel_ns);
		json_u64(j, "memcpy_ns", s->gpu.memcpy_ns);
		json_u64(j, "memset_ns", s->gpu.memset_ns);
		json_u64(j, "idle_ns", s->gpu.idle_ns);
	} else {
		json_null(j, "busy_pct");
		json_null(j, "fill_pct");
		json_null(j, "busy_ns");
		json_null(j, "kernel_ns");
		json_null(j, "memcpy_ns");
		json_null(j, "memset_ns");
		json_null(j, "idle_ns");
	}
	json_u64(j, "kernels", s->gpu.nr_kernels);
	json_u64(j, "memcpys", s->gpu.nr_memcpys);
	json_u64(j, "memsets", s->gpu.nr_memsets);
	json_u64(j, "joined", s->gpu.joined);
	json_u64(j, "unjoined", s->gpu.unjoined);
	json_object_begin(j, "join");
	json_u64(j, "by_correlation", m->gpu_joined_by_corr);
	json_u64(j, "by_api_interval", m->gpu_joined_by_api);
	json_u64(j, "graph_ops", m->gpu_graph_ops);
	json_u64(j, "graph_ops_to_graph_launch", m->gpu_graph_ops_to_launch);
	json_object_end(j);
	json_u64(j, "dropped", m->gpu_dropped);
	json_u64(j, "zero_timestamps", m->gpu_zero_ts);
	json_u64(j, "host_only_ns", s->gpu.host_only_ns);
	json_array_begin(j, "devices");
	for (i = 0; i < s->gpu.nr_devices; i++) {
		const struct s_gpu_device *d = &s->gpu.devices[i];

		json_object_begin(j, NULL);
		json_i64(j, "device", d->device);
		json_u64(j, "busy_ns", d->busy_ns);
		json_u64(j, "kernel_ns", d->kernel_ns);
		json_u64(j, "memcpy_ns", d->memcpy_ns);
		json_u64(j, "memset_ns", d->memset_ns);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);

	json_array_begin(j, "kernels");
	for (i = 0; i < s->nr_kernels; i++) {
		const struct s_kernel *k = &s->kernels[i];
		int d;

		json_object_begin(j, NULL);
		json_str(j, "name", k->name);
		json_u64(j, "launches", k->launches);
		json_u64(j, "launch_errors", k->launch_errors);
		json_u64(j, "captured", k->captured);
		json_array_begin(j, "grid");
		for (d = 0; d < 3; d++)
			json_u64(j, NULL, k->grid_first[d]);
		json_array_end(j);
		json_array_begin(j, "block");
		for (d = 0; d < 3; d++)
			json_u64(j, NULL, k->block_first[d]);
		json_array_end(j);
		json_u64(j, "shapes", k->nr_shapes);
		json_double(j, "mean_blocks",
			    k->launches ? (double)k->blocks_total / (double)k->launches : 0, 1);
		json_u64(j, "gpu_count", k->gpu_count);
		json_u64(j, "from_graphs", k->from_graphs);
		if (k->gpu_count) {
			json_u64(j, "total_ns", k->gpu_total_ns);
			json_u64(j, "mean_ns", k->gpu_total_ns / k->gpu_count);
			json_u64(j, "min_ns", k->gpu_min_ns);
			json_u64(j, "max_ns", k->gpu_max_ns);
			json_u64(j, "p50_ns", k->gpu_p50_ns);
			json_u64(j, "p99_ns", k->gpu_p99_ns);
		} else {
			json_null(j, "total_ns");
			json_null(j, "mean_ns");
			json_null(j, "min_ns");
			json_null(j, "max_ns");
			json_null(j, "p50_ns");
			json_null(j, "p99_ns");
		}
		if (k->fill >= 0)
			json_double(j, "fill", k->fill, 4);
		else
			json_null(j, "fill");
		json_bool(j, "fill_estimated", k->fill_is_estimate);
		json_object_end(j);
	}
	json_array_end(j);
}
