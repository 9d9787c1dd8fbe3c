/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Where the display plan streams: moving areas from the screen's heat, exact rectangles, damage the streams absorb. */
#include "flow/qs-plan-detect.h"
#include "flow/qs-plan-streams.h"
#include "flow/qs-rate.h"

/*
 * Detection counts what qemu delivered (the screen's heat), never what we
 * sent, so a slow link cannot keep an animation from streaming (a
 * prototype that counted sends never streamed behind a slow link). A block
 * is moving after QS_STREAM_HOT_COUNT changes in the heat window with one
 * in the last QS_STREAM_HOT_GAP_US: the 5th frame of a 30 fps animation,
 * 133 ms after its first, so that with a guest's resume and a 2 Mbit
 * link's two bands ahead of STREAM_CREATE the stream reaches the client
 * within 300 ms (measured 260-330 ms with the 6th frame,
 * tests/integration/test_stream_start.py). Typing, a blinking cursor or a
 * clock change a block well under 5 times a second.
 *
 * Each 4-connected group of moving blocks is one stream whose rectangle is
 * the exact pixel bounds the heat recorded (cut to even sizes for I420),
 * so no background pixel outside it goes lossy.
 * Blocks on the stream's edge keep their image work only for pixels the
 * stream does not cover.
 */

#define QS_STREAM_HOT_COUNT 5
#define QS_STREAM_HOT_GAP_US 200000
#define QS_STREAM_MIN_AREA (128 * 128)
/* Under a 30 fps frame interval, so the frame that makes an area moving
 * is looked at when it arrives (every 30 ms, a third of the deciding
 * frames waited up to 30 ms for the next look). */
#define QS_STREAM_DETECT_US 10000

/* Even sizes by shrinking, never growing: a grown rectangle would take a
 * row or column of still background into the lossy stream (the typing
 * editor's odd-height damage did, 606 pixels below it in the benchmark).
 * The strip left out stays ordinary, lossless damage. The side cut is one
 * `keep` (even-sized, inside r) does not touch, so the stream still covers
 * it and the next look finds it covered rather than outgrown. */
static QsRect even_inside(QsRect r, const QsRect *keep)
{
    if (r.width & 1) {
        if (keep && r.x < keep->x) {
            r.x++;
        }
        r.width--;
    }
    if (r.height & 1) {
        if (keep && r.y < keep->y) {
            r.y++;
        }
        r.height--;
    }
    return r;
}

/* FALSE if too small (or too large) to stream. */
static gboolean streamable(const QsDisplayPlan *plan, const QsRect *r)
{
    return r->width >= 64 && r->height >= 64 &&
           (int64_t)r->width * r->height >= QS_STREAM_MIN_AREA &&
           (uint32_t)MAX(r->width, r->height) <= plan->caps.max_stream_side;
}

/* One moving area: the group of moving blocks around `seed` and its exact
 * changed pixels. Clears the group from `moving`. */
static QsRect flood(const QsScreenHeat *heat, uint8_t *moving, guint seed)
{
    g_autoptr(GArray) todo = g_array_new(FALSE, FALSE, sizeof(guint));
    QsRect box = { 0 };

    moving[seed] = 0;
    g_array_append_val(todo, seed);
    while (todo->len) {
        guint i = g_array_index(todo, guint, todo->len - 1);
        uint32_t x = i % heat->blocks_x, y = i / heat->blocks_x;
        guint next[4] = { i - 1, i + 1, i - heat->blocks_x, i + heat->blocks_x };
        gboolean ok[4] = { x > 0, x + 1 < heat->blocks_x, y > 0, y + 1 < heat->blocks_y };

        g_array_set_size(todo, todo->len - 1);
        if (heat->changed[i].width > 0) {
            box = box.width ? qs_rect_union(&box, &heat->changed[i]) : heat->changed[i];
        }
        for (guint k = 0; k < 4; k++) {
            if (ok[k] && moving[next[k]]) {
                moving[next[k]] = 0;
                g_array_append_val(todo, next[k]);
            }
        }
    }
    return box;
}

static void consider_area(QsDisplayPlan *plan, QsRect box, int64_t now_us)
{
    QsPlanStreams *st = &plan->streams;
    /* The heat window may hold only the first frames yet: rate control
     * assumes the usual rate, or the operator's lower ceiling (the helper's
     * --max-fps); frames follow the guest's own rate below it anyway. */
    uint32_t fps = plan->caps.max_fps ? MIN(plan->caps.max_fps, QS_PLAN_STREAM_FPS)
                                      : QS_PLAN_STREAM_FPS;
    guint free_slot = QS_PLAN_MAX_STREAMS;
    /* What the stream should cover of this area: its even part. */
    const QsRect want = even_inside(box, NULL);
    QsRect slack;

    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        QsPlanStream *s = st->slot[i];

        if (!s) {
            free_slot = MIN(free_slot, i);
            continue;
        }
        if (!qs_rect_overlap(&s->rect, &box)) {
            continue;
        }
        /* Stable while it covers all it can: an even cut may leave one
         * row or column of the area out on any side (two areas cut on
         * opposite sides must not make it flip between them). */
        slack = (QsRect){ s->rect.x - 1, s->rect.y - 1, s->rect.width + 2, s->rect.height + 2 };
        if (qs_rect_contains(&slack, &box)) {
            return;
        }
        /* Outgrown: one stream over old and new bounds. */
        box = qs_rect_union(&box, &s->rect);
        qs_plan_stream_end(plan, i, TRUE, now_us);
        free_slot = MIN(free_slot, i);
    }
    box = even_inside(box, &want);
    if (free_slot < QS_PLAN_MAX_STREAMS && streamable(plan, &box)) {
        qs_plan_stream_start(plan, free_slot, &box, fps, now_us);
    }
}

gboolean qs_plan_detect_tick(QsDisplayPlan *plan, int64_t now_us)
{
    QsPlanStreams *st = &plan->streams;

    if (!plan->surface) {
        return FALSE;
    }
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (st->slot[i] && now_us - st->slot[i]->last_change_us > QS_PLAN_STREAM_END_US) {
            qs_plan_stream_end(plan, i, TRUE, now_us);
        }
    }
    /* Wanted without a video codec too: the scheduler's hot blocks are the
     * screen's. */
    return now_us - st->last_heat_us >= QS_STREAM_DETECT_US;
}

void qs_plan_detect_heat(QsDisplayPlan *plan, QsScreenHeat *heat, int64_t now_us)
{
    QsPlanStreams *st = &plan->streams;
    g_autofree uint8_t *moving = NULL;
    guint n;

    st->last_heat_us = now_us;
    qs_scheduler_set_heat(plan->sched, NULL);
    g_clear_pointer(&st->heat, qs_screen_heat_free);
    st->heat = heat;
    if (!heat->counts || heat->serial != plan->serial || heat->width != plan->width ||
        heat->height != plan->height) {
        return;
    }
    qs_scheduler_set_heat(plan->sched, heat);
    if (!st->mjpeg_ok && !st->h264_ok) {
        return;
    }
    n = heat->blocks_x * heat->blocks_y;
    moving = g_malloc0(n);
    for (guint i = 0; i < n; i++) {
        moving[i] = heat->counts[i] >= QS_STREAM_HOT_COUNT &&
                    now_us - heat->last_change_us[i] <= QS_STREAM_HOT_GAP_US;
    }
    for (guint i = 0; i < n; i++) {
        if (moving[i]) {
            QsRect box = flood(heat, moving, i);

            if (box.width > 0) {
                consider_area(plan, box, now_us);
            }
        }
    }
}

static gboolean heat_usable(const QsDisplayPlan *plan, const QsScreenDamage *d)
{
    const QsScreenHeat *h = plan->streams.heat;

    return h && h->changed && h->serial == d->serial && h->blocks_x == d->blocks_x &&
           h->blocks_y == d->blocks_y;
}

gboolean qs_plan_detect_all_moving(const QsDisplayPlan *plan, const QsRect *r)
{
    const QsScreenHeat *h = plan->streams.heat;
    uint32_t c0 = (uint32_t)r->x / QS_SCREEN_BLOCK, r0 = (uint32_t)r->y / QS_SCREEN_BLOCK;
    uint32_t c1 = (uint32_t)(r->x + r->width - 1) / QS_SCREEN_BLOCK;
    uint32_t r1 = (uint32_t)(r->y + r->height - 1) / QS_SCREEN_BLOCK;

    if (!h || !h->changed || h->serial != plan->serial || c1 >= h->blocks_x || r1 >= h->blocks_y) {
        return FALSE;
    }
    for (uint32_t y = r0; y <= r1; y++) {
        for (uint32_t x = c0; x <= c1; x++) {
            const QsRect *c = &h->changed[(size_t)y * h->blocks_x + x];
            QsRect block = { (int32_t)(x * QS_SCREEN_BLOCK), (int32_t)(y * QS_SCREEN_BLOCK),
                             (int32_t)MIN(QS_SCREEN_BLOCK, h->width - x * QS_SCREEN_BLOCK),
                             (int32_t)MIN(QS_SCREEN_BLOCK, h->height - y * QS_SCREEN_BLOCK) };

            if (c->width <= 0 || !qs_rect_contains(c, &block)) {
                return FALSE;
            }
        }
    }
    return TRUE;
}

/* Marks streams whose area changed; drops the damage of blocks on a
 * stream's edge whose changed pixels all lie inside the stream (the stream
 * carries them; resending the block as an image every frame would not). */
void qs_plan_detect_damage(QsDisplayPlan *plan, QsScreenDamage *d)
{
    const QsScreenHeat *h = plan->streams.heat;
    gboolean heat_ok = heat_usable(plan, d);

    for (guint k = 0; k < QS_PLAN_MAX_STREAMS; k++) {
        QsPlanStream *s = plan->streams.slot[k];
        uint32_t c0, c1, r0, r1;
        gboolean hit = FALSE;

        if (!s) {
            continue;
        }
        c0 = (uint32_t)s->rect.x / QS_SCREEN_BLOCK;
        r0 = (uint32_t)s->rect.y / QS_SCREEN_BLOCK;
        c1 = MIN((uint32_t)(s->rect.x + s->rect.width - 1) / QS_SCREEN_BLOCK, d->blocks_x - 1);
        r1 = MIN((uint32_t)(s->rect.y + s->rect.height - 1) / QS_SCREEN_BLOCK, d->blocks_y - 1);
        for (uint32_t y = r0; y <= r1; y++) {
            for (uint32_t x = c0; x <= c1; x++) {
                size_t i = (size_t)y * d->blocks_x + x;
                gboolean edge = x == c0 || x == c1 || y == r0 || y == r1;

                if (!d->damaged[i]) {
                    continue;
                }
                hit = TRUE;
                if (edge && heat_ok && h->changed[i].width > 0 &&
                    qs_rect_contains(&s->rect, &h->changed[i])) {
                    d->damaged[i] = 0;
                }
            }
        }
        if (hit) {
            if (s->dirty) {
                plan->stats.frames_skipped++;   /* replaced before it was read */
            }
            s->dirty = TRUE;
            s->last_change_us = d->newest_us;
            if (d->newest_us - s->source_us >= QS_RATE_SAME_PICTURE_US) {
                s->source_interval_us = s->source_us
                                            ? qs_rate_source_interval(s->source_interval_us,
                                                                      d->newest_us - s->source_us)
                                            : 0;
                s->source_us = d->newest_us;
            }
        }
    }
}
