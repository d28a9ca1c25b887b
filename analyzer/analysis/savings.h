/* SPDX-License-Identifier: MIT */
/*
 * savings.h - the report's what-if: what fixing each cause alone would save, by a replay
 * (replay.h) of a stretch of the verdict's window, and the causes ranked and the verdict picked
 * by it (findings_rank_by_saving).
 *
 * The stretch: the calls and operations that start in the window (the steady state when the
 * run has steps), collected as the analyses are fed them, at most SAVINGS_MAX_ITEMS of them
 * (memory bounded: ~150 bytes an item with the replay's graph); a longer window is replayed
 * from its start up to where the budget ran out. It is measured over whole steps where there
 * are steps (the first left out as the replay's lead-in when there are three or more), else
 * over the window's part collected. A cause's saving is the share of that span a replay
 * without the cause takes away; saving_ns applies the share to the whole window, per step to
 * the median step. Pure.
 */
#ifndef GPUSHIM_SAVINGS_H
#define GPUSHIM_SAVINGS_H

#include <stdint.h>

#include "findings.h"
#include "stats.h"
#include "model/model.h"

#define SAVINGS_MAX_ITEMS (1u << 17)	/* calls and operations replayed, at most */

struct savings_acc;

/* Collect the stretch from @lo (before @hi) of run @m; then every call and operation. */
struct savings_acc *savings_begin(const struct model *m, uint64_t lo, uint64_t hi);
void savings_call(struct savings_acc *a, const struct m_call *c, uint32_t id);
void savings_op(struct savings_acc *a, const struct m_gpu_op *g, uint32_t call_id);
/*
 * savings_end - replay the stretch as recorded and without each cause; @f's causes get their
 * savings, f->replay says what was replayed (or why not), and the causes are ranked by saving
 * (findings_rank_by_saving). @s: the run's statistics, finished (its steps). Frees @a.
 */
void savings_end(struct savings_acc *a, const struct stats *s, struct findings *f);

#endif /* GPUSHIM_SAVINGS_H */
