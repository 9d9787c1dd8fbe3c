/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's images: lossless or lossy, JPEG quality, which blocks the client holds lossy, and their repair. */
#include "flow/qs-plan-images.h"
#include "flow/qs-rate.h"

#include <string.h>

/*
 * An image goes lossy (JPEG) only where that cannot be seen for long:
 * animated content whose whole block moves, or cold content on a link
 * measured slow, and then only if the pixels look photographic. Every
 * block the client holds lossy is resent losslessly once it has stayed
 * still for QS_PLAN_REPAIR_US (QS_PLAN_REPAIR_IDLE_US when the link has
 * nothing else to do), so what stays on screen ends exact.
 */

#define SAMPLE_MAX 1024u
#define PHOTO_DISTINCT_PCT 40u      /* distinct colours per 100 samples */
#define SLOW_IMAGE_US 100000        /* a lossless image this long on the link */

void qs_plan_images_clear(QsDisplayPlan *plan)
{
    g_clear_pointer(&plan->images.changed_us, g_free);
    g_clear_pointer(&plan->images.lossy_us, g_free);
}

void qs_plan_images_reset(QsDisplayPlan *plan)
{
    QsPlanImages *im = &plan->images;

    im->cols = (plan->width + QS_SCREEN_BLOCK - 1) / QS_SCREEN_BLOCK;
    im->rows = (plan->height + QS_SCREEN_BLOCK - 1) / QS_SCREEN_BLOCK;
    g_free(im->changed_us);
    g_free(im->lossy_us);
    im->changed_us = g_new0(int64_t, (gsize)im->cols * im->rows);
    im->lossy_us = g_new0(int64_t, (gsize)im->cols * im->rows);
}

void qs_plan_images_damage(QsDisplayPlan *plan, const QsScreenDamage *damage)
{
    for (uint32_t i = 0; i < damage->blocks_x * damage->blocks_y; i++) {
        if (damage->damaged[i]) {
            plan->images.changed_us[i] = damage->newest_us;
        }
    }
}

/* Cheap photo test on the pixels already read: distinct colours among up
 * to SAMPLE_MAX spread samples. Text, flat fills and UI have few;
 * photographs, video and smooth gradients many. */
static gboolean photographic(const uint8_t *px, uint32_t w, uint32_t h)
{
    uint64_t n = (uint64_t)w * h;
    uint64_t step = MAX(1, n / SAMPLE_MAX) | 1;
    uint32_t seen[4096 / 32] = { 0 };
    uint32_t samples = 0, distinct = 0;

    if (n < 1024) {
        return FALSE;
    }
    for (uint64_t i = 0; i < n && samples < SAMPLE_MAX; i += step, samples++) {
        uint32_t v;

        memcpy(&v, px + i * 4, 4);
        v &= 0xffffff;
        v = (v * 2654435761u) >> 20;
        if (!(seen[v / 32] & (1u << (v % 32)))) {
            seen[v / 32] |= 1u << (v % 32);
            distinct++;
        }
    }
    return distinct * 100 >= samples * PHOTO_DISTINCT_PCT;
}

gboolean qs_plan_images_lossy(const QsPlanAction *action, const uint8_t *pixels)
{
    return action->lossy_ok &&
           photographic(pixels, (uint32_t)action->item.rect.width,
                        (uint32_t)action->item.rect.height);
}


/* Lossy may be chosen for the item, if its pixels are photographic. */
static gboolean lossy_allowed(const QsDisplayPlan *plan, const QsFlowItem *item,
                              gboolean streamed, gboolean moving)
{
    const QsPlanImages *im = &plan->images;
    const QsRect *r = &item->rect;
    uint64_t raw = (uint64_t)r->width * r->height * 4;
    uint64_t bw = MAX(qs_bwe_bandwidth(plan->bwe), 1);
    uint32_t c0 = (uint32_t)r->x / QS_SCREEN_BLOCK, r0 = (uint32_t)r->y / QS_SCREEN_BLOCK;
    uint32_t c1 = (uint32_t)(r->x + r->width - 1) / QS_SCREEN_BLOCK;
    uint32_t r1 = (uint32_t)(r->y + r->height - 1) / QS_SCREEN_BLOCK;

    if (im->prefer_bitmap || !plan->caps.jpeg || streamed) {
        /* Next to a stream only the stream may be lossy. */
        return FALSE;
    }
    /* A repair (a block still lossy whose content has not changed since)
     * must be exact. */
    for (uint32_t y = r0; y <= r1; y++) {
        for (uint32_t x = c0; x <= c1; x++) {
            size_t i = (size_t)y * im->cols + x;

            if (im->lossy_us[i] && im->changed_us[i] <= im->lossy_us[i]) {
                return FALSE;
            }
        }
    }
    /* Animated content goes lossy only where the whole block moves, so text
     * beside an animation stays exact. */
    if (item->hot && !moving) {
        return FALSE;
    }
    /* Cold content goes lossy only on a link measured slow (the initial
     * guess says nothing about the link). */
    return item->hot ||
           (qs_bwe_rounds(plan->bwe) != 0 && raw * 1000000 / bw / 3 >= SLOW_IMAGE_US);
}

void qs_plan_images_fill(QsDisplayPlan *plan, const QsFlowItem *item, gboolean streamed,
                         gboolean moving, QsPlanAction *action)
{
    action->kind = QS_PLAN_IMAGE;
    action->item = *item;
    action->bitmap = plan->images.prefer_bitmap;
    action->lz4 = !plan->images.prefer_bitmap && plan->caps.lz4;
    action->lossy_ok = lossy_allowed(plan, item, streamed, moving);
    action->jpeg_quality = plan->images.jpeg_quality ? plan->images.jpeg_quality
                                                     : QS_RATE_JPEG_TARGET;
}

void qs_plan_images_mark(QsDisplayPlan *plan, const QsRect *r, int64_t lossy_us)
{
    QsPlanImages *im = &plan->images;
    uint32_t c0 = (uint32_t)r->x / QS_SCREEN_BLOCK, r0 = (uint32_t)r->y / QS_SCREEN_BLOCK;
    uint32_t c1 = (uint32_t)(r->x + r->width - 1) / QS_SCREEN_BLOCK;
    uint32_t r1 = (uint32_t)(r->y + r->height - 1) / QS_SCREEN_BLOCK;

    if (!im->lossy_us || r->width <= 0 || r->height <= 0) {
        return;
    }
    for (uint32_t y = r0; y <= r1 && y < im->rows; y++) {
        for (uint32_t x = c0; x <= c1 && x < im->cols; x++) {
            gboolean inside = (int32_t)(x * QS_SCREEN_BLOCK) >= r->x &&
                              (int32_t)(y * QS_SCREEN_BLOCK) >= r->y &&
                              (int32_t)MIN((x + 1) * QS_SCREEN_BLOCK, plan->width) <= r->x + r->width &&
                              (int32_t)MIN((y + 1) * QS_SCREEN_BLOCK, plan->height) <= r->y + r->height;

            if (lossy_us || inside) {
                im->lossy_us[(size_t)y * im->cols + x] = lossy_us;
            }
        }
    }
}

void qs_plan_images_sent(QsDisplayPlan *plan, const QsPlanAction *action, gboolean lossy,
                         uint32_t bytes, int64_t now_us)
{
    qs_scheduler_feedback(plan->sched, &action->item, bytes);
    if (lossy) {
        /* The quality target, unless lossy images hold the link too long. */
        plan->images.jpeg_quality = qs_rate_jpeg_next(action->jpeg_quality, bytes,
                                                       qs_bwe_bandwidth(plan->bwe));
    }
    qs_plan_images_mark(plan, &action->item.rect, lossy ? now_us : 0);
}

/* Lossy blocks that stayed still long enough go back to the scheduler,
 * without heat; lossy_allowed() then keeps them exact. */
void qs_plan_images_repair(QsDisplayPlan *plan, int64_t now_us)
{
    QsPlanImages *im = &plan->images;
    const QsDamage *dmg = qs_scheduler_damage(plan->sched);
    gboolean link_idle = qs_damage_dirty_count(dmg) == 0;
    int64_t still = link_idle ? QS_PLAN_REPAIR_IDLE_US : QS_PLAN_REPAIR_US;
    int64_t next = 0;

    for (uint32_t y = 0; y < im->rows; y++) {
        for (uint32_t x = 0; x < im->cols; x++) {
            size_t i = (size_t)y * im->cols + x;
            int64_t since = MAX(im->lossy_us[i], im->changed_us[i]);
            QsFlowItem item = { .surface_serial = plan->serial };

            if (!im->lossy_us[i] || qs_damage_is_dirty(dmg, x, y) ||
                qs_damage_is_excluded(dmg, x, y)) {
                continue;
            }
            if (now_us - since < still) {
                next = next ? MIN(next, since + still) : since + still;
                continue;
            }
            item.rect = qs_damage_block_rect(dmg, x, y, 1, 1);
            qs_scheduler_requeue(plan->sched, &item, now_us);
            plan->stats.repairs++;
        }
    }
    im->next_repair_scan_us = next ? next : now_us + QS_PLAN_REPAIR_US;
}
