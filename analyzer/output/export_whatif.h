/* SPDX-License-Identifier: MIT */
/*
 * export_whatif.h - the what-if replay's timeline (`gpushim whatif --export`): the window of a
 * run as recorded and as the last replay put it, as Chrome trace-event JSON (the conventions
 * of export_chrome.c), one process each, both from 0 us so that Perfetto shows them one above
 * the other. Formats only: the times are the replay's (analysis/replay.h).
 */
#ifndef GPUSHIM_EXPORT_WHATIF_H
#define GPUSHIM_EXPORT_WHATIF_H

#include <stdio.h>

#include "analysis/replay.h"
#include "model/model.h"

/*
 * export_whatif_chrome - write to @f the window of run @m, replayed by @r: process 1
 * "recorded", process 2 "replayed (@changes)" as @r's last replay_run put it. In each, a track
 * per host thread with its calls (named by entry point) and a track per GPU stream with its
 * operations (a kernel's name, "memcpy HtoD", "memset"), the things whose start was recorded
 * in the window, in microseconds from the window's first; on a track, slices nest or follow
 * (a slice that would end past the one around it ends with it: args.clipped_ns says by how
 * much). Return: 0, or -1 when @f could not be written.
 */
int export_whatif_chrome(FILE *f, const struct model *m, const struct replay *r,
			 const char *changes);

#endif /* GPUSHIM_EXPORT_WHATIF_H */
