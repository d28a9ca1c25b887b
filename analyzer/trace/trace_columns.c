// SPDX-License-Identifier: MIT
/*
 * trace_columns.c - the records that stand for others, each checked whole when read, then
 * handed out one record per trace_reader_next as the records it stands for: LAUNCH_REPEAT
 * (its thread's last LAUNCH of the chunk), LAUNCH_RUN and LAUNCH_GAP_RUN (columns of times),
 * LAUNCH_REFS, GPU_KERNEL_RUN and GPU_API_RUN (columns referring to the chunk's LAUNCH and
 * GPU_KERNEL shapes, which it keeps). Reads no file and formats no message: what is wrong with
 * a record is a string the reader puts in its error (trace_internal.h).
 */
#include "trace_internal.h"

#include <stdlib.h>
#include <string.h>

#include "gpushim/varint.h"
#include "uthash.h"
#include "util/util.h"

/* ---- The chunk's shapes, and each thread's last LAUNCH ---- */

struct last_launch {
	UT_hash_handle hh;
	uint32_t thread_index;
	const struct trace_rec_launch *rec;	/* the thread's last LAUNCH record, in the chunk */
	uint32_t ref;				/* its place in rd->launch_shapes, plus 1 */
};

static void forget_launches(struct trace_reader *rd)
{
	struct last_launch *e, *tmp;

	HASH_ITER(hh, rd->last_launches, e, tmp) {
		HASH_DEL(rd->last_launches, e);
		free(e);
	}
	rd->cur_last_launch = NULL;
}

void trace_columns_reset(struct trace_reader *rd)
{
	forget_launches(rd);
	rd->nr_kernel_shapes = rd->nr_launch_shapes = 0;
	rd->launch_refs.left = rd->gpu_run.left = rd->launch_run.left = 0;
}

void trace_columns_free(struct trace_reader *rd)
{
	forget_launches(rd);
	free(rd->kernel_shapes);
	free(rd->launch_shapes);
	free(rd->columns.values);
	rd->columns.values = NULL;
	rd->columns.cap = 0;
	rd->kernel_shapes = NULL;
	rd->launch_shapes = NULL;
	rd->nr_kernel_shapes = rd->kernel_shapes_cap = 0;
	rd->nr_launch_shapes = rd->launch_shapes_cap = 0;
}

/* @l is also the current block's thread's last LAUNCH: what its LAUNCH_REPEATs mean. */
uint32_t trace_launch_add(struct trace_reader *rd, const struct trace_rec_launch *l)
{
	struct last_launch *e = rd->cur_last_launch;

	if (!e) {
		HASH_FIND(hh, rd->last_launches, &rd->thread_index, sizeof(uint32_t), e);
		if (!e) {
			e = xcalloc(1, sizeof(*e));
			e->thread_index = rd->thread_index;
			HASH_ADD(hh, rd->last_launches, thread_index, sizeof(uint32_t), e);
		}
		rd->cur_last_launch = e;
	}
	e->rec = l;
	e->ref = (uint32_t)rd->nr_launch_shapes;
	XGROW(rd->launch_shapes, rd->launch_shapes_cap, rd->nr_launch_shapes + 1);
	rd->launch_shapes[rd->nr_launch_shapes++] = l;
	return (uint32_t)rd->nr_launch_shapes;
}

uint32_t trace_kernel_add(struct trace_reader *rd, const struct trace_rec_gpu_kernel *k)
{
	XGROW(rd->kernel_shapes, rd->kernel_shapes_cap, rd->nr_kernel_shapes + 1);
	rd->kernel_shapes[rd->nr_kernel_shapes++] = k;
	return (uint32_t)rd->nr_kernel_shapes;
}

/* ---- LAUNCH_REPEAT, and the launch every repeat, run and refs stands for ---- */

/* Expand into rd->expanded; -1 when the thread has no LAUNCH before it in this chunk. */
static int expand_repeat(struct trace_reader *rd, const struct trace_rec_launch_repeat *r)
{
	struct last_launch *e = rd->cur_last_launch;

	if (!e)
		HASH_FIND(hh, rd->last_launches, &rd->thread_index, sizeof(uint32_t), e);
	if (!e)
		return -1;
	rd->cur_last_launch = e;
	memcpy(&rd->expanded, e->rec, sizeof(rd->expanded));
	rd->expanded_ref = e->ref + 1;
	rd->expanded.call.hdr.size = sizeof(rd->expanded);
	rd->expanded.call.hdr.dt_ns = r->hdr.dt_ns;
	rd->expanded.call.dur = r->dur;
	rd->expanded.call.seq = r->seq;
	return 0;
}

/* Consumers see the LAUNCH a LAUNCH_REPEAT or a run's or refs' launch stands for. */
static void out_expanded(struct trace_reader *rd, struct trace_record *out)
{
	out->rec = &rd->expanded;
	out->type = TRACE_REC_LAUNCH;
	out->size = sizeof(rd->expanded);
	out->shape_ref = rd->expanded_ref;
}

/* @out is rd->expanded, a thread record of the current block at rd->now_ns. */
static void out_expanded_launch(struct trace_reader *rd, struct trace_record *out)
{
	memset(out, 0, sizeof(*out));
	out->is_thread = 1;
	out->tid = rd->tid;
	out->thread_index = rd->thread_index;
	out->chunk_off = rd->chunk_off;
	out_expanded(rd, out);
	out->ts_ns = rd->now_ns;
	rd->nr_records++;
}

int trace_launch_repeat(struct trace_reader *rd, const struct trace_rec_launch_repeat *r,
			struct trace_record *out)
{
	if (expand_repeat(rd, r) < 0)
		return -1;
	out_expanded(rd, out);
	return 0;
}

/* ---- LAUNCH_RUN and LAUNCH_GAP_RUN: a launch again, COUNT times, with times as columns ---- */

/*
 * An unsigned LEB128 varint of at most 5 bytes and 32 bits from [*p, end) (LAUNCH_RUN's
 * columns). Returns 0, or -1 when it runs past @end or does not fit.
 */
static int get_varint32(const uint8_t **p, const uint8_t *end, uint32_t *v)
{
	const uint8_t *start = *p;
	uint64_t x;

	if (varint_get(p, end, &x) < 0 || x > UINT32_MAX || *p - start > 5)
		return -1;
	*v = (uint32_t)x;
	return 0;
}

/*
 * Check a LAUNCH_RUN's or LAUNCH_GAP_RUN's (@is_gap) columns end to end before handing out any
 * of its launches, so a corrupt one fails at its own offset and never half-way: its varints,
 * and a gap run's deltas (a gap plus the previous duration) below 2^32. Returns NULL or what
 * is wrong.
 */
static const char *check_launch_run(struct trace_reader *rd, const struct trace_rec_launch_run *r,
				    int is_gap)
{
	const uint8_t *end = (const uint8_t *)r + r->hdr.size;
	const uint8_t *p = (const uint8_t *)(r + 1), *dt, *dur;
	uint32_t i, v, gap, prev = 0;

	if (!r->count)
		return "of 0 launches";
	if (r->count > (r->hdr.size - sizeof(*r)) / 2)
		return "counts more launches than its bytes hold";
	rd->launch_run.dt = p;
	for (i = 0; i < 2 * r->count; i++) {
		if (i == r->count)
			rd->launch_run.dur = p;
		if (get_varint32(&p, end, &v) < 0)
			return "varint runs past the record or past 32 bits";
	}
	if (end - p >= 8)
		return "has bytes after its columns";
	while (p < end)
		if (*p++)
			return "padding is not zero";
	/* The columns are whole now: read them in step, each gap against the duration before. */
	dt = rd->launch_run.dt;
	dur = rd->launch_run.dur;
	for (i = 0; is_gap && i < r->count; i++) {
		get_varint32(&dt, end, &gap);
		if (i && (uint64_t)gap + prev > UINT32_MAX)
			return "gap and duration add up past 32 bits";
		get_varint32(&dur, end, &prev);
	}
	rd->launch_run.is_gap = is_gap;
	return NULL;
}

const char *trace_launch_run_start(struct trace_reader *rd, const struct trace_rec_launch_run *r)
{
	struct trace_rec_launch_repeat first = { .seq = r->seq };
	const char *bad = check_launch_run(rd, r, r->hdr.type == TRACE_REC_LAUNCH_GAP_RUN);

	if (bad)
		return bad;
	if (expand_repeat(rd, &first) < 0)
		return "with no launch of its thread before it";
	rd->expanded.call.seq--;	/* each launch's seq is one past the one before */
	rd->launch_run.left = r->count;
	return NULL;
}

void trace_launch_run_next(struct trace_reader *rd, struct trace_record *out)
{
	const uint8_t *far = rd->raw + rd->pos;	/* the columns were checked: no bound is hit */
	uint32_t dt = 0, dur = 0;

	get_varint32(&rd->launch_run.dt, far, &dt);
	if (rd->launch_run.is_gap)	/* the first adds 0: it starts from a repeat with none */
		dt += rd->expanded.call.dur;	/* check_launch_run: below 2^32 */
	get_varint32(&rd->launch_run.dur, far, &dur);
	rd->now_ns += dt;
	rd->expanded.call.hdr.dt_ns = dt;
	rd->expanded.call.dur = dur;
	rd->expanded.call.seq++;
	rd->launch_run.left--;
	out_expanded_launch(rd, out);
}

/* ---- Records as columns: LAUNCH_REFS, GPU_KERNEL_RUN, GPU_API_RUN ---- */

/*
 * Decode column record @h's @ncols columns of @count varints each, after its first @fixed
 * bytes, into rd->columns.values (column after column), column c's values at most @max[c];
 * after them only zero padding, less than 8 bytes. Returns NULL or what is wrong: for a value
 * out of range @range[0] in the first column, @range[1] in the others.
 */
static const char *decode_columns(struct trace_reader *rd, const struct trace_rec_hdr *h,
				  size_t fixed, uint32_t count, unsigned ncols,
				  const uint64_t *max, const char *const range[2])
{
	const uint8_t *p = (const uint8_t *)h + fixed, *end = (const uint8_t *)h + h->size;
	uint32_t i;
	unsigned c;
	uint64_t v;

	XGROW(rd->columns.values, rd->columns.cap, (size_t)count * ncols);
	for (c = 0; c < ncols; c++) {
		uint64_t *out = rd->columns.values + (size_t)c * count;

		for (i = 0; i < count; i++) {
			if (varint_get(&p, end, &v) < 0)
				return "varint runs past the record or past 64 bits";
			if (v > max[c])
				return range[c > 0];
			out[i] = v;
		}
	}
	if (end - p >= 8)
		return "has bytes after its columns";
	while (p < end)
		if (*p++)
			return "padding is not zero";
	rd->columns.row = 0;
	rd->columns.nr_rows = count;
	return NULL;
}

/*
 * Check a LAUNCH_REFS's columns end to end (32-bit varints, every shape a LAUNCH the chunk has
 * before it) before handing out any of its launches, decoding them into rd->columns.
 */
const char *trace_launch_refs_start(struct trace_reader *rd, const struct trace_rec_launch_refs *r)
{
	static const char *const range[2] = {
		"refers to a launch the chunk does not have before it",
		"value past 32 bits",
	};
	uint64_t max[TRACE_LAUNCH_REFS_COLUMNS] = { 0, UINT32_MAX, UINT32_MAX, UINT32_MAX };
	const char *bad;

	if (!r->count)
		return "of 0 launches";
	if (r->count > (r->hdr.size - sizeof(*r)) / TRACE_LAUNCH_REFS_COLUMNS)
		return "counts more launches than its bytes hold";
	if (!rd->nr_launch_shapes)
		return "with no launch before it in the chunk";
	max[0] = rd->nr_launch_shapes - 1;
	bad = decode_columns(rd, &r->hdr, sizeof(*r), r->count, TRACE_LAUNCH_REFS_COLUMNS, max,
			     range);
	if (bad)
		return bad;
	rd->launch_refs.seq = r->seq;
	rd->launch_refs.left = r->count;
	return NULL;
}

void trace_launch_refs_next(struct trace_reader *rd, struct trace_record *out)
{
	const uint64_t *v = rd->columns.values + rd->columns.row++;
	const struct trace_rec_launch *shape = rd->launch_shapes[v[0]];
	uint32_t dt = (uint32_t)v[rd->columns.nr_rows];
	uint32_t dur = (uint32_t)v[2 * rd->columns.nr_rows];
	uint32_t dseq = (uint32_t)v[3 * rd->columns.nr_rows];

	memcpy(&rd->expanded, shape, sizeof(rd->expanded));
	rd->expanded.call.hdr.size = sizeof(rd->expanded);
	rd->expanded.call.hdr.dt_ns = dt;
	rd->expanded.call.dur = dur;
	rd->launch_refs.seq += (uint32_t)zigzag_get(dseq);
	rd->expanded.call.seq = rd->launch_refs.seq;
	rd->expanded_ref = (uint32_t)v[0] + 1;
	rd->now_ns += dt;
	rd->launch_refs.left--;
	out_expanded_launch(rd, out);
}

/*
 * Check a GPU run's columns end to end (every varint, every value's range, every shape a
 * GPU_KERNEL the chunk has before it) before handing out any of its records, decoding them into
 * rd->columns.
 */
const char *trace_gpu_run_start(struct trace_reader *rd, const struct trace_rec_gpu_run *r)
{
	static const uint64_t kernel_max[6] = { 0, UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
						UINT64_MAX };
	static const uint64_t api_max[6] = { UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
					     UINT32_MAX, UINT16_MAX };
	static const char *const kernel_range[2] = {
		"refers to a gpu_kernel the chunk does not have before it",
		"value out of its field's range",
	};
	static const char *const api_range[2] = {
		"value out of its field's range",
		"value out of its field's range",
	};
	int is_kernel = r->hdr.type == TRACE_REC_GPU_KERNEL_RUN;
	uint64_t max[6];
	const char *bad;

	if (!r->count)
		return "of 0 records";
	if (r->count > (r->hdr.size - sizeof(*r)) / 6)
		return "counts more records than its bytes hold";
	if (is_kernel && !rd->nr_kernel_shapes)
		return "with no gpu_kernel before it in the chunk";
	memcpy(max, is_kernel ? kernel_max : api_max, sizeof(max));
	if (is_kernel)
		max[0] = rd->nr_kernel_shapes - 1;
	bad = decode_columns(rd, &r->hdr, sizeof(*r), r->count, 6, max,
			     is_kernel ? kernel_range : api_range);
	if (bad)
		return bad;
	rd->gpu_run.type = r->hdr.type;
	rd->gpu_run.left = r->count;
	rd->gpu_run.start_ns = r->base_ns;
	rd->gpu_run.corr = r->corr;
	rd->gpu_run.aux = 0;
	return NULL;
}

void trace_gpu_run_next(struct trace_reader *rd, struct trace_record *out)
{
	const uint64_t *col = rd->columns.values + rd->columns.row++;
	size_t n = rd->columns.nr_rows;
	uint64_t v[6] = { col[0], col[n], col[2 * n], col[3 * n], col[4 * n], col[5 * n] };

	memset(out, 0, sizeof(*out));
	out->chunk_off = rd->chunk_off;
	if (rd->gpu_run.type == TRACE_REC_GPU_KERNEL_RUN) {
		struct trace_rec_gpu_kernel *k = &rd->gpu_kernel;

		memcpy(k, rd->kernel_shapes[v[0]], sizeof(*k));
		k->hdr.size = sizeof(*k);
		out->shape_ref = (uint32_t)v[0] + 1;
		rd->gpu_run.start_ns += zigzag_get(v[1]);
		k->start_ns = rd->gpu_run.start_ns;
		k->end_ns = rd->gpu_run.start_ns + v[2];
		rd->gpu_run.corr += (uint32_t)zigzag_get(v[3]);
		k->cupti_corr = rd->gpu_run.corr;
		k->graph_id = (uint32_t)v[4];
		rd->gpu_run.aux += zigzag_get(v[5]);
		k->graph_node = rd->gpu_run.aux;
		out->rec = k;
		out->type = TRACE_REC_GPU_KERNEL;
		out->size = sizeof(*k);
	} else {
		struct trace_rec_gpu_api *a = &rd->gpu_api;

		memset(a, 0, sizeof(*a));
		a->hdr.type = TRACE_REC_GPU_API;
		a->hdr.size = sizeof(*a);
		rd->gpu_run.start_ns += zigzag_get(v[0]);
		a->start_ns = rd->gpu_run.start_ns;
		a->end_ns = rd->gpu_run.start_ns + v[1];
		rd->gpu_run.corr += (uint32_t)zigzag_get(v[2]);
		a->cupti_corr = rd->gpu_run.corr;
		rd->gpu_run.aux = (uint32_t)(rd->gpu_run.aux + zigzag_get(v[3]));
		a->tid = (uint32_t)rd->gpu_run.aux;
		a->cbid = (uint32_t)v[4];
		a->domain = (uint16_t)v[5];
		out->rec = a;
		out->type = TRACE_REC_GPU_API;
		out->size = sizeof(*a);
	}
	rd->gpu_run.left--;
	rd->nr_records++;
}
