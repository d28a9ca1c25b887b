// SPDX-License-Identifier: MIT
/*
 * diff.c - run summaries and their comparison. See diff.h for the keys and the noise rule.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <uthash.h>

#include "diff.h"
#include "where.h"
#include "util/util.h"
#include "welch.h"

struct run_kernel {
	char *name;
	uint64_t launches;		/* host launch calls */
	uint64_t count;			/* GPU executions */
	double sum_ns, sumsq_ns;	/* of execution times */
	UT_hash_handle hh;
};

struct run_place {
	char *key;			/* "cause at place" */
	double ns;
	uint64_t count;
	UT_hash_handle hh;
};

struct run_api {
	char *name;
	uint64_t calls;
	uint64_t total_ns;
	UT_hash_handle hh;
};

static const char *const count_names[NR_RUN_COUNTS] = {
	[RC_LAUNCHES] = "launches",	[RC_KERNEL_LAUNCHES] = "kernel_launches",
	[RC_GRAPH_LAUNCHES] = "graph_launches", [RC_SYNCS] = "syncs",
	[RC_MEMCPYS] = "memcpys",	[RC_MEMCPY_BYTES] = "memcpy_bytes",
	[RC_MEMSETS] = "memsets",	[RC_ALLOCS] = "allocs",
	[RC_FREES] = "frees",		[RC_ERRORS] = "errors",
};

static const char *const dir_names[NR_COPY_DIRS] = { "HtoD", "DtoH", "DtoD",
						     "HtoH", "PtoP", "unified" };

const char *run_count_name(int id)
{
	return id >= 0 && id < NR_RUN_COUNTS ? count_names[id] : "?";
}

const char *copy_dir_name(int dir)
{
	return dir >= 0 && dir < NR_COPY_DIRS ? dir_names[dir] : "?";
}

/* ---- Summaries ---- */

void run_summary_init(struct run_summary *r)
{
	memset(r, 0, sizeof(*r));
	r->has_gpu = 1;
	r->peak_pct = -1;
}

/* A cause's places (findings' f_place) of one trace, their time scaled by @x (sampled runs). */
static void places_add(struct run_summary *r, const struct model *m, const struct findings *fd,
		       double x)
{
	char place[600], key[700];
	int k, i;

	for (k = 0; k < NR_CAUSES; k++) {
		const struct f_cause *c = &fd->causes[k];

		if (c->status != CS_MEASURED)
			continue;
		/* the floor below which a place may be missing from the list (diff.h) */
		if (c->nr_places == MAX_PLACES) {
			double floor = x * (double)c->places[MAX_PLACES - 1].time_ns;

			if (floor > r->place_floor_ns[k])
				r->place_floor_ns[k] = floor;
		}
		for (i = 0; i < c->nr_places; i++) {
			struct run_place *p;

			where_place(m, c->places[i].stack, place, sizeof(place));
			if (!place[0])
				continue;
			snprintf(key, sizeof(key), "%s at %s", cause_name(k), place);
			HASH_FIND_STR(r->places, key, p);
			if (!p) {
				p = xcalloc(1, sizeof(*p));
				p->key = xstrdup(key);
				HASH_ADD_KEYPTR(hh, r->places, p->key, strlen(p->key), p);
			}
			p->ns += x * (double)c->places[i].time_ns;
			p->count += c->places[i].count;
		}
	}
}

static struct run_kernel *kernel_get(struct run_summary *r, const char *name)
{
	struct run_kernel *k;

	HASH_FIND_STR(r->kernels, name, k);
	if (!k) {
		k = xcalloc(1, sizeof(*k));
		k->name = xstrdup(name);
		HASH_ADD_KEYPTR(hh, r->kernels, k->name, strlen(k->name), k);
	}
	return k;
}

static int gpu_copy_dir(uint8_t kind)
{
	switch (kind) {
	case TRACE_GPU_COPY_HTOD:
		return 0;
	case TRACE_GPU_COPY_DTOH:
		return 1;
	case TRACE_GPU_COPY_DTOD:
		return 2;
	case TRACE_GPU_COPY_HTOH:
		return 3;
	case TRACE_GPU_COPY_PTOP:
		return 4;
	default:
		return 5;
	}
}

static int call_copy_dir(uint8_t sub)
{
	switch (sub) {
	case TRACE_COPY_H2D:
	case TRACE_COPY_H2A:
		return 0;
	case TRACE_COPY_D2H:
	case TRACE_COPY_A2H:
		return 1;
	case TRACE_COPY_D2D:
	case TRACE_COPY_D2A:
	case TRACE_COPY_A2D:
	case TRACE_COPY_A2A:
		return 2;
	case TRACE_COPY_H2H:
		return 3;
	case TRACE_COPY_PEER:
		return 4;
	default:
		return 5;
	}
}

struct run_feed_kernel {
	UT_hash_handle hh;
	const char *name;		/* the model's */
	uint64_t count;
	double sum_ns, sumsq_ns;
};

void run_feed_free(struct run_feed *o)
{
	struct run_feed_kernel *k, *kt;

	HASH_ITER(hh, o->kernels, k, kt) {
		HASH_DEL(o->kernels, k);
		free(k);
	}
	free(o->by_shape);
	memset(o, 0, sizeof(*o));
}

void run_feed_begin(struct run_feed *o, const struct model *m)
{
	run_feed_free(o);
	o->m = m;
	o->by_shape = xcalloc(m->nr_gpu_shapes + 1, sizeof(*o->by_shape));
	o->nr_shapes = m->nr_gpu_shapes;
}

void run_feed_call(struct run_feed *o, const struct m_call *c)
{
	if (c->kind == MC_COPY && !(c->flags & MCF_ERROR)) {
		o->call_copy_count[call_copy_dir(c->sub)]++;
		o->call_copy_bytes[call_copy_dir(c->sub)] += model_call_args(o->m, c)->bytes;
	}
}

void run_feed_op(struct run_feed *o, const struct m_gpu_op *g)
{
	const struct m_gpu_shape *sh = model_gpu_shape(o->m, g);
	double d = (double)(g->end - g->start);

	o->nr_ops++;
	if (sh->kind == MG_KERNEL) {
		struct run_feed_kernel *k;

		if (g->shape >= o->nr_shapes) {	/* a streamed trace's shapes come as read */
			size_t old = o->nr_shapes;

			XGROW(o->by_shape, o->nr_shapes, (size_t)g->shape + 1);
			memset(o->by_shape + old, 0, (o->nr_shapes - old) * sizeof(*o->by_shape));
		}
		k = o->by_shape[g->shape];
		if (!k) {
			const char *name = model_string(o->m, sh->name, "<unknown>");

			HASH_FIND_STR(o->kernels, name, k);
			if (!k) {
				k = xcalloc(1, sizeof(*k));
				k->name = name;
				HASH_ADD_KEYPTR(hh, o->kernels, k->name, strlen(k->name), k);
			}
			o->by_shape[g->shape] = k;
		}
		k->count++;
		k->sum_ns += d;
		k->sumsq_ns += d * d;
	} else if (sh->kind == MG_MEMCPY) {
		int dir = gpu_copy_dir(sh->copy_kind);

		o->copy_count[dir]++;
		o->copy_bytes[dir] += sh->bytes;
		o->copy_gpu_ns[dir] += g->end - g->start;
	}
}

void run_summary_add_model(struct run_summary *r, const struct model *m, const struct stats *s,
			   const struct findings *fd)
{
	struct run_feed o;
	size_t i;

	memset(&o, 0, sizeof(o));
	run_feed_begin(&o, m);
	for (i = 0; i < m->nr_calls; i++)
		run_feed_call(&o, &m->calls[i]);
	for (i = 0; i < m->nr_gpu; i++)
		run_feed_op(&o, &m->gpu[i]);
	run_summary_add(r, s, fd, &o);
}

void run_summary_add(struct run_summary *r, const struct stats *s, const struct findings *fd,
		     struct run_feed *o)
{
	struct run_feed_kernel *fk, *fkt;
	const struct s_counts *c = &s->counts;
	uint64_t span;
	double x;
	size_t i;
	int k;

	r->nr_traces++;
	r->has_gpu &= fd->has_gpu;
	span = !fd->has_gpu		 ? s->span_ns :
	       fd->sampling.span_ns ? fd->sampling.span_ns :
				      fd->window_end - fd->window_start;
	if (span > r->span_ns)
		r->span_ns = span;
	/*
	 * A sampled run's times are the windows' (findings.h f_sampling): taken over its whole
	 * window, as its shares are, so that it compares with a run recorded whole or sampled
	 * otherwise.
	 */
	x = fd->has_gpu && fd->sampling.is_sampled && fd->window_ns && fd->sampling.span_ns ?
		    (double)fd->sampling.span_ns / (double)fd->window_ns :
		    1.0;
	r->window_ns += fd->has_gpu ? (uint64_t)((double)fd->window_ns * x) : s->span_ns;
	if (fd->has_gpu) {
		r->busy_ns += (uint64_t)((double)(fd->work_ns + fd->exposed_copy_ns) * x);
		r->filled_ns += (uint64_t)(x * (double)(fd->work_ns >
								fd->causes[CAUSE_LOW_PARALLELISM].time_ns ?
							fd->work_ns -
								fd->causes[CAUSE_LOW_PARALLELISM].time_ns :
							0));
		for (k = 0; k < NR_CAUSES; k++) {
			uint64_t t;

			if (fd->causes[k].status != CS_MEASURED)
				continue;
			t = (uint64_t)((double)fd->causes[k].time_ns * x);
			r->lost_ns[k] += t;
			/* Compute-bound time is the GPU used well: a cause row, not time lost. */
			if (k != CAUSE_COMPUTE_BOUND)
				r->lost_total_ns += t;
		}
		for (k = 0; k < NR_CAUSES; k++)
			if (fd->causes[k].has_saving)
				r->saving_ns[k] += fd->causes[k].saving_ns;
		places_add(r, o->m, fd, x);
	}
	/* Savings compare only when every trace of the run was replayed. */
	r->has_saving = (r->nr_traces == 1 || r->has_saving) && fd->replay.done;

	r->counts[RC_LAUNCHES] += c->launches;
	r->counts[RC_KERNEL_LAUNCHES] += c->kernel_launches;
	r->counts[RC_GRAPH_LAUNCHES] += c->graph_launches;
	r->counts[RC_SYNCS] += c->syncs;
	r->counts[RC_MEMCPYS] += c->memcpys;
	r->counts[RC_MEMCPY_BYTES] += c->memcpy_bytes;
	r->counts[RC_MEMSETS] += c->memsets;
	r->counts[RC_ALLOCS] += c->allocs;
	r->counts[RC_FREES] += c->frees;
	r->counts[RC_ERRORS] += c->errors;
	if (s->mem.peak_bytes > r->peak_bytes)
		r->peak_bytes = s->mem.peak_bytes;
	if (s->mem.peak_pct > r->peak_pct)
		r->peak_pct = s->mem.peak_pct;

	/* Kernels: launches by name from the statistics, executions from the GPU records (fed). */
	for (i = 0; i < s->nr_kernels; i++)
		kernel_get(r, s->kernels[i].name ? s->kernels[i].name : "<unknown>")->launches +=
			s->kernels[i].launches;
	HASH_ITER(hh, o->kernels, fk, fkt) {
		struct run_kernel *rk = kernel_get(r, fk->name);

		rk->count += fk->count;
		rk->sum_ns += fk->sum_ns;
		rk->sumsq_ns += fk->sumsq_ns;
	}
	/* Copies by direction: the GPU's, or without GPU records the calls'. */
	for (k = 0; k < NR_COPY_DIRS; k++) {
		r->copy_count[k] += o->nr_ops ? o->copy_count[k] : o->call_copy_count[k];
		r->copy_bytes[k] += o->nr_ops ? o->copy_bytes[k] : o->call_copy_bytes[k];
		r->copy_gpu_ns[k] += o->copy_gpu_ns[k];
	}
	run_feed_free(o);

	/* Steady steps: the ones the report's steady figures are of. */
	k = 0;
	for (i = 0; i < s->loop.nr_series; i++) {
		if (!loop_is_steady(&s->loop, i))
			continue;
		XGROW(r->step_ns, r->steps_cap, r->nr_steps + 1);
		r->step_ns[r->nr_steps++] = s->loop.series[i].end - s->loop.series[i].start;
		k = 1;
	}
	if (k)
		r->steps_source = !r->steps_source || !strcmp(r->steps_source, s->loop.source) ?
					  s->loop.source :
					  "mixed";

	for (i = 0; i < s->nr_apis; i++) {
		const struct s_api *a = &s->apis[i];
		const char *name = a->name ? a->name : "<unknown>";
		struct run_api *ra;

		HASH_FIND_STR(r->apis, name, ra);
		if (!ra) {
			ra = xcalloc(1, sizeof(*ra));
			ra->name = xstrdup(name);
			HASH_ADD_KEYPTR(hh, r->apis, ra->name, strlen(ra->name), ra);
		}
		ra->calls += a->calls;
		ra->total_ns += a->total_ns;
	}
}

void run_summary_free(struct run_summary *r)
{
	struct run_kernel *k, *kt;
	struct run_api *a, *at;
	struct run_place *p, *pt;

	HASH_ITER(hh, r->kernels, k, kt) {
		HASH_DEL(r->kernels, k);
		free(k->name);
		free(k);
	}
	HASH_ITER(hh, r->apis, a, at) {
		HASH_DEL(r->apis, a);
		free(a->name);
		free(a);
	}
	HASH_ITER(hh, r->places, p, pt) {
		HASH_DEL(r->places, p);
		free(p->key);
		free(p);
	}
	free(r->step_ns);
	r->step_ns = NULL;
	r->nr_steps = r->steps_cap = 0;
}

int run_has_steps(const struct run_summary *r)
{
	return r->nr_steps >= DIFF_STEPS_MIN;
}

double run_step_mean_ns(const struct run_summary *r)
{
	double sum = 0;
	size_t i;

	for (i = 0; i < r->nr_steps; i++)
		sum += (double)r->step_ns[i];
	return r->nr_steps ? sum / (double)r->nr_steps : 0;
}

double run_busy_pct(const struct run_summary *r)
{
	return r->has_gpu && r->window_ns ? 100.0 * (double)r->busy_ns / (double)r->window_ns : -1;
}

double run_fill_pct(const struct run_summary *r)
{
	return r->has_gpu && r->window_ns ? 100.0 * (double)r->filled_ns / (double)r->window_ns :
					    -1;
}

double run_lost_pct(const struct run_summary *r)
{
	return r->has_gpu && r->window_ns ?
		       100.0 * (double)r->lost_total_ns / (double)r->window_ns :
		       -1;
}

/* ---- Comparison ---- */

static struct diff_row *row_add(struct diff_result *d, int kind, int unit, const char *key,
				double base, double new)
{
	struct diff_row *w;

	XGROW(d->rows, d->cap, d->nr_rows + 1);
	w = &d->rows[d->nr_rows++];
	memset(w, 0, sizeof(*w));
	w->kind = kind;
	w->unit = unit;
	w->key = key;
	w->base = base;
	w->new = new;
	w->delta = new - base;
	w->delta_pct = base != 0 ? 100.0 * (new - base) / base : 0;
	return w;
}

/*
 * A run-level time: noise when within noise_pct of the base span. @higher_is_worse says
 * which way is a regression.
 */
static void judge_time(struct diff_row *w, double span, double noise_pct, int higher_is_worse)
{
	if (w->delta == 0)
		w->status = DS_SAME;
	else if (fabs(w->delta) <= span * noise_pct / 100.0)
		w->status = DS_NOISE;
	else
		w->status = (w->delta > 0) == higher_is_worse ? DS_WORSE : DS_BETTER;
}

/* A percentage: noise when within noise_pct points. */
static void judge_pct(struct diff_row *w, double noise_pct, int higher_is_worse)
{
	if (w->delta == 0)
		w->status = DS_SAME;
	else if (fabs(w->delta) <= noise_pct)
		w->status = DS_NOISE;
	else
		w->status = (w->delta > 0) == higher_is_worse ? DS_WORSE : DS_BETTER;
}

static void judge_relative(struct diff_row *w, double noise_pct)
{
	w->status = w->delta == 0			? DS_SAME :
		    fabs(w->delta_pct) <= noise_pct	? DS_NOISE :
		    w->delta > 0			? DS_WORSE :
							  DS_BETTER;
}

/*
 * The mean steady step and its reciprocal, steps a second, judged by the interval of the
 * change (diff.h): same when equal, noise while the interval holds 0. Steps a second is 1 s
 * over the mean step, so that its change and interval mirror the step time's (the report's
 * steps/s divides by the steady state's length instead, which also holds any gaps between
 * NVTX ranges). A step time interval reaching -100 % (a few steps of wide spread) leaves the
 * rate's unbounded: that row has none.
 */
static void step_rows(struct diff_result *d, const struct run_summary *a,
		      const struct run_summary *b)
{
	double ma = run_step_mean_ns(a), mb = run_step_mean_ns(b), lo, hi;
	struct diff_row *w, *r;

	if (diff_step_ci(a, b, &lo, &hi) < 0)
		return;
	row_add(d, DK_RUN, DU_NS, "step_time", ma, mb);
	r = row_add(d, DK_RUN, DU_PER_S, "steps_per_s", 1e9 / ma, mb > 0 ? 1e9 / mb : 0);
	w = r - 1;			/* step_time (row_add may move the rows) */
	w->impact_ns = fabs(w->delta);
	w->has_ci = 1;
	w->ci_lo_pct = lo;
	w->ci_hi_pct = hi;
	/* rate = 1 / time: a change c of the time is 1 / (1 + c) - 1 of the rate, decreasing. */
	if (lo > -100) {
		r->has_ci = 1;
		r->ci_lo_pct = 100 * (100 / (100 + hi) - 1);
		r->ci_hi_pct = 100 * (100 / (100 + lo) - 1);
	}
	w->base_count = r->base_count = a->nr_steps;
	w->new_count = r->new_count = b->nr_steps;
	if (w->delta == 0)
		w->status = r->status = DS_SAME;
	else if (lo <= 0 && hi >= 0)
		w->status = r->status = DS_NOISE;
	else
		w->status = r->status = lo > 0 ? DS_WORSE : DS_BETTER;
}

/* The headline figures, in a fixed order. */
static void run_rows(struct diff_result *d, const struct run_summary *a,
		     const struct run_summary *b, double noise_pct)
{
	int has_gpu = a->has_gpu && b->has_gpu;
	struct diff_row *w;

	w = row_add(d, DK_RUN, DU_NS, "span", (double)a->span_ns, (double)b->span_ns);
	judge_relative(w, noise_pct);
	w->impact_ns = fabs(w->delta);
	step_rows(d, a, b);
	if (has_gpu) {
		w = row_add(d, DK_RUN, DU_PCT, "gpu_busy_pct", run_busy_pct(a), run_busy_pct(b));
		judge_pct(w, noise_pct, 0);
		w = row_add(d, DK_RUN, DU_PCT, "sm_fill_pct", run_fill_pct(a), run_fill_pct(b));
		judge_pct(w, noise_pct, 0);
		w = row_add(d, DK_RUN, DU_NS, "lost", (double)a->lost_total_ns,
			    (double)b->lost_total_ns);
		judge_time(w, (double)a->span_ns, noise_pct, 1);
		w->impact_ns = fabs(w->delta);
	}
	w = row_add(d, DK_RUN, DU_BYTES, "memory_peak", (double)a->peak_bytes,
		    (double)b->peak_bytes);
	judge_relative(w, noise_pct);
}

static void cause_rows(struct diff_result *d, const struct run_summary *a,
		       const struct run_summary *b, double noise_pct)
{
	int k;

	if (!a->has_gpu || !b->has_gpu)
		return;
	for (k = 0; k < NR_CAUSES; k++) {
		struct diff_row *w;

		if (!a->lost_ns[k] && !b->lost_ns[k])
			continue;
		w = row_add(d, DK_CAUSE, DU_NS, cause_name(k), (double)a->lost_ns[k],
			    (double)b->lost_ns[k]);
		judge_time(w, (double)a->span_ns, noise_pct, 1);
		/* Busy time computing: more or less of it is a change, neither better nor worse. */
		if (k == CAUSE_COMPUTE_BOUND && (w->status == DS_BETTER || w->status == DS_WORSE))
			w->status = DS_CHANGED;
		w->impact_ns = fabs(w->delta);
	}
}

/*
 * What fixing each cause alone saves (the replay), as a share of the window so that runs of
 * different lengths compare: more is worse, the cause costs more.
 */
static void saving_rows(struct diff_result *d, const struct run_summary *a,
			const struct run_summary *b, double noise_pct)
{
	int k;

	if (!a->has_saving || !b->has_saving || !a->window_ns || !b->window_ns)
		return;
	for (k = 0; k < NR_CAUSES; k++) {
		struct diff_row *w;

		if (!a->saving_ns[k] && !b->saving_ns[k])
			continue;
		w = row_add(d, DK_SAVING, DU_PCT, cause_name(k),
			    100.0 * (double)a->saving_ns[k] / (double)a->window_ns,
			    100.0 * (double)b->saving_ns[k] / (double)b->window_ns);
		judge_pct(w, noise_pct, 1);
		w->impact_ns = fabs(w->delta) / 100.0 * (double)b->span_ns;
	}
}

static void count_rows(struct diff_result *d, const struct run_summary *a,
		       const struct run_summary *b)
{
	int i;

	for (i = 0; i < NR_RUN_COUNTS; i++) {
		struct diff_row *w;

		if (a->counts[i] == b->counts[i])
			continue;
		w = row_add(d, DK_COUNT, i == RC_MEMCPY_BYTES ? DU_BYTES : DU_COUNT,
			    count_names[i], (double)a->counts[i], (double)b->counts[i]);
		w->status = DS_CHANGED;
	}
	for (i = 0; i < NR_COPY_DIRS; i++) {
		struct diff_row *w;

		if (a->copy_count[i] == b->copy_count[i] && a->copy_bytes[i] == b->copy_bytes[i])
			continue;
		w = row_add(d, DK_COPY, DU_BYTES, dir_names[i], (double)a->copy_bytes[i],
			    (double)b->copy_bytes[i]);
		w->base_count = a->copy_count[i];
		w->new_count = b->copy_count[i];
		w->status = !a->copy_count[i] ? DS_ADDED : !b->copy_count[i] ? DS_REMOVED :
								DS_CHANGED;
		w->impact_ns = fabs((double)b->copy_gpu_ns[i] - (double)a->copy_gpu_ns[i]);
	}
}

/* One kernel name present in @a, @b or both. */
static void kernel_row(struct diff_result *d, const struct run_kernel *ka,
		       const struct run_kernel *kb, double noise_pct, int has_gpu)
{
	const char *name = ka ? ka->name : kb->name;
	uint64_t na = 0, nb = 0;
	double sa = 0, sb = 0, ma = 0, mb = 0, va = 0, vb = 0;
	struct diff_row *w;

	if (has_gpu) {
		na = ka ? ka->count : 0;
		nb = kb ? kb->count : 0;
		sa = ka ? ka->sum_ns : 0;
		sb = kb ? kb->sum_ns : 0;
	} else {
		na = ka ? ka->launches : 0;
		nb = kb ? kb->launches : 0;
	}
	if (na) {
		ma = sa / (double)na;
		va = na > 1 ? (ka->sumsq_ns - sa * ma) / (double)(na - 1) : 0;
	}
	if (nb) {
		mb = sb / (double)nb;
		vb = nb > 1 ? (kb->sumsq_ns - sb * mb) / (double)(nb - 1) : 0;
	}
	if (na == nb && sa == sb)
		return;
	w = row_add(d, DK_KERNEL, has_gpu ? DU_NS : DU_COUNT, name, has_gpu ? sa : (double)na,
		    has_gpu ? sb : (double)nb);
	w->base_count = na;
	w->new_count = nb;
	w->base_mean = ma;
	w->new_mean = mb;
	w->impact_ns = fabs(sb - sa);
	if (!na) {
		w->status = DS_ADDED;
		w->what = "added";
	} else if (!nb) {
		w->status = DS_REMOVED;
		w->what = "removed";
	} else {
		double se = sqrt((va > 0 ? va : 0) / (double)na + (vb > 0 ? vb : 0) / (double)nb);
		int is_mean_real = has_gpu && fabs(mb - ma) > 3 * se &&
				   fabs(mb - ma) > ma * noise_pct / 100.0;

		if (is_mean_real) {
			w->status = mb > ma ? DS_WORSE : DS_BETTER;
			w->what = mb > ma ? "slower" : "faster";
		} else if (na != nb) {
			w->status = DS_CHANGED;
			w->what = nb > na ? "more" : "fewer";
		} else {
			w->status = DS_NOISE;
			w->what = "same";
		}
	}
}

static void kernel_rows(struct diff_result *d, const struct run_summary *a,
			const struct run_summary *b, double noise_pct)
{
	int has_gpu = a->has_gpu && b->has_gpu;
	const struct run_kernel *ka, *kb;

	for (ka = a->kernels; ka; ka = ka->hh.next) {
		HASH_FIND_STR(b->kernels, ka->name, kb);
		kernel_row(d, ka, kb, noise_pct, has_gpu);
	}
	for (kb = b->kernels; kb; kb = kb->hh.next) {
		HASH_FIND_STR(a->kernels, kb->name, ka);
		if (!ka)
			kernel_row(d, NULL, kb, noise_pct, has_gpu);
	}
}

static void api_rows(struct diff_result *d, const struct run_summary *a,
		     const struct run_summary *b)
{
	const struct run_api *pa, *pb;
	struct diff_row *w;

	for (pa = a->apis; pa; pa = pa->hh.next) {
		HASH_FIND_STR(b->apis, pa->name, pb);
		if (pb && pb->calls == pa->calls)
			continue;
		w = row_add(d, DK_API, DU_COUNT, pa->name, (double)pa->calls,
			    pb ? (double)pb->calls : 0);
		w->status = pb ? DS_CHANGED : DS_REMOVED;
		w->impact_ns = fabs((pb ? (double)pb->total_ns : 0) - (double)pa->total_ns);
	}
	for (pb = b->apis; pb; pb = pb->hh.next) {
		HASH_FIND_STR(a->apis, pb->name, pa);
		if (pa)
			continue;
		w = row_add(d, DK_API, DU_COUNT, pb->name, 0, (double)pb->calls);
		w->status = DS_ADDED;
		w->impact_ns = (double)pb->total_ns;
	}
}

/* The cause a place's key names ("cause at place"), or -1. */
static int place_cause(const char *key)
{
	int k;

	for (k = 0; k < NR_CAUSES; k++) {
		size_t n = strlen(cause_name(k));

		if (!strncmp(key, cause_name(k), n) && !strncmp(key + n, " at ", 4))
			return k;
	}
	return -1;
}

/*
 * A cause's time at each place, matched by place: judged as the cause's. A place on one side
 * only counts as 0 on the other unless that side's list of the cause's places was full and
 * it is below its floor there: then it is unknown, and left out.
 */
static void place_rows(struct diff_result *d, const struct run_summary *a,
		       const struct run_summary *b, double noise_pct)
{
	const struct run_place *pa, *pb;
	struct diff_row *w;
	int k;

	if (!a->has_gpu || !b->has_gpu)
		return;
	for (pa = a->places; pa; pa = pa->hh.next) {
		HASH_FIND_STR(b->places, pa->key, pb);
		k = place_cause(pa->key);
		if (!pb && k >= 0 && pa->ns <= b->place_floor_ns[k])
			continue;
		w = row_add(d, DK_PLACE, DU_NS, pa->key, pa->ns, pb ? pb->ns : 0);
		judge_time(w, (double)a->span_ns, noise_pct, k != CAUSE_COMPUTE_BOUND);
		if (!pb && w->status != DS_NOISE)
			w->status = DS_REMOVED;
		w->base_count = pa->count;
		w->new_count = pb ? pb->count : 0;
		w->impact_ns = fabs(w->delta);
	}
	for (pb = b->places; pb; pb = pb->hh.next) {
		HASH_FIND_STR(a->places, pb->key, pa);
		k = place_cause(pb->key);
		if (pa || (k >= 0 && pb->ns <= a->place_floor_ns[k]))
			continue;
		w = row_add(d, DK_PLACE, DU_NS, pb->key, 0, pb->ns);
		judge_time(w, (double)a->span_ns, noise_pct, k != CAUSE_COMPUTE_BOUND);
		if (w->status != DS_NOISE)
			w->status = DS_ADDED;
		w->new_count = pb->count;
		w->impact_ns = fabs(w->delta);
	}
}

static int cmp_row(const void *x, const void *y)
{
	const struct diff_row *a = x, *b = y;

	/* Real changes before noise, then the time they move, then the name (stable output). */
	if ((a->status == DS_NOISE) != (b->status == DS_NOISE))
		return a->status == DS_NOISE ? 1 : -1;
	if (a->kind != b->kind)
		return a->kind - b->kind;
	if (a->impact_ns != b->impact_ns)
		return a->impact_ns > b->impact_ns ? -1 : 1;
	if (fabs(a->delta) != fabs(b->delta))
		return fabs(a->delta) > fabs(b->delta) ? -1 : 1;
	return strcmp(a->key, b->key);
}

void diff_compute(struct diff_result *d, const struct run_summary *a,
		  const struct run_summary *b, double noise_pct)
{
	size_t nr_run;

	memset(d, 0, sizeof(*d));
	d->noise_pct = noise_pct;
	run_rows(d, a, b, noise_pct);
	nr_run = d->nr_rows;
	cause_rows(d, a, b, noise_pct);
	saving_rows(d, a, b, noise_pct);
	count_rows(d, a, b);
	kernel_rows(d, a, b, noise_pct);
	api_rows(d, a, b);
	place_rows(d, a, b, noise_pct);
	/* Run rows keep their fixed order; causes among them are ranked like the rest. */
	xqsort(d->rows + nr_run, d->nr_rows - nr_run, sizeof(*d->rows), cmp_row);
}

void diff_free(struct diff_result *d)
{
	free(d->rows);
	memset(d, 0, sizeof(*d));
}

int diff_worse_by(const struct run_summary *a, const struct run_summary *b, int metric,
		  double *value)
{
	double lo, hi;

	switch (metric) {
	case DM_BUSY:
		if (!a->has_gpu || !b->has_gpu)
			return -1;
		*value = run_busy_pct(a) - run_busy_pct(b);
		return 0;
	case DM_LOST:
		if (!a->has_gpu || !b->has_gpu)
			return -1;
		*value = run_lost_pct(b) - run_lost_pct(a);
		return 0;
	case DM_STEP:
		if (diff_step_ci(a, b, &lo, &hi) < 0)
			return -1;
		*value = 100.0 * (run_step_mean_ns(b) - run_step_mean_ns(a)) / run_step_mean_ns(a);
		return 0;
	default:
		*value = a->span_ns ? 100.0 * ((double)b->span_ns - (double)a->span_ns) /
					      (double)a->span_ns :
				      0;
		return 0;
	}
}

int diff_step_ci(const struct run_summary *a, const struct run_summary *b, double *lo_pct,
		 double *hi_pct)
{
	struct welch w;

	if (!run_has_steps(a) || !run_has_steps(b) ||
	    welch_interval(a->step_ns, a->nr_steps, b->step_ns, b->nr_steps, DIFF_STEP_LEVEL,
			   &w) < 0)
		return -1;
	*lo_pct = w.lo_pct;
	*hi_pct = w.hi_pct;
	return 0;
}

const char *diff_metric_name(int metric)
{
	return metric == DM_BUSY ? "busy" : metric == DM_LOST ? "lost" : metric == DM_STEP ? "step" :
									    "span";
}

const char *diff_status_name(int status)
{
	static const char *const names[] = { "same",  "noise", "better",  "worse",
					     "changed", "added", "removed" };

	return status >= 0 && status <= DS_REMOVED ? names[status] : "?";
}
