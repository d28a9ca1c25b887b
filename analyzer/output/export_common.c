// SPDX-License-Identifier: MIT
/*
 * export_common.c - what the exporters share (export.h): the names of calls and operations,
 * the processes' ids, and the spools: unlinked temporary files that hold what a process wrote
 * until the process is known to be whole, or one kind of event until its turn in the
 * document. Formats only; computes nothing.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "export.h"
#include "analysis/stats.h"
#include "analysis/where.h"
#include "util/util.h"

#define SPOOL_BUF (1u << 16)	/* each spool's stdio buffer: the bulk of the output passes */

FILE *spool_open(char **buf)
{
	const char *dir = getenv("TMPDIR");
	char *path;
	FILE *f;
	int fd;

	/* tmpfile() would take /tmp whatever TMPDIR says. */
	if (!dir || !*dir) {
		f = tmpfile();
	} else {
		path = xmalloc(strlen(dir) + 32);
		sprintf(path, "%s/gpushim-export.XXXXXX", dir);
		fd = mkstemp(path);
		if (fd >= 0)
			unlink(path);
		free(path);
		f = fd >= 0 ? fdopen(fd, "w+") : NULL;
		if (!f && fd >= 0)
			close(fd);
	}
	*buf = NULL;
	if (f) {
		*buf = xmalloc(SPOOL_BUF);
		setvbuf(f, *buf, _IOFBF, SPOOL_BUF);
	}
	return f;
}

void spool_reset(struct export_ctx *x, FILE *f)
{
	if (fflush(f) || ftruncate(fileno(f), 0) < 0)
		x->has_error = 1;
	rewind(f);
}

void spool_copy(struct export_ctx *x, FILE *f)
{
	char buf[1 << 14];
	size_t n;

	if (fflush(f) || ferror(f))
		x->has_error = 1;
	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, x->f);
	if (ferror(f))
		x->has_error = 1;
	spool_reset(x, f);
}

/* ---- What the calls and operations are ---- */

const char *export_call_kind(const struct model *m, const struct m_call *c)
{
	switch (c->kind) {
	case MC_LAUNCH:
	case MC_GRAPH_LAUNCH:
	case MC_HOST_FUNC:
		return "launch";
	case MC_MEM:
		return "memory";
	case MC_COPY:
		return "copy";
	case MC_SET:
		return "set";
	case MC_SYNC:
		return stats_is_host_sync(c) ? "sync" : "stream";
	case MC_CAPTURE:
	case MC_GRAPH:
		return "graph";
	case MC_MODULE:
		return "module";
	default:
		return c->api < m->nr_apis && m->apis[c->api].family == TRACE_FAM_INIT ? "init" :
											 "other";
	}
}

const char *export_copy_name(uint8_t k)
{
	switch (k) {
	case TRACE_GPU_COPY_HTOD:
		return "memcpy HtoD";
	case TRACE_GPU_COPY_DTOH:
		return "memcpy DtoH";
	case TRACE_GPU_COPY_DTOD:
		return "memcpy DtoD";
	case TRACE_GPU_COPY_PTOP:
		return "memcpy PtoP";
	default:
		return "memcpy";
	}
}

const char *export_mem_name(uint8_t k)
{
	switch (k) {
	case TRACE_GPU_MEM_PAGEABLE:
		return "pageable";
	case TRACE_GPU_MEM_PINNED:
		return "pinned";
	case TRACE_GPU_MEM_DEVICE:
		return "device";
	case TRACE_GPU_MEM_ARRAY:
		return "array";
	case TRACE_GPU_MEM_MANAGED:
		return "managed";
	default:
		return "unknown";
	}
}

int export_pid(const struct export_ctx *x, int pid)
{
	int i;

	for (i = 0; i < x->nr_processes;)
		if (x->pids[i] == pid)
			pid += 10000000, i = 0;	/* the same pid twice (two hosts, or one trace
						 * given twice) */
		else
			i++;
	return pid;
}

void export_pid_add(struct export_ctx *x, int pid)
{
	x->pids = xrealloc(x->pids, (size_t)(x->nr_processes + 1) * sizeof(*x->pids));
	x->pids[x->nr_processes++] = pid;
}

int export_stack(const struct model *m, uint32_t stack, struct strbuf *sb)
{
	const struct m_stack *st = model_stack(m, stack);
	char name[320];
	unsigned i;

	sb->len = 0;
	if (sb->buf)
		sb->buf[0] = 0;
	if (!st)
		return -1;
	for (i = 0; i < st->nr_py; i++) {
		const struct trace_stack_py *py = &m->stack_py[st->py + i];

		sb_printf(sb, "%s%s:%d in %s", sb->len ? "\n" : "",
			  model_string(m, py->file, "?"), (int)py->line,
			  model_string(m, py->func, "?"));
	}
	for (i = 0; i < st->nr_native; i++) {
		where_pc_name(m, m->stack_pcs[st->pcs + i], name, sizeof(name));
		sb_printf(sb, "%s%s", sb->len ? "\n" : "", name);
	}
	return 0;
}
