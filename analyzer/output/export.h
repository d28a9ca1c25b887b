/* SPDX-License-Identifier: MIT */
/*
 * export.h - timeline exporters as an ops table: one process (model, statistics, findings with
 * gaps) at a time between begin and end, so several traces share one output document. An
 * exporter formats what the model and the analysis hold; it computes nothing of its own.
 */
#ifndef GPUSHIM_EXPORT_H
#define GPUSHIM_EXPORT_H

#include <stdint.h>
#include <stdio.h>

#include "analysis/findings.h"
#include "model/model.h"
#include "analysis/stats.h"

struct export_ctx {
	FILE *f;
	uint64_t base_ns;		/* subtracted from every timestamp */
	uint64_t nr_events;
	int nr_processes;
	int *pids;			/* the process ids used so far (kept distinct) */
	void *priv;
};

struct export_ops {
	const char *name;
	void (*begin)(struct export_ctx *x);
	void (*process)(struct export_ctx *x, const struct model *m, const struct stats *s,
			const struct findings *fd);
	void (*end)(struct export_ctx *x);
};

/* Chrome trace-event JSON (Perfetto, chrome://tracing). */
extern const struct export_ops export_chrome_ops;

/* The earliest timestamp of a model (its first call, GPU operation or note); UINT64_MAX if none. */
uint64_t export_first_ns(const struct model *m);

#endif /* GPUSHIM_EXPORT_H */
