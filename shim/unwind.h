/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - a fast native stack walk for x86-64 with the answer glibc's backtrace() gives:
 * each code address's unwind rule is read once from its DWARF CFI and kept in a cache by
 * address (the caller's, one per thread), so a walk costs a few loads a frame instead of
 * libgcc's CFI interpretation of every frame every time. Where a rule is not of the simple
 * kinds it keeps, the walk says so and the caller uses backtrace(). No shim state: stacks.c
 * uses it, tests/unit/test_unwind.c holds it against backtrace().
 */
#ifndef GPUSHIM_UNWIND_H
#define GPUSHIM_UNWIND_H

#include <stdint.h>

/*
 * How to find the caller's frame from a frame stopped at an address: its CFA (canonical frame
 * address: the caller's rsp) is rsp or rbp plus cfa_off; the return address is at CFA + ra_off;
 * the caller's rbp at CFA + rbp_off where saved, else rbp itself.
 */
enum unwind_rule_flags {
	UNWIND_VALID = 1u << 0,		/* the entry holds a rule */
	UNWIND_CFA_RBP = 1u << 1,	/* CFA = rbp + cfa_off (else rsp + cfa_off) */
	UNWIND_RBP_SAVED = 1u << 2,	/* the caller's rbp is at CFA + rbp_off */
	UNWIND_END = 1u << 3,		/* the outermost frame (or code with no CFI): stop */
	UNWIND_CANNOT = 1u << 4,	/* a rule the walk does not follow: backtrace() */
};

struct unwind_cache_entry {
	uint64_t addr;			/* the address looked up (a return address less one) */
	int32_t cfa_off;
	int16_t rbp_off;
	int8_t ra_off;
	uint8_t flags;			/* enum unwind_rule_flags; 0: empty */
};

#define UNWIND_CACHE_SIZE 256		/* two-way; a program's costly calls come from a few
					 * hundred code addresses */

/* libgcc's _Unwind_Find_FDE: the FDE covering @pc, its function's start in bases[2]. */
typedef const void *(*unwind_find_fde_fn)(void *pc, void *bases[3]);

/*
 * unwind_init - the fast walk may be used from now on, with @find (NULL: never; every walk
 * answers -1). Context: once, before any walk (the writer's start); then read only.
 */
void unwind_init(unwind_find_fde_fn find);

/*
 * unwind_stack - the return addresses of the calling thread's stack, innermost first (the
 * first is the return address into unwind_stack's caller, as backtrace()'s first is into
 * its caller), at most @max into @pcs, through @cache (zeroed before its first use; one thread
 * at a time). Returns how many, or -1 when a frame's unwind rule is not one this walk follows
 * (expressions, a CFA in another register, a signal frame): use backtrace() then.
 * Context: any thread; no allocation, no lock of its own (libgcc's lookup takes the loader's
 * read side where glibc has no _dl_find_object, as backtrace() does).
 */
int unwind_stack(struct unwind_cache_entry *cache, void **pcs, int max)
	__attribute__((noinline));

#endif /* GPUSHIM_UNWIND_H */
