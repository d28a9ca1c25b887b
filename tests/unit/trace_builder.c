// SPDX-License-Identifier: MIT
/*
 * trace_builder.c - see trace_builder.h. Test-only.
 */
#include "trace_builder.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <zstd.h>

static void grow(uint8_t **p, size_t *cap, size_t need)
{
	if (need <= *cap)
		return;
	*cap = need * 2 + 1024;
	*p = realloc(*p, *cap);
	if (!*p)
		abort();
}

static void put(struct tb *t, const void *p, size_t n)
{
	grow(&t->file, &t->cap, t->len + n);
	memcpy(t->file + t->len, p, n);
	t->len += n;
}

void tb_init(struct tb *t, uint16_t major, uint16_t minor)
{
	static const char cmd[] = "prog\0arg";

	tb_init_named(t, major, minor, "test", "testhost", cmd, sizeof(cmd) - 1);
}

void tb_init_named(struct tb *t, uint16_t major, uint16_t minor, const char *shim_version,
		   const char *host, const char *cmd, size_t cmd_len)
{
	size_t ver_len = strlen(shim_version), host_len = strlen(host);
	size_t strings = ver_len + host_len + cmd_len;
	static const uint8_t zeros[8];
	struct trace_file_header h;

	memset(t, 0, sizeof(*t));
	memset(&h, 0, sizeof(h));
	memcpy(h.magic, TRACE_MAGIC, sizeof(TRACE_MAGIC));
	h.version_major = major;
	h.version_minor = minor;
	h.header_bytes = (uint32_t)((sizeof(h) + strings + 7) & ~(size_t)7);
	h.pid = 4242;
	h.ppid = 1;
	h.start_mono_ns = 1000000000ull;
	h.start_real_ns = 1700000000000000000ull;
	h.shim_version_len = (uint16_t)ver_len;
	h.host_len = (uint16_t)host_len;
	h.cmdline_len = (uint32_t)cmd_len;
	h.rank = -1;
	put(t, &h, sizeof(h));
	put(t, shim_version, ver_len);
	put(t, host, host_len);
	put(t, cmd, cmd_len);
	put(t, zeros, h.header_bytes - sizeof(h) - strings);
}

void tb_free(struct tb *t)
{
	free(t->file);
	free(t->chunk);
	memset(t, 0, sizeof(*t));
}

void tb_rec(struct tb *t, const void *rec, size_t size)
{
	if (!size)
		return;		/* nothing to add (and no buffer yet to add it to) */
	grow(&t->chunk, &t->chunk_cap, t->chunk_len + size);
	memcpy(t->chunk + t->chunk_len, rec, size);
	t->chunk_len += size;
}

void tb_string(struct tb *t, uint32_t id, const char *s)
{
	uint8_t buf[512];
	struct trace_rec_string *r = (void *)buf;
	size_t len = strlen(s), size = (sizeof(*r) + len + 7) & ~(size_t)7;

	memset(buf, 0, sizeof(buf));
	r->hdr.type = TRACE_REC_STRING;
	r->hdr.size = (uint16_t)size;
	r->id = id;
	r->len = (uint32_t)len;
	memcpy(r + 1, s, len);
	tb_rec(t, buf, size);
}

void tb_func(struct tb *t, uint32_t id, uint32_t name)
{
	struct trace_rec_func fn;

	memset(&fn, 0, sizeof(fn));
	fn.hdr.type = TRACE_REC_FUNC;
	fn.hdr.size = sizeof(fn);
	fn.id = id;
	fn.handle = 0x1000ull * id;
	fn.name = name;
	tb_rec(t, &fn, sizeof(fn));
}

void tb_device(struct tb *t, uint32_t ordinal, uint32_t name)
{
	struct trace_rec_device d;

	memset(&d, 0, sizeof(d));
	d.hdr.type = TRACE_REC_DEVICE;
	d.hdr.size = sizeof(d);
	d.ordinal = ordinal;
	d.name = name;
	d.total_bytes = 1ull << 34;
	d.sm_count = 132;
	d.max_threads_per_sm = 2048;
	d.max_blocks_per_sm = 32;
	tb_rec(t, &d, sizeof(d));
}

void tb_api_def(struct tb *t, uint16_t api, uint8_t family, uint32_t name)
{
	struct trace_rec_api_def d;

	memset(&d, 0, sizeof(d));
	d.hdr.type = TRACE_REC_API_DEF;
	d.hdr.size = sizeof(d);
	d.api = api;
	d.family = family;
	d.name = name;
	tb_rec(t, &d, sizeof(d));
}

void tb_block(struct tb *t, uint32_t tid, uint32_t index, uint64_t base_ns)
{
	struct trace_rec_block b;

	memset(&b, 0, sizeof(b));
	b.hdr.type = TRACE_REC_BLOCK;
	b.hdr.size = sizeof(b);
	b.tid = tid;
	b.thread_index = index;
	b.base_ns = base_ns;
	tb_rec(t, &b, sizeof(b));
}

void tb_call(struct trace_call *c, uint16_t type, uint16_t size, uint32_t dt, uint16_t api,
	     uint32_t dur, uint32_t result, uint32_t seq)
{
	c->hdr.type = type;
	c->hdr.size = size;
	c->hdr.dt_ns = dt;
	c->api = api;
	c->dur = dur;
	c->result = result;
	c->seq = seq;
	c->flags = 0;
}

void tb_gpu_api(struct tb *t, uint64_t start, uint64_t end, uint32_t corr, uint32_t tid)
{
	struct trace_rec_gpu_api a;

	memset(&a, 0, sizeof(a));
	a.hdr.type = TRACE_REC_GPU_API;
	a.hdr.size = sizeof(a);
	a.start_ns = start;
	a.end_ns = end;
	a.cupti_corr = corr;
	a.tid = tid;
	a.domain = TRACE_GPU_API_RUNTIME;
	tb_rec(t, &a, sizeof(a));
}

void tb_gpu_kernel(struct tb *t, uint64_t start, uint64_t end, uint32_t corr, uint32_t name,
		   uint32_t grid_x, uint32_t block_x)
{
	struct trace_rec_gpu_kernel k;

	memset(&k, 0, sizeof(k));
	k.hdr.type = TRACE_REC_GPU_KERNEL;
	k.hdr.size = sizeof(k);
	k.start_ns = start;
	k.end_ns = end;
	k.cupti_corr = corr;
	k.name = name;
	k.grid[0] = grid_x;
	k.grid[1] = k.grid[2] = 1;
	k.block[0] = block_x;
	k.block[1] = k.block[2] = 1;
	tb_rec(t, &k, sizeof(k));
}

void tb_launch_bomb(struct tb *t, size_t raw_bytes)
{
	static uint8_t run[TRACE_MAX_RECORD];
	struct trace_rec_launch_run *r = (void *)run;
	struct trace_rec_launch l;

	tb_block(t, 100, 0, 1000);
	memset(&l, 0, sizeof(l));
	tb_call(&l.call, TRACE_REC_LAUNCH, sizeof(l), 1, 1, 1, 0, 1);
	l.grid[0] = l.grid[1] = l.grid[2] = 1;
	l.block[0] = l.block[1] = l.block[2] = 1;
	tb_rec(t, &l, sizeof(l));
	r->hdr.type = TRACE_REC_LAUNCH_RUN;
	r->hdr.size = TRACE_MAX_RECORD;
	r->count = (TRACE_MAX_RECORD - sizeof(*r)) / 2;
	r->seq = 2;
	memset(r + 1, 1, TRACE_MAX_RECORD - sizeof(*r));
	while (t->chunk_len + TRACE_MAX_RECORD <= raw_bytes)
		tb_rec(t, run, TRACE_MAX_RECORD);
}

void tb_flush(struct tb *t)
{
	struct trace_chunk_header ch;
	size_t cap = ZSTD_compressBound(t->chunk_len);
	uint8_t *out = malloc(cap);
	size_t n;

	if (!out)
		abort();
	n = ZSTD_compress(out, cap, t->chunk, t->chunk_len, 3);
	if (ZSTD_isError(n))
		abort();
	ch.magic = TRACE_CHUNK_MAGIC;
	ch.seq = t->seq++;
	ch.raw_bytes = (uint32_t)t->chunk_len;
	ch.zstd_bytes = (uint32_t)n;
	put(t, &ch, sizeof(ch));
	put(t, out, n);
	free(out);
	t->chunk_len = 0;
}

/* The test's directory of traces, removed with what it holds when the test exits. */
static char tb_dir[64];
static pid_t tb_pid;		/* its creator's: a forked child that exits leaves it */

static void tb_cleanup(void)
{
	struct dirent *e;
	char path[512];
	DIR *d;

	if (getpid() != tb_pid || !(d = opendir(tb_dir)))
		return;
	while ((e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
			snprintf(path, sizeof(path), "%s/%s", tb_dir, e->d_name);
			unlink(path);
		}
	closedir(d);
	rmdir(tb_dir);
}

const char *tb_write(struct tb *t, const char *name, size_t cut)
{
	static char path[512];
	FILE *f;

	if (!tb_dir[0]) {
		strcpy(tb_dir, "/tmp/gpushim-unit-XXXXXX");
		if (!mkdtemp(tb_dir))
			abort();
		tb_pid = getpid();
		atexit(tb_cleanup);
	}
	snprintf(path, sizeof(path), "%s/%s", tb_dir, name);
	f = fopen(path, "wb");
	if (!f)
		abort();
	fwrite(t->file, 1, cut && cut < t->len ? cut : t->len, f);
	fclose(f);
	return path;
}

void tb_note(struct tb *t, uint64_t ts_ns, uint32_t kind, uint32_t text)
{
	struct trace_rec_note n;

	memset(&n, 0, sizeof(n));
	n.hdr.type = TRACE_REC_NOTE;
	n.hdr.size = sizeof(n);
	n.ts_ns = ts_ns;
	n.kind = kind;
	n.text = text;
	tb_rec(t, &n, sizeof(n));
}

void tb_end(struct tb *t, uint64_t records, uint64_t end_ns, uint32_t reason)
{
	struct trace_rec_end e;

	memset(&e, 0, sizeof(e));
	e.hdr.type = TRACE_REC_END;
	e.hdr.size = sizeof(e);
	e.nr_records = records;
	e.end_ns = end_ns;
	e.reason = reason;
	tb_rec(t, &e, sizeof(e));
}
