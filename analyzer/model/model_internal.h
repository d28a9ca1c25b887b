/* SPDX-License-Identifier: MIT */
/*
 * model_internal.h - what model.c (records, dictionaries, sorting, model_load), model_join.c
 * (the joins) and model_stream.c (model_stream's second read) share. Not for the other modules: they see
 * model.h only.
 */
#ifndef GPUSHIM_MODEL_INTERNAL_H
#define GPUSHIM_MODEL_INTERNAL_H

#include "model.h"
#include "trace/trace_reader.h"

/* Call number @id, operation number @op (model_stream holds a window of them; else all). */
static inline struct m_call *mcall(const struct model *m, size_t id)
{
	return &m->calls[id - m->calls_base];
}

static inline struct m_gpu_op *mgpu(const struct model *m, size_t op)
{
	return &m->gpu[op - m->gpu_base];
}

/* model.gpu_state: how far an operation held by model_stream is joined; handed on. */
enum { GS_DONE = 0, GS_WAIT, GS_PEND, GS_GONE };

/* Operation @op's join is now @state (model_stream holds what each held operation's is). */
static inline void set_state(struct model *m, size_t op, uint8_t state)
{
	if (m->gpu_state)
		m->gpu_state[op - m->gpu_base] = state;
}

/*
 * The calls of each recording thread in time order, keyed by its tid (several thread indices
 * can share a tid over a run), to find the call an API record falls in.
 */
struct thread_calls_by_tid {
	uint32_t tid;
	uint32_t *idx;			/* into m->calls, by t0 */
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
};

/*
 * The first read's view of the join: what the early join does with correlation numbers and
 * each thread's order of calls alone (no call or operation held), to tell before the second
 * read whether model_stream can settle without the whole trace. 8 bytes a slot.
 */
struct join_check {
	uint32_t *api;			/* an API record's number + 1 by slot; 0: empty */
	uint32_t *wait;			/* waiting operations' number + 1 by slot; 0: empty */
	int let_go;
	uint32_t let_go_hi;
	struct join_check_last { uint32_t tid, thread; uint64_t t0; } *last;	/* by thread id */
	size_t nr_last, last_cap, hot;	/* hot: the thread id of the last call */
	uint64_t nr_calls, nr_ops;
	const char *join_failed;	/* the early join would fail: load with the join after */
	const char *stream_failed;	/* the stream would give up: load whole */
};

/* A call, an API record, an operation as the first read sees them (model_join.c). */
void model_join_check_call_slow(struct join_check *jc, uint32_t tid, uint32_t thread,
				uint64_t t0);

static inline void model_join_check_call(struct join_check *jc, uint32_t tid, uint32_t thread,
					 uint64_t t0)
{
	struct join_check_last *l = jc->nr_last ? &jc->last[jc->hot] : NULL;

	/* Most calls: the same thread as the last, in order (the rest: model_join.c). */
	if (l && l->tid == tid && jc->nr_calls < M_NO_CALL &&
	    (t0 > l->t0 || (t0 == l->t0 && thread == l->thread))) {
		jc->nr_calls++;
		l->thread = thread;
		l->t0 = t0;
		return;
	}
	model_join_check_call_slow(jc, tid, thread, t0);
}
void model_join_check_api(struct join_check *jc, uint32_t corr);
void model_join_check_op(struct join_check *jc, uint32_t corr);
/* The end of the first read: operations still waiting for their API record stay unjoined. */
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
/* The GPU-work call of thread @t that API record @a falls in, or -1. */
int64_t model_call_in_thread(const struct model *m, struct thread_calls_by_tid *t,
			     const struct m_api_join *a);
/*
 * After loading (the calls and operations sorted; @moved: where the sort put each call, NULL
 * when nothing needs it): every operation joined to its call — by pushed id, as read
 * (@is_early) or by API record — then, for what is left, by launch order.
 */
void model_join_gpu(struct model *m, int is_early, const uint32_t *moved);
void model_join_by_order(struct model *m);

/* ---- Reading (model.c) ---- */

/* @m emptied, with @rd's header. */
void model_init(struct model *m, const struct trace_reader *rd);
/* Every record of @rd into @m, as m->stage says. 0 or -errno (rd->err). */
int model_read_records(struct model *m, struct trace_reader *rd);
/* What the dictionaries need once every record is read. */
void model_finish_dictionaries(struct model *m);
void model_free_shape_slots(struct model *m);
/* Give entry-point id @api a name, when the trace never defined it. */
void model_name_api(struct model *m, uint16_t api);

/* ---- The second read of model_stream (model_stream.c) ---- */

/* A record's start: the watermark. */
void model_stream_arrival(struct model *m, uint64_t t);
/* Call number @id (@c), operation m->gpu[@local], counter sample @d came: held until they are
 * handed on. -1: the stream gave up (m->stream_failed). */
int model_stream_call(struct model *m, size_t id, const struct m_call *c);
int model_stream_op(struct model *m, size_t local);
void model_stream_sample(struct model *m, const struct m_pm_sample *d);
/* After each record: release what is due now and then. Nonzero: the stream gave up. */
int model_stream_tick(struct model *m);

#endif /* GPUSHIM_MODEL_INTERNAL_H */
