// SPDX-License-Identifier: MIT
/*
 * gpucols.c - records as columns (GPU_KERNEL_RUN, GPU_API_RUN, LAUNCH_REFS, LAUNCH_GAP_RUN,
 * whose launch run gpucols.h describes): a GPU_KERNEL or a
 * LAUNCH whose shape the chunk already holds as a record written in full, and every GPU_API,
 * waits in a run; a run is written as one record of varint columns, so the fields that change
 * from record to record (times, correlation ids) are stored apart from those that repeat. A
 * PyTorch step's launches and kernels are a few dozen shapes repeated: their records shrink
 * from 64, 88 and 40 bytes to about 9, 9 and 10 before compression (a real H200 trace).
 * Runs on: the writer thread (and tests). Nothing here allocates: the runs and the shape tables
 * are static — the GPU runs' 384 KiB touched only while CUPTI delivers records, the launch run
 * and the shape tables' 96 KiB by any program that launches.
 */
#include "gpucols.h"

#include <string.h>

#define GPU_RUN_MAX 4096u
#define GPU_RUN_COLS 6
#define GPU_RUN_ENTRY_MAX (GPU_RUN_COLS * 10u)	/* the most bytes one record adds to the columns */
#define GPU_RUN_OVERHEAD (sizeof(struct trace_rec_gpu_run) + 7u)

_Static_assert(GPU_RUN_COLS == TRACE_GPU_KERNEL_RUN_COLUMNS &&
		       GPU_RUN_COLS == TRACE_GPU_API_RUN_COLUMNS,
	       "a run's columns are the format's");

struct gpu_run {
	uint16_t type;			/* TRACE_REC_GPU_KERNEL_RUN or TRACE_REC_GPU_API_RUN */
	uint32_t n;			/* records held; 0 none */
	uint32_t corr0;			/* the first record's correlation id and start */
	uint64_t base_ns;
	uint64_t prev_start;		/* the previous record's start, */
	uint64_t prev_aux;		/* graph node (kernels) or thread id (API records), */
	uint32_t prev_corr;		/* and correlation id */
	size_t bytes;			/* the columns' varints so far */
	uint64_t col[GPU_RUN_COLS][GPU_RUN_MAX];
};

static struct gpu_run kernel_run = { .type = TRACE_REC_GPU_KERNEL_RUN };
static struct gpu_run api_run = { .type = TRACE_REC_GPU_API_RUN };

/*
 * A chunk's shapes of one record type: its records written in full, found by a hash of the
 * bytes that make the shape (two ranges around the fields that change from record to record).
 * The ranges are constants of the type (struct shape_layout), folded into each type's inlined
 * copy of the lookup: no library calls for a few dozen bytes.
 */
#define SHAPE_SLOTS 4096u		/* a power of two; at most half are used */

struct shape_layout {
	uint16_t size;			/* the record size shapes have */
	uint16_t a, a_len, b, b_len;	/* the shape's bytes: [a, a + a_len) and [b, b + b_len) */
};

struct shapes {
	uint32_t n;			/* records of the type written in full: the next one's index */
	uint32_t used;
	struct {
		uint32_t off;		/* offset of the record in the chunk + 1; 0 empty */
		uint32_t index;
	} slot[SHAPE_SLOTS];
};

static struct shapes kernel_shapes, launch_shapes;

/* GPU_KERNEL: all but times, correlation id, graph node and graph id. */
static const struct shape_layout kernel_layout = {
	.size = sizeof(struct trace_rec_gpu_kernel),
	.a = offsetof(struct trace_rec_gpu_kernel, device),
	.a_len = offsetof(struct trace_rec_gpu_kernel, graph_id) -
		 offsetof(struct trace_rec_gpu_kernel, device),
	.b = offsetof(struct trace_rec_gpu_kernel, name),
	.b_len = sizeof(struct trace_rec_gpu_kernel) - offsetof(struct trace_rec_gpu_kernel, name),
};

_Static_assert(offsetof(struct trace_rec_gpu_kernel, cupti_corr) <
			       offsetof(struct trace_rec_gpu_kernel, device) &&
		       offsetof(struct trace_rec_gpu_kernel, graph_node) <
			       offsetof(struct trace_rec_gpu_kernel, device) &&
		       offsetof(struct trace_rec_gpu_kernel, graph_id) + 4 ==
			       offsetof(struct trace_rec_gpu_kernel, name),
	       "a kernel's shape is all after its times, correlation id and graph node but graph id");

/* LAUNCH: all but the time delta, duration and correlation number. */
static const struct shape_layout launch_layout = {
	.size = sizeof(struct trace_rec_launch),
	.a = offsetof(struct trace_rec_launch, call.result),
	.a_len = offsetof(struct trace_rec_launch, call.seq) -
		 offsetof(struct trace_rec_launch, call.result),
	.b = offsetof(struct trace_rec_launch, stream),
	.b_len = sizeof(struct trace_rec_launch) - offsetof(struct trace_rec_launch, stream),
};

_Static_assert(offsetof(struct trace_rec_launch, call.dur) <
			       offsetof(struct trace_rec_launch, call.result) &&
		       offsetof(struct trace_rec_launch, call.seq) + 4 ==
			       offsetof(struct trace_rec_launch, stream),
	       "a launch's shape is all but its delta, duration and number");

#define SHAPE_INLINE static inline __attribute__((always_inline))

SHAPE_INLINE int shape_equal(const struct shape_layout *l, const void *x, const void *y)
{
	return !memcmp((const char *)x + l->a, (const char *)y + l->a, l->a_len) &&
	       !memcmp((const char *)x + l->b, (const char *)y + l->b, l->b_len);
}

SHAPE_INLINE uint32_t shape_hash(const struct shape_layout *l, const void *rec)
{
	uint64_t words[8] = { 0 };
	uint64_t h = 0x9e3779b97f4a7c15ull;
	size_t i;

	memcpy(words, (const char *)rec + l->a, l->a_len);
	memcpy((char *)words + l->a_len, (const char *)rec + l->b, l->b_len);
	for (i = 0; i < ((size_t)l->a_len + l->b_len + 7) / 8; i++) {
		h = (h ^ words[i]) * 0xff51afd7ed558ccdull;
		h ^= h >> 32;
	}
	return (uint32_t)h;
}

_Static_assert(offsetof(struct trace_rec_gpu_kernel, graph_id) -
				       offsetof(struct trace_rec_gpu_kernel, device) +
				       sizeof(struct trace_rec_gpu_kernel) -
				       offsetof(struct trace_rec_gpu_kernel, name) <=
			       64 &&
		       offsetof(struct trace_rec_launch, call.seq) -
				       offsetof(struct trace_rec_launch, call.result) +
				       sizeof(struct trace_rec_launch) -
				       offsetof(struct trace_rec_launch, stream) <=
			       64,
	       "a shape's bytes fit shape_hash's words");

/* The slot holding @rec's shape, or the empty slot where it would go. */
SHAPE_INLINE uint32_t shape_slot(const struct shapes *t, const struct shape_layout *l,
				 const void *rec, const uint8_t *raw)
{
	uint32_t i = shape_hash(l, rec) & (SHAPE_SLOTS - 1);

	while (t->slot[i].off && !shape_equal(l, rec, raw + t->slot[i].off - 1))
		i = (i + 1) & (SHAPE_SLOTS - 1);
	return i;
}

/* The chunk's index of @rec's shape; -1 when it has none. */
SHAPE_INLINE int64_t shape_find(const struct shapes *t, const struct shape_layout *l,
				const void *rec, const uint8_t *raw)
{
	uint32_t i = shape_slot(t, l, rec, raw);

	return t->slot[i].off ? (int64_t)t->slot[i].index : -1;
}

/* A record of @t's type of @size bytes was written in full at raw + @off: its index or -1. */
SHAPE_INLINE int64_t shape_add(struct shapes *t, const struct shape_layout *l,
			       const uint8_t *raw, size_t off, uint16_t size)
{
	int64_t idx = -1;

	/* Every record of the type has an index; those of the usual size can be shapes. */
	if (size == l->size && t->used < SHAPE_SLOTS / 2 && off < UINT32_MAX) {
		uint32_t i = shape_slot(t, l, raw + off, raw);

		if (!t->slot[i].off) {
			t->slot[i].off = (uint32_t)off + 1;
			t->slot[i].index = t->n;
			t->used++;
		}
		idx = t->slot[i].index;
	}
	t->n++;
	return idx;
}

static void shapes_reset(struct shapes *t)
{
	if (t->used)
		memset(t->slot, 0, sizeof(t->slot));
	t->n = t->used = 0;
}

size_t gpucols_room(void)
{
	return (kernel_run.n ? GPU_RUN_OVERHEAD + kernel_run.bytes : 0) +
	       (api_run.n ? GPU_RUN_OVERHEAD + api_run.bytes : 0) +
	       GPU_RUN_OVERHEAD + GPU_RUN_ENTRY_MAX;
}

static void gpu_run_flush(struct gpu_run *r, uint8_t *raw, size_t *len, uint64_t *nr)
{
	uint8_t *start = raw + *len, *p;
	struct trace_rec_gpu_run h;
	uint32_t c, i;

	if (!r->n)
		return;
	p = start + sizeof(h);
	for (c = 0; c < GPU_RUN_COLS; c++)
		for (i = 0; i < r->n; i++)
			p = varint_put(p, r->col[c][i]);
	while ((p - start) % 8)
		*p++ = 0;
	memset(&h, 0, sizeof(h));
	h.hdr.type = r->type;
	h.hdr.size = (uint16_t)(p - start);
	h.count = r->n;
	h.corr = r->corr0;
	h.base_ns = r->base_ns;
	memcpy(start, &h, sizeof(h));
	*len += (size_t)(p - start);
	*nr += r->n;
	r->n = 0;
	r->bytes = 0;
}

void gpucols_flush(uint8_t *raw, size_t *len, uint64_t *nr)
{
	gpu_run_flush(&kernel_run, raw, len, nr);
	gpu_run_flush(&api_run, raw, len, nr);
}

/* A new row of @r (written out first when a row more might not fit a record): its index. */
static uint32_t gpu_run_row(struct gpu_run *r, uint64_t start_ns, uint32_t corr, uint8_t *raw,
			 size_t *len, uint64_t *nr)
{
	if (r->n == GPU_RUN_MAX || GPU_RUN_OVERHEAD + r->bytes + GPU_RUN_ENTRY_MAX > TRACE_MAX_RECORD)
		gpu_run_flush(r, raw, len, nr);
	if (!r->n) {
		r->base_ns = r->prev_start = start_ns;
		r->corr0 = r->prev_corr = corr;
		r->prev_aux = 0;
	}
	return r->n++;
}

static void gpu_run_set(struct gpu_run *r, uint32_t row, unsigned c, uint64_t v)
{
	r->col[c][row] = v;
	r->bytes += varint_len(v);
}

int gpucols_kernel(const struct trace_rec_gpu_kernel *k, uint8_t *raw, size_t *len, uint64_t *nr)
{
	int64_t idx = shape_find(&kernel_shapes, &kernel_layout, k, raw);
	uint32_t row;

	if (idx < 0)
		return 0;
	row = gpu_run_row(&kernel_run, k->start_ns, k->cupti_corr, raw, len, nr);
	gpu_run_set(&kernel_run, row, 0, (uint64_t)idx);
	gpu_run_set(&kernel_run, row, 1, zigzag_put64(k->start_ns - kernel_run.prev_start));
	gpu_run_set(&kernel_run, row, 2, k->end_ns - k->start_ns);
	gpu_run_set(&kernel_run, row, 3, zigzag_put32(k->cupti_corr - kernel_run.prev_corr));
	gpu_run_set(&kernel_run, row, 4, k->graph_id);
	gpu_run_set(&kernel_run, row, 5, zigzag_put64(k->graph_node - kernel_run.prev_aux));
	kernel_run.prev_start = k->start_ns;
	kernel_run.prev_corr = k->cupti_corr;
	kernel_run.prev_aux = k->graph_node;
	return 1;
}

void gpucols_kernel_full(const uint8_t *raw, size_t off, uint16_t size)
{
	shape_add(&kernel_shapes, &kernel_layout, raw, off, size);
}

void gpucols_api(const struct trace_rec_gpu_api *a, uint8_t *raw, size_t *len, uint64_t *nr)
{
	uint32_t row = gpu_run_row(&api_run, a->start_ns, a->cupti_corr, raw, len, nr);

	gpu_run_set(&api_run, row, 0, zigzag_put64(a->start_ns - api_run.prev_start));
	gpu_run_set(&api_run, row, 1, a->end_ns - a->start_ns);
	gpu_run_set(&api_run, row, 2, zigzag_put32(a->cupti_corr - api_run.prev_corr));
	gpu_run_set(&api_run, row, 3, zigzag_put32(a->tid - (uint32_t)api_run.prev_aux));
	gpu_run_set(&api_run, row, 4, a->cbid);
	gpu_run_set(&api_run, row, 5, a->domain);
	api_run.prev_start = a->start_ns;
	api_run.prev_corr = a->cupti_corr;
	api_run.prev_aux = a->tid;
}

/* ---- Launches (LAUNCH_REFS) ---- */

#define LAUNCH_REFS_MAX 2048u
#define LAUNCH_REFS_COLS TRACE_LAUNCH_REFS_COLUMNS
#define LAUNCH_REFS_ENTRY_MAX (LAUNCH_REFS_COLS * 5u)
#define LAUNCH_REFS_OVERHEAD (sizeof(struct trace_rec_launch_refs) + 7u)

_Static_assert(LAUNCH_REFS_OVERHEAD + LAUNCH_REFS_MAX * LAUNCH_REFS_ENTRY_MAX <= TRACE_MAX_RECORD,
	       "a full launch run fits one record");

static struct {
	uint32_t n;			/* launches held; 0 none */
	uint32_t seq0, prev_seq;
	size_t bytes;
	uint32_t col[LAUNCH_REFS_COLS][LAUNCH_REFS_MAX];
} launch_refs;

int64_t gpucols_launch_find(const struct trace_rec_launch *l, const uint8_t *raw)
{
	return shape_find(&launch_shapes, &launch_layout, l, raw);
}

int64_t gpucols_launch_full(const uint8_t *raw, size_t off, uint16_t size)
{
	return shape_add(&launch_shapes, &launch_layout, raw, off, size);
}

uint32_t gpucols_launches_held(void)
{
	return launch_refs.n;
}

size_t gpucols_launch_room(void)
{
	return (launch_refs.n ? LAUNCH_REFS_OVERHEAD + launch_refs.bytes : 0) + LAUNCH_REFS_OVERHEAD +
	       LAUNCH_REFS_ENTRY_MAX;
}

void gpucols_launch_flush(uint8_t *raw, size_t *len, uint64_t *nr)
{
	uint8_t *start = raw + *len, *p;
	struct trace_rec_launch_refs h;
	uint32_t c, i;

	if (!launch_refs.n)
		return;
	p = start + sizeof(h);
	for (c = 0; c < LAUNCH_REFS_COLS; c++)
		for (i = 0; i < launch_refs.n; i++)
			p = varint_put(p, launch_refs.col[c][i]);
	while ((p - start) % 8)
		*p++ = 0;
	memset(&h, 0, sizeof(h));
	h.hdr.type = TRACE_REC_LAUNCH_REFS;
	h.hdr.size = (uint16_t)(p - start);
	h.count = launch_refs.n;
	h.seq = launch_refs.seq0;
	memcpy(start, &h, sizeof(h));
	*len += (size_t)(p - start);
	*nr += launch_refs.n;
	launch_refs.n = 0;
	launch_refs.bytes = 0;
}

void gpucols_launch_hold(uint32_t shape, uint32_t dt, uint32_t dur, uint32_t seq, uint8_t *raw,
			 size_t *len, uint64_t *nr)
{
	uint32_t v[LAUNCH_REFS_COLS], c;

	if (launch_refs.n == LAUNCH_REFS_MAX)
		gpucols_launch_flush(raw, len, nr);
	if (!launch_refs.n)
		launch_refs.seq0 = launch_refs.prev_seq = seq;
	v[0] = shape;
	v[1] = dt;
	v[2] = dur;
	v[3] = (uint32_t)zigzag_put32(seq - launch_refs.prev_seq);
	for (c = 0; c < LAUNCH_REFS_COLS; c++) {
		launch_refs.col[c][launch_refs.n] = v[c];
		launch_refs.bytes += varint_len(v[c]);
	}
	launch_refs.prev_seq = seq;
	launch_refs.n++;
}

/* ---- Chunks ---- */

void gpucols_chunk_done(void)
{
	shapes_reset(&kernel_shapes);
	shapes_reset(&launch_shapes);
}

void gpucols_forget(void)
{
	kernel_run.n = api_run.n = launch_refs.n = 0;
	kernel_run.bytes = api_run.bytes = launch_refs.bytes = 0;
	gpucols_chunk_done();
}

/* ---- The launch run (LAUNCH_GAP_RUN) ---- */

struct gpucols_gap_run gpucols_gap;

void gpucols_gap_start(const void *owner, const struct trace_rec_launch_repeat *rep)
{
	gpucols_gap.owner = owner;
	gpucols_gap.seq = rep->seq;
	gpucols_gap.dt[0] = rep->hdr.dt_ns;
	gpucols_gap.dur[0] = rep->dur;
	gpucols_gap.n = 1;
}

void gpucols_gap_flush(uint8_t *raw, size_t *len, uint64_t *nr)
{
	struct gpucols_gap_run *g = &gpucols_gap;
	struct trace_rec_launch_run *r;
	uint8_t *start, *p;
	uint32_t i;

	if (!g->n)
		return;
	start = raw + *len;
	if (g->n == 1) {
		struct trace_rec_launch_repeat rep = {
			.hdr = { TRACE_REC_LAUNCH_REPEAT, sizeof(rep), g->dt[0] },
			.dur = g->dur[0],
			.seq = g->seq,
		};

		memcpy(start, &rep, sizeof(rep));
		*len += sizeof(rep);
		++*nr;
		g->n = 0;
		return;
	}
	r = (void *)start;
	p = start + sizeof(*r);
	p = varint_put(p, g->dt[0]);
	for (i = 1; i < g->n; i++)
		p = varint_put(p, g->dt[i] - g->dur[i - 1]);	/* gpucols_gap_extend: >= 0 */
	for (i = 0; i < g->n; i++)
		p = varint_put(p, g->dur[i]);
	while ((p - start) % 8)
		*p++ = 0;
	r->hdr.type = TRACE_REC_LAUNCH_GAP_RUN;
	r->hdr.size = (uint16_t)(p - start);
	r->hdr.dt_ns = 0;
	r->count = g->n;
	r->seq = g->seq;
	*len += (size_t)(p - start);
	*nr += g->n;
	g->n = 0;
}
