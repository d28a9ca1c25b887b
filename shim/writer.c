// SPDX-License-Identifier: MIT
/*
 * writer.c - the writer thread: the only shim code that opens, writes or compresses. It drains
 * the thread rings and the meta stream into chunks, compresses each chunk into one zstd frame,
 * and appends it to the trace at least every GPUSHIM_FLUSH_MS, so a killed process leaves a
 * trace readable up to its last chunk. It never calls a CUDA driver function.
 * Runs on: its own thread, with every signal blocked; writer_stop on the exiting thread.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dirent.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#define ZSTD_STATIC_LINKING_ONLY	/* ZSTD_createCCtx_advanced, ZSTD_customMem */
#include <zstd.h>

#include "config.h"
#include "futex.h"
#include "gpucols.h"

/* A chunk holds at most this many record bytes: big enough for zstd, small enough to lose. */
#define CHUNK_RAW_BYTES (4u << 20)

struct writer {
	pthread_t thread;
	int has_thread;
	_Atomic int stop;
	ZSTD_CCtx *cctx;
	uint8_t *raw;			/* the chunk being filled */
	size_t raw_len;
	uint8_t *out;			/* its compressed frame */
	size_t out_cap;
	const struct tbuf *block_owner;	/* ring whose BLOCK is current in the chunk */
	uint32_t seq;			/* chunks written */
	uint64_t chunk_gen;		/* chunks started (LAUNCH_REPEAT refers within one) */
	uint64_t nr_records;
	uint64_t nr_lost_freed;		/* records lost by rings freed since (their threads exited) */
	uint8_t *meta;			/* swapped with the meta stream */
	size_t meta_len, meta_cap;
	int is_failed;			/* a write failed: nothing more goes to the file */
	int is_meta_lost_said;		/* the exit found the meta lock held for good: said once */
	pid_t pid;			/* the process the thread runs in (not a vfork child) */
	_Atomic int is_finished;	/* futex word: the thread wrote its END (or failed), leaves */
	_Atomic int is_main_gone;	/* the main thread called pthread_exit */
	_Atomic int is_stopping;	/* one thread runs writer_stop's join */
	pid_t tid;			/* the writer thread's */
	/* Endings no destructor sees (see writer_finish_on_signal and writer_exec_begin). */
	_Atomic int final_sig;		/* the fatal signal ending the process; 0 none */
	_Atomic int final_done;		/* futex word: 1 once that signal's END is written */
	_Atomic int exec_waiters;	/* futex word: threads inside an exec hook */
	_Atomic int exec_gen;		/* exec requests so far */
	_Atomic int exec_parked;	/* futex word: the request whose END waits for exec's outcome */
	char exec_path[256];
};

static struct writer w;

/* ---- Memory the way to END needs ---- */

/*
 * A thread that ends the process from a signal handler may have been stopped inside malloc with
 * an arena's lock held for good, and that arena can be the writer's own: the meta stream's
 * buffers go back and forth between the writer and the app threads (meta_swap), so a thread
 * that grows one under the meta lock reallocs memory of the writer's arena. Seen: the writer
 * found the meta lock held, counted what it could not write, then blocked in zstd's first
 * workspace allocation until the exit's deadline, and the trace had no END.
 *
 * What this keeps: when the exit finds the meta lock held for good, the writer still reaches
 * END, for from the moment meta_take gives that lock up (at its deadline) to END it takes no
 * allocator lock: under the meta lock, rec_* allocate only once they hold it, and return
 * before allocating when it was given up; what the writer allocates outside it - the
 * compressor's memory, made at the first compression and again when a chunk needs more, and
 * drain_all's ring heads - is mapped here, never malloc's.
 */
#define MAPPED_HDR 64u			/* the length, and zstd's alignment kept */

static void *mapped_alloc(void *opaque, size_t size)
{
	size_t len = size + MAPPED_HDR;
	uint8_t *p;

	(void)opaque;
	if (len < size)
		return NULL;
	p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	memcpy(p, &len, sizeof(len));
	return p + MAPPED_HDR;
}

static void mapped_free(void *opaque, void *addr)
{
	uint8_t *p;
	size_t len;

	(void)opaque;
	if (!addr)
		return;
	p = (uint8_t *)addr - MAPPED_HDR;
	memcpy(&len, p, sizeof(len));
	munmap(p, len);
}

/* ---- Chunks ---- */

static void run_flush(void);
static void held_flush(void);

static void chunk_flush(void)
{
	struct trace_chunk_header ch;
	struct iovec iov[2];
	size_t n;
	int ret;

	held_flush();
	gpucols_flush(w.raw, &w.raw_len, &w.nr_records);
	if (!w.raw_len)
		return;
	if (w.is_failed)
		goto out;
	n = ZSTD_compress2(w.cctx, w.out, w.out_cap, w.raw, w.raw_len);
	if (ZSTD_isError(n)) {
		shim_disable("zstd: %s", ZSTD_getErrorName(n));
		w.is_failed = 1;
		goto out;
	}
	ch.magic = TRACE_CHUNK_MAGIC;
	ch.seq = w.seq;
	ch.raw_bytes = (uint32_t)w.raw_len;
	ch.zstd_bytes = (uint32_t)n;
	iov[0] = (struct iovec){ &ch, sizeof(ch) };
	iov[1] = (struct iovec){ w.out, n };
	ret = tfile_write(iov, 2);
	if (ret < 0) {
		/* Disk full, quota, I/O error: what is written stays readable. */
		shim_disable("cannot write trace %s: %s", tfile_path(),
			     ret == -ESTALE ? "the file was replaced" : strerror(-ret));
		w.is_failed = 1;
		goto out;
	}
	w.seq++;
out:
	w.raw_len = 0;
	w.block_owner = NULL;
	w.chunk_gen++;
	gpucols_chunk_done();
}

static void chunk_put(const void *rec, uint32_t size)
{
	memcpy(w.raw + w.raw_len, rec, size);
	w.raw_len += size;
	w.nr_records++;
}

/*
 * The launch run (gpucols.h) is the column encoder's; when it may grow by emit's short way is
 * the writer's: the ring whose next repeat may extend it past emit's full room check (NULL
 * none), and the room the encoder's other held records needed when it was set - valid while
 * nothing but the run changes (every other record, flush or reset clears it).
 */
static struct gpucols_gap_run *const run = &gpucols_gap;
static const struct tbuf *run_fast;
static size_t run_held_room;

/* Write the held run into the chunk (emit has kept room for it). */
static void run_flush(void)
{
	run_fast = NULL;
	gpucols_gap_flush(w.raw, &w.raw_len, &w.nr_records);
}

/* The room the column encoder's held records need: launches by reference, GPU runs. */
static size_t held_room(void)
{
	return gpucols_launch_room() + gpucols_room();
}

/*
 * Does the chunk hold a record of @size (a repeat may be written in full), a BLOCK, the launch
 * run grown by one, and @held (held_room(), each held run grown by a record)?
 */
static inline int chunk_has_room(uint32_t size, size_t held)
{
	size_t rec = size > sizeof(struct trace_rec_launch) ? size : sizeof(struct trace_rec_launch);
	size_t grown_run = run->n ? TRACE_LAUNCH_RUN_MAX_BYTES(run->n + 1) : 0;

	return w.raw_len + rec + sizeof(struct trace_rec_block) + grown_run + held <=
	       CHUNK_RAW_BYTES;
}

/* After @b's launch went into the run: its next may take emit's short way. */
static void run_may_grow(const struct tbuf *b)
{
	if (run->n && run->owner == b) {
		run_fast = b;
		run_held_room = held_room();
	}
}

/* Write the thread records held back: a launch run, or launches by reference. */
static void held_flush(void)
{
	run_flush();
	gpucols_launch_flush(w.raw, &w.raw_len, &w.nr_records);
}

/* Make @b's the chunk's current thread block. */
static void block_for(struct tbuf *b)
{
	struct trace_rec_block blk;

	if (w.block_owner == b)
		return;
	held_flush();
	memset(&blk, 0, sizeof(blk));
	blk.hdr.type = TRACE_REC_BLOCK;
	blk.hdr.size = sizeof(blk);
	blk.tid = b->tid;
	blk.thread_index = b->index;
	blk.base_ns = b->w_last_ns;
	chunk_put(&blk, sizeof(blk));
	w.nr_records--;		/* framing, not data */
	w.block_owner = b;
}

/* A launch of @b written by reference to the chunk's LAUNCH @shape (held in a LAUNCH_REFS). */
static void hold_ref(struct tbuf *b, int64_t shape, uint32_t dt, uint32_t dur, uint32_t seq)
{
	run_flush();		/* a launch run held is earlier in time */
	block_for(b);
	gpucols_launch_hold((uint32_t)shape, dt, dur, seq, w.raw, &w.raw_len, &w.nr_records);
	b->w_full = 0;		/* its last launch is no LAUNCH record: no repeat may follow */
}

/*
 * A ring's LAUNCH (@l) or LAUNCH_REPEAT (@rep, a launch the producer found equal to the ring's
 * previous LAUNCH). Held by reference when the chunk has its shape (LAUNCH_REFS), except that a
 * repeat of a launch written as a LAUNCH record continues or starts a launch run
 * (LAUNCH_GAP_RUN): a LAUNCH_REPEAT or a run always follows its thread's LAUNCH record of the
 * same shape, so a reader that skips LAUNCH_REFS reads every other launch right. Returns 1 when
 * held, 0 when the record goes in full: @l, @rep itself (a repeat of the thread's LAUNCH record
 * in this chunk), or @full (the repeat expanded: its LAUNCH is in an earlier chunk, and every
 * chunk decodes on its own).
 */
static int launch_hold(struct tbuf *b, const struct trace_rec_launch *l,
		       const struct trace_rec_launch_repeat *rep, struct trace_rec_launch *full)
{
	if (l) {
		b->w_launch = *l;
		b->w_launch_gen = w.chunk_gen + 1;
		b->w_shape = gpucols_launch_find(l, w.raw);
		if (b->w_shape < 0)
			return 0;
		hold_ref(b, b->w_shape, l->call.hdr.dt_ns, l->call.dur, l->call.seq);
		return 1;
	}
	if (b->w_launch_gen == w.chunk_gen + 1) {
		if (gpucols_gap_extend(b, rep))
			return 1;
		if (b->w_full)
			return 0;	/* starts a launch run */
		hold_ref(b, b->w_shape, rep->hdr.dt_ns, rep->dur, rep->seq);
		return 1;
	}
	b->w_launch_gen = w.chunk_gen + 1;
	b->w_shape = gpucols_launch_find(&b->w_launch, w.raw);
	if (b->w_shape >= 0) {
		hold_ref(b, b->w_shape, rep->hdr.dt_ns, rep->dur, rep->seq);
		return 1;
	}
	*full = b->w_launch;
	full->call.hdr.dt_ns = rep->hdr.dt_ns;
	full->call.dur = rep->dur;
	full->call.seq = rep->seq;
	return 0;
}

/* Record @rec of ring @b (NULL: CUPTI's or the writer's own) into the chunk, or held back. */
static void emit_record(struct tbuf *b, const void *rec, uint32_t size)
{
	uint16_t type = ((const struct trace_rec_hdr *)rec)->type;
	struct trace_rec_launch full;

	run_fast = NULL;
	if (!chunk_has_room(size, held_room()))
		chunk_flush();
	if (!b && type == TRACE_REC_GPU_API && size == sizeof(struct trace_rec_gpu_api)) {
		gpucols_api(rec, w.raw, &w.raw_len, &w.nr_records);
		return;
	} else if (!b && type == TRACE_REC_GPU_KERNEL) {
		if (size == sizeof(struct trace_rec_gpu_kernel) &&
		    gpucols_kernel(rec, w.raw, &w.raw_len, &w.nr_records))
			return;
		/* In full: a shape for the chunk's next kernels (held records stay held). */
		chunk_put(rec, size);
		gpucols_kernel_full(w.raw, w.raw_len - size, (uint16_t)size);
		return;
	} else if (b && type == TRACE_REC_LAUNCH && size == sizeof(full)) {
		if (launch_hold(b, rec, NULL, NULL))
			return;
	} else if (b && type == TRACE_REC_LAUNCH_REPEAT) {
		if (unlikely(!b->w_launch_gen)) {
			/* Cannot happen (the producer wrote a LAUNCH first); counted if it does. */
			atomic_fetch_add_explicit(&b->nr_lost, 1, memory_order_relaxed);
			return;
		}
		full.call.hdr.type = 0;
		if (launch_hold(b, NULL, rec, &full)) {
			run_may_grow(b);
			return;
		}
		if (full.call.hdr.type) {
			rec = &full;
			size = sizeof(full);
		}
	}
	held_flush();
	if (b)
		block_for(b);
	if (b && ((const struct trace_rec_hdr *)rec)->type == TRACE_REC_LAUNCH_REPEAT) {
		const struct trace_rec_launch_repeat *rep = rec;

		gpucols_gap_start(b, rep);
		run_may_grow(b);
		return;
	}
	chunk_put(rec, size);
	if (((const struct trace_rec_hdr *)rec)->type == TRACE_REC_LAUNCH) {
		/* Every LAUNCH of the chunk has an index; this one may be a shape. */
		int64_t idx = gpucols_launch_full(w.raw, w.raw_len - size, (uint16_t)size);

		if (b) {
			b->w_shape = idx;
			b->w_full = 1;
		}
	}
}

/* tbuf_drain's and cupti_writer_poll's callback: one record of ring @cb (NULL: no ring). */
static void emit(void *ctx, const struct tbuf *cb, const void *rec, uint32_t size)
{
	/* The writer owns the w_* fields of every ring. */
	struct tbuf *b = (struct tbuf *)cb;
	const struct trace_rec_hdr *h = rec;

	(void)ctx;
	/*
	 * The run's next launch, while only the run grows: emit_record's room check with the
	 * held room it found last (run_held_room, unchanged since).
	 */
	if (b && b == run_fast && h->type == TRACE_REC_LAUNCH_REPEAT &&
	    b->w_launch_gen == w.chunk_gen + 1 && chunk_has_room(size, run_held_room) &&
	    gpucols_gap_extend(b, rec))
		return;
	emit_record(b, rec, size);
}

static void emit_meta_buffer(const uint8_t *buf, size_t len)
{
	size_t off = 0;

	while (off + sizeof(struct trace_rec_hdr) <= len) {
		const struct trace_rec_hdr *h = (const void *)(buf + off);

		if (h->size < sizeof(*h) || h->size > len - off)
			break;
		if (h->type == TRACE_REC_STACK)	/* its addresses described before it */
			stacks_writer_pcs((const void *)h, h->size, emit);
		emit(NULL, NULL, h, h->size);
		off += h->size;
	}
}

/* Entry-point names go first, so ids in every later record have a meaning. */
static void emit_api_defs(void)
{
	static const char *const names[API__COUNT] = {
#define N(n, fam, fl) [API_##n] = #n,
		GPUSHIM_APIS(N)
#undef N
	};
	static const uint8_t families[API__COUNT] = {
#define F(n, fam, fl) [API_##n] = TRACE_FAM_##fam,
		GPUSHIM_APIS(F)
#undef F
	};
	static const uint8_t flags[API__COUNT] = {
#define FL(n, fam, fl) [API_##n] = (fl),
		GPUSHIM_APIS(FL)
#undef FL
	};
	uint8_t rec[256];
	int i;

	for (i = 1; i < API__COUNT; i++) {
		struct trace_rec_api_def d;
		size_t len = strlen(names[i]);
		int is_new;

		memset(&d, 0, sizeof(d));
		d.hdr.type = TRACE_REC_API_DEF;
		d.hdr.size = sizeof(d);
		d.api = (uint16_t)i;
		d.family = families[i];
		d.flags = flags[i];
		d.name = rec_intern(names[i], len, &is_new);
		if (is_new) {
			rec_string_encode(rec, d.name, names[i], len);
			emit(NULL, NULL, rec, (uint32_t)rec_string_size(len));
		}
		emit(NULL, NULL, &d, sizeof(d));
	}
}

/* tbuf_drain's callback where records cannot be written: count them. */
static void count_record(void *ctx, const struct tbuf *b, const void *rec, uint32_t size)
{
	(void)b;
	(void)rec;
	(void)size;
	++*(uint64_t *)ctx;
}

/*
 * One pass over everything recorded so far. Ring heads are read before the meta stream is
 * taken: every id a drained thread record uses was defined in meta before that head was
 * published, so definitions always precede uses in the file.
 */
static void drain_all(int at_exit)
{
	static uint64_t *heads;
	static size_t heads_cap;
	struct tbuf *list = atomic_load_explicit(&tbuf_list, memory_order_acquire);
	struct tbuf *b, *prev;
	size_t i, n = 0;

	for (b = list; b; b = b->next) {
		if (n == heads_cap) {
			size_t cap = heads_cap ? heads_cap * 2 : 64;
			uint64_t *p = mapped_alloc(NULL, cap * sizeof(*heads));

			if (!p)
				break;	/* the rest is drained next time */
			if (heads)
				memcpy(p, heads, n * sizeof(*heads));
			mapped_free(NULL, heads);
			heads = p;
			heads_cap = cap;
		}
		heads[n++] = atomic_load_explicit(&b->head, memory_order_acquire);
	}

	if (meta_swap(&w.meta, &w.meta_len, &w.meta_cap) == 0) {
		emit_meta_buffer(w.meta, w.meta_len);
		w.meta_len = 0;
		for (b = list, i = 0; b && i < n; b = b->next, i++)
			tbuf_drain(b, heads[i], emit, NULL);
	} else {
		/*
		 * The process is ending and a thread holds the meta stream's lock for good: the
		 * definitions the rings' records use may be in it. Count them lost, write the rest.
		 */
		uint64_t lost = 0;

		for (b = list, i = 0; b && i < n; b = b->next, i++)
			tbuf_drain(b, heads[i], count_record, &lost);
		atomic_fetch_add(&shim.nr_lost_unringed, lost);
		if (lost && !w.is_meta_lost_said) {
			w.is_meta_lost_said = 1;
			shim_log(LOG_WARN, "the process ended while one of its threads held the "
					   "shim's lock: %llu records not written (counted lost)",
				 (unsigned long long)lost);
		}
	}

	cupti_writer_poll(at_exit, emit, NULL);
	/* A pass's GPU records go out with it (the room for them was kept by emit). */
	gpucols_flush(w.raw, &w.raw_len, &w.nr_records);
	run_fast = NULL;	/* the held room changed */

	/*
	 * Free the rings of threads that exited and are empty. A new ring may get the same
	 * address, so the chunk's current BLOCK must not be taken to belong to it.
	 */
	prev = NULL;
	b = atomic_load_explicit(&tbuf_list, memory_order_acquire);
	while (b) {
		struct tbuf *next = b->next;

		if (atomic_load_explicit(&b->is_dead, memory_order_acquire) &&
		    atomic_load(&b->head) == atomic_load(&b->tail)) {
			if (w.block_owner == b) {
				held_flush();
				w.block_owner = NULL;
			}
			/* Its losses stay in END's total (drops at its end have no LOST record). */
			w.nr_lost_freed += atomic_load_explicit(&b->nr_lost, memory_order_relaxed);
			if (prev) {
				prev->next = next;
				tbuf_free(b);
				b = next;
				continue;
			}
			if (atomic_compare_exchange_strong(&tbuf_list, &b, next)) {
				tbuf_free(b);
				b = next;
				continue;
			}
			b = atomic_load(&tbuf_list);
			prev = NULL;
			continue;
		}
		prev = b;
		b = next;
	}
}

static uint64_t total_lost(void)
{
	uint64_t n = meta_nr_lost() + atomic_load(&shim.nr_lost_unringed) + w.nr_lost_freed;
	struct tbuf *b;

	for (b = atomic_load(&tbuf_list); b; b = b->next)
		n += atomic_load_explicit(&b->nr_lost, memory_order_relaxed);
	return n;
}

static void note_doors(void);

/*
 * The END of a process exit is written in a chunk of its own at late.end_off; calls made after
 * it (a library destructor that runs after ours) rewrite that chunk in place with them counted
 * as lost and a warning note (writer_late_call): one pwrite of a chunk never shorter than what
 * it covers (a zstd skippable frame pads it), so the file never loses its END. The note's
 * string id is reserved when END is written.
 */
static struct {
	struct trace_rec_end end;
	uint64_t end_off;
	uint64_t on_disk;		/* the END chunk's bytes in the file now */
	uint32_t str_id;
	_Atomic int is_set;		/* the writer is done: the END may be rewritten */
	_Atomic int is_hooked;		/* late_at_exit registered */
	_Atomic uint64_t nr_calls;	/* calls after END */
	uint64_t nr_written;		/* nr_calls the file says; under lock */
	pthread_mutex_t lock;
} late = { .lock = PTHREAD_MUTEX_INITIALIZER };

static void write_end(uint32_t reason)
{
	struct trace_rec_end e;

	held_flush();
	gpucols_flush(w.raw, &w.raw_len, &w.nr_records);
	memset(&e, 0, sizeof(e));
	e.hdr.type = TRACE_REC_END;
	e.hdr.size = sizeof(e);
	e.nr_records = w.nr_records;
	e.nr_lost = total_lost();
	e.nr_chunks = w.seq;
	e.end_ns = clock_now_ns();
	e.reason = reason;
	e.nr_threads = atomic_load(&shim.nr_threads);
	if (w.raw_len + sizeof(e) > CHUNK_RAW_BYTES)
		chunk_flush();
	e.nr_chunks = w.seq;
	chunk_put(&e, sizeof(e));
	chunk_flush();
	late.end = e;
}

/* Write END again at late.end_off with @n calls after it counted lost. Context: late.lock. */
static void rewrite_end(uint64_t n)
{
	uint8_t raw[512];
	struct trace_rec_note note;
	struct trace_rec_end e = late.end;
	struct trace_chunk_header ch;
	struct iovec iov[2];
	char text[200];
	size_t len, slen, zn, raw_len;

	len = (size_t)snprintf(text, sizeof(text),
			       "%llu calls after the trace ended (CUDA or NVTX, from a library "
			       "destructor that ran after the shim's) were not recorded; counted as lost",
			       (unsigned long long)n);
	if (len >= sizeof(text))
		len = sizeof(text) - 1;
	slen = rec_string_size(len);
	rec_string_encode(raw, late.str_id, text, len);
	memset(&note, 0, sizeof(note));
	note.hdr.type = TRACE_REC_NOTE;
	note.hdr.size = sizeof(note);
	note.ts_ns = clock_now_ns();
	note.kind = TRACE_NOTE_WARNING;
	note.text = late.str_id;
	memcpy(raw + slen, &note, sizeof(note));
	e.nr_lost += n;
	e.nr_records += 2;	/* the string and the note */
	memcpy(raw + slen + sizeof(note), &e, sizeof(e));
	raw_len = slen + sizeof(note) + sizeof(e);
	zn = ZSTD_compress2(w.cctx, w.out, w.out_cap, raw, raw_len);
	if (ZSTD_isError(zn))
		return;
	if (sizeof(ch) + zn < late.on_disk) {
		/* A skippable frame (magic 0x184D2A50, its length, zeros) up to the old size. */
		size_t pad = late.on_disk - sizeof(ch) - zn;
		uint32_t word[2] = { 0x184D2A50u, 0 };

		if (pad < 8)
			pad = 8;
		if (zn + pad > ZSTD_compressBound(raw_len) || zn + pad > w.out_cap)
			return;	/* cannot cover the old chunk: it stays */
		word[1] = (uint32_t)(pad - 8);
		memcpy(w.out + zn, word, 8);
		memset(w.out + zn + 8, 0, pad - 8);
		zn += pad;
	}
	ch.magic = TRACE_CHUNK_MAGIC;
	ch.seq = (uint32_t)e.nr_chunks;
	ch.raw_bytes = (uint32_t)raw_len;
	ch.zstd_bytes = (uint32_t)zn;
	iov[0] = (struct iovec){ &ch, sizeof(ch) };
	iov[1] = (struct iovec){ w.out, zn };
	if (tfile_write_at(late.end_off, iov, 2) == 0) {
		late.nr_written = n;
		late.on_disk = sizeof(ch) + zn;
	}
	tfile_close();		/* opened again for this rewrite: not kept */
}

/* Bring the file's count of calls after END up to date. Context: any thread, after END. */
static void late_sync(void)
{
	for (;;) {
		uint64_t n, tried = 0;

		if (pthread_mutex_trylock(&late.lock))
			return;		/* its holder reads the count after it took the lock */
		while ((n = atomic_load(&late.nr_calls)) != late.nr_written && n != tried) {
			rewrite_end(n);	/* a failed rewrite is not retried for the same count */
			tried = n;
		}
		pthread_mutex_unlock(&late.lock);
		if (atomic_load(&late.nr_calls) == n)
			return;
	}
}

/* Registered by the first call after END: the exact count once exit's last handlers ran. */
static void late_at_exit(void)
{
	if (atomic_load(&late.is_set) && w.pid == getpid())
		late_sync();
}

void writer_late_call(void)
{
	int saved = errno;
	uint64_t n = atomic_fetch_add(&late.nr_calls, 1) + 1;

	if (!atomic_exchange(&late.is_hooked, 1))
		atexit(late_at_exit);	/* glibc runs it even when registered during exit */
	/* The file follows the first calls, then every power of two; late_at_exit the last. */
	if ((n <= 16 || !(n & (n - 1))) && atomic_load(&late.is_set) && w.pid == getpid())
		late_sync();
	errno = saved;
}

/*
 * The trace's end at process exit: hooks stop recording (from here on they count calls as
 * late), everything recorded is written, then END alone in the last chunk, whose place is kept
 * for writer_late_call.
 */
/*
 * At a normal exit: a run that should have GPU timestamps and has none says so (a warning: its
 * report can tell no cause that needs GPU time), and with GPUSHIM_SUMMARY (gpushim run) one
 * line says where the trace went.
 */
static void announce(void)
{
	char why[192];
	uint64_t n = cupti_gpu_records(why, sizeof(why));

	if (w.is_failed)
		return;		/* the write's failure was the warning: the trace is cut */
	if (!n && shim.cfg.mode != RECORD_HOST && !(shim.cfg.cupti && !strcmp(shim.cfg.cupti, "0")))
		shim_log(LOG_WARN, "no GPU timestamps in %s: %s", tfile_path(), why);
	if (shim.cfg.summary) {
		uint64_t size = tfile_size();

		shim_log(LOG_WARN, "trace %s: %.1f %s, %llu GPU records", tfile_path(),
			 size < 1000000 ? (double)size / 1e3 : (double)size / 1e6,
			 size < 1000000 ? "kB" : "MB", (unsigned long long)n);
	}
}

static void finish_exit(void)
{
	uint32_t id;

	stacks_writer_ending(1);
	atomic_store(&shim.mode, SHIM_ENDED);
	note_doors();
	stacks_note();
	drain_all(1);
	held_flush();
	gpucols_flush(w.raw, &w.raw_len, &w.nr_records);
	chunk_flush();
	id = rec_string_id_reserve();
	late.end_off = tfile_size();
	write_end(TRACE_END_EXIT);
	late.on_disk = tfile_size() - late.end_off;
	announce();
	if (!w.is_failed)
		late.str_id = id;	/* calls after END are taken once the file is closed */
}

static void note_doors(void)
{
	uint64_t by_dlsym, by_gpa;
	char text[96];

	resolve_door_counts(&by_dlsym, &by_gpa);
	snprintf(text, sizeof(text), "wrappers handed out: dlsym %llu, cuGetProcAddress %llu",
		 (unsigned long long)by_dlsym, (unsigned long long)by_gpa);
	rec_note(TRACE_NOTE_DOORS, clock_now_ns(), text);
}

static void wait_for_work(uint32_t ms)
{
	if (!atomic_load(&shim.writer_kick) && !atomic_load(&w.stop) &&
	    !atomic_load(&w.final_sig) && !atomic_load(&w.exec_waiters))
		futex_wait_ms(&shim.writer_kick, 0, ms);
	atomic_store(&shim.writer_kick, 0);
}

/* ---- Endings no destructor sees: a fatal signal, exec ---- */

/*
 * A thread is dying of @sig and waits (bounded) in its handler: write everything recorded, the
 * GPU records CUPTI holds, and END. The dying thread may hold a lock this path needs (the meta
 * stream's, CUPTI's); the handler's deadline, not this thread, bounds that.
 */
static void finish_on_signal(int sig)
{
	const char *abbrev = sigabbrev_np(sig);
	char text[48];

	stacks_writer_ending(1);
	cupti_final_flush();
	snprintf(text, sizeof(text), "SIG%s (%d)", abbrev ? abbrev : "?", sig);
	rec_note(TRACE_NOTE_SIGNAL, clock_now_ns(), text);
	note_doors();
	stacks_note();
	drain_all(1);
	write_end(TRACE_END_SIGNAL);
	atomic_store(&shim.mode, SHIM_OFF);	/* nothing after END */
	atomic_store(&w.final_done, 1);
	futex_wake_all(&w.final_done);
}

/*
 * A thread is about to exec: the new image keeps no memory of ours. Write everything and an END
 * of its own chunk, then wait for exec's outcome. Success ends this process image (and this
 * thread) with a complete trace; failure returns here and the END chunk is cut off the file, so
 * the trace goes on as if nothing had happened (the EXEC note stays: exec was tried).
 */
static void park_for_exec(void)
{
	uint64_t mark_off, mark_records;
	uint32_t mark_seq;
	int n, gen = atomic_load(&w.exec_gen);

	stacks_writer_ending(1);
	cupti_final_flush();
	rec_note(TRACE_NOTE_EXEC, clock_now_ns(), w.exec_path);
	drain_all(1);
	chunk_flush();
	mark_off = tfile_size();
	mark_seq = w.seq;
	mark_records = w.nr_records;
	write_end(TRACE_END_EXEC);
	atomic_store(&w.exec_parked, gen);
	futex_wake_all(&w.exec_parked);

	/* A newer request (another path) gets its own note and END: take this one back. */
	while ((n = atomic_load(&w.exec_waiters)) > 0 && atomic_load(&w.exec_gen) == gen &&
	       !atomic_load(&w.stop) && !atomic_load(&w.final_sig))
		futex_wait_ms(&w.exec_waiters, n, 100);

	/* Still here: exec failed (or the process is ending otherwise). Take the END back. */
	stacks_writer_ending(0);
	if (!w.is_failed) {
		int ret = tfile_truncate(mark_off);

		if (ret == 0) {
			w.seq = mark_seq;
			w.nr_records = mark_records;
		} else {
			shim_disable("cannot take back the END written before a failed exec: %s",
				     strerror(-ret));
			w.is_failed = 1;
		}
	}
}

/* Context: a signal handler on any thread: async-signal-safe (atomics, futex, clock). */
void writer_finish_on_signal(int sig, uint32_t wait_ms)
{
	uint64_t deadline;
	int expected = 0;

	if (!w.has_thread || w.pid != getpid() || atomic_load(&w.is_finished))
		return;
	atomic_compare_exchange_strong(&w.final_sig, &expected, sig);
	tbuf_kick_writer();
	deadline = clock_now_ns() + (uint64_t)wait_ms * 1000000u;
	while (!atomic_load(&w.final_done) && !atomic_load(&w.is_finished) &&
	       futex_wait_until(&w.final_done, 0, deadline))
		;
}

int writer_exec_begin(const char *path, uint32_t wait_ms)
{
	uint64_t deadline;
	int gen, parked;

	/* A vfork child shares our memory but is not this process: leave the writer alone. */
	if (!w.has_thread || w.pid != getpid() || atomic_load(&w.is_finished) ||
	    atomic_load(&shim.mode) != SHIM_ON)
		return 0;
	snprintf(w.exec_path, sizeof(w.exec_path), "%s", path ? path : "(null)");
	gen = atomic_fetch_add(&w.exec_gen, 1) + 1;
	atomic_fetch_add(&w.exec_waiters, 1);
	futex_wake_all(&w.exec_waiters);
	tbuf_kick_writer();
	deadline = clock_now_ns() + (uint64_t)wait_ms * 1000000u;
	while ((parked = atomic_load(&w.exec_parked)) < gen && !atomic_load(&w.is_finished) &&
	       futex_wait_until(&w.exec_parked, parked, deadline))
		;
	return 1;
}

void writer_exec_end(void)
{
	atomic_fetch_sub(&w.exec_waiters, 1);
	futex_wake_all(&w.exec_waiters);
}

/* The hooks' clock into the trace: clock_gettime and @why not the TSC, or the TSC's rate. */
static void note_clock(const char *why)
{
	char text[96];

	if (why)
		snprintf(text, sizeof(text), "clock_gettime: %s", why);
	else
		snprintf(text, sizeof(text), "TSC at %.4f GHz, fitted to CLOCK_MONOTONIC",
			 clock_tsc_ghz());
	rec_note(TRACE_NOTE_CLOCK, clock_now_ns(), text);
}

static void finished(void);
static int only_ours_left(void);

/* Once a trace: what CUPTI records in this run (GPUSHIM_MODE), for the analyzer's coverage. */
static void note_mode(void)
{
	char text[128];

	if (shim.cfg.mode == RECORD_SAMPLED && shim.cfg.pm)
		snprintf(text, sizeof(text), "sampled: GPU timestamps for %u ms every %u ms; "
			 "counters asked every %u us", shim.cfg.window_ms, shim.cfg.window_every_ms,
			 shim.cfg.pm_interval_us);
	else if (shim.cfg.mode == RECORD_SAMPLED)
		snprintf(text, sizeof(text), "sampled: GPU timestamps for %u ms every %u ms%s",
			 shim.cfg.window_ms, shim.cfg.window_every_ms,
			 shim.cfg.cupti_detach ? "; CUPTI detached between windows" : "");
	else
		snprintf(text, sizeof(text), "%s", shim_mode_names[shim.cfg.mode]);
	rec_note(TRACE_NOTE_MODE, clock_now_ns(), text);
}

static void *writer_main(void *arg)
{
	uint32_t flush_ms = shim.cfg.flush_ms;
	uint32_t wake_ms = flush_ms / 2 < 25 ? flush_ms / 2 : 25;
	uint64_t last_flush, last_look = 0;
	const char *why;
	int is_clock_noted = 0;

	(void)arg;
	pthread_setname_np(pthread_self(), "gpushim-writer");	/* top -H, /proc/PID/task */
	why = clock_start();
	(void)clock_calibrate();
	w.tid = (pid_t)syscall(SYS_gettid);
	meta_writer_thread();
	if (tfile_create(shim.is_forked) < 0) {
		finished();
		return NULL;
	}
	if (why)
		note_clock(why);
	emit_api_defs();
	nvtx_trace_started();
	note_mode();
	last_flush = clock_now_ns();
	for (;;) {
		int stopping, is_off, sig;
		uint64_t now;

		wait_for_work(wake_ms);
		if ((why = clock_calibrate())) {
			note_clock(why);
		} else if (!is_clock_noted && clock_tsc_ghz() > 0) {	/* once a trace */
			note_clock(NULL);
			is_clock_noted = 1;
		}
		if (atomic_load(&w.exec_waiters) && !atomic_load(&w.final_sig))
			park_for_exec();
		if ((sig = atomic_load(&w.final_sig))) {
			finish_on_signal(sig);
			break;
		}
		stopping = atomic_load(&w.stop);
		is_off = atomic_load(&shim.mode) == SHIM_OFF;
		if (stopping)
			stacks_writer_ending(1);
		drain_all(stopping);
		now = clock_now_ns();
		if (is_off) {
			cupti_writer_off();
			rec_note(TRACE_NOTE_DISABLED, now,
				 shim.disable_reason ? shim.disable_reason : "disabled");
			note_doors();
			stacks_note();
			drain_all(1);
			write_end(TRACE_END_DISABLED);
			break;
		}
		if (stopping) {
			finish_exit();
			break;
		}
		if (atomic_load(&w.is_main_gone) && now - last_look >= 100000000u &&
		    (last_look = now, only_ours_left())) {
			/*
			 * The program's last thread is gone and only ours keep the process alive:
			 * glibc's last exiting thread calls exit(0); do it here. exit's handlers and
			 * destructors run on this thread, and writer_stop() ends the trace on it.
			 */
			exit(0);
		}
		/* Flush early enough that no chunk is more than flush_ms apart. */
		if (now - last_flush + (uint64_t)wake_ms * 1000000 >= (uint64_t)flush_ms * 1000000) {
			chunk_flush();
			last_flush = now;
		}
	}
	finished();
	return NULL;
}

/* The writer is done: wake whoever waits for it. The file stays open after a signal's END
 * (the dying thread may still be writing its last words through it). */
static void finished(void)
{
	if (!atomic_load(&w.final_sig))
		tfile_close();
	if (late.str_id) {
		/* From here on the writer touches neither the file nor its buffers: calls after
		 * END may rewrite it, on whichever thread makes them. */
		atomic_store(&late.is_set, 1);	/* seq_cst: against writer_late_call's count */
		if (atomic_load(&late.nr_calls))
			late_sync();
	}
	atomic_store(&w.is_finished, 1);
	futex_wake_all(&w.is_finished);
	futex_wake_all(&w.final_done);
	futex_wake_all(&w.exec_parked);
}

int writer_start(void)
{
	sigset_t all, old;
	int ret;

	/* After a fork these already exist (copied from the parent). */
	if (!w.cctx)
		w.cctx = ZSTD_createCCtx_advanced(
			(ZSTD_customMem){ mapped_alloc, mapped_free, NULL });
	if (!w.raw)
		w.raw = malloc(CHUNK_RAW_BYTES);
	w.out_cap = ZSTD_compressBound(CHUNK_RAW_BYTES);
	if (!w.out)
		w.out = malloc(w.out_cap);
	if (!w.cctx || !w.raw || !w.out)
		return -ENOMEM;
	ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_compressionLevel, shim.cfg.zstd_level);
	ZSTD_CCtx_setParameter(w.cctx, ZSTD_c_checksumFlag, 1);

	/* The application's signal handlers must never run on our thread (heaptrack's rule). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	w.pid = getpid();
	ret = pthread_create(&w.thread, NULL, writer_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret)
		return -ret;
	w.has_thread = 1;
	return 0;
}

void writer_stop(uint32_t wait_ms)
{
	uint64_t deadline;

	if (!w.has_thread || w.pid != getpid())
		return;		/* nothing started, or a vfork child: the parent's writer */
	if (pthread_equal(pthread_self(), w.thread)) {
		/* exit() on the writer itself: the program's last thread had gone (writer_main) */
		if (!atomic_load(&w.is_finished)) {
			finish_exit();
			finished();
		}
		return;
	}
	/*
	 * Bounded: the exiting thread may be one a signal interrupted while it held a lock the
	 * writer needs (exit() from a handler). No wait for a lock goes past the deadline; if the
	 * writer still is not done then, the trace ends at its last complete chunk.
	 */
	shim_exit_begin();
	deadline = shim_deadline(clock_now_ns() + (uint64_t)wait_ms * 1000000u);
	if (atomic_exchange(&w.is_stopping, 1)) {
		/* Another thread is ending the process too (exit and _exit at once): wait only. */
		while (!atomic_load(&w.is_finished) &&
		       futex_wait_until(&w.is_finished, 0, deadline))
			;
		return;
	}
	atomic_store(&w.stop, 1);
	tbuf_kick_writer();
	while (!atomic_load(&w.is_finished) && futex_wait_until(&w.is_finished, 0, deadline))
		;
	if (atomic_load(&w.is_finished)) {
		/*
		 * Its trace is done; joined within the same deadline, since even a thread's end
		 * can wait for a lock the interrupted thread holds (its allocator's). Not joined
		 * in time, it is left to the process's end.
		 */
		uint64_t now = clock_now_ns(), left = deadline > now ? deadline - now : 0;
		struct timespec ts;

		clock_gettime(CLOCK_REALTIME, &ts);	/* timedjoin's clock */
		ts.tv_sec += (time_t)(left / 1000000000u);
		ts.tv_nsec += (long)(left % 1000000000u);
		if (ts.tv_nsec >= 1000000000) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000;
		}
		pthread_timedjoin_np(w.thread, NULL, &ts);
	} else {
		shim_log(LOG_WARN, "the trace was not finished within %u ms of the exit; it ends at "
				   "its last complete chunk", wait_ms);
	}
	w.has_thread = 0;
}

int writer_is_this_thread(void)
{
	return w.has_thread && pthread_equal(pthread_self(), w.thread);
}

int writer_is_running_here(void)
{
	return w.has_thread && w.pid == getpid();
}

void writer_main_gone(void)
{
	/* Kept whether a writer runs or not: one may start later, on a thread the main left. */
	atomic_store(&w.is_main_gone, 1);
	tbuf_kick_writer();
}

/*
 * Is every thread left in the process one of ours (named gpushim-*) or a zombie (the main
 * thread after pthread_exit stays one until the process ends)? Read from /proc/self/task.
 */
static int only_ours_left(void)
{
	char path[300], buf[256];
	struct dirent *d;
	DIR *dir = opendir("/proc/self/task");
	int is_ours = 1;

	if (!dir)
		return 0;
	while (is_ours && (d = readdir(dir))) {
		const char *comm, *state;
		ssize_t n;
		int fd;

		if (d->d_name[0] < '0' || d->d_name[0] > '9' || atoi(d->d_name) == w.tid)
			continue;
		snprintf(path, sizeof(path), "/proc/self/task/%s/stat", d->d_name);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			continue;	/* it exited meanwhile */
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0)
			continue;
		buf[n] = 0;
		/* "TID (COMM) S ...": COMM may hold spaces and parentheses; the last ')' ends it. */
		comm = strchr(buf, '(');
		state = strrchr(buf, ')');
		if (!comm || !state || state[1] != ' ')
			continue;
		if (state[2] == 'Z' || state[2] == 'X')
			continue;
		if (!strncmp(comm + 1, "gpushim-", 8))
			continue;
		is_ours = 0;
	}
	closedir(dir);
	return is_ours;
}

void writer_reset_after_fork(void)
{
	/* The writer thread does not exist in the child; its buffers are reused. */
	tfile_reset_after_fork();
	w.has_thread = 0;
	atomic_store(&w.is_main_gone, 0);
	atomic_store(&w.is_stopping, 0);
	atomic_store(&late.is_set, 0);
	atomic_store(&late.is_hooked, 0);
	atomic_store(&late.nr_calls, 0);
	late.str_id = 0;
	late.nr_written = 0;
	pthread_mutex_init(&late.lock, NULL);
	atomic_store(&w.stop, 0);
	atomic_store(&w.is_finished, 0);
	atomic_store(&w.final_sig, 0);
	atomic_store(&w.final_done, 0);
	atomic_store(&w.exec_waiters, 0);
	atomic_store(&w.exec_gen, 0);
	atomic_store(&w.exec_parked, 0);
	w.raw_len = 0;
	w.block_owner = NULL;
	run->n = 0;
	run_fast = NULL;
	gpucols_forget();
	w.seq = 0;
	w.nr_records = 0;
	w.nr_lost_freed = 0;
	w.is_failed = 0;
	w.meta_len = 0;
	if (w.cctx)
		ZSTD_CCtx_reset(w.cctx, ZSTD_reset_session_only);
}
