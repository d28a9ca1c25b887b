// SPDX-License-Identifier: MIT
/*
 * export_whatif.c - the what-if timeline (export_whatif.h): a run's window as recorded and as
 * replayed, two processes of a Chrome trace-event document. Each process's slices are
 * gathered, sorted track by track (a slice before the slices it holds), and written with the
 * events export_chrome.c writes: "X" slices in microseconds with nanosecond precision, "M"
 * names and sort indexes, every string from the trace through json_escape; a kernel's slice
 * titled as export_chrome.c titles it, with its name whole and as recorded in its arguments.
 * Formats only.
 */
#include "export_whatif.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "config.h"
#include "analysis/stats.h"
#include "output.h"
#include "util/util.h"

/* Track ids of the GPU side, above any Linux thread id (as export_chrome.c has them). */
#define GPU_TID_BASE 0x40000000u
#define OVERLAP_TID_BASE 0x3e000000u	/* a track's overlapping lanes (below the idle tracks') */
#define GPU_TRACK (1ull << 63)	/* a slice's track: its thread's id, or this | device, stream */

/* The document: the first event goes without a separator. */
struct doc {
	FILE *f;
	uint64_t nr_events;
};

struct slice {
	uint64_t track;
	uint64_t start, end;
	uint32_t idx;			/* the call's or the operation's */
};

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;

	if (x->track != y->track)
		return x->track < y->track ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)		/* the longer first: it holds the other */
		return x->end > y->end ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

static void put_us(FILE *f, const char *key, uint64_t ns)
{
	fprintf(f, ",\"%s\":%" PRIu64 ".%03u", key, ns / 1000, (unsigned)(ns % 1000));
}

static void ev_open(struct doc *d, const char *ph, int pid, uint64_t tid)
{
	fprintf(d->f, "%s{\"ph\":\"%s\",\"pid\":%d,\"tid\":%" PRIu64,
		d->nr_events++ ? ",\n" : "\n", ph, pid, tid);
}

/* "name" metadata of a process or thread, and its sort position. */
static void meta(struct doc *d, int pid, uint64_t tid, const char *what, const char *name,
		 int64_t sort)
{
	ev_open(d, "M", pid, tid);
	fprintf(d->f, ",\"name\":\"%s\",\"args\":{\"name\":", what);
	json_escape(d->f, name, strlen(name));
	fputs("}}", d->f);
	ev_open(d, "M", pid, tid);
	fprintf(d->f, ",\"name\":\"%s\",\"args\":{\"sort_index\":%" PRId64 "}}",
		strcmp(what, "process_name") ? "thread_sort_index" : "process_sort_index", sort);
}

/* The slices of the window on clock @clk, sorted (*@n of them; free() it). */
static struct slice *gather(const struct model *m, const struct replay *r, enum replay_clock clk,
			    size_t *n)
{
	struct slice *v = xmalloc((m->nr_calls + m->nr_gpu + 1) * sizeof(*v));
	uint64_t a, b;
	size_t i;

	*n = 0;
	for (i = 0; i < m->nr_calls; i++) {
		uint32_t th = m->calls[i].thread;

		if (!replay_call_times(r, i, clk, &a, &b))
			continue;
		v[(*n)++] = (struct slice){ th < m->nr_threads ? m->threads[th].tid : 0, a, b,
					    (uint32_t)i };
	}
	for (i = 0; i < m->nr_gpu; i++) {
		const struct m_gpu_shape *sh = model_gpu_shape(m, &m->gpu[i]);

		if (!replay_op_times(r, i, clk, &a, &b))
			continue;
		v[(*n)++] = (struct slice){ GPU_TRACK | (uint64_t)sh->device << 32 | sh->stream, a,
					    b, (uint32_t)i };
	}
	xqsort(v, *n, sizeof(*v), cmp_slice);
	return v;
}

/*
 * A track's lanes: its slices nest or follow on a lane, each lane a stack of the ends of the
 * slices open there. A slice that would overlap another partly (a recording whose operations
 * on a stream overlap: JAX's copies and kernels) goes to the first lane where it fits, an
 * "overlapping" track of its own beside the track; past MAX_LANES it is cut to end with the
 * slice around it (on no committed trace: JAX's need one lane more).
 */
#define MAX_LANES 8

struct lane {
	uint64_t *end;
	size_t n, cap;
	uint64_t tid;
};

/* The slice [@start, @end) on one of @v's lanes (*@nr used): the lane, or the last one
 * with *@end cut to fit (the lanes' count unchanged: MAX_LANES used). */
static size_t lane_place(struct lane *v, size_t *nr, uint64_t start, uint64_t *end)
{
	size_t k;

	for (k = 0; k < *nr; k++) {
		struct lane *l = &v[k];

		while (l->n && l->end[l->n - 1] <= start)
			l->n--;
		if (!l->n || l->end[l->n - 1] >= *end)
			break;
	}
	if (k == *nr && *nr < MAX_LANES) {
		v[(*nr)++].n = 0;
	} else if (k == *nr) {
		k--;
		*end = v[k].end[v[k].n - 1];
	}
	XGROW(v[k].end, v[k].cap, v[k].n + 1);
	v[k].end[v[k].n++] = *end;
	return k;
}

/* One process: its name, its tracks' names, its slices from the window's first. */
static void process(struct doc *d, const struct model *m, const struct replay *r,
		    enum replay_clock clk, int pid, const char *name, struct name_cache *names)
{
	FILE *f = d->f;
	struct lane lanes[MAX_LANES];
	struct slice *v;
	uint64_t base, last, track = UINT64_MAX, tid, nr_overlap = 0;
	size_t n, i, k, nr_lanes = 0, nr_gpu_tracks = 0;
	int64_t sort = 0;
	char buf[64], lane_name[112];

	memset(lanes, 0, sizeof(lanes));
	replay_window_times(r, clk, &base, &last);
	meta(d, pid, 0, "process_name", name, pid);
	v = gather(m, r, clk, &n);
	for (i = 0; i < n; i++) {
		const struct slice *s = &v[i];
		uint64_t end = s->end > s->start ? s->end : s->start, whole = end;
		size_t before;

		if (s->track != track) {
			track = s->track;
			nr_lanes = 0;
			if (track & GPU_TRACK)
				snprintf(buf, sizeof(buf), "GPU %u stream %u",
					 (unsigned)(track >> 32 & 0xffff), (unsigned)track);
			else
				snprintf(buf, sizeof(buf), "host thread %" PRIu64, track);
		}
		before = nr_lanes;
		k = lane_place(lanes, &nr_lanes, s->start, &end);
		if (nr_lanes != before) {	/* a new lane: its track's name */
			if (k)
				lanes[k].tid = OVERLAP_TID_BASE + nr_overlap++;
			else if (track & GPU_TRACK)
				lanes[k].tid = GPU_TID_BASE + nr_gpu_tracks++;
			else
				lanes[k].tid = track;
			if (k)
				snprintf(lane_name, sizeof(lane_name), "%s (overlapping %zu)", buf,
					 k);
			meta(d, pid, lanes[k].tid, "thread_name", k ? lane_name : buf, sort++);
		}
		tid = lanes[k].tid;

		ev_open(d, "X", pid, tid);
		put_us(f, "ts", s->start > base ? s->start - base : 0);
		put_us(f, "dur", end - s->start);
		fputs(",\"name\":", f);
		if (track & GPU_TRACK) {
			const struct m_gpu_shape *sh = model_gpu_shape(m, &m->gpu[s->idx]);
			const char *on = model_gpu_op_name(m, sh);
			const struct name_forms *kn;

			if (sh->kind != MG_KERNEL) {
				json_escape(f, on, strlen(on));
				fprintf(f, ",\"cat\":\"%s\",\"args\":{",
					sh->kind == MG_MEMCPY ? "memcpy" : "memset");
			} else {
				kn = name_cache_get(names, on);
				json_escape(f, kn->title, strlen(kn->title));
				fputs(",\"cat\":\"kernel\",\"args\":{\"name\":", f);
				json_escape(f, kn->whole, strlen(kn->whole));
				fputs(",\"mangled\":", f);
				json_escape(f, kn->name, strlen(kn->name));
				if (end != whole)
					fputc(',', f);
			}
		} else {
			const struct m_call *c = &m->calls[s->idx];
			const char *api = model_api_name(m, c->api);

			json_escape(f, api, strlen(api));
			fputs(stats_is_host_sync(c) ? ",\"cat\":\"sync\",\"cname\":\"terrible\"" :
						      ",\"cat\":\"call\"",
			      f);
			fputs(",\"args\":{", f);
		}
		if (end != whole)
			fprintf(f, "\"clipped_ns\":%" PRIu64, whole - end);
		fputs("}}", f);
	}
	for (k = 0; k < MAX_LANES; k++)
		free(lanes[k].end);
	free(v);
}

int export_whatif_chrome(FILE *f, const struct model *m, const struct replay *r,
			 const char *changes)
{
	struct name_cache *names = xcalloc(1, sizeof(*names));
	struct doc d = { f, 0 };
	struct strbuf name;
	uint64_t a0, a1, b0, b1;

	sb_init(&name);
	sb_printf(&name, "replayed (%s)", changes);
	fputs("{\"traceEvents\":[", f);
	process(&d, m, r, REPLAY_RECORDED, 1, "recorded", names);
	process(&d, m, r, REPLAY_LAST_RUN, 2, name.buf, names);
	name_cache_free(names);
	free(names);
	replay_window_times(r, REPLAY_RECORDED, &a0, &a1);
	replay_window_times(r, REPLAY_LAST_RUN, &b0, &b1);
	fprintf(f,
		"\n],\n\"displayTimeUnit\":\"ns\",\n\"otherData\":{\"generator\":\"gpushim %s "
		"whatif\",\"clock\":\"CLOCK_MONOTONIC\",\"recorded_base_ns\":%" PRIu64 ","
		"\"replayed_base_ns\":%" PRIu64 ",\"recorded_span_ns\":%" PRIu64 ","
		"\"replayed_span_ns\":%" PRIu64 "}}\n",
		GPUSHIM_VERSION, a0 == UINT64_MAX ? 0 : a0, b0 == UINT64_MAX ? 0 : b0,
		a1 > a0 ? a1 - a0 : 0, b1 > b0 ? b1 - b0 : 0);
	sb_free(&name);
	return fflush(f) || ferror(f) ? -1 : 0;
}
