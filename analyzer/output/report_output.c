// SPDX-License-Identifier: MIT
/*
 * report_output.c - text and JSON renderings of a report. Deterministic: every list is already
 * sorted by stats; numbers have fixed precision. Strings from the trace are escaped (JSON) or
 * cleaned of control characters (text).
 */
#include "report_output.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "analysis/job.h"
#include "analysis/where.h"
#include "util/demangle.h"
#include "util/util.h"

const char *report_api_family(uint8_t f)
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

const char *report_mem_kind(uint8_t k)
{
	static const char *const names[] = { "?",	 "device",   "pitch",	      "managed",
					     "async",	 "pool",     "host",	      "host_register",
					     "vmm",	 "vmm_va",   "vmm_map",	      "vmm_access" };

	return k < sizeof(names) / sizeof(names[0]) ? names[k] : "?";
}

const char *report_device_name(const struct model *m, int dev)
{
	const struct trace_rec_device *d = model_device(m, dev);

	return d ? model_string(m, d->name, "?") : "?";
}

/* ---- Text ---- */

/* The tables' rows by default: a first screen's worth each; --top N or --all show more. */
#define TOP_KERNELS 15
#define TOP_APIS 15
#define TOP_ALLOCS 8
#define SITES_SHOWN 3		/* a cause's */

/* A kernel's class from its counters, as the kernel tables print it: "(mixed)", "compute",
 * "memory dram", ... (stats_kernel_bound). */
const char *report_kernel_bound(char *buf, size_t n, const struct s_kernel *k)
{
	int unit, cls = stats_kernel_bound(k, &unit);

	if (cls < 0)
		snprintf(buf, n, "(mixed)");
	else if (cls && unit >= 0)
		snprintf(buf, n, "%s %s", pm_class_name(cls), pm_unit_text(unit));
	else
		snprintf(buf, n, "%s", pm_class_name(cls));
	return buf;
}

/* The rows a table of @nr shows: at most @top (REPORT_TOP_DEFAULT: @dflt). */
size_t report_table_rows(size_t nr, size_t top, size_t dflt)
{
	size_t max = top == REPORT_TOP_DEFAULT ? dflt : top;

	return nr < max ? nr : max;
}

/* How much of the communication kernels' time other kernels overlapped, in percent. */
static double comm_overlap_pct(const struct s_gpu *g)
{
	return g->comm_ns ? 100.0 * (double)g->comm_overlap_ns / (double)g->comm_ns : 0.0;
}

/* ---- Where in the program (call stacks, 1.9) ---- */

int report_where(const struct model *m, uint32_t stack, char *buf, size_t len, char *src,
		 size_t src_len)
{
	struct where w;

	if (src && src_len)
		src[0] = 0;
	if (where_of(m, stack, &w) < 0) {
		if (len)
			buf[0] = 0;
		return 0;
	}
	if (w.is_python) {
		if (w.line >= 0)
			snprintf(buf, len, "%s:%d in %s", w.file, (int)w.line, w.func);
		else
			snprintf(buf, len, "%s in %s", w.file, w.func);
		if (src && where_source_line(w.file, w.line, src, src_len) < 0)
			src[0] = 0;
	} else {
		where_native_name(&w, buf, len);
	}
	return w.is_user;
}

/* The frames of STACK @stack: "python" and "native" arrays, innermost first. */
static void json_frames(struct json *j, const struct model *m, uint32_t stack)
{
	const struct m_stack *st = model_stack(m, stack);
	unsigned i;

	json_array_begin(j, "python");
	for (i = 0; st && i < st->nr_py; i++) {
		const struct trace_stack_py *py = &m->stack_py[st->py + i];
		const char *file = model_string(m, py->file, NULL);

		json_object_begin(j, NULL);
		json_str(j, "file", file);
		json_str(j, "function", model_string(m, py->func, NULL));
		if (py->line >= 0)
			json_i64(j, "line", py->line);
		else
			json_null(j, "line");
		json_bool(j, "user", where_is_user_file(file));
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "native");
	for (i = 0; st && i < st->nr_native; i++) {
		const uint64_t pc = m->stack_pcs[st->pcs + i];
		const struct m_pc *p = model_pc(m, pc);
		const char *mod = p && p->module ? model_string(m, p->module, NULL) : NULL;
		const char *sym;
		uint64_t sym_off;

		json_object_begin(j, NULL);
		json_u64(j, "pc", pc);
		json_str(j, "module", mod);
		if (p && p->module)
			json_u64(j, "offset", p->offset);
		else
			json_null(j, "offset");
		json_str(j, "build_id", p && p->build_id ? model_string(m, p->build_id, NULL) : NULL);
		if (where_native_symbol(m, pc, &sym, &sym_off) == 0) {
			json_name(j, "symbol", "symbol_mangled", sym);
			json_u64(j, "symbol_offset", sym_off);
		} else {
			json_null(j, "symbol");
			json_null(j, "symbol_mangled");
			json_null(j, "symbol_offset");
		}
		json_bool(j, "user", where_is_user_module(mod));
		json_object_end(j);
	}
	json_array_end(j);
}

/* "where": the frame report_where names, as an object; null without a stack. */
static void json_where_of(struct json *j, const char *key, const struct model *m, uint32_t stack)
{
	char buf[512], src[256];
	struct where w;

	if (where_of(m, stack, &w) < 0) {
		json_null(j, key);
		return;
	}
	json_object_begin(j, key);
	report_where(m, stack, buf, sizeof(buf), src, sizeof(src));
	json_str(j, "text", buf);
	json_bool(j, "user", w.is_user);
	json_str(j, "language", w.is_python ? "python" : "native");
	if (w.is_python) {
		json_str(j, "file", w.file);
		if (w.line >= 0)
			json_i64(j, "line", w.line);
		else
			json_null(j, "line");
		json_str(j, "function", w.func);
		json_str(j, "source", src[0] ? src : NULL);
	} else {
		json_u64(j, "pc", w.pc);
		json_str(j, "module", w.module);
		json_name(j, "symbol", "symbol_mangled", w.symbol);
	}
	json_object_end(j);
}

void report_json_where(struct json *j, const struct model *m, uint32_t stack, uint32_t from)
{
	json_where_of(j, "where", m, stack);
	json_frames(j, m, stack);
	if (from)
		json_where_of(j, "from", m, from);
}

/* The table's last line when rows were left out: how many. */
static void table_more(FILE *f, size_t nr, size_t shown)
{
	if (nr > shown)
		fprintf(f, "  ... %zu more\n", nr - shown);
}

static void names_add(struct report_names *tn, const char *name)
{
	size_t i;

	if (!name)
		return;
	for (i = 0; i < tn->n; i++)
		if (!strcmp(tn->names[i], name))
			return;
	XGROW(tn->names, tn->cap, tn->n + 1);
	tn->names[tn->n++] = name;
}

void report_names_build(struct report_names *tn, const struct stats *s,
			     const struct findings *fd, size_t width, size_t top)
{
	size_t i, nr_rows = report_table_rows(s->nr_kernels, top, TOP_KERNELS);
	int r, k;

	memset(tn, 0, sizeof(*tn));
	if (s->loop.found.source == STEPS_AUTO)
		names_add(tn, s->loop.name);
	for (r = 0; r < fd->nr_ranked; r++) {
		const struct f_cause *c = &fd->causes[fd->ranked[r]];

		for (k = 0; k < c->nr_sites && k < SITES_SHOWN; k++) {
			names_add(tn, c->sites[k].what);
			names_add(tn, c->sites[k].after);
		}
	}
	for (i = 0; i < nr_rows; i++)
		names_add(tn, s->kernels[i].name);
	tn->forms = name_table(tn->names, tn->n, width);
}

/* @name as the report prints it (cleaned and whole by the caller). */
const char *report_name(const struct report_names *tn, const char *name)
{
	size_t i;

	for (i = 0; i < tn->n; i++)
		if (!strcmp(tn->names[i], name))
			return tn->forms[i];
	return name;
}

void report_names_free(struct report_names *tn)
{
	demangle_names_free(tn->forms, tn->n);
	free(tn->names);
}

static void text_header(FILE *f, const struct model *m)
{
	fprintf(f, "# gpushim report: ");
	print_clean(f, m->path, 400);
	fprintf(f, "\n# command: ");
	print_clean(f, m->cmdline, 400);
	fprintf(f, "\n# pid %u on ", m->pid);
	print_clean(f, m->host, 100);
	fprintf(f, ", shim ");
	print_clean(f, m->shim_version, 100);
	fprintf(f, ", trace format %u.%u, %s", m->version_major, m->version_minor,
		m->is_complete ? "complete" : "TRUNCATED (partial results)");
	if (m->end_reason == TRACE_END_SIGNAL || m->end_reason == TRACE_END_EXEC) {
		const char *detail = model_end_detail(m);

		fprintf(f, " (ended by %s%s", model_end_reason(m), detail ? ": " : "");
		if (detail)
			print_clean(f, detail, 200);
		fprintf(f, ")");
	}
	if (m->lost_records)
		fprintf(f, ", %llu records LOST", (unsigned long long)m->lost_records);
	fprintf(f, "\n");
}

/* Hardware counters: the seed's middle two numbers (SM activity, DRAM bandwidth). */
void report_print_counters(FILE *f, const struct findings *fd)
{
	const struct counters *c = &fd->ctr;

	if (!c->has) {
		fprintf(f, "  counters unknown: ");
		print_clean(f, c->absent ? c->absent : "no hardware counters", 200);
		fprintf(f, "\n");
		return;
	}
	fprintf(f, "  counters SM active %.1f%%, DRAM bandwidth %.1f%% of peak, SM throughput %.1f%%, "
		   "tensor %.1f%% (PM sampling on ",
		c->mean[TRACE_PM_SM_ACTIVE], c->mean[TRACE_PM_DRAM], c->mean[TRACE_PM_SM_THROUGHPUT],
		c->mean[TRACE_PM_TENSOR]);
	print_clean(f, c->chip ? c->chip : "?", 16);
	fprintf(f, ", %llu samples of %.0f us covering %.0f%% of the window%s)\n",
		(unsigned long long)c->nr_samples, (double)c->interval_ns / 1e3, c->coverage_pct,
		c->nr_overflow ? ", some lost" : "");
}

/*
 * What the analysis left out, as one sentence into @buf; NULL when nothing: the run's
 * stretches without GPU timestamps (the application's profiler held CUPTI).
 */
const char *report_left_out(char *buf, size_t n, const struct stats *s,
			    const struct findings *fd)
{
	char a[32], b[32], c[32], d[32];
	int len;

	if (!s->gpu.host_only_ns && !s->gpu.host_only_launches)
		return NULL;
	if (fd->sampling.is_sampled) {
		const struct f_sampling *sp = &fd->sampling;

		len = snprintf(buf, n, "sampled: GPU timestamps in %llu windows",
			       (unsigned long long)sp->nr_windows);
		if (sp->window_ms && len > 0 && (size_t)len < n)
			len += snprintf(buf + len, n - (size_t)len, " (%u ms every %u ms)",
					sp->window_ms, sp->every_ms);
		if (len > 0 && (size_t)len < n)
			snprintf(buf + len, n - (size_t)len,
				 ", %s of the %s window (%.1f%%); %s launches between windows have "
				 "none: shares and savings are measured in the windows and extrapolated",
				 fmt_ns(a, sizeof(a), sp->covered_ns), fmt_ns(b, sizeof(b), sp->span_ns),
				 sp->covered_pct, fmt_count(c, sizeof(c), s->gpu.host_only_launches));
		return buf;
	}
	len = snprintf(buf, n,
		       "GPU timestamps for %s of %s; %s launches while the application's CUPTI "
		       "client held CUPTI are left out",
		       fmt_ns(a, sizeof(a), s->span_ns - s->gpu.host_only_ns),
		       fmt_ns(b, sizeof(b), s->span_ns),
		       fmt_count(c, sizeof(c), s->gpu.host_only_launches));
	if (fd->excluded_ns && len > 0 && (size_t)len < n)
		snprintf(buf + len, n - (size_t)len, ", with the %s of idle GPU time around them",
			 fmt_ns(d, sizeof(d), fd->excluded_ns));
	return buf;
}

static void text_signals(FILE *f, const struct model *m, const struct stats *s,
			 const struct findings *fd)
{
	char a[32], b[32], c[32], line[256];

	fprintf(f, "\nverdict: ");
	print_clean(f, fd->summary, sizeof(fd->summary));
	fprintf(f, "\n\n");
	if (s->mem.peak_pct < 0 && !s->mem.nr_allocs) {
		fprintf(f, "  memory   no device allocation recorded (memory allocated before "
			   "the shim was loaded is not seen)\n");
	} else if (s->mem.device_total_bytes && s->mem.peak_pct >= 0) {
		fprintf(f, "  memory   %.1f%% of %s at the peak (%s on device %d, ",
			s->mem.peak_pct, fmt_bytes(a, sizeof(a), s->mem.device_total_bytes),
			fmt_bytes(b, sizeof(b), s->mem.peak_bytes), s->mem.peak_device);
		print_clean(f, report_device_name(m, s->mem.peak_device), 100);
		fprintf(f, ")%s\n", fd->is_memory_full > 0 ? "  FULL" : "");
	} else {
		fprintf(f, "  memory   peak %s (device size unknown)\n",
			fmt_bytes(a, sizeof(a), s->mem.peak_bytes));
	}
	if (fd->has_gpu) {
		fprintf(f, "  compute  GPU busy %.1f%% of %s (what nvidia-smi shows as utilization)\n",
			fd->busy_pct, fmt_ns(a, sizeof(a), fd->window_ns));
		fprintf(f, "  SMs      filled %.1f%% of the time (busy time weighted by SM fill)\n",
			fd->fill_pct);
		fprintf(f, "  rate     %.0f kernels/s, %s/s copied; %s before the %s\n",
			fd->kernels_per_s, fmt_bytes(b, sizeof(b), sat_u64(fd->copy_bytes_per_s)),
			fmt_ns(c, sizeof(c), fd->startup_ns),
			s->loop.found.source != STEPS_NONE ? "window (start-up, warm-up)" :
							     "first kernel");
		if (s->gpu.nr_comm)
			fprintf(f, "  comm     %s in %llu communication kernels (NCCL, NVSHMEM), "
				   "%.1f%% of it overlapped by other kernels, %s exposed\n",
				fmt_ns(a, sizeof(a), s->gpu.comm_ns),
				(unsigned long long)s->gpu.nr_comm,
				comm_overlap_pct(&s->gpu),
				fmt_ns(b, sizeof(b), s->gpu.comm_ns - s->gpu.comm_overlap_ns));
		if (report_left_out(line, sizeof(line), s, fd))
			fprintf(f, "  covered  %s\n", line);
		/* A join without CUPTI's API records is a guess by order: say how much of it. */
		if (m->gpu_joined_by_order)
			fprintf(f, "  joined   %s of %s GPU operations to their calls by launch order "
				   "(CUPTI gave no API record for them%s); %s unjoined\n",
				fmt_count(a, sizeof(a), m->gpu_joined_by_order),
				fmt_count(b, sizeof(b), m->gpu_joined + m->gpu_unjoined),
				model_cupti_detached(m) ? ": none is asked for while CUPTI is detached "
							   "between windows" :
							   "",
				fmt_count(c, sizeof(c), m->gpu_unjoined));
	} else {
		fprintf(f, "  compute  unknown: no GPU timestamps (CUPTI absent or off)\n");
	}
	report_print_counters(f, fd);
}

/* The counters' class (counters.h) behind busy-time cause @k. */
static int busy_class(int k)
{
	return k == CAUSE_MEMORY_BANDWIDTH ? PM_CLASS_BANDWIDTH :
	       k == CAUSE_COMPUTE_BOUND	   ? PM_CLASS_COMPUTE :
					     PM_CLASS_LATENCY;
}

/* A busy-time cause's evidence: the counters while busy over its samples, the unit named. */
void report_print_busy_evidence(FILE *f, const struct findings *fd, int k)
{
	const struct counters *c = &fd->ctr;
	int cls = busy_class(k);
	const double *b = c->class_busy[cls];
	int unit = counters_top_unit(c, cls);
	unsigned long long n = (unsigned long long)fd->causes[k].count;
	char a[32];

	if (cls == PM_CLASS_BANDWIDTH && fd->device_copy_ns) {
		fprintf(f, "   %s in %llu device copies and memsets%s",
			fmt_ns(a, sizeof(a), fd->device_copy_ns),
			(unsigned long long)fd->nr_device_copies, c->has && n ? ";" : "");
		if (!c->has || !n)
			return;
	}
	if (cls == PM_CLASS_BANDWIDTH && c->has_pipes)
		fprintf(f, "   busy time, %s-bound: DRAM %.0f%% / L2 %.0f%% / L1 %.0f%%, SM "
			   "throughput %.0f%% (%llu samples)",
			pm_unit_text(unit), b[TRACE_PM_DRAM], b[TRACE_PM_L2], b[TRACE_PM_LSU],
			b[TRACE_PM_SM_THROUGHPUT], n);
	else if (cls == PM_CLASS_BANDWIDTH)
		fprintf(f, "   busy time, DRAM %.0f%% / SM throughput %.0f%% (%llu samples)",
			b[TRACE_PM_DRAM], b[TRACE_PM_SM_THROUGHPUT], n);
	else if (cls == PM_CLASS_COMPUTE && unit >= 0)
		fprintf(f, "   busy time, %s %.0f%% (%s): SM throughput %.0f%%, tensor %.0f%%, "
			   "FMA %.0f%%, ALU %.0f%%, XU %.0f%% (%llu samples)",
			unit == TRACE_PM_ISSUE ? "instruction issue" : pm_unit_text(unit), b[unit],
			pm_pipe_is_good(unit) ? "used well" : "CUDA cores", b[TRACE_PM_SM_THROUGHPUT],
			b[TRACE_PM_TENSOR], b[TRACE_PM_FMA], b[TRACE_PM_ALU], b[TRACE_PM_XU], n);
	else if (cls == PM_CLASS_COMPUTE)
		fprintf(f, "   busy time, SM throughput %.0f%% / tensor %.0f%%, pipe unknown "
			   "(%llu samples)",
			b[TRACE_PM_SM_THROUGHPUT], b[TRACE_PM_TENSOR], n);
	else
		fprintf(f, "   busy time, SM active %.0f%%, warps %.0f%%, issue %.0f%%; DRAM "
			   "%.0f%% / L2 %.0f%%, SM throughput %.0f%% (%llu samples)",
			b[TRACE_PM_SM_ACTIVE], b[TRACE_PM_WARPS], b[TRACE_PM_ISSUE], b[TRACE_PM_DRAM],
			b[TRACE_PM_L2], b[TRACE_PM_SM_THROUGHPUT], n);
}

/* A sampled run's 95 % half-width beside a share ("+-1.2"), or blanks where not estimated. */
static void text_ci(FILE *f, double ci)
{
	if (ci >= 0)
		fprintf(f, " +-%-4.1f", ci);
	else
		fprintf(f, "       ");
}

/* A place and, when read, its source line. */
static void text_place(FILE *f, const char *at, const char *src)
{
	print_clean(f, at, SIZE_MAX);
	if (src[0]) {
		fprintf(f, "  `");
		print_clean(f, src, SIZE_MAX);
		fprintf(f, "`");
	}
}

/* A site's place in the program, on a line of its own (nothing without a stack). */
static void text_site_where(FILE *f, const struct model *m, const struct f_site *st, int k)
{
	char at[512], src[160], from[512], from_src[160];

	report_where(m, st->stack, at, sizeof(at), src, sizeof(src));
	if (!at[0])
		return;
	from[0] = 0;
	if (k == CAUSE_CPU_BOUND && st->from_stack && st->from_stack != st->stack)
		report_where(m, st->from_stack, from, sizeof(from), from_src, sizeof(from_src));
	if (from[0]) {
		fprintf(f, "           between ");
		text_place(f, from, from_src);
		fprintf(f, "\n               and ");
	} else {
		fprintf(f, "           ");
	}
	text_place(f, at, src);
	fprintf(f, "\n");
}

static void text_causes(FILE *f, const struct model *m, const struct findings *fd,
			const struct report_names *tn)
{
	char a[32], b[32];
	int r, k;

	if (!fd->has_gpu) {
		fprintf(f, "\ncauses: unknown without GPU timestamps\n");
		return;
	}
	if (fd->sampling.is_sampled)
		fprintf(f, "\ncauses (time lost in the sampled windows, share of their %s: taken as "
			   "the whole window's, +- its 95%% interval across windows%s)\n",
			fmt_ns(a, sizeof(a), fd->window_ns),
			fd->replay.done ? "; saving if fixed alone, ranked by it" : "");
	else
		fprintf(f, "\ncauses (time lost, share of the %s window%s)\n",
			fmt_ns(a, sizeof(a), fd->window_ns),
			fd->replay.done ? "; saving if fixed alone, ranked by it" : "");
	if (fd->replay.done && fd->replay.windows)
		fprintf(f, "  replayed %llu windows, each on its own (%s), replay error %+.2f%%\n",
			(unsigned long long)fd->replay.windows,
			fmt_ns(b, sizeof(b), fd->replay.recorded_ns), fd->replay.error_pct);
	else if (fd->replay.done && fd->replay.steps)
		fprintf(f, "  replayed %llu%s steps (%s), replay error %+.2f%%\n",
			(unsigned long long)fd->replay.steps,
			fd->replay.is_part ? " of the steady" : " steady",
			fmt_ns(b, sizeof(b), fd->replay.recorded_ns), fd->replay.error_pct);
	else if (fd->replay.done)
		fprintf(f, "  replayed %s%s, replay error %+.2f%%\n",
			fmt_ns(b, sizeof(b), fd->replay.recorded_ns),
			fd->replay.is_part ? " of the window" : "", fd->replay.error_pct);
	else if (fd->replay.why)
		fprintf(f, "  not replayed: %s\n", fd->replay.why);
	for (r = 0; r < fd->nr_ranked; r++) {
		const struct f_cause *c = &fd->causes[fd->ranked[r]];
		int i;

		k = fd->ranked[r];
		fprintf(f, "  %d. %-16s %10s %5.1f%%", r + 1, cause_name(k),
			fmt_ns(a, sizeof(a), c->time_ns), c->share_pct);
		if (fd->sampling.is_sampled)
			text_ci(f, c->share_ci_pct);
		if (c->has_saving)
			fprintf(f, "  saves %5.1f%%", c->saving_pct);
		else if (fd->replay.done)
			fprintf(f, "  %-12s", "(no replay)");
		if (c->has_saving && fd->sampling.is_sampled)
			text_ci(f, c->saving_ci_pct);
		if (k == CAUSE_LOW_PARALLELISM)
			fprintf(f, "   kernels fill %.1f%% of the SMs on average", c->value);
		else if (k == CAUSE_MEMCPY)
			fprintf(f, "   %s copied, %s of it pageable",
				fmt_bytes(a, sizeof(a), c->bytes),
				fmt_bytes(b, sizeof(b), c->pageable_bytes));
		else if (k == CAUSE_MEMORY_BANDWIDTH || k == CAUSE_COMPUTE_BOUND ||
			 k == CAUSE_LATENCY_BOUND)
			report_print_busy_evidence(f, fd, k);
		else
			fprintf(f, "   in %llu gaps", (unsigned long long)c->count);
		if (k == CAUSE_LAUNCH_OVERHEAD && c->aux)
			fprintf(f, ", %llu kernels shorter than their launch",
				(unsigned long long)c->aux);
		fprintf(f, "\n");
		for (i = 0; i < c->nr_sites && i < SITES_SHOWN; i++) {
			const struct f_site *st = &c->sites[i];

			if (!st->time_ns && k != CAUSE_MEMCPY)
				continue;
			fprintf(f, "       %s %s  ", fmt_ns(a, sizeof(a), st->time_ns),
				k == CAUSE_LOW_PARALLELISM ? "kernel" : "at");
			print_clean(f, report_name(tn, st->what ? st->what : "?"), SIZE_MAX);
			if (st->after) {
				fprintf(f, k == CAUSE_MEMCPY ? " (" : " after ");
				print_clean(f, report_name(tn, st->after), SIZE_MAX);
				if (k == CAUSE_MEMCPY)
					fprintf(f, ")");
			}
			if (k == CAUSE_LOW_PARALLELISM && st->count)
				fprintf(f, " (fill %.1f%%)", 100 * st->value / (double)st->count);
			fprintf(f, " x%llu\n", (unsigned long long)st->count);
			text_site_where(f, m, st, k);
		}
		if (r < 3) {
			fprintf(f, "     fix: ");
			print_clean(f, findings_advice(fd, k), 500);
			fprintf(f, "\n");
		}
	}
	if (!fd->nr_ranked)
		fprintf(f, "  none: the GPU was kept busy\n");
	if (fd->causes[CAUSE_MEMORY_CAPACITY].status == CS_SIGNAL)
		fprintf(f, "  -  memory_capacity  peak %.1f%% of device memory (a signal, not lost time)\n",
			fd->causes[CAUSE_MEMORY_CAPACITY].value);
	if (!fd->ctr.has && fd->device_copy_ns)
		fprintf(f, "  ?  compute_bound, latency_bound, kernels' memory_bandwidth: unknown "
			   "without hardware counters\n");
	else if (!fd->ctr.has)
		fprintf(f, "  ?  memory_bandwidth, compute_bound, latency_bound: unknown without "
			   "hardware counters\n");
	else if (fd->causes[CAUSE_MEMORY_BANDWIDTH].status != CS_MEASURED &&
		 fd->causes[CAUSE_COMPUTE_BOUND].status != CS_MEASURED &&
		 fd->causes[CAUSE_LATENCY_BOUND].status != CS_MEASURED)
		fprintf(f, "  -  memory_bandwidth, compute_bound%s: no sample bandwidth-, compute-%s "
			   "bound\n",
			fd->ctr.has_pipes ? ", latency_bound" : "",
			fd->ctr.has_pipes ? " or latency-" : "");
	if (fd->ctr.has && !fd->ctr.has_pipes)
		fprintf(f, "  ?  latency_bound: unknown, and compute_bound's pipe: the trace has no "
			   "pipe counters (format before 1.7)\n");
	{
		char d[32], e[32], g[32], h[32];

		fprintf(f, "  (idle %s, of which %s one-time module loading, ",
			fmt_ns(d, sizeof(d), fd->idle_ns), fmt_ns(e, sizeof(e), fd->module_load_ns));
		if (fd->profiler_setup_ns)
			fprintf(f, "%s calls stalled by the counters' set-up, ",
				fmt_ns(d, sizeof(d), fd->profiler_setup_ns));
		fprintf(f, "%s GPU-side dependency waits, %s scheduling noise under 5 us)\n",
			fmt_ns(g, sizeof(g), fd->dependency_ns), fmt_ns(h, sizeof(h), fd->noise_ns));
	}
}

void report_print_summary(FILE *f, const struct stats *s)
{
	const struct s_counts *n = &s->counts;
	char span[32], launches[32], failed[32], syncs[32], copies[32], bytes[32], sets[32];
	char allocs[32], frees[32];

	fprintf(f,
		"\nrun %s: %s launches (%s failed), %s syncs, %s copies (%s), %s sets, "
		"%s allocations, %s frees\n",
		fmt_ns(span, sizeof(span), s->span_ns), fmt_count(launches, 32, n->launches),
		fmt_count(failed, 32, n->launch_errors), fmt_count(syncs, 32, n->syncs),
		fmt_count(copies, 32, n->memcpys), fmt_bytes(bytes, 32, n->memcpy_bytes),
		fmt_count(sets, 32, n->memsets), fmt_count(allocs, 32, n->allocs),
		fmt_count(frees, 32, n->frees));
}

static void text_kernels(FILE *f, const struct stats *s, int has_pm,
			 const struct report_names *tn, size_t top)
{
	size_t i, nr_rows = report_table_rows(s->nr_kernels, top, TOP_KERNELS);
	char a[32], b[32], c[32];

	if (!s->nr_kernels)
		return;
	fprintf(f, "\nkernels (by GPU time)\n");
	fprintf(f, "  %10s %10s %10s %6s  %-18s %s%s\n", "launches", "gpu time", "mean", "fill",
		"grid/block", has_pm ? "dram  sm-tp  bound          " : "", "name");
	for (i = 0; i < nr_rows; i++) {
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
		if (has_pm && !isnan(k->pm[TRACE_PM_DRAM])) {
			char bound[32];

			report_kernel_bound(bound, sizeof(bound), k);
			fprintf(f, "%3.0f%% %5.0f%%  %-14s ", k->pm[TRACE_PM_DRAM],
				k->pm[TRACE_PM_SM_THROUGHPUT], bound);
		} else if (has_pm) {
			fprintf(f, "   -      -  %-14s ", "-");
		}
		print_clean(f, report_name(tn, k->name), SIZE_MAX);
		fprintf(f, "\n");
	}
	table_more(f, s->nr_kernels, nr_rows);
}

static void text_apis(FILE *f, const struct stats *s, size_t top)
{
	size_t i, nr_rows = report_table_rows(s->nr_apis, top, TOP_APIS);
	char a[32], b[32], c[32];

	if (!s->nr_apis)
		return;
	fprintf(f, "\nAPI calls (by host time)\n");
	fprintf(f, "  %10s %10s %10s %8s  %s\n", "calls", "total", "max", "errors", "entry point");
	for (i = 0; i < nr_rows; i++) {
		const struct s_api *p = &s->apis[i];

		fprintf(f, "  %10s %10s %10s %8llu  ", fmt_count(a, sizeof(a), p->calls),
			fmt_ns(b, sizeof(b), p->total_ns), fmt_ns(c, sizeof(c), p->max_ns),
			(unsigned long long)p->errors);
		print_clean(f, p->name, 90);
		fprintf(f, "\n");
	}
	table_more(f, s->nr_apis, nr_rows);
}

static uint64_t since(uint64_t t, uint64_t start)
{
	return t > start ? t - start : 0;
}

/* Memory pressure: failed allocations, reclaims, churn (stats.h, struct s_pressure). */
void report_print_pressure(FILE *f, const struct stats *s)
{
	const struct s_pressure *p = &s->mem.pressure;
	char a[32], b[32], c[32];

	if (p->failed)
		fprintf(f, "  failed   %llu allocations (the first at +%s: %s asked, %s live)\n",
			(unsigned long long)p->failed,
			fmt_ns(a, sizeof(a), since(p->first[0].t, s->span_start)),
			fmt_bytes(b, sizeof(b), p->first[0].bytes),
			fmt_bytes(c, sizeof(c), p->first[0].live_bytes));
	if (p->reclaims)
		fprintf(f, "  reclaim  %llu times a failed allocation, then %llu frees (%s), then the "
			   "retry: %s\n",
			(unsigned long long)p->reclaims, (unsigned long long)p->reclaim_frees,
			fmt_bytes(a, sizeof(a), p->reclaim_freed_bytes),
			fmt_ns(b, sizeof(b), p->reclaim_ns));
	if (p->churn_allocs)
		fprintf(f, "  churn    %llu allocations of a size freed under 100 ms before (%s "
			   "given back and taken again), %s in those calls\n",
			(unsigned long long)p->churn_allocs, fmt_bytes(a, sizeof(a), p->churn_bytes),
			fmt_ns(b, sizeof(b), p->churn_ns));
}

/* A size class's name (stats.h MEM_NR_SIZES). */
static const char *mem_size_name(int k)
{
	static const char *const names[MEM_NR_SIZES] = { "<1 MiB", "1-16 MiB", "16-256 MiB",
							 "256 MiB-4 GiB", ">=4 GiB" };

	return k >= 0 && k < MEM_NR_SIZES ? names[k] : "?";
}

/* "+1.20 GiB", "-3 B" */
static char *fmt_sbytes(char *buf, size_t n, int64_t v)
{
	char t[32];

	snprintf(buf, n, "%c%s", v < 0 ? '-' : '+',
		 fmt_bytes(t, sizeof(t), v < 0 ? -(uint64_t)v : (uint64_t)v));
	return buf;
}

/* The phase @t falls in, " in warmup", or "" without phases. */
static const char *in_phase(char *buf, size_t n, int phase)
{
	if (phase < 0)
		return "";
	snprintf(buf, n, " in %s", loop_phase_name(phase));
	return buf;
}

/*
 * How the peak formed (struct s_mem_formation): when, from which phases and sizes, the steady
 * state's low point, the largest rise within a step, and the live bytes over the run drawn in
 * ten levels of the peak (the slice's most) unless the caller draws it (!@has_ascii).
 */
void report_print_formation(FILE *f, const struct stats *s, int has_ascii)
{
	static const char levels[] = " .:-=+*#%@";
	const struct s_mem_formation *fm = &s->mem.formation;
	const struct s_mem_growth *g = &fm->growth;
	const struct s_mem_spike *sp = &fm->spike;
	char a[32], b[32], c[32], d[32], e[32];
	const char *sep = "";
	size_t i;
	int k;

	if (!s->mem.peak_bytes)
		return;
	fprintf(f, "  peak     %s at +%s%s, from %zu allocations made +%s to +%s\n",
		fmt_bytes(a, sizeof(a), s->mem.peak_bytes),
		fmt_ns(b, sizeof(b), since(s->mem.peak_ts, s->span_start)),
		in_phase(c, sizeof(c), fm->peak_phase), s->mem.nr_live_at_peak,
		fmt_ns(d, sizeof(d), since(fm->peak_first_alloc, s->span_start)),
		fmt_ns(e, sizeof(e), since(fm->peak_last_alloc, s->span_start)));
	if (fm->has_phases) {
		fprintf(f, "  made in ");
		for (k = 0; k < NR_PHASES; k++) {
			if (!fm->by_phase[k].nr)
				continue;
			fprintf(f, "%s %s %s (%llu)", sep, loop_phase_name(k),
				fmt_bytes(a, sizeof(a), fm->by_phase[k].bytes),
				(unsigned long long)fm->by_phase[k].nr);
			sep = ",";
		}
		fprintf(f, "\n");
		sep = "";
	}
	fprintf(f, "  sizes   ");
	for (k = MEM_NR_SIZES - 1; k >= 0; k--) {
		if (!fm->by_size[k].nr)
			continue;
		fprintf(f, "%s %llu of %s (%s)", sep, (unsigned long long)fm->by_size[k].nr,
			mem_size_name(k), fmt_bytes(a, sizeof(a), fm->by_size[k].bytes));
		sep = ",";
	}
	fprintf(f, "\n");
	if (g->nr_steps)
		fprintf(f, "  growth   steady low point %s to %s over %llu steps: %s per 100 steps, "
			   "%llu new high%s%s\n",
			fmt_bytes(a, sizeof(a), g->first_bytes), fmt_bytes(b, sizeof(b), g->last_bytes),
			(unsigned long long)g->nr_steps,
			fmt_sbytes(d, sizeof(d), llround(100 * g->per_step_bytes)),
			(unsigned long long)g->nr_rises, g->nr_rises == 1 ? "" : "s",
			g->is_growing ? ": a leak?" : "");
	if (sp->bytes) {
		fprintf(f, "  spike    %s within %s (%s) at +%s%s: %s to ",
			fmt_sbytes(a, sizeof(a), (int64_t)sp->bytes), fmt_ns(b, sizeof(b), sp->window_ns),
			fm->has_phases ? "a step" : "a slice of the run",
			fmt_ns(c, sizeof(c), since(sp->end, s->span_start)),
			in_phase(d, sizeof(d), sp->phase), fmt_bytes(e, sizeof(e), sp->from_bytes));
		fprintf(f, "%s, %llu allocations (the largest %s)\n",
			fmt_bytes(a, sizeof(a), sp->to_bytes), (unsigned long long)sp->nr_allocs,
			fmt_bytes(b, sizeof(b), sp->largest_bytes));
	}
	if (!has_ascii)
		return;
	fprintf(f, "  timeline [");
	for (i = 0; i < fm->nr_series; i++) {
		uint64_t v = fm->series[i].max_bytes;

		k = v ? 1 + (int)(8.0 * (double)v / (double)s->mem.peak_bytes) : 0;
		fputc(levels[k < 9 ? k : 9], f);
	}
	fprintf(f, "] most live per %s, @ = %s\n", fmt_ns(a, sizeof(a), fm->slice_ns),
		fmt_bytes(b, sizeof(b), s->mem.peak_bytes));
}

static void text_memory(FILE *f, const struct model *m, const struct stats *s, size_t top)
{
	const struct s_mem_formation *fm = &s->mem.formation;
	size_t i, nr_rows = report_table_rows(s->mem.nr_live_at_peak, top, TOP_ALLOCS);
	char a[32], b[32];

	if (!s->mem.nr_allocs)
		return;
	fprintf(f, "\nmemory: %zu device allocations, %s allocated in total, %s live at the end\n",
		s->mem.nr_allocs, fmt_bytes(a, sizeof(a), s->mem.alloc_bytes_total),
		fmt_bytes(b, sizeof(b), s->mem.final_bytes));
	report_print_pressure(f, s);
	report_print_formation(f, s, 1);
	if (s->mem.nr_live_at_peak) {
		fprintf(f, "  live at the peak (+%s), largest first, made at:\n",
			fmt_ns(a, sizeof(a), s->mem.peak_ts - s->span_start));
		for (i = 0; i < nr_rows; i++) {
			const struct s_alloc *al = &s->mem.allocs[s->mem.live_at_peak[i]];

			fprintf(f, "  %12s  %-8s device %d  +%-10s ", fmt_bytes(a, sizeof(a), al->bytes),
				report_mem_kind(al->kind), al->device,
				fmt_ns(b, sizeof(b), since(al->t_alloc, s->span_start)));
			if (fm->has_phases)
				fprintf(f, "%-8s ",
					loop_phase_name(loop_phase_at(&s->loop, al->t_alloc)));
			print_clean(f, model_api_name(m, al->api), 90);
			fprintf(f, "\n");
		}
		table_more(f, s->mem.nr_live_at_peak, nr_rows);
	}
}

static int steps_opts_whole(const struct loop *l)
{
	return l->found.why && !strncmp(l->found.why, "--whole", 7);
}

/* Steps and phases (loop.h): where the loop is, what it does per step. */
void report_print_loop(FILE *f, const struct model *m, const struct stats *s,
		      const struct report_names *tn)
{
	const struct loop *l = &s->loop;
	char a[32], b[32], c[32], d[32];
	struct m_stretch *ho;
	size_t i, nh = 0;
	int k;

	if (l->found.source == STEPS_NONE) {
		if (l->found.why)
			fprintf(f, "  steps    %s: %s; the verdict covers the whole run\n",
				steps_opts_whole(l) ? "not looked for" : "none", l->found.why);
		return;
	}
	if (l->found.source == STEPS_WINDOW) {
		fprintf(f, "  window   %s (--window); the verdict covers it\n",
			fmt_ns(a, sizeof(a),
			       l->phase[PHASE_STEADY].end - l->phase[PHASE_STEADY].start));
	} else {
		fprintf(f, "  steps    %llu (%s ", (unsigned long long)l->count,
			l->found.source == STEPS_NVTX ? "NVTX range" : "launches of");
		if (l->found.source == STEPS_AUTO && l->name)
			print_clean(f, report_name(tn, l->name), SIZE_MAX);
		else
			print_clean(f, l->name ? l->name : "?", 60);
		fprintf(f, "), %llu warm-up; steady: %.2f steps/s, step %s median, %s p99, "
			   "%s min, %s max\n",
			(unsigned long long)l->warmup, l->per_s, fmt_ns(a, sizeof(a), l->p50_ns),
			fmt_ns(b, sizeof(b), l->p99_ns), fmt_ns(c, sizeof(c), l->min_ns),
			fmt_ns(d, sizeof(d), l->max_ns));
	}
	ho = model_sampled(m, NULL, NULL) ? model_host_only(m, &nh) : NULL;
	for (k = 0; k < NR_PHASES; k++) {
		const struct loop_phase_sum *p = &l->phase[k];
		uint64_t len = p->end - p->start;
		/* A sampled run's GPU busy time is of the phase's time in windows. */
		uint64_t seen = len - model_host_only_overlap(ho, nh, p->start, p->end);

		if (!len)
			continue;
		fprintf(f, "  %-8s %s, ", loop_phase_name(k), fmt_ns(a, sizeof(a), len));
		if (!ho)
			fprintf(f, "GPU busy %.1f%%", 100.0 * (double)p->gpu_ns / (double)len);
		else if (seen)
			fprintf(f, "GPU busy %.1f%% of its %s in windows",
				100.0 * (double)p->gpu_ns / (double)seen, fmt_ns(b, sizeof(b), seen));
		else
			fprintf(f, "GPU busy unknown (no window)");
		fprintf(f, ", %llu launches, %llu syncs, %llu allocations, %llu module loads%s\n",
			(unsigned long long)p->launches, (unsigned long long)p->syncs,
			(unsigned long long)p->allocs, (unsigned long long)p->modules,
			k == PHASE_STEADY ? " (the verdict's)" : "");
	}
	free(ho);
	for (i = 0; i < l->nr_slowest; i++) {
		const struct loop_step *st = &l->series[l->slowest[i].step];
		uint64_t idle = loop_step_idle(l, l->slowest[i].step)->ns;

		fprintf(f, "  slowest  step %zu: %s (%s", l->slowest[i].step + 1,
			fmt_ns(a, sizeof(a), st->end - st->start), l->slowest[i].why);

		if (idle)
			fprintf(f, "; GPU idle %s in it", fmt_ns(b, sizeof(b), idle));
		/* the cause that grew the most, when it is a fair part of the idle time */
		if (l->slowest[i].cause >= 0 && l->slowest[i].cause_ns >= idle / 4)
			fprintf(f, ", %s of it %s", fmt_ns(c, sizeof(c), l->slowest[i].cause_ns),
				gap_part_name(l->slowest[i].cause));
		fprintf(f, ")\n");
	}
	if (s->ranges.nr_rows)
		fprintf(f, "  ranges   %zu NVTX range names, %llu ranges in the %s (report --by-range)\n",
			s->ranges.nr_rows, (unsigned long long)s->ranges.nr_in_window,
			l->found.source == STEPS_NONE ? "run" : "steady state");
}

/* The NVTX range table (ranges.h), most host time first; at most @max rows (0: all). */
void report_print_ranges(FILE *f, const struct stats *s, size_t max)
{
	const struct range_table *t = &s->ranges;
	const struct loop *l = &s->loop;
	char a[32], b[32], c[32], d[32], e[32];
	size_t i;

	if (!t->has_nvtx) {
		fprintf(f, "\nNVTX ranges: none in this trace (the program made no NVTX ranges, or "
			   "the trace predates format 1.6, or GPUSHIM_NVTX=0)\n");
		return;
	}
	fprintf(f, "\nNVTX ranges that began in the %s", l->found.source == STEPS_NONE ? "whole run" :
							     l->found.source == STEPS_WINDOW ? "window" :
											       "steady state");
	if (t->window_end != UINT64_MAX && t->window_end > t->window_start)
		fprintf(f, " (%s)", fmt_ns(a, sizeof(a), t->window_end - t->window_start));
	fprintf(f, "\n  (host time inside; kernel and graph launches made inside and the GPU time of\n"
		   "  the work issued inside; device idle time inside, and the cause of most of it)\n");
	if (!t->nr_rows) {
		fprintf(f, "  none began there\n");
	} else {
		fprintf(f, "  %10s %10s %9s %10s %10s  %-26s %s\n", "count", "host time", "launches",
			"GPU time", "idle", "most idle to", "range");
	}
	for (i = 0; i < t->nr_rows && (!max || i < max); i++) {
		const struct range_row *r = &t->rows[i];
		int k = range_top_cause(r);

		snprintf(e, sizeof(e), "-");
		if (k >= 0)
			snprintf(e, sizeof(e), "%s %s", cause_name(k),
				 fmt_ns(d, sizeof(d), r->idle[k]));
		fprintf(f, "  %10llu %10s %9llu %10s %10s  %-26s ", (unsigned long long)r->count,
			fmt_ns(a, sizeof(a), r->host_ns), (unsigned long long)r->launches,
			fmt_ns(b, sizeof(b), r->gpu_ns), fmt_ns(c, sizeof(c), r->idle_ns), e);
		if (r->domain) {
			print_clean(f, r->domain, 40);
			fputs(": ", f);
		}
		print_clean(f, r->name, 80);
		fputs(r->is_start_end ? " (start/end)\n" : "\n", f);
	}
	if (max && t->nr_rows > max)
		fprintf(f, "  ... %zu more names (report --by-range)\n", t->nr_rows - max);
	if (t->nr_dropped || t->nr_unbalanced || t->nr_unmatched_ends || t->nr_open_at_end ||
	    t->nr_other_names)
		fprintf(f, "  not followed: %llu ranges not kept (past %u or %u deep), %llu pops "
			   "without a push, %llu ends of no open range, %llu open at the end (closed "
			   "there), %llu under \"(other names)\" past %u names\n",
			(unsigned long long)t->nr_dropped, NVTX_RANGES_MAX_KEPT, NVTX_RANGES_MAX_DEPTH,
			(unsigned long long)t->nr_unbalanced, (unsigned long long)t->nr_unmatched_ends,
			(unsigned long long)t->nr_open_at_end, (unsigned long long)t->nr_other_names,
			NVTX_RANGES_MAX_NAMES);
}

void report_print_text(FILE *f, const struct model *m, const struct stats *s,
		       const struct findings *fd, int has_header, int is_wide, size_t top)
{
	struct report_names tn;

	report_names_build(&tn, s, fd, is_wide ? 0 : NAME_WIDTH, top);
	if (has_header)
		text_header(f, m);
	text_signals(f, m, s, fd);
	report_print_loop(f, m, s, &tn);
	text_causes(f, m, fd, &tn);
	report_print_summary(f, s);
	text_kernels(f, s, fd->ctr.has, &tn, top);
	text_apis(f, s, top);
	text_memory(f, m, s, top);
	report_names_free(&tn);
}

/* ---- JSON ---- */

/* "ranges" (ranges.h): the table, and in "nvtx" what could not be followed. */
static void json_ranges(struct json *j, const struct range_table *t)
{
	size_t i;
	int k;

	json_array_begin(j, "ranges");
	for (i = 0; i < t->nr_rows; i++) {
		const struct range_row *r = &t->rows[i];

		json_object_begin(j, NULL);
		json_str(j, "name", r->name);
		json_str(j, "domain", r->domain);
		json_str(j, "kind", r->is_start_end ? "start_end" : "push_pop");
		json_u64(j, "count", r->count);
		json_u64(j, "host_ns", r->host_ns);
		json_u64(j, "launches", r->launches);
		json_u64(j, "gpu_ns", r->gpu_ns);
		json_u64(j, "idle_ns", r->idle_ns);
		json_object_begin(j, "idle_by_cause_ns");
		for (k = 0; k < NR_GAP_PARTS; k++)
			if (r->idle[k])
				json_u64(j, gap_part_name(k), r->idle[k]);
		json_object_end(j);
		k = range_top_cause(r);
		json_str(j, "top_cause", k >= 0 ? cause_name(k) : NULL);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_begin(j, "ranges_info");
	json_u64(j, "window_start_ns", t->window_start);
	json_u64(j, "window_end_ns", t->window_end == UINT64_MAX ? 0 : t->window_end);
	json_u64(j, "in_window", t->nr_in_window);
	json_u64(j, "ranges", t->nr_ranges);
	json_u64(j, "not_kept", t->nr_dropped);
	json_u64(j, "too_deep", t->nr_too_deep);
	json_u64(j, "unbalanced_pops", t->nr_unbalanced);
	json_u64(j, "unmatched", t->nr_unmatched_ends);
	json_u64(j, "open_at_end", t->nr_open_at_end);
	json_u64(j, "marks", t->nr_marks);
	json_u64(j, "other_names", t->nr_other_names);
	json_object_end(j);
}

/* "steps" and "phases" (loop.h); the series and slowest steps with them. */
static void json_loop(struct json *j, const struct loop *l)
{
	size_t i;
	int k;

	json_object_begin(j, "steps");
	json_str(j, "source", l->source);
	if (l->found.source == STEPS_AUTO && l->found.anchor_func != STEPS_GRAPH_FUNC) {
		json_name(j, "name", "mangled", l->name);	/* the anchor kernel */
	} else {
		json_str(j, "name", l->name);
		json_null(j, "mangled");
	}
	json_str(j, "why_none", l->found.source == STEPS_NONE ? l->found.why : NULL);
	json_u64(j, "count", l->count);
	json_u64(j, "warmup_steps", l->warmup);
	json_u64(j, "steady_steps", l->steady);
	json_u64(j, "mean_ns", l->mean_ns);
	json_u64(j, "p50_ns", l->p50_ns);
	json_u64(j, "p99_ns", l->p99_ns);
	json_u64(j, "min_ns", l->min_ns);
	json_u64(j, "max_ns", l->max_ns);
	json_double(j, "per_s", l->per_s, 3);
	json_u64(j, "startup_ns", l->phase[PHASE_STARTUP].end - l->phase[PHASE_STARTUP].start);
	json_u64(j, "steady_start_ns", l->phase[PHASE_STEADY].start);
	json_u64(j, "steady_end_ns", l->phase[PHASE_STEADY].end);
	json_object_begin(j, "nvtx");
	json_u64(j, "top_level_ranges", l->found.nr_ranges);
	json_u64(j, "unbalanced_pops", l->found.nr_unbalanced);
	json_u64(j, "too_deep", l->found.nr_too_deep);
	json_u64(j, "unmatched", l->found.nr_unmatched_ends);
	json_u64(j, "marks", l->found.nr_marks);
	json_object_end(j);
	json_array_begin(j, "slowest");
	for (i = 0; i < l->nr_slowest; i++) {
		json_object_begin(j, NULL);
		json_u64(j, "step", l->slowest[i].step + 1);
		json_u64(j, "ns", l->series[l->slowest[i].step].end -
				  l->series[l->slowest[i].step].start);
		json_str(j, "why", l->slowest[i].why);
		json_str(j, "idle_cause", l->slowest[i].cause >= 0 ?
						  gap_part_name(l->slowest[i].cause) :
						  NULL);
		json_u64(j, "idle_cause_ns", l->slowest[i].cause_ns);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "series");
	for (i = 0; i < l->nr_series; i++) {
		const struct loop_step *st = &l->series[i];

		json_object_begin(j, NULL);
		json_u64(j, "start_ns", st->start);
		json_u64(j, "ns", st->end - st->start);
		json_u64(j, "gpu_ns", st->gpu_ns);
		json_u64(j, "launches", st->launches);
		json_u64(j, "syncs", st->syncs);
		json_u64(j, "allocs", st->allocs);
		json_u64(j, "module_loads", st->modules);
		json_u64(j, "idle_ns", loop_step_idle(l, i)->ns);
		json_object_begin(j, "idle_by_cause_ns");
		for (k = 0; k < LOOP_NR_PARTS; k++)
			if (loop_step_idle(l, i)->part[k])
				json_u64(j, gap_part_name(loop_part_id(k)),
					 loop_step_idle(l, i)->part[k]);
		json_object_end(j);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);

	json_array_begin(j, "phases");
	for (k = 0; k < NR_PHASES && l->found.source != STEPS_NONE; k++) {
		const struct loop_phase_sum *p = &l->phase[k];

		json_object_begin(j, NULL);
		json_str(j, "name", loop_phase_name(k));
		json_u64(j, "start_ns", p->start);
		json_u64(j, "ns", p->end - p->start);
		json_u64(j, "gpu_busy_ns", p->gpu_ns);
		json_u64(j, "launches", p->launches);
		json_u64(j, "syncs", p->syncs);
		json_u64(j, "allocs", p->allocs);
		json_u64(j, "module_loads", p->modules);
		json_u64(j, "copies", p->copies);
		json_object_end(j);
	}
	json_array_end(j);
}

static void json_pct(struct json *j, const char *key, double v)
{
	if (v < 0)
		json_null(j, key);
	else
		json_double(j, key, v, 2);
}

/* memory.formation: how the peak formed (struct s_mem_formation). */
static void json_formation(struct json *j, const struct stats *s)
{
	const struct s_mem_formation *fm = &s->mem.formation;
	const struct s_mem_growth *g = &fm->growth;
	const struct s_mem_spike *sp = &fm->spike;
	size_t i;
	int k;

	json_object_begin(j, "formation");
	json_u64(j, "slice_ns", fm->slice_ns);
	json_array_begin(j, "series");
	for (i = 0; i < fm->nr_series; i++) {
		const struct s_mem_point *p = &fm->series[i];

		json_object_begin(j, NULL);
		json_u64(j, "end_ns", since(p->end, s->span_start));
		json_u64(j, "min_bytes", p->min_bytes);
		json_u64(j, "max_bytes", p->max_bytes);
		json_u64(j, "end_bytes", p->end_bytes);
		json_u64(j, "peak_made_bytes", p->peak_made_bytes);
		json_object_end(j);
	}
	json_array_end(j);
	json_str(j, "peak_phase", fm->peak_phase >= 0 ? loop_phase_name(fm->peak_phase) : NULL);
	json_u64(j, "peak_first_alloc_ns", since(fm->peak_first_alloc, s->span_start));
	json_u64(j, "peak_last_alloc_ns", since(fm->peak_last_alloc, s->span_start));
	json_array_begin(j, "peak_by_phase");
	for (k = 0; fm->has_phases && k < NR_PHASES; k++) {
		json_object_begin(j, NULL);
		json_str(j, "phase", loop_phase_name(k));
		json_u64(j, "allocations", fm->by_phase[k].nr);
		json_u64(j, "bytes", fm->by_phase[k].bytes);
		json_object_end(j);
	}
	json_array_end(j);
	json_array_begin(j, "peak_by_size");
	for (k = 0; k < MEM_NR_SIZES; k++) {
		json_object_begin(j, NULL);
		json_u64(j, "from_bytes", stats_mem_size_floor(k));
		if (k + 1 < MEM_NR_SIZES)
			json_u64(j, "to_bytes", stats_mem_size_floor(k + 1));
		else
			json_null(j, "to_bytes");
		json_u64(j, "allocations", fm->by_size[k].nr);
		json_u64(j, "bytes", fm->by_size[k].bytes);
		json_object_end(j);
	}
	json_array_end(j);
	if (g->nr_steps) {
		json_object_begin(j, "steady_growth");
		json_u64(j, "steps", g->nr_steps);
		json_u64(j, "first_low_bytes", g->first_bytes);
		json_u64(j, "last_low_bytes", g->last_bytes);
		json_i64(j, "per_100_steps_bytes", llround(100 * g->per_step_bytes));
		json_u64(j, "new_highs", g->nr_rises);
		json_bool(j, "growing", g->is_growing);
		json_object_end(j);
	} else {
		json_null(j, "steady_growth");
	}
	if (sp->bytes) {
		json_object_begin(j, "spike");
		json_u64(j, "bytes", sp->bytes);
		json_u64(j, "from_bytes", sp->from_bytes);
		json_u64(j, "to_bytes", sp->to_bytes);
		json_u64(j, "start_ns", since(sp->start, s->span_start));
		json_u64(j, "end_ns", since(sp->end, s->span_start));
		json_u64(j, "window_ns", sp->window_ns);
		json_str(j, "phase", sp->phase >= 0 ? loop_phase_name(sp->phase) : NULL);
		json_u64(j, "allocations", sp->nr_allocs);
		json_u64(j, "largest_bytes", sp->largest_bytes);
		json_object_end(j);
	} else {
		json_null(j, "spike");
	}
	json_object_end(j);
}

static void json_attribution(struct json *j, const struct model *m, const struct stats *s,
			     const struct findings *fd);

/* The recording mode (GPUSHIM_MODE, from format 1.8: null before) and a sampled run's windows. */
static void json_sampling(struct json *j, const struct model *m, const struct findings *fd)
{
	const struct f_sampling *sp = &fd->sampling;
	const char *mode = NULL;
	size_t i;

	for (i = 0; i < m->nr_notes; i++)
		if (m->notes[i].kind == TRACE_NOTE_MODE) {
			mode = sp->is_sampled ? "sampled" : model_string(m, m->notes[i].text, NULL);
			break;
		}
	json_object_begin(j, "sampling");
	json_str(j, "mode", mode);
	if (sp->is_sampled) {
		json_u64(j, "window_ms", sp->window_ms);
		json_u64(j, "every_ms", sp->every_ms);
		json_u64(j, "windows", sp->nr_windows);
		json_u64(j, "covered_ns", sp->covered_ns);
		json_u64(j, "span_ns", sp->span_ns);
		json_double(j, "covered_pct", sp->covered_pct, 2);
	} else {
		json_null(j, "window_ms");
		json_null(j, "every_ms");
		json_null(j, "windows");
		json_null(j, "covered_ns");
		json_null(j, "span_ns");
		json_null(j, "covered_pct");
	}
	json_object_end(j);
}

/* A sampled run's estimate for the whole window, and its 95 % half-width (points). */
static void json_estimate(struct json *j, const struct findings *fd, const struct f_cause *c)
{
	if (fd->sampling.is_sampled && c->status == CS_MEASURED)
		json_u64(j, "est_ns", c->est_ns);
	else
		json_null(j, "est_ns");
	if (fd->sampling.is_sampled && c->status == CS_MEASURED && c->share_ci_pct >= 0)
		json_double(j, "share_ci_pct", c->share_ci_pct, 2);
	else
		json_null(j, "share_ci_pct");
	if (fd->sampling.is_sampled && c->has_saving && c->saving_ci_pct >= 0)
		json_double(j, "saving_ci_pct", c->saving_ci_pct, 2);
	else
		json_null(j, "saving_ci_pct");
}

/* Counter means by slot name, or null when none was sampled. */
static void json_pm_values(struct json *j, const char *key, const double v[TRACE_PM_NR_SLOTS])
{
	int k, any = 0;

	for (k = 0; k < TRACE_PM_NR_SLOTS; k++)
		any |= !isnan(v[k]);
	if (!any) {
		json_null(j, key);
		return;
	}
	json_object_begin(j, key);
	for (k = 0; k <= TRACE_PM_WARPS; k++)
		json_double(j, counters_slot_name(k), v[k], 2);
	json_object_end(j);
}

static void json_counters(struct json *j, const struct counters *c)
{
	int i;

	json_object_begin(j, "counters");
	json_str(j, "source", c->has ? "pm_sampling" : NULL);
	json_str(j, "absent_reason", c->has ? NULL : c->absent);
	json_str(j, "chip", c->chip);
	json_u64(j, "interval_ns", c->interval_ns);
	json_u64(j, "samples", c->nr_samples);
	json_u64(j, "samples_after_loss", c->nr_overflow);
	json_u64(j, "samples_left_out", c->nr_left_out);
	json_u64(j, "covered_ns", c->covered_ns);
	json_double(j, "coverage_pct", c->has ? c->coverage_pct : NAN, 2);
	json_pm_values(j, "mean", c->mean);
	json_object_begin(j, "bandwidth_bound");
	json_u64(j, "busy_ns", c->bw_ns);
	json_u64(j, "samples", c->bw_samples);
	json_double(j, "dram_pct", c->bw_dram, 2);
	json_double(j, "sm_throughput_pct", c->bw_sm, 2);
	json_object_end(j);
	json_object_begin(j, "compute_bound");
	json_u64(j, "busy_ns", c->compute_ns);
	json_u64(j, "samples", c->compute_samples);
	json_double(j, "sm_throughput_pct", c->compute_sm, 2);
	json_double(j, "tensor_pct", c->compute_tensor, 2);
	json_object_end(j);
	json_object_begin(j, "latency_bound");
	json_u64(j, "busy_ns", c->latency_ns);
	json_u64(j, "samples", c->latency_samples);
	json_object_end(j);
	json_bool(j, "has_pipes", c->has_pipes);
	json_array_begin(j, "timeline");
	for (i = 0; i < c->nr_buckets; i++) {
		json_object_begin(j, NULL);
		json_u64(j, "start_ns", c->buckets[i].start);
		json_u64(j, "end_ns", c->buckets[i].end);
		json_pm_values(j, "mean", c->buckets[i].mean);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);
}

void report_json_members(struct json *j, const struct model *m, const struct stats *s,
			 const struct findings *fd)
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
	json_str(j, "end_reason", model_end_reason(m));
	json_str(j, "end_detail", model_end_detail(m));
	json_u64(j, "lost_records", m->lost_records);
	json_u64(j, "records", m->nr_records);
	json_u64(j, "chunks", m->nr_chunks);
	json_object_end(j);

	/* The analysis window when GPU timestamps exist, else the recorded span. */
	json_u64(j, "span_ns", fd->has_gpu ? fd->window_ns : s->span_ns);
	json_u64(j, "trace_span_ns", s->span_ns);
	json_u64(j, "startup_ns", fd->startup_ns);
	json_loop(j, &s->loop);
	json_ranges(j, &s->ranges);

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
		json_str(j, "family", report_api_family(p->family));
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
	{
		const struct s_pressure *p = &s->mem.pressure;

		json_object_begin(j, "pressure");
		json_u64(j, "failed_allocations", p->failed);
		json_array_begin(j, "failed");
		for (i = 0; i < p->failed && i < MEM_FAILED_KEPT; i++) {
			json_object_begin(j, NULL);
			json_u64(j, "at_ns", since(p->first[i].t, s->span_start));
			json_u64(j, "bytes", p->first[i].bytes);
			json_u64(j, "live_bytes", p->first[i].live_bytes);
			json_str(j, "api", model_api_name(m, p->first[i].api));
			json_i64(j, "device", p->first[i].device);
			json_object_end(j);
		}
		json_array_end(j);
		json_u64(j, "reclaims", p->reclaims);
		json_u64(j, "reclaim_frees", p->reclaim_frees);
		json_u64(j, "reclaim_freed_bytes", p->reclaim_freed_bytes);
		json_u64(j, "reclaim_ns", p->reclaim_ns);
		json_u64(j, "churn_allocations", p->churn_allocs);
		json_u64(j, "churn_bytes", p->churn_bytes);
		json_u64(j, "churn_ns", p->churn_ns);
		json_object_end(j);
	}
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
		json_str(j, "kind", report_mem_kind(al->kind));
		json_str(j, "api", model_api_name(m, al->api));
		json_i64(j, "device", al->device);
		json_u64(j, "allocated_at_ns", al->t_alloc - s->span_start);
		json_str(j, "phase", s->mem.formation.has_phases ?
					     loop_phase_name(loop_phase_at(&s->loop, al->t_alloc)) :
					     NULL);
		json_object_end(j);
	}
	json_array_end(j);
	json_formation(j, s);
	json_object_end(j);

	json_object_begin(j, "gpu");
	json_str(j, "source", s->gpu.has_cupti ? "cupti" : "host");
	if (fd->has_gpu) {
		json_double(j, "busy_pct", fd->busy_pct, 2);
		json_double(j, "fill_pct", fd->fill_pct, 2);
		json_u64(j, "busy_ns", fd->work_ns + fd->exposed_copy_ns);
		json_u64(j, "kernel_ns", s->gpu.kernel_ns);
		json_u64(j, "memcpy_ns", s->gpu.memcpy_ns);
		json_u64(j, "memset_ns", s->gpu.memset_ns);
		json_u64(j, "idle_ns", fd->idle_ns);
		json_u64(j, "exposed_copy_ns", fd->exposed_copy_ns);
		json_u64(j, "dependency_wait_ns", fd->dependency_ns);
		json_u64(j, "module_load_ns", fd->module_load_ns);
		json_u64(j, "profiler_setup_ns", fd->profiler_setup_ns);
		json_u64(j, "noise_ns", fd->noise_ns);
	} else {
		json_null(j, "busy_pct");
		json_null(j, "fill_pct");
		json_null(j, "busy_ns");
		json_null(j, "kernel_ns");
		json_null(j, "memcpy_ns");
		json_null(j, "memset_ns");
		json_null(j, "idle_ns");
		json_null(j, "exposed_copy_ns");
		json_null(j, "dependency_wait_ns");
		json_null(j, "module_load_ns");
		json_null(j, "profiler_setup_ns");
		json_null(j, "noise_ns");
	}
	json_u64(j, "kernels", s->gpu.nr_kernels);
	json_u64(j, "memcpys", s->gpu.nr_memcpys);
	json_u64(j, "memsets", s->gpu.nr_memsets);
	json_u64(j, "joined", s->gpu.joined);
	json_u64(j, "unjoined", s->gpu.unjoined);
	json_object_begin(j, "join");
	json_u64(j, "by_correlation", m->gpu_joined_by_corr);
	json_u64(j, "by_api_interval", m->gpu_joined_by_api);
	json_u64(j, "by_launch_order", m->gpu_joined_by_order);
	json_u64(j, "graph_ops", m->gpu_graph_ops);
	json_u64(j, "graph_ops_to_graph_launch", m->gpu_graph_ops_to_launch);
	json_object_end(j);
	json_u64(j, "dropped", m->gpu_dropped);
	json_u64(j, "zero_timestamps", m->gpu_zero_ts);
	json_u64(j, "host_only_ns", s->gpu.host_only_ns);
	json_u64(j, "host_only_stretches", s->gpu.nr_host_only);
	json_u64(j, "host_only_launches", s->gpu.host_only_launches);
	json_u64(j, "covered_ns", s->span_ns - s->gpu.host_only_ns);
	json_u64(j, "excluded_idle_ns", fd->excluded_ns);
	if (s->gpu.nr_comm) {
		json_object_begin(j, "comm");
		json_u64(j, "kernels", s->gpu.nr_comm);
		json_u64(j, "time_ns", s->gpu.comm_ns);
		json_u64(j, "overlap_ns", s->gpu.comm_overlap_ns);
		json_u64(j, "exposed_ns", s->gpu.comm_ns - s->gpu.comm_overlap_ns);
		json_double(j, "overlap_pct", comm_overlap_pct(&s->gpu), 2);
		json_object_end(j);
	} else {
		json_null(j, "comm");
	}
	json_array_begin(j, "devices");
	for (i = 0; i < s->gpu.nr_devices; i++) {
		const struct s_gpu_device *d = &s->gpu.devices[i];

		json_object_begin(j, NULL);
		json_i64(j, "device", d->device);
		json_u64(j, "busy_ns", d->busy_ns);
		json_u64(j, "kernel_ns", d->kernel_ns);
		json_u64(j, "memcpy_ns", d->memcpy_ns);
		json_u64(j, "memset_ns", d->memset_ns);
		json_u64(j, "comm_ns", d->comm_ns);
		json_u64(j, "comm_overlap_ns", d->comm_overlap_ns);
		json_object_end(j);
	}
	json_array_end(j);
	json_object_end(j);

	json_array_begin(j, "kernels");
	for (i = 0; i < s->nr_kernels; i++) {
		const struct s_kernel *k = &s->kernels[i];
		int d;

		json_object_begin(j, NULL);
		json_name(j, "name", "mangled", k->name);
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
		json_pm_values(j, "counters", k->pm);
		{
			int unit, cls = stats_kernel_bound(k, &unit);

			if (k->pm_share >= 0)
				json_double(j, "counters_own_pct", 100 * k->pm_share, 1);
			else
				json_null(j, "counters_own_pct");
			json_str(j, "bound", cls > 0 ? pm_class_name(cls) : NULL);
			json_str(j, "bound_by", cls > 0 && unit >= 0 ? counters_slot_name(unit) : NULL);
		}
		json_object_end(j);
	}
	json_array_end(j);
	json_counters(j, &fd->ctr);
	json_sampling(j, m, fd);
	json_attribution(j, m, s, fd);
}

static const char *status_name(int st)
{
	switch (st) {
	case CS_MEASURED:
		return "measured";
	case CS_SIGNAL:
		return "signal";
	case CS_UNKNOWN:
		return "unknown";
	default:
		return "not_seen";
	}
}

static void json_cause(struct json *j, const struct model *m, const struct findings *fd, int k)
{
	const struct f_cause *c = &fd->causes[k];
	int i;

	json_object_begin(j, NULL);
	json_str(j, "cause", cause_name(k));
	json_str(j, "status", status_name(c->status));
	if (c->status == CS_MEASURED) {
		json_u64(j, "time_ns", c->time_ns);
		json_double(j, "share_pct", c->share_pct, 2);
	} else if (c->status == CS_SIGNAL) {
		json_u64(j, "time_ns", 0);
		json_double(j, "share_pct", 0, 2);
	} else {
		json_null(j, "time_ns");
		json_null(j, "share_pct");
	}
	if (c->has_saving) {
		json_u64(j, "saving_ns", c->saving_ns);
		json_double(j, "saving_pct", c->saving_pct, 2);
		json_u64(j, "saving_step_ns", c->saving_step_ns);
	} else {
		json_null(j, "saving_ns");
		json_null(j, "saving_pct");
		json_null(j, "saving_step_ns");
	}
	json_estimate(j, fd, c);
	json_object_begin(j, "evidence");
	switch (k) {
	case CAUSE_MEMCPY:
		json_u64(j, "bytes", c->bytes);
		json_u64(j, "pageable_bytes", c->pageable_bytes);
		json_u64(j, "exposed_copy_ns", fd->exposed_copy_ns);
		break;
	case CAUSE_LOW_PARALLELISM:
		if (c->value >= 0)
			json_double(j, "mean_fill_pct", c->value, 2);
		else
			json_null(j, "mean_fill_pct");
		break;
	case CAUSE_MEMORY_CAPACITY:
		json_u64(j, "peak_bytes", c->bytes);
		json_double(j, "peak_pct", c->value, 2);
		json_u64(j, "allocations_live_at_peak", c->count);
		break;
	case CAUSE_LAUNCH_OVERHEAD:
		json_u64(j, "kernels_shorter_than_launch", c->aux);
		break;
	case CAUSE_MEMORY_BANDWIDTH:
	case CAUSE_COMPUTE_BOUND:
	case CAUSE_LATENCY_BOUND: {
		int cls = busy_class(k);
		const double *b = fd->ctr.class_busy[cls];
		int unit = counters_top_unit(&fd->ctr, cls), u;

		if (c->status == CS_UNKNOWN) {
			json_str(j, "reason", !fd->has_gpu     ? "no GPU timestamps" :
					      !fd->ctr.has     ? (fd->ctr.absent ? fd->ctr.absent :
								 "no hardware counters") :
								 "no pipe counters in this trace "
								 "(format before 1.7)");
			break;
		}
		if (k == CAUSE_MEMORY_BANDWIDTH) {
			json_u64(j, "device_copy_ns", fd->device_copy_ns);
			json_u64(j, "device_copies", fd->nr_device_copies);
		}
		/* The counters while busy (counters.h), over the class's samples */
		json_double(j, "dram_pct", b[TRACE_PM_DRAM], 2);
		json_double(j, "sm_throughput_pct", b[TRACE_PM_SM_THROUGHPUT], 2);
		json_double(j, "tensor_pct", b[TRACE_PM_TENSOR], 2);
		json_pm_values(j, "busy", b);
		/* The unit that names it: a memory level or a pipe (null: none, or unknown) */
		if (unit >= 0 && cls != PM_CLASS_LATENCY)
			json_str(j, cls == PM_CLASS_BANDWIDTH ? "level" : "pipe",
				 counters_slot_name(unit));
		else if (cls != PM_CLASS_LATENCY)
			json_null(j, cls == PM_CLASS_BANDWIDTH ? "level" : "pipe");
		if (cls == PM_CLASS_COMPUTE)
			json_bool(j, "used_well", unit >= 0 && pm_pipe_is_good(unit));
		json_object_begin(j, "time_by_unit_ns");
		for (u = 0; u < TRACE_PM_NR_SLOTS; u++)
			if (fd->ctr.unit_ns[cls][u])
				json_u64(j, counters_slot_name(u), fd->ctr.unit_ns[cls][u]);
		if (fd->ctr.unit_ns[cls][TRACE_PM_NR_SLOTS])
			json_u64(j, "unknown", fd->ctr.unit_ns[cls][TRACE_PM_NR_SLOTS]);
		json_object_end(j);
		break;
	}
	default:
		break;
	}
	if (k != CAUSE_MEMORY_CAPACITY)
		json_u64(j, "count", c->count);
	json_array_begin(j, "sites");
	for (i = 0; i < c->nr_sites; i++) {
		json_object_begin(j, NULL);
		if (k == CAUSE_LOW_PARALLELISM)
			json_name(j, "kernel", "kernel_mangled", c->sites[i].what);
		else
			json_str(j, "what", c->sites[i].what);	/* an entry point, a copy */
		if (k == CAUSE_MEMCPY)
			json_name(j, "memory", "memory_mangled", c->sites[i].after);
		else
			json_name(j, "after", "after_mangled", c->sites[i].after);
		json_u64(j, "count", c->sites[i].count);
		json_u64(j, "time_ns", c->sites[i].time_ns);
		/* A sampled run: the site's time taken over the whole window, as its cause's. */
		if (fd->sampling.is_sampled && c->time_ns)
			json_u64(j, "est_ns", (uint64_t)((double)c->sites[i].time_ns *
							 (double)c->est_ns / (double)c->time_ns));
		else
			json_null(j, "est_ns");
		if (k == CAUSE_LOW_PARALLELISM)
			json_double(j, "fill_pct",
				    c->sites[i].count ? 100 * c->sites[i].value / c->sites[i].count : 0,
				    2);
		if (k == CAUSE_MEMCPY)
			json_u64(j, "bytes", sat_u64(c->sites[i].value));
		report_json_where(j, m, c->sites[i].stack,
				  k == CAUSE_CPU_BOUND ? c->sites[i].from_stack : 0);
		json_object_end(j);
	}
	json_array_end(j);
	/* The cause's time by place in the program alone, whatever the entry point. */
	json_array_begin(j, "places");
	for (i = 0; i < c->nr_places; i++) {
		json_object_begin(j, NULL);
		json_where_of(j, "where", m, c->places[i].stack);
		json_u64(j, "count", c->places[i].count);
		json_u64(j, "time_ns", c->places[i].time_ns);
		json_object_end(j);
	}
	json_array_end(j);
	json_u64(j, "placed_ns", c->placed_ns);
	json_object_end(j);
	json_str(j, "advice", findings_advice(fd, k));
	json_object_end(j);
}

static void json_attribution(struct json *j, const struct model *m, const struct stats *s,
			     const struct findings *fd)
{
	char line[256];
	int r, k;

	json_array_begin(j, "attribution");
	for (r = 0; r < fd->nr_ranked; r++)
		json_cause(j, m, fd, fd->ranked[r]);
	for (k = 0; k < NR_CAUSES; k++)
		if (fd->causes[k].status == CS_SIGNAL || fd->causes[k].status == CS_UNKNOWN)
			json_cause(j, m, fd, k);
	json_array_end(j);

	json_object_begin(j, "verdict");
	json_str(j, "primary", fd->primary >= 0 ? cause_name(fd->primary) :
			       fd->has_gpu	 ? "none" :
						   "unknown");
	json_str(j, "summary", fd->summary);
	json_str(j, "excluded", report_left_out(line, sizeof(line), s, fd));
	json_str(j, "framework", framework_name(fd->framework));
	json_object_begin(j, "signals");
	if (fd->is_memory_full >= 0)
		json_bool(j, "memory_full", fd->is_memory_full);
	else
		json_null(j, "memory_full");
	if (fd->memory_pct >= 0)
		json_double(j, "memory_peak_pct", fd->memory_pct, 2);
	else
		json_null(j, "memory_peak_pct");
	if (fd->has_gpu) {
		json_double(j, "gpu_busy_pct", fd->busy_pct, 2);
		json_double(j, "sm_fill_pct", fd->fill_pct, 2);
		json_double(j, "kernels_per_s", fd->kernels_per_s, 1);
		json_double(j, "copy_bytes_per_s", fd->copy_bytes_per_s, 0);
	} else {
		json_null(j, "gpu_busy_pct");
		json_null(j, "sm_fill_pct");
		json_null(j, "kernels_per_s");
		json_null(j, "copy_bytes_per_s");
	}
	if (s->loop.steady)
		json_double(j, "steps_per_s", s->loop.per_s, 3);
	else
		json_null(j, "steps_per_s");
	if (fd->ctr.has) {
		json_double(j, "sm_active_pct", fd->ctr.mean[TRACE_PM_SM_ACTIVE], 2);
		json_double(j, "dram_bandwidth_pct", fd->ctr.mean[TRACE_PM_DRAM], 2);
		json_double(j, "sm_throughput_pct", fd->ctr.mean[TRACE_PM_SM_THROUGHPUT], 2);
		json_double(j, "tensor_pct", fd->ctr.mean[TRACE_PM_TENSOR], 2);
	} else {
		json_null(j, "sm_active_pct");
		json_null(j, "dram_bandwidth_pct");
		json_null(j, "sm_throughput_pct");
		json_null(j, "tensor_pct");
	}
	json_object_end(j);
	json_array_begin(j, "ranked");
	for (r = 0; r < fd->nr_ranked; r++)
		json_str(j, NULL, cause_name(fd->ranked[r]));
	json_array_end(j);
	json_object_end(j);

	json_object_begin(j, "replay");
	json_bool(j, "done", fd->replay.done);
	if (fd->replay.done) {
		json_null(j, "why_not");
		json_u64(j, "start_ns", since(fd->replay.start, s->span_start));
		json_u64(j, "end_ns", since(fd->replay.end, s->span_start));
		json_u64(j, "steps", fd->replay.steps);
		json_u64(j, "windows", fd->replay.windows);
		json_bool(j, "part", fd->replay.is_part);
		json_u64(j, "items", fd->replay.items);
		json_u64(j, "recorded_ns", fd->replay.recorded_ns);
		json_u64(j, "replayed_ns", fd->replay.replayed_ns);
		json_double(j, "error_pct", fd->replay.error_pct, 3);
	} else {
		json_str(j, "why_not", fd->replay.why ? fd->replay.why : "not asked");
	}
	json_object_end(j);
}

/* ---- Several processes ---- */

void combined_add(struct combined *c, const struct stats *s, const struct findings *fd)
{
	int k;

	c->nr++;
	c->window_ns += fd->window_ns;
	c->nr_replayed += fd->replay.done;
	for (k = 0; k < NR_CAUSES; k++) {
		if (fd->causes[k].has_saving) {
			c->saving_ns[k] += fd->causes[k].saving_ns;
			c->has_saving[k] = 1;
		}
		if (fd->causes[k].status == CS_MEASURED) {
			c->cause_ns[k] += fd->causes[k].time_ns;
			c->is_cause_measured[k] = 1;
		}
	}
	c->nr_memory_full += fd->is_memory_full > 0;
	c->launches += s->counts.launches;
	c->syncs += s->counts.syncs;
	c->memcpys += s->counts.memcpys;
	c->allocs += s->counts.allocs;
	if (fd->has_gpu) {
		c->busy_sum += fd->busy_pct;
		c->nr_busy++;
	}
}

/* Every process replayed: the causes ranked by what fixing each saves, as one report's. */
int combined_by_saving(const struct combined *c)
{
	return c->nr && c->nr_replayed == c->nr && c->window_ns;
}

double combined_pct(const struct combined *c, uint64_t ns)
{
	return c->window_ns ? 100.0 * (double)ns / (double)c->window_ns : 0;
}

/* The causes to list, ranked (findings_rank_by_saving's rule when every process was
 * replayed, else by time lost); returns how many. */
int combined_ranked(const struct combined *c, int *out)
{
	int k, i, n = 0, by_saving = combined_by_saving(c);

	for (k = 0; k < NR_CAUSES; k++)
		if (c->is_cause_measured[k])
			out[n++] = k;
	for (i = 1; i < n; i++) {	/* insertion sort: at most NR_CAUSES */
		int x = out[i], j = i;

		while (j > 0) {
			int y = out[j - 1], before;

			if (by_saving && c->has_saving[x] != c->has_saving[y])
				before = c->has_saving[x];
			else if (by_saving && c->has_saving[x])
				before = c->saving_ns[x] > c->saving_ns[y];
			else
				before = c->cause_ns[x] > c->cause_ns[y];
			if (!before)
				break;
			out[j] = y;
			j--;
		}
		out[j] = x;
	}
	return n;
}

int combined_primary(const struct combined *c)
{
	int ranked[NR_CAUSES], n = combined_ranked(c, ranked), i;

	for (i = 0; i < n; i++) {
		int k = ranked[i];

		if (combined_by_saving(c) && c->has_saving[k] ?
			    combined_pct(c, c->saving_ns[k]) >= PRIMARY_MIN_SAVING_PCT :
			    combined_pct(c, c->cause_ns[k]) >= PRIMARY_MIN_PCT)
			return k;
		if (!combined_by_saving(c))
			return -1;
	}
	return -1;
}

void report_print_combined_text(FILE *f, const struct combined *c)
{
	char a[32];
	int ranked[NR_CAUSES], n, i, k, primary = combined_primary(c);

	fprintf(f, "\n# combined: %d processes, %s of GPU windows, mean GPU busy %.1f%%, "
		   "%d with memory full\n",
		c->nr, fmt_ns(a, sizeof(a), c->window_ns), c->nr_busy ? c->busy_sum / c->nr_busy : 0,
		c->nr_memory_full);
	fprintf(f, "verdict: %s%s\n", primary >= 0 ? cause_name(primary) : "none",
		combined_by_saving(c) ? " (ranked by what fixing each saves, replayed)" :
					" (ranked by time lost: not every process was replayed)");
	n = combined_ranked(c, ranked);
	for (i = 0; i < n; i++) {
		k = ranked[i];
		fprintf(f, "  %-16s %10s %5.1f%%", cause_name(k), fmt_ns(a, sizeof(a), c->cause_ns[k]),
			combined_pct(c, c->cause_ns[k]));
		if (combined_by_saving(c) && c->has_saving[k])
			fprintf(f, "  saves %5.1f%%", combined_pct(c, c->saving_ns[k]));
		fprintf(f, "\n");
	}
}

void report_json_combined(struct json *j, const struct combined *c)
{
	int ranked[NR_CAUSES], n, i, k, primary = combined_primary(c);

	json_object_begin(j, "combined");
	json_u64(j, "processes", (uint64_t)c->nr);
	json_u64(j, "span_ns", c->window_ns);
	json_u64(j, "launches", c->launches);
	json_u64(j, "syncs", c->syncs);
	json_u64(j, "memcpys", c->memcpys);
	json_u64(j, "allocs", c->allocs);
	json_u64(j, "processes_with_memory_full", (uint64_t)c->nr_memory_full);
	if (c->nr_busy)
		json_double(j, "mean_busy_pct", c->busy_sum / c->nr_busy, 2);
	else
		json_null(j, "mean_busy_pct");
	json_array_begin(j, "attribution");
	n = combined_ranked(c, ranked);
	for (i = 0; i < n; i++) {
		k = ranked[i];
		json_object_begin(j, NULL);
		json_str(j, "cause", cause_name(k));
		json_u64(j, "time_ns", c->cause_ns[k]);
		json_double(j, "share_pct", combined_pct(c, c->cause_ns[k]), 2);
		if (combined_by_saving(c) && c->has_saving[k]) {
			json_u64(j, "saving_ns", c->saving_ns[k]);
			json_double(j, "saving_pct", combined_pct(c, c->saving_ns[k]), 2);
		} else {
			json_null(j, "saving_ns");
			json_null(j, "saving_pct");
		}
		json_object_end(j);
	}
	json_array_end(j);
	json_object_begin(j, "verdict");
	json_str(j, "primary", primary >= 0 ? cause_name(primary) : "none");
	json_str(j, "ranked_by", combined_by_saving(c) ? "saving" : "time");
	json_object_end(j);
	json_object_end(j);
}

/* ---- The job: several ranks' traces as one (analysis/job.h) ---- */

/* "rank 1 (pid 4243)", or the pid alone without a rank. */
static const char *rank_label(char *buf, size_t n, const struct job_rank *r)
{
	if (r->rank >= 0)
		snprintf(buf, n, "rank %d (pid %u)", (int)r->rank, r->pid);
	else
		snprintf(buf, n, "pid %u", r->pid);
	return buf;
}

void report_print_job_text(FILE *f, const struct job *j)
{
	char a[32], b[32], l[64];
	size_t i;

	if (!j->is_computed || j->nr_ranks < 2)
		return;
	fprintf(f, "\n# job: %zu ranks%s", j->nr_ranks,
		j->is_one_host ? " on one host" : ", clocks aligned by the collectives' ends");
	if (j->why_not) {
		fprintf(f, "; collectives not matched: %s\n", j->why_not);
		return;
	}
	fprintf(f, ", %llu collectives matched across ranks (%zu kernel name%s), %llu kernels "
		   "unmatched\n",
		(unsigned long long)j->nr_matched, j->nr_names, j->nr_names == 1 ? "" : "s",
		(unsigned long long)j->nr_unmatched);
	fprintf(f, "  skew (first to last arrival) mean %s, max %s\n",
		fmt_ns(a, sizeof(a), j->skew_sum_ns / j->nr_matched),
		fmt_ns(b, sizeof(b), j->skew_max_ns));
	for (i = 0; i < j->nr_ranks; i++) {
		const struct job_rank *r = &j->ranks[i];

		fprintf(f, "  %-22s comm %10s, %5.1f%% overlapped; waited %10s in collectives; "
			   "last at %llu",
			rank_label(l, sizeof(l), r), fmt_ns(a, sizeof(a), r->comm_ns),
			r->comm_ns ? 100.0 * (double)r->comm_overlap_ns / (double)r->comm_ns : 0.0,
			fmt_ns(b, sizeof(b), r->wait_ns), (unsigned long long)r->nr_last);
		if (!j->is_one_host)
			fprintf(f, "; clock %+.3f ms", (double)r->offset_ns / 1e6);
		fprintf(f, "\n");
	}
	if (j->straggler < 0) {
		fprintf(f, "  straggler: none (every collective's ranks arrived together)\n");
		return;
	}
	{
		const struct job_rank *s = &j->ranks[j->straggler];

		fprintf(f, "  straggler: %s arrived last at %llu of %llu collectives; waiting for it "
			   "cost the job %s (%s each time)\n",
			rank_label(l, sizeof(l), s), (unsigned long long)s->nr_last,
			(unsigned long long)j->nr_matched, fmt_ns(a, sizeof(a), s->cost_ns),
			fmt_ns(b, sizeof(b), s->nr_last ? s->cost_ns / s->nr_last : 0));
		if (j->straggler_cause >= 0) {
			int k;

			fprintf(f, "             what made it late: %s, %s more than the other ranks' "
				   "median",
				cause_name(j->straggler_cause),
				fmt_ns(a, sizeof(a), j->straggler_excess_ns));
			/* close seconds: a cause half as far above or more */
			for (k = 1; k < j->nr_excess && k < 3; k++) {
				int c = j->excess_order[k];

				if (j->excess_ns[c] < j->straggler_excess_ns - j->excess_ns[c])
					break;
				fprintf(f, "; %s, %s", cause_name(c),
					fmt_ns(a, sizeof(a), j->excess_ns[c]));
			}
			fprintf(f, "\n");
		}
		if (s->worst_ns) {
			char *name = name_readable(j->names[s->worst_name], NAME_WIDTH);

			if (s->nr_steps)
				fprintf(f, "             late in %llu of its %zu steps; ",
					(unsigned long long)s->steps_late, s->nr_steps);
			else
				fprintf(f, "             ");
			fprintf(f, "the latest: %s", fmt_ns(a, sizeof(a), s->worst_ns));
			if (s->worst_step)
				fprintf(f, " in step %u", s->worst_step);
			fprintf(f, " (");
			print_clean(f, name, SIZE_MAX);
			fprintf(f, " #%llu)", (unsigned long long)s->worst_instance);
			if (job_latest_part(s) >= 0)
				fprintf(f, "; that step's idle time mostly %s",
					gap_part_name(job_latest_part(s)));
			fprintf(f, "\n");
			free(name);
		}
	}
}

void report_json_job(struct json *js, const struct job *j)
{
	size_t i;

	if (!j->is_computed || j->nr_ranks < 2)
		return;
	json_object_begin(js, "job");
	json_u64(js, "ranks", j->nr_ranks);
	json_bool(js, "one_host", j->is_one_host);
	json_str(js, "not_matched", j->why_not);
	json_u64(js, "collectives_matched", j->nr_matched);
	json_u64(js, "kernels_unmatched", j->nr_unmatched);
	json_array_begin(js, "collective_kernels");
	for (i = 0; i < j->nr_names; i++)
		json_str(js, NULL, j->names[i]);
	json_array_end(js);
	json_u64(js, "skew_mean_ns", j->nr_matched ? j->skew_sum_ns / j->nr_matched : 0);
	json_u64(js, "skew_max_ns", j->skew_max_ns);
	json_array_begin(js, "per_rank");
	for (i = 0; i < j->nr_ranks; i++) {
		const struct job_rank *r = &j->ranks[i];

		json_object_begin(js, NULL);
		json_str(js, "trace", r->path);
		json_i64(js, "rank", r->rank);
		json_u64(js, "pid", r->pid);
		json_str(js, "host", r->host);
		json_i64(js, "clock_offset_ns", r->offset_ns);
		json_u64(js, "comm_ns", r->comm_ns);
		json_u64(js, "comm_overlap_ns", r->comm_overlap_ns);
		json_u64(js, "comm_kernels", r->nr_comm);
		json_u64(js, "comm_kernels_not_kept", r->ops_dropped);
		json_u64(js, "wait_ns", r->wait_ns);
		json_u64(js, "arrived_last", r->nr_last);
		json_u64(js, "cost_ns", r->cost_ns);
		json_object_end(js);
	}
	json_array_end(js);
	if (j->straggler >= 0) {
		const struct job_rank *s = &j->ranks[j->straggler];

		json_object_begin(js, "straggler");
		json_u64(js, "index", (uint64_t)j->straggler);
		json_i64(js, "rank", s->rank);
		json_u64(js, "pid", s->pid);
		json_u64(js, "arrived_last", s->nr_last);
		json_u64(js, "cost_ns", s->cost_ns);
		json_u64(js, "cost_each_ns", s->nr_last ? s->cost_ns / s->nr_last : 0);
		json_str(js, "cause", j->straggler_cause >= 0 ? cause_name(j->straggler_cause) : NULL);
		json_u64(js, "cause_excess_ns", j->straggler_excess_ns);
		json_array_begin(js, "causes");
		for (i = 0; i < (size_t)j->nr_excess; i++) {
			json_object_begin(js, NULL);
			json_str(js, "cause", cause_name(j->excess_order[i]));
			json_u64(js, "excess_ns", j->excess_ns[j->excess_order[i]]);
			json_object_end(js);
		}
		json_array_end(js);
		json_u64(js, "steps", s->nr_steps);
		json_u64(js, "steps_late", s->steps_late);
		if (s->worst_ns) {
			json_object_begin(js, "latest");
			json_u64(js, "late_ns", s->worst_ns);
			json_str(js, "collective", j->names[s->worst_name]);
			json_u64(js, "instance", s->worst_instance);
			if (s->worst_step) {
				json_u64(js, "step", s->worst_step);
				json_str(js, "step_idle_mostly", job_latest_part(s) >= 0 ?
									 gap_part_name(job_latest_part(s)) :
									 NULL);
			} else {
				json_null(js, "step");
				json_null(js, "step_idle_mostly");
			}
			json_object_end(js);
		} else {
			json_null(js, "latest");
		}
		json_object_end(js);
	} else {
		json_null(js, "straggler");
	}
	json_object_end(js);
}
