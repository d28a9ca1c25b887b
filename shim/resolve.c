// SPDX-License-Identifier: MIT
/*
 * resolve.c - where the real driver entry points come from, and the interposed dlsym().
 * Owns: the real-pointer table, the map from a real libcuda address to its wrapper, the shim's
 * own driver helpers (drv), and dlsym. It never records, never logs on the lookup path, and
 * never waits for another thread (the loader lock may be held by the caller: see resolve_ensure).
 * Runs on: any thread, from dlsym(), cuGetProcAddress and the first call of a hook.
 *
 * The rule (DESIGN §2): a query is answered with a wrapper only when the address the real lookup
 * returned is the address of a libcuda export the shim wraps. The driver picks the variant for
 * (symbol, version, flags); the shim only swaps the pointer it picked.
 */
#define _GNU_SOURCE
#include "shim.h"

#include <dlfcn.h>
#include <string.h>

void *_Atomic shim_real[API__COUNT];
struct shim_driver drv;

/* ---- The wrapped entry points ---- */

#define API_NAME(n, fam, fl) [API_##n] = #n,
static const char *const api_names[API__COUNT] = { GPUSHIM_APIS(API_NAME) };
#undef API_NAME

/*
 * The hooks are defined in hooks_*.c with their exact CUDA prototypes; here only their addresses
 * matter, so they are declared with a placeholder type.
 */
#define HOOK_DECL(n, fam, fl) void hook_##n(void) SHIM_HIDDEN;
GPUSHIM_APIS(HOOK_DECL)
#undef HOOK_DECL
#define HOOK_ADDR(n, fam, fl) [API_##n] = (void *)hook_##n,
static void *const hook_addr[API__COUNT] = { GPUSHIM_APIS(HOOK_ADDR) };
#undef HOOK_ADDR

static int api_by_name(const char *name)
{
	int i;

	for (i = 1; i < API__COUNT; i++)
		if (api_names[i] && !strcmp(api_names[i], name))
			return i;
	return 0;
}

/* ---- Address map: real libcuda address -> wrapper ---- */

/* Power of two, about 3x the number of entry points: short probe sequences. */
#define MAP_SIZE 512

struct map_slot {
	const void *real;
	int api;
};

static struct map_slot addr_map[MAP_SIZE];

enum { RESOLVE_NONE = 0, RESOLVE_BUILDING = 1, RESOLVE_DONE = 2 };

/* Wrappers handed out per door, for the trace's DOORS note (diagnostics, not hot). */
static _Atomic uint64_t nr_by_dlsym, nr_by_gpa;

void resolve_door_counts(uint64_t *by_dlsym, uint64_t *by_gpa)
{
	*by_dlsym = atomic_load(&nr_by_dlsym);
	*by_gpa = atomic_load(&nr_by_gpa);
}

void resolve_count_gpa(void)
{
	atomic_fetch_add_explicit(&nr_by_gpa, 1, memory_order_relaxed);
}
static _Atomic int resolve_state;

static size_t map_hash(const void *p)
{
	uint64_t x = (uintptr_t)p;

	x ^= x >> 29;
	x *= 0x9e3779b97f4a7c15ull;
	return (size_t)(x >> 32) & (MAP_SIZE - 1);
}

static void map_insert(const void *real, int api)
{
	size_t i = map_hash(real);

	while (addr_map[i].real && addr_map[i].real != real)
		i = (i + 1) & (MAP_SIZE - 1);
	addr_map[i].real = real;
	addr_map[i].api = api;
}

static int map_find(const void *real)
{
	size_t i = map_hash(real);

	while (addr_map[i].real) {
		if (addr_map[i].real == real)
			return addr_map[i].api;
		i = (i + 1) & (MAP_SIZE - 1);
	}
	return 0;
}

/* ---- The real dlsym ---- */

typedef void *(*dlsym_fn)(void *, const char *);

/* Read by the assembly entry of dlsym below: must stay a plain hidden global. */
SHIM_HIDDEN dlsym_fn shim_real_dlsym_ptr;
SHIM_HIDDEN int shim_dlsym_passthrough;

/* Runs inside sanitizer runtimes' initialization (they look up functions with dlsym before
 * their own state exists): never instrumented. */
#define NOT_SANITIZED __attribute__((no_sanitize("address", "thread", "undefined")))

NOT_SANITIZED static dlsym_fn real_dlsym(void)
{
	dlsym_fn f = __atomic_load_n(&shim_real_dlsym_ptr, __ATOMIC_ACQUIRE);

	if (likely(f))
		return f;
	f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.34");
	if (!f)
		f = (dlsym_fn)dlvsym(RTLD_NEXT, "dlsym", "GLIBC_2.2.5");
	__atomic_store_n(&shim_real_dlsym_ptr, f, __ATOMIC_RELEASE);
	return f;
}

void *resolve_dlsym(void *handle, const char *name)
{
	dlsym_fn f = real_dlsym();
	void *p = f ? f(handle, name) : NULL;

	/*
	 * A failed lookup leaves a message allocated in the calling thread's dlerror() state until
	 * that thread's next dl* call or its end - and a main thread that leaves by pthread_exit
	 * never frees it. Read it and read again: the second call frees it and leaves no error.
	 */
	if (!p && f) {
		dlerror();
		dlerror();
	}
	return p;
}

/* ---- Building the tables ---- */

static void *libcuda_handle;

#define DRV(name) drv.name = (__typeof__(drv.name))resolve_dlsym(libcuda_handle, #name)

static void resolve_build(void)
{
	int i;

	for (i = 1; i < API__COUNT; i++) {
		void *p = resolve_dlsym(libcuda_handle, api_names[i]);
		void *expected = NULL;

		if (!p)
			continue;
		atomic_compare_exchange_strong(&shim_real[i], &expected, p);
		map_insert(p, i);
	}
	DRV(cuFuncGetName);
	DRV(cuKernelGetName);
	DRV(cuFuncGetAttribute);
	DRV(cuKernelGetAttribute);
	DRV(cuOccupancyMaxActiveBlocksPerMultiprocessor);
	DRV(cuCtxGetDevice);
	DRV(cuCtxGetCurrent);
	DRV(cuCtxSetCurrent);
	DRV(cuDeviceGetCount);
	DRV(cuDeviceGet);
	DRV(cuDeviceGetName);
	DRV(cuDeviceTotalMem_v2);
	DRV(cuDeviceGetAttribute);
	DRV(cuDriverGetVersion);
}

int resolve_ensure(void)
{
	int expected = RESOLVE_NONE;
	void *h;

	if (likely(atomic_load_explicit(&resolve_state, memory_order_acquire) == RESOLVE_DONE))
		return 1;
	if (!atomic_compare_exchange_strong(&resolve_state, &expected, RESOLVE_BUILDING))
		return 0;	/* another thread is building: do not wait (loader lock) */

	/*
	 * libcuda is resolved from the copy already in the process; the shim never loads it. Any
	 * path the application used (libcuda.so, an absolute path) has this soname.
	 */
	h = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_LAZY);
	if (!h) {
		dlerror();	/* leave no error behind for the application's next dlerror() */
		atomic_store_explicit(&resolve_state, RESOLVE_NONE, memory_order_release);
		return 0;
	}
	libcuda_handle = h;
	resolve_build();
	atomic_store_explicit(&resolve_state, RESOLVE_DONE, memory_order_release);
	return 1;
}

void *resolve_driver_sym(const char *name)
{
	if (resolve_ensure())
		return resolve_dlsym(libcuda_handle, name);
	return resolve_dlsym(RTLD_NEXT, name);
}

static CUresult missing_entry_point(void)
{
	return CUDA_ERROR_NOT_FOUND;
}

void *resolve_real_slow(int api)
{
	void *p;

	resolve_ensure();
	p = atomic_load(&shim_real[api]);
	if (!p) {
		/*
		 * A direct (-lcuda) caller before libcuda could be found by soname: the next
		 * definition after the shim in the global scope is libcuda's.
		 */
		p = resolve_dlsym(RTLD_NEXT, api_names[api]);
		if (p) {
			void *expected = NULL;

			atomic_compare_exchange_strong(&shim_real[api], &expected, p);
			p = atomic_load(&shim_real[api]);
		}
	}
	/*
	 * The driver lacks this entry point (a newer ABI than it knows). Calling a function that
	 * takes no arguments with some is harmless in the SysV ABIs; it reports the absence.
	 */
	return p ? p : (void *)missing_entry_point;
}

static int is_libcuda_path(const char *path)
{
	const char *base = path ? strrchr(path, '/') : NULL;

	base = base ? base + 1 : path;
	return base && !strncmp(base, "libcuda.so", 10);
}

void *resolve_wrapper_for(const void *real)
{
	Dl_info info;
	int api;

	if (likely(resolve_ensure())) {
		api = map_find(real);
		return api ? hook_addr[api] : NULL;
	}
	/*
	 * The tables are not built yet (libcuda is being loaded, or another thread is building
	 * them): identify this one address by its symbol instead.
	 */
	if (!dladdr(real, &info) || info.dli_saddr != real || !info.dli_sname ||
	    !is_libcuda_path(info.dli_fname))
		return NULL;
	api = api_by_name(info.dli_sname);
	if (!api)
		return NULL;
	{
		void *expected = NULL;

		atomic_compare_exchange_strong(&shim_real[api], &expected, (void *)real);
	}
	return atomic_load(&shim_real[api]) == real ? hook_addr[api] : NULL;
}

/* ---- dlsym ---- */

/*
 * Lookups made by the driver and its companion libraries stay untouched: they are the driver's
 * own business, and wrapping them would record work the application did not ask for.
 */
static int caller_is_driver(const void *caller)
{
	Dl_info info;
	const char *base;

	if (!caller || !dladdr(caller, &info) || !info.dli_fname)
		return 0;
	base = strrchr(info.dli_fname, '/');
	base = base ? base + 1 : info.dli_fname;
	return !strncmp(base, "libcuda.so", 10) || !strncmp(base, "libnvidia-", 10) ||
	       !strncmp(base, "libcupti.so", 11) || !strncmp(base, "libnvperf", 9);
}

/*
 * Everything that is not a "cu" name on a real handle was already tail-jumped to the real dlsym
 * by the entry below; this is called with the original return address intact.
 */
SHIM_HIDDEN void *shim_dlsym_slow(void *handle, const char *name);
SHIM_HIDDEN __attribute__((used, noinline)) void *shim_dlsym_slow(void *handle, const char *name)
{
	const void *caller = __builtin_return_address(0);
	int saved = errno;
	dlsym_fn real = real_dlsym();
	void *p, *w;

	if (!real)
		return NULL;
	if (handle == RTLD_NEXT || !name || name[0] != 'c' || name[1] != 'u' || name[2] < 'A' ||
	    name[2] > 'Z' || shim_dlsym_passthrough)
		return real(handle, name);
	/* Our own lookups happen first, so the dlerror() state the caller sees is its own. */
	resolve_ensure();
	p = real(handle, name);
	if (p && (w = resolve_wrapper_for(p)) && !caller_is_driver(caller)) {
		p = w;
		atomic_fetch_add_explicit(&nr_by_dlsym, 1, memory_order_relaxed);
	}
	errno = saved;
	return p;
}

/*
 * dlsym itself. glibc resolves RTLD_NEXT relative to the return address of the dlsym call, so a
 * call from C here would make "next" mean "next after libgpushim" and break every other
 * interposer. The entry therefore jumps (never calls) to the real dlsym for RTLD_NEXT and for
 * every name not starting with "cu" - the bulk of a Python process's lookups - and to the slow
 * path otherwise, in both cases leaving the caller's return address in place.
 */
/* Called from the entry before anything resolved the real dlsym (another interposer's
 * initialization can come before the shim's constructor). Returns it, or NULL. */
SHIM_HIDDEN void *shim_real_dlsym_resolve(void);
SHIM_HIDDEN NOT_SANITIZED __attribute__((used, noinline)) void *shim_real_dlsym_resolve(void)
{
	int saved = errno;
	void *f = (void *)real_dlsym();

	errno = saved;
	return f;
}

#if defined(__x86_64__)
__asm__(".text\n"
	".globl dlsym\n"
	".type dlsym, @function\n"
	".p2align 4\n"
	"dlsym:\n"
	"	movq shim_real_dlsym_ptr(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jnz 3f\n"
	/* Not resolved yet: resolve it, keeping the arguments and the caller's frame. */
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	subq $8, %rsp\n"		/* 16-byte alignment for the call */
	"	call shim_real_dlsym_resolve\n"
	"	addq $8, %rsp\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	testq %rax, %rax\n"
	"	jz 4f\n"
	"3:	cmpq $-1, %rdi\n"		/* RTLD_NEXT */
	"	je 2f\n"
	"	testq %rsi, %rsi\n"
	"	jz 2f\n"
	"	cmpw $0x7563, (%rsi)\n"		/* "cu" */
	"	jne 2f\n"
	"	cmpl $0, shim_dlsym_passthrough(%rip)\n"
	"	jne 2f\n"
	"	jmp shim_dlsym_slow\n"
	"2:	jmp *%rax\n"
	"4:	ret\n"				/* no real dlsym at all: NULL */
	".size dlsym, .-dlsym\n");
#else
#error "gpushim's dlsym entry is written for x86-64 only"
#endif

void resolve_init(int is_passthrough)
{
	real_dlsym();
	shim_dlsym_passthrough = is_passthrough;
}
