// SPDX-License-Identifier: MIT
/*
 * report_figures.c - see report_figures.h: the HTML report's pictures as inline SVG. Each is
 * drawn in a viewBox SVG_W wide, as few paths as it has layers (a page of many slices and
 * steps stays some hundred kilobytes), with transparent boxes whose <title> names the figures
 * under the pointer: no script needed to read them.
 */
#include "report_figures.h"

#include <math.h>
#include <string.h>

#include "output.h"

/* ---- Colours and scales ---- */

/*
 * One colour per cause and gap part (a cause id, then enum gap_part), alike in every picture,
 * legend and table of the page, and apart from the busy colour and from each other.
 */
static const char *const part_colour[NR_GAP_PARTS] = {
	[CAUSE_HOST_SYNC] = "#e63946",	     [CAUSE_LAUNCH_OVERHEAD] = "#f4a261",
	[CAUSE_CPU_BOUND] = "#e9c46a",	     [CAUSE_MEMCPY] = "#8338ec",
	[CAUSE_ALLOCATION] = "#ff006e",	     [CAUSE_LOW_PARALLELISM] = "#3a86ff",
	[CAUSE_MEMORY_CAPACITY] = "#6d597a", [CAUSE_MEMORY_BANDWIDTH] = "#118ab2",
	[CAUSE_COMPUTE_BOUND] = "#06d6a0",   [CAUSE_LATENCY_BOUND] = "#073b4c",
	[GAP_NOISE] = "#ced4da",	     [GAP_DEPENDENCY] = "#8d99ae",
	[GAP_MODULE] = "#6c757d",
};
#define BUSY_COLOUR "#2a9d8f"
#define DARK_COLOUR "#adb5bd"		/* no GPU timestamps: hatched */
#define STEP_COLOUR "#577590"
#define OTHER_COLOUR "#ced4da"		/* steps outside the steady state */

static const char *const phase_colour[NR_PHASES] = { "#adb5bd", "#ffd166", "#06d6a0",
						     "#dee2e6" };

/* The idle parts in the order the pictures stack them: the gap causes, then what is no loss. */
static const int idle_order[] = { CAUSE_HOST_SYNC,  CAUSE_LAUNCH_OVERHEAD, CAUSE_CPU_BOUND,
				  CAUSE_MEMCPY,	    CAUSE_ALLOCATION,	   GAP_DEPENDENCY,
				  GAP_NOISE,	    GAP_MODULE };
#define NR_IDLE_ORDER (sizeof(idle_order) / sizeof(idle_order[0]))
/* The GPU row's layers, bottom up: busy, the idle parts, no GPU timestamps. */
#define NR_LAYERS (2 + NR_IDLE_ORDER)

/* The counters drawn: the seed's two, the SMs' throughput and the tensor pipe. */
static const struct {
	int slot;
	const char *name, *colour;
} ctr_lines[] = {
	{ TRACE_PM_SM_ACTIVE, "SM active", "#2a9d8f" },
	{ TRACE_PM_DRAM, "DRAM", "#8338ec" },
	{ TRACE_PM_SM_THROUGHPUT, "SM throughput", "#3a86ff" },
	{ TRACE_PM_TENSOR, "tensor", "#f77f00" },
};
#define NR_CTR_LINES (sizeof(ctr_lines) / sizeof(ctr_lines[0]))

/* The viewBox every picture is drawn in: SVG_W wide, row labels left of PLOT_X. */
#define SVG_W 1000
#define PLOT_X 130
#define PLOT_W (SVG_W - PLOT_X - 12)

/* The GPU row's columns: 4 units of the 1000 each, fine enough for a step pattern to show. */
#define GPU_COLUMNS 220
/*
 * The window is drawn apart when it is less than this share of the run: a steady state of
 * 1 s after 6 s of start-up is a sixth of the run's picture, its steps and counters unread.
 */
#define ZOOM_BELOW 0.8
/*
 * The step-time picture: a column per step up to this many, else each column the mean of
 * consecutive steps (a run keeps up to LOOP_MAX_SERIES): the page's size stays bounded.
 */
#define STEP_COLUMNS 300
/* A tick per step on the phase row up to this many steps in view; more would be a smear. */
#define STEP_TICKS_MAX 1500

const char *figure_colour(int part)
{
	return part >= 0 && part < NR_GAP_PARTS ? part_colour[part] : OTHER_COLOUR;
}

/* A share in [0, 1] of @v over @cap, 0 when @cap is. */
static double frac(uint64_t v, uint64_t cap)
{
	double x = cap ? (double)v / (double)cap : 0;

	return x < 0 ? 0 : x > 1 ? 1 : x;
}

/* The least of 1, 2, 5 x 10^k at or above @v (axes end on a round number). */
static double nice_ceil(double v)
{
	double e, m;

	if (!(v > 0))
		return 1;
	e = pow(10, floor(log10(v)));
	m = v / e;
	m = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
	return m * e;
}

/* A time axis' label: @t from the axis' start, in the unit of its step @step. */
static char *fmt_tick(char *buf, size_t n, uint64_t t, uint64_t step)
{
	if (step >= 100000000)
		snprintf(buf, n, "%.*f s", step >= 1000000000 ? 0 : 1, (double)t / 1e9);
	else if (step >= 100000)
		snprintf(buf, n, "%.*f ms", step >= 1000000 ? 0 : 1, (double)t / 1e6);
	else if (step >= 100)
		snprintf(buf, n, "%.*f us", step >= 1000 ? 0 : 1, (double)t / 1e3);
	else
		snprintf(buf, n, "%llu ns", (unsigned long long)t);
	return buf;
}

static void svg_begin(FILE *f, const char *cls, int height, const char *label)
{
	fprintf(f, "<svg class=\"chart %s\" xmlns=\"http://www.w3.org/2000/svg\" "
		   "viewBox=\"0 0 %d %d\" width=\"%d\" height=\"%d\" role=\"img\" aria-label=\"",
		cls, SVG_W, height, SVG_W, height);
	html_str(f, label);
	fputs("\">\n", f);
}

static void swatch(FILE *f, const char *colour, int is_hatched, const char *label,
		   const char *detail)
{
	if (is_hatched)
		fprintf(f, "<span><span class=\"sw\" style=\"background:repeating-linear-gradient("
			   "45deg,%s 0 2px,#fff 2px 4px)\"></span>",
			colour);
	else
		fprintf(f, "<span><span class=\"sw\" style=\"background:%s\"></span>", colour);
	html_str(f, label);
	if (detail) {
		fputc(' ', f);
		html_str(f, detail);
	}
	fputs("</span>\n", f);
}

static void row_label(FILE *f, int y, int height, const char *label, const char *sub)
{
	fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", PLOT_X - 8,
		y + height / 2, label);
	if (sub) {
		fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%d\" text-anchor=\"end\">", PLOT_X - 8,
			y + height / 2 + 13);
		html_str(f, sub);
		fputs("</text>\n", f);
	}
}

/*
 * An area from the baseline @base up to @top[c] over each column c, from @x[c] to @x[c + 1]:
 * one path of vertical and horizontal moves, a column that keeps its height costing nothing.
 * Stacked layers are drawn as such areas up to their running sums, the highest first: each
 * shows where it rises above the one drawn over it.
 */
static void area(FILE *f, const char *attrs, const double *x, const double *top, size_t n,
		 double base)
{
	double y = base;
	size_t c;

	fprintf(f, "<path %s d=\"M%.1f %.1f", attrs, x[0], base);
	for (c = 0; c < n; c++) {
		if (fabs(top[c] - y) >= 0.05) {
			y = top[c];
			fprintf(f, "V%.1f", y);
		}
		fprintf(f, "H%.1f", x[c + 1]);
	}
	fprintf(f, "V%.1fZ\"", base);
}

/* ---- The timeline ---- */

/*
 * What one picture of the timeline shows: the times [t0, t1) across the plot, drawn from
 * slices [first, last) of the timeline, @per of them a column of the GPU row.
 */
struct view {
	const struct timeline *tl;
	uint64_t t0, t1;
	size_t first, last, per;
};

static void view_init(struct view *v, const struct timeline *tl, uint64_t t0, uint64_t t1)
{
	v->tl = tl;
	v->t0 = t0;
	v->t1 = t1 > t0 ? t1 : t0 + 1;
	v->first = timeline_slice_of(tl, v->t0);
	v->last = timeline_slice_of(tl, v->t1 - 1) + 1;
	v->per = (v->last - v->first + GPU_COLUMNS - 1) / GPU_COLUMNS;
}

static size_t view_columns(const struct view *v)
{
	return (v->last - v->first + v->per - 1) / v->per;
}

/* Column @c's slices [*i0, *i1) and times [*s0, *s1). */
static void view_column(const struct view *v, size_t c, size_t *i0, size_t *i1, uint64_t *s0,
			uint64_t *s1)
{
	*i0 = v->first + c * v->per;
	*i1 = *i0 + v->per < v->last ? *i0 + v->per : v->last;
	*s0 = timeline_slice_start(v->tl, *i0);
	*s1 = *i1 < v->tl->nr_slices ? timeline_slice_start(v->tl, *i1) : v->tl->end;
}

static double xat(const struct view *v, uint64_t t)
{
	if (t <= v->t0)
		return PLOT_X;
	if (t >= v->t1)
		return PLOT_X + PLOT_W;
	return PLOT_X + (double)PLOT_W * (double)(t - v->t0) / (double)(v->t1 - v->t0);
}

/* Column @c's device time in each layer (NR_LAYERS), as shares of it stacked to at most 1. */
static void column_layers(const struct view *v, size_t c, double *out)
{
	const struct timeline *tl = v->tl;
	uint64_t sum[NR_LAYERS] = { 0 }, s0, s1, cap;
	size_t i, i0, i1, k;
	double below = 0;

	view_column(v, c, &i0, &i1, &s0, &s1);
	cap = (s1 - s0) * tl->nr_devices;
	for (i = i0; i < i1; i++) {
		sum[0] += tl->busy_ns[i];
		for (k = 0; k < NR_IDLE_ORDER; k++)
			sum[1 + k] += tl->idle_ns[i][idle_order[k]];
		sum[NR_LAYERS - 1] += tl->dark_ns[i];
	}
	/* Rounding and clipping can add past the column: the stack stops at its top. */
	for (k = 0; k < NR_LAYERS; k++) {
		out[k] = frac(sum[k], cap);
		if (below + out[k] > 1)
			out[k] = 1 - below;
		below += out[k];
	}
}

static const char *layer_name(size_t k)
{
	return k == 0		  ? "busy" :
	       k == NR_LAYERS - 1 ? "no GPU timestamps" :
				    gap_part_name(idle_order[k - 1]);
}

/* The time axis under the rows, with a light line across them at each tick. */
static void time_axis(FILE *f, const struct view *v, int top, int y)
{
	uint64_t range = v->t1 - v->t0, step = (uint64_t)nice_ceil((double)range / 8), t;
	char a[32];

	if (!step)
		step = 1;
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", PLOT_X, y,
		PLOT_X + PLOT_W, y);
	for (t = 0; t <= range; t += step) {
		double px = xat(v, v->t0 + t);

		fprintf(f, "<line class=\"grid\" x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>"
			   "<text class=\"m\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s"
			   "</text>\n",
			px, top, px, y, px, y + 13, fmt_tick(a, sizeof(a), t, step));
		if (range - t < step)
			break;
	}
}

/* Phases as bands, and a tick at the start of each step in view when not too many. */
static void row_phases(FILE *f, const struct stats *s, const struct view *v, int y, int height)
{
	const struct loop *l = &s->loop;
	size_t i, nr_in = 0;
	char a[32], b[32];
	int k;

	row_label(f, y, height, "phases", NULL);
	for (k = 0; k < NR_PHASES; k++) {
		const struct loop_phase_sum *p = &l->phase[k];
		double x0 = xat(v, p->start), x1 = xat(v, p->end);

		if (p->end <= p->start || p->end <= v->t0 || p->start >= v->t1)
			continue;
		fprintf(f, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\">"
			   "<title>%s: from +%s, %s</title></rect>\n",
			x0, y, x1 - x0 > 0.5 ? x1 - x0 : 0.5, height, phase_colour[k],
			loop_phase_name(k), fmt_ns(a, sizeof(a), p->start - v->tl->start),
			fmt_ns(b, sizeof(b), p->end - p->start));
		if (x1 - x0 > 8.0 * (double)strlen(loop_phase_name(k)))
			fprintf(f, "<text x=\"%.1f\" y=\"%d\">%s</text>\n", x0 + 4, y + height - 5,
				loop_phase_name(k));
	}
	for (i = 0; i < l->nr_series; i++)
		nr_in += l->series[i].start >= v->t0 && l->series[i].start < v->t1;
	if (!nr_in || nr_in > STEP_TICKS_MAX)
		return;
	fputs("<path stroke=\"#343a40\" stroke-width=\"0.6\" d=\"", f);
	for (i = 0; i < l->nr_series; i++)
		if (l->series[i].start >= v->t0 && l->series[i].start < v->t1)
			fprintf(f, "M%.1f %dv5", xat(v, l->series[i].start), y + height);
	fprintf(f, "\"><title>%zu steps here, a tick at each one's start</title></path>\n", nr_in);
}

/*
 * The GPU row: per column, the share of its device time busy, idle by each part, dark, as
 * stacked areas (a path a layer), and a box a column that names them on hover.
 */
static void row_gpu(FILE *f, const struct view *v, int y, int height, const char *id)
{
	size_t nc = view_columns(v), c, k, i0, i1;
	uint64_t total[NR_LAYERS] = { 0 }, s0, s1;
	double val[NR_LAYERS], x[GPU_COLUMNS + 1], top[GPU_COLUMNS];
	char a[32], b[32], attrs[160];
	int layer;

	row_label(f, y, height, "GPU", v->tl->nr_devices > 1 ? "all devices" : "by cause");
	fprintf(f, "<defs><pattern id=\"%s\" width=\"4\" height=\"4\" "
		   "patternUnits=\"userSpaceOnUse\" patternTransform=\"rotate(45)\">"
		   "<rect width=\"2\" height=\"4\" fill=\"%s\"/></pattern></defs>\n",
		id, DARK_COLOUR);
	for (c = 0; c < nc; c++) {
		view_column(v, c, &i0, &i1, &s0, &s1);
		x[c] = xat(v, s0);
		x[c + 1] = xat(v, s1);
		for (; i0 < i1; i0++) {
			total[0] += v->tl->busy_ns[i0];
			for (k = 0; k < NR_IDLE_ORDER; k++)
				total[1 + k] += v->tl->idle_ns[i0][idle_order[k]];
			total[NR_LAYERS - 1] += v->tl->dark_ns[i0];
		}
	}
	for (layer = NR_LAYERS - 1; layer >= 0; layer--) {
		if (!total[layer])
			continue;
		for (c = 0; c < nc; c++) {
			double sum = 0;

			column_layers(v, c, val);
			for (k = 0; k <= (size_t)layer; k++)
				sum += val[k];
			top[c] = y + height * (1 - sum);
		}
		if (layer == NR_LAYERS - 1)
			snprintf(attrs, sizeof(attrs), "fill=\"url(#%s)\"", id);
		else
			snprintf(attrs, sizeof(attrs), "fill=\"%s\"",
				 layer ? part_colour[idle_order[layer - 1]] : BUSY_COLOUR);
		snprintf(attrs + strlen(attrs), sizeof(attrs) - strlen(attrs),
			 " data-layer=\"%s\" data-total-ns=\"%llu\"", layer_name((size_t)layer),
			 (unsigned long long)total[layer]);
		area(f, attrs, x, top, nc, y + height);
		fprintf(f, "><title>%s %s</title></path>\n", layer_name((size_t)layer),
			fmt_ns(a, sizeof(a), total[layer]));
	}
	for (k = 0; k < NR_LAYERS && !total[k]; k++)
		;
	if (k == NR_LAYERS)	/* host-only: nothing to stack */
		fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">no GPU "
			   "timestamps: GPU time unknown</text>\n",
			PLOT_X + PLOT_W / 2, y + height / 2);
	else
		fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%d\" text-anchor=\"end\">100%%"
			   "</text>\n",
			PLOT_X - 8, y + 9);
	for (c = 0; c < nc; c++) {
		view_column(v, c, &i0, &i1, &s0, &s1);
		column_layers(v, c, val);
		if (x[c + 1] - x[c] < 0.1)
			continue;
		fprintf(f, "<rect class=\"hit\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
			   "<title>+%s to +%s: busy %.0f%%",
			x[c], y, x[c + 1] - x[c], height, fmt_ns(a, sizeof(a), s0 - v->tl->start),
			fmt_ns(b, sizeof(b), s1 - v->tl->start), 100 * val[0]);
		for (k = 1; k < NR_LAYERS; k++)
			if (val[k] >= 0.005)
				fprintf(f, ", %s %.0f%%", layer_name(k), 100 * val[k]);
		fputs("</title></rect>\n", f);
	}
}

/* The live device bytes over the run: the most in each 32nd of it, and the least beneath. */
static void row_memory(FILE *f, const struct stats *s, const struct view *v, int y, int height)
{
	const struct s_mem_formation *fm = &s->mem.formation;
	double peak = (double)s->mem.peak_bytes;
	char a[32], b[32], c[32], d[32];
	size_t i;
	int pass;

	row_label(f, y, height, "memory", fmt_bytes(a, sizeof(a), s->mem.peak_bytes));
	for (pass = 0; pass < 2; pass++) {
		fprintf(f, "<path fill=\"%s\" data-layer=\"%s\" d=\"M%.1f %d",
			pass ? "#9d4edd" : "#e0c3fc", pass ? "memory least" : "memory most",
			xat(v, s->span_start), y + height);
		for (i = 0; i < fm->nr_series; i++) {
			const struct s_mem_point *p = &fm->series[i];
			uint64_t t0 = i ? fm->series[i - 1].end : s->span_start;
			uint64_t live = pass ? p->min_bytes : p->max_bytes;
			double yv = y + height * (1 - (double)live / peak);

			fprintf(f, "L%.1f %.1fH%.1f", xat(v, t0), yv, xat(v, p->end));
		}
		fprintf(f, "V%dZ\"/>\n", y + height);
	}
	fprintf(f, "<line stroke=\"#6d597a\" stroke-dasharray=\"3 2\" x1=\"%.1f\" y1=\"%d\" "
		   "x2=\"%.1f\" y2=\"%d\"><title>the peak, %s at +%s</title></line>\n",
		xat(v, s->mem.peak_ts), y, xat(v, s->mem.peak_ts), y + height,
		fmt_bytes(a, sizeof(a), s->mem.peak_bytes),
		fmt_ns(b, sizeof(b), s->mem.peak_ts - v->tl->start));
	for (i = 0; i < fm->nr_series; i++) {
		const struct s_mem_point *p = &fm->series[i];
		uint64_t t0 = i ? fm->series[i - 1].end : s->span_start;

		fprintf(f, "<rect class=\"hit\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
			   "<title>+%s: live %s to %s, ",
			xat(v, t0), y, xat(v, p->end) - xat(v, t0), height,
			fmt_ns(a, sizeof(a), t0 - v->tl->start),
			fmt_bytes(b, sizeof(b), p->min_bytes),
			fmt_bytes(c, sizeof(c), p->max_bytes));
		fprintf(f, "%s at its end</title></rect>\n", fmt_bytes(d, sizeof(d), p->end_bytes));
	}
}

/* The counters' means per stretch of the window (counters.h, its buckets), 0 to 100 %. */
static void row_counters(FILE *f, const struct findings *fd, const struct view *v, int y,
			 int height)
{
	const struct counters *c = &fd->ctr;
	char a[32], b[32];
	size_t k;
	int i;

	row_label(f, y, height, "counters", "% of peak");
	fprintf(f, "<line class=\"grid\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", PLOT_X,
		y + height / 2, PLOT_X + PLOT_W, y + height / 2);
	for (k = 0; k < NR_CTR_LINES; k++) {
		int is_open = 0, any = 0;

		for (i = 0; i < c->nr_buckets; i++)
			any |= !isnan(c->buckets[i].mean[ctr_lines[k].slot]);
		if (!any)
			continue;
		fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"1.6\" "
			   "data-layer=\"%s\" d=\"",
			ctr_lines[k].colour, ctr_lines[k].name);
		for (i = 0; i < c->nr_buckets; i++) {
			double val = c->buckets[i].mean[ctr_lines[k].slot];

			if (isnan(val)) {
				is_open = 0;
				continue;
			}
			val = val < 0 ? 0 : val > 100 ? 100 : val;
			fprintf(f, "%s%.1f %.1fH%.1f", is_open ? "L" : "M",
				xat(v, c->buckets[i].start), y + height * (1 - val / 100),
				xat(v, c->buckets[i].end));
			is_open = 1;
		}
		fputs("\"/>\n", f);
	}
	for (i = 0; i < c->nr_buckets; i++) {
		const struct ctr_bucket *bk = &c->buckets[i];

		fprintf(f, "<rect class=\"hit\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\">"
			   "<title>+%s for %s:",
			xat(v, bk->start), y, xat(v, bk->end) - xat(v, bk->start), height,
			fmt_ns(a, sizeof(a), bk->start - v->tl->start),
			fmt_ns(b, sizeof(b), bk->end - bk->start));
		for (k = 0; k < NR_CTR_LINES; k++)
			if (!isnan(bk->mean[ctr_lines[k].slot]))
				fprintf(f, " %s %.0f%%", ctr_lines[k].name,
					bk->mean[ctr_lines[k].slot]);
		for (k = 0; k < NR_CTR_LINES && isnan(bk->mean[ctr_lines[k].slot]); k++)
			;
		if (k == NR_CTR_LINES)
			fputs(" none sampled", f);
		fputs("</title></rect>\n", f);
	}
}

enum { ROW_PHASES = 1, ROW_MEMORY = 2, ROW_COUNTERS = 4 };

/* One picture of the timeline: @rows of them beside the GPU's, over view @v. */
static void panel(FILE *f, const struct stats *s, const struct findings *fd, const struct view *v,
		  int rows, const char *id, const char *label)
{
	int y = 6, top = 6;
	int height = 6 + (rows & ROW_PHASES ? 30 : 0) + 110 + (rows & ROW_MEMORY ? 76 : 0) +
		     (rows & ROW_COUNTERS ? 86 : 0) + 20;

	svg_begin(f, "timeline", height, label);
	if (rows & ROW_PHASES) {
		row_phases(f, s, v, y, 18);
		y += 30;
	}
	row_gpu(f, v, y, 100, id);
	y += 110;
	if (rows & ROW_MEMORY) {
		row_memory(f, s, v, y, 64);
		y += 76;
	}
	if (rows & ROW_COUNTERS) {
		row_counters(f, fd, v, y, 74);
		y += 86;
	}
	time_axis(f, v, top, y);
	fputs("</svg>\n", f);
}

void figure_timeline(FILE *f, const struct stats *s, const struct findings *fd,
		     const struct timeline *tl, int sec)
{
	const int has_phases = s->loop.found.source != STEPS_NONE;
	const int has_mem = s->mem.peak_bytes && s->mem.formation.nr_series;
	const int has_ctr = fd->ctr.has && fd->ctr.nr_buckets;
	struct view run, win;
	uint64_t end = tl->end > s->span_end ? tl->end : s->span_end;
	int is_zoom, rows;
	char a[32], b[32], id[32];
	size_t k;

	if (!tl->nr_slices) {
		fputs("<p class=\"note\">nothing ran: no timeline</p>\n", f);
		return;
	}
	view_init(&run, tl, tl->start, end);
	is_zoom = fd->has_gpu && fd->window_end > fd->window_start &&
		  (double)(fd->window_end - fd->window_start) <
			  ZOOM_BELOW * (double)(run.t1 - run.t0);
	rows = (has_phases ? ROW_PHASES : 0) | (has_mem ? ROW_MEMORY : 0) |
	       (has_ctr && !is_zoom ? ROW_COUNTERS : 0);
	fputs("<figure>\n", f);
	snprintf(id, sizeof(id), "dark%d", sec);
	panel(f, s, fd, &run, rows, id, "the run over time: phases, GPU busy and idle by cause, "
					"memory, counters");
	fputs("<figcaption>the run, from its start", f);
	if (is_zoom)
		fputs(" (the analysis window drawn apart below)", f);
	fputs("</figcaption>\n", f);
	if (is_zoom) {
		view_init(&win, tl, fd->window_start, fd->window_end);
		snprintf(id, sizeof(id), "dark%dw", sec);
		panel(f, s, fd, &win,
		      (has_phases ? ROW_PHASES : 0) | (has_ctr ? ROW_COUNTERS : 0), id,
		      "the analysis window over time: steps, GPU busy and idle by cause, counters");
		fprintf(f, "<figcaption>the analysis window%s: +%s to +%s</figcaption>\n",
			has_phases ? " (the steady state's GPU work)" : "",
			fmt_ns(a, sizeof(a), fd->window_start - tl->start),
			fmt_ns(b, sizeof(b), fd->window_end - tl->start));
	}
	fputs("<div class=\"legend\">\n", f);
	for (k = 0; k < tl->nr_slices && !tl->busy_ns[k]; k++)
		;
	if (k < tl->nr_slices)
		swatch(f, BUSY_COLOUR, 0, "busy", NULL);
	for (k = 0; k < NR_IDLE_ORDER; k++)
		if (tl->idle_total_ns[idle_order[k]])
			swatch(f, part_colour[idle_order[k]], 0, gap_part_name(idle_order[k]),
			       fmt_ns(a, sizeof(a), tl->idle_total_ns[idle_order[k]]));
	if (tl->nr_dark)
		swatch(f, DARK_COLOUR, 1, "no GPU timestamps", NULL);
	if (has_ctr)
		for (k = 0; k < NR_CTR_LINES; k++)
			swatch(f, ctr_lines[k].colour, 0, ctr_lines[k].name, NULL);
	fputs("</div>\n<figcaption>GPU: each column's device time busy (its operations) and idle "
	      "by the cause the analysis gave it",
	      f);
	if (has_phases)
		fputs(" (idle time is attributed in the steady state only)", f);
	if (has_mem)
		fputs("; memory: device bytes live, the most (light) and the least (dark) in each "
		      "32nd of the run",
		      f);
	if (has_ctr)
		fputs("; counters: means over stretches of the window", f);
	fputs("; times from the run's start. Hover for figures.</figcaption>\n</figure>\n", f);
}

/* ---- Causes ---- */

void figure_causes(FILE *f, const struct figure_cause *bars, int n)
{
	double top = 0, scale;
	int i, height = 24 * n + 26;

	if (!n)
		return;
	for (i = 0; i < n; i++) {
		double a = bars[i].share + (bars[i].share_ci > 0 ? bars[i].share_ci : 0);
		double b = bars[i].saving + (bars[i].saving_ci > 0 ? bars[i].saving_ci : 0);

		top = a > top ? a : top;
		top = b > top ? b : top;
	}
	top = nice_ceil(top > 100 ? 100 : top);
	scale = PLOT_W / top;
	svg_begin(f, "causes", height, "the causes: share of the time lost, and what fixing each "
				       "alone saves");
	for (i = 0; i < n; i++) {
		const struct figure_cause *c = &bars[i];
		const char *colour = figure_colour(c->cause);
		int y = 6 + 24 * i;

		fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s</text>\n", PLOT_X - 8,
			y + 14, cause_name(c->cause));
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"%s\" "
			   "fill-opacity=\"0.4\"><title>time lost: %.1f%% of the window</title>"
			   "</rect>\n",
			PLOT_X, y + 2, c->share * scale, colour, c->share);
		if (c->share_ci > 0)
			fprintf(f, "<path stroke=\"#343a40\" d=\"M%.1f %dH%.1f\"/>\n",
				PLOT_X + (c->share - c->share_ci) * scale, y + 6,
				PLOT_X + (c->share + c->share_ci) * scale);
		if (c->saving < 0)
			continue;
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"9\" fill=\"%s\">"
			   "<title>saving if fixed alone: %.1f%%</title></rect>\n",
			PLOT_X, y + 12, c->saving * scale, colour, c->saving);
		if (c->saving_ci > 0)
			fprintf(f, "<path stroke=\"#343a40\" d=\"M%.1f %dH%.1f\"/>\n",
				PLOT_X + (c->saving - c->saving_ci) * scale, y + 16,
				PLOT_X + (c->saving + c->saving_ci) * scale);
	}
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n"
		   "<text class=\"m\" x=\"%d\" y=\"%d\">0</text>"
		   "<text class=\"m\" x=\"%d\" y=\"%d\" text-anchor=\"end\">%g%%</text>\n"
		   "<text class=\"m\" x=\"%d\" y=\"%d\" text-anchor=\"middle\">light: time lost, "
		   "share of the window; solid: saving if fixed alone</text>\n</svg>\n",
		PLOT_X, height - 18, PLOT_X + PLOT_W, height - 18, PLOT_X, height - 6,
		PLOT_X + PLOT_W, height - 6, top, PLOT_X + PLOT_W / 2, height - 6);
}

/* ---- Steps ---- */

/* One column of the step-time picture: consecutive steps [i0, i1). */
struct step_col {
	size_t i0, i1;
	double mean_ns, max_ns;
	double idle[LOOP_NR_PARTS];	/* mean over the steps */
	int is_steady;			/* any of them */
};

static void step_col(const struct loop *l, size_t per, size_t c, struct step_col *sc)
{
	size_t i;
	int k;

	memset(sc, 0, sizeof(*sc));
	sc->i0 = c * per;
	sc->i1 = sc->i0 + per < l->nr_series ? sc->i0 + per : l->nr_series;
	for (i = sc->i0; i < sc->i1; i++) {
		double ns = (double)(l->series[i].end - l->series[i].start);
		const struct loop_idle *id = loop_step_idle(l, i);

		sc->mean_ns += ns;
		sc->max_ns = ns > sc->max_ns ? ns : sc->max_ns;
		for (k = 0; k < LOOP_NR_PARTS; k++)
			sc->idle[k] += (double)id->part[k];
		sc->is_steady |= loop_is_steady(l, i);
	}
	sc->mean_ns /= (double)(sc->i1 - sc->i0);
	for (k = 0; k < LOOP_NR_PARTS; k++)
		sc->idle[k] /= (double)(sc->i1 - sc->i0);
}

/*
 * The scale's top: the longest steady step's column (a warm-up step can be many times longer
 * and would flatten the rest; it is cut at the top, its length on hover).
 */
static double steps_top(const struct loop *l, size_t per, size_t ncol)
{
	double top = 0, any = 0;
	struct step_col sc;
	size_t c;

	for (c = 0; c < ncol; c++) {
		step_col(l, per, c, &sc);
		any = sc.max_ns > any ? sc.max_ns : any;
		if (sc.is_steady && sc.max_ns > top)
			top = sc.max_ns;
	}
	/* a little room above: the slowest steps' marks stand over their columns */
	return nice_ceil(1.05 * (top > 0 ? top : any));
}

void figure_steps(FILE *f, const struct loop *l)
{
	const int height = 190, y0 = 10, ph = 148;
	size_t n = l->nr_series, per, ncol, c, j;
	double ymax, colw, x[STEP_COLUMNS + 1], top[STEP_COLUMNS];
	char a[32], b[32], attrs[96];
	struct step_col sc;
	int k, layer;

	if (!n)
		return;
	per = (n + STEP_COLUMNS - 1) / STEP_COLUMNS;
	ncol = (n + per - 1) / per;
	ymax = steps_top(l, per, ncol);
	colw = (double)PLOT_W / (double)ncol;
	svg_begin(f, "steps", height, "each step's length, its idle time by cause");
	fprintf(f, "<line class=\"axis\" x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\"/>\n", PLOT_X,
		y0 + ph, PLOT_X + PLOT_W, y0 + ph);
	for (k = 0; k <= 2; k++)
		fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%s</text>\n",
			PLOT_X - 8, y0 + ph * (1 - k / 2.0) + 4,
			k ? fmt_ns(a, sizeof(a), (uint64_t)(ymax * k / 2)) : "0");
	/*
	 * Painted back to front: the steps outside the steady state, the steady ones, then the
	 * idle parts' running sums, the highest first.
	 */
	for (c = 0; c <= ncol; c++)
		x[c] = PLOT_X + colw * (double)c;
	for (layer = -2; layer < LOOP_NR_PARTS; layer++) {
		int part = layer < 0 ? layer : LOOP_NR_PARTS - 1 - layer;
		int any = 0;

		for (c = 0; c < ncol; c++) {
			double v = 0;

			step_col(l, per, c, &sc);
			if (part < 0) {
				v = sc.is_steady == (part == -1) ? sc.mean_ns : 0;
			} else {
				for (k = 0; k <= part; k++)
					v += sc.idle[k];
				if (sc.idle[part] <= 0)
					v = 0;	/* nothing of its own: not drawn */
			}
			any |= v > 0;
			top[c] = y0 + ph * (1 - (v < ymax ? v : ymax) / ymax);
		}
		if (!any)
			continue;
		snprintf(attrs, sizeof(attrs), "fill=\"%s\" data-layer=\"%s\"",
			 part == -2 ? OTHER_COLOUR :
			 part == -1 ? STEP_COLOUR :
				      figure_colour(loop_part_id(part)),
			 part == -2 ? "other steps" :
			 part == -1 ? "steady steps" :
				      gap_part_name(loop_part_id(part)));
		area(f, attrs, x, top, ncol, y0 + ph);
		fputs("/>\n", f);
	}
	if (per > 1) {		/* the longest of each column's steps */
		fputs("<path fill=\"none\" stroke=\"#343a40\" stroke-width=\"0.8\" d=\"", f);
		for (c = 0; c < ncol; c++) {
			step_col(l, per, c, &sc);
			fprintf(f, "%s%.1f %.1fH%.1f", c ? "L" : "M", PLOT_X + colw * (double)c,
				y0 + ph * (1 - (sc.max_ns < ymax ? sc.max_ns : ymax) / ymax),
				PLOT_X + colw * (double)(c + 1));
		}
		fputs("\"><title>the longest step of each column</title></path>\n", f);
	}
	if (l->steady && l->p50_ns)
		fprintf(f, "<line stroke=\"#343a40\" stroke-dasharray=\"4 3\" x1=\"%d\" "
			   "y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"><title>the median steady step, %s"
			   "</title></line>\n",
			PLOT_X, y0 + ph * (1 - (double)l->p50_ns / ymax), PLOT_X + PLOT_W,
			y0 + ph * (1 - (double)l->p50_ns / ymax), fmt_ns(a, sizeof(a), l->p50_ns));
	for (j = 0; j < l->nr_slowest; j++) {
		size_t st = l->slowest[j].step;
		double len = (double)(l->series[st].end - l->series[st].start);

		fprintf(f, "<circle fill=\"#e63946\" r=\"3.5\" cx=\"%.1f\" cy=\"%.1f\"><title>"
			   "slowest: step %zu, %s (",
			PLOT_X + colw * ((double)(st / per) + 0.5),
			y0 + ph * (1 - (len < ymax ? len : ymax) / ymax) - 5, st + 1,
			fmt_ns(a, sizeof(a), (uint64_t)len));
		html_str(f, l->slowest[j].why);
		fputs(")</title></circle>\n", f);
	}
	for (c = 0; c < ncol; c++) {
		double x0 = PLOT_X + colw * (double)c;

		step_col(l, per, c, &sc);
		if (per == 1)
			fprintf(f, "<rect class=\"hit\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
				   "height=\"%d\"><title>step %zu%s: %s",
				x0, y0, colw, ph, sc.i0 + 1, sc.is_steady ? "" : " (not steady)",
				fmt_ns(a, sizeof(a), (uint64_t)sc.mean_ns));
		else
			fprintf(f, "<rect class=\"hit\" x=\"%.1f\" y=\"%d\" width=\"%.1f\" "
				   "height=\"%d\"><title>steps %zu to %zu: mean %s, longest %s",
				x0, y0, colw, ph, sc.i0 + 1, sc.i1,
				fmt_ns(a, sizeof(a), (uint64_t)sc.mean_ns),
				fmt_ns(b, sizeof(b), (uint64_t)sc.max_ns));
		for (k = 0; k < LOOP_NR_PARTS; k++)
			if (sc.idle[k] >= 1000)
				fprintf(f, "; %s %s", gap_part_name(loop_part_id(k)),
					fmt_ns(a, sizeof(a), (uint64_t)sc.idle[k]));
		fputs("</title></rect>\n", f);
	}
	for (k = 0; k <= 4; k++) {
		size_t st = (size_t)k * (n - 1) / 4;

		fprintf(f, "<text class=\"m\" x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%zu"
			   "</text>\n",
			PLOT_X + colw * ((double)(st / per) + 0.5), y0 + ph + 14, st + 1);
	}
	fprintf(f, "<text class=\"m\" x=\"%d\" y=\"%d\" text-anchor=\"end\">step</text>\n</svg>\n",
		PLOT_X - 8, y0 + ph + 14);
	fputs("<div class=\"legend\">\n", f);
	swatch(f, STEP_COLOUR, 0, "steady step", NULL);
	swatch(f, OTHER_COLOUR, 0, "warm-up or outside the steady state", NULL);
	for (k = 0; k < LOOP_NR_PARTS; k++)
		swatch(f, figure_colour(loop_part_id(k)), 0, gap_part_name(loop_part_id(k)), NULL);
	fprintf(f, "</div>\n<figcaption>%zu steps%s; inside each steady step its GPU idle time by "
		   "cause; red: the slowest; dashed: the median steady step (%s); a step past the "
		   "top is cut there, its length on hover</figcaption>\n",
		n,
		n > STEP_COLUMNS ? ", each column the mean of consecutive steps, the line above "
				   "their longest" : "",
		fmt_ns(a, sizeof(a), l->p50_ns));
}
