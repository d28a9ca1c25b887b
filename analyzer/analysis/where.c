// SPDX-License-Identifier: MIT
/*
 * where.c - see where.h: the program's own frame of a captured call stack, and its name.
 * Reads source files for where_source_line only; prints nothing.
 */
#include "where.h"

#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/demangle.h"
#include "util/elfsym.h"

#define KEY_PYTHON (1ull << 63)
#define KEY_NATIVE (1ull << 62)

int where_is_user_file(const char *file)
{
	if (!file || !*file || file[0] == '<')
		return 0;	/* "<frozen importlib._bootstrap>", "<string>", "<stdin>" */
	if (strstr(file, "/site-packages/") || strstr(file, "/dist-packages/"))
		return 0;
	/* The standard library: .../lib/python3.12/..., also a virtual environment's. */
	if (strstr(file, "/lib/python3.") || strstr(file, "/lib64/python3.") ||
	    strstr(file, "/lib/python2.") || strstr(file, "/lib64/python2."))
		return 0;
	return 1;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* Is @path one of the CUDA toolkit's libraries (or the shim)? */
static int is_cuda_module(const char *path)
{
	static const char *const libs[] = {
		"libcuda.", "libcudart", "libcupti", "libcublas", "libcudnn", "libnccl",
		"libnvrtc", "libnvJitLink", "libcufft", "libcurand", "libcusparse", "libcusolver",
		"libnvperf", "libgpushim",
	};
	const char *b;
	size_t i;

	if (!path)
		return 0;
	b = strrchr(path, '/');
	b = b ? b + 1 : path;
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(b, libs[i], strlen(libs[i])))
			return 1;
	return 0;
}

int where_is_user_module(const char *path)
{
	static const char *const libs[] = {
		"libcuda.", "libcudart", "libcupti", "libcublas", "libcudnn", "libnccl",
		"libnvrtc", "libnvJitLink", "libcufft", "libcurand", "libcusparse", "libcusolver",
		"libnvToolsExt", "libnvperf", "libtorch", "libc10", "libpython", "python",
		"libc.so", "libc-", "libstdc++", "libgcc_s", "libm.so", "ld-linux", "libgpushim",
		"libxla", "libjax", "libtriton",
	};
	static const char *const dirs[] = { "/lib/", "/lib64/", "/usr/lib/", "/usr/lib64/",
					    "/usr/local/cuda" };
	const char *b;
	size_t i;

	if (!path || !*path)
		return 0;
	if (strstr(path, "/site-packages/") || strstr(path, "/dist-packages/"))
		return 0;
	for (i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!strncmp(path, dirs[i], strlen(dirs[i])))
			return 0;
	b = base_name(path);
	for (i = 0; i < sizeof(libs) / sizeof(libs[0]); i++)
		if (!strncmp(b, libs[i], strlen(libs[i])))
			return 0;
	return 1;
}

static void take_python(const struct model *m, const struct trace_stack_py *py, int is_user,
			struct where *w)
{
	w->is_python = 1;
	w->is_user = is_user;
	w->file = model_string(m, py->file, "?");
	w->func = model_string(m, py->func, "?");
	w->line = py->line;
	/* file and line: the same statement, whichever function names it */
	w->key = KEY_PYTHON | (uint64_t)(py->file & 0x7fffffffu) << 31 |
		 ((uint64_t)(uint32_t)py->line & 0x7fffffffu);
}

/* The modules' own symbol tables, read once each (where_native_symbol). */
static struct elfsym_cache *elf_syms;

int where_native_symbol(const struct model *m, uint64_t pc, const char **name, uint64_t *off)
{
	const struct m_pc *p = model_pc(m, pc);
	const char *module = p && p->module ? model_string(m, p->module, NULL) : NULL;

	*name = NULL;
	*off = 0;
	if (!p)
		return -1;
	/* The call instruction is before the return address: look it up there. */
	if (module && p->offset) {
		if (!elf_syms)
			elf_syms = elfsym_new();
		if (elfsym_lookup(elf_syms, module,
				  p->build_id ? model_string(m, p->build_id, NULL) : NULL,
				  p->offset - 1, name, off) == 0) {
			*off += 1;
			return 0;
		}
	}
	if (!p->symbol || !(*name = model_string(m, p->symbol, NULL)))
		return -1;
	*off = p->sym_offset;
	return 0;
}

void where_cleanup(void)
{
	elfsym_free(elf_syms);
	elf_syms = NULL;
}

static void take_native(const struct model *m, uint64_t pc, int is_user, struct where *w)
{
	const struct m_pc *p = model_pc(m, pc);

	w->is_python = 0;
	w->is_user = is_user;
	w->pc = pc;
	w->key = KEY_NATIVE | (pc & (KEY_NATIVE - 1));
	if (!w->key)
		w->key = KEY_NATIVE;
	if (p) {
		w->module = p->module ? model_string(m, p->module, NULL) : NULL;
		w->offset = p->offset;
		where_native_symbol(m, pc, &w->symbol, &w->sym_offset);
	}
}

/* The module of native address @pc, NULL when unknown. */
static const char *module_of(const struct model *m, uint64_t pc)
{
	const struct m_pc *p = model_pc(m, pc);

	return p && p->module ? model_string(m, p->module, NULL) : NULL;
}

/*
 * Is the native frame at @pc the program's own code: in one of its modules, and not the CUDA
 * runtime linked into it (nvcc links libcudart_static into each program: cudaMemcpy,
 * cudart::..., __cudart..., and in CUDA 13 its internal functions named
 * libcudart_static_<40 hex digits>)?
 */
static int is_user_frame(const struct model *m, uint64_t pc)
{
	const char *sym;
	uint64_t off;

	if (!where_is_user_module(module_of(m, pc)))
		return 0;
	if (where_native_symbol(m, pc, &sym, &off) < 0)
		return 1;
	if (!strncmp(sym, "_ZN6cudart", 10) || !strncmp(sym, "__cudart", 8) ||
	    !strncmp(sym, "__cuda", 6) || !strncmp(sym, "libcudart_static_", 17))
		return 0;
	/* the runtime's entry points: cudaMalloc, cudaStreamSynchronize, ... */
	if (!strncmp(sym, "cuda", 4) && sym[4] >= 'A' && sym[4] <= 'Z')
		return 0;
	return 1;
}

int where_of(const struct model *m, uint32_t id, struct where *w)
{
	const struct m_stack *s = model_stack(m, id);
	const struct trace_stack_py *py;
	const uint64_t *pcs;
	unsigned i;

	memset(w, 0, sizeof(*w));
	w->line = -1;
	if (!s || (!s->nr_native && !s->nr_py))
		return -1;
	py = &m->stack_py[s->py];
	pcs = &m->stack_pcs[s->pcs];
	for (i = 0; i < s->nr_py; i++)
		if (where_is_user_file(model_string(m, py[i].file, NULL))) {
			take_python(m, &py[i], 1, w);
			return 0;
		}
	for (i = 0; i < s->nr_native; i++)
		if (is_user_frame(m, pcs[i])) {
			take_native(m, pcs[i], 1, w);
			return 0;
		}
	if (s->nr_py) {
		take_python(m, &py[0], 0, w);
		return 0;
	}
	/* A framework's thread (PyTorch's autograd engine runs backward on threads of its
	 * own, without Python): its innermost frame above the CUDA libraries says more than
	 * the CUDA runtime's entry point. */
	for (i = 0; i < s->nr_native; i++)
		if (!is_cuda_module(module_of(m, pcs[i]))) {
			take_native(m, pcs[i], 0, w);
			return 0;
		}
	take_native(m, pcs[0], 0, w);
	return 0;
}

int where_source_line(const char *file, int32_t line, char *buf, size_t len)
{
	char text[512];
	size_t read = 0;
	int32_t n = 1;
	struct stat st;
	FILE *f;
	int fd, ret = -1;

	if (!file || line < 1 || !len || file[0] == '<')
		return -1;
	/* Python source only: a trace names any path, and its report must not print a line of
	 * whatever file that is (a key, a password file) */
	if (strlen(file) < 3 || strcmp(file + strlen(file) - 3, ".py"))
		return -1;
	/* A trace names any path: only a regular file is read (a FIFO would block). */
	fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || !(f = fdopen(fd, "r"))) {
		close(fd);
		return -1;
	}
	while (fgets(text, sizeof(text), f)) {
		size_t l = strlen(text);
		int is_whole = l && text[l - 1] == '\n';

		read += l;
		if (read > (16u << 20))
			break;
		if (n == line) {
			char *s = text, *e;

			while (*s == ' ' || *s == '\t')
				s++;
			e = s + strlen(s);
			while (e > s && (e[-1] == '\n' || e[-1] == '\r' || e[-1] == ' ' ||
					 e[-1] == '\t'))
				*--e = 0;
			if (strlen(s) + 1 > len || !is_whole) {
				/* too long for @buf, or for one read: cut */
				snprintf(buf, len, "%.*s...", len > 4 ? (int)(len - 4) : 0, s);
			} else {
				snprintf(buf, len, "%s", s);
			}
			ret = 0;
			break;
		}
		if (is_whole)
			n++;
	}
	fclose(f);
	return ret;
}

void where_native_name(const struct where *w, char *buf, size_t len)
{
	char name[512];

	if (w->symbol) {
		if (demangle_short(w->symbol, name, sizeof(name), 60) < 0)
			snprintf(name, sizeof(name), "%s", w->symbol);
		snprintf(buf, len, "%s+0x%llx%s%s", name, (unsigned long long)w->sym_offset,
			 w->module ? " in " : "", w->module ? base_name(w->module) : "");
	} else if (w->module) {
		snprintf(buf, len, "%s+0x%llx", base_name(w->module),
			 (unsigned long long)w->offset);
	} else {
		snprintf(buf, len, "0x%llx", (unsigned long long)w->pc);
	}
}

void where_pc_name(const struct model *m, uint64_t pc, char *buf, size_t len)
{
	struct where w;

	memset(&w, 0, sizeof(w));
	take_native(m, pc, 0, &w);
	where_native_name(&w, buf, len);
}

void where_place(const struct model *m, uint32_t stack, char *buf, size_t len)
{
	struct where w;
	char name[320];

	if (!len)
		return;
	buf[0] = 0;
	if (where_of(m, stack, &w) < 0)
		return;
	if (w.is_python) {
		snprintf(buf, len, "%s:%d in %s", w.file, (int)w.line, w.func);
		return;
	}
	if (w.symbol) {
		if (demangle_short(w.symbol, name, sizeof(name), 60) < 0)
			snprintf(name, sizeof(name), "%s", w.symbol);
		snprintf(buf, len, "%s in %s", name, w.module ? base_name(w.module) : "?");
	} else {
		where_native_name(&w, buf, len);
	}
}
