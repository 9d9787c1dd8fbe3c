/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's video streams (qs-plan-state.h): their life, frames, bit rate, stamps, reports. */
#pragma once

#include "flow/qs-plan-state.h"

void qs_plan_stream_start(QsDisplayPlan *plan, guint slot, const QsRect *r, uint32_t fps,
                          int64_t now_us);
/* The stream in `slot` ends; the client is told if `tell`. */
void qs_plan_stream_end(QsDisplayPlan *plan, guint slot, gboolean tell, int64_t now_us);
void qs_plan_streams_init(QsDisplayPlan *plan);
void qs_plan_streams_clear(QsDisplayPlan *plan);
/* Every stream ends; the client is told if `tell`. */
void qs_plan_streams_end_all(QsDisplayPlan *plan, gboolean tell, int64_t now_us);
gboolean qs_plan_streams_intersect(const QsDisplayPlan *plan, const QsRect *r);
/* A frame or flush the budget allows, as an action; FALSE if none. */
gboolean qs_plan_streams_next(QsDisplayPlan *plan, int64_t now_us,
                              const QsPacerBudget *budget, QsPlanAction *action);
/* Earliest time a stream needs attention (a frame, a flush, its end), or 0. */
int64_t qs_plan_streams_deadline(const QsDisplayPlan *plan, int64_t now_us);

/* What came back from the encoder and the client's STREAM_REPORT (the
 * plan's API says what each means). */
uint32_t qs_plan_streams_frame_done(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                    const QsPlanFrameDone *done, const QsPlanLink *link,
                                    int64_t now_us);
void qs_plan_streams_dirty(QsDisplayPlan *plan, uint32_t stream);
void qs_plan_streams_frame_dropped(QsDisplayPlan *plan, uint32_t est_bytes);
void qs_plan_streams_frame_lost(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                int64_t now_us);
gboolean qs_plan_streams_report(QsDisplayPlan *plan, uint32_t stream, uint32_t unique_id,
                                uint32_t end_frame_mm_time, uint32_t num_frames,
                                uint32_t num_drops, int32_t last_frame_delay, int64_t now_us);
