/* SPDX-License-Identifier: MIT */
/*
 * stack_table.h - call stacks interned by content in memory given once: lock-free lookups by
 * any thread, insertions by one thread at a time (the caller's lock), nothing ever removed but
 * all at once. No allocation, no I/O, no shim state: stacks.c uses it, tests/unit/test_stacks.c
 * tests it alone.
 */
#ifndef GPUSHIM_STACK_TABLE_H
#define GPUSHIM_STACK_TABLE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Open addressing over @nr_slots slots (a power of two), each 0 or an entry's place in the
 * arena with the high half of its hash; entries (hash, id, key) are bump-allocated in the
 * arena and never move. An entry is written whole before its slot is published (release), so
 * a reader that sees the slot sees the entry. At most half the slots are used, which keeps
 * probes short and a miss certain to end at an empty slot.
 */
struct stack_table {
	_Atomic uint64_t *slot;
	uint32_t slot_mask;
	uint32_t nr_entries;		/* inserter's */
	uint8_t *arena;
	size_t arena_bytes;
	size_t used;			/* inserter's */
};

/* The bytes a table of @nr_slots slots and @arena_bytes of keys needs (stack_table_init). */
size_t stack_table_bytes(uint32_t nr_slots, size_t arena_bytes);

/*
 * stack_table_init - a table in @mem (stack_table_bytes(@nr_slots, @arena_bytes), zeroed, 8-byte
 * aligned: an anonymous mapping). stack_table_clear - empty it again; no reader may be looking.
 */
void stack_table_init(struct stack_table *t, void *mem, uint32_t nr_slots, size_t arena_bytes);
void stack_table_clear(struct stack_table *t);

/*
 * stack_table_find - the id of the entry whose key is @len bytes equal to @key (with @hash, its
 * stack_table_hash), or 0. Context: any thread, no lock; wait-free but for the probe.
 */
uint32_t stack_table_find(const struct stack_table *t, uint64_t hash, const void *key,
			  uint32_t len);

/*
 * stack_table_insert - make @key (not in the table: the caller looked under its lock) findable
 * as @id (nonzero). Returns 0, or -ENOSPC when the slots are half used or the arena is full.
 * Context: one thread at a time (the caller's lock); readers may look meanwhile.
 */
int stack_table_insert(struct stack_table *t, uint64_t hash, const void *key, uint32_t len,
		       uint32_t id);

/* stack_table_has_room - would a key of @len bytes be inserted? Context: the inserter. */
int stack_table_has_room(const struct stack_table *t, uint32_t len);

/* stack_table_hash - 64 bits of hash over @len bytes of @p (any alignment). */
uint64_t stack_table_hash(const void *p, size_t len);

#endif /* GPUSHIM_STACK_TABLE_H */
