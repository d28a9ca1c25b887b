/* SPDX-License-Identifier: MIT */
/*
 * demangle.h - readable kernel names: C++ names mangled by the Itanium C++ ABI (what nvcc,
 * GCC and clang emit) printed as c++filt prints them, and short forms of them for tables.
 * Names that are not mangled C++ (Triton's triton_poi_fused_add_0, XLA's loop_add_fusion, C's
 * spin_kernel) are refused, and the caller keeps them as they are. Pure: no I/O; demangle and
 * demangle_short allocate nothing (their work space is on the stack: 80 KiB, 140 KiB at the
 * deepest nesting they accept) and are bounded in time, recursion and output however hostile
 * the input; the table helper allocates its result.
 */
#ifndef GPUSHIM_DEMANGLE_H
#define GPUSHIM_DEMANGLE_H

#include <stddef.h>

/* Longer names are refused (the longest mangled kernel name of the H200 fixtures has 462
 * bytes; of 339,581 C++ symbols of a Debian machine's libraries, 1,042 at most). */
#define DEMANGLE_MAX_INPUT 8192

/*
 * demangle - @mangled ("_Z...", with GCC's clone suffixes such as ".part.0") as c++filt
 * prints it: "_Z10fma_chainsPfi" -> "fma_chains(float*, int)",
 * "_ZN2at6native18elementwise_kernelILi128ELi2EZ...EEviT1_" ->
 * "void at::native::elementwise_kernel<128, 2, ...>(int, ...)". Anonymous namespaces, GCC's
 * and PyTorch's (_GLOBAL__N_1, _GLOBAL__N__d25d856e_22_...), print "(anonymous namespace)".
 * Return: the length of the readable name, written NUL-terminated into @out (@out_len bytes)
 * when it is less than @out_len. When it is not, @out holds its first @out_len - 1 bytes
 * with the last three replaced by "..." (when @out_len >= 4): the return value says so,
 * and how much room the whole name needs. -1 when @mangled is not a mangled name this
 * demangler fully understands (not "_Z", a construct it does not read, a byte outside
 * printable ASCII, longer than DEMANGLE_MAX_INPUT, or past its bounds); then @out is "".
 * A readable name holds only printable ASCII and spaces. Context: any thread.
 */
int demangle(const char *mangled, char *out, size_t out_len);

/*
 * demangle_short - a short form of @mangled for a table column about @width wide. The rule:
 *   1. A function prints without its return type and parameter list: its qualified name
 *      and template arguments. A function that scopes a local entity (the lambda in a
 *      template argument) prints a non-empty parameter list as "(...)". Clone suffixes
 *      (" [clone .cold]") stay.
 *   2. While that is wider than @width, the template arguments are shortened, one step
 *      more each time, the first that fits taken:
 *      a. a chain of local names prints its outermost function and its last entity:
 *         "at::native::tanh_kernel_cuda(...)::...::{lambda(float)#1}";
 *      b. qualified names print their last component ("BinaryFunctor<float, ...>"), but
 *         operators, constructors and lambdas keep their class ("A<...>::operator()");
 *      c. for each depth d, from the deepest argument list up to the outermost: the lists
 *         at depth d keep their first k arguments, then ", ..." (k from all but one down to
 *         1, 8 steps at most), then they print "<...>". So, one step after another:
 *         "vectorized_elementwise_kernel<4, AUnaryFunctor<...>, array<...> >",
 *         "vectorized_elementwise_kernel<4, AUnaryFunctor<...>, ...>",
 *         "vectorized_elementwise_kernel<4, ...>", "vectorized_elementwise_kernel<...>".
 *   3. The function's qualified name is never cut: a name longer than @width stays longer.
 * So what the kernel is (its name, its first template arguments) and the lambdas that tell
 * instances apart survive; every elision shows as "...". Two kernels may still print alike:
 * demangle_short_names widens those.
 * Return: as demangle (the length, "..." on truncation, -1 when not understood: the same
 * names as demangle). Context: any thread.
 */
int demangle_short(const char *mangled, char *out, size_t out_len, size_t width);

/*
 * demangle_short_names - the short forms of a table's @n names (mangled or not), pairwise
 * distinct where the names are. Each name starts at its demangle_short form at @width (names
 * it refuses stay as they are). While distinct names print alike, each of them is widened to
 * its next longer form that prints differently: the previous step of demangle_short's rule
 * (less elided: so the part where they differ comes back, and no more than needed), then
 * the whole demangled name with its parameters, and at last the mangled name itself, which
 * is unique. Equal names print equal. A report or diff table calls it once for all its rows.
 * Return: @n strings (NULL for @n = 0), each allocated; free with demangle_names_free.
 * Context: analyzer; dies on exhaustion of memory (xmalloc).
 */
char **demangle_short_names(const char *const *names, size_t n, size_t width);
void demangle_names_free(char **names, size_t n);

#endif /* GPUSHIM_DEMANGLE_H */
