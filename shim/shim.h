/* SPDX-License-Identifier: MIT */
/*
 * shim.h - the internal API between the modules of libgpushim.so. Hooks include only this.
 * Declares the global state, the per-thread state, the real-pointer table and the recording
 * entry points. Every function documents its context (which threads call it, what it may do).
 */
#ifndef GPUSHIM_SHIM_H
#define GPUSHIM_SHIM_H

#include <errno.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cuda.h>
#include <string.h>

#ifdef CUDA_API_PER_THREAD_DEFAULT_STREAM
#error "the shim wraps every variant by its exported name: build it without per-thread macros"
#endif

#include "gpushim/trace_api.h"
#include "gpushim/trace_format.h"

#include "unwind.h"

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)
#define SHIM_HIDDEN __attribute__((visibility("hidden")))

/* ---- Configuration (config.c) ---- */

struct shim_config {
	const char *output;		/* GPUSHIM_OUTPUT pattern */
	int is_disabled;		/* GPUSHIM_DISABLE */
	int summary;			/* GPUSHIM_SUMMARY: where the trace went, at exit */
	uint32_t buffer_kb;		/* GPUSHIM_BUFFER_KB: per-thread ring */
	uint32_t flush_ms;		/* GPUSHIM_FLUSH_MS: longest time between chunks */
	int zstd_level;			/* GPUSHIM_ZSTD_LEVEL */
	int mode;			/* GPUSHIM_MODE: enum record_mode */
	uint32_t window_ms;		/* GPUSHIM_WINDOW_MS: sampled mode's window */
	uint32_t window_every_ms;	/* GPUSHIM_WINDOW_EVERY_MS: ... and its period */
	int cupti_detach;		/* GPUSHIM_CUPTI_DETACH: CUPTI detached between windows */
	const char *log_path;		/* GPUSHIM_LOG */
	int log_level;			/* GPUSHIM_LOG_LEVEL: 0 quiet .. 3 debug */
	const char *cupti;		/* GPUSHIM_CUPTI: NULL auto, "0" off, else a path */
	uint32_t cupti_buffer_kb;	/* GPUSHIM_CUPTI_BUFFER_KB */
	int signals;			/* GPUSHIM_SIGNALS: finish the trace on fatal signals */
	int pm;				/* GPUSHIM_PM: hardware counters */
	uint32_t pm_interval_us;	/* GPUSHIM_PM_INTERVAL_US */
	uint32_t pm_decode_ms;		/* GPUSHIM_PM_DECODE_MS */
	uint32_t pm_buffer_mb;		/* GPUSHIM_PM_BUFFER_MB */
	int pm_pipes;			/* GPUSHIM_PM_PIPES: the pipes' and memory levels' metrics */
	int tsc;			/* GPUSHIM_TSC: the hooks' clock from the TSC (clock.c) */
	int nvtx;			/* GPUSHIM_NVTX: the program's NVTX ranges (nvtx.c) */
	int stacks;			/* GPUSHIM_STACKS: call stacks at the costly calls (stacks.c) */
	uint32_t stack_sample;		/* GPUSHIM_STACK_SAMPLE: one launch in N; 0 first only */
	uint32_t stack_depth;		/* GPUSHIM_STACK_DEPTH: frames kept of each kind */
	int stack_unlocked;		/* GPUSHIM_STACK_UNLOCKED: Python frames without the GIL */
	uint32_t stack_ready_ms;	/* GPUSHIM_STACK_READY_MS: the start's wait for stacks */
};

/* GPUSHIM_MODE: what CUPTI records (README "Recording modes"). */
enum record_mode {
	RECORD_FULL = 0,		/* GPU timestamps and counters all along */
	RECORD_SAMPLED = 1,		/* GPU timestamps in windows; counters all along */
	RECORD_HOST = 2,		/* no CUPTI: the hooks only */
};
extern const char *const shim_mode_names[];	/* by enum record_mode */

/*
 * config_load - read every GPUSHIM_* variable into @cfg; unknown or malformed values keep the
 * default and are reported through shim_log once logging is set up.
 * Context: the constructor only (getenv is not thread-safe against setenv).
 */
void config_load(struct shim_config *cfg);

/* ---- Global state (init.c) ---- */

enum shim_mode {
	SHIM_IDLE = 0,			/* nothing recorded yet: no writer, no file */
	SHIM_STARTING = 1,		/* one thread is starting the writer; others record already */
	SHIM_ON = 2,
	SHIM_OFF = 3,			/* disabled (config or failure): every hook passes through */
	SHIM_ENDED = 4,			/* the exit's END is written: hooks pass through, counted */
};

struct shim_state {
	struct shim_config cfg;		/* constructor writes; read-only afterwards */
	_Atomic int mode;		/* enum shim_mode; app threads: IDLE->STARTING; anyone: ->OFF */
	_Atomic uint32_t epoch;		/* fork child bumps: per-thread state of older epochs is stale */
	_Atomic uint32_t func_gen;	/* module unload bumps: per-thread kernel caches flush */
	_Atomic int nr_captures;	/* stream captures in progress (hooks_sync.c) */
	_Atomic int writer_kick;	/* futex word: 1 = a producer asked the writer to drain */
	_Atomic uint32_t nr_threads;	/* thread buffers ever created in this epoch */
	_Atomic uint64_t nr_lost_unringed;	/* records of threads whose ring could not be mapped */
	_Atomic uint64_t exit_deadline_ns;	/* clock_now_ns; 0 until the exit path begins */
	int is_forked;			/* set in the fork child */
	const char *disable_reason;	/* first shim_disable() reason; static string */
	char disable_text[160];
};

extern struct shim_state shim SHIM_HIDDEN;

/*
 * shim_disable - turn every hook into a pass-through from now on and tell the writer to close
 * the trace with a note. @fmt describes why; only the first call logs.
 * Context: any thread; no locks; safe inside hooks and the writer.
 */
void shim_disable(const char *fmt, ...) __attribute__((format(printf, 1, 2))) SHIM_HIDDEN;

/*
 * shim_start - called by the first hook that wants to record: starts the writer thread. Returns
 * 1 when recording may proceed, 0 when the shim is off.
 * Context: app thread, from shim_enter(); may allocate and create a thread (once per process).
 */
int shim_start(void) SHIM_HIDDEN;

/*
 * shim_exit_now - the process ends without destructors (quick_exit, _exit, _Exit): flush
 * CUPTI's buffers and finish the trace, bounded (WRITER_EXIT_WAIT_MS). Context: exiting thread.
 */
void shim_exit_now(void) SHIM_HIDDEN;

/*
 * shim_exit_begin - the process is ending: the first caller sets the one deadline every wait of
 * the exit path keeps (WRITER_EXIT_WAIT_MS from now; the meta lock's half of it) and every
 * caller gets it (clock_now_ns). Context: any exit handler, destructor or exit hook.
 */
uint64_t shim_exit_begin(void) SHIM_HIDDEN;

/* shim_deadline - @own, or the exit's deadline when the exit has begun and it is sooner. */
static inline uint64_t shim_deadline(uint64_t own)
{
	uint64_t d = atomic_load(&shim.exit_deadline_ns);

	return d && d < own ? d : own;
}

/* ---- Logging (log.c) ---- */

enum shim_log_level { LOG_ERROR = 0, LOG_WARN = 1, LOG_INFO = 2, LOG_DEBUG = 3 };

/*
 * shim_log - "gpushim[pid]: " + message to GPUSHIM_LOG or stderr; at most a few lines per level
 * per process, never fatal, errno preserved. Context: any thread; no allocation; one write(2).
 */
void shim_log(int level, const char *fmt, ...) __attribute__((format(printf, 2, 3))) SHIM_HIDDEN;
void log_reset_after_fork(void) SHIM_HIDDEN;

/* ---- Clock (clock.c) ---- */

static inline uint64_t clock_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);	/* vDSO; never fails for this clock */
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * The line that turns a TSC read into CLOCK_MONOTONIC ns, kept by the writer (clock.c says how):
 * ns = ns0 + ((tsc - tsc0) * mult >> 32) while tsc - tsc0 < limit. Two of them: the writer
 * rewrites the one not in use (seq odd meanwhile), then points `active` at it; 2: none yet.
 */
struct shim_clock_line {
	_Atomic uint32_t seq;
	_Atomic uint64_t tsc0, ns0, mult, limit;
} __attribute__((aligned(64)));		/* a refit never touches the line being read */

struct shim_clock {
	_Atomic uint32_t active;
	struct shim_clock_line line[2];
};

extern struct shim_clock shim_clock SHIM_HIDDEN;

/* clock_line_read - 1: *@ns from the line in use; 0: no fresh line; -1: rewritten under it. */
static inline int clock_line_read(uint64_t *ns)
{
#if defined(__x86_64__)
	uint32_t i = atomic_load_explicit(&shim_clock.active, memory_order_acquire);
	const struct shim_clock_line *l;
	uint64_t d, limit;
	uint32_t seq;

	if (unlikely(i >= 2))
		return 0;
	l = &shim_clock.line[i];
	seq = atomic_load_explicit(&l->seq, memory_order_acquire);
	d = __builtin_ia32_rdtsc() - atomic_load_explicit(&l->tsc0, memory_order_relaxed);
	*ns = atomic_load_explicit(&l->ns0, memory_order_relaxed) +
	      ((d * atomic_load_explicit(&l->mult, memory_order_relaxed)) >> 32);
	limit = atomic_load_explicit(&l->limit, memory_order_relaxed);
	atomic_thread_fence(memory_order_acquire);
	if (unlikely((seq & 1) || atomic_load_explicit(&l->seq, memory_order_relaxed) != seq))
		return -1;
	return d < limit;
#else
	(void)ns;
	return 0;
#endif
}

uint64_t clock_now_slow_ns(void) SHIM_HIDDEN;

/*
 * clock_now_ns - CLOCK_MONOTONIC in ns: the TSC through the writer's line where it is fresh,
 * else clock_gettime. Context: any thread; async-signal-safe; no errno change.
 */
static inline uint64_t clock_now_ns(void)
{
	uint64_t ns;
	int r = clock_line_read(&ns);

	if (likely(r > 0))
		return ns;
	return r < 0 ? clock_now_slow_ns() : clock_mono_ns();
}

/*
 * clock_start - whether the TSC may serve: NULL when it may (clock_calibrate then publishes a
 * line), else why not. clock_calibrate - pair the TSC with CLOCK_MONOTONIC and publish the line
 * refitted (from the second call at least 20 ms after the first); NULL, or why the hooks just
 * went back to clock_gettime for good (the kernel left the TSC). clock_tsc_ghz - the counter's
 * rate while a line is published (also the parent's, in a fork child), else 0.
 * Context: the writer thread.
 */
const char *clock_start(void) SHIM_HIDDEN;
const char *clock_calibrate(void) SHIM_HIDDEN;
double clock_tsc_ghz(void) SHIM_HIDDEN;
extern const char *clock_source_file SHIM_HIDDEN;	/* the kernel's clock source (sysfs) */

/* ---- Real entry points and interposition (resolve.c) ---- */

extern void *_Atomic shim_real[API__COUNT] SHIM_HIDDEN;

/*
 * resolve_real_slow - fill the real-pointer table (once) and return the entry for @api; when the
 * driver lacks the symbol, a stub that returns CUDA_ERROR_NOT_FOUND.
 * Context: any thread; first call takes a once-lock and calls dlopen/dlsym (never a hooked function).
 */
void *resolve_real_slow(int api) SHIM_HIDDEN;

static inline void *resolve_real(int api)
{
	void *p = atomic_load_explicit(&shim_real[api], memory_order_relaxed);

	return likely(p != NULL) ? p : resolve_real_slow(api);
}

/*
 * REAL(cuX) - the driver's own cuX, with cuX's exact type; for use inside hook_cuX. Macros that
 * build hooks from a name parameter must use REAL_ID(API_##name, hook_##name): passing the name
 * on would let cuda.h's version macros rewrite it (cuMemHostRegister -> cuMemHostRegister_v2).
 */
#define REAL_ID(api, hook) ((__typeof__(&hook))resolve_real(api))
#define REAL(n) REAL_ID(API_##n, hook_##n)

/* Driver functions the shim calls for itself (never hooked, never recorded). */
struct shim_driver {
	CUresult (*cuFuncGetName)(const char **, CUfunction);
	CUresult (*cuKernelGetName)(const char **, CUkernel);
	CUresult (*cuFuncGetAttribute)(int *, CUfunction_attribute, CUfunction);
	CUresult (*cuKernelGetAttribute)(int *, CUfunction_attribute, CUkernel, CUdevice);
	CUresult (*cuOccupancyMaxActiveBlocksPerMultiprocessor)(int *, CUfunction, int, size_t);
	CUresult (*cuCtxGetDevice)(CUdevice *);
	CUresult (*cuCtxGetCurrent)(CUcontext *);
	CUresult (*cuCtxSetCurrent)(CUcontext);
	CUresult (*cuDeviceGetCount)(int *);
	CUresult (*cuDeviceGet)(CUdevice *, int);
	CUresult (*cuDeviceGetName)(char *, int, CUdevice);
	CUresult (*cuDeviceTotalMem_v2)(size_t *, CUdevice);
	CUresult (*cuDeviceGetAttribute)(int *, CUdevice_attribute, CUdevice);
	CUresult (*cuDriverGetVersion)(int *);
};

extern struct shim_driver drv SHIM_HIDDEN;

/*
 * resolve_ensure - make shim_real[], drv and the address map valid once libcuda is loaded.
 * Returns 1 when they are. Never waits: while another thread is building them (which may wait
 * for the loader lock) it returns 0 and callers use the per-address fallback.
 * Context: any thread, including dlsym() called from a library constructor.
 */
int resolve_ensure(void) SHIM_HIDDEN;

/*
 * resolve_wrapper_for - the shim's wrapper for a real libcuda entry point, or NULL when @real is
 * not one the shim wraps. Lock-free lookup in a table built once. Context: any thread.
 */
void *resolve_wrapper_for(const void *real) SHIM_HIDDEN;

/*
 * resolve_init - find the real dlsym; with @is_passthrough every dlsym query is forwarded
 * unchanged (GPUSHIM_DISABLE). Context: the constructor.
 */
void resolve_init(int is_passthrough) SHIM_HIDDEN;

/* Wrappers handed out through dlsym and through cuGetProcAddress so far. Context: any. */
void resolve_door_counts(uint64_t *by_dlsym, uint64_t *by_gpa) SHIM_HIDDEN;
void resolve_count_gpa(void) SHIM_HIDDEN;

/* resolve_driver_sym - a libcuda symbol the shim does not wrap, or NULL. Context: any thread. */
void *resolve_driver_sym(const char *name) SHIM_HIDDEN;

/* resolve_dlsym - the real dlsym, for the shim's own lookups. */
void *resolve_dlsym(void *handle, const char *name) SHIM_HIDDEN;

/* ---- Per-thread state ---- */

struct tbuf;

#define FUNC_CACHE_SIZE 64		/* direct-mapped; a training step uses tens of kernels */

struct func_cache_entry {
	uintptr_t handle;
	uint32_t id;
	uint32_t gen;
	uint32_t occ_block;		/* last launch shape whose occupancy is known */
	uint32_t occ_smem;
};

struct shim_tls {
	int depth;			/* >0 while inside a hook: nested driver calls pass through */
	uint32_t epoch;			/* shim.epoch when buf was made */
	struct tbuf *buf;		/* this thread's ring; NULL until the first record */
	int no_ring;			/* the ring of this epoch could not be mapped: not tried again */
	int nvtx_depth;			/* NVTX push/pop nesting of the thread, every domain (nvtx.c) */
	uint64_t nvtx_id_next;		/* NVTX start/end range ids the thread may hand out: */
	uint64_t nvtx_id_end;		/* [next, end), taken from the process's counter in batches */
	uint32_t stack_left;		/* sampled calls until the next stack; 0: not counting yet */
	int stack_first;		/* the thread's last launch was its kernel's first (stacks.c) */
	struct func_cache_entry fcache[FUNC_CACHE_SIZE];
};

extern __thread struct shim_tls shim_tls __attribute__((tls_model("initial-exec"))) SHIM_HIDDEN;

/*
 * shim_enter - every hook starts here. Returns the thread state when the call is to be recorded,
 * NULL when it must pass straight through (shim off, or a driver call made from inside a hook).
 * Context: app thread; no locks, no allocation (the first call of the process starts the writer).
 */
static inline struct shim_tls *shim_enter(void)
{
	struct shim_tls *t = &shim_tls;
	int mode = atomic_load_explicit(&shim.mode, memory_order_relaxed);

	if (unlikely(mode != SHIM_ON) && (mode == SHIM_OFF || !shim_start()))
		return NULL;
	if (unlikely(t->depth))
		return NULL;
	t->depth = 1;
	return t;
}

static inline void shim_leave(struct shim_tls *t)
{
	t->depth = 0;
}

/* ---- Thread ring buffers (tbuf.c) ---- */

/*
 * A thread's NVTX message strings seen lately (nvtx.c): the STRING id of a message, found by
 * its bytes' hash, length and flags. Kept with the ring: string ids are per trace, and a fork
 * child's new epoch brings a new ring, so a stale entry can never be read.
 */
#define NVTX_CACHE_SIZE 64		/* direct-mapped; a loop names tens of ranges */
#define STACK_NAME_CACHE_SIZE 64	/* direct-mapped; a loop's stacks name tens of files and
					 * functions */

/*
 * A thread's Python frames seen lately (stacks.c): what a code object at an instruction is
 * (file and function STRING ids, line), found by the code object and the instruction offset.
 * An entry holds a reference to its code object, so the address cannot be another code
 * object's while it is there; read, filled and given back only with the GIL held. Kept with
 * the ring, as the NVTX cache (string ids are per trace). A ring freed after its thread ended,
 * or left behind by a fork, keeps its references (the writer holds no GIL): at most
 * STACK_PY_CACHE_SIZE code objects of such a thread stay alive.
 */
#define STACK_PY_CACHE_SIZE 128		/* direct-mapped */

struct stack_py_entry {
	void *code;			/* PyCodeObject, a strong reference; NULL: empty */
	int32_t lasti;			/* PyFrame_GetLasti; -1: by code only (Python < 3.11) */
	int32_t line;			/* -1 with lasti -1: read from the frame each time */
	uint32_t file, func;		/* STRING ids */
};

/*
 * The same for Python frames read without the GIL (stacks.c, py_frames_unlocked): no reference
 * is taken, so an entry also keeps the code object's file and name objects, compared on each
 * use (a code object freed and another made at its address does not match them).
 */
struct stack_upy_entry {
	const void *code;		/* PyCodeObject; NULL: empty */
	const void *file_obj, *func_obj, *table_obj;	/* co_filename, co_qualname, co_linetable */
	int32_t lasti;
	int32_t line;
	uint32_t file, func;		/* STRING ids */
};

struct nvtx_cache_entry {
	uint64_t hash;
	uint32_t key;			/* length | flags << 16 | NVTX_KEY_VALID; 0: empty */
	uint32_t id;			/* STRING id; 0 with TRACE_NVTX_NO_NAME in key's flags */
};

/* What makes two launches the same for LAUNCH_REPEAT: all but time, duration and number. */
struct launch_args {
	uint64_t f;			/* CUfunction */
	uint64_t stream;
	uint32_t grid[3];
	uint32_t block[3];
	uint32_t cluster[3];
	uint32_t smem;
	uint32_t result;
	uint16_t api;
	uint16_t flags;			/* enum trace_call_flags */
};
_Static_assert(sizeof(struct launch_args) == 64, "no padding: compared with memcmp");

struct tbuf {
	uint8_t *data;
	uint32_t mask;			/* capacity - 1; capacity is a power of two */
	uint32_t index;			/* thread_index of the trace */
	uint32_t tid;
	uint32_t seq;			/* producer: last correlation number handed out */
	_Atomic uint64_t head;		/* producer publishes (release) bytes produced */
	_Atomic uint64_t tail;		/* writer publishes (release) bytes consumed */
	uint64_t cached_tail;		/* producer's last view of tail */
	uint64_t rec_pos;		/* producer: position of the record being written */
	uint64_t last_ns;		/* producer: start time of the last record */
	uint64_t lost_pending;		/* producer: drops not yet reported by a LOST record */
	uint64_t lost_pending_bytes;
	_Atomic uint64_t nr_lost;	/* producer adds; writer reads for END */
	_Atomic int is_dead;		/* the thread exited; writer frees once drained */
	struct tbuf *next;		/* registry list (push at head only) */
	struct launch_args p_launch;	/* producer: the last LAUNCH committed to this ring (set
					 * only after its commit, so a LAUNCH_REPEAT in the ring
					 * always means the ring's previous LAUNCH) */
	int p_launch_set;
	uint64_t w_last_ns;		/* writer: time of the last record drained */
	uint64_t w_launch_gen;		/* writer: chunk generation w_launch was last written in; 0 none */
	struct trace_rec_launch w_launch;	/* writer: the ring's last LAUNCH (what its REPEATs mean) */
	int64_t w_shape;		/* writer: w_launch's shape index in chunk w_launch_gen; -1 none */
	int w_full;			/* writer: the ring's last launch is a LAUNCH record (or runs of it) */
	struct nvtx_cache_entry nvtx_cache[NVTX_CACHE_SIZE];	/* producer (nvtx.c) */
	struct nvtx_cache_entry stack_names[STACK_NAME_CACHE_SIZE];	/* producer (stacks.c):
					 * Python file and function names, as nvtx_cache */
	struct unwind_cache_entry unwind_cache[UNWIND_CACHE_SIZE];	/* producer (stacks.c):
					 * code addresses' unwind rules */
	struct stack_py_entry stack_py[STACK_PY_CACHE_SIZE];	/* producer, with the GIL */
	struct stack_upy_entry stack_upy[STACK_PY_CACHE_SIZE];	/* producer, without it */
};

/* The registry of every thread ring, newest first. Pushed by app threads, pruned by the writer. */
extern _Atomic(struct tbuf *) tbuf_list SHIM_HIDDEN;

/*
 * tbuf_get - this thread's ring, created on first use. NULL when it cannot be created: the
 * first failure warns once per process, the thread does not try again in this epoch, and the
 * caller counts each record it drops (tbuf_count_unringed) for the END record's loss total.
 * Context: app thread; the first call per thread mmaps the ring and takes no lock.
 */
struct tbuf *tbuf_create(struct shim_tls *t, uint32_t epoch) SHIM_HIDDEN;

static inline struct tbuf *tbuf_get(struct shim_tls *t)
{
	uint32_t epoch = atomic_load_explicit(&shim.epoch, memory_order_relaxed);

	if (likely(t->buf && t->epoch == epoch))
		return t->buf;
	if (t->no_ring && t->epoch == epoch)
		return NULL;
	return tbuf_create(t, epoch);
}

static inline void tbuf_count_unringed(void)
{
	atomic_fetch_add_explicit(&shim.nr_lost_unringed, 1, memory_order_relaxed);
}

/*
 * tbuf_reserve / tbuf_commit - claim @size bytes (8-aligned, <= TRACE_MAX_RECORD) for one record,
 * fill them, publish. reserve returns NULL when the ring is full: the record is counted as lost.
 * Context: the owning thread only; wait-free.
 */
void *tbuf_reserve(struct tbuf *b, uint32_t size) SHIM_HIDDEN;
void tbuf_commit_full(struct tbuf *b, uint64_t head) SHIM_HIDDEN;

static inline void tbuf_commit(struct tbuf *b, uint32_t size)
{
	uint64_t head = b->rec_pos + size;

	atomic_store_explicit(&b->head, head, memory_order_release);
	if (unlikely(head - b->cached_tail > ((uint64_t)b->mask + 1) / 2))
		tbuf_commit_full(b, head);
}

/*
 * tbuf_drain - writer side: hand every committed record of @b up to @head to @emit (PAD skipped).
 * When @emit runs, b->w_last_ns is the start time of the record before @rec (the base a BLOCK
 * written in front of @rec needs); drain then advances it. Releases the space at the end.
 * Returns bytes consumed. Context: writer thread only.
 * @emit is also used for meta records (GPU activity), with @b NULL.
 */
typedef void (*tbuf_emit_fn)(void *ctx, const struct tbuf *b, const void *rec, uint32_t size);
uint64_t tbuf_drain(struct tbuf *b, uint64_t head, tbuf_emit_fn emit, void *ctx) SHIM_HIDDEN;

void tbuf_init(void) SHIM_HIDDEN;		/* constructor: pthread key */
void tbuf_reset_after_fork(void) SHIM_HIDDEN;	/* fork child: forget the parent's rings */
void tbuf_free(struct tbuf *b) SHIM_HIDDEN;	/* writer: a dead, drained ring */
/* tbuf_kick_writer - wake the writer now. Context: any thread, signal handlers too. */
void tbuf_kick_writer(void) SHIM_HIDDEN;

/* ---- Recording (record.c) ---- */

/*
 * rec_begin - start a thread record of @type and @size stamped at @start_ns. Returns the space
 * to fill (header written), or NULL when the record is dropped (counted in LOST).
 * rec_commit publishes it. Context: app thread inside a hook; no locks, no allocation.
 */
void *rec_begin_slow(struct shim_tls *t, uint16_t type, uint16_t size, uint64_t start_ns) SHIM_HIDDEN;

/* Zero a reserved record and write its header; its start is @dt after the ring's last. */
static inline void rec_stamp(struct tbuf *b, struct trace_rec_hdr *h, uint16_t type,
			     uint16_t size, uint32_t dt)
{
	memset(h, 0, size);
	h->type = type;
	h->size = size;
	h->dt_ns = dt;
	b->last_ns += dt;
}

typedef void *(*rec_begin_slow_fn)(struct shim_tls *t, uint16_t type, uint16_t size,
				   uint64_t start_ns);

/* rec_begin with another slow path (@slow in place of rec_begin_slow; inlined with it). */
static inline void *rec_begin_via(struct shim_tls *t, uint16_t type, uint16_t size,
				  uint64_t start_ns, rec_begin_slow_fn slow)
{
	struct tbuf *b = t->buf;
	struct trace_rec_hdr *h;
	uint64_t head, dt;
	uint32_t off;

	/* The common case inline: ring of this epoch, nothing lost, no wrap, room, a 32-bit delta. */
	if (unlikely(!b || t->epoch != atomic_load_explicit(&shim.epoch, memory_order_relaxed) ||
		     b->lost_pending))
		return slow(t, type, size, start_ns);
	head = atomic_load_explicit(&b->head, memory_order_relaxed);
	off = (uint32_t)(head & b->mask);
	dt = start_ns > b->last_ns ? start_ns - b->last_ns : 0;
	if (unlikely(dt > UINT32_MAX || off + size > (uint64_t)b->mask + 1 ||
		     head + size - b->cached_tail > (uint64_t)b->mask + 1))
		return slow(t, type, size, start_ns);
	b->rec_pos = head;
	h = (struct trace_rec_hdr *)(b->data + off);
	rec_stamp(b, h, type, size, (uint32_t)dt);
	return h;
}

static inline void *rec_begin(struct shim_tls *t, uint16_t type, uint16_t size, uint64_t start_ns)
{
	return rec_begin_via(t, type, size, start_ns, rec_begin_slow);
}

static inline void rec_commit(struct shim_tls *t, const void *rec)
{
	tbuf_commit(t->buf, ((const struct trace_rec_hdr *)rec)->size);
}

/* rec_next_seq - a fresh per-thread correlation number (0 if the thread has no ring); errno kept. */
uint32_t rec_next_seq_slow(struct shim_tls *t) SHIM_HIDDEN;

static inline uint32_t rec_next_seq(struct shim_tls *t)
{
	struct tbuf *b = t->buf;

	/* The ring of this epoch exists after the thread's first record: no lookup. */
	if (likely(b && t->epoch == atomic_load_explicit(&shim.epoch, memory_order_relaxed) &&
		   b->seq + 1 != 0))
		return ++b->seq;
	return rec_next_seq_slow(t);
}

/*
 * rec_call_dur - a call's duration for trace_call.dur, and its flags: microseconds when it does
 * not fit in 32 bits of nanoseconds, and whether a stream capture is active in the process.
 */
static inline uint32_t rec_call_dur(uint64_t t0, uint64_t t1, uint16_t *flags)
{
	uint64_t dur = t1 > t0 ? t1 - t0 : 0;

	*flags = 0;
	if (unlikely(dur > UINT32_MAX)) {
		dur /= 1000;
		*flags = TRACE_CALL_DUR_US;
	}
	if (unlikely(atomic_load_explicit(&shim.nr_captures, memory_order_relaxed) > 0))
		*flags |= TRACE_CALL_CAPTURING;
	return (uint32_t)dur;
}

static inline void rec_fill_call(struct trace_call *c, int api, uint64_t t0, uint64_t t1,
				 CUresult res, uint32_t seq)
{
	c->dur = rec_call_dur(t0, t1, &c->flags);
	c->result = (uint32_t)res;
	c->api = (uint16_t)api;
	c->seq = seq;
}

/*
 * rec_func_id - FUNC id for a kernel handle; on first sight queries name and attributes through
 * the driver and writes FUNC (and STRING) to the meta stream. Call after the real launch returned.
 * Context: app thread inside a hook; cache hit is lock-free, a miss takes the meta lock briefly.
 */
uint32_t rec_func_id_slow(struct shim_tls *t, uintptr_t handle) SHIM_HIDDEN;

static inline size_t rec_fcache_slot(uintptr_t handle)
{
	return (size_t)((handle >> 4) ^ (handle >> 12)) & (FUNC_CACHE_SIZE - 1);
}

static inline uint32_t rec_func_id(struct shim_tls *t, uintptr_t handle)
{
	const struct func_cache_entry *c = &t->fcache[rec_fcache_slot(handle)];

	if (likely(c->handle == handle && c->id &&
		   c->gen == atomic_load_explicit(&shim.func_gen, memory_order_relaxed)))
		return c->id;
	return rec_func_id_slow(t, handle);
}

/*
 * rec_occupancy - make sure an OCCUPANCY record exists for (func, block threads, dyn smem,
 * device): the occupancy calculator is asked once per shape. Only for launches that succeeded.
 * Context: app thread inside a hook, after the real launch returned; a per-thread cache of the
 * last shape per kernel keeps the common case lock-free.
 */
void rec_occupancy_slow(struct shim_tls *t, uint32_t func, uintptr_t handle,
			uint32_t block_threads, uint32_t dyn_smem) SHIM_HIDDEN;

static inline void rec_occupancy(struct shim_tls *t, uint32_t func, uintptr_t handle,
				 uint32_t block_threads, uint32_t dyn_smem)
{
	const struct func_cache_entry *c = &t->fcache[rec_fcache_slot(handle)];

	if (likely(c->handle == handle && c->id == func && c->occ_block == block_threads &&
		   c->occ_smem == dyn_smem) ||
	    !func || !block_threads)
		return;
	rec_occupancy_slow(t, func, handle, block_threads, dyn_smem);
}

/* rec_devices_once - write one DEVICE record per GPU (first successful cuInit). */
void rec_devices_once(void) SHIM_HIDDEN;

/* rec_current_device - ordinal of the calling thread's current context, -1 when none. */
int32_t rec_current_device(void) SHIM_HIDDEN;

/* rec_flush_funcs - forget every kernel handle (module unload): FUNC records are written anew. */
void rec_flush_funcs(void) SHIM_HIDDEN;

/*
 * rec_intern - id of the STRING @s (len bytes); *is_new says the caller must write the STRING
 * record itself (writer thread) - app threads use rec_intern_meta, which also writes it.
 * Context: any thread; takes the meta lock.
 */
uint32_t rec_intern_meta(const char *s, size_t len) SHIM_HIDDEN;
uint32_t rec_intern(const char *s, size_t len, int *is_new) SHIM_HIDDEN;

/*
 * rec_intern_meta_max - rec_intern_meta for a string that may be new only while *@budget holds
 * REC_INTERN_COST(@len), which it then takes; a string already interned is found whatever the
 * budget. Returns 0 when the string is new and over budget, or the lock could not be had.
 * Context: any thread; takes the meta lock; allocates for a new string.
 */
#define REC_INTERN_COST(len) ((len) + 64)	/* its table entry and STRING record, roughly */
uint32_t rec_intern_meta_max(const char *s, size_t len, size_t *budget) SHIM_HIDDEN;

/*
 * rec_nvtx_domain - the NVTX_DOMAIN record of domain @id named @name (@len bytes), after its
 * name's STRING, into the meta stream, unless *@defined holds @tag already; then sets it
 * (release). Returns 0, or -1 when it could not be written (the caller counts its record lost).
 * Context: any thread; takes the meta lock.
 */
int rec_nvtx_domain(uint32_t id, const char *name, size_t len, _Atomic uint32_t *defined,
		    uint32_t tag) SHIM_HIDDEN;

/* rec_note - a timed NOTE record (with its text) into the meta stream. Context: any thread. */
void rec_note(uint32_t kind, uint64_t ts_ns, const char *text) SHIM_HIDDEN;

/*
 * Meta stream: records with no time base, written under one lock by any thread and drained by
 * the writer (which swaps the buffer out under the same lock).
 */
int meta_append(const void *rec, size_t size) SHIM_HIDDEN;
/*
 * meta_swap - writer: exchange its (emptied) buffer with the meta stream's. Returns 0, or -1
 * (nothing swapped) when the lock could not be had before the exit deadline.
 */
int meta_swap(uint8_t **buf, size_t *len, size_t *cap) SHIM_HIDDEN;
/*
 * meta_exit_deadline - the process is ending: from now on no thread waits for the meta stream's
 * lock past @deadline_ns (CLOCK_MONOTONIC); what cannot be written is counted lost.
 */
void meta_exit_deadline(uint64_t deadline_ns) SHIM_HIDDEN;
/* meta_writer_thread - the calling thread is the writer: its waits for the lock are bounded. */
void meta_writer_thread(void) SHIM_HIDDEN;
uint64_t meta_nr_lost(void) SHIM_HIDDEN;
void record_reset_after_fork(void) SHIM_HIDDEN;
/* rec_string_size / rec_string_encode - the STRING record for @len bytes of text. */
size_t rec_string_size(size_t len) SHIM_HIDDEN;
void rec_string_encode(void *dst, uint32_t id, const char *s, size_t len) SHIM_HIDDEN;
/*
 * rec_meta_take / rec_meta_give - hold the meta stream's lock (take: 0, or -1 when it cannot be
 * had before the exit's deadline); rec_meta_reserve - while holding it, @size bytes at the end
 * of the meta stream, or NULL (counted lost). For a module that appends a record in the same
 * critical section that makes its id findable (stacks.c). Context: any thread.
 */
int rec_meta_take(void) SHIM_HIDDEN;
void rec_meta_give(void) SHIM_HIDDEN;
void *rec_meta_reserve(size_t size) SHIM_HIDDEN;
/* rec_string_id_reserve - a string id nobody else gets (0 when the lock cannot be had). */
uint32_t rec_string_id_reserve(void) SHIM_HIDDEN;

/* ---- NVTX injection (nvtx.c) ---- */

/*
 * nvtx_init - with GPUSHIM_NVTX=1, make this library NVTX's injection: NVTX_INJECTION64_PATH
 * set to its own path where it is unset, or the tool it names remembered (nvtx_trace_started
 * says so). Context: the constructor (setenv: no other thread runs yet).
 */
void nvtx_init(void) SHIM_HIDDEN;

/* nvtx_trace_started - a trace was opened: its note (and one warning) when NVTX goes to
 * another tool. Context: the writer thread, once a trace. */
void nvtx_trace_started(void) SHIM_HIDDEN;

/* nvtx_reset_after_fork - the fork child: its lock, its string budget. Context: atfork child. */
void nvtx_reset_after_fork(void) SHIM_HIDDEN;

/* ---- Writer (writer.c) ---- */

/*
 * writer_start - create the writer thread (all signals blocked); it opens the output file.
 * Returns 0 or -errno. Context: app thread, once, from shim_start().
 */
int writer_start(void) SHIM_HIDDEN;

/*
 * writer_stop - final drain, END record, close; joins the thread. Waits at most @wait_ms: no
 * lock is waited for past it, and a writer still not done then is left to the process's end
 * (the trace ends at its last complete chunk). On the writer thread itself (exit() called
 * there once the program's last thread was gone) it finishes the trace in place.
 * Context: exit path (destructor, quick_exit and _exit handlers); any thread.
 */
void writer_stop(uint32_t wait_ms) SHIM_HIDDEN;
void writer_reset_after_fork(void) SHIM_HIDDEN;

/* How long an exit may wait for the trace to be finished. */
#define WRITER_EXIT_WAIT_MS 2000

/*
 * writer_main_gone - the main thread called pthread_exit: from now on the writer checks whether
 * any of the program's threads is left, and when none is, ends the process as glibc's last
 * thread would (exit(0)). Context: the main thread, in pthread_exit.
 */
void writer_main_gone(void) SHIM_HIDDEN;

/* writer_is_running_here - this process (not a vfork child) has a writer thread. */
int writer_is_running_here(void) SHIM_HIDDEN;
/* writer_is_this_thread - the caller is the writer thread. */
int writer_is_this_thread(void) SHIM_HIDDEN;

/*
 * writer_late_call - a hook ran after the exit's END (a library destructor that runs after the
 * shim's): count it into the trace as lost. Context: any thread, from shim_start(); rare.
 */
void writer_late_call(void) SHIM_HIDDEN;

/* ---- The trace file (trace_file.c) ---- */

/*
 * tfile_create - expand GPUSHIM_OUTPUT, create the file (the next free name when taken; the
 * default pattern when the setting cannot be used) and write its header. Returns 0, or -errno
 * with the shim disabled. tfile_write appends, tfile_truncate cuts back to @size (both -errno,
 * -ESTALE when the file was replaced); both check the descriptor is still the file's first.
 * Context: the writer thread only.
 */
int tfile_create(int is_forked) SHIM_HIDDEN;
struct iovec;
int tfile_write(const struct iovec *iov, int nr) SHIM_HIDDEN;
int tfile_truncate(uint64_t size) SHIM_HIDDEN;
/* tfile_write_at - write at @off, over what is there (one pwritev where the kernel allows). */
int tfile_write_at(uint64_t off, const struct iovec *iov, int nr) SHIM_HIDDEN;
uint64_t tfile_size(void) SHIM_HIDDEN;
const char *tfile_path(void) SHIM_HIDDEN;
/* tfile_close - close the descriptor if it still is the trace's; never another one. */
void tfile_close(void) SHIM_HIDDEN;
void tfile_reset_after_fork(void) SHIM_HIDDEN;

/*
 * writer_finish_on_signal - a fatal signal is ending the process: have the writer write all it
 * has and END (reason SIGNAL); waits at most @wait_ms. Returns at once when there is no writer
 * in this process. Context: a signal handler, any thread; async-signal-safe.
 */
void writer_finish_on_signal(int sig, uint32_t wait_ms) SHIM_HIDDEN;

/*
 * writer_exec_begin - this thread is about to exec @path: have the writer write all it has and
 * an END (reason EXEC) and wait for the outcome; waits at most @wait_ms. Returns 1 when the
 * writer was asked (then writer_exec_end() must follow a failed exec), 0 when there is nothing
 * to do (no writer, a vfork child, recording off). Context: app thread in an exec hook.
 */
int writer_exec_begin(const char *path, uint32_t wait_ms) SHIM_HIDDEN;
void writer_exec_end(void) SHIM_HIDDEN;

/* ---- Fatal signals (signals.c) and exec (hooks_exec.c) ---- */

/* signals_install - the shim's handler where a terminating signal is at SIG_DFL. Context: once,
 * when recording starts. */
void signals_install(void) SHIM_HIDDEN;
/* exec_hooks_init - resolve libc's exec family. Context: the constructor. */
void exec_hooks_init(void) SHIM_HIDDEN;
/* exit_hooks_init - resolve _exit, _Exit and pthread_exit. Context: the constructor. */
void exit_hooks_init(void) SHIM_HIDDEN;

/* ---- CUPTI (cupti.c) ---- */

/*
 * cupti_start - locate and load libcupti, register buffers and the shim's clock, enable the
 * activity kinds. Called by the cuInit hook before the real cuInit. Never fatal: on any failure
 * the trace says GPU timestamps are absent. Context: app thread inside a hook, once.
 */
void cupti_start(void) SHIM_HIDDEN;

/*
 * cupti_writer_poll - writer thread: flush CUPTI's completed buffers and convert them to GPU_*
 * records through @emit; at_exit forces the final flush. Context: writer thread.
 */
void cupti_writer_poll(int at_exit, tbuf_emit_fn emit, void *ctx) SHIM_HIDDEN;
void cupti_reset_after_fork(void) SHIM_HIDDEN;
/*
 * cupti_gpu_records - GPU records converted so far; when none, @why (of @cap bytes) says why
 * the trace has none (the last reason CUPTI was off, or that it recorded nothing). Context:
 * writer thread.
 */
uint64_t cupti_gpu_records(char *why, size_t cap) SHIM_HIDDEN;
/*
 * cupti_context_begin, cupti_context_end - a context-creating call is about to be forwarded /
 * has returned: in sampled mode between windows, CUPTI's API records are on for it (a context
 * created while they are off never gives them). Context: app thread inside a hook.
 */
void cupti_context_begin(void) SHIM_HIDDEN;
void cupti_context_end(void) SHIM_HIDDEN;
/*
 * cupti_graph_use - a CUDA graph call is about to be forwarded: with GPUSHIM_CUPTI_DETACH,
 * CUPTI is attached (if detached) and not detached again. Context: app thread inside a hook.
 */
void cupti_graph_use(void) SHIM_HIDDEN;
/*
 * cupti_writer_off - the writer stops for good while the program runs on (shim_disable): a
 * CUPTI left detached between windows is attached again. Context: writer thread.
 */
void cupti_writer_off(void) SHIM_HIDDEN;
/*
 * cupti_final_flush - the process is ending without exit (signal, exec): a forced flush of
 * CUPTI's buffers, skipped when another thread holds the CUPTI state. Context: writer thread.
 */
void cupti_final_flush(void) SHIM_HIDDEN;

/* ---- Hardware counters (pm.c) ---- */

/*
 * pm_start - load the profiler libraries and start the sampling thread; it sets up PM sampling
 * on the device of the first kernel launch. Context: app thread, from cupti_start (in the
 * first cuInit) once CUPTI runs.
 */
void pm_start(void *cupti_lib, const char *cupti_path) SHIM_HIDDEN;
void pm_reset_after_fork(void) SHIM_HIDDEN;
/*
 * pm_after_cuinit - initialize the profiler (synchronously), once, in the first successful
 * cuInit after pm_start; a caller that finds another thread doing it waits (at most 2 s) until
 * it is done. Context: every successful cuInit, after the real call; no lock held.
 */
void pm_after_cuinit(void) SHIM_HIDDEN;
/* pm_claim - the first kernel launch: tell the sampling thread the current context and device. */
void pm_claim(void) SHIM_HIDDEN;
extern _Atomic int pm_claim_open SHIM_HIDDEN;
/*
 * pm_before_context_teardown - a context is about to be destroyed or released: stop sampling
 * and wait (bounded) until the sampling thread is out of the profiler. Context: app thread, in
 * a hook, before the real call; returns at once when nothing samples.
 */
void pm_before_context_teardown(void) SHIM_HIDDEN;

/* Context: launch hooks, after the real call. One relaxed load when there is nothing to do. */
static inline void pm_note_launch(void)
{
	if (unlikely(atomic_load_explicit(&pm_claim_open, memory_order_relaxed)))
		pm_claim();
}

/* ---- Call stacks (stacks.c) ---- */

/*
 * Which calls get their stack captured, by entry point (filled once by stacks_init; all
 * STACKS_NEVER with GPUSHIM_STACKS=0): STACKS_ALWAYS every call (host synchronizations,
 * blocking copies, allocations and frees, module loads), STACKS_SAMPLED one in
 * GPUSHIM_STACK_SAMPLE of the thread's sampled calls (launches, stream-ordered allocations;
 * kernel launches also at their kernel's first launch), STACKS_SLOW a call that held the host
 * STACKS_SLOW_NS or more (asynchronous copies: from pageable memory they block, as a
 * tensor's .to("cuda") of an unpinned batch does; a pinned one returns in microseconds).
 */
enum { STACKS_NEVER = 0, STACKS_ALWAYS = 1, STACKS_SAMPLED = 2, STACKS_SLOW = 3 };
#define STACKS_SLOW_NS 20000
extern uint8_t stacks_policy[API__COUNT] SHIM_HIDDEN;

/* stacks_init - the policy table from the configuration. Context: the constructor. */
void stacks_init(void) SHIM_HIDDEN;

/*
 * stacks_start - the stack table mapped (or emptied, in a fork child) and the loader thread
 * started (gpushim-stacks: every call into the dynamic loader stack capture makes), which makes
 * capture possible: glibc's unwinder loaded (its first backtrace() dlopens libgcc_s: there,
 * never inside an application's call) and its FDE lookup handed to the cached walk (unwind.c),
 * the shim's own code located (its frames are left out), the Python API looked up (again each
 * second while none is found); then captures are allowed. stacks_wait_ready - the first hook
 * waits for that, at most GPUSHIM_STACK_READY_MS (50 ms; captures before it are counted, not
 * made: on a loaded machine the thread can take longer).
 * Context: shim_start, on the thread starting the writer, after it; may allocate, creates a
 * thread (once a process).
 */
void stacks_start(void) SHIM_HIDDEN;
void stacks_wait_ready(void) SHIM_HIDDEN;

/*
 * stacks_writer_pcs - before the STACK @s (@size bytes) goes into the trace: a PC record (and
 * its STRINGs) through @emit for each of its addresses the trace does not describe yet, as the
 * loader thread finds them (dl_iterate_phdr, dladdr; never on an application thread), each
 * answer waited for a bounded time (none in time: that address asked again in a later stack).
 * Context: the writer thread, draining the meta stream.
 */
void stacks_writer_pcs(const struct trace_rec_stack *s, size_t size, tbuf_emit_fn emit)
	SHIM_HIDDEN;

/*
 * stacks_writer_ending - the process is ending (exit, a fatal signal, exec): from now on (until
 * called with 0, after a failed exec) stacks_writer_pcs waits for the loader thread
 * LOADER_END_WAIT_MS in all, not per address: the ending thread may hold the dynamic loader's
 * lock for good (a signal or exit() inside dlopen), and the writer must reach END.
 * Context: the writer thread.
 */
void stacks_writer_ending(int is_ending) SHIM_HIDDEN;

/* stacks_note - the NOTE STACKS: settings and counts (trace_format.h). Context: the writer. */
void stacks_note(void) SHIM_HIDDEN;

/* stacks_reset_after_fork - the child's trace starts with no stacks. Context: atfork child. */
void stacks_reset_after_fork(void) SHIM_HIDDEN;

/* stacks_sample_slow - stacks_sample's end of a count: 1 when this call is the sampled one. */
int stacks_sample_slow(struct shim_tls *t) SHIM_HIDDEN;

/* stacks_sample - one more sampled call on the thread: 1 when its stack is to be captured. */
static inline int stacks_sample(struct shim_tls *t)
{
	if (likely(t->stack_left > 1)) {
		t->stack_left--;
		return 0;
	}
	return stacks_sample_slow(t);
}

/* ---- Exported aliases ---- */

/*
 * Each hooks_*.c file defines SHIM_FILE_<FAMILY> as YES for the families whose hooks it holds
 * and expands GPUSHIM_APIS(SHIM_EXPORT_ENTRY) at its end: that emits, for every entry point of
 * those families, the global symbol with the exact libcuda name as an alias of hook_<name>. A
 * listed entry point with no hook fails to assemble, so the list and the hooks cannot drift.
 */
#define SHIM_EXPORT_AS(str, hook)                                                                  \
	__asm__(".globl " str "\n\t.type " str ", @function\n\t.set " str ", " #hook "\n");
#define SHIM_EXPORT_CHOOSE_YES(str, hook) SHIM_EXPORT_AS(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_INIT(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_LAUNCH(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_MEMORY(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_COPY(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_SET(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_SYNC(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_CAPTURE(str, hook)
#define SHIM_EXPORT_CHOOSE_SHIM_FILE_MODULE(str, hook)
#define SHIM_EXPORT_SEL2(sel, str, hook) SHIM_EXPORT_CHOOSE_##sel(str, hook)
#define SHIM_EXPORT_SEL(sel, str, hook) SHIM_EXPORT_SEL2(sel, str, hook)
#define SHIM_EXPORT_ENTRY(n, fam, fl) SHIM_EXPORT_SEL(SHIM_FILE_##fam, #n, hook_##n)

/* ---- The shape of every hook ---- */

/*
 * struct hook_ctx - one intercepted call in flight. hook_begin() runs just before the real call,
 * hook_end() just after it, hook_leave() returns. errno is what the application set before the
 * call when the real call starts, and what the real call left when the hook returns: the shim's
 * own work in between (mmap, futex) never shows. With want_corr the call gets a correlation
 * number (its seq). Its GPU work is joined to it by CUPTI's API record of the call, which lies
 * on the same thread within [t0, t1] in the same clock (trace_format.h): nothing is pushed to
 * CUPTI around the real call - that cost two CUPTI calls a launch and, on cudart's launch path,
 * produced no record at all (BENCHMARKS.md).
 * Context: app thread, between shim_enter() and shim_leave(); no locks, no allocation.
 */
struct hook_ctx {
	uint64_t t0, t1;
	uint32_t seq;
	int saved_errno;
	uint16_t stack_api;		/* nonzero: capture the stack of this call (stacks.c) */
	uint16_t stack_why;		/* enum trace_call_stack_why */
};

static inline void hook_begin(struct shim_tls *t, struct hook_ctx *h, int want_corr)
{
	h->stack_api = 0;
	h->seq = want_corr ? rec_next_seq(t) : 0;	/* touches no errno */
	h->t0 = clock_now_ns();
}

/*
 * stacks_capture - the stack of the call @h describes, whose record the thread committed last:
 * a CALL_STACK record after it (and a STACK, the first time this stack is seen). Never fails
 * the call: what cannot be captured is counted (NOTE STACKS). May change errno.
 * Context: app thread inside the hook, after the real call; the Python API only with the GIL;
 * the meta lock for a stack or Python name not seen before; no allocation of its own.
 */
void stacks_capture(struct shim_tls *t, const struct hook_ctx *h) SHIM_HIDDEN;

/* The call recorded through @h (ended: t1 set) is entry point @api: is its stack wanted? */
static inline void stacks_note_call(struct hook_ctx *h, int api)
{
	uint8_t p = stacks_policy[api];

	if (likely(p == STACKS_NEVER))
		return;
	if (p == STACKS_ALWAYS) {
		h->stack_api = (uint16_t)api;
		h->stack_why = TRACE_CALL_STACK_ALWAYS;
	} else if (p == STACKS_SLOW) {
		if (h->t1 - h->t0 >= STACKS_SLOW_NS) {
			h->stack_api = (uint16_t)api;
			h->stack_why = TRACE_CALL_STACK_SLOW;
		}
	} else if (stacks_sample(&shim_tls)) {
		h->stack_api = (uint16_t)api;
		h->stack_why = TRACE_CALL_STACK_SAMPLED;
	}
}

/* A kernel launch was recorded through @h: sampled, or its kernel's first launch. */
static inline void stacks_note_launch(struct shim_tls *t, struct hook_ctx *h, int api)
{
	if (likely(t->stack_left > 1)) {
		t->stack_left--;
		return;
	}
	if (stacks_sample_slow(t)) {
		h->stack_api = (uint16_t)api;
		h->stack_why = t->stack_first ? TRACE_CALL_STACK_FIRST : TRACE_CALL_STACK_SAMPLED;
	}
	t->stack_first = 0;
}

static inline void hook_end(struct hook_ctx *h)
{
	h->saved_errno = errno;
	h->t1 = clock_now_ns();
}

static inline CUresult hook_leave(struct shim_tls *t, struct hook_ctx *h, CUresult res)
{
	if (unlikely(h->stack_api))
		stacks_capture(t, h);
	errno = h->saved_errno;
	shim_leave(t);
	return res;
}

/*
 * HOOK_DEFINE(hook_cuX, (params)) - the head of a hook definition, with its (hidden) prototype.
 * Pass the already pasted name: see REAL_ID.
 */
#define HOOK_DEFINE(fn, params)                                                                    \
	CUresult fn params SHIM_HIDDEN;                                                            \
	CUresult fn params

/* Fill the common part of a thread record begun with rec_begin (and see whether its stack is
 * wanted: a call whose record is not written gets none). */
#define HOOK_CALL_FILL(r, api, h, res)                                                             \
	(rec_fill_call(&(r)->call, (api), (h)->t0, (h)->t1, (res), (h)->seq),                      \
	 stacks_note_call((h), (api)))

#endif /* GPUSHIM_SHIM_H */
