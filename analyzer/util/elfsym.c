// SPDX-License-Identifier: MIT
/*
 * elfsym.c - elfsym.h: one ELF file read into a table of function symbols sorted by address,
 * memoized by path in a small hash table. Reads with pread only what it needs (the headers,
 * the notes for the build-id, one symbol table and its strings) and closes the file at once;
 * every offset and size the file gives is checked against the file's size first. Buffers sized
 * by the file are plain malloc (failure: "not found"); the cache's own, xmalloc. No printing;
 * single-threaded.
 */
#define _GNU_SOURCE
#include "elfsym.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "elfsym.c reads ELF64 little-endian structures in place: little-endian hosts only"
#endif

#define BUILD_ID_MAX 64			/* bytes; linkers write 20 (sha1), 16 (md5, uuid) or 8 */
#define NOTE_MAX_BYTES (1U << 20)	/* larger note sections are not searched for the build-id */
#define MAX_SECTIONS (1U << 20)		/* -ffunction-sections objects reach 10^5; not executables */
#define SYM_CHUNK 4096			/* table entries a pread brings (96 KiB) */
/*
 * Symbols tried back from the nearest one below an address, for symbols nested in others.
 * Real files nest a few (a function's local entry points); only a hostile one reaches this.
 */
#define WALK_MAX 1024

struct sym {
	uint64_t addr, end;	/* contains [addr, end); a size-0 symbol's end is derived */
	uint64_t max_end;	/* the largest end of this symbol and every one before it */
	uint32_t name;		/* offset in the file's names */
	uint32_t is_sized;	/* st_size > 0; else end was derived */
};

struct elf_file {
	struct elf_file *next;	/* hash chain */
	char *path;
	int is_ok;		/* read; otherwise every lookup answers -1 */
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;	/* 0: the file has no NT_GNU_BUILD_ID note */
	struct sym *syms;
	size_t nr_syms;
	char *names;
};

struct elfsym_cache {
	struct elf_file **buckets;
	size_t nr_buckets, nr_files;
	uint64_t kept_bytes;	/* symbols and names of every file, up to ELFSYM_MAX_CACHE_BYTES */
};

/* A file being read; fd is open only while it is. */
struct parse {
	int fd;
	uint64_t size;
	Elf64_Ehdr eh;
	Elf64_Shdr *sh;
	uint64_t nr_sh;
};

/* A symbol kept from the table, before the address sort decides between symbols. */
struct cand {
	uint64_t addr, end;
	uint32_t name;		/* offset in the string table */
	uint32_t idx;		/* position in the table: the last tie-break, for a total order */
	uint8_t is_sized;
	uint8_t rank;		/* 0 global, 1 weak, 2 local and the rest */
};

/* ---- Reading, bounded by the file ---- */

static int in_file(const struct parse *p, uint64_t off, uint64_t len)
{
	return len <= p->size && off <= p->size - len;
}

static int read_at(const struct parse *p, void *buf, uint64_t len, uint64_t off)
{
	char *b = buf;

	if (!in_file(p, off, len))
		return -1;
	while (len) {
		ssize_t n = pread(p->fd, b, len, (off_t)off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;	/* an error, or the file shrank under us */
		b += n;
		off += (uint64_t)n;
		len -= (uint64_t)n;
	}
	return 0;
}

/* @len bytes at @off in a fresh buffer, or NULL. @len <= the file's size (1 GiB). */
static void *read_alloc(const struct parse *p, uint64_t off, uint64_t len)
{
	void *buf;

	if (!in_file(p, off, len))
		return NULL;
	buf = malloc(len ? len : 1);
	if (buf && read_at(p, buf, len, off)) {
		free(buf);
		buf = NULL;
	}
	return buf;
}

/* The ELF header and the section headers, checked for shape. Return: 0 or -1. */
static int read_headers(struct parse *p)
{
	Elf64_Ehdr *eh = &p->eh;
	uint64_t nr;

	if (read_at(p, eh, sizeof(*eh), 0) || memcmp(eh->e_ident, ELFMAG, SELFMAG) ||
	    eh->e_ident[EI_CLASS] != ELFCLASS64 || eh->e_ident[EI_DATA] != ELFDATA2LSB ||
	    (eh->e_type != ET_EXEC && eh->e_type != ET_DYN))
		return -1;
	if (!eh->e_shoff || eh->e_shentsize != sizeof(Elf64_Shdr))
		return -1;
	nr = eh->e_shnum;
	if (!nr) {
		/* Extended numbering: the count is in section 0's sh_size. */
		Elf64_Shdr s0;

		if (read_at(p, &s0, sizeof(s0), eh->e_shoff))
			return -1;
		nr = s0.sh_size;
	}
	if (!nr || nr > MAX_SECTIONS)
		return -1;
	p->sh = read_alloc(p, eh->e_shoff, nr * sizeof(Elf64_Shdr));
	if (!p->sh)
		return -1;
	p->nr_sh = nr;
	return 0;
}

/* ---- The build-id ---- */

static uint64_t align_up(uint64_t v, uint64_t align)
{
	return (v + align - 1) & ~(align - 1);
}

/*
 * Notes are a 12-byte header (namesz, descsz, type), the name and the descriptor, each
 * padded to the note's alignment, 4 or 8, counted from the note's start (as binutils reads
 * them). Return: 0 with the build-id in @f, or -1.
 */
static int find_build_id(struct elf_file *f, const uint8_t *buf, uint64_t len, uint64_t align)
{
	uint64_t pos = 0;

	while (len - pos >= 12) {
		uint32_t hdr[3];
		uint64_t desc, next;

		memcpy(hdr, buf + pos, sizeof(hdr));
		desc = align_up(12 + (uint64_t)hdr[0], align);
		if (desc > len - pos || hdr[1] > len - pos - desc)
			return -1;
		if (hdr[2] == NT_GNU_BUILD_ID && hdr[0] == 4 && !memcmp(buf + pos + 12, "GNU", 4) &&
		    hdr[1] && hdr[1] <= BUILD_ID_MAX) {
			memcpy(f->build_id, buf + pos + desc, hdr[1]);
			f->build_id_len = hdr[1];
			return 0;
		}
		next = align_up(desc + hdr[1], align);
		if (next >= len - pos)
			return -1;
		pos += next;
	}
	return -1;
}

static int find_build_id_at(struct elf_file *f, const struct parse *p, uint64_t off,
			    uint64_t len, uint64_t align)
{
	uint8_t *buf;
	int ret;

	if (!len || len > NOTE_MAX_BYTES)
		return -1;
	buf = read_alloc(p, off, len);
	if (!buf)
		return -1;
	ret = find_build_id(f, buf, len, align == 8 ? 8 : 4);
	free(buf);
	return ret;
}

/* The NT_GNU_BUILD_ID note of the note sections, else of the PT_NOTE segments. */
static void read_build_id(struct elf_file *f, const struct parse *p)
{
	const Elf64_Ehdr *eh = &p->eh;
	Elf64_Phdr *ph;
	uint64_t i;

	for (i = 0; i < p->nr_sh; i++) {
		const Elf64_Shdr *s = &p->sh[i];

		if (s->sh_type == SHT_NOTE &&
		    !find_build_id_at(f, p, s->sh_offset, s->sh_size, s->sh_addralign))
			return;
	}
	if (!eh->e_phoff || eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phnum == PN_XNUM)
		return;
	ph = read_alloc(p, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr));
	if (!ph)
		return;
	for (i = 0; i < eh->e_phnum; i++) {
		if (ph[i].p_type == PT_NOTE &&
		    !find_build_id_at(f, p, ph[i].p_offset, ph[i].p_filesz, ph[i].p_align))
			break;
	}
	free(ph);
}

/* Whether @hex (upper or lower case) spells the file's build-id. */
static int build_id_matches(const struct elf_file *f, const char *hex)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	if (strlen(hex) != 2 * f->build_id_len || !f->build_id_len)
		return 0;
	for (i = 0; i < 2 * f->build_id_len; i++) {
		unsigned v = (f->build_id[i / 2] >> (i % 2 ? 0 : 4)) & 0xf;
		char ch = hex[i] >= 'A' && hex[i] <= 'F' ? (char)(hex[i] - 'A' + 'a') : hex[i];

		if (ch != digits[v])
			return 0;
	}
	return 1;
}

/* ---- The symbol table ---- */

/* Address, then sized before size-0, global before weak before local, then table order. */
static int cand_cmp(const void *a, const void *b)
{
	const struct cand *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->is_sized != y->is_sized)
		return x->is_sized ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank < y->rank ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/*
 * A size-0 symbol reaches to the end of its section (SHF_ALLOC, holding its address), for now;
 * keep_symbols then cuts it at the next symbol. Return: 0 with *@end, or -1.
 */
static int size0_end(const struct parse *p, const Elf64_Sym *s, uint64_t *end)
{
	const Elf64_Shdr *sec;
	uint64_t rest;

	if (s->st_shndx >= SHN_LORESERVE || s->st_shndx >= p->nr_sh)
		return -1;
	sec = &p->sh[s->st_shndx];
	if (!(sec->sh_flags & SHF_ALLOC) || s->st_value < sec->sh_addr ||
	    s->st_value - sec->sh_addr >= sec->sh_size)
		return -1;
	rest = sec->sh_size - (s->st_value - sec->sh_addr);
	*end = rest > UINT64_MAX - s->st_value ? UINT64_MAX : s->st_value + rest;
	return 0;
}

/*
 * The function symbols of table @tab whose names are NUL-terminated inside its string table.
 * Return: the number of them in *@out (malloc'd), the strings in *@strtab, *@strsz bytes;
 * or -1.
 */
static int64_t read_symbols(const struct parse *p, const Elf64_Shdr *tab, struct cand **out,
			    char **strtab, uint64_t *strsz)
{
	Elf64_Sym *chunk = NULL;
	struct cand *cands = NULL;
	const Elf64_Shdr *str;
	uint64_t nr, i, last_nul, kept = 0;
	char *strs = NULL;

	if (tab->sh_entsize != sizeof(Elf64_Sym) || tab->sh_link >= p->nr_sh)
		return -1;
	nr = tab->sh_size / sizeof(Elf64_Sym);
	str = &p->sh[tab->sh_link];
	if (!nr || nr > ELFSYM_MAX_SYMS || !in_file(p, tab->sh_offset, nr * sizeof(Elf64_Sym)) ||
	    str->sh_type != SHT_STRTAB || !str->sh_size || str->sh_size > UINT32_MAX)
		return -1;
	strs = read_alloc(p, str->sh_offset, str->sh_size);
	chunk = malloc(SYM_CHUNK * sizeof(*chunk));
	cands = malloc(nr * sizeof(*cands));
	if (!strs || !chunk || !cands)
		goto fail;

	/* A name is terminated in the table when a NUL lies at or after its start. */
	for (last_nul = str->sh_size; last_nul > 0 && strs[last_nul - 1]; last_nul--)
		;
	if (!last_nul)
		goto fail;
	last_nul--;

	for (i = 0; i < nr; i++) {
		const Elf64_Sym *s = &chunk[i % SYM_CHUNK];
		unsigned type;
		struct cand *c = &cands[kept];

		if (i % SYM_CHUNK == 0) {
			uint64_t n = nr - i < SYM_CHUNK ? nr - i : SYM_CHUNK;

			if (read_at(p, chunk, n * sizeof(*chunk), tab->sh_offset + i * sizeof(*chunk)))
				goto fail;
		}
		type = ELF64_ST_TYPE(s->st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    !s->st_name || s->st_name > last_nul || !strs[s->st_name])
			continue;
		c->addr = s->st_value;
		c->is_sized = s->st_size > 0;
		if (c->is_sized) {
			if (s->st_size > UINT64_MAX - s->st_value)
				continue;
			c->end = s->st_value + s->st_size;
		} else if (size0_end(p, s, &c->end)) {
			continue;
		}
		c->name = s->st_name;
		c->idx = (uint32_t)i;
		switch (ELF64_ST_BIND(s->st_info)) {
		case STB_GLOBAL:
			c->rank = 0;
			break;
		case STB_WEAK:
			c->rank = 1;
			break;
		default:
			c->rank = 2;
			break;
		}
		kept++;
	}
	free(chunk);
	*out = cands;
	*strtab = strs;
	*strsz = str->sh_size;
	return (int64_t)kept;
fail:
	free(chunk);
	free(cands);
	free(strs);
	return -1;
}

/*
 * One symbol an address (the first in cand_cmp's order); size-0 symbols dropped where a sized
 * one contains them and cut at the next symbol. Sets max_end. Return: how many are kept.
 */
static size_t keep_symbols(struct cand *cands, size_t nr, struct sym *syms)
{
	uint64_t sized_end = 0, max_end = 0;
	size_t i, kept = 0;

	xqsort(cands, nr, sizeof(*cands), cand_cmp);
	for (i = 0; i < nr; i++) {
		const struct cand *c = &cands[i];

		if (kept && syms[kept - 1].addr == c->addr)
			continue;
		if (!c->is_sized && sized_end > c->addr)
			continue;
		if (kept && !syms[kept - 1].is_sized && syms[kept - 1].end > c->addr)
			syms[kept - 1].end = c->addr;	/* a size-0 symbol ends where the next starts */
		syms[kept].addr = c->addr;
		syms[kept].end = c->end;
		syms[kept].name = c->name;
		syms[kept].is_sized = c->is_sized;
		if (c->is_sized && c->end > sized_end)
			sized_end = c->end;
		kept++;
	}
	for (i = 0; i < kept; i++) {
		if (syms[i].end > max_end)
			max_end = syms[i].end;
		syms[i].max_end = max_end;
	}
	return kept;
}

/*
 * The names of the kept symbols in an arena of their own, when that is smaller than the
 * string table (it usually is: .symtab's strings also name files and objects); else the
 * table itself. The sum stops growing at the table's size, so hostile tables whose names
 * overlap cost no more than the table. Return: the arena (the table, or a copy), its bytes.
 */
static char *compact_names(struct sym *syms, size_t nr, char *strtab, uint64_t strsz,
			   uint64_t *bytes)
{
	uint64_t total = 0, pos = 0;
	char *arena;
	size_t i;

	for (i = 0; i < nr && total < strsz; i++)
		total += strlen(strtab + syms[i].name) + 1;
	if (total >= strsz || !(arena = malloc(total ? total : 1))) {
		*bytes = strsz;
		return strtab;
	}
	for (i = 0; i < nr; i++) {
		size_t len = strlen(strtab + syms[i].name) + 1;

		memcpy(arena + pos, strtab + syms[i].name, len);
		syms[i].name = (uint32_t)pos;
		pos += len;
	}
	free(strtab);
	*bytes = total;
	return arena;
}

/*
 * Table @tab into @f, within what is left of the cache's budget @budget.
 * Return: 0 when it holds at least one function symbol, else -1.
 */
static int load_table(struct elf_file *f, const struct parse *p, const Elf64_Shdr *tab,
		      uint64_t budget, uint64_t *used)
{
	struct cand *cands = NULL;
	struct sym *syms = NULL;
	uint64_t strsz, name_bytes;
	char *strtab = NULL;
	int64_t nr;
	size_t kept;

	nr = read_symbols(p, tab, &cands, &strtab, &strsz);
	if (nr <= 0)
		goto fail;
	syms = malloc((size_t)nr * sizeof(*syms));
	if (!syms)
		goto fail;
	kept = keep_symbols(cands, (size_t)nr, syms);
	free(cands);
	cands = NULL;
	strtab = compact_names(syms, kept, strtab, strsz, &name_bytes);
	*used = kept * sizeof(*syms) + name_bytes;
	if (*used > budget)
		goto fail;
	f->syms = realloc(syms, kept * sizeof(*syms));
	if (!f->syms)
		f->syms = syms;
	f->nr_syms = kept;
	f->names = strtab;
	return 0;
fail:
	free(cands);
	free(syms);
	free(strtab);
	return -1;
}

/* Reads @f->path: headers, build-id, .symtab or else .dynsym. Sets is_ok. */
static void load_file(struct elfsym_cache *c, struct elf_file *f)
{
	struct parse p = { .fd = -1 };
	const Elf64_Shdr *symtab = NULL, *dynsym = NULL;
	uint64_t budget = ELFSYM_MAX_CACHE_BYTES - c->kept_bytes, used = 0;
	struct stat st;
	uint64_t i;

	/* O_NONBLOCK: a path that names a FIFO must not hang the analyzer before fstat refuses it. */
	p.fd = open(f->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (p.fd < 0 || fstat(p.fd, &st) || !S_ISREG(st.st_mode) ||
	    (uint64_t)st.st_size > ELFSYM_MAX_FILE_BYTES || st.st_size < (off_t)sizeof(Elf64_Ehdr))
		goto out;
	p.size = (uint64_t)st.st_size;
	if (read_headers(&p))
		goto out;
	read_build_id(f, &p);
	for (i = 0; i < p.nr_sh; i++) {
		if (p.sh[i].sh_type == SHT_SYMTAB && !symtab)
			symtab = &p.sh[i];
		else if (p.sh[i].sh_type == SHT_DYNSYM && !dynsym)
			dynsym = &p.sh[i];
	}
	/* A .symtab that is malformed or names no function gives way to .dynsym. */
	if ((symtab && !load_table(f, &p, symtab, budget, &used)) ||
	    (dynsym && !load_table(f, &p, dynsym, budget, &used))) {
		f->is_ok = 1;
		c->kept_bytes += used;
	}
out:
	if (p.fd >= 0)
		close(p.fd);
	free(p.sh);
}

/* ---- The cache ---- */

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ULL;	/* FNV-1a */

	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 0x100000001b3ULL;
	return h;
}

static void cache_grow(struct elfsym_cache *c)
{
	size_t nr = c->nr_buckets * 2, i;
	struct elf_file **b = xcalloc(nr, sizeof(*b));

	for (i = 0; i < c->nr_buckets; i++) {
		struct elf_file *f, *next;

		for (f = c->buckets[i]; f; f = next) {
			size_t k = path_hash(f->path) & (nr - 1);

			next = f->next;
			f->next = b[k];
			b[k] = f;
		}
	}
	free(c->buckets);
	c->buckets = b;
	c->nr_buckets = nr;
}

/* The file at @path, read on first sight. */
static struct elf_file *cache_get(struct elfsym_cache *c, const char *path)
{
	size_t k = path_hash(path) & (c->nr_buckets - 1);
	struct elf_file *f;

	for (f = c->buckets[k]; f; f = f->next) {
		if (!strcmp(f->path, path))
			return f;
	}
	f = xcalloc(1, sizeof(*f));
	f->path = xstrdup(path);
	load_file(c, f);
	if (c->nr_files >= c->nr_buckets) {
		cache_grow(c);
		k = path_hash(path) & (c->nr_buckets - 1);
	}
	f->next = c->buckets[k];
	c->buckets[k] = f;
	c->nr_files++;
	return f;
}

struct elfsym_cache *elfsym_new(void)
{
	struct elfsym_cache *c = xcalloc(1, sizeof(*c));

	c->nr_buckets = 64;
	c->buckets = xcalloc(c->nr_buckets, sizeof(*c->buckets));
	return c;
}

void elfsym_free(struct elfsym_cache *c)
{
	size_t i;

	if (!c)
		return;
	for (i = 0; i < c->nr_buckets; i++) {
		struct elf_file *f, *next;

		for (f = c->buckets[i]; f; f = next) {
			next = f->next;
			free(f->path);
			free(f->syms);
			free(f->names);
			free(f);
		}
	}
	free(c->buckets);
	free(c);
}

int elfsym_lookup(struct elfsym_cache *c, const char *path, const char *build_id,
		  uint64_t offset, const char **name, uint64_t *sym_off)
{
	const struct elf_file *f;
	const struct sym *s;
	size_t lo = 0, hi, j, n;

	if (!c || !path || !*path)
		return -1;
	f = cache_get(c, path);
	if (!f->is_ok || (build_id && *build_id && !build_id_matches(f, build_id)))
		return -1;
	/* lo: the first symbol above @offset; the candidates are those before it. */
	s = f->syms;
	hi = f->nr_syms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (s[mid].addr > offset)
			hi = mid;
		else
			lo = mid + 1;
	}
	/* The innermost symbol containing @offset; max_end says when none further back can. */
	for (j = lo, n = 0; j > 0 && n < WALK_MAX; j--, n++) {
		if (offset < s[j - 1].end) {
			*name = f->names + s[j - 1].name;
			*sym_off = offset - s[j - 1].addr;
			return 0;
		}
		if (j == 1 || s[j - 2].max_end <= offset)
			break;
	}
	return -1;
}
