// SPDX-License-Identifier: MIT
/*
 * unwind.c - see unwind.h. Owns the reading of .eh_frame CIEs and FDEs (the subset of DWARF
 * call frame instructions compilers emit for ordinary x86-64 code: a CFA from rsp or rbp plus
 * an offset, registers saved at offsets from it, remembered states) and the walk over a
 * thread's frames. Anything else it leaves to backtrace(); it never guesses a frame. No
 * allocation, no I/O. Runs on: any app thread (inside a hook), the tests.
 */
#include "unwind.h"

#include <stddef.h>
#include <string.h>

static unwind_find_fde_fn find_fde;

void unwind_init(unwind_find_fde_fn find)
{
	find_fde = find;
}

#if defined(__x86_64__)

/* DWARF register numbers on x86-64 (the psABI): the ones a rule follows. */
#define DW_RBP 6
#define DW_RSP 7
#define DW_RA 16

#define MAX_STACK_BYTES (1ull << 30)	/* a walk reads no further above where it began */
#define MAX_STATES 8			/* DW_CFA_remember_state nesting */

/* ---- Reading .eh_frame ---- */

struct cursor {
	const uint8_t *p, *end;
	int is_bad;
};

static uint64_t get_u(struct cursor *c, size_t n)
{
	uint64_t v = 0;

	if ((size_t)(c->end - c->p) < n) {
		c->is_bad = 1;
		return 0;
	}
	memcpy(&v, c->p, n);		/* little-endian */
	c->p += n;
	return v;
}

static uint64_t get_uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;

	for (;;) {
		uint8_t b;

		if (c->p >= c->end || shift > 63) {
			c->is_bad = 1;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return v;
	}
}

static int64_t get_sleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned int shift = 0;
	uint8_t b;

	do {
		if (c->p >= c->end || shift > 63) {
			c->is_bad = 1;
			return 0;
		}
		b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	if (shift < 64 && (b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* Step over a pointer in DW_EH_PE encoding @enc. */
static void skip_encoded(struct cursor *c, uint8_t enc)
{
	if (enc == 0xff)		/* DW_EH_PE_omit */
		return;
	if ((enc & 0x70) == 0x50) {	/* DW_EH_PE_aligned: a native pointer, aligned */
		uintptr_t a = ((uintptr_t)c->p + 7) & ~(uintptr_t)7;

		if (a > (uintptr_t)c->end) {
			c->is_bad = 1;
			return;
		}
		c->p = (const uint8_t *)a;
		get_u(c, 8);
		return;
	}
	switch (enc & 0x0f) {
	case 0x00:			/* absptr */
	case 0x04:			/* udata8 */
	case 0x0c:			/* sdata8 */
		get_u(c, 8);
		break;
	case 0x02:
	case 0x0a:
		get_u(c, 2);
		break;
	case 0x03:
	case 0x0b:
		get_u(c, 4);
		break;
	case 0x01:
		get_uleb(c);
		break;
	case 0x09:
		get_sleb(c);
		break;
	default:
		c->is_bad = 1;
	}
}

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint8_t fde_enc;
	int has_z;
	const uint8_t *insns, *insns_end;
};

/* The CIE at @p: 0, or -1 when it is not one this reader follows. */
static int parse_cie(const uint8_t *p, struct cie *cie)
{
	struct cursor c = { p, p + 4, 0 };
	uint64_t len = get_u(&c, 4), ra;
	const char *aug;
	size_t n, i;
	uint8_t version;

	if (len == 0 || len >= 0xfffffff0u)	/* a terminator, or the 64-bit form */
		return -1;
	c.end = p + 4 + len;
	if (get_u(&c, 4) != 0)		/* a CIE's id in .eh_frame */
		return -1;
	version = (uint8_t)get_u(&c, 1);
	if (c.is_bad || (version != 1 && version != 3))
		return -1;
	aug = (const char *)c.p;
	n = strnlen(aug, (size_t)(c.end - c.p));
	if (n == (size_t)(c.end - c.p))
		return -1;
	c.p += n + 1;
	cie->code_align = get_uleb(&c);
	cie->data_align = get_sleb(&c);
	ra = version == 1 ? get_u(&c, 1) : get_uleb(&c);
	if (c.is_bad || ra != DW_RA)
		return -1;
	cie->fde_enc = 0;
	cie->has_z = aug[0] == 'z';
	if (cie->has_z) {
		uint64_t aug_len = get_uleb(&c);
		const uint8_t *aug_end = c.p + aug_len;

		if (c.is_bad || aug_len > (uint64_t)(c.end - c.p))
			return -1;
		for (i = 1; i < n; i++) {
			switch (aug[i]) {
			case 'R':
				cie->fde_enc = (uint8_t)get_u(&c, 1);
				break;
			case 'P':
				skip_encoded(&c, (uint8_t)get_u(&c, 1));
				break;
			case 'L':
				get_u(&c, 1);
				break;
			default:	/* 'S' (a signal frame) and anything newer: not ours */
				return -1;
			}
		}
		if (c.is_bad || c.p > aug_end)
			return -1;
		c.p = aug_end;
	} else if (n) {
		return -1;
	}
	cie->insns = c.p;
	cie->insns_end = c.end;
	return 0;
}

/* ---- Call frame instructions ---- */

enum { REG_SAME = 0, REG_AT = 1, REG_UNDEF = 2 };

struct row {
	uint8_t cfa_reg;		/* DW_RSP or DW_RBP; 0 not defined yet */
	int64_t cfa_off;
	uint8_t rbp_how, ra_how;	/* REG_* */
	int64_t rbp_off, ra_off;	/* REG_AT: from the CFA */
};

struct cfi_run {
	const struct cie *cie;
	uint64_t loc, target;
	struct row row;
	const struct row *init;		/* the CIE's row (DW_CFA_restore); NULL in the CIE */
	struct row stack[MAX_STATES];
	int depth;
};

static int set_at(struct cfi_run *r, uint64_t reg, int64_t off)
{
	if (reg == DW_RBP) {
		r->row.rbp_how = REG_AT;
		r->row.rbp_off = off;
	} else if (reg == DW_RA) {
		r->row.ra_how = REG_AT;
		r->row.ra_off = off;
	} else if (reg == DW_RSP) {
		return -1;		/* the CFA is the caller's rsp on x86-64 */
	}
	return 0;
}

static int set_how(struct cfi_run *r, uint64_t reg, uint8_t how)
{
	if (reg == DW_RBP)
		r->row.rbp_how = how;
	else if (reg == DW_RA && how == REG_UNDEF)
		r->row.ra_how = how;	/* the outermost frame: _start, clone's child */
	else if (reg == DW_RA || reg == DW_RSP)
		return -1;
	return 0;
}

static int restore(struct cfi_run *r, uint64_t reg)
{
	if (!r->init)
		return -1;
	if (reg == DW_RBP) {
		r->row.rbp_how = r->init->rbp_how;
		r->row.rbp_off = r->init->rbp_off;
	} else if (reg == DW_RA) {
		r->row.ra_how = r->init->ra_how;
		r->row.ra_off = r->init->ra_off;
	} else if (reg == DW_RSP) {
		return -1;
	}
	return 0;
}

static int is_followed(uint64_t reg)
{
	return reg == DW_RBP || reg == DW_RSP || reg == DW_RA;
}

/* Advance the location by @delta units: 1 when that passes the target (the row is found). */
static int advance(struct cfi_run *r, uint64_t delta)
{
	uint64_t d = delta * r->cie->code_align;

	if (d > r->target - r->loc)
		return 1;
	r->loc += d;
	return 0;
}

/*
 * Run the instructions of @c up to the row of r->target. Returns 0 (r->row holds it), or -1
 * for an instruction this walk does not follow.
 */
static int run(struct cfi_run *r, struct cursor *c)
{
	const int64_t da = r->cie->data_align;

	while (c->p < c->end) {
		uint8_t op = (uint8_t)get_u(c, 1), low = op & 0x3f;
		uint64_t reg, u;

		switch (op & 0xc0) {
		case 0x40:		/* DW_CFA_advance_loc */
			if (advance(r, low))
				return 0;
			continue;
		case 0x80:		/* DW_CFA_offset */
			if (set_at(r, low, (int64_t)get_uleb(c) * da) < 0)
				return -1;
			continue;
		case 0xc0:		/* DW_CFA_restore */
			if (restore(r, low) < 0)
				return -1;
			continue;
		default:
			break;
		}
		switch (op) {
		case 0x00:		/* nop */
			break;
		case 0x02:		/* advance_loc1, 2, 4 */
		case 0x03:
		case 0x04:
			u = get_u(c, op == 0x02 ? 1 : op == 0x03 ? 2 : 4);
			if (!c->is_bad && advance(r, u))
				return 0;
			break;
		case 0x05:		/* offset_extended */
			reg = get_uleb(c);
			if (set_at(r, reg, (int64_t)get_uleb(c) * da) < 0)
				return -1;
			break;
		case 0x06:		/* restore_extended */
			if (restore(r, get_uleb(c)) < 0)
				return -1;
			break;
		case 0x07:		/* undefined */
			if (set_how(r, get_uleb(c), REG_UNDEF) < 0)
				return -1;
			break;
		case 0x08:		/* same_value */
			if (set_how(r, get_uleb(c), REG_SAME) < 0)
				return -1;
			break;
		case 0x09:		/* register */
			reg = get_uleb(c);
			get_uleb(c);
			if (is_followed(reg))
				return -1;
			break;
		case 0x0a:		/* remember_state (the CFA's rule too, as libgcc keeps it) */
			if (r->depth == MAX_STATES)
				return -1;
			r->stack[r->depth++] = r->row;
			break;
		case 0x0b:		/* restore_state */
			if (!r->depth)
				return -1;
			r->row = r->stack[--r->depth];
			break;
		case 0x0c:		/* def_cfa */
			reg = get_uleb(c);
			r->row.cfa_off = (int64_t)get_uleb(c);
			if (reg != DW_RSP && reg != DW_RBP)
				return -1;
			r->row.cfa_reg = (uint8_t)reg;
			break;
		case 0x0d:		/* def_cfa_register */
			reg = get_uleb(c);
			if (reg != DW_RSP && reg != DW_RBP)
				return -1;
			r->row.cfa_reg = (uint8_t)reg;
			break;
		case 0x0e:		/* def_cfa_offset */
			r->row.cfa_off = (int64_t)get_uleb(c);
			break;
		case 0x10:		/* expression */
		case 0x16:		/* val_expression */
			reg = get_uleb(c);
			u = get_uleb(c);
			if (is_followed(reg) || u > (uint64_t)(c->end - c->p))
				return -1;
			c->p += u;
			break;
		case 0x11:		/* offset_extended_sf */
			reg = get_uleb(c);
			if (set_at(r, reg, get_sleb(c) * da) < 0)
				return -1;
			break;
		case 0x12:		/* def_cfa_sf */
			reg = get_uleb(c);
			r->row.cfa_off = get_sleb(c) * da;
			if (reg != DW_RSP && reg != DW_RBP)
				return -1;
			r->row.cfa_reg = (uint8_t)reg;
			break;
		case 0x13:		/* def_cfa_offset_sf */
			r->row.cfa_off = get_sleb(c) * da;
			break;
		case 0x14:		/* val_offset */
			reg = get_uleb(c);
			get_uleb(c);
			if (is_followed(reg))
				return -1;
			break;
		case 0x15:		/* val_offset_sf */
			reg = get_uleb(c);
			get_sleb(c);
			if (is_followed(reg))
				return -1;
			break;
		case 0x2e:		/* GNU_args_size */
			get_uleb(c);
			break;
		case 0x2f:		/* GNU_negative_offset_extended */
			reg = get_uleb(c);
			if (set_at(r, reg, -(int64_t)get_uleb(c) * da) < 0)
				return -1;
			break;
		default:		/* set_loc, def_cfa_expression, vendor ones */
			return -1;
		}
		if (c->is_bad)
			return -1;
	}
	return c->is_bad ? -1 : 0;
}

/*
 * The rule at @addr into @e (UNWIND_CANNOT when the walk cannot follow it). No FDE covers the
 * address: UNWIND_END, where libgcc's walk ends too (code without CFI, JIT code).
 */
static void rule_for(uint64_t addr, struct unwind_cache_entry *e)
{
	void *bases[3] = { NULL, NULL, NULL };
	const uint8_t *fde = find_fde((void *)(uintptr_t)addr, bases), *cie_p;
	struct cursor c;
	struct cie cie;
	struct cfi_run r;
	struct row init;
	uint64_t len;

	e->addr = addr;
	e->flags = UNWIND_CANNOT;
	if (!fde) {
		e->flags = UNWIND_VALID | UNWIND_END;
		return;
	}
	c = (struct cursor){ fde, fde + 8, 0 };
	len = get_u(&c, 4);
	if (len == 0 || len >= 0xfffffff0u)
		return;
	c.end = fde + 4 + len;
	cie_p = c.p - get_u(&c, 4);	/* from this field back to its CIE */
	if (c.is_bad || parse_cie(cie_p, &cie) < 0 || !bases[2])
		return;
	skip_encoded(&c, cie.fde_enc);		/* pc_begin: bases[2] has it */
	skip_encoded(&c, cie.fde_enc & 0x0f);	/* pc_range */
	if (cie.has_z) {
		uint64_t aug_len = get_uleb(&c);

		if (c.is_bad || aug_len > (uint64_t)(c.end - c.p))
			return;
		c.p += aug_len;
	}
	if (c.is_bad)
		return;

	memset(&r, 0, sizeof(r));
	r.cie = &cie;
	r.loc = (uint64_t)(uintptr_t)bases[2];
	r.target = addr;
	if (addr < r.loc)
		return;
	{
		struct cursor ci = { cie.insns, cie.insns_end, 0 };

		if (run(&r, &ci) < 0)
			return;
	}
	init = r.row;
	r.init = &init;
	r.depth = 0;
	if (run(&r, &c) < 0)
		return;

	if (r.row.ra_how == REG_UNDEF) {
		e->flags = UNWIND_VALID | UNWIND_END;
		return;
	}
	if (!r.row.cfa_reg || r.row.ra_how != REG_AT || r.row.rbp_how == REG_UNDEF ||
	    r.row.cfa_off != (int32_t)r.row.cfa_off || r.row.ra_off != (int8_t)r.row.ra_off ||
	    r.row.rbp_off != (int16_t)r.row.rbp_off)
		return;
	e->cfa_off = (int32_t)r.row.cfa_off;
	e->ra_off = (int8_t)r.row.ra_off;
	e->rbp_off = (int16_t)r.row.rbp_off;
	e->flags = UNWIND_VALID | (r.row.cfa_reg == DW_RBP ? UNWIND_CFA_RBP : 0) |
		   (r.row.rbp_how == REG_AT ? UNWIND_RBP_SAVED : 0);
}

/* ---- The walk ---- */

/*
 * The cache is two-way: the set of an address is two entries, the newest first. An
 * interpreter's stack returns to many call sites of one big function, and one direct-mapped
 * slot taken by two of them cost a CFI reading each walk.
 */
static inline struct unwind_cache_entry *rule_of(struct unwind_cache_entry *cache, uint64_t a)
{
	struct unwind_cache_entry *set = &cache[((a * 0x9e3779b97f4a7c15ull) >> 57) * 2];

	_Static_assert(UNWIND_CACHE_SIZE == 256, "128 sets: the hash's top 7 bits");
	if (set[0].addr == a && set[0].flags)
		return &set[0];
	if (set[1].addr == a && set[1].flags)
		return &set[1];
	set[1] = set[0];
	rule_for(a, &set[0]);
	return &set[0];
}

int unwind_stack(struct unwind_cache_entry *cache, void **pcs, int max)
{
	uint64_t ip, sp, bp, sp0;
	int n = 0, is_first = 1;

	if (!find_fde)
		return -1;
	/* Where this function is now: the rule of the address after the lea covers it. */
	__asm__ volatile("lea 0(%%rip), %0\n\tmov %%rsp, %1\n\tmov %%rbp, %2"
			 : "=r"(ip), "=r"(sp), "=r"(bp));
	sp0 = sp;
	while (n < max) {
		/* A return address follows its call: look up the call instruction. */
		uint64_t key = is_first ? ip : ip - 1, cfa, ra_at, new_bp = bp;
		const struct unwind_cache_entry *e = rule_of(cache, key);

		if (e->flags & UNWIND_CANNOT)
			return -1;
		if (e->flags & UNWIND_END)
			break;
		cfa = ((e->flags & UNWIND_CFA_RBP) ? bp : sp) + (uint64_t)(int64_t)e->cfa_off;
		ra_at = cfa + (uint64_t)(int64_t)e->ra_off;
		/* Frames only ever lie above one another, inside the reach of a stack. */
		if (cfa <= sp || (cfa & 7) || cfa - sp0 > MAX_STACK_BYTES || ra_at < sp ||
		    ra_at + 8 > cfa)
			return -1;
		if (e->flags & UNWIND_RBP_SAVED) {
			uint64_t bp_at = cfa + (uint64_t)(int64_t)e->rbp_off;

			if (bp_at < sp || bp_at + 8 > cfa)
				return -1;
			memcpy(&new_bp, (const void *)(uintptr_t)bp_at, 8);
		}
		memcpy(&ip, (const void *)(uintptr_t)ra_at, 8);
		sp = cfa;
		bp = new_bp;
		is_first = 0;
		if (!ip)
			break;
		pcs[n++] = (void *)(uintptr_t)ip;
	}
	return n;
}

#else /* !__x86_64__ */

int unwind_stack(struct unwind_cache_entry *cache, void **pcs, int max)
{
	(void)cache, (void)pcs, (void)max;
	return -1;
}

#endif
