/* SPDX-License-Identifier: MIT */
/*
 * model_internal.h - what the files of model/ share: the record decoder's consumer table
 * (model.c decodes; the whole load, model_stream's first read and its second each consume),
 * the joins (model_join.c) and the first read's view of them. Not for the other folders: they
 * see model.h and first_look.h only.
 */
#ifndef GPUSHIM_MODEL_INTERNAL_H
#define GPUSHIM_MODEL_INTERNAL_H

#include "model.h"
#include "trace/trace_reader.h"

/* ---- The record decoder (model.c) and its consumers ---- */

/*
 * What a read keeps besides what it hands on (struct model_consumer.what): the dictionaries
 * and counts (a read that takes none stops where the one that took them ended), each launch's
 * and operation's shape interned (without: a launch keeps its FUNC id in .launch and an
 * operation goes to .op_read), failed calls' results, each call's seq (an older trace's
 * pushed ids).
 */
enum {
	MR_DICTS = 1u << 0,
	MR_SHAPES = 1u << 1,
	MR_RESULTS = 1u << 2,
	MR_SEQ = 1u << 3,
};

/*
 * The decoder hands each call, operation, counter sample and API record to one of these: the
 * whole load (model.c), the first read and the stream (model_stream.c) each set their own,
 * with their own state in @ctx. A NULL entry keeps what it would take: samples in model.pm,
 * API records in model.api_joins (the join after loading), NVTX events in model.nvtx.
 */
struct model_consumer {
	unsigned what;			/* MR_* */
	/* m->calls[@local] (MR_SHAPES: m->gpu[@local]) was read: the last one */
	void (*call)(void *ctx, struct model *m, size_t local);
	void (*op)(void *ctx, struct model *m, size_t local);
	/* without MR_SHAPES: an operation of shape @sh (not interned), nothing kept */
	void (*op_read)(void *ctx, struct model *m, const struct m_gpu_shape *sh, uint64_t start,
			uint64_t end, uint32_t corr);
	void (*sample)(void *ctx, struct model *m, const struct m_pm_sample *d);
	void (*api)(void *ctx, struct model *m, const struct m_api_join *a);
	void (*nvtx)(void *ctx, struct model *m, const struct m_nvtx *e);	/* NULL: kept */
	int (*after)(void *ctx, struct model *m);	/* each record; nonzero ends the read */
	void *ctx;
};

/* @m emptied, with @rd's header. */
void model_init(struct model *m, const struct trace_reader *rd);
/* Every record of @rd into @m and @mc. 0 or -errno (rd->err). */
int model_read_records(struct model *m, struct trace_reader *rd, const struct model_consumer *mc);
/* What the dictionaries need once every record is read. */
void model_finish_dictionaries(struct model *m);
void model_free_shape_slots(struct model *m);
/* Give entry-point id @api a name, when the trace never defined it; every id a call uses. */
void model_name_api(struct model *m, uint16_t api);
void model_name_undefined_apis(struct model *m);
/* model.results in order of call (qsort, bsearch). */
int model_cmp_result(const void *a, const void *b);
int model_cmp_call_stack(const void *a, const void *b);

/*
 * The calls of each recording thread in time order, keyed by its tid (several thread indices
 * can share a tid over a run), to find the call an API record falls in.
 */
struct thread_calls_by_tid {
	uint32_t tid;
	uint32_t *idx;			/* call numbers, by t0 */
	size_t n, cap;
	size_t hint;			/* where the last search ended (records come in order) */
};

/* ---- The join (model_join.c) ---- */

/*
 * GPU operations are joined while the trace is read, so that its API records (24 bytes an
 * operation) need not all be held to the end (model_join.c says how).
 */
#define EARLY_JOIN_SLOTS (1u << 17)

struct early_join_api {		/* an API record: 24 bytes */
	uint64_t start, end;
	uint32_t key;			/* its correlation number + 1; 0: an empty slot */
	uint32_t tid;
};

/* The operations waiting for an API record: 8 bytes. */
struct early_join_wait {
	uint32_t key;			/* their correlation number + 1; 0: an empty slot */
	uint32_t op;			/* the last one come; the rest chain by gpu[].call */
};

/* An operation whose API record's thread was not yet past it. */
struct early_join_pending {
	struct m_api_join a;
	uint32_t op;
};

/* early_join.state: how far an operation model_stream holds is joined. */
enum { GS_DONE = 0, GS_WAIT, GS_PEND, GS_GONE };

struct early_join {
	uint32_t slots;			/* a power of two: EARLY_JOIN_SLOTS, or fewer */
	struct early_join_api *api;
	struct early_join_wait *wait;
	int let_go;			/* has the table let any number go? */
	uint32_t let_go_hi;		/* the highest it let go of */
	struct thread_calls_by_tid *tids;	/* each thread id's calls so far, in time order */
	size_t nr_tids, tids_cap, last_tid;
	struct early_join_pending *pend;
	size_t nr_pend, pend_cap;
	const char *failed;		/* why the join after loading must do it; NULL */
	/*
	 * Which calls and operations model.calls and model.gpu hold: call number i is
	 * calls[i - calls_base] (the whole load: 0; model_stream lets go of the front), and the
	 * state of each operation held (model_stream; NULL for the whole load).
	 */
	size_t calls_base, gpu_base;
	uint8_t *state;
	size_t state_cap;
};

/* Call number @id, operation number @op of those @ej's read holds. */
static inline struct m_call *mcall(const struct model *m, const struct early_join *ej, size_t id)
{
	return &m->calls[id - ej->calls_base];
}

static inline struct m_gpu_op *mgpu(const struct model *m, const struct early_join *ej, size_t op)
{
	return &m->gpu[op - ej->gpu_base];
}

/* Operation @op's join is now @state (model_stream holds what each held operation's is). */
static inline void set_state(struct early_join *ej, size_t op, uint8_t state)
{
	if (ej->state)
		ej->state[op - ej->gpu_base] = state;
}

/*
 * The first read's view of the join: what the early join does with correlation numbers and
 * each thread's order of calls, without the calls and operations, to tell before the second
 * read whether model_stream can settle without the whole trace (model_join.c says how).
 */
struct join_check_api {		/* an API record waiting for its thread: 24 bytes */
	uint64_t start, end;
	uint32_t corr, tid;
};

/*
 * A call as the first read keeps it: its interval; t1 0 for a call that is no GPU work (and
 * for one ending at 0, which is then not placed: the stream is not tried, never wrongly).
 */
struct join_check_call {
	uint64_t t0, t1;
};

#define JOIN_CHECK_RECENT (1u << 17)	/* each thread id's last calls kept, at most */

struct join_check_thread {
	uint32_t tid, thread;		/* the thread slot of its last call */
	uint64_t t0;			/* ... and its start */
	struct join_check_call *recent;	/* call n of this tid: recent[n % recent_cap] */
	uint64_t nr_calls;
	size_t recent_cap;		/* a power of two, up to JOIN_CHECK_RECENT */
	size_t nr_pend;			/* API records waiting for its next call */
	size_t room;			/* calls it can take before the slow path must look */
};

struct join_check {
	struct early_join_api *api;	/* as the early join's table */
	uint8_t *wait;			/* by slot: operations wait (1), one not of a graph (2) */
	uint32_t *wait_key;
	uint64_t *wait_start;		/* ... the earliest start among them */
	int let_go;
	uint32_t let_go_hi;
	struct join_check_thread *threads;	/* by thread id */
	size_t nr_threads, threads_cap, hot;	/* hot: the thread id of the last call */
	struct join_check_api *pend;	/* API records whose thread was not yet past them */
	size_t nr_pend, pend_cap;
	uint64_t nr_ops;
	const char *join_failed;	/* the early join would fail: load with the join after */
	const char *stream_failed;	/* the stream would give up: load whole */
};

/* A call, an API record, an operation as the first read sees them (model_join.c). */
void model_join_check_call_slow(struct join_check *jc, uint32_t tid, const struct m_call *c);

/* Does call @c create GPU work that CUPTI reports (a join target)? */
static inline int model_call_is_gpu_work(const struct m_call *c)
{
	return c->kind == MC_LAUNCH || c->kind == MC_GRAPH_LAUNCH || c->kind == MC_COPY ||
	       c->kind == MC_SET;
}

static inline void model_join_check_call(struct join_check *jc, uint32_t tid,
					 const struct m_call *c)
{
	struct join_check_thread *t = jc->nr_threads ? &jc->threads[jc->hot] : NULL;

	/* Most calls: the same thread as the last, in order, with room (the rest: model_join.c). */
	if (t && t->tid == tid && t->room &&
	    (c->t0 > t->t0 || (c->t0 == t->t0 && c->thread == t->thread))) {
		t->room--;
		t->thread = c->thread;
		t->t0 = c->t0;
		t->recent[t->nr_calls++ & (t->recent_cap - 1)] = (struct join_check_call){
			c->t0, model_call_is_gpu_work(c) ? c->t1 : 0 };
		return;
	}
	model_join_check_call_slow(jc, tid, c);
}
void model_join_check_api(struct join_check *jc, const struct m_api_join *a);
void model_join_check_op(struct join_check *jc, uint32_t corr, int is_graph, uint64_t start);
/* The end of the first read: what still waits is settled as the stream's end settles it. */
void model_join_check_finish(struct join_check *jc);
void model_join_check_free(struct join_check *jc);

/* Call number @idx, operation number @op, API record @a was read (model_join.c). */
void model_early_join_call(struct model *m, struct early_join *ej, size_t idx);
void model_early_join_op(struct model *m, struct early_join *ej, size_t op);
void model_early_join_api(struct model *m, struct early_join *ej, const struct m_api_join *a);
/* The end of the trace: pairs still waiting for their thread's next call are joined now. */
void model_early_join_finish(struct model *m, struct early_join *ej);
void model_early_join_free(struct early_join *ej);
/* The calls of thread id @tid so far; NULL when it has none and @create is 0. */
struct thread_calls_by_tid *model_early_join_tid(struct early_join *ej, uint32_t tid, int create);
/* The GPU-work call of thread @t that API record @a falls in, or -1 (@calls_base: mcall's). */
int64_t model_call_in_thread(const struct model *m, size_t calls_base,
			     struct thread_calls_by_tid *t, const struct m_api_join *a);
/*
 * After loading (the calls and operations sorted; @moved: where the sort put each call, NULL
 * when nothing needs it): every operation joined to its call — by pushed id, as read
 * (@is_early) or by API record — then, for what is left, by launch order.
 */
void model_join_gpu(struct model *m, int is_early, const uint32_t *moved);
void model_join_by_order(struct model *m);

#endif /* GPUSHIM_MODEL_INTERNAL_H */
