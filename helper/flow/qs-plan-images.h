/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's images (qs-plan-state.h): the lossless/lossy choice, blocks held lossy, repairs. */
#pragma once

#include "flow/qs-plan-state.h"

void qs_plan_images_clear(QsDisplayPlan *plan);
/* A new surface of plan->width x plan->height. */
void qs_plan_images_reset(QsDisplayPlan *plan);
void qs_plan_images_damage(QsDisplayPlan *plan, const QsScreenDamage *damage);
/* Blocks entirely inside r hold exact pixels now (lossy_us 0), or lossy
 * ones sent at lossy_us; edge blocks keep what they had unless lossy. */
void qs_plan_images_mark(QsDisplayPlan *plan, const QsRect *r, int64_t lossy_us);
/* Lossy blocks still long enough go back to the scheduler; when. */
void qs_plan_images_repair(QsDisplayPlan *plan, int64_t now_us);
/* Fills an IMAGE action for a picked item: `streamed`, the item touches a
 * stream; `moving`, every block of it moved in the last heat snapshot. */
void qs_plan_images_fill(QsDisplayPlan *plan, const QsFlowItem *item, gboolean streamed,
                         gboolean moving, QsPlanAction *action);
/* JPEG rather than lossless for these pixels; an IMAGE went out as
 * `bytes` (the plan's API says more). */
gboolean qs_plan_images_lossy(const QsPlanAction *action, const uint8_t *pixels);
void qs_plan_images_sent(QsDisplayPlan *plan, const QsPlanAction *action, gboolean lossy,
                         uint32_t bytes, int64_t now_us);
