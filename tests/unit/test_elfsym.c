// SPDX-License-Identifier: MIT
/*
 * test_elfsym.c - the analyzer's ELF symbol lookup (analyzer/util/elfsym.c) on this test's own
 * executable, which is not linked -rdynamic: a static and a global function named from .symtab
 * at their runtime address less the load bias (dl_iterate_phdr); assembly symbols of size 0,
 * alone (named) and inside a sized one (never named past its end); the build-id the loader
 * maps (PT_NOTE) accepted and a wrong one refused; every path, failures too, read once per
 * cache; and files that are not ELF, not regular, truncated, or corrupted (the section header
 * offset, the symbol table's place and link, random bytes of the headers and tables) answered
 * -1 or a true name, never a crash.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "util/elfsym.h"

static const char *self = "/proc/self/exe";
static uintptr_t bias;			/* the main program's load bias */
static char build_id[2 * 64 + 1];	/* its build-id as the loader mapped it, hex */
static char dir[] = "/tmp/gpushim-elfsym.XXXXXX";
static char *image;			/* this executable's bytes */
static size_t image_len;
static volatile int sink;

/* Only in .symtab: static, and the executable exports nothing. */
static __attribute__((noinline)) int static_target(int x)
{
	sink += x * 7;
	return sink ^ (x << 3);
}

int global_target(int x);
__attribute__((noinline)) int global_target(int x)
{
	sink -= x * 5;
	return sink ^ (x << 2);
}

#if defined(__x86_64__) || defined(__aarch64__)
#define HAVE_ASM_SYMBOLS 1
/*
 * Functions the way hand-written assembly leaves them: elfsym_test_zero has no .size, and
 * elfsym_test_sized's size ends before its last instruction, with a size-0 function symbol
 * (elfsym_test_inner) inside it. elfsym_test_sized_end (no type) marks where the size ends.
 */
__asm__(".pushsection .text\n"
	".p2align 4\n"
	".type elfsym_test_zero, %function\n"
	"elfsym_test_zero:\n"
	"\tnop\n\tnop\n\tret\n"
	".p2align 4\n"
	".type elfsym_test_sized, %function\n"
	"elfsym_test_sized:\n"
	"\tnop\n"
	".type elfsym_test_inner, %function\n"
	"elfsym_test_inner:\n"
	"\tnop\n"
	".size elfsym_test_sized, . - elfsym_test_sized\n"
	"elfsym_test_sized_end:\n"
	"\tret\n"
	".popsection\n");
#define HIDDEN __attribute__((visibility("hidden")))
extern const char elfsym_test_zero[] HIDDEN, elfsym_test_sized[] HIDDEN;
extern const char elfsym_test_inner[] HIDDEN, elfsym_test_sized_end[] HIDDEN;
#endif

static uint64_t rng = 0x9e3779b97f4a7c15ull;

static uint64_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return rng;
}

/* A function's or label's address in the executable's ELF address space. */
static uint64_t offset_of(uintptr_t addr)
{
	return (uint64_t)(addr - bias);
}

/* The main program comes first: its bias, and the build-id of its PT_NOTE segments. */
static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	bias = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p = (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		uint64_t align = ph->p_align == 8 ? 8 : 4, pos = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		while (ph->p_memsz - pos >= sizeof(ElfW(Nhdr))) {
			ElfW(Nhdr) nh;
			uint64_t desc, j;

			memcpy(&nh, p + pos, sizeof(nh));
			desc = (sizeof(nh) + nh.n_namesz + align - 1) & ~(align - 1);
			if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
			    !memcmp(p + pos + sizeof(nh), "GNU", 4) && nh.n_descsz <= 64) {
				for (j = 0; j < nh.n_descsz; j++)
					sprintf(build_id + 2 * j, "%02x", p[pos + desc + j]);
				return 1;
			}
			pos += (desc + nh.n_descsz + align - 1) & ~(align - 1);
		}
	}
	return 1;
}

static void write_file(const char *path, const void *buf, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

	CHECK(fd >= 0);
	if (fd < 0)
		return;
	CHECK_EQ(write(fd, buf, len), (long long)len);
	close(fd);
}

static char *tmp_path(const char *name)
{
	static char path[8][256];
	static int k;
	char *p = path[k++ % 8];

	snprintf(p, sizeof(path[0]), "%s/%s", dir, name);
	return p;
}

/* One lookup in a fresh cache. Return: elfsym_lookup's, with the name checked to be a string. */
static int lookup_once(const char *path, const char *id, uint64_t offset)
{
	struct elfsym_cache *c = elfsym_new();
	const char *name = NULL;
	uint64_t off = 0;
	int ret = elfsym_lookup(c, path, id, offset, &name, &off);

	if (!ret)
		CHECK(name && strlen(name) > 0 && off <= offset);
	elfsym_free(c);
	return ret;
}

/* Whether @path names static_target at @offset (the copies of this executable). */
static int names_static(const char *path, const char *id)
{
	struct elfsym_cache *c = elfsym_new();
	uint64_t off = 1, want = offset_of((uintptr_t)static_target);
	const char *name = NULL;
	int ok = !elfsym_lookup(c, path, id, want, &name, &off) && !strcmp(name, "static_target") &&
		 off == 0;

	elfsym_free(c);
	return ok;
}

int main(void);

static void test_own_functions(void)
{
	struct elfsym_cache *c = elfsym_new();
	uint64_t st = offset_of((uintptr_t)static_target);
	uint64_t gl = offset_of((uintptr_t)global_target);
	const char *name = NULL, *first;
	uint64_t off = 99;

	CHECK_EQ(elfsym_lookup(c, self, "", st, &name, &off), 0);
	CHECK_STR(name, "static_target");
	CHECK_EQ(off, 0);
	first = name;
	CHECK_EQ(elfsym_lookup(c, self, NULL, st + 1, &name, &off), 0);
	CHECK_STR(name, "static_target");
	CHECK_EQ(off, 1);
	CHECK(name == first);		/* the same table: read once */

	CHECK_EQ(elfsym_lookup(c, self, "", gl, &name, &off), 0);
	CHECK_STR(name, "global_target");
	CHECK_EQ(off, 0);
	CHECK_EQ(elfsym_lookup(c, self, "", gl + 4, &name, &off), 0);
	CHECK_STR(name, "global_target");
	CHECK_EQ(off, 4);

	/* main is a sized symbol too; nothing lies at 0 or at the top of the address space. */
	CHECK_EQ(elfsym_lookup(c, self, "", offset_of((uintptr_t)main), &name, &off), 0);
	CHECK_STR(name, "main");
	name = NULL;
	CHECK_EQ(elfsym_lookup(c, self, "", 0, &name, &off), -1);
	CHECK_EQ(elfsym_lookup(c, self, "", UINT64_MAX, &name, &off), -1);
	CHECK(name == NULL);
	elfsym_free(c);
	sink += static_target(1) + global_target(2);
}

static void test_size0(void)
{
#ifdef HAVE_ASM_SYMBOLS
	struct elfsym_cache *c = elfsym_new();
	uint64_t zero = offset_of((uintptr_t)elfsym_test_zero);
	uint64_t sized = offset_of((uintptr_t)elfsym_test_sized);
	uint64_t inner = offset_of((uintptr_t)elfsym_test_inner);
	uint64_t end = offset_of((uintptr_t)elfsym_test_sized_end);
	const char *name = NULL;
	uint64_t off = 99;

	/* Alone: from its address to the next symbol. */
	CHECK_EQ(elfsym_lookup(c, self, "", zero, &name, &off), 0);
	CHECK_STR(name, "elfsym_test_zero");
	CHECK_EQ(off, 0);
	CHECK_EQ(elfsym_lookup(c, self, "", zero + 2, &name, &off), 0);
	CHECK_STR(name, "elfsym_test_zero");
	CHECK_EQ(off, 2);

	/* Inside a sized symbol: the sized one names it, and nothing names what follows it. */
	CHECK_EQ(elfsym_lookup(c, self, "", inner, &name, &off), 0);
	CHECK_STR(name, "elfsym_test_sized");
	CHECK_EQ(off, inner - sized);
	CHECK_EQ(elfsym_lookup(c, self, "", end - 1, &name, &off), 0);
	CHECK_STR(name, "elfsym_test_sized");
	CHECK_EQ(elfsym_lookup(c, self, "", end, &name, &off), -1);
	elfsym_free(c);
#endif
}

static void test_build_id(void)
{
	struct elfsym_cache *c = elfsym_new();
	uint64_t st = offset_of((uintptr_t)static_target);
	char wrong[sizeof(build_id)], upper[sizeof(build_id)];
	const char *name = NULL;
	uint64_t off;
	size_t i, len = strlen(build_id);

	/* The test is linked with --build-id: the loader must have mapped one. */
	CHECK(len >= 16);
	if (!len)
		return;
	CHECK_EQ(elfsym_lookup(c, self, build_id, st, &name, &off), 0);
	CHECK_STR(name, "static_target");

	strcpy(wrong, build_id);
	wrong[len - 1] = wrong[len - 1] == '0' ? '1' : '0';
	name = NULL;
	CHECK_EQ(elfsym_lookup(c, self, wrong, st, &name, &off), -1);
	CHECK(name == NULL);
	wrong[len - 1] = 0;		/* a prefix of the right one */
	CHECK_EQ(elfsym_lookup(c, self, wrong, st, &name, &off), -1);
	CHECK_EQ(elfsym_lookup(c, self, "zz", st, &name, &off), -1);

	/* A refused id does not spoil the file for the right one, in either case. */
	for (i = 0; i <= len; i++)
		upper[i] = build_id[i] >= 'a' && build_id[i] <= 'f' ? build_id[i] - 'a' + 'A' :
								      build_id[i];
	CHECK_EQ(elfsym_lookup(c, self, upper, st, &name, &off), 0);
	CHECK_EQ(elfsym_lookup(c, self, build_id, st, &name, &off), 0);
	elfsym_free(c);
}

/* Each path is read once per cache, a failure as well. */
static void test_memo(void)
{
	struct elfsym_cache *c = elfsym_new();
	char *late = tmp_path("late");
	uint64_t st = offset_of((uintptr_t)static_target);
	const char *name;
	uint64_t off;

	CHECK_EQ(elfsym_lookup(c, late, "", st, &name, &off), -1);
	write_file(late, image, image_len);
	CHECK_EQ(elfsym_lookup(c, late, "", st, &name, &off), -1);
	CHECK(names_static(late, build_id));
	elfsym_free(c);
	unlink(late);
}

static void test_not_elf(void)
{
	uint64_t st = offset_of((uintptr_t)static_target);
	char *text = tmp_path("text"), *empty = tmp_path("empty"), *fifo = tmp_path("fifo");
	char *trunc = tmp_path("trunc");
	static const char words[] = "#!/bin/sh\necho not an ELF file, but long enough to be read\n";

	write_file(text, words, sizeof(words) - 1);
	CHECK_EQ(lookup_once(text, "", 0x10), -1);
	write_file(empty, "", 0);
	CHECK_EQ(lookup_once(empty, "", 0x10), -1);
	write_file(trunc, image, 200);
	CHECK_EQ(lookup_once(trunc, "", st), -1);
	CHECK_EQ(lookup_once(trunc, build_id, st), -1);
	/* Not regular files: opened without blocking, then refused. */
	CHECK_EQ(mkfifo(fifo, 0600), 0);
	CHECK_EQ(lookup_once(fifo, "", st), -1);
	CHECK_EQ(lookup_once(dir, "", st), -1);
	CHECK_EQ(lookup_once("/dev/null", "", st), -1);
	CHECK_EQ(lookup_once(tmp_path("missing"), "", st), -1);
	CHECK_EQ(lookup_once("", "", st), -1);
	unlink(text);
	unlink(empty);
	unlink(fifo);
	unlink(trunc);
}

/* A copy of this executable with @len bytes at @pos replaced by @bytes. */
static void write_patched(const char *path, uint64_t pos, const void *bytes, size_t len)
{
	char *copy = malloc(image_len);

	CHECK(copy && pos + len <= image_len);
	if (!copy || pos + len > image_len) {
		free(copy);
		return;
	}
	memcpy(copy, image, image_len);
	memcpy(copy + pos, bytes, len);
	write_file(path, copy, image_len);
	free(copy);
}

static const Elf64_Shdr *find_section(uint32_t type, uint64_t *pos)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	uint64_t i;

	for (i = 0; i < eh->e_shnum; i++) {
		*pos = eh->e_shoff + i * sizeof(Elf64_Shdr);
		if (((const Elf64_Shdr *)(image + *pos))->sh_type == type)
			return (const Elf64_Shdr *)(image + *pos);
	}
	return NULL;
}

static void test_corrupt(void)
{
	uint64_t st = offset_of((uintptr_t)static_target);
	char *copy = tmp_path("copy"), *bad = tmp_path("bad");
	const Elf64_Shdr *symtab;
	uint64_t v, pos = 0;
	uint32_t link;
	uint16_t n;

	/* The intact copy is named: the failures below are the corruption's. */
	write_file(copy, image, image_len);
	CHECK(names_static(copy, build_id));

	v = 0xfffffffffff00000ull;
	write_patched(bad, offsetof(Elf64_Ehdr, e_shoff), &v, sizeof(v));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	v = image_len - 10;		/* the table would run past the end */
	write_patched(bad, offsetof(Elf64_Ehdr, e_shoff), &v, sizeof(v));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	n = 0xffff;
	write_patched(bad, offsetof(Elf64_Ehdr, e_shnum), &n, sizeof(n));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	n = 0;				/* extended numbering, and section 0 says 0 sections */
	write_patched(bad, offsetof(Elf64_Ehdr, e_shnum), &n, sizeof(n));
	CHECK_EQ(lookup_once(bad, "", st), -1);

	/* A broken .symtab gives way to .dynsym, which has no static_target. */
	symtab = find_section(SHT_SYMTAB, &pos);
	CHECK(symtab != NULL);
	if (!symtab)
		return;
	v = 0x7ffffffffffffff0ull;
	write_patched(bad, pos + offsetof(Elf64_Shdr, sh_offset), &v, sizeof(v));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	v = symtab->sh_size * 4096;
	write_patched(bad, pos + offsetof(Elf64_Shdr, sh_size), &v, sizeof(v));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	link = 0xfffffff0u;
	write_patched(bad, pos + offsetof(Elf64_Shdr, sh_link), &link, sizeof(link));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	link = 0;			/* section 0 is no string table */
	write_patched(bad, pos + offsetof(Elf64_Shdr, sh_link), &link, sizeof(link));
	CHECK_EQ(lookup_once(bad, "", st), -1);
	unlink(copy);
	unlink(bad);
}

/*
 * Random bytes in the ELF header, the section headers, the symbol table and its strings:
 * whatever the answer, no crash, and a name that is a string (lookup_once checks it; the
 * sanitizer builds check the reads).
 */
static void test_random_bytes(void)
{
	const Elf64_Ehdr *eh = (const Elf64_Ehdr *)image;
	uint64_t st = offset_of((uintptr_t)static_target), pos = 0, spans[4][2];
	const Elf64_Shdr *symtab = find_section(SHT_SYMTAB, &pos), *strtab;
	char *path = tmp_path("random");
	int round, fd, nr_found = 0;

	CHECK(symtab && symtab->sh_link < eh->e_shnum);
	if (!symtab || symtab->sh_link >= eh->e_shnum)
		return;
	strtab = (const Elf64_Shdr *)(image + eh->e_shoff + symtab->sh_link * sizeof(Elf64_Shdr));
	spans[0][0] = 0;
	spans[0][1] = sizeof(*eh);
	spans[1][0] = eh->e_shoff;
	spans[1][1] = (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr);
	spans[2][0] = symtab->sh_offset;
	spans[2][1] = symtab->sh_size;
	spans[3][0] = strtab->sh_offset;
	spans[3][1] = strtab->sh_size;

	write_file(path, image, image_len);
	fd = open(path, O_WRONLY);
	CHECK(fd >= 0);
	if (fd < 0)
		return;
	for (round = 0; round < 2000; round++) {
		uint64_t at[8];
		int k, nr = 1 + (int)(next() % 8);
		uint64_t offsets[3] = { st, offset_of((uintptr_t)global_target), next() % 0x100000 };

		for (k = 0; k < nr; k++) {
			uint64_t *s = spans[next() % 4];
			uint8_t b = (uint8_t)next();

			at[k] = s[0] + next() % s[1];
			CHECK_EQ(pwrite(fd, &b, 1, (off_t)at[k]), 1);
		}
		for (k = 0; k < 3; k++)
			nr_found += !lookup_once(path, "", offsets[k]);
		for (k = nr - 1; k >= 0; k--)
			CHECK_EQ(pwrite(fd, image + at[k], 1, (off_t)at[k]), 1);
	}
	close(fd);
	/* Most single bytes change nothing that matters: a lookup that never succeeds is a bug. */
	CHECK(nr_found > 500);
	CHECK(names_static(path, build_id));
	unlink(path);
}

static void read_image(void)
{
	struct stat st;
	int fd = open(self, O_RDONLY);

	if (fd < 0 || fstat(fd, &st) || st.st_size < (off_t)sizeof(Elf64_Ehdr)) {
		fprintf(stderr, "cannot read %s\n", self);
		exit(1);
	}
	image_len = (size_t)st.st_size;
	image = malloc(image_len);
	if (!image || read(fd, image, image_len) != (ssize_t)image_len) {
		fprintf(stderr, "cannot read %s\n", self);
		exit(1);
	}
	close(fd);
}

int main(void)
{
	read_image();
	dl_iterate_phdr(phdr_cb, NULL);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_own_functions);
	RUN(test_size0);
	RUN(test_build_id);
	RUN(test_memo);
	RUN(test_not_elf);
	RUN(test_corrupt);
	RUN(test_random_bytes);
	rmdir(dir);
	free(image);
	return TEST_RESULT();
}
