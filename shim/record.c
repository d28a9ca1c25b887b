// SPDX-License-Identifier: MIT
/*
 * record.c - turns hook data into trace records: thread records into the caller's ring (with
 * time deltas and LOST accounting), and meta records (strings, kernels, devices, occupancy,
 * notes, NVTX domains) into the meta stream under one lock. Owns the interning tables (uthash).
 * No I/O. Runs on: app threads inside hooks; the writer (interning GPU kernel names).
 *
 * Ordering guarantee the writer relies on: a STRING/FUNC is appended to the meta stream inside
 * the same critical section that makes its id findable, so any thread record that carries the
 * id was written after the meta record was.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "uthash.h"

/* ---- Thread records ---- */

static void write_lost(struct tbuf *b)
{
	struct trace_rec_lost *r = tbuf_reserve(b, sizeof(*r));

	if (!r)
		return;
	r->hdr.type = TRACE_REC_LOST;
	r->hdr.size = sizeof(*r);
	r->hdr.dt_ns = 0;
	r->nr_records = b->lost_pending;
	r->nr_bytes = b->lost_pending_bytes;
	tbuf_commit(b, sizeof(*r));
	b->lost_pending = 0;
	b->lost_pending_bytes = 0;
}

static void count_lost(struct tbuf *b, uint32_t size)
{
	b->lost_pending++;
	b->lost_pending_bytes += size;
	atomic_fetch_add_explicit(&b->nr_lost, 1, memory_order_relaxed);
}

/* rec_begin when the ring is new or of an older epoch, wraps, is full, lost records, or the
 * delta needs a TIME record. */
void *rec_begin_slow(struct shim_tls *t, uint16_t type, uint16_t size, uint64_t start_ns)
{
	struct tbuf *b = tbuf_get(t);
	struct trace_rec_hdr *h;
	uint64_t dt;

	if (unlikely(!b)) {
		tbuf_count_unringed();
		return NULL;
	}
	if (unlikely(b->lost_pending))
		write_lost(b);
	dt = start_ns > b->last_ns ? start_ns - b->last_ns : 0;
	if (unlikely(dt > UINT32_MAX)) {
		struct trace_rec_time *tr = tbuf_reserve(b, sizeof(*tr));

		if (!tr) {
			count_lost(b, size);
			return NULL;
		}
		tr->hdr.type = TRACE_REC_TIME;
		tr->hdr.size = sizeof(*tr);
		tr->hdr.dt_ns = 0;
		tr->ts_ns = start_ns;
		tbuf_commit(b, sizeof(*tr));
		b->last_ns = start_ns;
		dt = 0;
	}
	h = tbuf_reserve(b, size);
	if (unlikely(!h)) {
		count_lost(b, size);
		return NULL;
	}
	rec_stamp(b, h, type, size, (uint32_t)dt);
	return h;
}

uint32_t rec_next_seq_slow(struct shim_tls *t)
{
	int saved = errno;		/* the thread's first ring is mapped here (hook_begin) */
	struct tbuf *b = tbuf_get(t);

	errno = saved;
	if (unlikely(!b))
		return 0;
	if (unlikely(++b->seq == 0))
		b->seq = 1;
	return b->seq;
}

/* ---- Meta stream ---- */

/* Meta records are rare (one per kernel, string, device); this bounds a runaway producer. */
#define META_MAX_BYTES (64u << 20)

static pthread_mutex_t meta_lock = PTHREAD_MUTEX_INITIALIZER;
static uint8_t *meta_buf;
static size_t meta_len, meta_cap;
static _Atomic uint64_t meta_lost;

/*
 * The process is ending (CLOCK_MONOTONIC ns; 0: not yet). A thread can hold meta_lock where it
 * will never let go of it: interrupted by a signal whose handler calls exit(), the exit path
 * then running on that very thread. From the deadline on, nobody waits for the lock past it;
 * once one wait has failed, only a free lock is taken. What cannot be written is counted lost.
 */
static _Atomic uint64_t meta_deadline_ns;
static _Atomic int is_meta_abandoned;

void meta_exit_deadline(uint64_t deadline_ns)
{
	atomic_store(&meta_deadline_ns, deadline_ns);
}

/* The writer thread waits in steps, so that a deadline set while it waits still holds. */
static __thread int is_writer_thread __attribute__((tls_model("initial-exec")));

void meta_writer_thread(void)
{
	is_writer_thread = 1;
}

/* Take meta_lock. Returns 0, or -1 when it cannot be had before the exit deadline. */
static int meta_take(void)
{
	uint64_t deadline = atomic_load_explicit(&meta_deadline_ns, memory_order_relaxed);

	if (likely(!deadline && !is_writer_thread)) {
		pthread_mutex_lock(&meta_lock);
		return 0;
	}
	for (;;) {
		uint64_t now, step = 20000000u;
		struct timespec ts;

		if (pthread_mutex_trylock(&meta_lock) == 0)
			return 0;
		deadline = atomic_load(&meta_deadline_ns);
		now = clock_mono_ns();
		if (deadline && (atomic_load(&is_meta_abandoned) || now >= deadline)) {
			atomic_store(&is_meta_abandoned, 1);
			return -1;
		}
		if (deadline && deadline - now < step)
			step = deadline - now;
		/* timedlock's clock is CLOCK_REALTIME: a step, not the deadline, is waited for */
		clock_gettime(CLOCK_REALTIME, &ts);
		ts.tv_nsec += (long)step;
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec += ts.tv_nsec / 1000000000;
			ts.tv_nsec %= 1000000000;
		}
		if (pthread_mutex_timedlock(&meta_lock, &ts) == 0)
			return 0;
	}
}

static void meta_give(void)
{
	pthread_mutex_unlock(&meta_lock);
}

/* Space for @size more bytes at the end of the meta stream, or NULL (counted as lost). */
static void *meta_reserve_locked(size_t size)
{
	void *p;

	if (meta_len + size > meta_cap) {
		size_t cap = meta_cap ? meta_cap * 2 : 16384;
		uint8_t *nbuf;

		while (cap < meta_len + size)
			cap *= 2;
		if (cap > META_MAX_BYTES || !(nbuf = realloc(meta_buf, cap))) {
			atomic_fetch_add(&meta_lost, 1);
			return NULL;
		}
		meta_buf = nbuf;
		meta_cap = cap;
	}
	p = meta_buf + meta_len;
	meta_len += size;
	return p;
}

static int meta_append_locked(const void *rec, size_t size)
{
	void *p = meta_reserve_locked(size);

	if (!p)
		return -ENOMEM;
	memcpy(p, rec, size);
	return 0;
}

int meta_append(const void *rec, size_t size)
{
	int ret;

	if (meta_take() < 0) {
		atomic_fetch_add(&meta_lost, 1);
		return -EBUSY;
	}
	ret = meta_append_locked(rec, size);
	meta_give();
	if (ret == 0)
		tbuf_kick_writer();
	return ret;
}

int meta_swap(uint8_t **buf, size_t *len, size_t *cap)
{
	uint8_t *b;
	size_t c;

	*len = 0;
	if (meta_take() < 0)
		return -1;
	b = meta_buf;
	c = meta_cap;
	meta_buf = *buf;
	meta_cap = *cap;
	*buf = b;
	*cap = c;
	*len = meta_len;
	meta_len = 0;
	meta_give();
	return 0;
}

uint64_t meta_nr_lost(void)
{
	return atomic_load(&meta_lost);
}

int rec_meta_take(void)
{
	return meta_take();
}

void rec_meta_give(void)
{
	meta_give();
}

void *rec_meta_reserve(size_t size)
{
	return meta_reserve_locked(size);
}

/* ---- Strings ---- */

struct str_entry {
	UT_hash_handle hh;
	uint32_t id;
	uint32_t len;
	char text[];
};

static struct str_entry *str_table;
static uint32_t next_str_id = 1;

size_t rec_string_size(size_t len)
{
	return (sizeof(struct trace_rec_string) + len + 7) & ~(size_t)7;
}

void rec_string_encode(void *dst, uint32_t id, const char *s, size_t len)
{
	struct trace_rec_string *r = dst;
	size_t size = rec_string_size(len);

	memset(dst, 0, size);
	r->hdr.type = TRACE_REC_STRING;
	r->hdr.size = (uint16_t)size;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r + 1, s, len);
}

/* Longer names (deep C++ templates) are cut; the record size field is 16 bits. */
#define MAX_STRING_BYTES (TRACE_MAX_RECORD - sizeof(struct trace_rec_string) - 8)

#define INTERN_META 1	/* its STRING record written to meta now */
/*
 * Written to meta and not kept in the table: a one-off text. Notes are mostly that (a sampled
 * run's windows write two a window, each with its number and timings): kept, they grew the
 * table, and the process, ~180 bytes a window for as long as it ran.
 */
#define INTERN_ONCE 2

/* The id of @s, interned as @how says (INTERN_*); 0 when out of memory or meta is full. */
static uint32_t intern_locked(const char *s, size_t len, int how, int *is_new)
{
	struct str_entry *e = NULL;

	*is_new = 0;
	if (len > MAX_STRING_BYTES)
		len = MAX_STRING_BYTES;
	HASH_FIND(hh, str_table, s, len, e);
	if (e)
		return e->id;
	if (!(how & INTERN_ONCE)) {
		e = malloc(sizeof(*e) + len + 1);
		if (!e)
			return 0;
		e->id = next_str_id;
		e->len = (uint32_t)len;
		memcpy(e->text, s, len);
		e->text[len] = 0;
	}
	if (how & (INTERN_META | INTERN_ONCE)) {
		void *rec = meta_reserve_locked(rec_string_size(len));

		if (!rec) {
			free(e);
			return 0;
		}
		rec_string_encode(rec, next_str_id, s, len);
	}
	if (e)
		HASH_ADD_KEYPTR(hh, str_table, e->text, e->len, e);
	*is_new = 1;
	return next_str_id++;
}

uint32_t rec_intern_meta(const char *s, size_t len)
{
	int is_new;
	uint32_t id;

	if (meta_take() < 0)
		return 0;
	id = intern_locked(s, len, INTERN_META, &is_new);
	meta_give();
	return id;
}

uint32_t rec_intern_meta_max(const char *s, size_t len, size_t *budget)
{
	struct str_entry *e;
	int is_new;
	uint32_t id = 0;

	if (len > MAX_STRING_BYTES)
		len = MAX_STRING_BYTES;
	if (meta_take() < 0)
		return 0;
	HASH_FIND(hh, str_table, s, len, e);
	if (e) {
		id = e->id;
	} else if (*budget >= REC_INTERN_COST(len)) {
		id = intern_locked(s, len, INTERN_META, &is_new);
		if (id)
			*budget -= REC_INTERN_COST(len);
	}
	meta_give();
	return id;
}

int rec_nvtx_domain(uint32_t id, const char *name, size_t len, _Atomic uint32_t *defined,
		    uint32_t tag)
{
	struct trace_rec_nvtx_domain r;
	int is_new, ret = 0;

	if (meta_take() < 0)
		return -1;
	if (atomic_load_explicit(defined, memory_order_relaxed) != tag) {
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_NVTX_DOMAIN;
		r.hdr.size = sizeof(r);
		r.id = id;
		r.name = intern_locked(name, len, INTERN_META, &is_new);
		ret = r.name ? meta_append_locked(&r, sizeof(r)) : -1;
		if (ret == 0)
			atomic_store_explicit(defined, tag, memory_order_release);
	}
	meta_give();
	return ret < 0 ? -1 : 0;
}

uint32_t rec_intern(const char *s, size_t len, int *is_new)
{
	uint32_t id;

	*is_new = 0;
	if (meta_take() < 0)
		return 0;
	id = intern_locked(s, len, 0, is_new);
	meta_give();
	return id;
}

uint32_t rec_string_id_reserve(void)
{
	uint32_t id;

	if (meta_take() < 0)
		return 0;
	id = next_str_id++;
	meta_give();
	return id;
}

void rec_note(uint32_t kind, uint64_t ts_ns, const char *text)
{
	struct trace_rec_note r;
	int is_new;

	memset(&r, 0, sizeof(r));
	r.hdr.type = TRACE_REC_NOTE;
	r.hdr.size = sizeof(r);
	r.ts_ns = ts_ns;
	r.kind = kind;
	if (meta_take() < 0) {
		atomic_fetch_add(&meta_lost, 1);
		return;
	}
	r.text = text ? intern_locked(text, strlen(text), INTERN_ONCE, &is_new) : 0;
	meta_append_locked(&r, sizeof(r));
	meta_give();
	tbuf_kick_writer();
}

/* ---- Kernels ---- */

struct func_entry {
	UT_hash_handle hh;
	uintptr_t handle;
	uint32_t id;
};

struct occ_key {
	uint32_t func;
	uint32_t block_threads;
	uint32_t dyn_smem;
	int32_t device;
};

struct occ_entry {
	UT_hash_handle hh;
	struct occ_key key;
};

static struct func_entry *func_table;
static struct occ_entry *occ_table;
static uint32_t next_func_id = 1;

int32_t rec_current_device(void)
{
	CUdevice dev;

	if (drv.cuCtxGetDevice && drv.cuCtxGetDevice(&dev) == CUDA_SUCCESS)
		return (int32_t)dev;
	return -1;
}

static void query_attr(struct trace_rec_func *r, int kind, uintptr_t handle, CUdevice dev,
		       CUfunction_attribute attr, uint32_t have, uint32_t *out)
{
	int v = 0;
	CUresult res = CUDA_ERROR_NOT_FOUND;

	if (kind == TRACE_FUNC_FUNCTION && drv.cuFuncGetAttribute)
		res = drv.cuFuncGetAttribute(&v, attr, (CUfunction)handle);
	else if (kind == TRACE_FUNC_KERNEL && drv.cuKernelGetAttribute && dev >= 0)
		res = drv.cuKernelGetAttribute(&v, attr, (CUkernel)handle, dev);
	if (res == CUDA_SUCCESS && v >= 0) {
		*out = (uint32_t)v;
		r->have |= have;
	}
}

static uint32_t func_lookup_slow(uintptr_t handle, int *is_created)
{
	struct trace_rec_func r;
	struct func_entry *e;
	const char *name = NULL;
	uint32_t regs = 0;
	int32_t dev;
	int is_new;

	if (meta_take() < 0)
		return 0;
	HASH_FIND(hh, func_table, &handle, sizeof(handle), e);
	meta_give();
	if (e)
		return e->id;

	/*
	 * Query outside the lock. cudart and cuBLAS pass CUkernel handles, for which cuFuncGetName
	 * answers CUDA_ERROR_INVALID_HANDLE; Triton and XLA pass CUfunctions.
	 */
	memset(&r, 0, sizeof(r));
	r.hdr.type = TRACE_REC_FUNC;
	r.hdr.size = sizeof(r);
	r.handle = handle;
	resolve_ensure();
	if (drv.cuFuncGetName && drv.cuFuncGetName(&name, (CUfunction)handle) == CUDA_SUCCESS &&
	    name)
		r.kind = TRACE_FUNC_FUNCTION;
	else if (drv.cuKernelGetName &&
		 drv.cuKernelGetName(&name, (CUkernel)handle) == CUDA_SUCCESS && name)
		r.kind = TRACE_FUNC_KERNEL;
	else
		name = NULL;
	dev = r.kind == TRACE_FUNC_KERNEL ? rec_current_device() : -1;
	query_attr(&r, r.kind, handle, dev, CU_FUNC_ATTRIBUTE_NUM_REGS, TRACE_FUNC_HAVE_REGS, &regs);
	r.regs_per_thread = (uint16_t)regs;
	query_attr(&r, r.kind, handle, dev, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES,
		   TRACE_FUNC_HAVE_SMEM, &r.static_smem_bytes);
	query_attr(&r, r.kind, handle, dev, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK,
		   TRACE_FUNC_HAVE_MAX_THREADS, &r.max_threads_per_block);
	query_attr(&r, r.kind, handle, dev, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES,
		   TRACE_FUNC_HAVE_LOCAL, &r.local_bytes_per_thread);

	if (meta_take() < 0)
		return 0;
	HASH_FIND(hh, func_table, &handle, sizeof(handle), e);
	if (!e && (e = malloc(sizeof(*e)))) {
		r.name = name ? intern_locked(name, strlen(name), INTERN_META, &is_new) : 0;
		e->handle = handle;
		e->id = r.id = next_func_id++;
		if (meta_append_locked(&r, sizeof(r)) < 0) {
			next_func_id--;
			free(e);
			e = NULL;
		} else {
			HASH_ADD(hh, func_table, handle, sizeof(e->handle), e);
			*is_created = 1;
		}
	}
	meta_give();
	return e ? e->id : 0;
}

uint32_t rec_func_id_slow(struct shim_tls *t, uintptr_t handle)
{
	uint32_t gen = atomic_load_explicit(&shim.func_gen, memory_order_relaxed);
	struct func_cache_entry *c = &t->fcache[rec_fcache_slot(handle)];
	int is_new = 0;

	if (c->handle == handle && c->gen == gen && c->id)
		return c->id;
	c->id = func_lookup_slow(handle, &is_new);
	if (is_new && stacks_policy[API_cuLaunchKernel]) {
		/* The kernel's first launch in the process: its stack is captured (stacks.c). */
		t->stack_left = 1;
		t->stack_first = 1;
	}
	c->handle = handle;
	c->gen = gen;
	c->occ_block = 0;
	c->occ_smem = 0;
	return c->id;
}

void rec_occupancy_slow(struct shim_tls *t, uint32_t func, uintptr_t handle,
			uint32_t block_threads, uint32_t dyn_smem)
{
	struct func_cache_entry *c = &t->fcache[rec_fcache_slot(handle)];
	struct trace_rec_occupancy r;
	struct occ_entry *e;
	struct occ_key key;
	int blocks = 0;

	if (!func || !block_threads)
		return;
	if (likely(c->handle == handle && c->id == func && c->occ_block == block_threads &&
		   c->occ_smem == dyn_smem))
		return;
	memset(&key, 0, sizeof(key));
	key.func = func;
	key.block_threads = block_threads;
	key.dyn_smem = dyn_smem;
	key.device = rec_current_device();

	if (meta_take() < 0)
		return;
	HASH_FIND(hh, occ_table, &key, sizeof(key), e);
	meta_give();
	if (!e) {
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_OCCUPANCY;
		r.hdr.size = sizeof(r);
		r.func = func;
		r.block_threads = block_threads;
		r.dyn_smem_bytes = dyn_smem;
		r.device = key.device;
		/* For a CUkernel the calculator uses the current context: the launch's own. */
		r.result = drv.cuOccupancyMaxActiveBlocksPerMultiprocessor ?
				   drv.cuOccupancyMaxActiveBlocksPerMultiprocessor(
					   &blocks, (CUfunction)handle, (int)block_threads, dyn_smem) :
				   CUDA_ERROR_NOT_FOUND;
		r.max_blocks_per_sm = r.result == CUDA_SUCCESS && blocks > 0 ? (uint32_t)blocks : 0;

		if (meta_take() < 0)
			return;
		HASH_FIND(hh, occ_table, &key, sizeof(key), e);
		if (!e && (e = malloc(sizeof(*e)))) {
			e->key = key;
			if (meta_append_locked(&r, sizeof(r)) == 0)
				HASH_ADD(hh, occ_table, key, sizeof(key), e);
			else
				free(e);
		}
		meta_give();
	}
	if (c->handle == handle && c->id == func) {
		c->occ_block = block_threads;
		c->occ_smem = dyn_smem;
	}
}

void rec_flush_funcs(void)
{
	struct func_entry *e, *tmp;
	struct occ_entry *o, *otmp;

	if (meta_take() < 0) {
		atomic_fetch_add(&shim.func_gen, 1);
		return;
	}
	HASH_ITER(hh, func_table, e, tmp) {
		HASH_DEL(func_table, e);
		free(e);
	}
	HASH_ITER(hh, occ_table, o, otmp) {
		HASH_DEL(occ_table, o);
		free(o);
	}
	atomic_fetch_add(&shim.func_gen, 1);
	meta_give();
}

/* ---- Devices ---- */

static _Atomic int devices_written;

static uint32_t dev_attr(CUdevice dev, CUdevice_attribute attr)
{
	int v = 0;

	if (drv.cuDeviceGetAttribute && drv.cuDeviceGetAttribute(&v, attr, dev) == CUDA_SUCCESS &&
	    v > 0)
		return (uint32_t)v;
	return 0;
}

void rec_devices_once(void)
{
	int expected = 0, count = 0, i;

	if (atomic_load(&devices_written) ||
	    !atomic_compare_exchange_strong(&devices_written, &expected, 1))
		return;
	resolve_ensure();
	if (!drv.cuDeviceGetCount || drv.cuDeviceGetCount(&count) != CUDA_SUCCESS)
		return;
	for (i = 0; i < count && i < 64; i++) {
		struct trace_rec_device r;
		CUdevice dev;
		char name[256] = "";
		size_t total = 0;

		if (!drv.cuDeviceGet || drv.cuDeviceGet(&dev, i) != CUDA_SUCCESS)
			continue;
		memset(&r, 0, sizeof(r));
		r.hdr.type = TRACE_REC_DEVICE;
		r.hdr.size = sizeof(r);
		r.ordinal = (uint32_t)i;
		if (drv.cuDeviceGetName)
			drv.cuDeviceGetName(name, sizeof(name) - 1, dev);
		name[sizeof(name) - 1] = 0;
		r.name = name[0] ? rec_intern_meta(name, strlen(name)) : 0;
		if (drv.cuDeviceTotalMem_v2 && drv.cuDeviceTotalMem_v2(&total, dev) == CUDA_SUCCESS)
			r.total_bytes = total;
		r.sm_count = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT);
		r.cc_major = dev_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR);
		r.cc_minor = dev_attr(dev, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR);
		r.max_threads_per_sm =
			dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_MULTIPROCESSOR);
		r.max_blocks_per_sm = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_BLOCKS_PER_MULTIPROCESSOR);
		r.max_threads_per_block = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK);
		r.regs_per_sm = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_REGISTERS_PER_MULTIPROCESSOR);
		r.smem_per_sm = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR);
		r.clock_khz = dev_attr(dev, CU_DEVICE_ATTRIBUTE_CLOCK_RATE);
		r.mem_clock_khz = dev_attr(dev, CU_DEVICE_ATTRIBUTE_MEMORY_CLOCK_RATE);
		r.mem_bus_bits = dev_attr(dev, CU_DEVICE_ATTRIBUTE_GLOBAL_MEMORY_BUS_WIDTH);
		meta_append(&r, sizeof(r));
	}
}

/* ---- Fork ---- */

void record_reset_after_fork(void)
{
	struct str_entry *s, *stmp;
	struct func_entry *e, *tmp;
	struct occ_entry *o, *otmp;

	pthread_mutex_init(&meta_lock, NULL);
	HASH_ITER(hh, str_table, s, stmp) {
		HASH_DEL(str_table, s);
		free(s);
	}
	HASH_ITER(hh, func_table, e, tmp) {
		HASH_DEL(func_table, e);
		free(e);
	}
	HASH_ITER(hh, occ_table, o, otmp) {
		HASH_DEL(occ_table, o);
		free(o);
	}
	next_str_id = 1;
	next_func_id = 1;
	meta_len = 0;
	atomic_store(&meta_lost, 0);
	atomic_store(&meta_deadline_ns, 0);
	atomic_store(&is_meta_abandoned, 0);
	atomic_store(&devices_written, 0);
	atomic_fetch_add(&shim.func_gen, 1);
}
