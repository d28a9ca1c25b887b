/* SPDX-License-Identifier: MIT */
/*
 * timeline_tracks.h - where a timeline exporter puts each slice so that no two slices of a
 * track partially overlap: Perfetto cuts such a track short (misplaced_end_event), and a
 * timeline with two slices drawn over each other says nothing true. A key (a host thread, a
 * GPU stream's kernels, the same stream's copies and memsets, a device's idle gaps) has lanes,
 * each a track of its own: a slice goes to the first lane whose last slice ended by its
 * start, to a new lane when none did. Given a key's slices in order of start this is the
 * greedy colouring of intervals: as few lanes as the most slices of the key running at once
 * (a CUDA graph's branches replayed on one stream). Memory: a lane, and a key, each a few
 * words. Pure: no I/O.
 */
#ifndef GPUSHIM_TIMELINE_TRACKS_H
#define GPUSHIM_TIMELINE_TRACKS_H

#include <stddef.h>
#include <stdint.h>

enum tl_kind {
	TL_THREAD = 1,			/* a: the thread slot */
	TL_KERNELS,			/* a: device, b: stream */
	TL_COPIES,			/* copies and memsets; a: device, b: stream */
	TL_IDLE,			/* a: device */
};

struct tl_key {
	uint32_t kind, a, b;
};

struct tl_track {
	struct tl_key key;
	uint32_t lane;			/* 0: the key's first */
	uint32_t next;			/* the key's next lane (index into v), UINT32_MAX: none */
	uint64_t end;			/* the end of its last slice */
	uint64_t id;			/* the exporter's: a thread id, a track uuid */
};

struct tl_tracks {
	struct tl_track *v;		/* in order of making */
	size_t n, cap;
	struct tl_head *heads;		/* each key's first lane (uthash) */
	struct tl_head *last;		/* the key met last */
};

/*
 * tl_place - the index into @t->v of the lane of key @k for a slice [@start, @end) (an end
 * before its start counts as the start); *@is_new is set when the lane was made for it (the
 * caller names it and sets its id). A key's slices must come in order of start. Dies on OOM.
 */
size_t tl_place(struct tl_tracks *t, const struct tl_key *k, uint64_t start, uint64_t end,
		int *is_new);

/* tl_reset - forget every track (the next process, or the same one started over). */
void tl_reset(struct tl_tracks *t);
void tl_free(struct tl_tracks *t);

#endif /* GPUSHIM_TIMELINE_TRACKS_H */
