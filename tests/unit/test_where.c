// SPDX-License-Identifier: MIT
/*
 * test_where.c - which frame of a captured stack names the place a call was made
 * (analysis/where.c), on small hand-made models: the program's own Python file over the
 * frameworks' and the standard library's, then its own native module over the CUDA, framework
 * and C libraries and over the CUDA runtime linked into it (cudaX, cudart::), then the
 * innermost Python frame, then the innermost native frame above the CUDA libraries (a
 * framework's thread without Python), then the innermost; the key of a Python place by file
 * and line; where_place's text; the source line of a file (and none for a missing line, a
 * non-regular file, a file that is not Python source).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "analysis/where.h"
#include "model/model.h"
#include "util/util.h"

enum {
	S_USER = 1, S_TORCH, S_STDLIB, S_FROZEN, S_STEP, S_FWD, S_INIT, S_APP, S_CUDART, S_TORCHSO,
	S_LIBC, S_SYM_MEMCPY, S_SYM_LOOP, S_SYM_ADDMM, S_SYM_STATIC, NR_S
};

static const char *const strs[NR_S] = {
	[S_USER] = "/home/u/train.py",
	[S_TORCH] = "/venv/lib/python3.12/site-packages/torch/nn/modules/module.py",
	[S_STDLIB] = "/usr/lib/python3.12/threading.py",
	[S_FROZEN] = "<frozen runpy>",
	[S_STEP] = "train_step",
	[S_FWD] = "Module._call_impl",
	[S_INIT] = "run",
	[S_APP] = "/home/u/app",
	[S_CUDART] = "/usr/local/cuda/lib64/libcudart.so.13",
	[S_TORCHSO] = "/venv/lib/python3.12/site-packages/torch/lib/libtorch_cuda.so",
	[S_LIBC] = "/lib/x86_64-linux-gnu/libc.so.6",
	[S_SYM_MEMCPY] = "cudaMemcpy",
	[S_SYM_LOOP] = "step_loop",
	[S_SYM_ADDMM] = "_ZN2at6native5addmmEv",
	/* CUDA 13's static runtime names its internal functions so (seen on the H200) */
	[S_SYM_STATIC] = "libcudart_static_e760a7280bc1af45ef561886abc194823c5edadb",
};

/* Native addresses: in the app (the CUDA runtime linked in, then its own code), libcudart,
 * libtorch_cuda, libc. */
enum { PC_APP_CUDART = 0x1000, PC_APP_LOOP = 0x2000, PC_CUDART = 0x3000, PC_TORCH = 0x4000,
       PC_LIBC = 0x5000, PC_APP_STATIC = 0x6000 };

static void model_make(struct model *m)
{
	static const struct { uint64_t pc; uint32_t module, symbol; } pcs[] = {
		{ PC_APP_CUDART, S_APP, S_SYM_MEMCPY }, { PC_APP_LOOP, S_APP, S_SYM_LOOP },
		{ PC_CUDART, S_CUDART, 0 }, { PC_TORCH, S_TORCHSO, S_SYM_ADDMM },
		{ PC_LIBC, S_LIBC, 0 }, { PC_APP_STATIC, S_APP, S_SYM_STATIC },
	};
	size_t i;

	memset(m, 0, sizeof(*m));
	m->strings = xcalloc(NR_S, sizeof(*m->strings));
	m->nr_strings = NR_S;
	for (i = 1; i < NR_S; i++)
		m->strings[i] = xstrdup(strs[i]);
	m->pcs = xcalloc(sizeof(pcs) / sizeof(pcs[0]), sizeof(*m->pcs));
	for (i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++)
		m->pcs[m->nr_pcs++] = (struct m_pc){ pcs[i].pc, pcs[i].pc, pcs[i].module, 0,
						     pcs[i].symbol, 0x10 };
}

/* A stack of @nn native and @np Python frames: its id. */
static uint32_t stack_add(struct model *m, const uint64_t *nat, unsigned nn,
			  const struct trace_stack_py *py, unsigned np)
{
	struct m_stack *s;

	XGROW(m->stacks, m->stacks_cap, m->nr_stacks + 1);
	XGROW(m->stack_pcs, m->stack_pcs_cap, m->nr_stack_pcs + nn + 1);
	XGROW(m->stack_py, m->stack_py_cap, m->nr_stack_py + np + 1);
	s = &m->stacks[m->nr_stacks++];
	s->pcs = (uint32_t)m->nr_stack_pcs;
	s->py = (uint32_t)m->nr_stack_py;
	s->nr_native = (uint16_t)nn;
	s->nr_py = (uint16_t)np;
	if (nn)
		memcpy(&m->stack_pcs[m->nr_stack_pcs], nat, nn * sizeof(*nat));
	if (np)
		memcpy(&m->stack_py[m->nr_stack_py], py, np * sizeof(*py));
	m->nr_stack_pcs += nn;
	m->nr_stack_py += np;
	return (uint32_t)m->nr_stacks;
}

static void test_python(void)
{
	const uint64_t nat[] = { PC_CUDART, PC_TORCH, PC_LIBC };
	const struct trace_stack_py lib[] = { { S_TORCH, S_FWD, 1500, 0 }, { S_STDLIB, S_INIT, 9, 0 },
					      { S_FROZEN, S_INIT, 88, 0 } };
	const struct trace_stack_py user[] = { { S_TORCH, S_FWD, 1500, 0 }, { S_USER, S_STEP, 57, 0 },
					       { S_USER, S_INIT, 90, 0 } };
	const struct trace_stack_py user2[] = { { S_USER, S_FWD, 57, 0 } };
	struct where w, w2;
	struct model m;
	char buf[256];
	uint32_t a, b, c;

	model_make(&m);
	a = stack_add(&m, nat, 3, user, 3);
	b = stack_add(&m, nat, 3, lib, 3);
	c = stack_add(&m, nat, 1, user2, 1);
	CHECK_EQ(where_of(&m, a, &w), 0);	/* the user's innermost frame, not torch's */
	CHECK(w.is_python && w.is_user);
	CHECK_STR(w.file, strs[S_USER]);
	CHECK_EQ(w.line, 57);
	CHECK_STR(w.func, "train_step");
	CHECK_EQ(where_of(&m, b, &w2), 0);	/* none of the user's: the innermost Python frame */
	CHECK(w2.is_python && !w2.is_user);
	CHECK_EQ(w2.line, 1500);
	/* a place is its file and line, whatever the function is called */
	CHECK_EQ(where_of(&m, c, &w2), 0);
	CHECK(w2.key == w.key);
	where_place(&m, a, buf, sizeof(buf));
	CHECK_STR(buf, "/home/u/train.py:57 in train_step");
	CHECK_EQ(where_of(&m, 99, &w), -1);	/* no such stack */
	CHECK_EQ(where_of(&m, 0, &w), -1);
	model_free(&m);
}

static void test_native(void)
{
	const uint64_t app[] = { PC_CUDART, PC_APP_STATIC, PC_APP_CUDART, PC_APP_LOOP, PC_LIBC };
	const uint64_t fw[] = { PC_CUDART, PC_TORCH, PC_LIBC };
	const uint64_t cuda[] = { PC_CUDART, 0x9999 };
	struct where w;
	struct model m;
	char buf[256];
	uint32_t a, b, c;

	model_make(&m);
	a = stack_add(&m, app, 5, NULL, 0);
	b = stack_add(&m, fw, 3, NULL, 0);
	c = stack_add(&m, cuda, 2, NULL, 0);
	/* the app's own code: past the CUDA runtime linked into it (cudaMemcpy) */
	CHECK_EQ(where_of(&m, a, &w), 0);
	CHECK(!w.is_python && w.is_user);
	CHECK_EQ(w.pc, PC_APP_LOOP);
	CHECK_STR(w.symbol, "step_loop");
	where_place(&m, a, buf, sizeof(buf));
	CHECK_STR(buf, "step_loop in app");
	/* a framework's thread: above the CUDA libraries, not the runtime's entry point */
	CHECK_EQ(where_of(&m, b, &w), 0);
	CHECK(!w.is_user);
	CHECK_EQ(w.pc, PC_TORCH);
	where_place(&m, b, buf, sizeof(buf));
	CHECK_STR(buf, "at::native::addmm in libtorch_cuda.so");
	/* an address in no module the shim found is nobody's own: above the CUDA library */
	CHECK_EQ(where_of(&m, c, &w), 0);
	CHECK_EQ(w.pc, 0x9999);
	CHECK(w.module == NULL);
	model_free(&m);
}

static void test_rules(void)
{
	CHECK(where_is_user_file("/home/u/train.py"));
	CHECK(where_is_user_file("train.py"));
	CHECK(!where_is_user_file("/venv/lib/python3.12/site-packages/torch/_tensor.py"));
	CHECK(!where_is_user_file("/usr/lib/python3/dist-packages/numpy/core.py"));
	CHECK(!where_is_user_file("/usr/lib/python3.12/threading.py"));
	CHECK(!where_is_user_file("<frozen importlib._bootstrap>"));
	CHECK(!where_is_user_file(NULL));
	CHECK(where_is_user_module("/home/u/app"));
	CHECK(!where_is_user_module("/usr/lib/x86_64-linux-gnu/libcuda.so.1"));
	CHECK(!where_is_user_module("/opt/x/libcudart.so.13"));
	CHECK(!where_is_user_module("/opt/torch/.venv/lib/python3.12/site-packages/x/y.so"));
	CHECK(!where_is_user_module("/opt/py/bin/python3.12"));
	CHECK(!where_is_user_module(NULL));
}

static void test_source(void)
{
	char path[] = "/tmp/gpushim-where-XXXXXX.py", other[] = "/tmp/gpushim-where-XXXXXX", buf[16];
	FILE *f;
	int fd = mkstemps(path, 3), fd2 = mkstemp(other);

	CHECK(fd >= 0);
	f = fdopen(fd, "w");
	fputs("first\n   second line  \nthird line that is far too long\n", f);
	fclose(f);
	CHECK_EQ(where_source_line(path, 2, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "second line");
	CHECK_EQ(where_source_line(path, 3, buf, sizeof(buf)), 0);
	CHECK_STR(buf, "third line t...");	/* cut to the buffer */
	CHECK_EQ(where_source_line(path, 4, buf, sizeof(buf)), -1);
	CHECK_EQ(where_source_line(path, 0, buf, sizeof(buf)), -1);
	CHECK_EQ(where_source_line("/tmp", 1, buf, sizeof(buf)), -1);	/* not a regular file */
	CHECK_EQ(where_source_line("<string>", 1, buf, sizeof(buf)), -1);
	/* not Python source: never read */
	CHECK(fd2 >= 0);
	CHECK(write(fd2, "secret\n", 7) == 7);
	close(fd2);
	CHECK_EQ(where_source_line(other, 1, buf, sizeof(buf)), -1);
	unlink(path);
	unlink(other);
}

int main(void)
{
	RUN(test_python);
	RUN(test_native);
	RUN(test_rules);
	RUN(test_source);
	where_cleanup();
	return TEST_RESULT();
}
