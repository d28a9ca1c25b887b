// SPDX-License-Identifier: MIT
/*
 * job.c - see job.h: a job's ranks, their collectives matched by name and order, clocks
 * aligned, the straggler and what made it late. No I/O, no printing.
 */
#include "job.h"

#include <stdlib.h>
#include <string.h>

#include "util/util.h"

#define JOB_MAX_NAMES 1024		/* distinct collective kernels; more: not matched */
#define JOB_MAX_OPS (32u << 20)		/* collectives held over all ranks: 768 MiB; the rest
					 * counted (ops_dropped), their instances unmatched */
#define JOB_MAX_NS (1ull << 61)		/* a time beyond (a trace's claim: 73 years) is not
					 * taken: differences of two stay within int64_t */

void job_init(struct job *j)
{
	memset(j, 0, sizeof(*j));
	j->straggler = -1;
	j->straggler_cause = -1;
}

/* The index of collective name @name, added when new; -1 past JOB_MAX_NAMES. */
static int64_t name_index(struct job *j, const char *name)
{
	size_t i;

	for (i = 0; i < j->nr_names; i++)
		if (!strcmp(j->names[i], name))
			return (int64_t)i;
	if (j->nr_names >= JOB_MAX_NAMES)
		return -1;
	XGROW(j->names, j->names_cap, j->nr_names + 1);
	j->names[j->nr_names] = xstrdup(name);
	return (int64_t)j->nr_names++;
}

/* Each step's largest part of idle time, one byte a step (the series is bounded). */
static void step_parts(struct job_rank *r, const struct loop *l)
{
	size_t i;
	int k;

	if (!l->nr_series || l->nr_series > UINT32_MAX - 1)
		return;
	r->nr_steps = l->nr_series;
	r->step_part = xmalloc(r->nr_steps);
	for (i = 0; i < r->nr_steps; i++) {
		const struct loop_idle *idle = loop_step_idle(l, i);
		int best = -1;

		for (k = 0; k < LOOP_NR_PARTS; k++)
			if (idle->part[k] && (best < 0 || idle->part[k] > idle->part[best]))
				best = k;
		r->step_part[i] = (int8_t)(best < 0 ? -1 : loop_part_id(best));
	}
}

void job_add(struct job *j, const char *path, const struct model *m, const struct stats *s,
	     const struct findings *fd)
{
	struct job_rank *r;
	size_t i, st;
	int k;

	XGROW(j->ranks, j->ranks_cap, j->nr_ranks + 1);
	r = &j->ranks[j->nr_ranks++];
	memset(r, 0, sizeof(*r));
	r->rank = m->rank;
	r->pid = m->pid;
	r->host = xstrdup(m->host ? m->host : "");
	r->path = xstrdup(path);
	r->has_gpu = fd->has_gpu;
	r->window_ns = fd->window_ns;
	for (k = 0; k < NR_CAUSES; k++)
		if (fd->causes[k].status == CS_MEASURED)
			r->cause_ns[k] = fd->causes[k].time_ns;
	r->comm_ns = s->gpu.comm_ns;
	r->comm_overlap_ns = s->gpu.comm_overlap_ns;
	r->nr_comm = s->gpu.nr_comm;
	r->ops_dropped = s->gpu.comm_ops_dropped;
	step_parts(r, &s->loop);
	for (i = 0, st = 0; i < s->gpu.nr_comm_ops; i++) {
		const struct s_comm_op *o = &s->gpu.comm_ops[i];
		int64_t n = name_index(j, model_string(m, o->name, "<kernel>"));

		if (n < 0 || j->nr_ops >= JOB_MAX_OPS || o->start > JOB_MAX_NS ||
		    o->end > JOB_MAX_NS) {
			r->ops_dropped++;
			continue;
		}
		j->nr_ops++;
		XGROW(r->ops, r->ops_cap, r->nr_ops + 1);
		/* ops come in order of start, steps in order: one walk */
		while (st < r->nr_steps && s->loop.series[st].end <= o->start)
			st++;
		r->ops[r->nr_ops++] = (struct job_op){
			o->start, o->end, (uint32_t)n,
			st < r->nr_steps && s->loop.series[st].start <= o->start ? (uint32_t)st + 1 : 0
		};
	}
}

/* A rank's ops by name, then in order: (name << 32 | index), sorted. */
static uint64_t *by_name(const struct job_rank *r)
{
	uint64_t *v = xmalloc((r->nr_ops + 1) * sizeof(*v));
	size_t i;

	for (i = 0; i < r->nr_ops; i++)
		v[i] = (uint64_t)r->ops[i].name << 32 | (uint32_t)i;
	xsort_u64(v, r->nr_ops);
	return v;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

	return x < y ? -1 : x > y;
}

static uint64_t median_u64(uint64_t *v, size_t n)
{
	if (!n)
		return 0;
	xsort_u64(v, n);
	return v[n / 2];
}

/*
 * Where name @name's ops start in each rank's sorted list (@sorted, @pos advanced past them)
 * and how many there are (@count). Returns the fewest of any rank.
 */
static size_t name_counts(const struct job *j, uint64_t **sorted, size_t *pos, size_t *first,
			  size_t *count, uint32_t name)
{
	size_t r, fewest = SIZE_MAX;

	for (r = 0; r < j->nr_ranks; r++) {
		const struct job_rank *rk = &j->ranks[r];

		while (pos[r] < rk->nr_ops && (uint32_t)(sorted[r][pos[r]] >> 32) < name)
			pos[r]++;
		first[r] = pos[r];
		while (pos[r] < rk->nr_ops && (uint32_t)(sorted[r][pos[r]] >> 32) == name)
			pos[r]++;
		count[r] = pos[r] - first[r];
		if (count[r] < fewest)
			fewest = count[r];
	}
	return fewest;
}

/* The op of rank @r that is instance @i of the name whose ops start at @first[r]. */
static const struct job_op *instance(const struct job *j, uint64_t **sorted, const size_t *first,
				     size_t r, size_t i)
{
	return &j->ranks[r].ops[(uint32_t)sorted[r][first[r] + i]];
}

/* Offsets across hosts: each rank's median end difference to the first rank's. */
static void align(struct job *j, uint64_t **sorted, size_t *pos, size_t *first, size_t *count)
{
	size_t r, n, i, nr;
	int64_t *d;

	for (r = 1; r < j->nr_ranks; r++) {
		d = xmalloc((j->ranks[r].nr_ops + 1) * sizeof(*d));
		nr = 0;
		memset(pos, 0, j->nr_ranks * sizeof(*pos));
		for (n = 0; n < j->nr_names; n++) {
			size_t fewest = name_counts(j, sorted, pos, first, count, (uint32_t)n);

			for (i = 0; i < fewest; i++)
				d[nr++] = (int64_t)(instance(j, sorted, first, r, i)->end -
						    instance(j, sorted, first, 0, i)->end);
		}
		qsort(d, nr, sizeof(*d), cmp_i64);
		j->ranks[r].offset_ns = nr ? d[nr / 2] : 0;
		free(d);
	}
}

/* What made the straggler late: its cause furthest above the other ranks' median. */
static void straggler_cause(struct job *j)
{
	const struct job_rank *s = &j->ranks[j->straggler];
	uint64_t *v = xmalloc(j->nr_ranks * sizeof(*v));
	int k;

	for (k = 0; k < NR_CAUSES; k++) {
		uint64_t med;
		size_t r, n = 0;

		/* busy time computing is the GPU used well, not lateness */
		if (k == CAUSE_COMPUTE_BOUND || k == CAUSE_MEMORY_CAPACITY)
			continue;
		for (r = 0; r < j->nr_ranks; r++)
			if ((int)r != j->straggler)
				v[n++] = j->ranks[r].cause_ns[k];
		med = median_u64(v, n);
		if (s->cause_ns[k] > med) {
			int at = j->nr_excess++;

			j->excess_ns[k] = s->cause_ns[k] - med;
			while (at > 0 && j->excess_ns[j->excess_order[at - 1]] < j->excess_ns[k]) {
				j->excess_order[at] = j->excess_order[at - 1];
				at--;
			}
			j->excess_order[at] = k;
		}
	}
	if (j->nr_excess) {
		j->straggler_cause = j->excess_order[0];
		j->straggler_excess_ns = j->excess_ns[j->straggler_cause];
	}
	free(v);
}

void job_compute(struct job *j)
{
	uint64_t **sorted;
	uint8_t **late;			/* a bit a step: it arrived last at one of its instances */
	size_t *pos, *first, *count, r, n, i;
	const char *host;

	j->is_computed = 1;
	if (j->nr_ranks < 2) {
		j->why_not = "one trace";
		return;
	}
	for (r = 0; r < j->nr_ranks; r++)
		if (!j->ranks[r].nr_ops) {
			j->why_not = "a rank ran no communication kernel the trace recorded";
			return;
		}
	host = j->ranks[0].host;
	j->is_one_host = host[0] != 0;
	for (r = 1; r < j->nr_ranks; r++)
		if (strcmp(j->ranks[r].host, host))
			j->is_one_host = 0;
	sorted = xcalloc(j->nr_ranks, sizeof(*sorted));
	pos = xcalloc(j->nr_ranks, sizeof(*pos));
	first = xcalloc(j->nr_ranks, sizeof(*first));
	count = xcalloc(j->nr_ranks, sizeof(*count));
	late = xcalloc(j->nr_ranks, sizeof(*late));
	for (r = 0; r < j->nr_ranks; r++) {
		sorted[r] = by_name(&j->ranks[r]);
		late[r] = xcalloc(j->ranks[r].nr_steps / 8 + 1, 1);
	}
	if (!j->is_one_host)
		align(j, sorted, pos, first, count);

	memset(pos, 0, j->nr_ranks * sizeof(*pos));
	for (n = 0; n < j->nr_names; n++) {
		size_t fewest = name_counts(j, sorted, pos, first, count, (uint32_t)n);

		for (r = 0; r < j->nr_ranks; r++)
			j->nr_unmatched += count[r] - fewest;
		for (i = 0; i < fewest; i++) {
			int64_t last = INT64_MIN, before = INT64_MIN, earliest = INT64_MAX;
			size_t who = 0;

			for (r = 0; r < j->nr_ranks; r++) {
				int64_t a = (int64_t)instance(j, sorted, first, r, i)->start -
					    j->ranks[r].offset_ns;

				if (a > last) {
					before = last;
					last = a;
					who = r;
				} else if (a > before) {
					before = a;
				}
				if (a < earliest)
					earliest = a;
			}
			for (r = 0; r < j->nr_ranks; r++)
				j->ranks[r].wait_ns +=
					(uint64_t)(last - ((int64_t)instance(j, sorted, first, r,
									     i)->start -
							   j->ranks[r].offset_ns));
			if (last > before) {	/* a tie for last: nobody kept the others */
				struct job_rank *w = &j->ranks[who];
				uint32_t step = instance(j, sorted, first, who, i)->step;

				w->nr_last++;
				w->cost_ns += (uint64_t)(last - before);
				if ((uint64_t)(last - before) > w->worst_ns) {
					w->worst_ns = (uint64_t)(last - before);
					w->worst_step = step;
					w->worst_name = (uint32_t)n;
					w->worst_instance = i + 1;
				}
				if (step && !(late[who][(step - 1) / 8] & (1u << ((step - 1) % 8)))) {
					late[who][(step - 1) / 8] |= (uint8_t)(1u << ((step - 1) % 8));
					w->steps_late++;
				}
			}
			j->skew_sum_ns += (uint64_t)(last - earliest);
			if ((uint64_t)(last - earliest) > j->skew_max_ns)
				j->skew_max_ns = (uint64_t)(last - earliest);
			j->nr_matched++;
		}
	}
	for (r = 0; r < j->nr_ranks; r++) {
		free(sorted[r]);
		free(late[r]);
		if (j->ranks[r].cost_ns &&
		    (j->straggler < 0 || j->ranks[r].cost_ns > j->ranks[j->straggler].cost_ns))
			j->straggler = (int)r;
	}
	free(sorted);
	free(late);
	free(pos);
	free(first);
	free(count);
	if (!j->nr_matched)
		j->why_not = "no collective ran on every rank";
	else if (j->straggler >= 0)
		straggler_cause(j);
}

int job_latest_part(const struct job_rank *r)
{
	return r->worst_step && r->worst_step <= r->nr_steps ? r->step_part[r->worst_step - 1] : -1;
}

void job_free(struct job *j)
{
	size_t i;

	for (i = 0; i < j->nr_ranks; i++) {
		free(j->ranks[i].host);
		free(j->ranks[i].path);
		free(j->ranks[i].ops);
		free(j->ranks[i].step_part);
	}
	free(j->ranks);
	for (i = 0; i < j->nr_names; i++)
		free(j->names[i]);
	free(j->names);
	job_init(j);
}
