/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsDisplayPlan: the client's surface, the queue of decided actions, the choice of the next one, and the plan's API over its parts. */
#include "flow/qs-display-plan.h"
#include "flow/qs-plan-detect.h"
#include "flow/qs-plan-images.h"
#include "flow/qs-plan-state.h"
#include "flow/qs-plan-streams.h"

#include <string.h>

/*
 * Newest state wins: damage only marks blocks (the screen watch, then the
 * scheduler); pixels are read when the pacer has room and the scheduler
 * picks an item, so nothing stale waits anywhere but in the socket, which
 * the pacer keeps near one bandwidth-delay product.
 *
 * The order of one wake-up's actions: what was decided outside it (the
 * surface, streams starting and ending) first, then a probe when one is
 * due, then the fast lane (a key press, a text line) before any video
 * frame, then stream frames, then bulk; when nothing more fits or nothing
 * is left, the MARK a new surface waits for and the probe that gets the
 * tail of what went out its end-to-end ACK.
 */

QsDisplayPlan *qs_display_plan_new(const QsPlanCaps *caps)
{
    QsDisplayPlan *plan = g_new0(QsDisplayPlan, 1);

    plan->caps = *caps;
    plan->queue = g_array_new(FALSE, TRUE, sizeof(QsPlanAction));
    plan->sched = qs_scheduler_new();
    plan->bwe = qs_bwe_new();
    plan->pacer = qs_pacer_new();
    plan->e2e = qs_e2e_new();
    plan->frame_time = qs_frame_time_new();
    qs_plan_streams_init(plan);
    return plan;
}

void qs_display_plan_free(QsDisplayPlan *plan)
{
    if (!plan) {
        return;
    }
    qs_plan_streams_clear(plan);
    qs_plan_images_clear(plan);
    qs_scheduler_free(plan->sched);
    qs_bwe_free(plan->bwe);
    qs_pacer_free(plan->pacer);
    qs_e2e_free(plan->e2e);
    qs_frame_time_free(plan->frame_time);
    g_array_unref(plan->queue);
    g_free(plan);
}

void qs_display_plan_prefer_bitmap(QsDisplayPlan *plan, gboolean bitmap)
{
    plan->images.prefer_bitmap = bitmap;
}

void qs_display_plan_prefer_mjpeg(QsDisplayPlan *plan, gboolean mjpeg)
{
    plan->streams.prefer_mjpeg = mjpeg;
}

static void forget_surface(QsDisplayPlan *plan, int64_t now_us)
{
    qs_plan_streams_end_all(plan, plan->surface, now_us);
    if (plan->surface) {
        qs_plan_push(plan, &(QsPlanAction){ .kind = QS_PLAN_SURFACE_DESTROY });
        plan->surface = FALSE;
    }
    plan->mark_pending = FALSE;
}

/* The surface of `damage` exists on the client; a new one (resize) is
 * SURFACE_DESTROY, SURFACE_CREATE, full image, MONITORS_CONFIG, MARK
 * (spice-protocol.md §3.4). FALSE when the console has no surface. */
static gboolean ensure_surface(QsDisplayPlan *plan, const QsScreenDamage *damage,
                               int64_t now_us)
{
    if (!damage->enabled) {
        forget_surface(plan, now_us);
        return FALSE;
    }
    if (!damage->new_surface && plan->surface && damage->serial == plan->serial &&
        damage->width == plan->width && damage->height == plan->height) {
        return TRUE;
    }
    forget_surface(plan, now_us);
    plan->serial = damage->serial;
    plan->width = damage->width;
    plan->height = damage->height;
    qs_plan_push(plan, &(QsPlanAction){
        .kind = QS_PLAN_SURFACE_CREATE,
        .rect = { 0, 0, (int32_t)plan->width, (int32_t)plan->height } });
    plan->surface = TRUE;
    plan->mark_pending = TRUE;
    qs_scheduler_reset(plan->sched, plan->serial, plan->width, plan->height, now_us);
    qs_plan_images_reset(plan);
    g_debug("display: surface %ux%u", plan->width, plan->height);
    return TRUE;
}

void qs_display_plan_damage(QsDisplayPlan *plan, QsScreenDamage *damage, int64_t now_us)
{
    if (!ensure_surface(plan, damage, now_us)) {
        return;
    }
    if (damage->blocks_x != plan->images.cols || damage->blocks_y != plan->images.rows) {
        /* The screen and the plan grid one surface in the same 16x16
         * blocks; a mismatch is a bug, and its damage cannot be placed. */
        g_warning_once("display: damage of %ux%u blocks for a %ux%u surface held as %ux%u "
                       "blocks; dropped", damage->blocks_x, damage->blocks_y, plan->width,
                       plan->height, plan->images.cols, plan->images.rows);
        return;
    }
    qs_plan_images_damage(plan, damage);
    qs_plan_detect_damage(plan, damage);
    qs_scheduler_add_blocks(plan->sched, damage->damaged, damage->blocks_x, damage->blocks_y,
                            damage->blocks_x, now_us);
}

gboolean qs_display_plan_tick(QsDisplayPlan *plan, int64_t now_us)
{
    return qs_plan_detect_tick(plan, now_us);
}

void qs_display_plan_heat(QsDisplayPlan *plan, QsScreenHeat *heat, int64_t now_us)
{
    qs_plan_detect_heat(plan, heat, now_us);
}

static int64_t earliest(int64_t a, int64_t b)
{
    return a && b ? MIN(a, b) : (a ? a : b);
}

static gboolean pop_queued(QsDisplayPlan *plan, QsPlanAction *action)
{
    if (plan->queue->len == 0) {
        return FALSE;
    }
    *action = g_array_index(plan->queue, QsPlanAction, 0);
    g_array_remove_index(plan->queue, 0);
    return TRUE;
}

static gboolean probe_due(QsDisplayPlan *plan, int64_t now_us, const QsPlanLink *link,
                          gboolean at_rest)
{
    /* A PING is a message like any other: the ACK window holds it too. */
    return link->can_send &&
           qs_e2e_probe_due(plan->e2e, plan->bwe, now_us, link->sent_bytes, at_rest);
}

static void mark_app_limited(QsDisplayPlan *plan, const QsPlanLink *link)
{
    qs_bwe_mark_app_limited(plan->bwe, plan->bytes_written);
    qs_e2e_mark_app_limited(plan->e2e, link->sent_bytes);
}

/*
 * Why a pick can be application-limited too: on loopback, or a LAN beside
 * a loaded host or a sanitizer build, the helper itself is the bottleneck
 * while it encodes a burst of images, yet it is never idle, so every span
 * counted as the link's and the estimate settled at the helper's own rate
 * (3.7 to 11.6 Mbit/s on loopback, sanitizer build, 2026-12-03), "pipe
 * full". The pacer wakes us when a band's room opens, so a sender the
 * link holds back picks with the queue at about its target less half a
 * band, never under half the target (at least two bands). A queue under
 * half its target at a pick has drained while we worked: the link waited
 * for us, as it waits for an idle sender.
 */
static void note_pick(QsDisplayPlan *plan, const QsPlanLink *link, uint64_t queued,
                      const QsPacerBudget *budget)
{
    if (queued * 2 < budget->target_bytes) {
        mark_app_limited(plan, link);
    }
}

static gboolean pick_image(QsDisplayPlan *plan, int64_t now_us, const QsPacerBudget *budget,
                           QsPlanAction *action, QsPick *pick)
{
    QsFlowItem item;
    gboolean streamed, moving;

    *pick = qs_scheduler_next(plan->sched, now_us, budget, &item);
    if (*pick != QS_PICK_ITEM) {
        return FALSE;
    }
    streamed = qs_plan_streams_intersect(plan, &item.rect);
    /* Only a hot item's lossy choice asks whether its blocks all move. */
    moving = item.hot && !streamed && qs_plan_detect_all_moving(plan, &item.rect);
    qs_plan_images_fill(plan, &item, streamed, moving, action);
    return TRUE;
}

void qs_display_plan_next(QsDisplayPlan *plan, int64_t now_us, const QsPlanLink *link,
                          QsPlanAction *action)
{
    QsPacerBudget budget, fast_only;
    QsPick pick = QS_PICK_IDLE;
    int64_t wake = 0;

    memset(action, 0, sizeof(*action));
    if (pop_queued(plan, action)) {
        return;
    }
    action->kind = QS_PLAN_IDLE;
    if (!plan->surface) {
        return;
    }
    if (now_us >= plan->images.next_repair_scan_us) {
        qs_plan_images_repair(plan, now_us);
    }
    if (link->can_send) {
        if (probe_due(plan, now_us, link, FALSE)) {
            action->kind = QS_PLAN_PROBE;
            return;
        }
        uint64_t queued = qs_plan_link_queued(plan, link, now_us);

        qs_pacer_budget(plan->pacer, plan->bwe, now_us, queued, &budget);
        fast_only = budget;
        fast_only.bulk_bytes = 0;
        if ((budget.fast_bytes > 0 && pick_image(plan, now_us, &fast_only, action, &pick)) ||
            qs_plan_streams_next(plan, now_us, &budget, action) ||
            pick_image(plan, now_us, &budget, action, &pick)) {
            note_pick(plan, link, queued, &budget);
            return;
        }
        if (pick == QS_PICK_IDLE) {
            mark_app_limited(plan, link);
            if (plan->mark_pending) {
                plan->mark_pending = FALSE;
                action->kind = QS_PLAN_MARK;
                return;
            }
        } else {
            action->kind = QS_PLAN_WAIT;
            wake = earliest(budget.wake_us, budget.fast_wake_us);
        }
        /* The tail of what went out gets its end-to-end ACK too. */
        if (probe_due(plan, now_us, link, TRUE)) {
            action->kind = QS_PLAN_PROBE;
            return;
        }
    } else {
        action->kind = QS_PLAN_WAIT;
    }
    wake = earliest(wake, plan->images.next_repair_scan_us);
    action->wake_us = earliest(wake, qs_plan_streams_deadline(plan, now_us));
}

gboolean qs_display_plan_image_lossy(const QsPlanAction *action, const uint8_t *pixels)
{
    return qs_plan_images_lossy(action, pixels);
}

void qs_display_plan_image_sent(QsDisplayPlan *plan, const QsPlanAction *action,
                                gboolean lossy, uint32_t bytes, int64_t now_us)
{
    qs_plan_images_sent(plan, action, lossy, bytes, now_us);
}

uint32_t qs_display_plan_frame_done(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                    const QsPlanFrameDone *done, const QsPlanLink *link,
                                    int64_t now_us)
{
    return qs_plan_streams_frame_done(plan, stream, est_bytes, done, link, now_us);
}

void qs_display_plan_stream_dirty(QsDisplayPlan *plan, uint32_t stream)
{
    qs_plan_streams_dirty(plan, stream);
}

void qs_display_plan_frame_dropped(QsDisplayPlan *plan, uint32_t est_bytes)
{
    qs_plan_streams_frame_dropped(plan, est_bytes);
}

void qs_display_plan_frame_lost(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                int64_t now_us)
{
    qs_plan_streams_frame_lost(plan, stream, est_bytes, now_us);
}

gboolean qs_display_plan_stream_report(QsDisplayPlan *plan, uint32_t stream, uint32_t unique_id,
                                       uint32_t end_frame_mm_time, uint32_t num_frames,
                                       uint32_t num_drops, int32_t last_frame_delay,
                                       int64_t now_us)
{
    return qs_plan_streams_report(plan, stream, unique_id, end_frame_mm_time, num_frames,
                                  num_drops, last_frame_delay, now_us);
}

void qs_display_plan_end_streams(QsDisplayPlan *plan, int64_t now_us)
{
    qs_plan_streams_end_all(plan, FALSE, now_us);
}

void qs_display_plan_probe_sent(QsDisplayPlan *plan, int64_t now_us, uint32_t id,
                                uint64_t sent_bytes)
{
    qs_e2e_probe_sent(plan->e2e, now_us, id, sent_bytes);
}

gboolean qs_display_plan_pong(QsDisplayPlan *plan, int64_t now_us, uint32_t id)
{
    return qs_e2e_on_pong(plan->e2e, plan->bwe, now_us, id);
}

uint32_t qs_display_plan_notsent_lowat(const QsDisplayPlan *plan)
{
    return qs_pacer_notsent_lowat(plan->bwe);
}

const QsBwe *qs_display_plan_bwe(const QsDisplayPlan *plan)
{
    return plan->bwe;
}

void qs_display_plan_pin_bandwidth(QsDisplayPlan *plan, uint64_t bytes_per_s)
{
    qs_bwe_pin_bandwidth(plan->bwe, bytes_per_s);
}

const QsPlanStats *qs_display_plan_stats(const QsDisplayPlan *plan)
{
    return &plan->stats;
}

gboolean qs_display_plan_surface(const QsDisplayPlan *plan, uint32_t *width, uint32_t *height)
{
    *width = plan->surface ? plan->width : 0;
    *height = plan->surface ? plan->height : 0;
    return plan->surface;
}
