/* SPDX-License-Identifier: MIT */
/*
 * where.h - where in the program a call was made: the frame of a captured call stack (trace
 * format 1.9) that is the program's own code, and how to name it.
 *
 * A stack's frames come innermost first: the CUDA libraries, then the frameworks (PyTorch's,
 * JAX's native code, the interpreter), then the program. The frame chosen is, in order:
 *   - the innermost Python frame of the program's own files: not under site-packages or
 *     dist-packages, not the standard library (lib/pythonX.Y), not frozen or generated code
 *     ("<frozen ...>", "<string>");
 *   - else the innermost native frame of the program's own modules (less the CUDA runtime
 *     nvcc links into programs: cudaX entry points, cudart::, __cuda*): not the CUDA toolkit's
 *     (libcuda, libcudart, libcupti, libcublas, libcudnn, libnccl, libnvrtc, ...), not
 *     PyTorch's or the interpreter's (libtorch*, libc10*, libpython*, python*), not the C
 *     library's, not in a system library folder (/lib, /usr/lib, /usr/local/cuda) or a
 *     Python package (site-packages, dist-packages);
 *   - else the innermost Python frame (a framework's own Python code: the call came from it);
 *   - else the innermost native frame outside the CUDA toolkit's libraries (a framework's
 *     thread without Python, as PyTorch's backward pass runs on: "at::native::... in
 *     libtorch_cuda.so" rather than the runtime's entry point);
 *   - else the innermost native frame.
 * Its key groups calls made at the same place: a Python frame by file and line, a native one
 * by return address.
 */
#ifndef GPUSHIM_WHERE_H
#define GPUSHIM_WHERE_H

#include <stddef.h>
#include <stdint.h>

#include "model/model.h"

struct where {
	uint64_t key;			/* 0: the stack has no frame */
	int is_python;
	int is_user;			/* the program's own code (not a fallback) */
	/* Python */
	const char *file;		/* as the interpreter has it (co_filename) */
	const char *func;
	int32_t line;			/* -1 unknown */
	/* Native */
	uint64_t pc;
	const char *module;		/* its path; NULL: in no module the shim found */
	const char *symbol;		/* the nearest dynamic symbol below (mangled); NULL none */
	uint64_t sym_offset;
	uint64_t offset;		/* in the module's ELF address space */
};

/* Where stack @id (model_stack's) was made, *@w; 0, or -1 for a stack without frames. */
int where_of(const struct model *m, uint32_t id, struct where *w);

/*
 * where_native_symbol - the function native frame @pc lies in: from its module's own symbol
 * table when the file is readable and has the build-id the trace recorded (util/elfsym.h),
 * else the nearest dynamic symbol below that the shim found (PC record). *@name (mangled; NULL
 * none) and *@off, the return address's offset in it; 0, or -1 when unknown. where_cleanup -
 * lets go of the symbol tables read (the analyzer's exit).
 */
int where_native_symbol(const struct model *m, uint64_t pc, const char **name, uint64_t *off);
void where_cleanup(void);

/* Is @file (a Python code object's co_filename) the program's own? Is module @path? */
int where_is_user_file(const char *file);
int where_is_user_module(const char *path);

/*
 * The text of line @line of @file as it is now, its leading and trailing blanks trimmed, into
 * @buf (@len bytes, cut with "..." when longer); 0, or -1 when the file cannot be read or is
 * shorter, or is not a regular file named *.py (the path comes from a trace). Reads at most
 * 16 MiB of it.
 */
int where_source_line(const char *file, int32_t line, char *buf, size_t len);

/*
 * where_place - a place in the program that reads the same in another run of it, into @buf:
 * "train.py:57 in train_step" for a Python frame, "step_loop in app" for a native one (the
 * function, not the address: another build moves it); "" when the stack has no frame.
 * diff matches runs' places by it.
 */
void where_place(const struct model *m, uint32_t stack, char *buf, size_t len);

/*
 * A native frame's name into @buf: the symbol demangled, shortened, with the module's base name
 * ("at::native::foo+0x1c in libtorch_cuda.so") when known, else "module+0xOFFSET", else
 * "0xPC". where_pc_name - the same for native address @pc of @m's stacks.
 */
void where_native_name(const struct where *w, char *buf, size_t len);
void where_pc_name(const struct model *m, uint64_t pc, char *buf, size_t len);

#endif /* GPUSHIM_WHERE_H */
