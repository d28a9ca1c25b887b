// SPDX-License-Identifier: MIT
/*
 * fake_cupti.c - a stand-in for CUPTI's Activity API, built with the fake driver into
 * tests/fake_cupti/libcuda.so.1 (and loaded by the shim from there: GPUSHIM_CUPTI=<that file>),
 * so the shim's CUPTI path - its session, buffer hand-off, conversion by the writer, the join of
 * GPU work to calls through API records, the exit flush - runs where there is no GPU.
 *
 * What it does, as CUPTI does: buffers come from the client's request callback and go back
 * through its completion callback when full or flushed; timestamps come from the registered
 * timestamp callback; API records are made only for callback ids the client enabled, GPU
 * records only for enabled kinds; every traced call gets a new correlation id, shared by its
 * API record and the GPU record of its work. The fake "GPU" runs one operation at a time, 1 us
 * each, 0.2 us after the previous one ended or the call began. What it does not: several
 * devices, streams or contexts, graph replays, runtime API records, PM sampling beyond the
 * profiler's initialization (fake_pm.c: the shim's counters stop at their set-up), the
 * callback API's callbacks (its one subscription is modelled).
 * Environment: FAKE_CUPTI_FORCED_FLUSH_MS makes every forced flush take that long, as a real
 * one can while CUPTI waits on the device. FAKE_CUPTI_OP_NS sets how long each operation runs
 * (1 us). FAKE_CUPTI_LATE_END_NS: a kernel still running when the kernel kind goes off gets
 * an end that much later than it ran, as a real CUDA graph's kernels did on the H200
 * (doc/experiments/cupti_graph_records.cu, BENCHMARKS.md "Runs G, H, I and J").
 * FAKE_CUPTI_NO_API=1: no API records at all, as CUPTI gives none for a context created while
 * they were off: every operation is joined to its call by launch order.
 * FAKE_CUPTI_UNFINISHED=1: a forced flush gives an operation still running no end (and no
 * start if it has not started), as CUPTI gives a record it flushes unfinished.
 * FAKE_CUPTI_LOADS=FILE: whether CUPTI was attached, and its kernel records on, as each
 * kernel loaded (its first launch), written at exit (kernel_loads).
 * FAKE_CUPTI_FINALIZE_FAILS=1: cuptiFinalize fails and changes nothing.
 * FAKE_CUPTI_ATTACH_MS=N: cuptiActivityRegisterCallbacks (an attach) takes N ms.
 * cuptiFinalize detaches as CUPTI 13 does (BENCHMARKS.md run K): callbacks, clock, kinds and
 * API records forgotten; attached again, a context made before gives no API records.
 * What the H200 showed a detach to break ends the process here (abort, with a message): a
 * cuptiFinalize after API records were ever on (heap corruption in every such PyTorch process,
 * BENCHMARKS.md run Q), one called other than from a subscriber's callback at a CUDA call's
 * exit, as CUPTI's header asks (a PyTorch loop crashed in a launch, run U), and a detach
 * while CUDA graphs are in use, or a graph call made while
 * detached (fake_cupti_graph_call; a CUDA-graph loop failed, runs P and Q); and a detach that
 * would end another tool's session (FAKE_CUPTI_SUBSCRIBER, at cuptiSubscribe below).
 */
#define _GNU_SOURCE
#include <cupti.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "fake_cupti.h"

#define EXPORT __attribute__((visibility("default")))

#define GPU_OP_NS 1000u
#define GPU_QUEUE_NS 200u

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* Set by the registrations, cleared by cuptiFinalize, read by every traced call: atomic. */
static _Atomic(CUpti_BuffersCallbackRequestFunc) on_request;
static _Atomic(CUpti_BuffersCallbackCompleteFunc) on_complete;
static _Atomic(CUpti_TimestampCallbackFunc) clock_fn;
static _Atomic int kind_on[CUPTI_ACTIVITY_KIND_COUNT];
static _Atomic int driver_cbid_on[CUPTI_DRIVER_TRACE_CBID_SIZE];
static uint8_t *buf;			/* the buffer being filled, under lock */
static size_t buf_size, buf_used;
static uint64_t gpu_free_at;		/* under lock */
static _Atomic uint32_t next_corr = 1;
static _Atomic size_t nr_dropped;
/*
 * Like CUPTI 13: a context gives API records only if some were on when it was created (-1: no
 * context yet; a client that launches without making one gets it at its first traced call).
 */
static _Atomic int ctx_has_api = -1;
/* The H200's conditions for a detach that breaks the process (see the top). */
static _Atomic int api_ever_on, graphs_in_use, is_detached;
/* The one subscription to the callback API (cuptiSubscribe) is taken. */
static _Atomic int is_subscribed;

static const struct {
	uint32_t cbid;
	const char *name;
} cbid_names[] = {
	[FAKE_API_LAUNCH] = { CUPTI_DRIVER_TRACE_CBID_cuLaunchKernel, "cuLaunchKernel" },
	[FAKE_API_COPY] = { CUPTI_DRIVER_TRACE_CBID_cuMemcpyHtoD_v2, "cuMemcpyHtoD_v2" },
	[FAKE_API_SET] = { CUPTI_DRIVER_TRACE_CBID_cuMemsetD32_v2, "cuMemsetD32_v2" },
	/* Named, never recorded: a client enabling by name must leave it off. */
	{ CUPTI_DRIVER_TRACE_CBID_cuCtxSynchronize, "cuCtxSynchronize" },
};

#define ALIGN8(n) (((n) + 7) & ~(size_t)7)

static size_t record_size(CUpti_ActivityKind kind)
{
	switch ((int)kind) {
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
		return ALIGN8(sizeof(CUpti_ActivityKernel10));
	case CUPTI_ACTIVITY_KIND_MEMCPY:
		return ALIGN8(sizeof(CUpti_ActivityMemcpy6));
	case CUPTI_ACTIVITY_KIND_MEMSET:
		return ALIGN8(sizeof(CUpti_ActivityMemset4));
	case CUPTI_ACTIVITY_KIND_DRIVER:
		return ALIGN8(sizeof(CUpti_ActivityAPI));
	default:
		return 0;
	}
}

static uint64_t now(void)
{
	CUpti_TimestampCallbackFunc fn = atomic_load(&clock_fn);
	struct timespec ts;

	if (fn)
		return fn();
	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Append one record; a full buffer goes back to the client, outside the lock. */
static void emit(const void *rec, size_t len)
{
	size_t size = ALIGN8(len);
	uint8_t *full = NULL;
	size_t full_size = 0, full_used = 0;
	CUpti_BuffersCallbackRequestFunc req;
	CUpti_BuffersCallbackCompleteFunc done;

	pthread_mutex_lock(&lock);
	if (buf && buf_used + size > buf_size) {
		full = buf;
		full_size = buf_size;
		full_used = buf_used;
		buf = NULL;
	}
	if (!buf && (req = atomic_load(&on_request))) {
		size_t max_records = 0;

		req(&buf, &buf_size, &max_records);
		buf_used = 0;
		if (buf && buf_size < size)
			buf = NULL;
	}
	if (buf) {
		memcpy(buf + buf_used, rec, len);
		memset(buf + buf_used + len, 0, size - len);
		buf_used += size;
	} else {
		nr_dropped++;
	}
	pthread_mutex_unlock(&lock);
	if (full && (done = atomic_load(&on_complete)))
		done(NULL, 0, full, full_size, full_used);
}

/* A number from the environment (FAKE_CUPTI_*), or @dflt when unset or empty. */
static uint64_t env_u64(const char *name, uint64_t dflt)
{
	const char *v = getenv(name);

	return v && *v ? strtoull(v, NULL, 10) : dflt;
}

/* When the fake GPU runs an operation queued now: one at a time, in order. */
static void gpu_slot(uint64_t *start, uint64_t *end)
{
	static uint64_t op_ns;		/* under lock */
	uint64_t t = now() + GPU_QUEUE_NS;

	pthread_mutex_lock(&lock);
	if (!op_ns)
		op_ns = env_u64("FAKE_CUPTI_OP_NS", GPU_OP_NS);
	*start = t > gpu_free_at ? t : gpu_free_at + GPU_QUEUE_NS;
	*end = *start + op_ns;
	gpu_free_at = *end;
	pthread_mutex_unlock(&lock);
}

/* Where and when a GPU record's operation ran: the fake's one device, context and stream, the
 * next slot of its GPU; the call's correlation id. A macro: the record types differ. */
#define GPU_RECORD_FILL(r, a)                                                                      \
	do {                                                                                       \
		gpu_slot(&(r).start, &(r).end);                                                    \
		(r).deviceId = 0;                                                                  \
		(r).contextId = 1;                                                                 \
		(r).streamId = 7;                                                                  \
		(r).correlationId = (a)->corr;                                                     \
	} while (0)

/* ---- The fake driver's side ---- */

void fake_cupti_enter(struct fake_api *a)
{
	fake_pm_note_call();
	a->corr = atomic_fetch_add(&next_corr, 1);
	a->kernel_on = (uint8_t)atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]);
	a->copy_on = (uint8_t)atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_MEMCPY]);
	a->set_on = (uint8_t)atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_MEMSET]);
	a->start = now();
}

static int any_api_on(void)
{
	size_t i;

	for (i = 0; i < sizeof(cbid_names) / sizeof(cbid_names[0]); i++)
		if (atomic_load(&driver_cbid_on[cbid_names[i].cbid]))
			return 1;
	return 0;
}

void fake_cupti_context_created(void)
{
	atomic_store(&ctx_has_api, any_api_on());
}

void fake_cupti_leave(const struct fake_api *a, enum fake_api_kind kind)
{
	CUpti_ActivityAPI r;
	int expected = -1;

	atomic_compare_exchange_strong(&ctx_has_api, &expected, any_api_on());
	if (!atomic_load(&ctx_has_api) || !atomic_load(&driver_cbid_on[cbid_names[kind].cbid]) ||
	    env_u64("FAKE_CUPTI_NO_API", 0))
		return;
	memset(&r, 0, sizeof(r));
	r.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	r.cbid = cbid_names[kind].cbid;
	r.start = a->start;
	r.end = now();
	r.processId = (uint32_t)getpid();
	r.threadId = (uint32_t)syscall(SYS_gettid);
	r.correlationId = a->corr;
	emit(&r, sizeof(r));
}

/*
 * Each kernel's first launch, when CUDA loads it (lazily) and CUPTI instruments its code if it
 * is attached: a kernel loaded while CUPTI was attached kept costing GPU time on the H200 after
 * every kind was off (doc/experiments/cupti_graph_cost.cu), and PyTorch's graph loop more when
 * its kernels loaded inside a window (BENCHMARKS.md run U).
 * FAKE_CUPTI_LOADS=FILE: at exit, one line a kernel, "NAME ATTACHED KERNEL_RECORDS_ON" (0/1)
 * as it loaded. Under lock.
 */
#define NR_LOADS 64
static struct {
	char name[64];
	uint8_t is_attached, kernel_on;
} loads[NR_LOADS];
static size_t nr_loads;

static void kernel_loads(const struct fake_api *a, const char *name)
{
	size_t i;

	pthread_mutex_lock(&lock);
	for (i = 0; i < nr_loads && strcmp(loads[i].name, name); i++)
		;
	if (i == nr_loads && nr_loads < NR_LOADS) {
		snprintf(loads[i].name, sizeof(loads[i].name), "%s", name);
		loads[i].is_attached = atomic_load(&on_request) != NULL;
		loads[i].kernel_on = a->kernel_on;
		nr_loads++;
	}
	pthread_mutex_unlock(&lock);
}

__attribute__((destructor)) static void loads_write(void)
{
	const char *path = getenv("FAKE_CUPTI_LOADS");
	FILE *f;
	size_t i;

	if (!path || !*path || !(f = fopen(path, "w")))
		return;
	pthread_mutex_lock(&lock);
	for (i = 0; i < nr_loads; i++)
		fprintf(f, "%s %d %d\n", loads[i].name, loads[i].is_attached, loads[i].kernel_on);
	pthread_mutex_unlock(&lock);
	fclose(f);
}

void fake_cupti_kernel(const struct fake_api *a, const char *name, const unsigned int grid[3],
		       const unsigned int block[3])
{
	CUpti_ActivityKernel10 k;

	kernel_loads(a, name);
	if (!a->kernel_on)
		return;
	memset(&k, 0, sizeof(k));
	k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	GPU_RECORD_FILL(k, a);
	k.gridX = (int32_t)grid[0];
	k.gridY = (int32_t)grid[1];
	k.gridZ = (int32_t)grid[2];
	k.blockX = (int32_t)block[0];
	k.blockY = (int32_t)block[1];
	k.blockZ = (int32_t)block[2];
	k.registersPerThread = 16;
	k.name = name;
	emit(&k, sizeof(k));
}

void fake_cupti_copy(const struct fake_api *a, uint64_t bytes)
{
	CUpti_ActivityMemcpy6 m;

	if (!a->copy_on)
		return;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
	m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	m.bytes = bytes;
	GPU_RECORD_FILL(m, a);
	emit(&m, sizeof(m));
}

void fake_cupti_set(const struct fake_api *a, uint64_t bytes)
{
	CUpti_ActivityMemset4 m;

	if (!a->set_on)
		return;
	memset(&m, 0, sizeof(m));
	m.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	m.bytes = bytes;
	m.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
	GPU_RECORD_FILL(m, a);
	emit(&m, sizeof(m));
}

/* ---- The CUPTI entry points the shim uses ---- */

EXPORT CUptiResult cuptiGetVersion(uint32_t *version)
{
	if (!version)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*version = CUPTI_API_VERSION;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterCallbacks(CUpti_BuffersCallbackRequestFunc req,
						  CUpti_BuffersCallbackCompleteFunc done)
{
	uint64_t ms = env_u64("FAKE_CUPTI_ATTACH_MS", 0);

	if (!req || !done)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (ms)
		usleep((useconds_t)(ms * 1000));
	atomic_store(&is_detached, 0);
	atomic_store(&on_request, req);
	atomic_store(&on_complete, done);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityRegisterTimestampCallback(CUpti_TimestampCallbackFunc fn)
{
	pthread_mutex_lock(&lock);
	atomic_store(&clock_fn, fn);
	gpu_free_at = 0;	/* a time on the old clock: the GPU's queue is empty anyway */
	pthread_mutex_unlock(&lock);
	return CUPTI_SUCCESS;
}

static CUptiResult set_kind(CUpti_ActivityKind kind, int on)
{
	if ((unsigned)kind >= CUPTI_ACTIVITY_KIND_COUNT)
		return CUPTI_ERROR_INVALID_KIND;
	/* The API records' kinds, as a profiler enables them (none are made here). */
	if (on && (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME))
		atomic_store(&api_ever_on, 1);
	atomic_store(&kind_on[kind], on);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnable(CUpti_ActivityKind kind)
{
	return set_kind(kind, 1);
}

/* FAKE_CUPTI_LATE_END_NS (above): the kernels of the buffer being filled still running now. */
static void late_ends(void)
{
	uint64_t late = env_u64("FAKE_CUPTI_LATE_END_NS", 0), t = now();
	size_t at = 0, size;

	if (!late)
		return;
	pthread_mutex_lock(&lock);
	for (; buf && at < buf_used; at += size) {
		CUpti_Activity *a = (CUpti_Activity *)(buf + at);

		size = record_size(a->kind);
		if (!size)
			break;
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			CUpti_ActivityKernel10 *k = (CUpti_ActivityKernel10 *)a;

			if (k->end > t)
				k->end += late;
		}
	}
	pthread_mutex_unlock(&lock);
}

EXPORT CUptiResult cuptiActivityDisable(CUpti_ActivityKind kind)
{
	if (kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL &&
	    atomic_load(&kind_on[CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL]))
		late_ends();
	return set_kind(kind, 0);
}

EXPORT CUptiResult cuptiActivityEnableDriverApi(CUpti_CallbackId cbid, uint8_t enable)
{
	if (cbid >= CUPTI_DRIVER_TRACE_CBID_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (enable)
		atomic_store(&api_ever_on, 1);
	atomic_store(&driver_cbid_on[cbid], enable);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid, uint8_t enable)
{
	(void)cbid;
	if (enable)
		atomic_store(&api_ever_on, 1);
	return CUPTI_SUCCESS;		/* no runtime here: nothing to record */
}

static void broken(const char *why)
{
	fprintf(stderr, "fake CUPTI: %s\n", why);
	abort();
}

void fake_cupti_graph_call(const char *what)
{
	atomic_store(&graphs_in_use, 1);
	if (atomic_load(&is_detached)) {
		char text[128];

		snprintf(text, sizeof(text), "%s while CUPTI is detached", what);
		broken(text);
	}
}

EXPORT CUptiResult cuptiGetCallbackName(CUpti_CallbackDomain domain, uint32_t cbid,
					const char **name)
{
	size_t i;

	if (!name)
		return CUPTI_ERROR_INVALID_PARAMETER;
	for (i = 0; domain == CUPTI_CB_DOMAIN_DRIVER_API &&
		    i < sizeof(cbid_names) / sizeof(cbid_names[0]); i++)
		if (cbid_names[i].cbid == cbid) {
			*name = cbid_names[i].name;
			return CUPTI_SUCCESS;
		}
	return CUPTI_ERROR_INVALID_PARAMETER;
}

EXPORT CUptiResult cuptiSetThreadIdType(CUpti_ActivityThreadIdType type)
{
	return type == CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM ? CUPTI_SUCCESS :
							      CUPTI_ERROR_NOT_SUPPORTED;
}

/* FAKE_CUPTI_UNFINISHED (above): the buffer's operations still running now, left open. */
static void unfinished(void)
{
	uint64_t t = now();
	size_t at = 0, size;

	if (!env_u64("FAKE_CUPTI_UNFINISHED", 0))
		return;
	pthread_mutex_lock(&lock);
	for (; buf && at < buf_used; at += size) {
		CUpti_Activity *a = (CUpti_Activity *)(buf + at);
		uint64_t *start = NULL, *end = NULL;

		size = record_size(a->kind);
		if (!size)
			break;
		if (a->kind == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			start = &((CUpti_ActivityKernel10 *)a)->start;
			end = &((CUpti_ActivityKernel10 *)a)->end;
		} else if (a->kind == CUPTI_ACTIVITY_KIND_MEMCPY) {
			start = &((CUpti_ActivityMemcpy6 *)a)->start;
			end = &((CUpti_ActivityMemcpy6 *)a)->end;
		} else if (a->kind == CUPTI_ACTIVITY_KIND_MEMSET) {
			start = &((CUpti_ActivityMemset4 *)a)->start;
			end = &((CUpti_ActivityMemset4 *)a)->end;
		}
		if (end && *end > t) {
			*end = 0;
			if (*start > t)
				*start = 0;
		}
	}
	pthread_mutex_unlock(&lock);
}

EXPORT CUptiResult cuptiActivityFlushAll(uint32_t flag)
{
	uint64_t ms = env_u64("FAKE_CUPTI_FORCED_FLUSH_MS", 0);
	CUpti_BuffersCallbackCompleteFunc done;
	uint8_t *full = NULL;
	size_t full_size = 0, full_used = 0;

	if (ms && (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)) {
		struct timespec ts = { (time_t)(ms / 1000), (long)(ms % 1000 * 1000000) };

		nanosleep(&ts, NULL);
	}
	if (flag & CUPTI_ACTIVITY_FLAG_FLUSH_FORCED)
		unfinished();
	pthread_mutex_lock(&lock);
	if (buf && buf_used) {
		full = buf;
		full_size = buf_size;
		full_used = buf_used;
		buf = NULL;
	}
	pthread_mutex_unlock(&lock);
	if (full && (done = atomic_load(&on_complete)))
		done(NULL, 0, full, full_size, full_used);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNextRecord(uint8_t *buffer, size_t valid,
					      CUpti_Activity **record)
{
	uint8_t *p;
	size_t size;

	if (!buffer || !record)
		return CUPTI_ERROR_INVALID_PARAMETER;
	p = *record ? (uint8_t *)*record + record_size((*record)->kind) : buffer;
	if (p < buffer || (size_t)(p - buffer) + sizeof(CUpti_Activity) > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	size = record_size(((CUpti_Activity *)p)->kind);
	if (!size || (size_t)(p - buffer) + size > valid)
		return CUPTI_ERROR_MAX_LIMIT_REACHED;
	*record = (CUpti_Activity *)p;
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiActivityGetNumDroppedRecords(CUcontext ctx, uint32_t stream,
						     size_t *dropped)
{
	(void)ctx, (void)stream;
	if (!dropped)
		return CUPTI_ERROR_INVALID_PARAMETER;
	*dropped = atomic_exchange(&nr_dropped, 0);
	return CUPTI_SUCCESS;
}

/*
 * The callback API's one subscription, and no callbacks. FAKE_CUPTI_SUBSCRIBER=1: another tool
 * holds it (a profiler that reached CUPTI past the shim's interposers, as XLA's does):
 * cuptiSubscribe fails as CUPTI's does, and a detach would end that tool's session (abort).
 */
/*
 * The one subscription's callback and the domains it enabled: called at the exit of every
 * traced call (fake_cupti_exit), as CUPTI calls a subscriber's API callbacks.
 */
static _Atomic(CUpti_CallbackFunc) sub_fn;
static void *_Atomic sub_data;
static _Atomic unsigned sub_domains;
/* This thread is inside a subscriber's API exit callback: where cuptiFinalize is safe. */
static __thread int in_exit_callback;

EXPORT CUptiResult cuptiSubscribe(CUpti_SubscriberHandle *h, CUpti_CallbackFunc fn, void *data)
{
	static int token;
	int expected = 0;

	if (!h)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (env_u64("FAKE_CUPTI_SUBSCRIBER", 0) ||
	    !atomic_compare_exchange_strong(&is_subscribed, &expected, 1))
		return CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED;
	atomic_store(&sub_domains, 0);
	atomic_store(&sub_data, data);
	atomic_store(&sub_fn, fn);
	*h = (CUpti_SubscriberHandle)&token;
	return CUPTI_SUCCESS;
}

/* For tests/fake_cuda/cupti_client.c: whether the one subscription is held now (by the shim's
 * armed detach, when the client has none). */
EXPORT int fake_cupti_subscribed(void)
{
	return atomic_load(&is_subscribed);
}

EXPORT CUptiResult cuptiUnsubscribe(CUpti_SubscriberHandle h)
{
	if (!h || !atomic_exchange(&is_subscribed, 0))
		return CUPTI_ERROR_INVALID_PARAMETER;
	atomic_store(&sub_fn, NULL);
	atomic_store(&sub_domains, 0);
	return CUPTI_SUCCESS;
}

EXPORT CUptiResult cuptiEnableDomain(uint32_t enable, CUpti_SubscriberHandle h,
				     CUpti_CallbackDomain domain)
{
	if (!h || !atomic_load(&is_subscribed) || domain <= CUPTI_CB_DOMAIN_INVALID ||
	    domain >= CUPTI_CB_DOMAIN_SIZE)
		return CUPTI_ERROR_INVALID_PARAMETER;
	if (enable)
		atomic_fetch_or(&sub_domains, 1u << domain);
	else
		atomic_fetch_and(&sub_domains, ~(1u << domain));
	return CUPTI_SUCCESS;
}

void fake_cupti_exit(enum fake_api_kind kind)
{
	CUpti_CallbackFunc fn = atomic_load(&sub_fn);
	CUpti_CallbackData d;

	if (!fn || !(atomic_load(&sub_domains) & 1u << CUPTI_CB_DOMAIN_DRIVER_API))
		return;
	memset(&d, 0, sizeof(d));
	d.callbackSite = CUPTI_API_EXIT;
	d.functionName = cbid_names[kind].name;
	in_exit_callback = 1;
	fn(atomic_load(&sub_data), CUPTI_CB_DOMAIN_DRIVER_API, cbid_names[kind].cbid, &d);
	in_exit_callback = 0;
}

EXPORT CUptiResult cuptiFinalize(void)
{
	int expected = 1;
	size_t i;

	if (atomic_load(&api_ever_on))
		broken("cuptiFinalize after API records were on");
	if (atomic_load(&graphs_in_use))
		broken("cuptiFinalize with CUDA graphs in use");
	if (env_u64("FAKE_CUPTI_SUBSCRIBER", 0))
		broken("cuptiFinalize ends another tool's CUPTI session");
	if (!in_exit_callback)
		broken("cuptiFinalize outside a CUDA call's exit callback (it raced the "
		       "application's launches on another thread)");
	if (env_u64("FAKE_CUPTI_FINALIZE_FAILS", 0))
		return CUPTI_ERROR_UNKNOWN;	/* attached as before, its subscription kept */
	atomic_store(&is_detached, 1);
	/* Its subscription goes with it. */
	atomic_store(&sub_fn, NULL);
	atomic_store(&sub_domains, 0);
	atomic_store(&is_subscribed, 0);
	pthread_mutex_lock(&lock);
	atomic_store(&on_request, NULL);
	atomic_store(&on_complete, NULL);
	atomic_store(&clock_fn, NULL);
	gpu_free_at = 0;
	pthread_mutex_unlock(&lock);
	for (i = 0; i < CUPTI_ACTIVITY_KIND_COUNT; i++)
		atomic_store(&kind_on[i], 0);
	for (i = 0; i < CUPTI_DRIVER_TRACE_CBID_SIZE; i++)
		atomic_store(&driver_cbid_on[i], 0);
	/* The context there is (if any) gives no API records once CUPTI is attached again. */
	atomic_compare_exchange_strong(&ctx_has_api, &expected, 0);
	return CUPTI_SUCCESS;
}
