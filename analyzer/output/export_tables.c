// SPDX-License-Identifier: MIT
/*
 * export_tables.c - the run as tables, for pandas and SQL: `export --format csv -o DIR` (one
 * CSV file a table, RFC 4180, a header row) and `--format sqlite -o FILE` (one SQLite database,
 * when the build has libsqlite3). The tables (README "Tables" documents every column):
 *
 *   processes  one row per trace
 *   names      kernel names: as recorded (mangled), demangled whole, and the timeline's title
 *   kernels    each kernel execution            memops  each copy and memset on a GPU
 *   calls      each intercepted driver call     gaps    each idle gap of a device with its cause
 *   steps      each step of the loop            ranges  each NVTX range occurrence
 *
 * Times are nanoseconds from the earliest trace's start, as the timelines'. The analysis is a
 * report's (its step choice and window), so the counts and causes are the report's. Rows go out
 * as the analysis streams the trace (memory bounded by the stream's), steps once the analysis
 * is done; a process the driver starts over, or whose trace fails half-way, is taken back (the
 * CSV files cut back to where it began, the database rolled back to its savepoint).
 * Formats only; computes nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "config.h"

#ifdef GPUSHIM_HAVE_SQLITE
#include <sqlite3.h>
#endif

#include <uthash.h>

#include "analysis/analyze.h"
#include "analysis/loop.h"
#include "export.h"
#include "model/first_look.h"
#include "output.h"
#include "report_output.h"
#include "util/util.h"

/* ---- The tables ---- */

enum col_type { C_INT, C_REAL, C_TEXT };

struct col {
	const char *name;
	int type;			/* enum col_type */
};

enum { T_PROCESSES, T_NAMES, T_KERNELS, T_MEMOPS, T_CALLS, T_GAPS, T_STEPS, T_RANGES, NR_TABLES };

#define COLS(...) (const struct col[]){ __VA_ARGS__, { NULL, 0 } }

static const struct table_def {
	const char *name;
	const struct col *cols;
} tables[NR_TABLES] = {
	[T_PROCESSES] = { "processes", COLS({ "pid", C_INT }, { "trace", C_TEXT },
					    { "host", C_TEXT }, { "command", C_TEXT },
					    { "rank", C_INT }, { "start_ns", C_INT }) },
	[T_NAMES] = { "names", COLS({ "pid", C_INT }, { "name_id", C_INT }, { "name", C_TEXT },
				    { "mangled", C_TEXT }, { "title", C_TEXT }) },
	[T_KERNELS] = { "kernels",
			COLS({ "pid", C_INT }, { "device", C_INT }, { "stream", C_INT },
			     { "start_ns", C_INT }, { "end_ns", C_INT }, { "dur_ns", C_INT },
			     { "name_id", C_INT }, { "name", C_TEXT }, { "blocks", C_INT },
			     { "block_threads", C_INT }, { "dyn_smem", C_INT },
			     { "grid_x", C_INT }, { "grid_y", C_INT }, { "grid_z", C_INT },
			     { "block_x", C_INT }, { "block_y", C_INT }, { "block_z", C_INT },
			     { "sm_fill", C_REAL }, { "graph_id", C_INT }, { "call_id", C_INT }) },
	[T_MEMOPS] = { "memops",
		       COLS({ "pid", C_INT }, { "device", C_INT }, { "stream", C_INT },
			    { "start_ns", C_INT }, { "end_ns", C_INT }, { "dur_ns", C_INT },
			    { "kind", C_TEXT }, { "bytes", C_INT }, { "src", C_TEXT },
			    { "dst", C_TEXT }, { "graph_id", C_INT }, { "call_id", C_INT }) },
	[T_CALLS] = { "calls",
		      COLS({ "pid", C_INT }, { "call_id", C_INT }, { "tid", C_INT },
			   { "api", C_TEXT }, { "kind", C_TEXT }, { "start_ns", C_INT },
			   { "end_ns", C_INT }, { "dur_ns", C_INT }, { "result", C_INT },
			   { "bytes", C_INT }, { "kernel_name_id", C_INT },
			   { "captured", C_INT }, { "place", C_TEXT }) },
	[T_GAPS] = { "gaps",
		     COLS({ "pid", C_INT }, { "device", C_INT }, { "start_ns", C_INT },
			  { "end_ns", C_INT }, { "dur_ns", C_INT }, { "cause", C_TEXT },
			  { "host_sync_ns", C_INT }, { "launch_overhead_ns", C_INT },
			  { "cpu_bound_ns", C_INT }, { "memcpy_ns", C_INT },
			  { "allocation_ns", C_INT }, { "noise_ns", C_INT },
			  { "dependency_ns", C_INT }, { "module_load_ns", C_INT }) },
	[T_STEPS] = { "steps",
		      COLS({ "pid", C_INT }, { "step", C_INT }, { "start_ns", C_INT },
			   { "end_ns", C_INT }, { "dur_ns", C_INT }, { "steady", C_INT },
			   { "gpu_ns", C_INT }, { "launches", C_INT }, { "syncs", C_INT },
			   { "allocs", C_INT }, { "module_loads", C_INT }, { "idle_ns", C_INT }) },
	[T_RANGES] = { "ranges",
		       COLS({ "pid", C_INT }, { "name", C_TEXT }, { "domain", C_TEXT },
			    { "tid", C_INT }, { "start_ns", C_INT }, { "end_ns", C_INT },
			    { "dur_ns", C_INT }) },
};

/* The gap columns' parts, in the columns' order (cause ids, then enum gap_part). */
static const int gap_cols[] = { CAUSE_HOST_SYNC, CAUSE_LAUNCH_OVERHEAD, CAUSE_CPU_BOUND,
				CAUSE_MEMCPY,	 CAUSE_ALLOCATION,	GAP_NOISE,
				GAP_DEPENDENCY,	 GAP_MODULE };

/* ---- Writers: CSV files, a SQLite database ---- */

struct kname {
	uint32_t id;			/* the name's STRING id: the same however the trace is read */
	UT_hash_handle hh;
};

struct tables {
	int is_sqlite;
	const char *path;
	FILE *csv[NR_TABLES];
	char *buf[NR_TABLES];
	off_t mark[NR_TABLES];		/* each CSV file's size before the process */
	int col;			/* the row's next column */
	int table;			/* ... of this table */
	struct strbuf clean;		/* text made valid UTF-8 */
#ifdef GPUSHIM_HAVE_SQLITE
	sqlite3 *db;
	sqlite3_stmt *ins[NR_TABLES];
#endif
	/* The process being fed */
	int is_open;
	const struct model *m;
	int pid;
	struct kname *knames;		/* kernel names written to names (uthash) */
	struct name_cache names;
	struct model_sink sink;
};

/* A time from the common origin; before it (an NVTX range the program opened before the
 * shim's start), negative. */
static int64_t rel(const struct export_ctx *x, uint64_t t)
{
	return (int64_t)(t - x->base_ns);
}

static void row_begin(struct export_ctx *x, int table)
{
	struct tables *tb = x->priv;

	tb->table = table;
	tb->col = 0;
}

/* The separator before a CSV value (none before the first). */
static FILE *csv_next(struct tables *tb)
{
	FILE *f = tb->csv[tb->table];

	if (tb->col++)
		fputc(',', f);
	return f;
}

static void put_int(struct export_ctx *x, int64_t v)
{
	struct tables *tb = x->priv;

#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sqlite3_bind_int64(tb->ins[tb->table], ++tb->col, v);
		return;
	}
#endif
	fprintf(csv_next(tb), "%" PRId64, v);
}

static void put_u64(struct export_ctx *x, uint64_t v)
{
	put_int(x, v > INT64_MAX ? INT64_MAX : (int64_t)v);	/* SQLite's integers are signed */
}

static void put_null(struct export_ctx *x)
{
	struct tables *tb = x->priv;

#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sqlite3_bind_null(tb->ins[tb->table], ++tb->col);
		return;
	}
#endif
	csv_next(tb);
}

static void put_real(struct export_ctx *x, double v)
{
	struct tables *tb = x->priv;

	if (!isfinite(v)) {
		put_null(x);
		return;
	}
#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sqlite3_bind_double(tb->ins[tb->table], ++tb->col, v);
		return;
	}
#endif
	fprintf(csv_next(tb), "%.6g", v);
}

/* Text, made valid UTF-8; in CSV quoted where it holds a separator, a quote or a line end. */
static void put_text(struct export_ctx *x, const char *s)
{
	struct tables *tb = x->priv;
	const char *c;
	FILE *f;

	if (!s) {
		put_null(x);
		return;
	}
	s = utf8_clean(&tb->clean, s);
#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sqlite3_bind_text(tb->ins[tb->table], ++tb->col, s, -1, SQLITE_TRANSIENT);
		return;
	}
#endif
	f = csv_next(tb);
	if (!s[strcspn(s, ",\"\r\n")] && *s != ' ' && (!*s || s[strlen(s) - 1] != ' ')) {
		fputs(s, f);
		return;
	}
	fputc('"', f);
	for (c = s; *c; c++) {
		if (*c == '"')
			fputc('"', f);
		fputc(*c, f);
	}
	fputc('"', f);
}

static void row_end(struct export_ctx *x)
{
	struct tables *tb = x->priv;

#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sqlite3_stmt *st = tb->ins[tb->table];

		if (sqlite3_step(st) != SQLITE_DONE)
			x->has_error = 1;
		sqlite3_reset(st);
		return;
	}
#endif
	fputs("\r\n", tb->csv[tb->table]);
}

#ifdef GPUSHIM_HAVE_SQLITE
static int sql_exec(struct export_ctx *x, const char *sql)
{
	struct tables *tb = x->priv;
	char *err = NULL;

	if (sqlite3_exec(tb->db, sql, NULL, NULL, &err) != SQLITE_OK) {
		fprintf(stderr, "gpushim: export: %s: %s\n", tb->path, err ? err : "sqlite error");
		sqlite3_free(err);
		x->has_error = 1;
		return -1;
	}
	return 0;
}

/* The database, its tables and their prepared inserts; the whole export one transaction. */
static int sqlite_open(struct export_ctx *x)
{
	struct tables *tb = x->priv;
	struct strbuf sql;
	int t, c;

	if (unlink(tb->path) < 0 && errno != ENOENT)
		return -errno;
	if (sqlite3_open(tb->path, &tb->db) != SQLITE_OK) {
		sqlite3_close(tb->db);
		tb->db = NULL;
		return -EIO;
	}
	sb_init(&sql);
	for (t = 0; t < NR_TABLES; t++) {
		sb_printf(&sql, "CREATE TABLE %s (", tables[t].name);
		for (c = 0; tables[t].cols[c].name; c++)
			sb_printf(&sql, "%s%s %s", c ? ", " : "", tables[t].cols[c].name,
				  tables[t].cols[c].type == C_INT  ? "INTEGER" :
				  tables[t].cols[c].type == C_REAL ? "REAL" :
								     "TEXT");
		sb_puts(&sql, ");\n");
	}
	sb_puts(&sql, "BEGIN;\n");
	c = sql_exec(x, sql.buf);
	for (t = 0; t < NR_TABLES && !c; t++) {
		int k;

		sql.len = 0;
		sb_printf(&sql, "INSERT INTO %s VALUES (", tables[t].name);
		for (k = 0; tables[t].cols[k].name; k++)
			sb_puts(&sql, k ? ", ?" : "?");
		sb_puts(&sql, ")");
		if (sqlite3_prepare_v2(tb->db, sql.buf, -1, &tb->ins[t], NULL) != SQLITE_OK)
			c = -1;
	}
	sb_free(&sql);
	return c ? -EIO : 0;
}
#endif

/* The CSV files, each with its header row. */
static int csv_open(struct export_ctx *x)
{
	struct tables *tb = x->priv;
	int t, c;

	if (mkdir(tb->path, 0777) < 0 && errno != EEXIST)
		return -errno;
	for (t = 0; t < NR_TABLES; t++) {
		char *p = xmalloc(strlen(tb->path) + 32);

		sprintf(p, "%s/%s.csv", tb->path, tables[t].name);
		tb->csv[t] = fopen(p, "w+");
		free(p);
		if (!tb->csv[t])
			return -errno;
		tb->buf[t] = xmalloc(1u << 16);
		setvbuf(tb->csv[t], tb->buf[t], _IOFBF, 1u << 16);
		for (c = 0; tables[t].cols[c].name; c++)
			fprintf(tb->csv[t], "%s%s", c ? "," : "", tables[t].cols[c].name);
		fputs("\r\n", tb->csv[t]);
	}
	return 0;
}

/* Where the process begins: what take_back returns to. */
static void mark(struct export_ctx *x)
{
	struct tables *tb = x->priv;
	int t;

#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sql_exec(x, "SAVEPOINT process;");
		return;
	}
#endif
	for (t = 0; t < NR_TABLES; t++)
		if (fflush(tb->csv[t]) || (tb->mark[t] = ftello(tb->csv[t])) < 0)
			x->has_error = 1;
}

static void take_back(struct export_ctx *x)
{
	struct tables *tb = x->priv;
	int t;

	tb->is_open = 0;
#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite) {
		sql_exec(x, "ROLLBACK TO process; RELEASE process;");
		return;
	}
#endif
	for (t = 0; t < NR_TABLES; t++)
		if (fflush(tb->csv[t]) || ftruncate(fileno(tb->csv[t]), tb->mark[t]) < 0 ||
		    fseeko(tb->csv[t], tb->mark[t], SEEK_SET) < 0)
			x->has_error = 1;
}

/* ---- Rows, as the driver hands the run on ---- */

static void knames_free(struct tables *tb)
{
	struct kname *e, *tmp;

	HASH_ITER(hh, tb->knames, e, tmp) {
		HASH_DEL(tb->knames, e);
		free(e);
	}
}

/*
 * The id of the kernel name with STRING id @id (0: unknown) in this process: the STRING id
 * itself; its row in names written when first met.
 */
static int64_t name_id(struct export_ctx *x, uint32_t id)
{
	struct tables *tb = x->priv;
	struct kname *e;
	const struct name_forms *nf;

	HASH_FIND(hh, tb->knames, &id, sizeof(id), e);
	if (e)
		return e->id;
	e = xcalloc(1, sizeof(*e));
	e->id = id;
	HASH_ADD(hh, tb->knames, id, sizeof(e->id), e);
	nf = name_cache_get(&tb->names, model_string(tb->m, id, "<unknown kernel>"));
	row_begin(x, T_NAMES);
	put_int(x, tb->pid);
	put_int(x, e->id);
	put_text(x, nf->whole);
	put_text(x, nf->name);
	put_text(x, nf->title);
	row_end(x);
	return e->id;
}

/* The NVTX ranges the first look kept, each occurrence a row. */
static void ranges(struct export_ctx *x, const struct model *m, const struct first_look *p)
{
	struct tables *tb = x->priv;
	const struct nvtx_ranges *r = &p->ranges;
	size_t i, k;

	for (i = 0; i < r->nr_occ; i++) {
		const struct nvtx_occ *o = &r->occ[i];
		const struct nvtx_range_name *n = o->name < r->nr_names ? &r->names[o->name] : NULL;
		const char *domain = NULL;

		row_begin(x, T_RANGES);
		put_int(x, tb->pid);
		put_text(x, n && n->name ? model_string(m, n->name, "(unnamed)") :
			    n	       ? "(unnamed)" :
					 "(other names)");
		for (k = 0; n && n->domain && k < m->nr_nvtx_domains; k++)
			if (m->nvtx_domains[k].id == n->domain)
				domain = model_string(m, m->nvtx_domains[k].name, NULL);
		put_text(x, domain);
		if (o->thread < m->nr_threads)
			put_int(x, m->threads[o->thread].tid);
		else
			put_null(x);
		put_int(x, rel(x, o->start));
		put_int(x, rel(x, o->end));
		put_u64(x, o->end > o->start ? o->end - o->start : 0);
		row_end(x);
	}
}

static void tap_begin(void *ctx, const struct model *m, const struct first_look *p)
{
	struct export_ctx *x = ctx;
	struct tables *tb = x->priv;

	if (tb->is_open)
		take_back(x);
	mark(x);
	tb->is_open = 1;
	tb->m = m;
	tb->pid = export_pid(x, (int)m->pid);
	knames_free(tb);

	row_begin(x, T_PROCESSES);
	put_int(x, tb->pid);
	put_text(x, m->path);
	put_text(x, m->host);
	put_text(x, m->cmdline);
	put_int(x, m->rank);
	put_int(x, rel(x, m->start_mono_ns));
	row_end(x);
	ranges(x, m, p);
}

/* The STRING id of a FUNC's name (model_func_name's), 0 when unknown. */
static uint32_t func_name(const struct model *m, uint32_t func)
{
	return func && func < m->nr_funcs ? m->funcs[func].name : 0;
}

static void tap_call(void *ctx, const struct m_call *c, uint32_t id)
{
	struct export_ctx *x = ctx;
	struct tables *tb = x->priv;
	const struct model *m = tb->m;
	/* before the row: a new name writes a row of names */
	int64_t k = c->kind == MC_LAUNCH ? name_id(x, func_name(m, model_launch(m, c)->func)) : -1;
	char place[512];
	uint32_t stack;

	row_begin(x, T_CALLS);
	put_int(x, tb->pid);
	put_u64(x, export_corr(x, c));
	put_int(x, c->thread < m->nr_threads ? m->threads[c->thread].tid : 0);
	put_text(x, model_api_name(m, c->api));
	put_text(x, export_call_kind(m, c));
	put_int(x, rel(x, c->t0));
	put_int(x, rel(x, c->t1));
	put_u64(x, c->t1 > c->t0 ? c->t1 - c->t0 : 0);
	put_int(x, model_call_result(m, id));
	if (c->kind == MC_COPY || c->kind == MC_SET || c->kind == MC_MEM)
		put_u64(x, model_call_args(m, c)->bytes);
	else
		put_null(x);
	if (k >= 0)
		put_int(x, k);
	else
		put_null(x);
	put_int(x, !!(c->flags & MCF_CAPTURING));
	/* where in the program, for a call captured with its stack (report_where's text) */
	stack = model_call_stack(m, id);
	if (stack && report_where(m, stack, place, sizeof(place), NULL, 0) >= 0 && place[0])
		put_text(x, place);
	else
		put_null(x);
	row_end(x);
}

static void tap_op(void *ctx, const struct m_gpu_op *g, const struct m_call *c, uint32_t id)
{
	struct export_ctx *x = ctx;
	struct tables *tb = x->priv;
	const struct model *m = tb->m;
	const struct m_gpu_shape *sh = model_gpu_shape(m, g);
	int64_t k = 0;
	int i;

	(void)id;	/* the call's number differs streamed and loaded whole */

	if (sh->kind == MG_KERNEL)
		k = name_id(x, sh->name);
	row_begin(x, sh->kind == MG_KERNEL ? T_KERNELS : T_MEMOPS);
	put_int(x, tb->pid);
	put_int(x, sh->device);
	put_int(x, sh->stream);
	put_int(x, rel(x, g->start));
	put_int(x, rel(x, g->end));
	put_u64(x, g->end > g->start ? g->end - g->start : 0);
	if (sh->kind == MG_KERNEL) {
		int is_est;
		double fill = stats_fill_op(m, g, &is_est);
		const struct name_forms *nf =
			name_cache_get(&tb->names, model_string(m, sh->name, "<unknown kernel>"));

		put_int(x, k);
		put_text(x, nf->whole);
		put_u64(x, sh->blocks);
		put_int(x, sh->block_threads);
		put_int(x, sh->dyn_smem);
		if (c && c->kind == MC_LAUNCH) {
			const struct m_launch_shape *l = model_launch(m, c);

			for (i = 0; i < 3; i++)
				put_int(x, l->grid[i]);
			for (i = 0; i < 3; i++)
				put_int(x, l->block[i]);
		} else {
			for (i = 0; i < 6; i++)
				put_null(x);
		}
		if (fill >= 0)
			put_real(x, fill);
		else
			put_null(x);
	} else {
		put_text(x, sh->kind == MG_MEMCPY ? export_copy_name(sh->copy_kind) : "memset");
		put_u64(x, sh->bytes);
		if (sh->kind == MG_MEMCPY)
			put_text(x, export_mem_name(sh->src_kind));
		else
			put_null(x);
		put_text(x, export_mem_name(sh->dst_kind));
	}
	if (sh->graph_id)
		put_int(x, sh->graph_id);
	else
		put_null(x);
	if (c)
		put_u64(x, export_corr(x, c));
	else
		put_null(x);
	row_end(x);
}

static void tap_sample(void *ctx, const struct m_pm_sample *s)
{
	(void)ctx, (void)s;
}

static void tap_floor(void *ctx, uint64_t t)
{
	(void)ctx, (void)t;
}

/* Every idle gap as the findings split it (noise too: its cause says so). */
static void tap_gap(void *ctx, const struct f_gap *g)
{
	struct export_ctx *x = ctx;
	struct tables *tb = x->priv;
	size_t k;

	row_begin(x, T_GAPS);
	put_int(x, tb->pid);
	put_int(x, g->device);
	put_int(x, rel(x, g->start));
	put_int(x, rel(x, g->end));
	put_u64(x, g->end > g->start ? g->end - g->start : 0);
	put_text(x, gap_part_name(gap_label(g)));
	for (k = 0; k < sizeof(gap_cols) / sizeof(gap_cols[0]); k++)
		put_u64(x, g->part[gap_cols[k]]);
	row_end(x);
}

/* ---- The document ---- */

static int tables_begin(struct export_ctx *x, int is_sqlite)
{
	struct tables *tb = xcalloc(1, sizeof(*tb));

	x->priv = tb;
	tb->path = x->path;
	tb->is_sqlite = is_sqlite;
	tb->sink = (struct model_sink){ tap_begin, tap_call, tap_op, tap_sample, tap_floor, x };
#ifdef GPUSHIM_HAVE_SQLITE
	if (is_sqlite)
		return sqlite_open(x);
#endif
	return csv_open(x);
}

static int csv_begin(struct export_ctx *x)
{
	return tables_begin(x, 0);
}

static void tables_process_tap(struct export_ctx *x, struct analyze_tap *tap)
{
	struct tables *tb = x->priv;

	if (tb->is_open)
		take_back(x);	/* the last one's trace failed */
	tap->sink = &tb->sink;
	tap->gap = tap_gap;
}

static void tables_process(struct export_ctx *x, const struct model *m, const struct stats *s,
			   const struct findings *fd)
{
	struct tables *tb = x->priv;
	const struct loop *l = &s->loop;
	size_t i;

	(void)m, (void)fd;
	for (i = 0; i < l->nr_series; i++) {
		const struct loop_step *st = &l->series[i];
		const struct loop_idle *idle = loop_step_idle(l, i);

		row_begin(x, T_STEPS);
		put_int(x, tb->pid);
		put_u64(x, i + 1);
		put_int(x, rel(x, st->start));
		put_int(x, rel(x, st->end));
		put_u64(x, st->end > st->start ? st->end - st->start : 0);
		put_int(x, loop_is_steady(l, i));
		put_u64(x, st->gpu_ns);
		put_int(x, st->launches);
		put_int(x, st->syncs);
		put_int(x, st->allocs);
		put_int(x, st->modules);
		put_u64(x, idle->ns);
		row_end(x);
	}
#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->is_sqlite)
		sql_exec(x, "RELEASE process;");
#endif
	export_pid_add(x, tb->pid);
	tb->is_open = 0;
}

static void tables_end(struct export_ctx *x)
{
	struct tables *tb = x->priv;
	int t;

	if (!tb)
		return;
	if (tb->is_open)
		take_back(x);
#ifdef GPUSHIM_HAVE_SQLITE
	if (tb->db) {
		for (t = 0; t < NR_TABLES; t++)
			sqlite3_finalize(tb->ins[t]);
		if (!x->has_error)
			sql_exec(x, "COMMIT;");
		if (sqlite3_close(tb->db) != SQLITE_OK)
			x->has_error = 1;
	}
#endif
	for (t = 0; t < NR_TABLES; t++) {
		if (tb->csv[t]) {
			x->has_error |= ferror(tb->csv[t]) != 0;
			x->has_error |= fclose(tb->csv[t]) != 0;
		}
		free(tb->buf[t]);
	}
	knames_free(tb);
	name_cache_free(&tb->names);
	sb_free(&tb->clean);
	free(tb);
	free(x->pids);
	x->priv = NULL;
	x->pids = NULL;
}

const struct export_ops export_csv_ops = {
	.name = "csv",
	.wants_path = 1,
	.begin = csv_begin,
	.process_tap = tables_process_tap,
	.process = tables_process,
	.end = tables_end,
};

#ifdef GPUSHIM_HAVE_SQLITE
static int sqlite_begin(struct export_ctx *x)
{
	return tables_begin(x, 1);
}

const struct export_ops export_sqlite_ops = {
	.name = "sqlite",
	.wants_path = 1,
	.begin = sqlite_begin,
	.process_tap = tables_process_tap,
	.process = tables_process,
	.end = tables_end,
};
#endif
