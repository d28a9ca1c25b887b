// SPDX-License-Identifier: MIT
/*
 * test_stacks.c - the shim's stack interning (shim/stack_table.c) alone: one id per distinct
 * key, equal keys found whatever their hashes share, keys told apart by content when their
 * hashes are equal, the bounds (slots half used, arena full) refused and nothing lost, the hash
 * over every byte, and lock-free readers racing an inserter never seeing a wrong id.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "check.h"
#include "stack_table.h"

/* A table with @nr_slots slots and @arena bytes of keys, in a fresh mapping. */
static void *table_new(struct stack_table *t, uint32_t nr_slots, size_t arena)
{
	size_t bytes = stack_table_bytes(nr_slots, arena);
	void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	CHECK(mem != MAP_FAILED);
	stack_table_init(t, mem, nr_slots, arena);
	return mem;
}

/* A stack-like key: @n addresses from @base. */
static uint32_t key_of(uint64_t *key, uint64_t base, int n)
{
	int i;

	for (i = 0; i < n; i++)
		key[i] = base + (uint64_t)i * 0x40;
	return (uint32_t)(n * sizeof(uint64_t));
}

static uint32_t find(const struct stack_table *t, const void *k, uint32_t len)
{
	return stack_table_find(t, stack_table_hash(k, len), k, len);
}

static int insert(struct stack_table *t, const void *k, uint32_t len, uint32_t id)
{
	return stack_table_insert(t, stack_table_hash(k, len), k, len, id);
}

static void test_dedup(void)
{
	struct stack_table t;
	uint64_t a[8], b[8], c[8];
	uint32_t la = key_of(a, 0x401000, 8), lb = key_of(b, 0x401000, 7), lc;
	void *mem = table_new(&t, 64, 4096);

	c[0] = 0x401000;
	lc = key_of(c, 0x401000, 8);
	c[7] ^= 1;			/* differs from a in its last byte only */
	CHECK_EQ(find(&t, a, la), 0);
	CHECK_EQ(insert(&t, a, la, 1), 0);
	CHECK_EQ(find(&t, a, la), 1);
	CHECK_EQ(find(&t, b, lb), 0);	/* a prefix of a is another stack */
	CHECK_EQ(find(&t, c, lc), 0);
	CHECK_EQ(insert(&t, b, lb, 2), 0);
	CHECK_EQ(insert(&t, c, lc, 3), 0);
	CHECK_EQ(find(&t, a, la), 1);
	CHECK_EQ(find(&t, b, lb), 2);
	CHECK_EQ(find(&t, c, lc), 3);
	CHECK_EQ(t.nr_entries, 3);
	stack_table_clear(&t);
	CHECK_EQ(find(&t, a, la), 0);
	CHECK_EQ(insert(&t, c, lc, 9), 0);
	CHECK_EQ(find(&t, c, lc), 9);
	munmap(mem, stack_table_bytes(64, 4096));
}

/* Keys whose hashes are equal (all 64 bits) are told apart by their bytes. */
static void test_same_hash(void)
{
	struct stack_table t;
	uint64_t a[3] = { 1, 2, 3 }, b[3] = { 1, 2, 4 }, c[2] = { 1, 2 };
	void *mem = table_new(&t, 16, 1024);
	uint64_t h = 0x1234567812345678ull;

	CHECK_EQ(stack_table_insert(&t, h, a, sizeof(a), 1), 0);
	CHECK_EQ(stack_table_find(&t, h, b, sizeof(b)), 0);
	CHECK_EQ(stack_table_find(&t, h, c, sizeof(c)), 0);
	CHECK_EQ(stack_table_insert(&t, h, b, sizeof(b), 2), 0);
	CHECK_EQ(stack_table_insert(&t, h, c, sizeof(c), 3), 0);
	CHECK_EQ(stack_table_find(&t, h, a, sizeof(a)), 1);
	CHECK_EQ(stack_table_find(&t, h, b, sizeof(b)), 2);
	CHECK_EQ(stack_table_find(&t, h, c, sizeof(c)), 3);
	/* the same bytes under another hash are not found: the hash is part of the key */
	CHECK_EQ(stack_table_find(&t, h + 1, a, sizeof(a)), 0);
	munmap(mem, stack_table_bytes(16, 1024));
}

static void test_bounds(void)
{
	struct stack_table t;
	uint64_t k[4];
	uint32_t len, i;
	void *mem = table_new(&t, 8, 4096);

	/* half the slots: 4 stacks */
	for (i = 0; i < 4; i++) {
		len = key_of(k, 0x1000 * (i + 1), 4);
		CHECK(stack_table_has_room(&t, len));
		CHECK_EQ(insert(&t, k, len, i + 1), 0);
	}
	len = key_of(k, 0x9000, 4);
	CHECK(!stack_table_has_room(&t, len));
	CHECK_EQ(insert(&t, k, len, 5), -ENOSPC);
	CHECK_EQ(find(&t, k, len), 0);
	for (i = 0; i < 4; i++) {
		len = key_of(k, 0x1000 * (i + 1), 4);
		CHECK_EQ(find(&t, k, len), i + 1);
	}
	munmap(mem, stack_table_bytes(8, 4096));

	/* the arena: 16 bytes an entry and its key; 100 bytes hold two 32-byte keys */
	mem = table_new(&t, 64, 100);
	CHECK_EQ(insert(&t, k, key_of(k, 0x1000, 4), 1), 0);
	CHECK_EQ(insert(&t, k, key_of(k, 0x2000, 4), 2), 0);
	CHECK(!stack_table_has_room(&t, 32));
	CHECK_EQ(insert(&t, k, key_of(k, 0x3000, 4), 3), -ENOSPC);
	CHECK_EQ(find(&t, k, key_of(k, 0x2000, 4)), 2);
	munmap(mem, stack_table_bytes(64, 100));
}

static void test_hash(void)
{
	uint8_t a[100], b[100];
	size_t len, i;

	/* every byte of every length up to 100 (the four lanes and the rest) changes the hash */
	for (len = 1; len <= sizeof(a); len++) {
		for (i = 0; i < len; i++) {
			memset(a, 0x5a, sizeof(a));
			memcpy(b, a, sizeof(b));
			b[i] ^= 0x01;
			CHECK(stack_table_hash(a, len) != stack_table_hash(b, len));
		}
		CHECK(stack_table_hash(a, len) != stack_table_hash(a, len - 1));
	}
	/* unaligned input hashes as aligned */
	memset(a, 7, sizeof(a));
	memcpy(b + 1, a, 16);
	CHECK_EQ(stack_table_hash(a, 16), stack_table_hash(b + 1, 16));
}

/* ---- Readers racing an inserter ---- */

#define RACE_KEYS 2000
#define RACE_READERS 4

static struct stack_table race;
static pthread_mutex_t race_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int race_done, race_started;
static _Atomic long race_wrong, race_seen;

/* Each reader reads all keys over and over while the inserter runs, and once more after it
 * ended (a reader scheduled late still reads: race_seen cannot stay 0 on a loaded machine). */
static void *race_reader(void *arg)
{
	uint64_t k[6];
	uint32_t i, id, len;
	int done;

	(void)arg;
	atomic_fetch_add(&race_started, 1);
	do {
		done = atomic_load(&race_done);
		for (i = 0; i < RACE_KEYS; i++) {
			len = key_of(k, 0x10000 + (uint64_t)i * 0x1000, 6);
			id = find(&race, k, len);
			if (id && id != i + 1)
				atomic_fetch_add(&race_wrong, 1);
			if (id)
				atomic_fetch_add(&race_seen, 1);
		}
	} while (!done);
	return NULL;
}

static void test_race(void)
{
	pthread_t r[RACE_READERS];
	void *mem = table_new(&race, 8192, 1u << 20);
	uint64_t k[6];
	uint32_t i, len;

	for (i = 0; i < RACE_READERS; i++)
		pthread_create(&r[i], NULL, race_reader, NULL);
	while (atomic_load(&race_started) < RACE_READERS)	/* inserts meet running readers */
		sched_yield();
	for (i = 0; i < RACE_KEYS; i++) {
		len = key_of(k, 0x10000 + (uint64_t)i * 0x1000, 6);
		pthread_mutex_lock(&race_lock);
		if (!find(&race, k, len))
			CHECK_EQ(insert(&race, k, len, i + 1), 0);
		pthread_mutex_unlock(&race_lock);
	}
	atomic_store(&race_done, 1);
	for (i = 0; i < RACE_READERS; i++)
		pthread_join(r[i], NULL);
	CHECK_EQ(atomic_load(&race_wrong), 0);
	CHECK(atomic_load(&race_seen) > 0);
	for (i = 0; i < RACE_KEYS; i++) {
		len = key_of(k, 0x10000 + (uint64_t)i * 0x1000, 6);
		CHECK_EQ(find(&race, k, len), i + 1);
	}
	CHECK_EQ(race.nr_entries, RACE_KEYS);
	munmap(mem, stack_table_bytes(8192, 1u << 20));
}

int main(void)
{
	RUN(test_dedup);
	RUN(test_same_hash);
	RUN(test_bounds);
	RUN(test_hash);
	RUN(test_race);
	return TEST_RESULT();
}
