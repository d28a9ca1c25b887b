// SPDX-License-Identifier: MIT
/*
 * test_tbuf.c - the shim's per-thread ring, compiled here with a stand-in for the global state:
 * records come out in order and whole across the wrap (PAD skipped), a full ring refuses
 * instead of overwriting, space comes back after a drain, and a producer and a consumer
 * running at once lose nothing and reorder nothing (run under ThreadSanitizer in CI); a ring the
 * address space cannot hold warns once and is not tried again in the epoch.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "check.h"
#include "shim.h"

struct shim_state shim;
__thread struct shim_tls shim_tls __attribute__((tls_model("initial-exec")));

static int nr_warnings;

void shim_log(int level, const char *fmt, ...)
{
	(void)fmt;
	nr_warnings += level == LOG_WARN;
}

struct seen {
	uint64_t next;			/* sequence number expected next */
	uint64_t count;
	int errors;
};

struct test_rec {
	struct trace_rec_hdr hdr;
	uint64_t seq;
	uint8_t pad[40];
};

static void emit_check(void *ctx, const struct tbuf *b, const void *rec, uint32_t size)
{
	struct seen *s = ctx;
	const struct test_rec *r = rec;

	(void)b;
	if (r->hdr.type == TRACE_REC_PAD || size != r->hdr.size || r->seq != s->next)
		s->errors++;
	s->next = r->seq + 1;
	s->count++;
}

static int put(struct tbuf *b, uint64_t seq, uint16_t size)
{
	struct test_rec *r = tbuf_reserve(b, size);

	if (!r)
		return 0;
	memset(r, 0, size);
	r->hdr.type = 200;
	r->hdr.size = size;
	r->hdr.dt_ns = 1;
	r->seq = seq;
	tbuf_commit(b, size);
	return 1;
}

static void test_wrap_and_full(void)
{
	struct shim_tls t;
	struct seen s = { 0, 0, 0 };
	struct tbuf *b;
	uint64_t seq = 0, i;

	memset(&t, 0, sizeof(t));
	shim.cfg.buffer_kb = 64;	/* 65536-byte ring */
	b = tbuf_get(&t);
	CHECK(b != NULL);
	CHECK_EQ(b->mask + 1, 65536);
	/* Fill until refused: the ring never overwrites. 65536 / 56 = 1170 whole records. */
	while (put(b, seq, 56))
		seq++;
	CHECK_EQ(seq, 1170);
	tbuf_drain(b, atomic_load(&b->head), emit_check, &s);
	CHECK_EQ(s.count, 1170);
	CHECK_EQ(s.errors, 0);
	CHECK_EQ(b->w_last_ns, 1170);
	/* Many laps with odd sizes: every record whole and in order across the wrap. */
	for (i = 0; i < 20000; i++) {
		CHECK(put(b, seq, (uint16_t)(56 + 8 * (i % 5))));
		seq++;
		if (i % 97 == 0)
			tbuf_drain(b, atomic_load(&b->head), emit_check, &s);
	}
	tbuf_drain(b, atomic_load(&b->head), emit_check, &s);
	CHECK_EQ(s.count, seq);
	CHECK_EQ(s.errors, 0);
	CHECK_EQ(atomic_load(&b->head), atomic_load(&b->tail));
}

#define NR_CONCURRENT 2000000

static void *producer(void *arg)
{
	struct tbuf *b = arg;
	uint64_t seq = 0;

	while (seq < NR_CONCURRENT) {
		if (put(b, seq, 64))
			seq++;
	}
	return NULL;
}

static void test_concurrent(void)
{
	struct shim_tls t;
	struct seen s = { 0, 0, 0 };
	struct tbuf *b;
	pthread_t th;

	memset(&t, 0, sizeof(t));
	shim.cfg.buffer_kb = 64;
	atomic_store(&shim.epoch, 1);	/* a fresh ring */
	b = tbuf_get(&t);
	pthread_create(&th, NULL, producer, b);
	while (s.count < NR_CONCURRENT)
		tbuf_drain(b, atomic_load_explicit(&b->head, memory_order_acquire), emit_check, &s);
	pthread_join(th, NULL);
	CHECK_EQ(s.count, NR_CONCURRENT);
	CHECK_EQ(s.errors, 0);
}

/*
 * A 1 GiB ring under a 512 MiB address-space cap: NULL, one warning, and no second mmap in the
 * epoch (the cap lifted, the thread still has none); a new epoch tries again and gets one.
 * Not in sanitizer builds: their runtimes reserve more address space than the cap.
 */
static void test_unmappable(void)
{
#if !defined(__SANITIZE_ADDRESS__) && !defined(__SANITIZE_THREAD__)
	struct rlimit old, cap;
	struct shim_tls t;
	struct tbuf *b;

	memset(&t, 0, sizeof(t));
	CHECK_EQ(getrlimit(RLIMIT_AS, &old), 0);
	cap = old;
	cap.rlim_cur = 512ull << 20;
	CHECK_EQ(setrlimit(RLIMIT_AS, &cap), 0);
	shim.cfg.buffer_kb = 1u << 20;
	atomic_store(&shim.epoch, 7);
	nr_warnings = 0;
	CHECK(tbuf_get(&t) == NULL);
	CHECK(tbuf_get(&t) == NULL);
	CHECK_EQ(setrlimit(RLIMIT_AS, &old), 0);
	CHECK(tbuf_get(&t) == NULL);	/* not tried again in this epoch */
	CHECK_EQ(nr_warnings, 1);
	CHECK_EQ(t.no_ring, 1);
	shim.cfg.buffer_kb = 64;
	atomic_store(&shim.epoch, 8);
	b = tbuf_get(&t);
	CHECK(b != NULL);
	CHECK_EQ(t.no_ring, 0);
	CHECK_EQ(nr_warnings, 1);	/* once per process */
#endif
}

int main(void)
{
	shim.cfg.log_level = 0;
	tbuf_init();
	RUN(test_wrap_and_full);
	RUN(test_concurrent);
	RUN(test_unmappable);
	return TEST_RESULT();
}
