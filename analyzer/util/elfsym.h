/* SPDX-License-Identifier: MIT */
/*
 * elfsym.h - names for native stack frames from the modules' own ELF symbol tables (.symtab,
 * else .dynsym), so that static functions and functions of executables linked without
 * -rdynamic are named too. Each file is read once per cache, with pread, and checked against
 * the build-id the trace recorded. Files are untrusted: every size and offset is checked, and
 * a malformed file is "not found", never a crash. Analyzer only; a cache is single-threaded.
 */
#ifndef GPUSHIM_ELFSYM_H
#define GPUSHIM_ELFSYM_H

#include <stdint.h>

/*
 * Limits on what one file may make the cache hold, or the parse read: larger files, tables
 * with more entries and files past the cache's budget are "not found". 1 GiB is about twice
 * the largest shared object of a CUDA or PyTorch install; libtorch_cuda.so's .dynsym has
 * some 10^5 entries, a fully symbolized browser's .symtab a few 10^6.
 */
#define ELFSYM_MAX_FILE_BYTES (1ULL << 30)
#define ELFSYM_MAX_SYMS (4U << 20)		/* entries of the table read */
#define ELFSYM_MAX_CACHE_BYTES (512ULL << 20)	/* symbols and names kept, all files */

struct elfsym_cache;

/* elfsym_new - an empty cache. elfsym_free - frees it and every name it returned (NULL: no-op). */
struct elfsym_cache *elfsym_new(void);
void elfsym_free(struct elfsym_cache *c);

/*
 * elfsym_lookup - the function symbol containing @offset, an address in the ELF virtual
 * address space of the file at @path (the frame's address less the module's load bias, as
 * addr2line -e takes it); the caller does any "return address - 1". Only ELF64
 * little-endian executables and shared objects (ET_EXEC, ET_DYN) are read.
 * Symbols: STT_FUNC and STT_GNU_IFUNC, defined (st_shndx != SHN_UNDEF), from .symtab when it
 * holds any, else from .dynsym. A sized symbol contains [st_value, st_value + st_size); of
 * nested ones the innermost wins, and of symbols at one address a sized one, then global over
 * weak over local. A symbol of size 0 (hand-written assembly) reaches from its address to the
 * next symbol or the end of its section, whichever comes first, and only where it does not
 * itself lie inside a sized symbol: it never takes an address a sized symbol could explain.
 * When @build_id (lowercase hex) is non-NULL and non-empty, the file's NT_GNU_BUILD_ID note
 * must equal it: the file changed since the run otherwise, and its symbols would lie.
 * Return: 0 with *@name (the raw, possibly mangled name; owned by @c, valid until
 * elfsym_free) and *@sym_off = @offset - st_value; -1 when there is no such symbol, the file
 * cannot be read or is malformed, or the build-id differs. Reads each path once, failures
 * included; the descriptor is closed before the call returns.
 * Context: the analyzer's thread that owns @c; allocates (OOM is fatal for the cache's own
 * structures, "not found" for buffers sized by the file).
 */
int elfsym_lookup(struct elfsym_cache *c, const char *path, const char *build_id,
		  uint64_t offset, const char **name, uint64_t *sym_off);

#endif /* GPUSHIM_ELFSYM_H */
