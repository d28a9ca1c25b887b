// SPDX-License-Identifier: MIT
/*
 * tbuf.c - per-thread ring buffers: one single-producer/single-consumer ring per application
 * thread that records, drained by the writer thread. Producers never block and never lock: a
 * full ring drops the record and counts it (record.c turns the count into a LOST record).
 * No I/O. Runs on: app threads (reserve/commit/get, key destructor), the writer (drain, free).
 *
 * Positions are byte counts that only grow; position & mask is the offset. A record never wraps:
 * when it does not fit before the end, a PAD header with size 0 marks the rest as unused.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <linux/futex.h>
#include <pthread.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

_Atomic(struct tbuf *) tbuf_list;
static pthread_key_t tbuf_key;
static int has_key;

static size_t round_up_pow2(size_t v)
{
	size_t p = 1;

	while (p < v)
		p <<= 1;
	return p;
}

/* The struct sits in front of the data, in one mapping: one mmap per thread, nothing else. */
#define TBUF_HEAD_BYTES 16384

static void tbuf_thread_exit(void *p)
{
	struct tbuf *b = p;
	int saved = errno;

	if (shim_tls.buf == b)
		shim_tls.buf = NULL;
	atomic_store_explicit(&b->is_dead, 1, memory_order_release);
	tbuf_kick_writer();
	errno = saved;
}

void tbuf_init(void)
{
	has_key = pthread_key_create(&tbuf_key, tbuf_thread_exit) == 0;
}

struct tbuf *tbuf_create(struct shim_tls *t, uint32_t epoch)
{
	size_t cap = round_up_pow2((size_t)shim.cfg.buffer_kb * 1024);
	struct tbuf *b, *head;
	void *mem;

	_Static_assert(sizeof(struct tbuf) <= TBUF_HEAD_BYTES, "tbuf header page");
	mem = mmap(NULL, TBUF_HEAD_BYTES + cap, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mem == MAP_FAILED) {
		static _Atomic int warned;

		if (!atomic_exchange(&warned, 1))
			shim_log(LOG_WARN, "cannot map a %zu KiB ring for thread %ld (%s): its calls "
				 "are not recorded, counted as lost (GPUSHIM_BUFFER_KB sets the size)",
				 cap / 1024, (long)syscall(SYS_gettid), strerror(errno));
		t->no_ring = 1;
		t->buf = NULL;
		t->epoch = epoch;
		return NULL;
	}
	t->no_ring = 0;
	b = mem;
	b->data = (uint8_t *)mem + TBUF_HEAD_BYTES;
	b->mask = (uint32_t)(cap - 1);
	b->tid = (uint32_t)syscall(SYS_gettid);
	b->index = atomic_fetch_add(&shim.nr_threads, 1);

	head = atomic_load_explicit(&tbuf_list, memory_order_relaxed);
	do {
		b->next = head;
	} while (!atomic_compare_exchange_weak_explicit(&tbuf_list, &head, b, memory_order_release,
							 memory_order_relaxed));
	if (has_key)
		pthread_setspecific(tbuf_key, b);
	t->buf = b;
	t->epoch = epoch;
	return b;
}

void *tbuf_reserve(struct tbuf *b, uint32_t size)
{
	uint64_t head = atomic_load_explicit(&b->head, memory_order_relaxed);
	uint64_t cap = (uint64_t)b->mask + 1;
	uint32_t off = (uint32_t)(head & b->mask);
	uint64_t to_end = cap - off;
	uint64_t need = size <= to_end ? size : to_end + size;

	if (unlikely(head + need - b->cached_tail > cap)) {
		b->cached_tail = atomic_load_explicit(&b->tail, memory_order_acquire);
		if (head + need - b->cached_tail > cap)
			return NULL;
	}
	if (unlikely(need != size)) {
		struct trace_rec_hdr *pad = (struct trace_rec_hdr *)(b->data + off);

		pad->type = TRACE_REC_PAD;
		pad->size = 0;		/* "the rest of the ring" */
		pad->dt_ns = 0;
		head += to_end;
		off = 0;
	}
	b->rec_pos = head;
	return b->data + off;
}

/*
 * Past half full (tbuf_commit saw it against its cached tail): ask the writer not to wait for
 * its timer. The view of the tail is refreshed first: a stale one (the writer drained
 * meanwhile) would kick - a futex syscall and a wake-up - after every round of the writer.
 */
void tbuf_commit_full(struct tbuf *b, uint64_t head)
{
	b->cached_tail = atomic_load_explicit(&b->tail, memory_order_acquire);
	if (head - b->cached_tail > ((uint64_t)b->mask + 1) / 2)
		tbuf_kick_writer();
}

void tbuf_kick_writer(void)
{
	if (atomic_load_explicit(&shim.writer_kick, memory_order_relaxed))
		return;
	if (atomic_exchange(&shim.writer_kick, 1) == 0) {
		int saved = errno;

		syscall(SYS_futex, &shim.writer_kick, FUTEX_WAKE_PRIVATE, 1, NULL, NULL, 0);
		errno = saved;
	}
}

uint64_t tbuf_drain(struct tbuf *b, uint64_t head, tbuf_emit_fn emit, void *ctx)
{
	uint64_t cap = (uint64_t)b->mask + 1;
	uint64_t start = atomic_load_explicit(&b->tail, memory_order_relaxed);
	uint64_t pos = start;

	while (pos < head) {
		uint32_t off = (uint32_t)(pos & b->mask);
		const struct trace_rec_hdr *h = (const void *)(b->data + off);

		if (h->type == TRACE_REC_PAD) {
			pos += cap - off;
			continue;
		}
		if (h->size < sizeof(*h) || h->size > cap - off) {
			/* Cannot happen with records from rec_begin; do not loop on garbage. */
			pos = head;
			break;
		}
		emit(ctx, b, h, h->size);
		if (h->type == TRACE_REC_TIME)
			b->w_last_ns = ((const struct trace_rec_time *)h)->ts_ns;
		else
			b->w_last_ns += h->dt_ns;
		pos += h->size;
	}
	atomic_store_explicit(&b->tail, pos, memory_order_release);
	return pos - start;
}

void tbuf_free(struct tbuf *b)
{
	munmap(b, TBUF_HEAD_BYTES + (size_t)b->mask + 1);
}

void tbuf_reset_after_fork(void)
{
	struct tbuf *b = atomic_load(&tbuf_list);

	/* The parent owns and drains these; the child's copies are only memory. */
	while (b) {
		struct tbuf *next = b->next;

		tbuf_free(b);
		b = next;
	}
	atomic_store(&tbuf_list, NULL);
	if (has_key)
		pthread_setspecific(tbuf_key, NULL);
}
