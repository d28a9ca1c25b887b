// SPDX-License-Identifier: MIT
/*
 * nvtx.c - the shim as NVTX's injection library: the program's ranges and marks (NVTX v3, the
 * header-only one, and libnvToolsExt's v2) become thread records in the calling thread's ring,
 * timed on the hooks' clock. Every copy of NVTX in the process loads the library
 * NVTX_INJECTION64_PATH names at its first call and calls InitializeInjectionNvtx2, which fills
 * that copy's function table with the callbacks below; nvtx_init points the variable here where
 * it is unset. Message strings are interned through a per-thread cache (in the ring) in front
 * of the shim's string table, bounded; domains and registered strings live in tables of their
 * own, bounded too, whose handles are their indexes. What NVTX returns is what a tool returns:
 * push the nesting level, pop the level popped, start a unique id.
 * No I/O but a log line for two rare events. Runs on: app threads (the callbacks: no lock, no
 * allocation, no syscall but for a name, domain or registered string seen for the first time,
 * or a thread's first record), the loading thread (nvtx_init), the writer (nvtx_trace_started).
 */
#define _GNU_SOURCE
#define NVTX_NO_IMPL		/* types and callback ids only: NVTX itself is the program's */
#include "shim.h"

#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#define NVTX_MAX TRACE_NVTX_MAX_NAME
#define NVTX_KEY_VALID (1u << 31)

/*
 * Bounds. Distinct message strings: 4 MiB of them in all (about 50,000 names of 16 bytes), so
 * a program naming each step differently ("step 1", "step 2", ...) costs at most that; later
 * new names are recorded without a name (TRACE_NVTX_NO_NAME). Domains and registered strings
 * are named once each by their nature: a few per library.
 */
#define NVTX_NAME_BUDGET (4u << 20)
#define NVTX_MAX_DOMAINS 1024
#define NVTX_MAX_REGISTERED 16384
#define NVTX_ARENA_BYTES (1u << 20)	/* the domains' and registered strings' text */
/*
 * NVTX before CUDA: a ring is made for the thread as for a hook, and the writer, started by
 * the first CUDA call, writes it. A process that never uses CUDA has no writer to free the
 * rings of exited threads, so until one starts only this many threads get rings; the rest of
 * their records are counted lost.
 */
#define NVTX_IDLE_RINGS 64
#define NVTX_ID_BATCH 256		/* start/end range ids a thread takes from the counter at once */

/* ---- Tables: domains and registered strings ---- */

struct nvtx_text {
	uint32_t off;			/* in the arena */
	uint16_t len;
	uint16_t flags;			/* TRACE_NVTX_NAME_CUT, TRACE_NVTX_UNICODE */
};

struct nvtx_domain {
	struct nvtx_text name;
	_Atomic uint32_t defined;	/* epoch tag of the trace that has its NVTX_DOMAIN record */
};

struct nvtx_registered {
	struct nvtx_text text;
	_Atomic uint64_t tag_id;	/* epoch tag << 32 | its STRING id in that trace */
};

struct nvtx_tables {
	struct nvtx_domain domain[NVTX_MAX_DOMAINS];	/* domain id - 1 */
	struct nvtx_registered reg[NVTX_MAX_REGISTERED];	/* string handle - 1 */
	uint32_t reg_slot[2 * NVTX_MAX_REGISTERED];	/* by hash, open addressing: index + 1 */
	char arena[NVTX_ARENA_BYTES];
};

/*
 * Mapped at the first domain or registered string (most processes have none), filled under
 * tab_lock; an entry is published by the release store of its count, after which it never
 * changes but for its tag. A fork child keeps them (the handles stay valid there); its new
 * epoch makes every tag stale, so each is written into its trace again at its first use.
 */
static struct nvtx_tables *tab;
static _Atomic uint32_t nr_domains, nr_registered;
static uint32_t arena_used;
static pthread_mutex_t tab_lock = PTHREAD_MUTEX_INITIALIZER;

/* A handle no table has: a domain past the table's end, whose records are counted lost. */
#define DOMAIN_FULL ((nvtxDomainHandle_t)(uintptr_t)(NVTX_MAX_DOMAINS + 1))

/* ---- Process state ---- */

static int is_ready;			/* nvtx_init: GPUSHIM_NVTX=1 and recording allowed */
static char other_tool[256];		/* NVTX_INJECTION64_PATH as set by another tool */
static _Atomic int is_other_said;
static size_t name_budget = NVTX_NAME_BUDGET;	/* under the meta lock (rec_intern_meta_max) */
static _Atomic int is_budget_said, is_domains_said;
static _Atomic uint64_t next_range_id = 1;	/* 0 is what NVTX returns without a tool */

/* The current trace's tag: 0 never is one. */
static inline uint32_t epoch_tag(void)
{
	return atomic_load_explicit(&shim.epoch, memory_order_relaxed) + 1;
}

/* ---- Names ---- */

struct nvtx_name {
	uint32_t id;			/* STRING id; 0: none */
	uint32_t flags;			/* enum trace_nvtx_flags */
};

/*
 * The key of the per-thread cache: 64 bits of hash over the bytes kept, with their length and
 * flags beside. Each round is a bijection of the state for a given word, and the last 1-7
 * bytes make a word that holds each of them (two overlapping loads, wyhash's way), so names of
 * up to 8 bytes never collide; longer ones do about never (2^-64 a pair).
 */
static inline uint64_t name_hash(const char *s, size_t len)
{
	uint64_t h = 0x9e3779b97f4a7c15ull ^ len, w;
	uint32_t a, b;
	size_t i = 0, n;

	for (; i + 8 <= len; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	n = len - i;
	if (n) {
		if (n >= 4) {
			memcpy(&a, s + i, 4);
			memcpy(&b, s + i + n - 4, 4);
			w = (uint64_t)b << 32 | a;
		} else {
			w = (uint64_t)(uint8_t)s[i] | (uint64_t)(uint8_t)s[i + n / 2] << 8 |
			    (uint64_t)(uint8_t)s[i + n - 1] << 16;
		}
		h = (h ^ w) * 0xbf58476d1ce4e5b9ull;
		h ^= h >> 31;
	}
	h *= 0x94d049bb133111ebull;
	return h ^ (h >> 32);
}

/* @max bytes of @s, less the start of a UTF-8 character they would cut in two. */
static size_t utf8_cut(const char *s, size_t max)
{
	size_t len = max;

	while (len > max - 3 && ((uint8_t)s[len] & 0xc0) == 0x80)
		len--;
	return len;
}

/*
 * @w as UTF-8 into @out: whole characters, at most NVTX_MAX bytes (TRACE_NVTX_NAME_CUT in
 * *@flags when more were given; no more than needed is read). Values that are no Unicode
 * character (surrogates, past U+10FFFF, negative) become U+FFFD.
 */
static size_t wide_to_utf8(const wchar_t *w, char *out, uint32_t *flags)
{
	size_t n = 0, k;

	for (; *w; w++) {
		uint32_t c = (uint32_t)*w;
		uint8_t u[4];

		if (c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
			c = 0xfffd;
		if (c < 0x80) {
			u[0] = (uint8_t)c;
			k = 1;
		} else if (c < 0x800) {
			u[0] = (uint8_t)(0xc0 | c >> 6);
			u[1] = (uint8_t)(0x80 | (c & 0x3f));
			k = 2;
		} else if (c < 0x10000) {
			u[0] = (uint8_t)(0xe0 | c >> 12);
			u[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
			u[2] = (uint8_t)(0x80 | (c & 0x3f));
			k = 3;
		} else {
			u[0] = (uint8_t)(0xf0 | c >> 18);
			u[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3f));
			u[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3f));
			u[3] = (uint8_t)(0x80 | (c & 0x3f));
			k = 4;
		}
		if (n + k > NVTX_MAX) {
			*flags |= TRACE_NVTX_NAME_CUT;
			break;
		}
		memcpy(out + n, u, k);
		n += k;
	}
	return n;
}

/* An ASCII (any bytes) message's length kept, TRACE_NVTX_NAME_CUT in *@flags if it was cut. */
static inline size_t ascii_len(const char *s, uint32_t *flags)
{
	size_t len = strnlen(s, NVTX_MAX + 1);

	if (unlikely(len > NVTX_MAX)) {
		*flags |= TRACE_NVTX_NAME_CUT;
		len = utf8_cut(s, NVTX_MAX);
	}
	return len;
}

static void say_budget(void)
{
	static const char text[] =
		"NVTX: more distinct range names than the shim keeps (4 MiB of them); ranges with "
		"new names from here on are recorded without a name (flag NO_NAME)";

	if (atomic_exchange(&is_budget_said, 1))
		return;
	rec_note(TRACE_NOTE_WARNING, clock_now_ns(), text);
	shim_log(LOG_INFO, "%s", text);
}

/* The cache missed: the shim's string table (bounded), and the answer kept in @e. */
static __attribute__((noinline)) struct nvtx_name name_miss(struct nvtx_cache_entry *e,
							    const char *s, size_t len,
							    uint32_t flags, uint64_t h, uint32_t key)
{
	int saved = errno;
	struct nvtx_name n = { rec_intern_meta_max(s, len, &name_budget), flags };

	if (!n.id) {
		n.flags |= TRACE_NVTX_NO_NAME;
		say_budget();
	}
	e->hash = h;
	e->key = key;
	e->id = n.id;
	errno = saved;
	return n;
}

/* The STRING id of @len bytes of @s (with @flags), through ring @b's cache. */
static inline struct nvtx_name name_bytes(struct tbuf *b, const char *s, size_t len,
					  uint32_t flags)
{
	uint64_t h = name_hash(s, len);
	uint32_t key = (uint32_t)len | flags << 16 | NVTX_KEY_VALID;
	struct nvtx_cache_entry *e = &b->nvtx_cache[h & (NVTX_CACHE_SIZE - 1)];

	if (likely(e->hash == h && e->key == key))
		return (struct nvtx_name){ e->id, flags | (e->id ? 0 : TRACE_NVTX_NO_NAME) };
	return name_miss(e, s, len, flags, h, key);
}

static inline struct nvtx_name name_ascii(struct tbuf *b, const char *s)
{
	uint32_t flags = 0;
	size_t len;

	if (!s)
		return (struct nvtx_name){ 0, 0 };
	len = ascii_len(s, &flags);
	return name_bytes(b, s, len, flags);
}

static struct nvtx_name name_wide(struct tbuf *b, const wchar_t *w)
{
	char buf[NVTX_MAX];
	uint32_t flags = TRACE_NVTX_UNICODE;
	size_t len;

	if (!w)
		return (struct nvtx_name){ 0, 0 };
	len = wide_to_utf8(w, buf, &flags);
	return name_bytes(b, buf, len, flags);
}

/* A registered string's STRING id in this trace (interned at its first use in it). */
static struct nvtx_name name_registered(nvtxStringHandle_t handle)
{
	uintptr_t i = (uintptr_t)handle;
	uint32_t tag = epoch_tag();
	struct nvtx_registered *r;
	uint64_t v;

	if (!i || i > atomic_load_explicit(&nr_registered, memory_order_acquire))
		return (struct nvtx_name){ 0, TRACE_NVTX_NO_NAME };	/* none: the table was full */
	r = &tab->reg[i - 1];
	v = atomic_load_explicit(&r->tag_id, memory_order_acquire);
	if (unlikely((uint32_t)(v >> 32) != tag)) {
		int saved = errno;
		uint32_t id = rec_intern_meta(tab->arena + r->text.off, r->text.len);

		v = id;
		if (id) {
			v |= (uint64_t)tag << 32;
			atomic_store_explicit(&r->tag_id, v, memory_order_release);
		}
		errno = saved;
	}
	return (struct nvtx_name){ (uint32_t)v, r->text.flags | ((uint32_t)v ? 0 : TRACE_NVTX_NO_NAME) };
}

/* ---- Domains ---- */

static __attribute__((noinline)) int domain_define(uint32_t id)
{
	int saved = errno;
	struct nvtx_domain *d = &tab->domain[id - 1];
	int ret = rec_nvtx_domain(id, tab->arena + d->name.off, d->name.len, &d->defined,
				  epoch_tag());

	if (ret < 0)
		tbuf_count_unringed();
	errno = saved;
	return ret;
}

/*
 * 0 with *@id the trace's id of domain handle @h (0: NVTX's default, the NULL handle), whose
 * NVTX_DOMAIN record this trace has; -1 for a handle that is no domain of ours (a full table)
 * or a record that could not be written, counted lost.
 */
static inline int domain_of(nvtxDomainHandle_t h, uint32_t *id)
{
	uintptr_t v = (uintptr_t)h;

	*id = 0;
	if (likely(!v))
		return 0;
	if (unlikely(v > atomic_load_explicit(&nr_domains, memory_order_acquire))) {
		tbuf_count_unringed();
		return -1;
	}
	*id = (uint32_t)v;
	if (likely(atomic_load_explicit(&tab->domain[v - 1].defined, memory_order_acquire) ==
		   epoch_tag()))
		return 0;
	return domain_define((uint32_t)v);
}

/* The tables, mapped on first use. Context: tab_lock. */
static int tab_map(void)
{
	void *p;

	if (tab)
		return 0;
	p = mmap(NULL, sizeof(*tab), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return -1;
	tab = p;
	return 0;
}

/* Copy @len bytes into the arena. Context: tab_lock, tab mapped. */
static int arena_put(const char *s, size_t len, uint32_t flags, struct nvtx_text *t)
{
	if (arena_used + len > NVTX_ARENA_BYTES)
		return -1;
	memcpy(tab->arena + arena_used, s, len);
	t->off = arena_used;
	t->len = (uint16_t)len;
	t->flags = (uint16_t)flags;
	arena_used += (uint32_t)len;
	return 0;
}

static nvtxDomainHandle_t domain_create(const char *s, size_t len, uint32_t flags)
{
	struct shim_tls *t = &shim_tls;
	nvtxDomainHandle_t h = DOMAIN_FULL;
	int saved = errno;
	uint32_t i, n;

	if (t->depth)		/* a signal handler inside the shim on this thread: no lock */
		return h;
	t->depth = 1;
	pthread_mutex_lock(&tab_lock);
	n = atomic_load_explicit(&nr_domains, memory_order_relaxed);
	if (tab_map() == 0) {
		/* The same name is the same domain, whichever copy of NVTX created it. */
		for (i = 0; i < n; i++) {
			const struct nvtx_text *d = &tab->domain[i].name;

			if (d->len == len && !memcmp(tab->arena + d->off, s, len)) {
				h = (nvtxDomainHandle_t)(uintptr_t)(i + 1);
				break;
			}
		}
		if (i == n && n < NVTX_MAX_DOMAINS &&
		    arena_put(s, len, flags, &tab->domain[n].name) == 0) {
			atomic_store_explicit(&tab->domain[n].defined, 0, memory_order_relaxed);
			atomic_store_explicit(&nr_domains, n + 1, memory_order_release);
			h = (nvtxDomainHandle_t)(uintptr_t)(n + 1);
		}
	}
	pthread_mutex_unlock(&tab_lock);
	if (h == DOMAIN_FULL && !atomic_exchange(&is_domains_said, 1))
		rec_note(TRACE_NOTE_WARNING, clock_now_ns(),
			 "NVTX: more domains than the shim keeps (1024, or their names past 1 MiB): "
			 "the records of later ones are counted lost");
	t->depth = 0;
	errno = saved;
	return h;
}

static nvtxStringHandle_t string_register(const char *s, size_t len, uint32_t flags)
{
	struct shim_tls *t = &shim_tls;
	uint32_t i, n, slot, mask = 2 * NVTX_MAX_REGISTERED - 1;
	nvtxStringHandle_t h = NULL;
	int saved = errno;

	if (t->depth)
		return NULL;	/* what NVTX gives without a tool */
	t->depth = 1;
	pthread_mutex_lock(&tab_lock);
	n = atomic_load_explicit(&nr_registered, memory_order_relaxed);
	if (tab_map() == 0) {
		for (slot = (uint32_t)name_hash(s, len) & mask; (i = tab->reg_slot[slot]);
		     slot = (slot + 1) & mask) {
			const struct nvtx_text *r = &tab->reg[i - 1].text;

			if (i <= n && r->len == len && r->flags == flags &&
			    !memcmp(tab->arena + r->off, s, len)) {
				h = (nvtxStringHandle_t)(uintptr_t)i;
				break;
			}
		}
		if (!h && n < NVTX_MAX_REGISTERED && arena_put(s, len, flags, &tab->reg[n].text) == 0) {
			atomic_store_explicit(&tab->reg[n].tag_id, 0, memory_order_relaxed);
			tab->reg_slot[slot] = n + 1;
			atomic_store_explicit(&nr_registered, n + 1, memory_order_release);
			h = (nvtxStringHandle_t)(uintptr_t)(n + 1);
		}
	}
	pthread_mutex_unlock(&tab_lock);
	t->depth = 0;
	errno = saved;
	return h;
}

/* ---- Records ---- */

/* rec_begin's slow path for NVTX: errno kept (a new ring maps memory), and the bound on rings
 * made before a writer exists. */
static void *begin_slow(struct shim_tls *t, uint16_t type, uint16_t size, uint64_t ts)
{
	uint32_t epoch = atomic_load_explicit(&shim.epoch, memory_order_relaxed);
	int saved = errno;
	void *r = NULL;

	if (atomic_load_explicit(&shim.mode, memory_order_relaxed) == SHIM_IDLE &&
	    !(t->buf && t->epoch == epoch) &&
	    atomic_load_explicit(&shim.nr_threads, memory_order_relaxed) >= NVTX_IDLE_RINGS)
		tbuf_count_unringed();
	else
		r = rec_begin_slow(t, type, size, ts);
	errno = saved;
	return r;
}

enum msg_kind { MSG_NONE, MSG_ATTR, MSG_ASCII, MSG_WIDE };

/* Fill a PUSH, START or MARK from the program's message (attributes, or a string alone). */
static inline __attribute__((always_inline)) void
fill_range(struct tbuf *b, struct trace_rec_nvtx_range *r, int kind, const void *msg)
{
	const nvtxEventAttributes_t *a = msg;
	struct nvtx_name n = { 0, 0 };
	uint16_t size;

	if (kind == MSG_ASCII) {
		n = name_ascii(b, msg);
	} else if (kind == MSG_WIDE) {
		n = name_wide(b, msg);
	} else if (kind == MSG_ATTR && a) {
		/* Fields past the size the program gave are not read (NVTX's versioning rule). */
		size = a->size;
		if (size >= offsetof(nvtxEventAttributes_t, colorType))
			r->category = a->category;
		if (size >= offsetof(nvtxEventAttributes_t, payloadType) &&
		    a->colorType == NVTX_COLOR_ARGB)
			r->color = a->color;
		if (size >= sizeof(*a)) {
			switch (a->messageType) {
			case NVTX_MESSAGE_TYPE_ASCII:
				n = name_ascii(b, a->message.ascii);
				break;
			case NVTX_MESSAGE_TYPE_UNICODE:
				n = name_wide(b, a->message.unicode);
				break;
			case NVTX_MESSAGE_TYPE_REGISTERED:
				n = name_registered(a->message.registered);
				break;
			default:
				break;	/* no message */
			}
		}
	}
	r->name = n.id;
	r->flags = n.flags;
}

/*
 * One NVTX call: its record (@type: PUSH, START, MARK with @kind and @msg; POP of domain @d;
 * END of range @id) in the calling thread's ring, stamped on entry. START takes its id here
 * (want_id) and returns it. Never blocks; a record that cannot be written is counted lost.
 */
static inline __attribute__((always_inline)) uint64_t nvtx_record(uint16_t type,
								nvtxDomainHandle_t d,
								int kind, const void *msg,
								uint64_t id, int want_id)
{
	struct shim_tls *t = &shim_tls;
	uint32_t dom;
	uint64_t ts;
	int mode;

	if (unlikely(t->depth)) {
		/* A signal handler that interrupted the shim on this thread: its ring and locks
		 * are in use. Counted, and an id no one else has. */
		tbuf_count_unringed();
		return want_id ? atomic_fetch_add_explicit(&next_range_id, 1, memory_order_relaxed) : 0;
	}
	t->depth = 1;
	/* A handler may run between any two instructions: nothing below moves above this. */
	atomic_signal_fence(memory_order_seq_cst);
	if (want_id) {
		if (unlikely(t->nvtx_id_next == t->nvtx_id_end)) {
			t->nvtx_id_next = atomic_fetch_add_explicit(&next_range_id, NVTX_ID_BATCH,
								    memory_order_relaxed);
			t->nvtx_id_end = t->nvtx_id_next + NVTX_ID_BATCH;
		}
		id = t->nvtx_id_next++;
	}
	mode = atomic_load_explicit(&shim.mode, memory_order_relaxed);
	if (likely(mode < SHIM_OFF)) {
		ts = clock_now_ns();
		if (type == TRACE_REC_NVTX_END) {
			struct trace_rec_nvtx_end *r =
				rec_begin_via(t, type, sizeof(*r), ts, begin_slow);

			if (r) {
				r->id = id;
				rec_commit(t, r);
			}
		} else if (domain_of(d, &dom) == 0) {
			if (type == TRACE_REC_NVTX_POP) {
				struct trace_rec_nvtx_end *r =
					rec_begin_via(t, type, sizeof(*r), ts, begin_slow);

				if (r) {
					r->id = dom;
					rec_commit(t, r);
				}
			} else {
				struct trace_rec_nvtx_range *r =
					rec_begin_via(t, type, sizeof(*r), ts, begin_slow);

				if (r) {
					r->domain = dom;
					r->id = id;
					fill_range(t->buf, r, kind, msg);
					rec_commit(t, r);
				}
			}
		}
	} else if (mode == SHIM_ENDED) {
		writer_late_call();	/* after the exit's END: counted as lost */
	}
	atomic_signal_fence(memory_order_seq_cst);	/* ... nor above it below this */
	t->depth = 0;
	return id;
}

/* Push returns the 0-based level of the range it opened; one count per thread, every domain. */
static inline int push(nvtxDomainHandle_t d, int kind, const void *msg)
{
	int level;

	nvtx_record(TRACE_REC_NVTX_PUSH, d, kind, msg, 0, 0);
	level = shim_tls.nvtx_depth;
	if (level < INT_MAX)
		shim_tls.nvtx_depth = level + 1;
	return level;
}

/* Pop returns the level of the range it closed, or -1 when none was open (still recorded). */
static inline int pop(nvtxDomainHandle_t d)
{
	int level = shim_tls.nvtx_depth;

	nvtx_record(TRACE_REC_NVTX_POP, d, MSG_NONE, NULL, 0, 0);
	if (level <= 0)
		return -1;
	shim_tls.nvtx_depth = level - 1;
	return level - 1;
}

/* ---- The callbacks (nvtxTypes.h's signatures) ---- */

static void NVTX_API cb_MarkEx(const nvtxEventAttributes_t *a)
{
	nvtx_record(TRACE_REC_NVTX_MARK, NULL, MSG_ATTR, a, 0, 0);
}

static void NVTX_API cb_MarkA(const char *s)
{
	nvtx_record(TRACE_REC_NVTX_MARK, NULL, MSG_ASCII, s, 0, 0);
}

static void NVTX_API cb_MarkW(const wchar_t *s)
{
	nvtx_record(TRACE_REC_NVTX_MARK, NULL, MSG_WIDE, s, 0, 0);
}

static nvtxRangeId_t NVTX_API cb_RangeStartEx(const nvtxEventAttributes_t *a)
{
	return nvtx_record(TRACE_REC_NVTX_START, NULL, MSG_ATTR, a, 0, 1);
}

static nvtxRangeId_t NVTX_API cb_RangeStartA(const char *s)
{
	return nvtx_record(TRACE_REC_NVTX_START, NULL, MSG_ASCII, s, 0, 1);
}

static nvtxRangeId_t NVTX_API cb_RangeStartW(const wchar_t *s)
{
	return nvtx_record(TRACE_REC_NVTX_START, NULL, MSG_WIDE, s, 0, 1);
}

static void NVTX_API cb_RangeEnd(nvtxRangeId_t id)
{
	nvtx_record(TRACE_REC_NVTX_END, NULL, MSG_NONE, NULL, id, 0);
}

static int NVTX_API cb_RangePushEx(const nvtxEventAttributes_t *a)
{
	return push(NULL, MSG_ATTR, a);
}

static int NVTX_API cb_RangePushA(const char *s)
{
	return push(NULL, MSG_ASCII, s);
}

static int NVTX_API cb_RangePushW(const wchar_t *s)
{
	return push(NULL, MSG_WIDE, s);
}

static int NVTX_API cb_RangePop(void)
{
	return pop(NULL);
}

static void NVTX_API cb_DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	nvtx_record(TRACE_REC_NVTX_MARK, d, MSG_ATTR, a, 0, 0);
}

static nvtxRangeId_t NVTX_API cb_DomainRangeStartEx(nvtxDomainHandle_t d,
						    const nvtxEventAttributes_t *a)
{
	return nvtx_record(TRACE_REC_NVTX_START, d, MSG_ATTR, a, 0, 1);
}

static void NVTX_API cb_DomainRangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id)
{
	(void)d;		/* END names the range alone */
	nvtx_record(TRACE_REC_NVTX_END, NULL, MSG_NONE, NULL, id, 0);
}

static int NVTX_API cb_DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t *a)
{
	return push(d, MSG_ATTR, a);
}

static int NVTX_API cb_DomainRangePop(nvtxDomainHandle_t d)
{
	return pop(d);
}

static nvtxStringHandle_t NVTX_API cb_DomainRegisterStringA(nvtxDomainHandle_t d, const char *s)
{
	uint32_t flags = 0;
	size_t len;

	(void)d;		/* a string is the same in every domain */
	if (!s)
		return NULL;
	len = ascii_len(s, &flags);
	return string_register(s, len, flags);
}

static nvtxStringHandle_t NVTX_API cb_DomainRegisterStringW(nvtxDomainHandle_t d,
							    const wchar_t *s)
{
	uint32_t flags = TRACE_NVTX_UNICODE;
	char buf[NVTX_MAX];
	size_t len;

	(void)d;
	if (!s)
		return NULL;
	len = wide_to_utf8(s, buf, &flags);
	return string_register(buf, len, flags);
}

static nvtxDomainHandle_t NVTX_API cb_DomainCreateA(const char *s)
{
	uint32_t flags = 0;
	size_t len;

	if (!s)
		s = "";
	len = ascii_len(s, &flags);
	return domain_create(s, len, flags);
}

static nvtxDomainHandle_t NVTX_API cb_DomainCreateW(const wchar_t *s)
{
	uint32_t flags = TRACE_NVTX_UNICODE;
	char buf[NVTX_MAX];
	size_t len = s ? wide_to_utf8(s, buf, &flags) : 0;

	return domain_create(buf, len, flags);
}

/* ---- Injection ---- */

struct nvtx_slot {
	uint32_t cbid;
	NvtxFunctionPointer fn;
};

#define SLOT(mod, name) { NVTX_CBID_##mod##_##name, (NvtxFunctionPointer)cb_##name }

/*
 * The callbacks filled in. Slots left empty are no-ops in NVTX: naming threads, categories
 * and resources (the format has no record for them), domain destroy (a domain's id stays
 * valid, as its handle does), nvtxInitialize.
 */
static const struct nvtx_slot core_slots[] = {
	SLOT(CORE, MarkEx),	  SLOT(CORE, MarkA),	    SLOT(CORE, MarkW),
	SLOT(CORE, RangeStartEx), SLOT(CORE, RangeStartA),  SLOT(CORE, RangeStartW),
	SLOT(CORE, RangeEnd),	  SLOT(CORE, RangePushEx),  SLOT(CORE, RangePushA),
	SLOT(CORE, RangePushW),	  SLOT(CORE, RangePop),
};

static const struct nvtx_slot core2_slots[] = {
	SLOT(CORE2, DomainMarkEx),	    SLOT(CORE2, DomainRangeStartEx),
	SLOT(CORE2, DomainRangeEnd),	    SLOT(CORE2, DomainRangePushEx),
	SLOT(CORE2, DomainRangePop),	    SLOT(CORE2, DomainRegisterStringA),
	SLOT(CORE2, DomainRegisterStringW), SLOT(CORE2, DomainCreateA),
	SLOT(CORE2, DomainCreateW),
};

/* Fill @module's slots of one copy of NVTX. Returns 1 when it has the module. */
static int fill_module(const NvtxExportTableCallbacks *cb, NvtxCallbackModule module,
		       const struct nvtx_slot *slots, size_t n)
{
	NvtxFunctionTable table = NULL;
	unsigned int size = 0;
	size_t i;

	if (!cb->GetModuleFunctionTable(module, &table, &size) || !table)
		return 0;
	/* size counts the slots with the unused slot 0 (nvtxImpl.h); table[size] is NULL. */
	for (i = 0; i < n; i++)
		if (slots[i].cbid < size && table[slots[i].cbid])
			*table[slots[i].cbid] = slots[i].fn;
	return 1;
}

int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
	__attribute__((visibility("default")));

/*
 * Is this library the one the process preloaded? Loaded by NVTX alone (the variable inherited
 * by a process without the preload), no CUDA call ever reaches it, no trace would be written:
 * NVTX is better left a no-op there. A preloaded library is in the program's own search list
 * (the global scope); one NVTX opened is not (RTLD_DEFAULT would also search the caller's own
 * scope, which has it either way).
 */
static int is_preloaded(void)
{
	static _Atomic int answer;	/* 0 unknown, 1 yes, 2 no */
	int a = atomic_load(&answer);
	void *prog;

	if (!a) {
		prog = dlopen(NULL, RTLD_LAZY);
		a = prog && resolve_dlsym(prog, "InitializeInjectionNvtx2") ==
				    (void *)InitializeInjectionNvtx2 ?
			    1 :
			    2;
		if (prog)
			dlclose(prog);
		atomic_store(&answer, a);
	}
	return a == 1;
}

/*
 * InitializeInjectionNvtx2 - NVTX's call into its injection library, once for each copy of NVTX
 * in the process (libtorch's, NCCL's, the program's ...): fill that copy's core and domain
 * slots with the callbacks. Returns 1, or 0 (NVTX then makes that copy's calls no-ops) when
 * recording NVTX is off, this library is not the preloaded one, or the copy is unusable.
 * Context: the thread making a copy's first NVTX call (others of it wait); thread-safe.
 */
int NVTX_API InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get)
{
	const NvtxExportTableCallbacks *cb;
	const NvtxExportTableVersionInfo *vi;
	int saved = errno, ok = 0;

	if (!get || !is_ready || !is_preloaded())
		goto out;	/* 0: NVTX makes every call of that copy a no-op */
	cb = get(NVTX_ETID_CALLBACKS);
	if (!cb || cb->struct_size < sizeof(*cb) || !cb->GetModuleFunctionTable)
		goto out;
	ok = fill_module(cb, NVTX_CB_MODULE_CORE, core_slots,
			 sizeof(core_slots) / sizeof(core_slots[0]));
	if (ok)
		fill_module(cb, NVTX_CB_MODULE_CORE2, core2_slots,
			    sizeof(core2_slots) / sizeof(core2_slots[0]));
	vi = get(NVTX_ETID_VERSIONINFO);
	if (ok && vi && vi->struct_size >= sizeof(*vi) && vi->SetInjectionNvtxVersion)
		vi->SetInjectionNvtxVersion(NVTX_VERSION);
out:
	errno = saved;
	return ok;
}

/* Are @a and @b the same file (or, where either cannot be looked at, the same string)? */
static int is_same_file(const char *a, const char *b)
{
	struct stat sa, sb;

	if (stat(a, &sa) < 0 || stat(b, &sb) < 0)
		return !strcmp(a, b);
	return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void nvtx_init(void)
{
	char abs[PATH_MAX];
	const char *self, *cur;
	Dl_info info;

	if (!shim.cfg.nvtx || shim.cfg.is_disabled)
		return;
	if (!dladdr((void *)InitializeInjectionNvtx2, &info) || !info.dli_fname ||
	    !*info.dli_fname)
		return;
	self = info.dli_fname;
	/* Preloaded by a relative path: NVTX may look after the program changed directory. */
	if (self[0] != '/' && realpath(self, abs))
		self = abs;
	cur = getenv("NVTX_INJECTION64_PATH");
	if (!cur || !*cur)
		setenv("NVTX_INJECTION64_PATH", self, 1);
	else if (!is_same_file(cur, self))
		snprintf(other_tool, sizeof(other_tool), "%s", cur);
	is_ready = 1;
}

void nvtx_trace_started(void)
{
	char text[400];

	if (!other_tool[0])
		return;
	snprintf(text, sizeof(text),
		 "NVTX_INJECTION64_PATH names another tool (%s): the program's NVTX ranges go to "
		 "it, not into this trace",
		 other_tool);
	rec_note(TRACE_NOTE_WARNING, clock_now_ns(), text);
	if (!atomic_exchange(&is_other_said, 1))
		shim_log(LOG_WARN, "%s", text);
}

void nvtx_reset_after_fork(void)
{
	pthread_mutex_init(&tab_lock, NULL);
	name_budget = NVTX_NAME_BUDGET;		/* the child's string table starts empty */
	atomic_store(&is_budget_said, 0);
	atomic_store(&is_domains_said, 0);
}
