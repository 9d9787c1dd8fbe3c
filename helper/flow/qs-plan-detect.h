/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the display plan streams (qs-plan-state.h): moving areas from the screen's heat, damage streams absorb. */
#pragma once

#include "flow/qs-plan-state.h"

/* Every wake-up: ends streams whose area went still; TRUE when detection
 * wants a heat snapshot now. The snapshot (taken over) starts and ends
 * streams. */
gboolean qs_plan_detect_tick(QsDisplayPlan *plan, int64_t now_us);
void qs_plan_detect_heat(QsDisplayPlan *plan, QsScreenHeat *heat, int64_t now_us);
/* Marks streams the damage touches; drops the damage their edge blocks
 * carry already. */
void qs_plan_detect_damage(QsDisplayPlan *plan, QsScreenDamage *damage);
/* Every block of r changed entirely in the last heat snapshot. */
gboolean qs_plan_detect_all_moving(const QsDisplayPlan *plan, const QsRect *r);
