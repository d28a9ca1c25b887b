// SPDX-License-Identifier: MIT
/*
 * stack_table.c - see stack_table.h. Owns the slot layout and the hash. No allocation, no
 * locks (the inserter's caller holds one), no I/O. Runs on: any app thread (find), the thread
 * holding the caller's lock (insert), the writer (clear, in a fork child's new trace).
 */
#include "stack_table.h"

#include <errno.h>
#include <string.h>

/* An entry in the arena; the key follows, padded to 8 bytes. */
struct stack_entry {
	uint64_t hash;
	uint32_t id;
	uint32_t len;
};

#define SLOT_PLACE(v) ((uint32_t)(v))	/* the entry's arena offset / 8 + 1; 0: empty */
#define SLOT_HASH(v) ((uint32_t)((v) >> 32))

size_t stack_table_bytes(uint32_t nr_slots, size_t arena_bytes)
{
	return (size_t)nr_slots * sizeof(uint64_t) + ((arena_bytes + 7) & ~(size_t)7);
}

void stack_table_init(struct stack_table *t, void *mem, uint32_t nr_slots, size_t arena_bytes)
{
	t->slot = mem;
	t->slot_mask = nr_slots - 1;
	t->arena = (uint8_t *)mem + (size_t)nr_slots * sizeof(uint64_t);
	t->arena_bytes = arena_bytes & ~(size_t)7;
	t->nr_entries = 0;
	t->used = 0;
}

void stack_table_clear(struct stack_table *t)
{
	uint32_t i;

	for (i = 0; i <= t->slot_mask; i++)
		atomic_store_explicit(&t->slot[i], 0, memory_order_relaxed);
	t->nr_entries = 0;
	t->used = 0;
}

uint32_t stack_table_find(const struct stack_table *t, uint64_t hash, const void *key,
			  uint32_t len)
{
	uint32_t i = (uint32_t)hash & t->slot_mask, n;

	for (n = 0; n <= t->slot_mask; n++, i = (i + 1) & t->slot_mask) {
		uint64_t v = atomic_load_explicit(&t->slot[i], memory_order_acquire);
		const struct stack_entry *e;

		if (!v)
			return 0;
		if (SLOT_HASH(v) != (uint32_t)(hash >> 32))
			continue;
		e = (const void *)(t->arena + (size_t)(SLOT_PLACE(v) - 1) * 8);
		if (e->hash == hash && e->len == len && !memcmp(e + 1, key, len))
			return e->id;
	}
	return 0;
}

static size_t entry_bytes(uint32_t len)
{
	return sizeof(struct stack_entry) + (((size_t)len + 7) & ~(size_t)7);
}

int stack_table_has_room(const struct stack_table *t, uint32_t len)
{
	return t->nr_entries < (t->slot_mask + 1) / 2 && entry_bytes(len) <= t->arena_bytes - t->used &&
	       t->used / 8 + 1 <= UINT32_MAX;
}

int stack_table_insert(struct stack_table *t, uint64_t hash, const void *key, uint32_t len,
		       uint32_t id)
{
	size_t need = entry_bytes(len);
	uint32_t i = (uint32_t)hash & t->slot_mask;
	struct stack_entry *e;

	if (!stack_table_has_room(t, len))
		return -ENOSPC;
	e = (void *)(t->arena + t->used);
	e->hash = hash;
	e->id = id;
	e->len = len;
	memcpy(e + 1, key, len);
	while (atomic_load_explicit(&t->slot[i], memory_order_relaxed))
		i = (i + 1) & t->slot_mask;
	atomic_store_explicit(&t->slot[i], (hash >> 32) << 32 | (uint64_t)(t->used / 8 + 1),
			      memory_order_release);
	t->used += need;
	t->nr_entries++;
	return 0;
}

#define MIX_MUL 0xbf58476d1ce4e5b9ull

/* One round: a bijection of the state @h for a given word @w. */
static inline uint64_t mix(uint64_t h, uint64_t w)
{
	h = (h ^ w) * MIX_MUL;
	return h ^ (h >> 31);
}

/*
 * Word by word, each round a bijection of its lane's state for a given word (multiply by an
 * odd constant, xor-shift); 32-byte blocks go to four lanes, so the rounds do not wait on one
 * another (a stack of 24 addresses and Python frames is 600 bytes); the rest of the words and
 * the last 1-7 bytes (as one word) to the first; the length in the first lane's seed. The lanes
 * are folded by more rounds and the result avalanched: a key that differs in one word or in
 * its length hashes differently for certain, others about never alike (2^-64 a pair).
 */
uint64_t stack_table_hash(const void *p, size_t len)
{
	const uint8_t *s = p;
	uint64_t h0 = 0x9e3779b97f4a7c15ull ^ len, h1 = 0xc2b2ae3d27d4eb4full,
		 h2 = 0x165667b19e3779f9ull, h3 = 0x27d4eb2f165667c5ull, w[4];
	size_t i = 0;

	for (; i + 32 <= len; i += 32) {
		memcpy(w, s + i, 32);
		h0 = mix(h0, w[0]);
		h1 = mix(h1, w[1]);
		h2 = mix(h2, w[2]);
		h3 = mix(h3, w[3]);
	}
	for (; i + 8 <= len; i += 8) {
		memcpy(w, s + i, 8);
		h0 = mix(h0, w[0]);
	}
	if (i < len) {
		w[0] = 0;
		memcpy(w, s + i, len - i);
		h0 = mix(h0, w[0]);
	}
	h0 = mix(mix(mix(h0, h1), h2), h3);
	h0 *= 0x94d049bb133111ebull;
	return h0 ^ (h0 >> 32);
}
