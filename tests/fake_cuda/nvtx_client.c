// SPDX-License-Identifier: MIT
/*
 * nvtx_client.c - a program annotated with NVTX v3 (the header-only API from the CUDA
 * toolkit), on the fake driver, with exactly known ranges and marks; and the bad input the
 * shim's NVTX injection must survive. Its output never depends on NVTX's return values (they
 * differ with a tool attached), except in `returns`, which prints them.
 *
 *   nvtx_client main      a start-up of 150 ms in a "startup" range before any CUDA call, then
 *                         20 steps: "step" (default domain) around 6 launches, inside it the
 *                         registered strings "forward" and "backward" of domain "trainer"
 *                         (category 1 and 2, colour 0xff00ff00); 4 marks; 3 start/end ranges,
 *                         two ending on another thread than the one that started them
 *   nvtx_client returns   NVTX's return values: push, pop, unbalanced pop, start ids, handles
 *   nvtx_client bad       3 + 2 unbalanced pops; 5,000 ranges nested; names longer than 256
 *                         bytes (narrow and wide), not UTF-8, wide characters that are none,
 *                         NULL and empty messages, attributes of size 0, a NULL registered
 *                         string, 3 calls with a domain handle NVTX never gave
 *   nvtx_client many N    a thread pushing and popping "many" N times, gone 200 ms before
 *                         the end (the writer has freed its ring: its losses still count)
 *   nvtx_client names N   N ranges with N different names ("name-000001", ...)
 *   nvtx_client threads   8 threads released at once, CUDA started meanwhile: each creates the
 *                         domain "shared", registers "work" in it, and makes 1,000 ranges of
 *                         it, 1,000 of its own name ("thread N") and 10 start/end ranges
 *   nvtx_client signal    200,000 ranges and marks while a 100-us timer's handler pushes, marks
 *                         and pops (how many times: on stderr)
 *   nvtx_client fork      a range open across fork(); the child uses the parent's domain and
 *                         registered string, launches, and pops the parent's range
 *   nvtx_client nocuda    NVTX only, never CUDA
 *   nvtx_client late      5 launches; a library destructor that runs after the shim's makes
 *                         20 ranges (40 calls)
 *   nvtx_client env       prints NVTX_INJECTION64_PATH
 *   nvtx_client bench N   (scripts/bench.sh) CUDA started, then N push+pop pairs of "step"
 *                         timed in rounds the ring holds: ns a pair, wall and the thread's
 *                         CPU; the same name each time, as a loop's steps
 *
 * Expected in `main` (tests/e2e/shim_nvtx.sh): PUSH 21 in domain 0 ("startup", 20 "step"),
 * 40 in domain 1 (20 "forward", 20 "backward"), as many POPs; MARK 4; START 3, END 3; one
 * NVTX_DOMAIN "trainer"; 120 launches.
 */
#define _GNU_SOURCE
#include <cuda.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <wchar.h>

#include <nvtx3/nvToolsExt.h>

#include "nvtx_late.h"

#define STEPS 20

static CUfunction kernel(void)
{
	CUmodule mod;
	CUfunction f = NULL;

	cuInit(0);
	cuModuleLoadData(&mod, "image");
	cuModuleGetFunction(&f, mod, "_Z4spinv");
	return f;
}

static int launch(CUfunction f, CUstream s, int n)
{
	int i, ok = 0;

	for (i = 0; i < n; i++)
		ok += cuLaunchKernel(f, 132, 1, 1, 256, 1, 1, 0, s, NULL, NULL) == CUDA_SUCCESS;
	return ok;
}

static void busy_ms(int ms)
{
	struct timespec t0, t;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	do
		clock_gettime(CLOCK_MONOTONIC, &t);
	while ((t.tv_sec - t0.tv_sec) * 1000000000LL + (t.tv_nsec - t0.tv_nsec) < ms * 1000000LL);
}

static nvtxEventAttributes_t attr_registered(nvtxStringHandle_t s, uint32_t category)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = 0xff00ff00u;
	a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
	a.message.registered = s;
	return a;
}

static nvtxEventAttributes_t attr_ascii(const char *s, uint32_t category, uint32_t color)
{
	nvtxEventAttributes_t a;

	memset(&a, 0, sizeof(a));
	a.version = NVTX_VERSION;
	a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
	a.category = category;
	a.colorType = NVTX_COLOR_ARGB;
	a.color = color;
	a.messageType = NVTX_MESSAGE_TYPE_ASCII;
	a.message.ascii = s;
	return a;
}

/* ---- main ---- */

static void *end_range(void *arg)
{
	nvtxRangeEnd(*(nvtxRangeId_t *)arg);
	return NULL;
}

static void *start_range(void *arg)
{
	*(nvtxRangeId_t *)arg = nvtxRangeStartW(L"from thread");
	return NULL;
}

static int run_main(void)
{
	nvtxStringHandle_t fwd, bwd;
	nvtxEventAttributes_t a;
	nvtxDomainHandle_t dom;
	nvtxRangeId_t id1, id2 = 0, id3;
	pthread_t th;
	CUfunction f;
	CUstream s;
	int i, ok = 0;

	/* A slow start-up, annotated before CUDA is touched. */
	nvtxRangePushA("startup");
	busy_ms(150);
	nvtxMarkA("before cuda");
	nvtxRangePop();

	f = kernel();
	cuStreamCreate(&s, 0);
	dom = nvtxDomainCreateA("trainer");
	fwd = nvtxDomainRegisterStringA(dom, "forward");
	bwd = nvtxDomainRegisterStringA(dom, "backward");
	for (i = 0; i < STEPS; i++) {
		nvtxRangePushA("step");
		ok += launch(f, s, 3);
		a = attr_registered(fwd, 1);
		nvtxDomainRangePushEx(dom, &a);
		ok += launch(f, s, 2);
		nvtxDomainRangePop(dom);
		a = attr_registered(bwd, 2);
		nvtxDomainRangePushEx(dom, &a);
		ok += launch(f, s, 1);
		nvtxDomainRangePop(dom);
		nvtxRangePop();
		cuStreamSynchronize(s);
	}

	nvtxMarkA("marked");
	a = attr_ascii("colored mark", 7, 0xffff0000u);
	nvtxMarkEx(&a);
	nvtxMarkW(L"wide \u00e9");

	/* Ranges that end on another thread than the one that started them. */
	id1 = nvtxRangeStartA("handoff");
	pthread_create(&th, NULL, end_range, &id1);
	pthread_join(th, NULL);
	pthread_create(&th, NULL, start_range, &id2);
	pthread_join(th, NULL);
	nvtxRangeEnd(id2);
	a = attr_ascii("domain start", 0, 0);
	id3 = nvtxDomainRangeStartEx(dom, &a);
	nvtxDomainRangeEnd(dom, id3);

	cuCtxSynchronize();
	printf("main: %d steps, %d launches\n", STEPS, ok);
	return 0;
}

/* ---- returns ---- */

static int run_returns(void)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("returns");
	nvtxStringHandle_t str = nvtxDomainRegisterStringA(dom, "registered");
	nvtxEventAttributes_t a = attr_registered(str, 0);
	nvtxRangeId_t ids[4];
	pthread_t th;
	int p[3], q[3], i;

	for (i = 0; i < 3; i++)
		p[i] = nvtxRangePushA("level");
	for (i = 0; i < 3; i++)
		q[i] = nvtxRangePop();
	printf("push %d %d %d\npop %d %d %d\n", p[0], p[1], p[2], q[0], q[1], q[2]);
	printf("unbalanced pop %d\n", nvtxRangePop());
	p[0] = nvtxDomainRangePushEx(dom, &a);
	p[1] = nvtxRangePushA("other domain");
	q[1] = nvtxRangePop();
	q[0] = nvtxDomainRangePop(dom);
	printf("domain push %d, default push %d, pops %d %d\n", p[0], p[1], q[1], q[0]);
	ids[0] = nvtxRangeStartA("a");
	ids[1] = nvtxRangeStartA("b");
	pthread_create(&th, NULL, start_range, &ids[2]);
	pthread_join(th, NULL);
	ids[3] = nvtxDomainRangeStartEx(dom, &a);
	for (i = 0; i < 4; i++)
		nvtxRangeEnd(ids[i]);
	printf("start ids nonzero and distinct: %s\n",
	       ids[0] && ids[1] && ids[2] && ids[3] && ids[0] != ids[1] && ids[0] != ids[2] &&
			       ids[0] != ids[3] && ids[1] != ids[2] && ids[1] != ids[3] &&
			       ids[2] != ids[3] ?
		       "yes" :
		       "no");
	printf("handles: domain %s, string %s\n", dom ? "set" : "NULL", str ? "set" : "NULL");
	return 0;
}

/* ---- bad ---- */

static int run_bad(void)
{
	nvtxDomainHandle_t dom, bogus = (nvtxDomainHandle_t)(uintptr_t)0x12345;
	nvtxEventAttributes_t a;
	wchar_t wide[1001], odd[] = { 0xd800, 0x110000, L'o', L'k', 0 };
	char *huge, dname[301];
	int i, ok = 1, r;
	CUfunction f = kernel();

	/* Pops with nothing pushed. */
	for (i = 0; i < 3; i++)
		nvtxRangePop();
	dom = nvtxDomainCreateA("bad");
	nvtxDomainRangePop(dom);
	nvtxDomainRangePop(dom);

	/* Nesting 5,000 deep: with a tool the levels, without one NVTX_NO_PUSH_POP_TRACKING. */
	for (i = 0; i < 5000; i++) {
		r = nvtxRangePushA("deep");
		ok &= r == i || r == NVTX_NO_PUSH_POP_TRACKING;
	}
	for (i = 4999; i >= 0; i--) {
		r = nvtxRangePop();
		ok &= r == i || r == NVTX_NO_PUSH_POP_TRACKING;
	}

	/* 255 bytes, a two-byte character across the 256th, then 100,000 more. */
	huge = malloc(255 + 2 + 100000 + 1);
	memset(huge, 'a', 255);
	memcpy(huge + 255, "\xc3\xa9", 2);
	memset(huge + 257, 'b', 100000);
	huge[257 + 100000] = 0;
	nvtxRangePushA(huge);
	nvtxRangePop();
	free(huge);
	nvtxMarkA("bad\xff\xfe\xc3(");
	for (i = 0; i < 1000; i++)
		wide[i] = 0x0436;	/* Cyrillic zhe: two bytes in UTF-8 */
	wide[1000] = 0;
	nvtxMarkW(wide);
	nvtxMarkW(odd);
	nvtxRangePushA(NULL);
	nvtxRangePop();
	nvtxMarkEx(NULL);
	nvtxMarkA("");
	a = attr_ascii("size zero", 5, 0xff0000ffu);
	a.size = 0;
	nvtxMarkEx(&a);
	a = attr_registered(NULL, 0);
	nvtxMarkEx(&a);
	memset(dname, 'd', 300);
	dname[300] = 0;
	nvtxDomainMarkEx(nvtxDomainCreateA(dname), NULL);

	/* A handle no NVTX call returned. */
	a = attr_ascii("bogus", 0, 0);
	nvtxDomainRangePushEx(bogus, &a);
	nvtxDomainMarkEx(bogus, &a);
	nvtxDomainRangePop(bogus);

	launch(f, NULL, 1);
	cuCtxSynchronize();
	printf("bad: levels %s\n", ok ? "consistent" : "WRONG");
	return 0;
}

/* ---- many, names ---- */

static void *many_main(void *arg)
{
	long i, n = (long)arg;

	for (i = 0; i < n; i++) {
		nvtxRangePushA("many");
		nvtxRangePop();
	}
	return NULL;
}

static int run_many(long n)
{
	CUfunction f = kernel();
	pthread_t th;

	launch(f, NULL, 1);
	pthread_create(&th, NULL, many_main, (void *)n);
	pthread_join(th, NULL);
	usleep(200000);		/* the writer frees the exited thread's ring before the end */
	launch(f, NULL, 1);
	cuCtxSynchronize();
	printf("many: %ld ranges\n", n);
	return 0;
}

static int run_names(long n)
{
	CUfunction f = kernel();
	char name[32];
	long i;

	launch(f, NULL, 1);
	for (i = 1; i <= n; i++) {
		snprintf(name, sizeof(name), "name-%06ld", i);
		nvtxRangePushA(name);
		nvtxRangePop();
	}
	cuCtxSynchronize();
	printf("names: %ld ranges\n", n);
	return 0;
}

/* ---- threads ---- */

static pthread_barrier_t start_line;

static void *nvtx_thread(void *arg)
{
	long t = (long)arg, i;
	nvtxDomainHandle_t dom;
	nvtxEventAttributes_t a;
	char name[32];

	snprintf(name, sizeof(name), "thread %ld", t);
	pthread_barrier_wait(&start_line);
	dom = nvtxDomainCreateA("shared");
	a = attr_registered(nvtxDomainRegisterStringA(dom, "work"), (uint32_t)t);
	for (i = 0; i < 1000; i++) {
		nvtxDomainRangePushEx(dom, &a);
		nvtxRangePushA(name);
		nvtxRangePop();
		nvtxDomainRangePop(dom);
		if (i % 100 == 0)
			nvtxRangeEnd(nvtxRangeStartA(name));
	}
	return NULL;
}

static int run_threads(void)
{
	pthread_t th[8];
	CUfunction f;
	long i;

	/* NVTX's own first call writes its function table unguarded while other threads may
	 * read it (a race of NVTX's, whatever the tool): made before the threads exist. */
	nvtxMarkA("threads");
	pthread_barrier_init(&start_line, NULL, 9);
	for (i = 0; i < 8; i++)
		pthread_create(&th[i], NULL, nvtx_thread, (void *)i);
	pthread_barrier_wait(&start_line);
	f = kernel();		/* the writer starts while the threads record */
	launch(f, NULL, 10);
	for (i = 0; i < 8; i++)
		pthread_join(th[i], NULL);
	cuCtxSynchronize();
	printf("threads: 8 x 1000 ranges\n");
	return 0;
}

/* ---- signal ---- */

static volatile sig_atomic_t nr_signals;

static void on_alarm(int sig)
{
	int saved = errno;

	(void)sig;
	nvtxRangePushA("sig");
	nvtxMarkA("sig mark");
	nvtxRangePop();
	nr_signals++;
	errno = saved;
}

static int run_signal(void)
{
	struct itimerval it = { { 0, 100 }, { 0, 100 } }, off = { { 0, 0 }, { 0, 0 } };
	CUfunction f = kernel();
	struct sigaction sa;
	long i;

	launch(f, NULL, 1);
	nvtxMarkA("armed");	/* NVTX initialized before a handler can call it */
	on_alarm(SIGALRM);	/* the handler's names known before it runs in a signal */
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_alarm;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGALRM, &sa, NULL);
	setitimer(ITIMER_REAL, &it, NULL);
	for (i = 0; i < 200000; i++) {
		nvtxRangePushA("loop");
		nvtxMarkA("loop mark");
		nvtxRangePop();
	}
	setitimer(ITIMER_REAL, &off, NULL);
	launch(f, NULL, 1);
	cuCtxSynchronize();
	printf("signal: 200000 ranges\n");
	fprintf(stderr, "signal: %d handlers\n", (int)nr_signals);	/* differs run to run */
	return 0;
}

/* ---- fork ---- */

static int run_fork(void)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("forked");
	nvtxStringHandle_t work = nvtxDomainRegisterStringA(dom, "child work");
	nvtxEventAttributes_t a = attr_registered(work, 3);
	CUfunction f = kernel();
	int status = 0;
	pid_t pid;

	launch(f, NULL, 2);
	nvtxRangePushA("parent");
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		nvtxDomainRangePushEx(dom, &a);
		launch(f, NULL, 5);
		nvtxDomainRangePop(dom);
		nvtxMarkA("child mark");
		nvtxRangePop();		/* the parent's range */
		cuCtxSynchronize();
		printf("fork: child done\n");
		exit(0);
	}
	waitpid(pid, &status, 0);
	launch(f, NULL, 5);
	nvtxRangePop();
	cuCtxSynchronize();
	printf("fork: parent done, child exit %d\n", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	return 0;
}

/* ---- bench ---- */

static double now_ns(clockid_t clock)
{
	struct timespec t;

	clock_gettime(clock, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

/*
 * Timed in rounds of 16,384 pairs (under 1 MiB of records, half the shim's default ring), with
 * a pause between them for the writer to drain: no record dropped for want of room, no page
 * faulted in while timing. The first round is not timed.
 */
#define BENCH_ROUND 16384

static int run_bench(long n)
{
	CUfunction f = kernel();
	double wall = 0, cpu = 0, t0, c0;
	long i, r, rounds = (n + BENCH_ROUND - 1) / BENCH_ROUND;

	launch(f, NULL, 1);	/* recording runs, as in a program past its start-up */
	for (r = -1; r < rounds; r++) {
		usleep(60000);
		t0 = now_ns(CLOCK_MONOTONIC);
		c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		for (i = 0; i < BENCH_ROUND; i++) {
			nvtxRangePushA("step");
			nvtxRangePop();
		}
		if (r >= 0) {
			cpu += now_ns(CLOCK_THREAD_CPUTIME_ID) - c0;
			wall += now_ns(CLOCK_MONOTONIC) - t0;
		}
	}
	cuCtxSynchronize();
	/* The thread's CPU time too: on a shared machine the wall time counts other tenants. */
	printf("bench: %.2f ns a push+pop pair, %.2f ns of the thread's CPU (%ld pairs)\n",
	       wall / (rounds * BENCH_ROUND), cpu / (rounds * BENCH_ROUND), rounds * BENCH_ROUND);
	return 0;
}

/* ---- nocuda, late, env ---- */

static int run_nocuda(void)
{
	nvtxDomainHandle_t dom = nvtxDomainCreateA("no cuda");
	nvtxStringHandle_t str = nvtxDomainRegisterStringA(dom, "registered");
	nvtxEventAttributes_t a = attr_registered(str, 0);
	int i;

	for (i = 0; i < 1000; i++) {
		nvtxRangePushA("no cuda");
		nvtxDomainRangePushEx(dom, &a);
		nvtxDomainRangePop(dom);
		nvtxRangeEnd(nvtxRangeStartA("start"));
		nvtxRangePop();
	}
	printf("nocuda: done\n");
	return 0;
}

static int run_late(void)
{
	CUfunction f = kernel();

	launch(f, NULL, 5);
	cuCtxSynchronize();
	nvtx_late_arm(20);
	printf("late: armed\n");
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "main";
	long n = argc > 2 ? atol(argv[2]) : 1000;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!strcmp(mode, "main"))
		return run_main();
	if (!strcmp(mode, "returns"))
		return run_returns();
	if (!strcmp(mode, "bad"))
		return run_bad();
	if (!strcmp(mode, "many"))
		return run_many(n);
	if (!strcmp(mode, "names"))
		return run_names(n);
	if (!strcmp(mode, "signal"))
		return run_signal();
	if (!strcmp(mode, "threads"))
		return run_threads();
	if (!strcmp(mode, "fork"))
		return run_fork();
	if (!strcmp(mode, "nocuda"))
		return run_nocuda();
	if (!strcmp(mode, "late"))
		return run_late();
	if (!strcmp(mode, "bench"))
		return run_bench(n);
	if (!strcmp(mode, "env")) {
		const char *v = getenv("NVTX_INJECTION64_PATH");

		printf("%s\n", v ? v : "(unset)");
		return 0;
	}
	fprintf(stderr, "usage: nvtx_client main|returns|bad|many N|names N|threads|signal|fork|"
			"nocuda|late|env|bench N\n");
	return 2;
}
