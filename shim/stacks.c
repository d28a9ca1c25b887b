// SPDX-License-Identifier: MIT
/*
 * stacks.c - call stacks at the calls that cost time and are few (trace_format.h, "Call
 * stacks"): which calls (the policy table), the capture on the application thread (the native
 * frames through cached unwind rules, unwind.c, or glibc's backtrace() where those do not
 * serve; in a CPython process the Python frames through the interpreter's C API, found at run
 * time, only while the thread holds the GIL), stacks interned by content (stack_table.c) and
 * defined once in the meta stream, and, on the writer thread, what each native address is
 * (module, build-id, offset, symbol). Never links libpython, never guesses: a capture that
 * cannot be made is counted (NOTE STACKS).
 * Runs on: app threads inside hooks (stacks_capture: no I/O, no allocation of its own; the meta
 * lock for a stack or a name seen for the first time), the writer (start, symbolization, note),
 * the constructor (stacks_init), the fork child (reset).
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <elf.h>
#include <execinfo.h>
#include <link.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/types.h>
#include <unistd.h>

#include "uthash.h"

#include "futex.h"
#include "stack_table.h"

/*
 * Bounds. 16,384 distinct stacks (half of 32,768 slots) in 8 MiB of keys, mapped once and
 * touched as used: a program's loop has tens of distinct stacks at its costly calls, a whole
 * run hundreds to thousands. 4 MiB of Python file and function names (as NVTX's names). Past a
 * bound, captures are counted failed (table full, names), never made up.
 */
#define STACK_SLOTS (1u << 15)
#define STACK_ARENA_BYTES (8u << 20)
#define STACK_NAME_BUDGET (4u << 20)
#define STACK_SKIP_MAX 4		/* the shim's own frames on top of a stack, at most */
#define PY_LOOK_EVERY_NS 1000000000ull	/* a Python loaded later is looked for this often */

/* ---- The CPython C API, resolved at run time (never linked) ---- */

typedef void pyobj;

struct py_api {
	int (*Py_IsInitialized)(void);
	int (*PyGILState_Check)(void);
	pyobj *(*tstate_get)(void);	/* the thread's state, without checks; NULL: absent */
	pyobj *(*PyEval_GetFrame)(void);	/* borrowed */
	pyobj *(*PyFrame_GetBack)(pyobj *);	/* new reference (3.9+) */
	pyobj *(*PyFrame_GetCode)(pyobj *);	/* new reference (3.9+) */
	int (*PyFrame_GetLineNumber)(pyobj *);
	int (*PyFrame_GetLasti)(pyobj *);	/* 3.11+; NULL: absent */
	pyobj *(*PyObject_GetAttr)(pyobj *, pyobj *);
	const char *(*PyUnicode_AsUTF8AndSize)(pyobj *, ssize_t *);
	pyobj *(*PyUnicode_InternFromString)(const char *);
	void (*Py_IncRef)(pyobj *);	/* NULL-safe, as Py_XINCREF */
	void (*Py_DecRef)(pyobj *);
	void (*PyErr_Fetch)(pyobj **, pyobj **, pyobj **);
	void (*PyErr_Restore)(pyobj *, pyobj *, pyobj *);
	void (*PyErr_Clear)(void);
	pyobj *(*PyErr_Occurred)(void);
	int (*PyGC_Disable)(void);	/* 3.10+; NULL: absent */
	int (*PyGC_Enable)(void);
	int has_qualname;		/* 3.11+: code objects have co_qualname */
	/* Frames of a thread that released the GIL (py_frames_unlocked); NULL: not this Python */
	const struct py_layout *layout;
	pyobj *(*PyGILState_GetThisThreadState)(void);
	const void *code_type, *unicode_type, *bytes_type;	/* &PyCode_Type, ... */
};

/*
 * Where CPython 3.11 - 3.13 keep a thread's frames (their headers: cpython/pystate.h,
 * internal/pycore_frame.h, cpython/code.h, cpython/unicodeobject.h; offsetof() of each
 * version's own headers, x86-64 and aarch64 alike): the thread state's current interpreter
 * frame (3.11, 3.12 through its _PyCFrame), each frame's code object, previous frame, last
 * instruction and owner, a code object's instructions, file and qualified name and first
 * traceable instruction, and where a compact ASCII string's characters start.
 */
struct py_layout {
	int minor;
	uint16_t ts_frame;		/* 3.11, 3.12: PyThreadState.cframe; 3.13: .current_frame */
	int16_t cframe_current;		/* _PyCFrame.current_frame; -1: no _PyCFrame (3.13) */
	uint16_t f_code, f_previous, f_instr, f_owner;
	uint16_t co_code, co_filename, co_qualname, co_firsttraceable, co_firstlineno;
	uint16_t str_data;		/* sizeof(PyASCIIObject) */
	uint16_t ustr_data;		/* sizeof(PyCompactUnicodeObject) */
};

static const struct py_layout py_layouts[] = {
	{ 11, 56, 8, 32, 48, 56, 69, 184, 112, 128, 168, 72, 48, 72 },
	{ 12, 56, 0, 0, 8, 56, 70, 192, 112, 128, 176, 68, 40, 56 },
	{ 13, 72, -1, 0, 8, 56, 70, 200, 112, 128, 184, 68, 40, 56 },
};

#define PY_OB_TYPE 8			/* PyObject.ob_type */
#define PY_STR_LENGTH 16		/* PyASCIIObject.length, PyVarObject.ob_size */
#define PY_STR_STATE 32			/* PyASCIIObject.state: kind bits 2-4, compact 5, ascii 6 */
#define PY_STR_KIND_SHIFT 2
#define PY_STR_COMPACT 0x20u
#define PY_STR_ASCII 0x40u
#define PY_BYTES_DATA 32		/* PyBytesObject.ob_sval */
#define PY_CO_LINETABLE 136		/* PyCodeObject.co_linetable, 3.11 - 3.13 */
#define PY_OWNED_BY_GENERATOR 1
#define PY_OWNED_BY_CSTACK 3		/* 3.12+: an entry frame of a C call, not Python code */
#define PY_NAME_MAX 4096		/* a file or function name longer is not read */

static struct py_api py;		/* written by the writer before has_py is set */
static _Atomic int has_py;
/* The attribute names, interned strings made by the first capture that holds the GIL (only one
 * thread holds it at a time) and kept for the process's life: a reference is never given back. */
static pyobj *py_attr_file, *py_attr_func;

/* ---- State ---- */

uint8_t stacks_policy[API__COUNT];

static struct {
	_Atomic int ready;		/* futex word: 1 once captures may be made */
	struct stack_table table;
	void *mem;
	uint32_t next_id;		/* under the meta lock */
	size_t name_budget;		/* under the meta lock (rec_intern_meta_max) */
	uintptr_t shim_lo, shim_hi;	/* the shim's mapped code: its frames are left out */
	_Atomic int is_unwind_set;	/* unwind_init done (once a process: kept across fork) */
	_Atomic uint64_t nr_captured, nr_python, nr_no_gil, nr_unlocked;
	_Atomic uint64_t nr_not_ready, nr_full, nr_names, nr_lost;
	_Atomic uint64_t nr_slow;	/* walks left to backtrace() (unwind.c could not) */
} st;

static void count(_Atomic uint64_t *c)
{
	atomic_fetch_add_explicit(c, 1, memory_order_relaxed);
}

/* ---- The writer's calls into the dynamic loader, and fork ---- */

/*
 * The loader thread's calls into the dynamic loader (dl_iterate_phdr, dladdr, dlsym, dlopen,
 * the first backtrace()) hold sym_lock, and a fork waits for it (its prepare handler). glibc
 * gives a fork child the loader's main lock anew but not dl_iterate_phdr's: a child forked
 * while that thread was inside dl_iterate_phdr would find the lock held for good by a thread
 * it does not have, and its own stack capture (and any unwinding the child does) would hang
 * there. Bounded: a fork that cannot have the lock within a second goes ahead without it. The
 * sections hold no other lock of the shim's.
 */
static pthread_mutex_t sym_lock = PTHREAD_MUTEX_INITIALIZER;
static int is_sym_held_for_fork;	/* forks are serialized by glibc's atfork lock */

static void sym_fork_prepare(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);	/* timedlock's clock */
	ts.tv_sec += 1;
	is_sym_held_for_fork = pthread_mutex_timedlock(&sym_lock, &ts) == 0;
}

static void sym_fork_parent(void)
{
	if (is_sym_held_for_fork)
		pthread_mutex_unlock(&sym_lock);
	is_sym_held_for_fork = 0;
}

static void sym_fork_child(void)
{
	pthread_mutex_init(&sym_lock, NULL);
	is_sym_held_for_fork = 0;
}

/* ---- Policy ---- */

static uint8_t family_policy(int family, int flags)
{
	switch (family) {
	case TRACE_FAM_LAUNCH:
		return STACKS_SAMPLED;
	case TRACE_FAM_MEMORY:
		/* stream-ordered allocations come as often as tensors do: sampled */
		return flags & TRACE_API_ASYNC ? STACKS_SAMPLED : STACKS_ALWAYS;
	case TRACE_FAM_COPY:
		/* an asynchronous copy that blocked (pageable memory): as a blocking one */
		return flags & TRACE_API_ASYNC ? STACKS_SLOW : STACKS_ALWAYS;
	case TRACE_FAM_MODULE:
		return STACKS_ALWAYS;
	default:
		return STACKS_NEVER;
	}
}

void stacks_init(void)
{
	if (!shim.cfg.stacks)
		return;
	pthread_atfork(sym_fork_prepare, sym_fork_parent, sym_fork_child);
#define P(n, fam, fl) stacks_policy[API_##n] = family_policy(TRACE_FAM_##fam, (fl));
	GPUSHIM_APIS(P)
#undef P
	/* Of the SYNC family, the calls that block the host; of the rest, bookkeeping. */
	stacks_policy[API_cuCtxSynchronize] = STACKS_ALWAYS;
	stacks_policy[API_cuCtxSynchronize_v2] = STACKS_ALWAYS;
	stacks_policy[API_cuStreamSynchronize] = STACKS_ALWAYS;
	stacks_policy[API_cuStreamSynchronize_ptsz] = STACKS_ALWAYS;
	stacks_policy[API_cuEventSynchronize] = STACKS_ALWAYS;
	stacks_policy[API_cuModuleUnload] = STACKS_NEVER;
	stacks_policy[API_cuLibraryUnload] = STACKS_NEVER;
	stacks_policy[API_cuMemGetInfo_v2] = STACKS_NEVER;
	stacks_policy[API_cuMemSetAccess] = STACKS_NEVER;
}

int stacks_sample_slow(struct shim_tls *t)
{
	uint32_t n = shim.cfg.stack_sample;

	if (!shim.cfg.stacks) {
		t->stack_left = UINT32_MAX;
		return 0;
	}
	if (t->stack_left == 0) {	/* the thread's first sampled call: count from it */
		t->stack_left = n ? n : UINT32_MAX;
		if (t->stack_left > 1) {
			t->stack_left--;
			return 0;
		}
	}
	t->stack_left = n ? n : UINT32_MAX;
	return 1;
}

/* ---- Python frames ---- */

/* The STRING id of the @len bytes at @s, through ring @b's cache; 0 when it cannot be had. */
static uint32_t py_str_id(struct tbuf *b, const char *s, ssize_t len)
{
	struct nvtx_cache_entry *e;
	uint64_t h;
	uint32_t key, id;

	h = stack_table_hash(s, (size_t)len);
	key = ((uint32_t)len & 0x7fffffffu) | 0x80000000u;
	e = &b->stack_names[h & (STACK_NAME_CACHE_SIZE - 1)];
	if (likely(e->hash == h && e->key == key && e->id))
		return e->id;
	id = rec_intern_meta_max(s, (size_t)len, &st.name_budget);
	if (id) {
		e->hash = h;
		e->key = key;
		e->id = id;
	}
	return id;
}

/* The STRING id of the Python str @o, through ring @b's cache; 0 when it cannot be had. */
static uint32_t py_name_id(struct tbuf *b, pyobj *o)
{
	const char *s;
	ssize_t len;

	if (!o || !(s = py.PyUnicode_AsUTF8AndSize(o, &len)) || len < 0)
		return 0;	/* an exception may be set: cleared after the walk */
	return py_str_id(b, s, len);
}

/*
 * Frame @f running @code (a new reference, which this takes over) into @out, through ring @b's
 * cache: a code object at an instruction seen before costs a lookup; otherwise its line is
 * computed, its file and function names read (two attributes) and interned, and the entry
 * replaced (the code's reference kept there, the old entry's given back). Returns 0, or -1 when
 * a name could not be had. Context: the GIL held.
 */
static int py_frame(struct tbuf *b, pyobj *f, pyobj *code, struct trace_stack_py *out)
{
	int32_t lasti = py.PyFrame_GetLasti ? py.PyFrame_GetLasti(f) : -1;
	uintptr_t k = (uintptr_t)code ^ ((uintptr_t)(uint32_t)lasti << 4);
	struct stack_py_entry *e = &b->stack_py[(k * 0x9e3779b97f4a7c15ull) >> 57];
	pyobj *file, *func;
	uint32_t file_id, func_id;

	_Static_assert(STACK_PY_CACHE_SIZE == 128, "the slot is the hash's top 7 bits");
	out->_pad = 0;
	if (likely(e->code == code && e->lasti == lasti)) {
		out->line = lasti >= 0 ? e->line : py.PyFrame_GetLineNumber(f);
		out->file = e->file;
		out->func = e->func;
		py.Py_DecRef(code);
		return 0;
	}
	out->line = py.PyFrame_GetLineNumber(f);
	file = py.PyObject_GetAttr(code, py_attr_file);
	func = py.PyObject_GetAttr(code, py_attr_func);
	file_id = py_name_id(b, file);
	func_id = py_name_id(b, func);
	py.Py_DecRef(func);
	py.Py_DecRef(file);
	out->file = file_id;
	out->func = func_id;
	if (!file_id || !func_id) {
		py.Py_DecRef(code);
		return -1;
	}
	py.Py_DecRef(e->code);		/* NULL-safe: the slot's previous code object */
	e->code = code;
	e->lasti = lasti;
	e->line = lasti >= 0 ? out->line : -1;
	e->file = file_id;
	e->func = func_id;
	return 0;
}

/* ---- Python frames of a thread that released the GIL ---- */

static inline const char *load_ptr(const char *base, size_t off)
{
	const char *p;

	memcpy(&p, base + off, sizeof(p));
	return p;
}

static uint32_t py_str_id_unlocked(struct tbuf *b, const char *o)
{
	const struct py_layout *L = py.layout;
	char utf8[1024];		/* a longer non-ASCII name is not read */
	const uint8_t *d;
	uint32_t state, kind;
	ssize_t len, i;
	size_t n = 0;

	if (!o || load_ptr(o, PY_OB_TYPE) != py.unicode_type)
		return 0;
	memcpy(&state, o + PY_STR_STATE, sizeof(state));
	memcpy(&len, o + PY_STR_LENGTH, sizeof(len));
	if (!(state & PY_STR_COMPACT) || len < 0 || len > PY_NAME_MAX)
		return 0;
	if (state & PY_STR_ASCII)
		return py_str_id(b, o + L->str_data, len);
	/* compact, not ASCII ("/home/josé/train.py"): its code points as UTF-8, if they fit */
	kind = (state >> PY_STR_KIND_SHIFT) & 7;
	d = (const uint8_t *)o + L->ustr_data;
	for (i = 0; i < len; i++) {
		uint32_t c = kind == 1 ? d[i] : kind == 2 ? ((const uint16_t *)(const void *)d)[i] :
			     kind == 4 ? ((const uint32_t *)(const void *)d)[i] : 0xffffffffu;

		if (c > 0x10ffff || n + 4 > sizeof(utf8))
			return 0;
		if (c < 0x80) {
			utf8[n++] = (char)c;
		} else if (c < 0x800) {
			utf8[n++] = (char)(0xc0 | c >> 6);
			utf8[n++] = (char)(0x80 | (c & 0x3f));
		} else if (c < 0x10000) {
			utf8[n++] = (char)(0xe0 | c >> 12);
			utf8[n++] = (char)(0x80 | (c >> 6 & 0x3f));
			utf8[n++] = (char)(0x80 | (c & 0x3f));
		} else {
			utf8[n++] = (char)(0xf0 | c >> 18);
			utf8[n++] = (char)(0x80 | (c >> 12 & 0x3f));
			utf8[n++] = (char)(0x80 | (c >> 6 & 0x3f));
			utf8[n++] = (char)(0x80 | (c & 0x3f));
		}
	}
	return py_str_id(b, utf8, (ssize_t)n);
}

/* The unsigned varint at *@p (6 bits a byte, 0x40: more), advanced; bounded by @end. */
static uint32_t py_varint(const uint8_t **p, const uint8_t *end)
{
	uint32_t v = 0, shift = 0, c;

	do {
		if (*p >= end || shift > 24)
			return 0;
		c = *(*p)++;
		v |= (c & 63) << shift;
		shift += 6;
	} while (c & 64);
	return v;
}

/*
 * The line code unit @lasti of @code runs: its location table (co_linetable, the same format in
 * 3.11 - 3.13: CPython's Objects/locations.md) walked from co_firstlineno, as
 * PyCode_Addr2Line walks it - but without calling into the interpreter, whose 3.11 line
 * lookup may use a cache another thread is still filling. A bytes object never changes. -1
 * unknown (no line, or a table that is not one).
 */
static int32_t py_line_unlocked(const char *code, int64_t lasti)
{
	const struct py_layout *L = py.layout;
	const char *table = load_ptr(code, PY_CO_LINETABLE);
	const uint8_t *p, *end;
	int64_t addr = 0;
	int32_t line;
	ssize_t size;

	if (!table || load_ptr(table, PY_OB_TYPE) != py.bytes_type)
		return -1;
	memcpy(&size, table + PY_STR_LENGTH, sizeof(size));	/* PyVarObject.ob_size */
	if (size < 0 || size > (1 << 24))
		return -1;
	p = (const uint8_t *)table + PY_BYTES_DATA;
	end = p + size;
	memcpy(&line, code + L->co_firstlineno, sizeof(line));
	while (p < end) {
		uint8_t b = *p++;
		int kind = b >> 3 & 15;
		int32_t delta = 0;

		if (!(b & 0x80))
			return -1;		/* not an entry's first byte */
		if (kind == 13 || kind == 14) {	/* no columns, long: a signed varint */
			uint32_t u = py_varint(&p, end);

			delta = u & 1 ? -(int32_t)(u >> 1) : (int32_t)(u >> 1);
		} else if (kind == 11 || kind == 12) {	/* one line, 1 or 2 down */
			delta = kind - 10;
		}
		line += delta;
		addr += (b & 7) + 1;		/* code units */
		if (lasti < addr)
			return kind == 15 ? -1 : line;
		while (p < end && !(*p & 0x80))
			p++;
	}
	return -1;
}

/*
 * Code object @code at instruction @lasti (code units) into @out, through ring @b's cache of
 * such frames (no reference taken: an entry matches only while the code object at that
 * address still has the same file, name and line table objects). Returns 0, or -1 when a
 * name could not be read.
 */
static int py_frame_unlocked(struct tbuf *b, const char *code, int32_t lasti,
			     struct trace_stack_py *out)
{
	const struct py_layout *L = py.layout;
	uintptr_t k = (uintptr_t)code ^ ((uintptr_t)(uint32_t)lasti << 4);
	struct stack_upy_entry *e = &b->stack_upy[(k * 0x9e3779b97f4a7c15ull) >> 57];
	const char *file = load_ptr(code, L->co_filename), *func = load_ptr(code, L->co_qualname);
	const char *table = load_ptr(code, PY_CO_LINETABLE);

	out->_pad = 0;
	if (likely(e->code == code && e->lasti == lasti && e->file_obj == file &&
		   e->func_obj == func && e->table_obj == table)) {
		out->line = e->line;
		out->file = e->file;
		out->func = e->func;
		return 0;
	}
	out->file = py_str_id_unlocked(b, file);
	out->func = py_str_id_unlocked(b, func);
	out->line = py_line_unlocked(code, lasti);
	if (!out->file || !out->func)
		return -1;
	e->code = code;
	e->file_obj = file;
	e->func_obj = func;
	e->table_obj = table;
	e->lasti = lasti;
	e->line = out->line;
	e->file = out->file;
	e->func = out->func;
	return 0;
}

/* Is @f a frame the walk reports (running Python code that has started)? Its code into *@code
 * and instruction into *@lasti; -1 when it is not a frame as expected (the walk stops). */
static int py_frame_live(const char *f, const char **code, int64_t *lasti)
{
	const struct py_layout *L = py.layout;
	const char *instr, *start;
	uint8_t owner;
	int32_t first;

	if ((uintptr_t)f & 7)
		return -1;
	memcpy(&owner, f + L->f_owner, 1);
	if (L->minor >= 12 && owner == PY_OWNED_BY_CSTACK)
		return 0;		/* the entry frame of a C call, no code of its own */
	*code = load_ptr(f, L->f_code);
	if (!*code || load_ptr(*code, PY_OB_TYPE) != py.code_type)
		return -1;
	instr = load_ptr(f, L->f_instr);
	start = *code + L->co_code;
	memcpy(&first, *code + L->co_firsttraceable, sizeof(first));
	if (first < 0 || (owner != PY_OWNED_BY_GENERATOR && instr < start + 2 * (int64_t)first))
		return 0;		/* not started */
	*lasti = (int64_t)(instr - start) / 2;
	return *lasti >= 0 && *lasti <= INT32_MAX / 2 ? 1 : -1;
}

/*
 * The Python frames of the calling thread, which released the GIL (PyTorch releases it around
 * every operator, so nearly every CUDA call it makes comes here), read from the interpreter's
 * own structures: its thread state's current frame, then each frame's code object and
 * previous frame. The thread is inside a C call, so its own frames cannot change or go away
 * meanwhile; other threads only read them (or give one a frame object, a field not read
 * here). Nothing is written, no reference taken, nothing allocated, no interpreter function
 * called. Every code object is checked to be one (its type) before its fields are read.
 * Entry frames of C calls (3.12+) and frames not yet started are left out, as
 * PyFrame_GetBack leaves them. What cannot be read ends the walk, never the capture: the
 * frames read so far are kept (PYTHON_CUT), or with none read the stack is native only
 * (NO_GIL). Returns the number of frames.
 */
static int py_frames_unlocked(struct tbuf *b, struct trace_stack_py *out, uint32_t max,
			      uint32_t *flags)
{
	const struct py_layout *L = py.layout;
	const char *ts = py.PyGILState_GetThisThreadState(), *f, *code = NULL;
	uint32_t n = 0, guard = 0;
	int64_t lasti = 0;
	int live = 0, more = 0;

	if (!ts) {
		*flags |= TRACE_STACK_NO_GIL;	/* a thread Python never ran on */
		return 0;
	}
	f = load_ptr(ts, L->ts_frame);
	if (f && L->cframe_current >= 0)
		f = load_ptr(f, (size_t)L->cframe_current);
	for (; f && n < max && ++guard <= 4096; f = load_ptr(f, L->f_previous)) {
		live = py_frame_live(f, &code, &lasti);
		if (live < 0)
			break;
		if (live && py_frame_unlocked(b, code, (int32_t)lasti, &out[n]) < 0) {
			live = -1;
			break;
		}
		n += (uint32_t)live;
	}
	/* cut: a frame that could not be read, or more live frames than kept */
	if (live < 0) {
		more = 1;
	} else {
		for (; f && !more && ++guard <= 4096; f = load_ptr(f, L->f_previous))
			more = py_frame_live(f, &code, &lasti) != 0;
	}
	if (!n) {
		*flags |= TRACE_STACK_NO_GIL;
		return 0;
	}
	*flags |= TRACE_STACK_PYTHON | TRACE_STACK_PYTHON_UNLOCKED;
	if (more)
		*flags |= TRACE_STACK_PYTHON_CUT;
	return (int)n;
}

/*
 * The calling thread's Python frames, innermost first, at most @max into @out; *@flags gets
 * PYTHON (and PYTHON_CUT) or NO_GIL. Returns the number of frames, or -1 when a name could not
 * be had (the capture fails). Only reads: PyEval_GetFrame, PyFrame_GetBack/GetCode/
 * GetLineNumber/GetLasti and two attributes of a code object not seen before, every new
 * reference given back (or kept in the cache, py_frame). Any exception the program had set is
 * put aside and restored; any the walk raised is cleared. The collector is paused meanwhile
 * where it can be (3.10+): before 3.12 a frame object made for the walk could start a
 * collection, and finalizers, inside the CUDA call.
 */
static int py_frames(struct tbuf *b, struct trace_stack_py *out, uint32_t max, uint32_t *flags)
{
	pyobj *et, *ev, *etb, *f;
	int gc = -1, is_bad = 0;
	uint32_t n = 0;

	if (!atomic_load_explicit(&has_py, memory_order_acquire) || !py.Py_IsInitialized())
		return 0;
	if (!py.PyGILState_Check() || (py.tstate_get && !py.tstate_get())) {
		if (py.layout && shim.cfg.stack_unlocked)
			return py_frames_unlocked(b, out, max, flags);
		*flags |= TRACE_STACK_NO_GIL;
		return 0;
	}
	*flags |= TRACE_STACK_PYTHON;
	py.PyErr_Fetch(&et, &ev, &etb);
	if (py.PyGC_Disable)
		gc = py.PyGC_Disable();
	if (!py_attr_file) {
		py_attr_file = py.PyUnicode_InternFromString("co_filename");
		py_attr_func = py.PyUnicode_InternFromString(py.has_qualname ? "co_qualname" :
									       "co_name");
	}
	f = py_attr_file && py_attr_func ? py.PyEval_GetFrame() : NULL;
	py.Py_IncRef(f);
	while (f && n < max) {
		pyobj *code = py.PyFrame_GetCode(f), *back;

		if (!code || py_frame(b, f, code, &out[n]) < 0)
			is_bad = 1;
		n++;
		back = py.PyFrame_GetBack(f);
		py.Py_DecRef(f);
		f = back;
	}
	if (f) {
		*flags |= TRACE_STACK_PYTHON_CUT;
		py.Py_DecRef(f);
	}
	if (gc == 1)
		py.PyGC_Enable();
	if (py.PyErr_Occurred())
		py.PyErr_Clear();
	py.PyErr_Restore(et, ev, etb);
	return is_bad ? -1 : (int)n;
}

/* Writer: is a CPython with the functions above in the process? Published once, complete.
 * Context: sym_lock held. */
static void py_look_locked(void)
{
	const char *(*get_version)(void);
	struct py_api p;
	const char *v;
	int major = 0, minor = 0;
	size_t i;

	memset(&p, 0, sizeof(p));
#define SYM(field, name) (p.field = (__typeof__(p.field))resolve_dlsym(RTLD_DEFAULT, name))
	if (!SYM(Py_IsInitialized, "Py_IsInitialized") || !SYM(PyGILState_Check, "PyGILState_Check") ||
	    !SYM(PyEval_GetFrame, "PyEval_GetFrame") || !SYM(PyFrame_GetBack, "PyFrame_GetBack") ||
	    !SYM(PyFrame_GetCode, "PyFrame_GetCode") ||
	    !SYM(PyFrame_GetLineNumber, "PyFrame_GetLineNumber") ||
	    !SYM(PyObject_GetAttr, "PyObject_GetAttr") ||
	    !SYM(PyUnicode_AsUTF8AndSize, "PyUnicode_AsUTF8AndSize") ||
	    !SYM(PyUnicode_InternFromString, "PyUnicode_InternFromString") ||
	    !SYM(Py_IncRef, "Py_IncRef") || !SYM(Py_DecRef, "Py_DecRef") ||
	    !SYM(PyErr_Fetch, "PyErr_Fetch") || !SYM(PyErr_Restore, "PyErr_Restore") ||
	    !SYM(PyErr_Clear, "PyErr_Clear") || !SYM(PyErr_Occurred, "PyErr_Occurred"))
		return;
	SYM(PyFrame_GetLasti, "PyFrame_GetLasti");	/* 3.11 */
	if (!SYM(tstate_get, "PyThreadState_GetUnchecked"))	/* 3.13 */
		SYM(tstate_get, "_PyThreadState_UncheckedGet");	/* 3.5 - 3.12 */
	if (SYM(PyGC_Disable, "PyGC_Disable") && !SYM(PyGC_Enable, "PyGC_Enable"))
		p.PyGC_Disable = NULL;
#undef SYM
	get_version = (__typeof__(get_version))resolve_dlsym(RTLD_DEFAULT, "Py_GetVersion");
	v = get_version ? get_version() : NULL;
	if (!v || sscanf(v, "%d.%d", &major, &minor) != 2 || major != 3 || minor < 9)
		return;		/* PyFrame_GetBack and PyFrame_GetCode came in 3.9 */
	p.has_qualname = minor >= 11;
	/* A thread without the GIL: its frames as the interpreter keeps them, on the builds
	 * whose layout is known (not the free-threaded ones: their objects differ). */
	for (i = 0; i < sizeof(py_layouts) / sizeof(py_layouts[0]); i++)
		if (py_layouts[i].minor == minor && !strstr(v, "free-threading"))
			p.layout = &py_layouts[i];
	p.PyGILState_GetThisThreadState = (__typeof__(p.PyGILState_GetThisThreadState))
		resolve_dlsym(RTLD_DEFAULT, "PyGILState_GetThisThreadState");
	p.code_type = resolve_dlsym(RTLD_DEFAULT, "PyCode_Type");
	p.unicode_type = resolve_dlsym(RTLD_DEFAULT, "PyUnicode_Type");
	p.bytes_type = resolve_dlsym(RTLD_DEFAULT, "PyBytes_Type");
	if (!p.PyGILState_GetThisThreadState || !p.code_type || !p.unicode_type || !p.bytes_type)
		p.layout = NULL;
	py = p;
	atomic_store_explicit(&has_py, 1, memory_order_release);
}


/* ---- Capture (app threads) ---- */

static inline int in_shim(const void *pc)
{
	return (uintptr_t)pc >= st.shim_lo && (uintptr_t)pc < st.shim_hi;
}

/* Offset of the stack's key (what makes two stacks the same) in its STACK record. */
#define STACK_KEY_OFF offsetof(struct trace_rec_stack, nr_native)

/*
 * A stack not in the table: under the meta lock, looked for again, then its STACK record
 * appended and the stack made findable in the same critical section (so every CALL_STACK that
 * names it comes after it in the file). Returns its id, or 0 (counted).
 */
static __attribute__((noinline)) uint32_t stack_define(struct trace_rec_stack *s, size_t size,
						       uint64_t hash)
{
	const uint8_t *key = (const uint8_t *)s + STACK_KEY_OFF;
	uint32_t len = (uint32_t)(size - STACK_KEY_OFF), id;
	void *rec;

	if (rec_meta_take() < 0) {
		count(&st.nr_lost);
		return 0;
	}
	id = stack_table_find(&st.table, hash, key, len);
	if (id)
		goto out;
	if (!stack_table_has_room(&st.table, len)) {
		count(&st.nr_full);
		goto out;
	}
	rec = rec_meta_reserve(size);
	if (!rec) {
		count(&st.nr_lost);
		goto out;
	}
	s->hdr.type = TRACE_REC_STACK;
	s->hdr.size = (uint16_t)size;
	s->hdr.dt_ns = 0;
	s->id = st.next_id;
	memcpy(rec, s, size);
	stack_table_insert(&st.table, hash, key, len, s->id);	/* has room */
	id = st.next_id++;
out:
	rec_meta_give();
	return id;
}

void stacks_capture(struct shim_tls *t, const struct hook_ctx *h)
{
	uint64_t buf[TRACE_STACK_BYTES(TRACE_STACK_MAX_FRAMES, TRACE_STACK_MAX_FRAMES) / 8];
	void *pcs[TRACE_STACK_MAX_FRAMES + STACK_SKIP_MAX + 1];
	struct trace_rec_stack *s = (void *)buf;
	struct trace_rec_call_stack *r;
	struct trace_stack_py *pyf;
	struct tbuf *b = t->buf;
	uint32_t depth = shim.cfg.stack_depth, id;
	uint64_t *pc, hash;
	int n, skip, keep, nr_py, i, want = (int)depth + STACK_SKIP_MAX + 1;
	size_t size;

	if (unlikely(!atomic_load_explicit(&st.ready, memory_order_acquire) || !b)) {
		count(&st.nr_not_ready);
		return;
	}
	memset(s, 0, sizeof(*s));

	/*
	 * Native: the shim's own frames (this function, the hook) are on top; left out. The walk
	 * through cached unwind rules (unwind.c) where it can, backtrace() where it cannot: the
	 * same frames either way.
	 */
	n = unwind_stack(b->unwind_cache, pcs, want);
	if (n < 0) {
		n = backtrace(pcs, want);
		count(&st.nr_slow);
	}
	for (skip = 0; skip < n && in_shim(pcs[skip]); skip++)
		;
	keep = n - skip;
	if (keep > (int)depth || n == want) {
		s->flags |= TRACE_STACK_NATIVE_CUT;
		if (keep > (int)depth)
			keep = (int)depth;
	}
	pc = (uint64_t *)(s + 1);
	for (i = 0; i < keep; i++)
		pc[i] = (uint64_t)(uintptr_t)pcs[skip + i];
	s->nr_native = (uint16_t)keep;

	/* Python, innermost first, after the native frames. */
	pyf = (struct trace_stack_py *)(pc + keep);
	nr_py = py_frames(b, pyf, depth, &s->flags);
	if (nr_py < 0) {
		count(&st.nr_names);
		return;
	}
	s->nr_python = (uint16_t)nr_py;

	size = TRACE_STACK_BYTES(keep, nr_py);
	hash = stack_table_hash((const uint8_t *)s + STACK_KEY_OFF, size - STACK_KEY_OFF);
	id = stack_table_find(&st.table, hash, (const uint8_t *)s + STACK_KEY_OFF,
			      (uint32_t)(size - STACK_KEY_OFF));
	if (!id && !(id = stack_define(s, size, hash)))
		return;

	r = rec_begin(t, TRACE_REC_CALL_STACK, sizeof(*r), h->t0);
	if (!r) {
		count(&st.nr_lost);
		return;
	}
	r->stack = id;
	r->api = h->stack_api;
	r->why = h->stack_why;
	r->seq = h->seq;
	rec_commit(t, r);
	count(&st.nr_captured);
	if (s->flags & TRACE_STACK_PYTHON)
		count(&st.nr_python);
	if (s->flags & TRACE_STACK_NO_GIL)
		count(&st.nr_no_gil);
	if (s->flags & TRACE_STACK_PYTHON_UNLOCKED)
		count(&st.nr_unlocked);
}

/* ---- Where an address lies (the loader thread's questions) ---- */

struct pc_where {
	uintptr_t addr;			/* looked up (a return address less one) */
	int is_found;
	uintptr_t bias;
	char path[PATH_MAX];
	uint8_t build_id[64];
	size_t build_id_len;
};

/* The GNU build-id among the notes of @n bytes at @p. */
static void find_build_id(struct pc_where *w, const uint8_t *p, size_t n)
{
	while (n >= sizeof(ElfW(Nhdr))) {
		const ElfW(Nhdr) *nh = (const void *)p;
		size_t name = (nh->n_namesz + 3) & ~(size_t)3, desc = (nh->n_descsz + 3) & ~(size_t)3;
		size_t all = sizeof(*nh) + name + desc;

		if (all > n || name < nh->n_namesz || desc < nh->n_descsz)
			return;
		if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 &&
		    !memcmp(p + sizeof(*nh), "GNU", 4) && nh->n_descsz <= sizeof(w->build_id)) {
			memcpy(w->build_id, p + sizeof(*nh) + name, nh->n_descsz);
			w->build_id_len = nh->n_descsz;
			return;
		}
		p += all;
		n -= all;
	}
}

static int where_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct pc_where *w = arg;
	int i, is_in = 0;

	(void)size;
	for (i = 0; i < info->dlpi_phnum && !is_in; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		is_in = ph->p_type == PT_LOAD && w->addr >= a && w->addr - a < ph->p_memsz;
	}
	if (!is_in)
		return 0;
	w->is_found = 1;
	w->bias = info->dlpi_addr;
	if (info->dlpi_name && info->dlpi_name[0]) {
		snprintf(w->path, sizeof(w->path), "%s", info->dlpi_name);
	} else {
		/* The main program (its name is empty): the file it was run from. */
		ssize_t n = readlink("/proc/self/exe", w->path, sizeof(w->path) - 1);

		w->path[n > 0 ? n : 0] = 0;
	}
	for (i = 0; i < info->dlpi_phnum && !w->build_id_len; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_NOTE)
			find_build_id(w, (const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
				      ph->p_memsz);
	}
	return 1;
}

/* The mapped range of the object holding this code: the shim's own frames. */
static int shim_range_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t me = (uintptr_t)&stacks_capture, lo = UINTPTR_MAX, hi = 0;
	int i, is_mine = 0;

	(void)size;
	(void)arg;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t a = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type != PT_LOAD)
			continue;
		if (me >= a && me < a + ph->p_memsz)
			is_mine = 1;
		if (a < lo)
			lo = a;
		if (a + ph->p_memsz > hi)
			hi = a + ph->p_memsz;
	}
	if (!is_mine)
		return 0;
	st.shim_lo = lo;
	st.shim_hi = hi;
	return 1;
}

/* ---- The loader thread: every call into the dynamic loader ---- */

/*
 * Every call stack capture makes into the dynamic loader (glibc's first backtrace(), which
 * loads libgcc_s; dlopen, dlsym, dl_iterate_phdr, dladdr) runs on a thread of its own,
 * gpushim-stacks, never on the writer or an application thread: a thread that ends the
 * process can hold the loader's lock for good (exit() from a constructor dlopen runs, a fatal
 * signal inside dlopen), and the writer must still reach END. The writer asks where one
 * address lies at a time and waits LOADER_WAIT_MS at most (LOADER_END_WAIT_MS in all once the
 * process is ending); an address not answered in time gets no PC record now (a later stack
 * holding it asks again), and while the thread is still inside the loader nothing more is
 * asked. The thread starts with the writer (stacks_start), on the thread that starts the
 * writer, and makes capture possible first (stack walks, the shim's own range, Python).
 */
#define LOADER_WAIT_MS 100
#define LOADER_END_WAIT_MS 200
#define SYM_MAX 16384			/* a longer symbol (deep C++ templates) is not written */

enum { LOADER_IDLE = 0, LOADER_ASKED = 1, LOADER_ANSWERED = 2 };

static struct {
	_Atomic int state;		/* futex word: LOADER_*; the writer asks, the thread answers */
	_Atomic int has_thread;		/* the thread runs in this process (set after the writer starts) */
	int is_busy;			/* writer: an answer is late; nothing asked until it comes */
	int is_ending;			/* writer: stacks_writer_ending */
	uint64_t end_deadline_ns;	/* writer: the ending's budget, from its first question */
	uint64_t pc;			/* the question (written while IDLE) */
	struct pc_where w;		/* the answer (written while ASKED): where it lies, */
	char sym[SYM_MAX];		/* its dynamic symbol (empty: none), */
	uintptr_t sym_addr;		/* that symbol's address */
} ld;

/* Capture's preparations, once a process (a fork child has them). Context: sym_lock held. */
static void loader_prime(void)
{
	void *prime[4];

	if (!st.shim_hi)
		dl_iterate_phdr(shim_range_cb, NULL);
	/* glibc loads libgcc_s's unwinder at the first backtrace(): here, not in a CUDA call.
	 * Its FDE lookup then serves the cached walk (unwind.c); without it, backtrace() alone. */
	backtrace(prime, 4);
	if (!atomic_load(&st.is_unwind_set)) {
		void *gcc = dlopen("libgcc_s.so.1", RTLD_NOW | RTLD_NOLOAD);

		unwind_init(gcc ? (unwind_find_fde_fn)resolve_dlsym(gcc, "_Unwind_Find_FDE") : NULL);
		atomic_store(&st.is_unwind_set, 1);
	}
	if (!atomic_load_explicit(&has_py, memory_order_relaxed))
		py_look_locked();
}

/* Answer the question ld.pc into ld.w, ld.sym. Context: sym_lock held. */
static void loader_answer(void)
{
	Dl_info di;

	memset(&ld.w, 0, sizeof(ld.w));
	ld.sym[0] = 0;
	ld.sym_addr = 0;
	ld.w.addr = (uintptr_t)(ld.pc ? ld.pc - 1 : 0);	/* the call, not the next instruction */
	if (ld.pc && dl_iterate_phdr(where_cb, &ld.w) && ld.w.is_found &&
	    dladdr((void *)ld.w.addr, &di) && di.dli_sname && di.dli_saddr &&
	    strlen(di.dli_sname) < sizeof(ld.sym)) {
		strcpy(ld.sym, di.dli_sname);
		ld.sym_addr = (uintptr_t)di.dli_saddr;
	}
}

static void *loader_main(void *arg)
{
	uint64_t looked_ns;

	(void)arg;
	pthread_setname_np(pthread_self(), "gpushim-stacks");	/* only_ours_left: ours */
	pthread_mutex_lock(&sym_lock);
	loader_prime();
	pthread_mutex_unlock(&sym_lock);
	looked_ns = clock_now_ns();
	atomic_store_explicit(&st.ready, 1, memory_order_release);
	futex_wake_all(&st.ready);
	for (;;) {
		int state = atomic_load_explicit(&ld.state, memory_order_acquire);

		if (state != LOADER_ASKED) {
			/* Idle: a Python loaded since (an embedding program) is looked for. */
			futex_wait_ms(&ld.state, state, 1000);
			if (!atomic_load_explicit(&has_py, memory_order_relaxed) &&
			    clock_now_ns() - looked_ns >= PY_LOOK_EVERY_NS) {
				pthread_mutex_lock(&sym_lock);
				py_look_locked();
				pthread_mutex_unlock(&sym_lock);
				looked_ns = clock_now_ns();
			}
			continue;
		}
		pthread_mutex_lock(&sym_lock);
		loader_answer();
		pthread_mutex_unlock(&sym_lock);
		atomic_store_explicit(&ld.state, LOADER_ANSWERED, memory_order_release);
		futex_wake_all(&ld.state);
	}
	return NULL;
}

/* Where @pc lies: 1 with the answer in ld, 0 when none came in time. Context: the writer. */
static int loader_ask(uint64_t pc)
{
	uint64_t now = clock_now_ns(), deadline = now + (uint64_t)LOADER_WAIT_MS * 1000000u;
	int state;

	if (!atomic_load_explicit(&ld.has_thread, memory_order_acquire))
		return 0;
	if (ld.is_busy) {
		if (atomic_load_explicit(&ld.state, memory_order_acquire) != LOADER_ANSWERED)
			return 0;	/* still inside the loader */
		ld.is_busy = 0;		/* a late answer to an old question: dropped */
	}
	if (ld.is_ending) {
		if (!ld.end_deadline_ns)
			ld.end_deadline_ns = now + (uint64_t)LOADER_END_WAIT_MS * 1000000u;
		if (ld.end_deadline_ns < deadline)
			deadline = ld.end_deadline_ns;
	}
	ld.pc = pc;
	atomic_store_explicit(&ld.state, LOADER_ASKED, memory_order_release);
	futex_wake_all(&ld.state);
	while (atomic_load_explicit(&ld.state, memory_order_acquire) == LOADER_ASKED &&
	       futex_wait_until(&ld.state, LOADER_ASKED, deadline))
		;
	state = atomic_load_explicit(&ld.state, memory_order_acquire);
	if (state != LOADER_ANSWERED) {
		ld.is_busy = 1;
		return 0;
	}
	atomic_store_explicit(&ld.state, LOADER_IDLE, memory_order_relaxed);
	return 1;
}

void stacks_writer_ending(int ending)
{
	ld.is_ending = ending;
	ld.end_deadline_ns = 0;
}

/* ---- Start, readiness ---- */

void stacks_start(void)
{
	size_t bytes = stack_table_bytes(STACK_SLOTS, STACK_ARENA_BYTES);
	sigset_t all, old;
	pthread_t thread;
	int ret;

	if (!shim.cfg.stacks)
		return;
	if (!st.mem) {
		void *mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE,
				 MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

		if (mem == MAP_FAILED) {
			shim_log(LOG_WARN, "call stacks: cannot map the stack table (%s); no stacks "
					   "are captured, counted as not ready", strerror(errno));
			return;
		}
		st.mem = mem;
		stack_table_init(&st.table, mem, STACK_SLOTS, STACK_ARENA_BYTES);
	} else {
		stack_table_clear(&st.table);	/* a fork child's trace */
	}
	st.next_id = 1;
	st.name_budget = STACK_NAME_BUDGET;
	ld.is_busy = 0;
	atomic_store(&ld.state, LOADER_IDLE);
	/* The application's signal handlers must never run on the shim's threads. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	ret = pthread_create(&thread, NULL, loader_main, NULL);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (ret) {
		shim_log(LOG_WARN, "call stacks: cannot start a thread (%s); no stacks are captured, "
				   "counted as not ready", strerror(ret));
		return;
	}
	pthread_detach(thread);
	atomic_store_explicit(&ld.has_thread, 1, memory_order_release);
}

void stacks_wait_ready(void)
{
	uint64_t deadline;

	if (!shim.cfg.stacks || atomic_load_explicit(&st.ready, memory_order_acquire))
		return;
	deadline = clock_now_ns() + (uint64_t)shim.cfg.stack_ready_ms * 1000000u;
	while (!atomic_load_explicit(&st.ready, memory_order_acquire) &&
	       futex_wait_until(&st.ready, 0, deadline))
		;
}

/* ---- Writer: PC records ---- */

struct pc_seen {
	UT_hash_handle hh;
	uint64_t pc;
};

static struct pc_seen *pcs_seen;	/* writer: addresses the trace has a PC record of */

/* A STRING id for @len bytes of @s, its STRING record emitted first when new. */
static uint32_t writer_intern(const char *s, size_t len, tbuf_emit_fn emit)
{
	static uint64_t rec[(TRACE_MAX_RECORD + 8) / 8];
	size_t max = TRACE_MAX_RECORD - sizeof(struct trace_rec_string) - 8;
	uint32_t id;
	int is_new;

	if (!len)
		return 0;
	if (len > max)
		len = max;
	id = rec_intern(s, len, &is_new);
	if (is_new) {
		rec_string_encode(rec, id, s, len);
		emit(NULL, NULL, rec, (uint32_t)rec_string_size(len));
	}
	return id;
}

/* The PC record of @pc through @emit: 0, or -1 when the loader thread did not answer. */
static int describe_pc(uint64_t pc, tbuf_emit_fn emit)
{
	struct trace_rec_pc r;

	if (!loader_ask(pc))
		return -1;
	memset(&r, 0, sizeof(r));
	r.hdr.type = TRACE_REC_PC;
	r.hdr.size = sizeof(r);
	r.pc = pc;
	if (ld.w.is_found) {
		char hex[2 * sizeof(ld.w.build_id) + 1];
		size_t i;

		r.offset = pc - ld.w.bias;
		r.module = writer_intern(ld.w.path, strlen(ld.w.path), emit);
		for (i = 0; i < ld.w.build_id_len; i++)
			snprintf(hex + 2 * i, 3, "%02x", ld.w.build_id[i]);
		r.build_id = ld.w.build_id_len ? writer_intern(hex, 2 * ld.w.build_id_len, emit) : 0;
		if (ld.sym[0] && pc >= ld.sym_addr && pc - ld.sym_addr <= UINT32_MAX) {
			r.symbol = writer_intern(ld.sym, strlen(ld.sym), emit);
			r.sym_offset = (uint32_t)(pc - ld.sym_addr);
		}
	}
	emit(NULL, NULL, &r, sizeof(r));
	return 0;
}

void stacks_writer_pcs(const struct trace_rec_stack *s, size_t size, tbuf_emit_fn emit)
{
	const uint64_t *pc = (const void *)(s + 1);
	uint16_t i;

	if (size < sizeof(*s) || TRACE_STACK_BYTES(s->nr_native, s->nr_python) > size)
		return;
	for (i = 0; i < s->nr_native; i++) {
		struct pc_seen *e;

		HASH_FIND(hh, pcs_seen, &pc[i], sizeof(pc[i]), e);
		if (e || describe_pc(pc[i], emit) < 0)
			continue;	/* described, or not now: asked again in a later stack */
		e = malloc(sizeof(*e));
		if (!e)
			continue;
		e->pc = pc[i];
		HASH_ADD(hh, pcs_seen, pc, sizeof(e->pc), e);
	}
}

void stacks_note(void)
{
	char text[320];

	if (!shim.cfg.stacks) {
		rec_note(TRACE_NOTE_STACKS, clock_now_ns(), "off");
		return;
	}
	snprintf(text, sizeof(text),
		 "depth %u, launches 1 in %u; captured %llu, python %llu, no GIL %llu, failed "
		 "%llu (not ready %llu, table full %llu, names %llu, lost %llu); slow walks %llu; "
		 "python without the GIL %llu",
		 shim.cfg.stack_depth, shim.cfg.stack_sample,
		 (unsigned long long)atomic_load(&st.nr_captured),
		 (unsigned long long)atomic_load(&st.nr_python),
		 (unsigned long long)atomic_load(&st.nr_no_gil),
		 (unsigned long long)(atomic_load(&st.nr_not_ready) + atomic_load(&st.nr_full) +
				      atomic_load(&st.nr_names) + atomic_load(&st.nr_lost)),
		 (unsigned long long)atomic_load(&st.nr_not_ready),
		 (unsigned long long)atomic_load(&st.nr_full),
		 (unsigned long long)atomic_load(&st.nr_names),
		 (unsigned long long)atomic_load(&st.nr_lost),
		 (unsigned long long)atomic_load(&st.nr_slow),
		 (unsigned long long)atomic_load(&st.nr_unlocked));
	rec_note(TRACE_NOTE_STACKS, clock_now_ns(), text);
}

void stacks_reset_after_fork(void)
{
	struct pc_seen *e, *tmp;

	atomic_store(&st.ready, 0);	/* until the child's loader thread is up */
	atomic_store_explicit(&ld.has_thread, 0, memory_order_relaxed);		/* the parent's is not in the child */
	ld.is_busy = 0;
	ld.is_ending = 0;
	ld.end_deadline_ns = 0;
	atomic_store(&ld.state, LOADER_IDLE);
	HASH_ITER(hh, pcs_seen, e, tmp) {
		HASH_DEL(pcs_seen, e);
		free(e);
	}
	atomic_store(&st.nr_captured, 0);
	atomic_store(&st.nr_python, 0);
	atomic_store(&st.nr_no_gil, 0);
	atomic_store(&st.nr_unlocked, 0);
	atomic_store(&st.nr_not_ready, 0);
	atomic_store(&st.nr_full, 0);
	atomic_store(&st.nr_names, 0);
	atomic_store(&st.nr_lost, 0);
	atomic_store(&st.nr_slow, 0);
}
