// SPDX-License-Identifier: MIT
/*
 * diff_output.c - printing a comparison of two runs: text for people (headline figures, then
 * each section biggest change first, noise labelled; the step time with its interval, the
 * gate's metric and why) and JSON (schema gpushim.diff/1, README "Comparing two runs"). Formats only;
 * computes nothing.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "diff_output.h"
#include "output.h"
#include "util/demangle.h"

static const char *kind_name(int kind)
{
	switch (kind) {
	case DK_RUN:
		return "run";
	case DK_CAUSE:
		return "cause";
	case DK_SAVING:
		return "saving";
	case DK_COUNT:
		return "count";
	case DK_KERNEL:
		return "kernel";
	case DK_API:
		return "api";
	case DK_PLACE:
		return "place";
	default:
		return "copy";
	}
}

static const char *unit_name(int unit)
{
	switch (unit) {
	case DU_NS:
		return "ns";
	case DU_PCT:
		return "pct";
	case DU_BYTES:
		return "bytes";
	case DU_PER_S:
		return "per_s";
	default:
		return "count";
	}
}

static int is_step_row(const struct diff_row *w)
{
	return w->kind == DK_RUN && (!strcmp(w->key, "step_time") || !strcmp(w->key, "steps_per_s"));
}

static const char *run_label(const char *key, int has_gpu)
{
	if (!strcmp(key, "span"))
		return has_gpu ? "span (GPU window)" : "span (calls)";
	if (!strcmp(key, "gpu_busy_pct"))
		return "GPU busy";
	if (!strcmp(key, "sm_fill_pct"))
		return "SMs filled";
	if (!strcmp(key, "lost"))
		return "time lost";
	if (!strcmp(key, "step_time"))
		return "step time (steady mean)";
	if (!strcmp(key, "steps_per_s"))
		return "steps/s (1 / step time)";
	return "memory peak";
}

/* A value in its unit, for people. */
static char *fmt_value(char *buf, size_t n, int unit, double v)
{
	switch (unit) {
	case DU_NS:
		return fmt_ns(buf, n, v > 0 ? (uint64_t)v : 0);
	case DU_BYTES:
		return fmt_bytes(buf, n, v > 0 ? (uint64_t)v : 0);
	case DU_PCT:
		snprintf(buf, n, "%.1f%%", v);
		return buf;
	case DU_PER_S:
		snprintf(buf, n, "%.2f/s", v);
		return buf;
	default:
		return fmt_count(buf, n, v > 0 ? (uint64_t)v : 0);
	}
}

/* A signed change in its unit: "+1.23 ms", "-4 pts", "+20". */
static char *fmt_delta(char *buf, size_t n, int unit, double d)
{
	char tmp[40];

	if (unit == DU_PCT) {
		snprintf(buf, n, "%+.1f pts", d);
		return buf;
	}
	fmt_value(tmp, sizeof(tmp), unit, fabs(d));
	snprintf(buf, n, "%s%s", d < 0 ? "-" : "+", tmp);
	return buf;
}

static const char *status_text(const struct diff_row *w)
{
	switch (w->status) {
	case DS_SAME:
		return "same";
	case DS_NOISE:
		return "within noise";
	case DS_BETTER:
		return "better";
	case DS_WORSE:
		return "WORSE";
	case DS_ADDED:
		return "added";
	case DS_REMOVED:
		return "removed";
	default:
		return "changed";
	}
}

static const char *gate_subject(int metric)
{
	return metric == DM_BUSY ? "GPU busy" : metric == DM_LOST ? "time lost" :
		metric == DM_STEP ? "step time" : "span";
}

/* How the metric moved, from NEW's side: worse_by > 0 is the bad direction. */
static const char *gate_verb(int metric, double worse_by)
{
	if (metric == DM_BUSY)
		return worse_by > 0 ? "dropped" : "rose";
	return worse_by > 0 ? "grew" : "shrank";
}

static void print_side(FILE *f, const char *label, const struct diff_side *side)
{
	int i;

	fprintf(f, "# %s: %d trace%s:", label, side->nr_paths, side->nr_paths == 1 ? "" : "s");
	for (i = 0; i < side->nr_paths && i < 4; i++) {
		fputc(' ', f);
		print_clean(f, side->paths[i], 200);
	}
	if (side->nr_paths > 4)
		fprintf(f, " ...");
	fputc('\n', f);
}

/* Each side's steady steps, and how their time is judged. */
static void print_steps(FILE *f, const struct run_summary *a, const struct run_summary *b)
{
	fprintf(f, "# steady steps: base %zu%s%s%s, new %zu%s%s%s", a->nr_steps,
		a->steps_source ? " (" : "", a->steps_source ? a->steps_source : "",
		a->steps_source ? ")" : "", b->nr_steps, b->steps_source ? " (" : "",
		b->steps_source ? b->steps_source : "", b->steps_source ? ")" : "");
	if (run_has_steps(a) && run_has_steps(b))
		fprintf(f, "; step time changed when its %.0f%% CI (Welch) excludes 0\n",
			DIFF_STEP_LEVEL * 100);
	else
		fprintf(f, "; step time needs %d a side\n", DIFF_STEPS_MIN);
	/* An NVTX range and an anchor kernel's period need not be the same work. */
	if (a->steps_source && b->steps_source && strcmp(a->steps_source, b->steps_source))
		fputs("# the runs' steps come from different sources: check that a step is the same "
		      "work\n",
		      f);
}

static void print_row(FILE *f, const struct diff_row *w, const char *label, int width)
{
	char b[48], n[48], d[48];
	size_t shown;

	fputs("  ", f);
	shown = print_clean(f, label, (size_t)width);
	fprintf(f, "%*s", shown < (size_t)width ? (int)(width - shown) : 0, "");
	fprintf(f, " %12s -> %-12s %12s", fmt_value(b, sizeof(b), w->unit, w->base),
		fmt_value(n, sizeof(n), w->unit, w->new), fmt_delta(d, sizeof(d), w->unit, w->delta));
	if (w->unit != DU_PCT && w->base != 0 && fabs(w->delta_pct) < 1000)
		fprintf(f, " %+7.1f%%", w->delta_pct);
	else if (w->unit != DU_PCT && w->base != 0)
		fprintf(f, " %7.0fx", w->new / w->base);
	else
		fprintf(f, " %8s", "");
	fprintf(f, "  %s", status_text(w));
	if (w->has_ci)
		fprintf(f, "  [%.0f%% CI %+.1f%% .. %+.1f%%]", DIFF_STEP_LEVEL * 100, w->ci_lo_pct,
			w->ci_hi_pct);
	fputc('\n', f);
}

#define MAX_ROWS 15		/* a section's, in text */

/* A row a section prints: of its kind, not noise nor the same. */
static int is_shown(const struct diff_row *w, int kind)
{
	return w->kind == kind && w->status != DS_NOISE && w->status != DS_SAME;
}

/* How the kernel rows a section prints name their kernels: one table's forms (name_table). */
static char **kernel_names(const struct diff_result *d, size_t width, size_t *n)
{
	const char *names[MAX_ROWS];
	size_t i;

	*n = 0;
	for (i = 0; i < d->nr_rows && *n < MAX_ROWS; i++)
		if (is_shown(&d->rows[i], DK_KERNEL))
			names[(*n)++] = d->rows[i].key;
	return name_table(names, *n, width);
}

static void print_section(FILE *f, const struct diff_result *d, int kind, const char *title,
			  size_t width)
{
	size_t i, shown = 0, noise = 0, nr_names = 0;
	char **names = kind == DK_KERNEL ? kernel_names(d, width, &nr_names) : NULL;

	for (i = 0; i < d->nr_rows; i++)
		if (d->rows[i].kind == kind)
			noise += d->rows[i].status == DS_NOISE;
	for (i = 0; i < d->nr_rows; i++) {
		const struct diff_row *w = &d->rows[i];
		char b[48], n[48], dd[48], label[96];

		if (!is_shown(w, kind))
			continue;
		if (!shown++)
			fprintf(f, "\n%s\n", title);
		if (shown > MAX_ROWS) {
			continue;
		}
		if (kind == DK_KERNEL) {
			fputs("  ", f);
			if (w->unit == DU_NS)
				fprintf(f, "%-8s %6llu x %-10s -> %6llu x %-10s %12s  ",
					w->what ? w->what : "", (unsigned long long)w->base_count,
					fmt_ns(b, sizeof(b), (uint64_t)w->base_mean),
					(unsigned long long)w->new_count,
					fmt_ns(n, sizeof(n), (uint64_t)w->new_mean),
					fmt_delta(dd, sizeof(dd), DU_NS, w->delta));
			else
				fprintf(f, "%-8s %6llu launches -> %6llu  ", w->what ? w->what : "",
					(unsigned long long)w->base_count,
					(unsigned long long)w->new_count);
			print_clean(f, names[shown - 1], SIZE_MAX);
			fputc('\n', f);
			continue;
		}
		if (kind == DK_PLACE) {		/* figures first: the place is long */
			fprintf(f, "  %12s -> %-12s %12s  %-8s  ",
				fmt_value(b, sizeof(b), w->unit, w->base),
				fmt_value(n, sizeof(n), w->unit, w->new),
				fmt_delta(dd, sizeof(dd), w->unit, w->delta), status_text(w));
			print_clean(f, w->key, SIZE_MAX);
			fputc('\n', f);
			continue;
		}
		if (kind == DK_COPY)
			snprintf(label, sizeof(label), "%s (%llu -> %llu copies)", w->key,
				 (unsigned long long)w->base_count, (unsigned long long)w->new_count);
		else
			snprintf(label, sizeof(label), "%s", w->key);
		print_row(f, w, label, kind == DK_API ? 34 : 26);
	}
	demangle_names_free(names, nr_names);
	if (shown > MAX_ROWS)
		fprintf(f, "  ... %zu more (--format json lists all)\n", shown - MAX_ROWS);
	if (noise && shown)
		fprintf(f, "  (%zu more %s within run-to-run noise)\n", noise,
			noise == 1 ? "difference" : "differences");
	else if (noise)
		fprintf(f, "\n%s: %zu %s, all within run-to-run noise\n", title, noise,
			noise == 1 ? "difference" : "differences");
}

/*
 * The gate's verdict. Where steps decide the metric (step time, or a side with steady steps)
 * a line before it says which metric and why, with the step time's interval.
 */
static void print_gate(FILE *f, const struct run_summary *a, const struct run_summary *b,
		       const struct diff_gate *g)
{
	const char *unit = g->metric == DM_SPAN || g->metric == DM_STEP ? "%" : " points";

	fputc('\n', f);
	if (g->metric == DM_STEP || a->nr_steps || b->nr_steps) {
		fprintf(f, "gate: %s (%s)", gate_subject(g->metric), g->why);
		if (g->has_ci)
			fprintf(f, " %+.2f%% [%.0f%% CI %+.2f%% .. %+.2f%%]", g->worse_by,
				DIFF_STEP_LEVEL * 100, g->ci_lo_pct, g->ci_hi_pct);
		fputc('\n', f);
	}
	if (g->is_unavailable && g->metric == DM_STEP)
		fprintf(f, "FAIL: --metric step needs %d steady steps or more on both sides (base %zu, "
			   "new %zu)\n",
			DIFF_STEPS_MIN, a->nr_steps, b->nr_steps);
	else if (g->is_unavailable)
		fprintf(f, "FAIL: --metric %s needs GPU timestamps on both sides\n",
			diff_metric_name(g->metric));
	else
		fprintf(f, "%s: %s %s by %.2f%s%s (--fail-on %.2f, metric %s)\n",
			g->is_failed ? "REGRESSION" : "ok", gate_subject(g->metric),
			gate_verb(g->metric, g->worse_by), fabs(g->worse_by), unit,
			!g->is_failed && g->has_ci && g->worse_by > g->fail_on ?
				", within noise: its interval holds 0" :
				"",
			g->fail_on, diff_metric_name(g->metric));
}

void diff_print_text(FILE *f, const struct diff_side *base, const struct diff_side *new,
		     const struct diff_result *d, const struct diff_gate *g, int is_wide)
{
	size_t i, width = is_wide ? 0 : NAME_WIDTH;

	fputs("# gpushim diff\n", f);
	print_side(f, "base", base);
	print_side(f, "new ", new);
	if (!base->summary->has_gpu || !new->summary->has_gpu)
		fputs("# without GPU timestamps on both sides: host-side figures only\n", f);
	fprintf(f, "# noise: run-level changes within %.1f%% of the base span are labelled as noise\n",
		d->noise_pct);
	if (base->summary->nr_steps || new->summary->nr_steps)
		print_steps(f, base->summary, new->summary);
	fputc('\n', f);
	for (i = 0; i < d->nr_rows; i++)
		if (d->rows[i].kind == DK_RUN)
			print_row(f, &d->rows[i],
				  run_label(d->rows[i].key,
					    base->summary->has_gpu && new->summary->has_gpu),
				  26);
	print_section(f, d, DK_CAUSE, "time lost by cause (biggest change first)", width);
	print_section(f, d, DK_SAVING,
		      "what fixing each cause alone saves (replay; biggest change first)", width);
	print_section(f, d, DK_COUNT, "counts", width);
	print_section(f, d, DK_KERNEL, "kernels (biggest change in GPU time first)", width);
	print_section(f, d, DK_COPY, "copies by direction (bytes)", width);
	print_section(f, d, DK_API, "API calls (biggest change in host time first)", width);
	print_section(f, d, DK_PLACE,
		      "time lost by place in the program (call stacks; biggest change first)", 0);
	if (g->is_set)
		print_gate(f, base->summary, new->summary, g);
}

static void json_side(struct json *j, const char *key, const struct diff_side *side)
{
	const struct run_summary *r = side->summary;
	int i;

	json_object_begin(j, key);
	json_array_begin(j, "traces");
	for (i = 0; i < side->nr_paths; i++)
		json_str(j, NULL, side->paths[i]);
	json_array_end(j);
	json_bool(j, "has_gpu", r->has_gpu);
	json_u64(j, "span_ns", r->span_ns);
	if (r->has_gpu) {
		json_double(j, "gpu_busy_pct", run_busy_pct(r), 2);
		json_double(j, "sm_fill_pct", run_fill_pct(r), 2);
		json_u64(j, "lost_ns", r->lost_total_ns);
		json_double(j, "lost_pct", run_lost_pct(r), 2);
	} else {
		json_null(j, "gpu_busy_pct");
		json_null(j, "sm_fill_pct");
		json_null(j, "lost_ns");
		json_null(j, "lost_pct");
	}
	json_u64(j, "memory_peak_bytes", r->peak_bytes);
	json_object_begin(j, "steps");
	json_str(j, "source", r->steps_source ? r->steps_source : "none");
	json_u64(j, "steady_steps", r->nr_steps);
	if (r->nr_steps)
		json_double(j, "mean_ns", run_step_mean_ns(r), 0);
	else
		json_null(j, "mean_ns");
	json_object_end(j);
	json_object_begin(j, "counts");
	for (i = 0; i < NR_RUN_COUNTS; i++)
		json_u64(j, run_count_name(i), r->counts[i]);
	json_object_end(j);
	json_object_end(j);
}

void diff_print_json(FILE *f, const struct diff_side *base, const struct diff_side *new,
		     const struct diff_result *d, const struct diff_gate *g)
{
	struct json j;
	size_t i;

	json_init(&j, f, 1);
	json_object_begin(&j, NULL);
	json_str(&j, "schema", "gpushim.diff/1");
	json_side(&j, "base", base);
	json_side(&j, "new", new);
	json_double(&j, "noise_pct", d->noise_pct, 2);
	json_array_begin(&j, "changes");
	for (i = 0; i < d->nr_rows; i++) {
		const struct diff_row *w = &d->rows[i];
		int prec = w->unit == DU_PCT ? 2 : w->unit == DU_PER_S ? 3 : 0;

		json_object_begin(&j, NULL);
		json_str(&j, "kind", kind_name(w->kind));
		json_str(&j, "key", w->key);	/* what the runs were matched by */
		if (w->kind == DK_KERNEL)
			json_name(&j, "name", "mangled", w->key);
		json_str(&j, "status", diff_status_name(w->status));
		json_str(&j, "unit", unit_name(w->unit));
		json_double(&j, "base", w->base, prec);
		json_double(&j, "new", w->new, prec);
		json_double(&j, "delta", w->delta, prec);
		if (w->base != 0)
			json_double(&j, "delta_pct", w->delta_pct, 2);
		else
			json_null(&j, "delta_pct");
		if (w->kind == DK_KERNEL || w->kind == DK_COPY || is_step_row(w)) {
			json_u64(&j, "base_count", w->base_count);
			json_u64(&j, "new_count", w->new_count);
		}
		if (w->kind == DK_KERNEL && w->unit == DU_NS) {
			json_double(&j, "base_mean_ns", w->base_mean, 0);
			json_double(&j, "new_mean_ns", w->new_mean, 0);
		}
		if (w->what)
			json_str(&j, "change", w->what);
		if (w->has_ci) {
			json_double(&j, "ci_lo_pct", w->ci_lo_pct, 2);
			json_double(&j, "ci_hi_pct", w->ci_hi_pct, 2);
		} else if (is_step_row(w)) {
			json_null(&j, "ci_lo_pct");
			json_null(&j, "ci_hi_pct");
		}
		json_object_end(&j);
	}
	json_array_end(&j);
	json_object_begin(&j, "gate");
	if (g->is_set) {
		json_str(&j, "metric", diff_metric_name(g->metric));
		json_str(&j, "why", g->why);
		json_double(&j, "fail_on", g->fail_on, 2);
		if (g->is_unavailable)
			json_null(&j, "worse_by");
		else
			json_double(&j, "worse_by", g->worse_by, 2);
		json_bool(&j, "failed", g->is_failed);
	} else {
		json_str(&j, "metric", diff_metric_name(g->metric));
		json_str(&j, "why", g->why);
		json_null(&j, "fail_on");
		json_null(&j, "worse_by");
		json_bool(&j, "failed", 0);
	}
	if (g->is_set && g->has_ci) {
		json_double(&j, "ci_lo_pct", g->ci_lo_pct, 2);
		json_double(&j, "ci_hi_pct", g->ci_hi_pct, 2);
	} else {
		json_null(&j, "ci_lo_pct");
		json_null(&j, "ci_hi_pct");
	}
	json_object_end(&j);
	json_object_end(&j);
	json_done(&j);
}
