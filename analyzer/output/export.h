/* SPDX-License-Identifier: MIT */
/*
 * export.h - timeline exporters as an ops table: one process (trace) at a time between begin
 * and end, so several traces share one output document. A process is fed by the analysis
 * driver as it goes through the trace (process_tap: the tap analyze_trace_tap feeds with the
 * calls, GPU operations, counter samples and idle gaps), then written by process with the
 * model's dictionaries and the finished statistics and findings. An exporter formats what the
 * model and the analysis hold; it computes nothing of its own, and holds no more of the run
 * than the stream does.
 */
#ifndef GPUSHIM_EXPORT_H
#define GPUSHIM_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/findings.h"
#include "model/model.h"
#include "analysis/stats.h"

struct analyze_tap;

struct export_ctx {
	FILE *f;
	uint64_t base_ns;		/* subtracted from every timestamp */
	uint64_t nr_events;		/* written to @f */
	int nr_processes;
	int *pids;			/* the process ids used so far (kept distinct) */
	int has_error;			/* a temporary file could not be written or read */
	const char *path;		/* -o: the directory or database of a wants_path format */
	void *priv;
};

struct export_ops {
	const char *name;
	/* Writes to @x->path (a directory, a database), not to @x->f; the analysis is a
	 * report's (its steps and window), where a timeline's is of the whole run. */
	int wants_path;
	/* Return: 0, or -errno when its temporary files cannot be made. */
	int (*begin)(struct export_ctx *x);
	/* Fill @tap for the next process: whatever it was fed before starts over. */
	void (*process_tap)(struct export_ctx *x, struct analyze_tap *tap);
	/* Write the process that was fed: @m its dictionaries, @s and @fd its analysis. A
	 * process fed and never written (its trace failed) leaves no trace in the document. */
	void (*process)(struct export_ctx *x, const struct model *m, const struct stats *s,
			const struct findings *fd);
	void (*end)(struct export_ctx *x);
};

/* Chrome trace-event JSON (Perfetto, chrome://tracing). */
extern const struct export_ops export_chrome_ops;
/* Perfetto's own protobuf trace (TracePacket stream). */
extern const struct export_ops export_perfetto_ops;
/* Tables (export_tables.c): CSV files in a directory; a SQLite database when built with
 * libsqlite3 (GPUSHIM_HAVE_SQLITE). */
extern const struct export_ops export_csv_ops;
extern const struct export_ops export_sqlite_ops;

/*
 * What a call is for a timeline (export_common.c): "launch", "memory", "copy", "set",
 * "sync" (a host synchronization), "stream", "graph", "module", "init", "other".
 * export_copy_name - "memcpy HtoD" ...; export_mem_name - a CUPTI memory kind: "pageable" ...
 */
const char *export_call_kind(const struct model *m, const struct m_call *c);
const char *export_copy_name(uint8_t copy_kind);
const char *export_mem_name(uint8_t mem_kind);

/*
 * The correlation number of call @c (NULL: 0, work joined to no call), the same in every
 * export of a trace, streamed or loaded whole (a call's index differs between the two): its
 * start in ns from the common origin times 1024, plus its thread slot modulo 1024, plus 1. Two
 * calls share one only when threads 1024 slots apart start in the same nanosecond.
 */
static inline uint64_t export_corr(const struct export_ctx *x, const struct m_call *c)
{
	uint64_t t;

	if (!c)
		return 0;
	t = c->t0 > x->base_ns ? c->t0 - x->base_ns : 0;
	return (t << 10 | (c->thread & 1023u)) + 1;
}

/*
 * export_pid - the process id a process with @pid gets: kept apart from those used (the same
 * pid twice: two hosts, or one trace given twice). export_pid_add - register it once written.
 */
int export_pid(const struct export_ctx *x, int pid);
void export_pid_add(struct export_ctx *x, int pid);

/*
 * export_stack - STACK @stack's frames (trace format 1.9), innermost first, one a line: the
 * Python ones ("train.py:57 in train_step"), then the native ones ("symbol+0x1c in module"),
 * into @sb (emptied first). Returns 0, or -1 when there is no such stack (@sb empty).
 */
struct strbuf;
int export_stack(const struct model *m, uint32_t stack, struct strbuf *sb);

/*
 * Spools (export_common.c): spool_open - an unlinked temporary file in $TMPDIR (else /tmp)
 * with a large stdio buffer *@buf (free it after fclose), or NULL with errno set.
 * spool_reset - empty it. spool_copy - append what it holds to @x->f, then empty it. Errors
 * set @x->has_error.
 */
FILE *spool_open(char **buf);
void spool_reset(struct export_ctx *x, FILE *f);
void spool_copy(struct export_ctx *x, FILE *f);

#endif /* GPUSHIM_EXPORT_H */
