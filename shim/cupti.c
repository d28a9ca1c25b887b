// SPDX-License-Identifier: MIT
/*
 * cupti.c - GPU timestamps through CUPTI's Activity API: loading libcupti at run time, the
 * session (the shim's clock registered before any kind is enabled; CONCURRENT_KERNEL, MEMCPY,
 * MEMSET, MEMCPY2, and API records only for launch/copy/set calls, which join GPU work to the
 * calls), buffer hand-off to the writer, and coexistence with the application's own CUPTI client.
 * Never holds a callback subscription. Never fatal: any failure leaves a host-only trace.
 * Runs on: app threads (start, interposed cupti* calls), CUPTI's threads (buffer
 * callbacks: queue only, no decoding), the writer (flush, decoding), the exiting thread.
 * Only the writer touches what decoding writes (the trace's chunk through its emit, the counts,
 * the name memo); the other threads write to the trace through the meta stream.
 *
 * Coexistence: when the application's profiler (torch.profiler/Kineto, Nsight) registers its
 * own buffer callbacks, the shim flushes its records, turns its kinds off and notes the span as
 * host-only. When that client has disabled every kind it enabled (or finalized CUPTI), the shim
 * flushes the client's buffers to the client and starts again. Completed buffers always pass
 * through one proxy that returns each buffer to its owner.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <cupti.h>
#include <dlfcn.h>
#include <link.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ---- The library ---- */

struct cupti_fns {
	CUptiResult (*GetVersion)(uint32_t *);
	CUptiResult (*ActivityRegisterCallbacks)(CUpti_BuffersCallbackRequestFunc,
						 CUpti_BuffersCallbackCompleteFunc);
	CUptiResult (*ActivityRegisterTimestampCallback)(CUpti_TimestampCallbackFunc);
	CUptiResult (*ActivityEnable)(CUpti_ActivityKind);
	CUptiResult (*ActivityDisable)(CUpti_ActivityKind);
	CUptiResult (*ActivityFlushAll)(uint32_t);
	CUptiResult (*ActivityGetNextRecord)(uint8_t *, size_t, CUpti_Activity **);
	CUptiResult (*ActivityGetNumDroppedRecords)(CUcontext, uint32_t, size_t *);
	CUptiResult (*ActivityEnableDriverApi)(CUpti_CallbackId, uint8_t);
	CUptiResult (*ActivityEnableRuntimeApi)(CUpti_CallbackId, uint8_t);
	CUptiResult (*GetCallbackName)(CUpti_CallbackDomain, uint32_t, const char **);
	CUptiResult (*SetThreadIdType)(CUpti_ActivityThreadIdType);
	CUptiResult (*Finalize)(void);
	CUptiResult (*Subscribe)(CUpti_SubscriberHandle *, CUpti_CallbackFunc, void *);
	CUptiResult (*Unsubscribe)(CUpti_SubscriberHandle);
	CUptiResult (*EnableDomain)(uint32_t, CUpti_SubscriberHandle, CUpti_CallbackDomain);
};

/*
 * libcupti's handle, published (release) by cupti_start once the function table, the version,
 * the path and the buffer size are set and the session is set up; NULL until then and when the
 * shim runs no CUPTI. Whoever reads it non-NULL (lib(): acquire) - the writer, the
 * application's cupti* calls, the exit paths - sees those whole. Never cleared in a running
 * process (the child of a fork aside), so a reader may keep what it read.
 */
static struct cupti_fns cu;
static _Atomic(void *) cupti_lib;
static uint32_t cupti_version;
static char cupti_path[PATH_MAX];

static void *lib(void)
{
	return atomic_load_explicit(&cupti_lib, memory_order_acquire);
}

static int load_symbols(void *h)
{
#define SYM(field, name)                                                                           \
	do {                                                                                       \
		cu.field = (__typeof__(cu.field))resolve_dlsym(h, name);                          \
		if (!cu.field)                                                                     \
			return -1;                                                                 \
	} while (0)
	SYM(GetVersion, "cuptiGetVersion");
	SYM(ActivityRegisterCallbacks, "cuptiActivityRegisterCallbacks");
	SYM(ActivityRegisterTimestampCallback, "cuptiActivityRegisterTimestampCallback");
	SYM(ActivityEnable, "cuptiActivityEnable");
	SYM(ActivityDisable, "cuptiActivityDisable");
	SYM(ActivityFlushAll, "cuptiActivityFlushAll");
	SYM(ActivityGetNextRecord, "cuptiActivityGetNextRecord");
	SYM(ActivityGetNumDroppedRecords, "cuptiActivityGetNumDroppedRecords");
	SYM(ActivityEnableDriverApi, "cuptiActivityEnableDriverApi");
	SYM(ActivityEnableRuntimeApi, "cuptiActivityEnableRuntimeApi");
	SYM(GetCallbackName, "cuptiGetCallbackName");
	SYM(SetThreadIdType, "cuptiSetThreadIdType");
	SYM(Finalize, "cuptiFinalize");
	SYM(Subscribe, "cuptiSubscribe");
	SYM(Unsubscribe, "cuptiUnsubscribe");
	SYM(EnableDomain, "cuptiEnableDomain");
#undef SYM
	return 0;
}

/* Directory of an already loaded library whose file name starts with @prefix. */
struct find_dir {
	const char *prefix;
	char dir[PATH_MAX];
};

static int find_loaded_dir(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find_dir *f = arg;
	const char *base;

	(void)size;
	if (!info->dlpi_name || !info->dlpi_name[0])
		return 0;
	base = strrchr(info->dlpi_name, '/');
	if (!base || strncmp(base + 1, f->prefix, strlen(f->prefix)))
		return 0;
	snprintf(f->dir, sizeof(f->dir), "%.*s", (int)(base - info->dlpi_name), info->dlpi_name);
	return 1;
}

static void *try_open(const char *path, int flags)
{
	void *h = dlopen(path, flags);

	if (!h)
		dlerror();
	return h;
}

/*
 * Where libcupti comes from: a copy the application already loaded
 * (PyTorch's wheel) first, so two copies never meet; then GPUSHIM_CUPTI; then next to the CUDA
 * runtime the application loaded; then the toolkit. Only CUDA 13's CUPTI: record layouts are
 * per major version.
 */
static void *locate_cupti(void)
{
	static const char *const dirs[] = { "/usr/local/cuda/lib64",
					    "/usr/local/cuda/extras/CUPTI/lib64",
					    "/usr/local/cuda/targets/x86_64-linux/lib" };
	const char *home = getenv("CUDA_HOME");
	struct find_dir f;
	char path[PATH_MAX + 32];
	void *h;
	size_t i;

	h = try_open("libcupti.so.13", RTLD_NOW | RTLD_NOLOAD);
	if (h)
		return h;
	if (shim.cfg.cupti)
		return try_open(shim.cfg.cupti, RTLD_NOW | RTLD_LOCAL);
	f.prefix = "libcudart.so.13";
	if (dl_iterate_phdr(find_loaded_dir, &f)) {
		snprintf(path, sizeof(path), "%s/libcupti.so.13", f.dir);
		if ((h = try_open(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	if (home) {
		snprintf(path, sizeof(path), "%s/lib64/libcupti.so.13", home);
		if ((h = try_open(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
		snprintf(path, sizeof(path), "%s/extras/CUPTI/lib64/libcupti.so.13", home);
		if ((h = try_open(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		snprintf(path, sizeof(path), "%s/libcupti.so.13", dirs[i]);
		if ((h = try_open(path, RTLD_NOW | RTLD_LOCAL)))
			return h;
	}
	return try_open("libcupti.so.13", RTLD_NOW | RTLD_LOCAL);
}

/* ---- Session state ---- */

enum cupti_state {
	CS_NONE = 0,			/* never started (or unavailable) */
	CS_ACTIVE = 1,
	CS_YIELDED = 2,			/* the application's client owns CUPTI */
	CS_EXITING = 3,
	CS_RESUME_PENDING = 4,		/* the client is done; waiting for it to collect */
};

/* A client that disabled everything but never flushes: resume after this long. */
#define RESUME_TIMEOUT_NS (1000u * 1000000u)
/* Set before state turns RESUME_PENDING; read by the writer. */
static _Atomic uint64_t pending_since;

/* Recursive: a client's completion callback, run inside our flush, may call back into CUPTI. */
static pthread_mutex_t state_lock = PTHREAD_RECURSIVE_MUTEX_INITIALIZER_NP;
static _Atomic int state;

/* ---- Buffers: allocated here, completed by CUPTI, decoded by the writer ---- */

/* Enough to ride out a slow writer; beyond it CUPTI drops and counts. */
#define MAX_BUFFERS 64

struct cbuf {
	uint8_t *data;
	size_t valid;
	uint32_t edge;			/* completed by a detach's flush: that close's number */
	int is_detaching;		/* handed back inside cuptiFinalize: not decoded */
};

static pthread_mutex_t buf_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *all_bufs[MAX_BUFFERS];	/* every buffer the shim owns */
static int nr_all;
static uint8_t *free_bufs[MAX_BUFFERS];
static int nr_free;
static struct cbuf done_bufs[MAX_BUFFERS];
static int nr_done;
static size_t buf_bytes;
static _Atomic uint64_t nr_dropped, nr_buffers_done, nr_buffers_converted;
/* A detach's forced flush is under way: the close it follows (nr_edges then), else 0. */
static uint32_t completing_edge;
/* cuptiFinalize is under way (buf_lock): no call into CUPTI from its buffer callback. */
static int is_finalizing;

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	uint8_t *b = NULL;

	pthread_mutex_lock(&buf_lock);
	if (nr_free)
		b = free_bufs[--nr_free];
	else if (nr_all < MAX_BUFFERS && (b = aligned_alloc(8, buf_bytes)))
		all_bufs[nr_all++] = b;
	pthread_mutex_unlock(&buf_lock);
	*buffer = b;			/* NULL: CUPTI drops the records and counts them */
	*size = b ? buf_bytes : 0;
	*max_records = 0;
}

static int is_ours(const uint8_t *b)
{
	int i;

	for (i = 0; i < nr_all; i++)
		if (all_bufs[i] == b)
			return 1;
	return 0;
}

/* Set under state_lock; foreign_complete is read by CUPTI's threads too (no lock there). */
static _Atomic(CUpti_BuffersCallbackCompleteFunc) foreign_complete;
static CUpti_BuffersCallbackRequestFunc foreign_request;
static CUpti_TimestampCallbackFunc app_clock;	/* the application's, if it registered one */

/* The one completion callback ever registered: every buffer goes back to whoever owns it. */
static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size,
				      size_t valid)
{
	size_t dropped = 0;
	int mine, finalizing;

	pthread_mutex_lock(&buf_lock);
	mine = is_ours(buffer);
	if (mine && atomic_load(&state) == CS_EXITING) {
		/* After the exit flush nothing is decoded any more (libcupti may be gone). */
		free_bufs[nr_free++] = buffer;
		pthread_mutex_unlock(&buf_lock);
		return;
	}
	if (mine && nr_done < MAX_BUFFERS) {
		done_bufs[nr_done].data = buffer;
		done_bufs[nr_done].valid = valid;
		done_bufs[nr_done].edge = completing_edge;
		done_bufs[nr_done].is_detaching = is_finalizing;
		nr_done++;
	}
	finalizing = is_finalizing;
	pthread_mutex_unlock(&buf_lock);
	if (!mine) {
		CUpti_BuffersCallbackCompleteFunc fn =
			atomic_load_explicit(&foreign_complete, memory_order_acquire);

		if (fn)
			fn(ctx, stream, buffer, size, valid);
		return;
	}
	if (cu.ActivityGetNumDroppedRecords && !finalizing &&
	    cu.ActivityGetNumDroppedRecords(ctx, stream, &dropped) == CUPTI_SUCCESS && dropped)
		atomic_fetch_add(&nr_dropped, dropped);
	atomic_fetch_add(&nr_buffers_done, 1);
	tbuf_kick_writer();
}

/* ---- The session ---- */

static int is_wanted;			/* the shim should be running CUPTI when it can */
/* Kinds the application's client enabled and has not disabled, whoever held CUPTI then. */
static uint64_t foreign_kinds;
static int has_foreign;

static const CUpti_ActivityKind shim_kinds[] = {
	CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
	CUPTI_ACTIVITY_KIND_MEMSET,	       CUPTI_ACTIVITY_KIND_MEMCPY2,
};

/* The hooks' clock (clock.c): CUPTI's API records and the hooks' calls share one timeline. */
static uint64_t CUPTIAPI shim_timestamp(void)
{
	return clock_now_ns();
}

/* CUPTI's own default clock on Linux, for a client that never registered one. */
static uint64_t CUPTIAPI realtime_timestamp(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static int api_wanted(const char *name, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(name, *prefixes, strlen(*prefixes)))
			return 1;
	return 0;
}

/*
 * API records for calls that create GPU work only: what the join needs, nothing else. Never
 * with GPUSHIM_CUPTI_DETACH: a cuptiFinalize after they had been on corrupted the process's
 * heap (H200, CUDA 13.0, BENCHMARKS.md run Q: every detaching PyTorch process that had them
 * aborted, none of those that never had them); the kernels join their launches by order.
 */
static void enable_api_records(uint8_t enable)
{
	static const char *const drv_prefixes[] = { "cuLaunch", "cuMemcpy", "cuMemset",
						    "cuGraphLaunch", NULL };
	static const char *const rt_prefixes[] = { "cudaLaunch", "cudaMemcpy", "cudaMemset",
						   "cudaGraphLaunch", NULL };
	const char *name;
	uint32_t cbid;

	if (shim.cfg.cupti_detach)
		return;
	for (cbid = 1; cbid < CUPTI_DRIVER_TRACE_CBID_SIZE; cbid++)
		if (cu.GetCallbackName(CUPTI_CB_DOMAIN_DRIVER_API, cbid, &name) == CUPTI_SUCCESS &&
		    name && api_wanted(name, drv_prefixes))
			cu.ActivityEnableDriverApi(cbid, enable);
	for (cbid = 1; cbid < CUPTI_RUNTIME_TRACE_CBID_SIZE; cbid++)
		if (cu.GetCallbackName(CUPTI_CB_DOMAIN_RUNTIME_API, cbid, &name) == CUPTI_SUCCESS &&
		    name && api_wanted(name, rt_prefixes))
			cu.ActivityEnableRuntimeApi(cbid, enable);
}

static void write_info(uint32_t st, tbuf_emit_fn emit, void *ctx);
static void resume_now(void);
static void detach_settle(void);
static int cupti_away(void);

/*
 * Sampled mode (GPUSHIM_MODE=sampled): between two windows the shim's kinds and API records
 * are off while the session stays the shim's (state CS_ACTIVE, so the application's client
 * meets the same hand-over as in a full run). Under state_lock; session_start clears it.
 */
static int is_paused;
static uint32_t window_nr;		/* the windows opened (sampled mode's start is none) */
/*
 * Contexts being created now, and whether the shim turned the API records on for them between
 * two windows (cupti_context_begin). Under state_lock.
 */
static int nr_creating;
static int is_api_lent;
/*
 * The API records go on this long before a window's kinds (window_tick), so that work launched
 * just before the window and run inside it has its call's record: without the lead a CUDA-graph
 * loop left a graph's kernels unjoined at each window's start (H200). Twice the writer's
 * longest sleep, so that a tick falls in it.
 */
#define API_LEAD_NS (50u * 1000000u)
static int is_api_early;

/*
 * GPUSHIM_CUPTI_DETACH=1 (asked for by name; it crashed PyTorch programs on the H200, run U:
 * config.c): between two windows CUPTI is detached (cuptiFinalize, detach_callback), not only
 * switched off. Once the kernel kind has been on, an attached CUPTI
 * costs each launch ~20 % more with every kind off (H200, CUDA 13.0: BENCHMARKS.md run M;
 * detached, a launch-bound PyTorch loop ran within ~1-2 % of plain, run R). What
 * it costs: no API records (enable_api_records: the kernels join their launches by order,
 * model_join_by_order) and no counters (config.c). A process that uses CUDA graphs is not
 * detached again, and attached at once if it is detached (cupti_graph_use): detaching broke
 * a graph loop in PyTorch, with or without the shim (runs P, Q); nor one whose CUPTI client
 * turned API records on (client_api_on), nor while another tool is subscribed to CUPTI
 * (window_detach's subscription refused). Set by a CUDA call's exit callback
 * (detach_callback) and cleared on the writer (window_open), in a hand-over (session_stop)
 * and by a graph's first call (cupti_graph_use), under state_lock; read without it by the
 * writer's and the exit's flushes (a flush would attach CUPTI again; cupti_away).
 * detach_due: the writer's, from a close's flush until its detach (after the flush's buffers
 * are decoded: decoding calls into CUPTI, which must not attach it again).
 */
static _Atomic int is_detached;
/* A detach armed at a close, or running in a CUDA call's exit callback (detach_callback). */
enum { DETACH_IDLE, DETACH_ARMED, DETACH_RUNNING };
static _Atomic int detach_state;
static int detach_due;
static _Atomic uint64_t detach_bufs;	/* buffers handed back inside cuptiFinalize, all along */
/* The process has made a CUDA graph call (cupti_graph_use): CUPTI is not detached again. */
static _Atomic int graphs_in_use;
/*
 * The application's CUPTI client turned API records on (the DRIVER or RUNTIME kind, or some
 * callback id's): a detach after that is what corrupted the heap, so CUPTI is not detached
 * again (under state_lock; noted once, at the first close that does not detach for it).
 */
static int client_api_on, client_api_noted;
/* Another tool holds CUPTI's one subscription (window_detach's was refused): no detach after. */
static int subscriber_seen;
static _Atomic uint64_t session_t0;	/* when the first session started: the windows' grid */

/*
 * Sampled mode: CUPTI gives a kernel that is in flight when its kind goes off an end time far
 * later than it ran (H200, CUDA 13.0: the 600 kernels of a CUDA graph launched just before a
 * window's close "ended" 75-176 ms after it, their starts 1.9 us apart in one stream; one
 * launched just after the close, the same; doc/experiments/cupti_graph_records.cu shows that
 * graphs are traced whole otherwise, wherever they were built). So a record that spans a
 * window's close is dropped, as is a graph kernel's that starts between two windows; each
 * close's drops are noted (a CUPTI_OFF note, "records dropped at sampled window N's close"),
 * at the earliest dropped start where one started before the close: the window's GPU
 * timestamps are whole until then, and the analyzer takes the window as ending there.
 * The writer's alone: window_close/window_open and the conversion run on its thread.
 */
#define WINDOW_EDGES 16
struct window_edge {
	uint64_t open_ns;	/* when the window that closed here opened */
	uint64_t close_ns;
	uint64_t next_open_ns;	/* 0 until the next one opens */
	uint64_t first_ns;	/* the earliest start of a dropped record that spans the close */
	uint64_t nr_dropped, nr_noted;
	uint32_t window;
};
static struct window_edge edges[WINDOW_EDGES];
static uint32_t nr_edges;	/* closes met; the last is edges[(nr_edges - 1) % WINDOW_EDGES] */
static uint64_t window_open_ns;	/* when the window now open (or last open) opened */

/* Whether a GPU record is dropped at a window's edge (above). Writer thread. */
static int window_drops(uint64_t start, uint64_t end, int is_graph)
{
	uint32_t i, n = nr_edges < WINDOW_EDGES ? nr_edges : WINDOW_EDGES;

	for (i = 0; i < n; i++) {
		struct window_edge *e = &edges[(nr_edges - 1 - i) % WINDOW_EDGES];

		if (e->next_open_ns && start >= e->next_open_ns)
			return 0;	/* in a later window: no earlier close concerns it */
		if (start < e->close_ns && end > e->close_ns) {
			if (!e->first_ns || start < e->first_ns)
				e->first_ns = start;
		} else if (!(is_graph && start >= e->close_ns)) {
			continue;
		}
		e->nr_dropped++;
		return 1;
	}
	return 0;
}

/* The notes of the drops converted since the last call (window_drops). Writer thread. */
static void window_drops_note(void)
{
	uint32_t i, n = nr_edges < WINDOW_EDGES ? nr_edges : WINDOW_EDGES;

	for (i = 0; i < n; i++) {
		struct window_edge *e = &edges[(nr_edges - 1 - i) % WINDOW_EDGES];
		char text[160];
		uint64_t ts = e->close_ns;

		if (e->nr_dropped == e->nr_noted)
			continue;
		if (e->first_ns)
			ts = e->first_ns > e->open_ns ? e->first_ns : e->open_ns;
		snprintf(text, sizeof(text),
			 "records dropped at sampled window %u's close: %llu in all (in flight "
			 "then: CUPTI's end times for them are not reliable)",
			 e->window, (unsigned long long)e->nr_dropped);
		rec_note(TRACE_NOTE_CUPTI_OFF, ts, text);
		e->nr_noted = e->nr_dropped;
	}
}

/*
 * Context: state_lock held. @with_kinds: the shim's kinds and API records on now (a full run,
 * a resumption after the application's client); else the session starts paused, as sampled
 * mode does (its first window opens one period in, window_tick), and detached with
 * GPUSHIM_CUPTI_DETACH: CUPTI is first attached by that window (window_open) or a graph's
 * first call. Why: CUPTI instruments a kernel's code when its module loads (lazily: at the
 * kernel's first launch), and a kernel loaded while CUPTI is attached keeps costing GPU time
 * after every kind is off: +18 % a tiny graph kernel loaded while attached with kinds off,
 * none for one loaded before CUPTI was first attached (H200, CUDA 13.0,
 * doc/experiments/cupti_graph_cost.cu); and PyTorch's graph loop of tiny kernels, first run
 * inside a window at the start, cost +63 % for the rest of the run, against +15-21 % with that
 * first window over before they loaded (BENCHMARKS.md run U). A program loads most of its
 * kernels in its first steps. Returns 0 or a CUptiResult.
 */
static int session_start(int with_kinds)
{
	CUptiResult r;
	size_t i;

	if (!with_kinds && shim.cfg.cupti_detach) {
		is_paused = 1;
		atomic_store(&is_detached, 1);
		atomic_store(&state, CS_ACTIVE);
		return 0;
	}
	/* The clock first: every record must share the trace's CLOCK_MONOTONIC timeline. */
	r = cu.ActivityRegisterTimestampCallback(shim_timestamp);
	if (r != CUPTI_SUCCESS)
		return r;
	cu.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
	r = cu.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	if (r != CUPTI_SUCCESS)
		return r;
	if (!with_kinds) {
		is_paused = 1;
		atomic_store(&state, CS_ACTIVE);
		return 0;
	}
	for (i = 0; i < sizeof(shim_kinds) / sizeof(shim_kinds[0]); i++) {
		r = cu.ActivityEnable(shim_kinds[i]);
		if (r != CUPTI_SUCCESS && shim_kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL)
			return r;
	}
	enable_api_records(1);
	is_paused = 0;
	atomic_store(&state, CS_ACTIVE);
	return 0;
}

/*
 * Context: state_lock held. Flushes the shim's records in its own clock, turns its kinds off,
 * and gives CUPTI back the clock the application expects: its own callback if it registered
 * one, else CUPTI's default (CLOCK_REALTIME). Kineto drops events outside its capture window,
 * measured on that clock: records on the shim's clock would all vanish from torch.profiler.
 */
static void session_stop(int new_state)
{
	size_t i;

	detach_settle();
	if (atomic_load(&is_detached)) {
		/* Nothing of the shim's to flush or switch off: the client attaches CUPTI anew. */
		atomic_store(&is_detached, 0);
		if (app_clock)
			cu.ActivityRegisterTimestampCallback(app_clock);
		atomic_store(&state, new_state);
		return;
	}
	cu.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	enable_api_records(0);
	/* A kind the client enabled itself (Kineto's force load) stays on: it is the client's. */
	for (i = 0; i < sizeof(shim_kinds) / sizeof(shim_kinds[0]); i++)
		if (!(foreign_kinds >> shim_kinds[i] & 1))
			cu.ActivityDisable(shim_kinds[i]);
	cu.ActivityRegisterTimestampCallback(app_clock ? app_clock : realtime_timestamp);
	atomic_store(&state, new_state);
}

/* A hand-over that keeps the application's thread this long is noted (a WARNING note). */
#define HANDOVER_SLOW_NS (50u * 1000000u)

/*
 * Context: state_lock held. The application's client takes CUPTI over. The span without the
 * shim's GPU timestamps is noted from @t0, when the client's call came: what the application
 * does after that belongs to the client's session, however long the forced flush and the
 * kinds going off take (the time is noted when it is long). A resumption still waiting for
 * the client's flush is called off: the client has started again and keeps CUPTI.
 */
static void yield_to_app(const char *why, uint64_t t0)
{
	char slow[96];
	uint64_t took;

	if (atomic_load(&state) == CS_RESUME_PENDING)
		atomic_store(&state, CS_YIELDED);
	if (atomic_load(&state) != CS_ACTIVE)
		return;
	session_stop(CS_YIELDED);
	rec_note(TRACE_NOTE_CUPTI_OFF, t0, why);
	took = clock_now_ns() - t0;
	if (took >= HANDOVER_SLOW_NS) {
		snprintf(slow, sizeof(slow), "handing CUPTI to the application's client took %llu ms",
			 (unsigned long long)(took / 1000000u));
		rec_note(TRACE_NOTE_WARNING, t0 + took, slow);
	}
}

static void cupti_atexit(void)
{
	uint64_t want, deadline;
	int i;

	deadline = shim_exit_begin();
	pthread_mutex_lock(&state_lock);
	if (!shim_tls.depth) {
		detach_settle();
	} else {
		/* Inside a hook: no CUPTI call here, but no detach may start after this either. */
		int expected = DETACH_ARMED;

		atomic_compare_exchange_strong(&detach_state, &expected, DETACH_IDLE);
	}
	/* Not from a signal handler that interrupted a hook: that thread may hold CUPTI's lock. */
	if (atomic_load(&state) == CS_ACTIVE && !shim_tls.depth && !cupti_away())
		cu.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	/* From here on nothing calls into libcupti: its destructors may run before ours. */
	atomic_store(&state, CS_EXITING);
	pthread_mutex_unlock(&state_lock);

	/*
	 * Let the writer decode what the flush returned (bounded: at most 2 s). Not when exit()
	 * runs on the writer itself (the program's last thread had gone): it decodes them when
	 * the destructor has it finish the trace.
	 */
	want = atomic_load(&nr_buffers_done);
	for (i = 0; i < 2000 && atomic_load(&nr_buffers_converted) < want &&
		    atomic_load(&shim.mode) != SHIM_OFF && !writer_is_this_thread() &&
		    clock_now_ns() < deadline;
	     i++) {
		struct timespec ts = { 0, 1000000 };

		tbuf_kick_writer();
		nanosleep(&ts, NULL);
	}
}

/* The last reason CUPTI went off, for the warning at exit (cupti_gpu_records). */
static char off_why[160];
static pthread_mutex_t off_lock = PTHREAD_MUTEX_INITIALIZER;

static void note_off(const char *why)
{
	pthread_mutex_lock(&off_lock);
	snprintf(off_why, sizeof(off_why), "%s", why);
	pthread_mutex_unlock(&off_lock);
	rec_note(TRACE_NOTE_CUPTI_OFF, clock_now_ns(), why);
	shim_log(LOG_INFO, "GPU timestamps off: %s", why);
}

void cupti_start(void)
{
	char why[PATH_MAX + 64];
	uint64_t t;
	void *h;
	int ret;

	if (shim.cfg.mode == RECORD_HOST) {
		note_off("GPUSHIM_MODE=host");
		return;
	}
	if (shim.cfg.cupti && !strcmp(shim.cfg.cupti, "0")) {
		note_off("GPUSHIM_CUPTI=0");
		return;
	}
	if (getenv("CUDA_INJECTION64_PATH")) {
		/* Nsight Systems/Compute or another injected tool owns CUPTI for this process. */
		note_off("another CUDA tool is injected (CUDA_INJECTION64_PATH)");
		return;
	}
	if (!resolve_driver_sym("cuGetExportTable")) {
		/* CUPTI needs the real driver's private tables; a stand-in driver has none. */
		note_off("the CUDA driver in this process has no cuGetExportTable");
		return;
	}
	h = locate_cupti();
	if (!h) {
		note_off("libcupti.so.13 not found (set GPUSHIM_CUPTI=/path/to/libcupti.so.13)");
		return;
	}
	if (load_symbols(h) < 0 || cu.GetVersion(&cupti_version) != CUPTI_SUCCESS) {
		note_off("libcupti lacks the Activity API entry points");
		return;
	}
	if (cupti_version / 10000 != 13) {
		snprintf(why, sizeof(why), "CUPTI API version %u is not CUDA 13's", cupti_version);
		note_off(why);
		return;
	}
	{
		Dl_info info;

		if (dladdr((void *)cu.GetVersion, &info) && info.dli_fname)
			snprintf(cupti_path, sizeof(cupti_path), "%s", info.dli_fname);
	}
	buf_bytes = (size_t)shim.cfg.cupti_buffer_kb * 1024;

	/*
	 * Published under state_lock once the session is set up (or deferred to the application's
	 * client): the application's cupti* calls, which take the lock, see either no shim
	 * session and no library, or both; the writer starts polling only now.
	 */
	pthread_mutex_lock(&state_lock);
	is_wanted = 1;
	if (has_foreign) {
		/* The application's profiler got there first: start when it is done. */
		atomic_store(&state, CS_YIELDED);
		atomic_store_explicit(&cupti_lib, h, memory_order_release);
		pthread_mutex_unlock(&state_lock);
		/* Once it resumes, the shim's last records come with the exit flush. */
		atexit(cupti_atexit);
		note_off("the application's CUPTI client is active; waiting for it");
		return;
	}
	ret = session_start(shim.cfg.mode != RECORD_SAMPLED);
	window_nr = 0;
	atomic_store(&session_t0, clock_now_ns());
	atomic_store_explicit(&cupti_lib, h, memory_order_release);
	pthread_mutex_unlock(&state_lock);
	if (ret) {
		snprintf(why, sizeof(why), "CUPTI activity setup failed (%d)", ret);
		note_off(why);
		return;
	}
	atexit(cupti_atexit);
	snprintf(why, sizeof(why), "CUPTI %u from %s", cupti_version, cupti_path);
	t = clock_now_ns();
	rec_note(TRACE_NOTE_CUPTI_ON, t, why);
	if (shim.cfg.mode == RECORD_SAMPLED) {
		/* At the same time: the analyzer takes the notes in order of time, then of writing. */
		snprintf(why, sizeof(why),
			 "sampled: no GPU timestamps before window 1, %u ms in (kernels loaded "
			 "while CUPTI records them cost more GPU time for the rest of the run)",
			 shim.cfg.window_every_ms);
		rec_note(TRACE_NOTE_CUPTI_OFF, t, why);
	}
	write_info(TRACE_NOTE_CUPTI_ON, NULL, NULL);
	/* After cupti_atexit: its exit handler runs first, while CUPTI is still whole. */
	pm_start(h, cupti_path);
}

/* ---- Decoding (writer thread) ---- */

struct conv_stats {
	uint64_t nr_records;
	uint64_t nr_zero_ts;
};

static struct conv_stats stats;

uint64_t cupti_gpu_records(char *why, size_t cap)
{
	if (stats.nr_records)
		return stats.nr_records;
	pthread_mutex_lock(&off_lock);
	snprintf(why, cap, "%s", off_why[0] ? off_why :
		 lib() ? "CUPTI recorded no GPU work" : "CUPTI never started (no CUDA call)");
	pthread_mutex_unlock(&off_lock);
	return 0;
}
static struct conv_stats stats_written;
static uint64_t dropped_written;

/*
 * Kernel names by CUPTI's pointer: CUPTI gives every record of a kernel the same string, so the
 * writer looks a name up in the shim's string table (a lock and a hash of the whole name, ~250
 * instructions a kernel record for a 7-byte name, more for C++ templates) once, and after that
 * compares the text with its copy - a string CUPTI freed could come back at the same address
 * holding another name. Writer thread only; emptied after a fork (the string ids restart).
 */
#define NAME_MEMO 64

static struct {
	const char *ptr;
	char *text;			/* the shim's copy, compared before an id is reused */
	uint32_t id;
} name_memo[NAME_MEMO];

static void name_memo_clear(void)
{
	size_t i;

	for (i = 0; i < NAME_MEMO; i++) {
		free(name_memo[i].text);
		name_memo[i].ptr = name_memo[i].text = NULL;
		name_memo[i].id = 0;
	}
}

static uint32_t intern_name_slow(const char *name, tbuf_emit_fn emit, void *ctx)
{
	static uint8_t rec[TRACE_MAX_RECORD + 8];
	size_t len;
	uint32_t id;
	int is_new;

	len = strlen(name);
	id = rec_intern(name, len, &is_new);
	if (is_new) {
		if (len > TRACE_MAX_RECORD - sizeof(struct trace_rec_string) - 8)
			len = TRACE_MAX_RECORD - sizeof(struct trace_rec_string) - 8;
		rec_string_encode(rec, id, name, len);
		emit(ctx, NULL, rec, (uint32_t)rec_string_size(len));
	}
	return id;
}

static uint32_t intern_name(const char *name, tbuf_emit_fn emit, void *ctx)
{
	size_t slot;
	uint32_t id;
	char *copy;

	if (!name)
		return 0;
	slot = (size_t)(((uintptr_t)name * 0x9e3779b97f4a7c15ull) >> 32) % NAME_MEMO;
	if (name_memo[slot].ptr == name && !strcmp(name, name_memo[slot].text))
		return name_memo[slot].id;
	id = intern_name_slow(name, emit, ctx);
	if (id && (copy = strdup(name))) {
		free(name_memo[slot].text);
		name_memo[slot].ptr = name;
		name_memo[slot].text = copy;
		name_memo[slot].id = id;
	}
	return id;
}

/*
 * Whether an operation's record is kept: it has both timestamps (else counted in
 * stats.nr_zero_ts) and no window's edge drops it (window_drops). A record a detach's forced
 * flush returned unfinished (@edge: that close's number) was in flight at the close: dropped
 * there, as one that spans it. Writer thread.
 */
static int op_kept(uint64_t start, uint64_t end, uint32_t graph_id, uint32_t edge)
{
	if ((!start || !end) && edge && nr_edges - edge < WINDOW_EDGES) {
		struct window_edge *e = &edges[(edge - 1) % WINDOW_EDGES];

		if (start && start < e->close_ns && (!e->first_ns || start < e->first_ns))
			e->first_ns = start;
		e->nr_dropped++;
		return 0;
	}
	if (!start || !end) {
		stats.nr_zero_ts++;
		return 0;
	}
	return !window_drops(start, end, graph_id != 0);
}

static void convert_record(const CUpti_Activity *a, uint32_t edge, tbuf_emit_fn emit, void *ctx)
{
	switch ((int)a->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)a;
		struct trace_rec_gpu_kernel r;

		if (!op_kept(k->start, k->end, k->graphId, edge))
			return;
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_GPU_KERNEL;
		r.hdr.size = sizeof(r);
		r.start_ns = k->start;
		r.end_ns = k->end;
		r.graph_node = k->graphNodeId;
		r.cupti_corr = k->correlationId;
		r.device = k->deviceId;
		r.context = k->contextId;
		r.stream = k->streamId;
		r.graph_id = k->graphId;
		r.name = intern_name(k->name, emit, ctx);
		r.grid[0] = (uint32_t)k->gridX;
		r.grid[1] = (uint32_t)k->gridY;
		r.grid[2] = (uint32_t)k->gridZ;
		r.block[0] = (uint16_t)k->blockX;
		r.block[1] = (uint16_t)k->blockY;
		r.block[2] = (uint16_t)k->blockZ;
		r.regs_per_thread = k->registersPerThread;
		r.static_smem_bytes = (uint32_t)k->staticSharedMemory;
		r.dyn_smem_bytes = (uint32_t)k->dynamicSharedMemory;
		emit(ctx, NULL, &r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)a;
		struct trace_rec_gpu_memcpy r;

		if (!op_kept(m->start, m->end, m->graphId, edge))
			return;
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_GPU_MEMCPY;
		r.hdr.size = sizeof(r);
		r.start_ns = m->start;
		r.end_ns = m->end;
		r.bytes = m->bytes;
		r.graph_node = m->graphNodeId;
		r.cupti_corr = m->correlationId;
		r.device = r.src_device = r.dst_device = m->deviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.graph_id = m->graphId;
		r.copy_kind = m->copyKind;
		r.src_kind = m->srcKind;
		r.dst_kind = m->dstKind;
		r.is_async = !!(m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
		emit(ctx, NULL, &r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY2: {
		const CUpti_ActivityMemcpyPtoP4 *m = (const void *)a;
		struct trace_rec_gpu_memcpy r;

		if (!op_kept(m->start, m->end, m->graphId, edge))
			return;
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_GPU_MEMCPY;
		r.hdr.size = sizeof(r);
		r.start_ns = m->start;
		r.end_ns = m->end;
		r.bytes = m->bytes;
		r.graph_node = m->graphNodeId;
		r.cupti_corr = m->correlationId;
		r.device = m->deviceId;
		r.src_device = m->srcDeviceId;
		r.dst_device = m->dstDeviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.graph_id = m->graphId;
		r.copy_kind = m->copyKind;
		r.src_kind = m->srcKind;
		r.dst_kind = m->dstKind;
		r.is_async = !!(m->flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC);
		emit(ctx, NULL, &r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)a;
		struct trace_rec_gpu_memset r;

		if (!op_kept(m->start, m->end, m->graphId, edge))
			return;
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_GPU_MEMSET;
		r.hdr.size = sizeof(r);
		r.start_ns = m->start;
		r.end_ns = m->end;
		r.bytes = m->bytes;
		r.graph_node = m->graphNodeId;
		r.cupti_corr = m->correlationId;
		r.device = m->deviceId;
		r.context = m->contextId;
		r.stream = m->streamId;
		r.graph_id = m->graphId;
		r.value = m->value;
		r.mem_kind = (uint8_t)m->memoryKind;
		r.is_async = !!(m->flags & CUPTI_ACTIVITY_FLAG_MEMSET_ASYNC);
		emit(ctx, NULL, &r, sizeof(r));
		break;
	}
	case CUPTI_ACTIVITY_KIND_DRIVER:
	case CUPTI_ACTIVITY_KIND_RUNTIME: {
		const CUpti_ActivityAPI *api = (const void *)a;
		struct trace_rec_gpu_api r;

		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_GPU_API;
		r.hdr.size = sizeof(r);
		r.start_ns = api->start;
		r.end_ns = api->end;
		r.cupti_corr = api->correlationId;
		r.tid = api->threadId;
		r.cbid = api->cbid;
		r.domain = a->kind == CUPTI_ACTIVITY_KIND_DRIVER ? TRACE_GPU_API_DRIVER :
								  TRACE_GPU_API_RUNTIME;
		emit(ctx, NULL, &r, sizeof(r));
		break;
	}
	default:
		return;
	}
	stats.nr_records++;
}

/*
 * GPU_INFO: CUPTI's state and the conversion's counts. On the writer thread (@emit given) the
 * record goes out through @emit with the counts, which are the writer's. Any other thread
 * passes NULL: the record goes through the meta stream and carries no conversion counts (the
 * writer's; cupti_start's comes before the writer converts anything). The writer's emit is
 * never called from another thread: its chunk buffer, launch runs and column encoders have
 * no lock.
 */
static void write_info(uint32_t st, tbuf_emit_fn emit, void *ctx)
{
	struct trace_rec_gpu_info r;

	memset(&r, 0, sizeof(r));
	r.hdr.type = TRACE_REC_GPU_INFO;
	r.hdr.size = sizeof(r);
	r.ts_ns = clock_now_ns();
	r.nr_dropped = atomic_load(&nr_dropped);
	r.cupti_version = cupti_version;
	r.state = st;
	if (!emit) {
		meta_append(&r, sizeof(r));
		return;
	}
	r.nr_records = stats.nr_records;
	r.nr_zero_ts = stats.nr_zero_ts;
	r.nr_buffers = atomic_load(&nr_buffers_converted);
	emit(ctx, NULL, &r, sizeof(r));
}

/* Flush CUPTI's completed buffers this often: bounds the delay and the memory held. */
#define CUPTI_FLUSH_NS (200u * 1000000u)

/*
 * Context: state_lock held, the shim's session running. The window's end is noted before the
 * kinds go off and its start after they are on, so a launch between two notes may or may not
 * have a GPU record but one inside a window always has (the analyzer takes [end, start) as
 * without GPU timestamps). Work launched in the window and still running keeps its records:
 * they come with the next flushes.
 */
static void window_close(void)
{
	struct window_edge *e = &edges[nr_edges++ % WINDOW_EDGES];
	uint64_t now;
	char text[48];
	size_t i;

	snprintf(text, sizeof(text), "sampled window %u ends", window_nr);
	/*
	 * The end read just before the kinds go off, and noted after: a launch after the end
	 * that still gets a record (the analyzer's join by launch order cannot place it) is
	 * one made while the first ActivityDisable runs, not while the note is written.
	 */
	now = clock_now_ns();
	*e = (struct window_edge){ .open_ns = window_open_ns ? window_open_ns : atomic_load(&session_t0),
				   .close_ns = now,
				   .window = window_nr };
	/* Kinds before API records: no operation's record without its call's. */
	for (i = 0; i < sizeof(shim_kinds) / sizeof(shim_kinds[0]); i++)
		if (!(foreign_kinds >> shim_kinds[i] & 1))
			cu.ActivityDisable(shim_kinds[i]);
	rec_note(TRACE_NOTE_CUPTI_OFF, now, text);
	/* A context being created keeps them until it is: cupti_context_end turns them off. */
	if (nr_creating)
		is_api_lent = 1;
	else
		enable_api_records(0);
	is_paused = 1;
	is_api_early = 0;
	if (shim.cfg.cupti_detach && client_api_on && !client_api_noted) {
		client_api_noted = 1;
		rec_note(TRACE_NOTE_WARNING, now,
			 "the application's CUPTI client turned API records on: CUPTI stays "
			 "attached from here on");
	}
	/*
	 * Detaching: every record of the window out now (the header asks for the buffers flushed
	 * before cuptiFinalize); what was still running comes back unfinished and is dropped at
	 * this close (op_kept). Not while a context is being created, nor with a kind the
	 * application's client enabled (cuptiFinalize would end its session), nor once graphs or
	 * a client's API records were seen.
	 */
	if (shim.cfg.cupti_detach && !nr_creating && !is_api_lent && !foreign_kinds &&
	    !has_foreign && !atomic_load(&graphs_in_use) && !client_api_on) {
		pthread_mutex_lock(&buf_lock);
		completing_edge = nr_edges;
		pthread_mutex_unlock(&buf_lock);
		cu.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
		pthread_mutex_lock(&buf_lock);
		completing_edge = 0;
		pthread_mutex_unlock(&buf_lock);
		detach_due = 1;
	}
}

/*
 * The detach itself: cuptiFinalize from the exit of one of the application's CUDA calls, in a
 * CUPTI callback, as CUPTI's header asks. Called from the writer's thread while the program
 * launched on its own, it crashed PyTorch (H200, CUDA 13.0: a launch-bound loop died with
 * SIGSEGV in a launch, 2 runs in 6, at the first detach; BENCHMARKS.md run U), as it crashed
 * Kineto's teardown in a flush until Kineto moved it there. So a close arms it (window_detach:
 * the shim subscribes to the driver and runtime APIs' callbacks) and the next CUDA call to
 * return, on whatever thread, finalizes (detach_callback). While it is armed or running no
 * other thread calls into CUPTI: whoever would (the writer's flush and decoding, a window's
 * attach, a graph's first call, the application's CUPTI client, the exit) settles it first
 * (detach_settle). Armed longer than DETACH_WAIT_NS (no CUDA call came), it is called off:
 * the subscription, CUPTI's only one, is not held from an application that may want it.
 */
static CUpti_SubscriberHandle detach_sub;	/* the writer's, under state_lock */
static uint64_t detach_armed_ns;		/* the writer's */
static _Atomic int detach_result;		/* the last cuptiFinalize's, from its callback */
static _Atomic uint64_t detach_took_ns;
#define DETACH_WAIT_NS (200u * 1000000u)

static void CUPTIAPI detach_callback(void *userdata, CUpti_CallbackDomain domain,
				     CUpti_CallbackId cbid, const void *data)
{
	const CUpti_CallbackData *cb = data;
	int expected = DETACH_ARMED, saved;
	uint64_t t0, done0;
	CUptiResult r;

	(void)userdata, (void)cbid;
	if ((domain != CUPTI_CB_DOMAIN_DRIVER_API && domain != CUPTI_CB_DOMAIN_RUNTIME_API) ||
	    !cb || cb->callbackSite != CUPTI_API_EXIT || atomic_load(&state) != CS_ACTIVE ||
	    !atomic_compare_exchange_strong(&detach_state, &expected, DETACH_RUNNING))
		return;
	saved = errno;
	t0 = clock_now_ns();
	done0 = atomic_load(&nr_buffers_done);
	/* Buffers cuptiFinalize itself hands back are the close's too (unfinished: dropped). */
	pthread_mutex_lock(&buf_lock);
	is_finalizing = 1;
	pthread_mutex_unlock(&buf_lock);
	r = cu.Finalize();
	pthread_mutex_lock(&buf_lock);
	completing_edge = 0;
	is_finalizing = 0;
	pthread_mutex_unlock(&buf_lock);
	detach_bufs += atomic_load(&nr_buffers_done) - done0;
	atomic_store(&detach_result, (int)r);
	atomic_store(&detach_took_ns, clock_now_ns() - t0);
	if (r == CUPTI_SUCCESS)
		atomic_store(&is_detached, 1);
	atomic_store_explicit(&detach_state, DETACH_IDLE, memory_order_release);
	errno = saved;
}

/* A detach that could not be made, noted once: CUPTI stays attached, off. state_lock held. */
static void detach_failed(int r)
{
	static int is_noted;
	char text[80];

	if (is_noted)
		return;
	is_noted = 1;
	snprintf(text, sizeof(text), "CUPTI could not be detached between windows (%d)", r);
	rec_note(TRACE_NOTE_WARNING, clock_now_ns(), text);
}

/*
 * state_lock held, never from inside a CUDA call's CUPTI callback: a detach armed is called
 * off if no CUDA call took it yet (CUPTI stays attached), or waited for if one is running it
 * (a few ms; bounded); one whose finalize failed has its subscription given back and is
 * noted once (detach_failed). After it, the caller may call into CUPTI.
 */
static void detach_settle(void)
{
	int expected = DETACH_ARMED, i, r;

	if (atomic_load_explicit(&detach_state, memory_order_acquire) == DETACH_IDLE &&
	    !atomic_load(&detach_result))
		return;
	if (atomic_compare_exchange_strong(&detach_state, &expected, DETACH_IDLE)) {
		cu.Unsubscribe(detach_sub);
		pthread_mutex_lock(&buf_lock);
		completing_edge = 0;
		pthread_mutex_unlock(&buf_lock);
		return;
	}
	for (i = 0; i < 2000 && atomic_load_explicit(&detach_state, memory_order_acquire) ==
					DETACH_RUNNING;
	     i++) {
		struct timespec ts = { 0, 1000000 };

		nanosleep(&ts, NULL);
	}
	/* A finalize that failed left the subscription: given back, by whoever settles first. */
	if (atomic_load_explicit(&detach_state, memory_order_acquire) == DETACH_IDLE &&
	    (r = atomic_exchange(&detach_result, 0))) {
		cu.Unsubscribe(detach_sub);
		detach_failed(r);
	}
}

/* No thread may call into CUPTI now: detached, or a detach armed or running. */
static int cupti_away(void)
{
	/* The state first: a detach that ends between the two loads has set is_detached. */
	return atomic_load_explicit(&detach_state, memory_order_acquire) != DETACH_IDLE ||
	       atomic_load(&is_detached);
}

/*
 * Writer thread, once the close's flushed buffers are decoded (cupti_writer_poll): a detach
 * armed for the next CUDA call to return (above), if nothing changed since the close and no
 * other tool is subscribed to CUPTI (the shim's subscription is refused then: CUPTI takes one
 * subscriber; a profiler that reached libcupti past the shim's interposers, as XLA's does,
 * would lose its session to a detach). A failure is noted once and leaves CUPTI attached,
 * off, as without GPUSHIM_CUPTI_DETACH.
 */
static void window_detach(void)
{
	CUptiResult r;

	pthread_mutex_lock(&state_lock);
	detach_due = 0;
	if (atomic_load(&state) != CS_ACTIVE || !is_paused || nr_creating || is_api_lent ||
	    is_api_early || foreign_kinds || has_foreign || cupti_away() ||
	    atomic_load(&graphs_in_use) || client_api_on || subscriber_seen) {
		pthread_mutex_unlock(&state_lock);
		return;
	}
	if (cu.Subscribe(&detach_sub, detach_callback, NULL) != CUPTI_SUCCESS) {
		subscriber_seen = 1;
		rec_note(TRACE_NOTE_WARNING, clock_now_ns(),
			 "another tool is subscribed to CUPTI's callbacks: CUPTI stays attached "
			 "from here on");
		pthread_mutex_unlock(&state_lock);
		return;
	}
	r = cu.EnableDomain(1, detach_sub, CUPTI_CB_DOMAIN_DRIVER_API);
	if (r == CUPTI_SUCCESS)
		r = cu.EnableDomain(1, detach_sub, CUPTI_CB_DOMAIN_RUNTIME_API);
	if (r != CUPTI_SUCCESS) {
		cu.Unsubscribe(detach_sub);
		detach_failed((int)r);
		pthread_mutex_unlock(&state_lock);
		return;
	}
	pthread_mutex_lock(&buf_lock);
	completing_edge = nr_edges;
	pthread_mutex_unlock(&buf_lock);
	detach_armed_ns = clock_now_ns();
	atomic_store_explicit(&detach_state, DETACH_ARMED, memory_order_release);
	pthread_mutex_unlock(&state_lock);
}

/*
 * Writer thread: a detach armed too long is called off, one that ran and failed is settled
 * (detach_settle: its subscription given back, noted once; cuptiFinalize ends the
 * subscription when it succeeds).
 */
static void detach_poll(uint64_t now)
{
	int st = atomic_load_explicit(&detach_state, memory_order_acquire);

	if ((st == DETACH_ARMED && now - detach_armed_ns > DETACH_WAIT_NS) ||
	    (st == DETACH_IDLE && atomic_load(&detach_result))) {
		pthread_mutex_lock(&state_lock);
		detach_settle();
		pthread_mutex_unlock(&state_lock);
	}
}

/*
 * state_lock held: CUPTI attached again, its kinds off (the writer, for a window; a graph's
 * first call, cupti_graph_use). 0 or a CUptiResult.
 */
static int window_attach(void)
{
	CUptiResult r;

	r = cu.ActivityRegisterTimestampCallback(shim_timestamp);
	if (r == CUPTI_SUCCESS) {
		cu.SetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
		r = cu.ActivityRegisterCallbacks(buffer_requested, buffer_completed);
	}
	/* A failure leaves it as it is (the next window tries again): never a detach here. */
	if (r != CUPTI_SUCCESS)
		return r;
	atomic_store(&is_detached, 0);
	return 0;
}

static void window_open(void)
{
	uint64_t t0 = clock_now_ns(), attach_ns = 0;
	char text[160];
	size_t i;
	int r;

	detach_settle();
	if (atomic_load(&is_detached)) {
		r = window_attach();
		if (r) {
			snprintf(text, sizeof(text),
				 "sampled window %u could not open (CUPTI not attached: %d)",
				 window_nr + 1, r);
			rec_note(TRACE_NOTE_WARNING, clock_now_ns(), text);
			return;
		}
		attach_ns = clock_now_ns() - t0;
	}
	/* API records before kinds (as window_close, the other way round). */
	if (!is_api_early)
		enable_api_records(1);
	for (i = 0; i < sizeof(shim_kinds) / sizeof(shim_kinds[0]); i++)
		if (cu.ActivityEnable(shim_kinds[i]) != CUPTI_SUCCESS &&
		    shim_kinds[i] == CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL) {
			/* Noted as a window that could not open; the next one tries again. */
			if (!nr_creating)
				enable_api_records(0);
			is_api_early = 0;
			snprintf(text, sizeof(text), "sampled window %u could not open",
				 window_nr + 1);
			rec_note(TRACE_NOTE_WARNING, clock_now_ns(), text);
			return;
		}
	/* Read as soon as the kinds are on (as window_close reads its end just before). */
	window_open_ns = clock_now_ns();
	is_paused = 0;
	is_api_early = 0;
	window_nr++;
	if (attach_ns && window_nr == 1)
		snprintf(text, sizeof(text), "sampled window 1 (CUPTI attached in %.1f ms)",
			 (double)attach_ns / 1e6);
	else if (attach_ns)
		snprintf(text, sizeof(text),
			 "sampled window %u (CUPTI detached in %.1f ms, attached again in %.1f ms; "
			 "buffers back in detaching, not decoded: %llu)",
			 window_nr, (double)atomic_load(&detach_took_ns) / 1e6,
			 (double)attach_ns / 1e6, (unsigned long long)atomic_load(&detach_bufs));
	else
		snprintf(text, sizeof(text), "sampled window %u", window_nr);
	rec_note(TRACE_NOTE_CUPTI_ON, window_open_ns, text);
	if (nr_edges)
		edges[(nr_edges - 1) % WINDOW_EDGES].next_open_ns = window_open_ns;
}

/*
 * Sampled mode: a context gives CUPTI's API records for its calls only if they were on when
 * it was created; turned on later, they stay absent for it (measured on the H200, CUDA 13.0:
 * a primary context retained between two windows gave kernels in every later window and not
 * one API record, so its kernels could only be joined by launch order). Between windows the
 * shim turns them on for the creation and off again after it. Context: the application's
 * thread, around a context-creating call; the lock is not held across the call.
 */
void cupti_context_begin(void)
{
	if (shim.cfg.mode != RECORD_SAMPLED || !lib())
		return;
	pthread_mutex_lock(&state_lock);
	detach_settle();	/* no finalize while a context is being made */
	nr_creating++;
	/* With GPUSHIM_CUPTI_DETACH there are no API records to lend (enable_api_records). */
	if (atomic_load(&state) == CS_ACTIVE && is_paused && !is_api_lent &&
	    !shim.cfg.cupti_detach) {
		enable_api_records(1);
		is_api_lent = 1;
	}
	pthread_mutex_unlock(&state_lock);
}

void cupti_context_end(void)
{
	if (shim.cfg.mode != RECORD_SAMPLED || !lib())
		return;
	pthread_mutex_lock(&state_lock);
	if (nr_creating > 0)
		nr_creating--;
	if (!nr_creating && is_api_lent) {
		/*
		 * A window that opened meanwhile, or the lead before one, keeps them; the
		 * client's hand-over took them.
		 */
		if (atomic_load(&state) == CS_ACTIVE && is_paused && !is_api_early)
			enable_api_records(0);
		is_api_lent = 0;
	}
	pthread_mutex_unlock(&state_lock);
}

/*
 * GPUSHIM_CUPTI_DETACH: the process's first CUDA graph call (capture, instantiation, upload,
 * launch). Detaching broke a CUDA-graph loop in PyTorch, with the shim and without it, while
 * the same loop ran through when CUPTI was attached again before the capture and not
 * detached after (H200, BENCHMARKS.md run Q): so CUPTI is attached now if it is detached,
 * before the call is forwarded, and stays attached; the windows go on without detaching.
 * Context: the application's thread inside a graph hook (a relaxed load once graphs are in
 * use); may wait on state_lock while the writer detaches (a few ms, once).
 */
void cupti_graph_use(void)
{
	uint64_t t0;
	int r = 0, was_detached, saved;
	char text[160];

	if (!shim.cfg.cupti_detach ||
	    atomic_load_explicit(&graphs_in_use, memory_order_acquire) || !lib())
		return;
	saved = errno;
	pthread_mutex_lock(&state_lock);
	if (atomic_load(&graphs_in_use)) {
		pthread_mutex_unlock(&state_lock);
		errno = saved;
		return;
	}
	t0 = clock_now_ns();
	detach_settle();
	/* Not at exit (libcupti's destructors may have run), nor while a client holds it. */
	was_detached = atomic_load(&is_detached) && atomic_load(&state) == CS_ACTIVE;
	if (was_detached)
		r = window_attach();
	/* Published once attached: a graph call on another thread that sees it goes on at once. */
	atomic_store_explicit(&graphs_in_use, 1, memory_order_release);
	if (r)
		snprintf(text, sizeof(text),
			 "CUDA graphs in use: CUPTI could not be attached again (%d); the next "
			 "window tries again, and no detach follows",
			 r);
	else
		snprintf(text, sizeof(text),
			 "CUDA graphs in use: CUPTI stays attached from here on%s (%.1f ms)",
			 was_detached ? ", attached now" : "",
			 (double)(clock_now_ns() - t0) / 1e6);
	rec_note(TRACE_NOTE_WARNING, clock_now_ns(), text);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
}

/*
 * The writer stops for good while the program runs on (shim_disable: the trace could not be
 * written): a CUPTI it left detached is attached again, kinds off, for the graph calls the
 * hooks no longer see (cupti_graph_use). Writer thread.
 */
void cupti_writer_off(void)
{
	if (!shim.cfg.cupti_detach || !lib())
		return;
	pthread_mutex_lock(&state_lock);
	detach_settle();
	atomic_store(&graphs_in_use, 1);	/* and no detach after */
	if (atomic_load(&is_detached) && atomic_load(&state) == CS_ACTIVE)
		window_attach();
	pthread_mutex_unlock(&state_lock);
}

/*
 * Writer thread: sampled mode's schedule. A window opens every window_every_ms from the
 * session's start and lasts window_ms; the edges are met within the writer's wake-up
 * (wait_for_work's cap, 25 ms at most) and the notes say when each really came.
 */
static void window_tick(uint64_t now)
{
	static uint64_t edge;
	uint64_t t0 = atomic_load(&session_t0), len, every;

	if (shim.cfg.mode != RECORD_SAMPLED || !t0 || atomic_load(&state) != CS_ACTIVE)
		return;
	len = (uint64_t)shim.cfg.window_ms * 1000000u;
	every = (uint64_t)shim.cfg.window_every_ms * 1000000u;
	if (!edge)
		edge = t0 + every;	/* the first window: one period in (session_start) */
	if (now < edge) {
		/* The lead: API records on before the window's kinds (API_LEAD_NS). */
		if (edge - now > API_LEAD_NS || is_api_early || atomic_load(&is_detached))
			return;
		pthread_mutex_lock(&state_lock);
		if (atomic_load(&state) == CS_ACTIVE && is_paused && !is_api_early) {
			if (!is_api_lent)
				enable_api_records(1);
			is_api_early = 1;
		}
		pthread_mutex_unlock(&state_lock);
		return;
	}
	pthread_mutex_lock(&state_lock);
	if (atomic_load(&state) == CS_ACTIVE) {
		if (!is_paused) {
			window_close();
			/* The next window on the grid (a late writer skips, never bunches). */
			edge = t0 + ((now - t0) / every + 1) * every;
		} else {
			window_open();
			edge = now + len;
		}
	}
	pthread_mutex_unlock(&state_lock);
}

void cupti_writer_poll(int at_exit, tbuf_emit_fn emit, void *ctx)
{
	static uint64_t last_flush;
	struct cbuf work[MAX_BUFFERS];
	uint64_t now = clock_now_ns();
	int n, i;

	if (!lib())
		return;
	if (!at_exit && atomic_load(&state) == CS_RESUME_PENDING) {
		/*
		 * The clock read after the stop's time, never before: a stop that came after @now
		 * was read would make the difference wrap around and resume at once, between the
		 * client's two sessions.
		 */
		uint64_t since = atomic_load(&pending_since), t = clock_now_ns();

		if (t > since && t - since > RESUME_TIMEOUT_NS) {
			pthread_mutex_lock(&state_lock);
			if (atomic_load(&state) == CS_RESUME_PENDING)
				resume_now();
			pthread_mutex_unlock(&state_lock);
		}
	}
	if (!at_exit)
		window_tick(now);
	if (!at_exit)
		detach_poll(now);
	if (!at_exit && atomic_load(&state) == CS_ACTIVE && !cupti_away() &&
	    now - last_flush >= CUPTI_FLUSH_NS) {
		cu.ActivityFlushAll(0);
		last_flush = now;
	}

	/* Decoding calls into CUPTI: while it is detached, buffers wait for the next attach. */
	pthread_mutex_lock(&buf_lock);
	n = cupti_away() ? 0 : nr_done;
	memcpy(work, done_bufs, sizeof(work[0]) * n);
	nr_done -= n;
	pthread_mutex_unlock(&buf_lock);

	for (i = 0; i < n; i++) {
		CUpti_Activity *a = NULL;

		/* Not a buffer handed back inside cuptiFinalize (CUPTI was going away). */
		while (!work[i].is_detaching &&
		       cu.ActivityGetNextRecord(work[i].data, work[i].valid, &a) == CUPTI_SUCCESS)
			convert_record(a, work[i].edge, emit, ctx);
		pthread_mutex_lock(&buf_lock);
		free_bufs[nr_free++] = work[i].data;
		pthread_mutex_unlock(&buf_lock);
		atomic_fetch_add(&nr_buffers_converted, 1);
	}
	if (n)
		window_drops_note();
	if (detach_due && !at_exit)
		window_detach();

	if (at_exit || stats.nr_records != stats_written.nr_records ||
	    stats.nr_zero_ts != stats_written.nr_zero_ts ||
	    atomic_load(&nr_dropped) != dropped_written) {
		write_info(atomic_load(&state) == CS_ACTIVE ? TRACE_NOTE_CUPTI_ON :
							       TRACE_NOTE_CUPTI_OFF,
			   emit, ctx);
		stats_written = stats;
		dropped_written = atomic_load(&nr_dropped);
	}
}

void cupti_final_flush(void)
{
	if (!lib() || atomic_load(&state) != CS_ACTIVE)
		return;
	if (pthread_mutex_trylock(&state_lock))
		return;		/* the thread that holds it may be the one dying */
	if (atomic_load(&state) == CS_ACTIVE && !cupti_away())
		cu.ActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
	pthread_mutex_unlock(&state_lock);
}

void cupti_reset_after_fork(void)
{
	/* CUPTI does not follow a fork; the child's trace is host-only. */
	pthread_mutexattr_t attr;

	atomic_store(&state, CS_NONE);
	pthread_mutexattr_init(&attr);
	pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
	pthread_mutex_init(&state_lock, &attr);
	pthread_mutexattr_destroy(&attr);
	pthread_mutex_init(&buf_lock, NULL);
	nr_done = 0;
	is_wanted = 0;
	nr_creating = 0;
	is_api_lent = 0;
	is_api_early = 0;
	atomic_store(&is_detached, 0);
	atomic_store(&detach_state, DETACH_IDLE);
	detach_due = 0;
	completing_edge = 0;
	nr_edges = 0;
	/* The parent's buffers in flight are not the child's to wait for at its exit. */
	atomic_store(&nr_buffers_done, 0);
	atomic_store(&nr_buffers_converted, 0);
	atomic_store(&cupti_lib, NULL);
	name_memo_clear();
}

/* ---- The application's CUPTI calls (interposed) ---- */

/*
 * The application's own calls go to the libcupti it loaded. The shim's calls use cu.*, which
 * never pass through these functions.
 */
static void *app_cupti(const char *name)
{
	void *h = lib();

	if (!h)
		h = try_open("libcupti.so.13", RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		h = try_open("libcupti.so.12", RTLD_LAZY | RTLD_NOLOAD);
	return h ? resolve_dlsym(h, name) : resolve_dlsym(RTLD_NEXT, name);
}

#define APP_CUPTI(fn) ((__typeof__(&fn))app_cupti(#fn))
/* The application's call, forwarded; no libcupti holding it answers as CUPTI not loaded. */
#define APP_FORWARD(fn, ...)                                                                       \
	(APP_CUPTI(fn) ? APP_CUPTI(fn)(__VA_ARGS__) : CUPTI_ERROR_NOT_INITIALIZED)
#define SHIM_EXPORT __attribute__((visibility("default")))

/* The client enabled a kind since it registered (or registered with kinds on). */
static int foreign_enabled_any;

/*
 * Context: state_lock held. Start again once the client has collected its records. No flush
 * on its behalf: Kineto drops records that complete before its own flush (it only returns
 * buffers when some are still outstanding), and the proxy completion routes any buffer of
 * the client's that completes later back to the client.
 */
static void resume_now(void)
{
	int ret;

	if (!is_wanted || !lib())
		return;
	ret = session_start(1);
	if (ret == 0) {
		rec_note(TRACE_NOTE_CUPTI_ON, clock_now_ns(),
			 "resumed after the application's CUPTI client finished");
	} else {
		atomic_store(&state, CS_NONE);
		note_off("could not resume after the application's CUPTI client");
	}
}

/*
 * The order Kineto uses (libkineto CuptiActivityApi::enableCuptiActivities, at every
 * torch.profiler start and every warm-up of a schedule): its timestamp callback (held until
 * the hand-over), then these callbacks, where the shim yields, then cuptiActivityEnable per
 * kind; at the end cuptiActivityDisable per kind, then cuptiActivityFlushAll to collect,
 * where the shim resumes. Before it, torch.profiler's first start initializes Kineto
 * (cuptiSubscribe among others, not interposed): seconds on a GPU, during which the shim
 * keeps CUPTI and the application waits inside the profiler's start.
 */
SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterCallbacks(
	CUpti_BuffersCallbackRequestFunc req, CUpti_BuffersCallbackCompleteFunc done)
{
	uint64_t t0 = clock_now_ns();
	int saved = errno;
	CUptiResult r;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	yield_to_app("yielded to the application's CUPTI client (torch.profiler, Nsight)", t0);
	has_foreign = 1;
	/* Kinds it enabled before registering (a force load) are its session's. */
	foreign_enabled_any = foreign_kinds != 0;
	foreign_request = req;
	atomic_store_explicit(&foreign_complete, done, memory_order_release);
	/* Completions still pass through the proxy: late buffers of ours come back to us. */
	r = APP_FORWARD(cuptiActivityRegisterCallbacks, req, lib() ? buffer_completed : done);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

/*
 * Context: state_lock held; @t0 when the client's call came. A client that enables a kind
 * while the shim runs gets CUPTI as if the shim were not there: its own callbacks and clock,
 * when it registered callbacks before (a client that never did, such as Kineto's early
 * "force load", has nothing to hand records to: the shim keeps CUPTI, and the kind is noted
 * as the client's). One that stopped and starts again before collecting keeps CUPTI.
 */
static void client_enables(uint64_t t0)
{
	if (atomic_load(&state) == CS_ACTIVE && foreign_request) {
		yield_to_app("yielded to the application's CUPTI client (torch.profiler, Nsight)", t0);
		cu.ActivityRegisterCallbacks(foreign_request, buffer_completed);
		has_foreign = 1;
	} else if (atomic_load(&state) == CS_RESUME_PENDING) {
		atomic_store(&state, CS_YIELDED);
		has_foreign = 1;
	}
}

/* Context: state_lock held. The client's enable of @kind answered @r. */
static void client_enabled(CUpti_ActivityKind kind, CUptiResult r)
{
	if (r != CUPTI_SUCCESS || (unsigned)kind >= 64)
		return;
	foreign_kinds |= 1ull << kind;
	if (has_foreign)
		foreign_enabled_any = 1;
	if (kind == CUPTI_ACTIVITY_KIND_DRIVER || kind == CUPTI_ACTIVITY_KIND_RUNTIME)
		client_api_on = 1;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityEnable(CUpti_ActivityKind kind)
{
	uint64_t t0 = clock_now_ns();
	CUptiResult r;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	client_enables(t0);
	r = APP_FORWARD(cuptiActivityEnable, kind);
	client_enabled(kind, r);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

/* Per context (cupti_activity.h): the same hand-over as cuptiActivityEnable. */
SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableContext(CUcontext ctx, CUpti_ActivityKind kind)
{
	uint64_t t0 = clock_now_ns();
	CUptiResult r;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	client_enables(t0);
	r = APP_FORWARD(cuptiActivityEnableContext, ctx, kind);
	client_enabled(kind, r);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

static int is_shim_kind(CUpti_ActivityKind kind)
{
	size_t i;

	for (i = 0; i < sizeof(shim_kinds) / sizeof(shim_kinds[0]); i++)
		if (shim_kinds[i] == kind)
			return 1;
	return 0;
}

/*
 * Context: state_lock held. While the shim runs and no client owns CUPTI, a client switching
 * off a kind the shim enabled (a reset before its own session) would silently stop the
 * shim's tracing; the client never receives those records anyway, so its call is answered
 * without effect.
 */
static int client_disable_is_void(CUpti_ActivityKind kind)
{
	return atomic_load(&state) == CS_ACTIVE && !has_foreign && is_shim_kind(kind);
}

/* Context: state_lock held. The client switched @kind off. */
static void client_disabled(CUpti_ActivityKind kind)
{
	if ((unsigned)kind < 64)
		foreign_kinds &= ~(1ull << kind);
	if (has_foreign && foreign_enabled_any && !foreign_kinds &&
	    atomic_load(&state) == CS_YIELDED) {
		/* The client stops; it flushes and reads its buffers next. */
		has_foreign = 0;
		atomic_store(&pending_since, clock_now_ns());
		atomic_store(&state, CS_RESUME_PENDING);
	}
}

/* A client's API records by callback id: forwarded, and no detach after (client_api_on). */
SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableDriverApi(CUpti_CallbackId cbid,
							      uint8_t enable)
{
	CUptiResult r;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	r = APP_FORWARD(cuptiActivityEnableDriverApi, cbid, enable);
	if (enable)
		client_api_on = 1;
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityEnableRuntimeApi(CUpti_CallbackId cbid,
							       uint8_t enable)
{
	CUptiResult r;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	r = APP_FORWARD(cuptiActivityEnableRuntimeApi, cbid, enable);
	if (enable)
		client_api_on = 1;
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityDisable(CUpti_ActivityKind kind)
{
	CUptiResult r = CUPTI_SUCCESS;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	if (!client_disable_is_void(kind))
		r = APP_FORWARD(cuptiActivityDisable, kind);
	client_disabled(kind);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityDisableContext(CUcontext ctx,
							     CUpti_ActivityKind kind)
{
	CUptiResult r = CUPTI_SUCCESS;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	if (!client_disable_is_void(kind))
		r = APP_FORWARD(cuptiActivityDisableContext, ctx, kind);
	client_disabled(kind);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityRegisterTimestampCallback(
	CUpti_TimestampCallbackFunc fn)
{
	CUptiResult r = CUPTI_SUCCESS;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	app_clock = fn;
	/* While the shim runs, the client's clock takes effect when the client takes over. */
	if (atomic_load(&state) != CS_ACTIVE)
		r = APP_FORWARD(cuptiActivityRegisterTimestampCallback, fn);
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiActivityFlushAll(uint32_t flag)
{
	CUptiResult r;
	int saved = errno;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	r = APP_FORWARD(cuptiActivityFlushAll, flag);
	saved = errno;
	/* The client collected its records: the shim can take CUPTI back. */
	pthread_mutex_lock(&state_lock);
	if (atomic_load(&state) == CS_RESUME_PENDING)
		resume_now();
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

SHIM_EXPORT CUptiResult CUPTIAPI cuptiFinalize(void)
{
	uint64_t t0 = clock_now_ns();
	CUptiResult r;
	int saved = errno;
	int st;

	pthread_mutex_lock(&state_lock);
	detach_settle();
	yield_to_app("yielded: the application finalizes CUPTI", t0);
	r = APP_CUPTI(cuptiFinalize) ? APP_CUPTI(cuptiFinalize)() : CUPTI_ERROR_NOT_INITIALIZED;
	has_foreign = 0;
	foreign_kinds = 0;
	st = atomic_load(&state);
	if (st == CS_YIELDED || st == CS_RESUME_PENDING)
		resume_now();
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}

/*
 * The application subscribes to CUPTI's callbacks (Kineto, at torch.profiler's first start):
 * CUPTI takes one subscriber, so a detach the shim has armed (its subscription) is called off
 * first; after it, the shim's own subscription is refused and CUPTI stays attached.
 */
SHIM_EXPORT CUptiResult CUPTIAPI cuptiSubscribe(CUpti_SubscriberHandle *subscriber,
						CUpti_CallbackFunc callback, void *userdata)
{
	int saved = errno;
	CUptiResult r;

	/* Under the lock: no detach is armed between the settle and the call. */
	pthread_mutex_lock(&state_lock);
	detach_settle();
	errno = saved;
	r = APP_FORWARD(cuptiSubscribe, subscriber, callback, userdata);
	saved = errno;
	pthread_mutex_unlock(&state_lock);
	errno = saved;
	return r;
}
