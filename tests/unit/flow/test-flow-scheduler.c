/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the work picker: lanes, bands, newest-state-wins, streams. */
#include <string.h>

#include "flow/qs-scheduler.h"
#include "flow-sim.h"

#define W 1280
#define H 800

static const QsPacerBudget open_budget = {
    .target_bytes = 1 << 30, .bulk_bytes = 1 << 30, .fast_bytes = 1 << 30,
    .band_bytes = 16384,
};

static gboolean rects_overlap(const QsRect *a, const QsRect *b)
{
    return a->x < b->x + b->width && b->x < a->x + a->width &&
           a->y < b->y + b->height && b->y < a->y + a->height;
}

/* A scheduler with a clean 1280x800 surface. */
static QsScheduler *clean_sched(void)
{
    QsScheduler *s = qs_scheduler_new();
    QsFlowItem item;
    int guard = 0;

    g_assert_true(qs_scheduler_reset(s, 1, W, H, 0));
    while (qs_scheduler_next(s, 0, &open_budget, &item) == QS_PICK_ITEM) {
        qs_scheduler_feedback(s, &item, item.rect.width * item.rect.height / 2);
        g_assert_cmpint(++guard, <, 10000);
    }
    g_assert_cmpuint(qs_damage_dirty_count(qs_scheduler_damage(s)), ==, 0);
    return s;
}

/* Drains everything; counts how often each block of `region` was covered. */
static unsigned drain(QsScheduler *s, int64_t now, const QsRect *region,
                      unsigned *min_cover, unsigned *max_cover)
{
    unsigned cover[50][80] = { { 0 } };
    unsigned items = 0;
    QsFlowItem item;

    while (qs_scheduler_next(s, now, &open_budget, &item) == QS_PICK_ITEM) {
        items++;
        for (int y = item.rect.y / 16; y * 16 < item.rect.y + item.rect.height; y++) {
            for (int x = item.rect.x / 16; x * 16 < item.rect.x + item.rect.width; x++) {
                cover[y][x]++;
            }
        }
        g_assert_cmpuint(items, <, 10000);
    }
    *min_cover = UINT_MAX;
    *max_cover = 0;
    for (int y = region->y / 16; y * 16 < region->y + region->height; y++) {
        for (int x = region->x / 16; x * 16 < region->x + region->width; x++) {
            *min_cover = MIN(*min_cover, cover[y][x]);
            *max_cover = MAX(*max_cover, cover[y][x]);
        }
    }
    return items;
}

static void test_reset_limits(void)
{
    g_autoptr(QsScheduler) s = qs_scheduler_new();
    QsFlowItem item;

    g_assert_cmpint(qs_scheduler_next(s, 0, &open_budget, &item), ==, QS_PICK_IDLE);
    g_assert_false(qs_scheduler_reset(s, 1, 0, 10, 0));
    g_assert_false(qs_scheduler_reset(s, 1, 10, QS_DAMAGE_MAX_SIDE + 1, 0));
    g_assert_true(qs_scheduler_reset(s, 2, 17, 5, 0));
    g_assert_cmpint(qs_scheduler_next(s, 0, &open_budget, &item), ==, QS_PICK_ITEM);
    /* Edge blocks are clipped to the surface. */
    g_assert_cmpint(item.rect.x + item.rect.width, <=, 17);
    g_assert_cmpint(item.rect.y + item.rect.height, <=, 5);
}

/* Ten damages before any pick: one item per block, with the last state. */
static void test_newest_wins(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect r = { 100, 100, 300, 200 };
    unsigned lo, hi;

    for (int i = 0; i < 10; i++) {
        qs_scheduler_add_rect(s, &r, 1000 + i * 1000);
    }
    drain(s, 20000, &r, &lo, &hi);
    g_assert_cmpuint(lo, ==, 1);
    g_assert_cmpuint(hi, ==, 1);
}

static void test_idle_blocked(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect big = { 0, 0, 640, 480 };
    QsPacerBudget shut = { .target_bytes = 100000, .bulk_bytes = 100,
                           .fast_bytes = 0, .band_bytes = 16384 };
    QsFlowItem item;

    g_assert_cmpint(qs_scheduler_next(s, 1000, &shut, &item), ==, QS_PICK_IDLE);
    qs_scheduler_add_rect(s, &big, 1000);
    g_assert_cmpint(qs_scheduler_next(s, 1000, &shut, &item), ==, QS_PICK_BLOCKED);
    /* Nothing was consumed while blocked. */
    g_assert_cmpuint(qs_damage_dirty_count(qs_scheduler_damage(s)), ==, 40 * 30);
    shut.bulk_bytes = 8192;     /* half a band: open */
    g_assert_cmpint(qs_scheduler_next(s, 1000, &shut, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.lane, ==, QS_LANE_BULK);
}

/* Bulk goes in bands of at most 4 block rows and about a band's bytes,
 * resuming where the last one ended; a key box jumps the queue. */
static void test_bands_and_fast_lane(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect area = { 0, 0, 640, 480 };
    const QsRect key = { 1000, 600, 96, 96 };
    QsFlowItem item, prev = { 0 };

    qs_scheduler_add_rect(s, &area, 1000);
    for (int i = 0; i < 5; i++) {
        g_assert_cmpint(qs_scheduler_next(s, 1000, &open_budget, &item), ==,
                        QS_PICK_ITEM);
        g_assert_cmpint(item.lane, ==, QS_LANE_BULK);
        g_assert_cmpint(item.rect.height, <=, 64);
        g_assert_cmpint(item.rect.x % 16, ==, 0);
        g_assert_cmpint(item.rect.y % 16, ==, 0);
        /* 0.5 B/px known from clean_sched's feedback + the overhead. */
        g_assert_cmpuint(item.est_bytes, <=, open_budget.band_bytes + 128);
        if (i > 0) {
            g_assert_false(rects_overlap(&item.rect, &prev.rect));
            /* The sweep moves on (right, or down to the next row). */
            g_assert_true(item.rect.y > prev.rect.y ||
                          item.rect.x >= prev.rect.x + prev.rect.width);
        }
        prev = item;
    }
    qs_scheduler_add_rect(s, &key, 2000);
    g_assert_cmpint(qs_scheduler_next(s, 2000, &open_budget, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.lane, ==, QS_LANE_FAST);
    /* Unaligned 96x96 at (1000, 600): blocks 992..1104 x 592..704. */
    g_assert_cmpint(item.rect.x, ==, 992);
    g_assert_cmpint(item.rect.y, ==, 592);
    g_assert_cmpint(item.rect.width, ==, 112);
    g_assert_cmpint(item.rect.height, ==, 112);
    /* And bulk resumes after the last band, not from the top. */
    g_assert_cmpint(qs_scheduler_next(s, 2000, &open_budget, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.lane, ==, QS_LANE_BULK);
    g_assert_true(item.rect.y > prev.rect.y ||
                  item.rect.x >= prev.rect.x + prev.rect.width);
}

/* Fast lane needs room: with none, the key box waits (BLOCKED). */
static void test_fast_needs_room(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect key = { 200, 200, 96, 96 };
    QsPacerBudget b = open_budget;
    QsFlowItem item;

    qs_scheduler_add_rect(s, &key, 1000);
    b.fast_bytes = 0;
    b.bulk_bytes = 0;
    g_assert_cmpint(qs_scheduler_next(s, 1000, &b, &item), ==, QS_PICK_BLOCKED);
    b.fast_bytes = 1;
    g_assert_cmpint(qs_scheduler_next(s, 1000, &b, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.lane, ==, QS_LANE_FAST);
}

/* Oldest fast item first. */
static void test_fast_order(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect a = { 0, 0, 32, 32 }, b = { 608, 608, 32, 32 };
    QsFlowItem item;

    qs_scheduler_add_rect(s, &b, 1000);
    qs_scheduler_add_rect(s, &a, 5000);
    g_assert_cmpint(qs_scheduler_next(s, 6000, &open_budget, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.rect.x, ==, 608);
    g_assert_cmpint(qs_scheduler_next(s, 6000, &open_budget, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.rect.x, ==, 0);
}

/* A small area animating at 30 Hz turns hot (the screen's heat) and leaves
 * the fast lane; a big one was never fast. */
static void test_hot_small_is_bulk(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    g_autoptr(FlowSimHeat) heat = flow_sim_heat_new(W, H, 0);
    const QsRect spin = { 320, 320, 32, 32 };
    QsFlowItem item;
    int64_t t = 0;

    for (int i = 0; i < 30; i++, t += 33333) {
        qs_scheduler_add_rect(s, &spin, t);
        flow_sim_heat_change(heat, &spin, t);
        flow_sim_heat_feed(heat, s, t);
        g_assert_cmpint(qs_scheduler_next(s, t, &open_budget, &item), ==, QS_PICK_ITEM);
        if (i == 0) {
            g_assert_cmpint(item.lane, ==, QS_LANE_FAST);
            g_assert_false(item.hot);
        }
    }
    g_assert_cmpint(item.lane, ==, QS_LANE_BULK);
    g_assert_true(item.hot);
    /* It cools down once it stops: the same blocks damaged again (say, a
     * requeue) 250 ms later are fast again. */
    t += 250000;
    flow_sim_heat_feed(heat, s, t);
    qs_scheduler_add_rect(s, &spin, t);
    g_assert_cmpint(qs_scheduler_next(s, t, &open_budget, &item), ==, QS_PICK_ITEM);
    g_assert_cmpint(item.lane, ==, QS_LANE_FAST);
    g_assert_false(item.hot);
}

/* An area re-damaged after every pick still gets every block out within one
 * sweep: the lower rows are not starved by the top being redrawn. */
static void test_sweep_fairness(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect area = { 0, 0, 640, 480 };
    unsigned sent[30][40] = { { 0 } };
    QsFlowItem item;
    int64_t t = 0;
    unsigned picks = 0, missing = 40 * 30, most = 0;

    while (missing && picks < 2000) {
        qs_scheduler_add_rect(s, &area, t);
        g_assert_cmpint(qs_scheduler_next(s, t, &open_budget, &item), ==, QS_PICK_ITEM);
        picks++;
        for (int y = item.rect.y / 16; y * 16 < item.rect.y + item.rect.height; y++) {
            for (int x = item.rect.x / 16; x * 16 < item.rect.x + item.rect.width; x++) {
                if (y < 30 && x < 40 && sent[y][x]++ == 0) {
                    missing--;
                }
            }
        }
        t += 33333;
    }
    for (int y = 0; y < 30; y++) {
        for (int x = 0; x < 40; x++) {
            most = MAX(most, sent[y][x]);
        }
    }
    g_test_message("640x480 redrawn before every pick: all blocks out in %u picks,"
                   " none more than %u times", picks, most);
    g_assert_cmpuint(missing, ==, 0);
    /* About one sweep: no block went twice more before the last went once. */
    g_assert_cmpuint(most, <=, 2);
    g_assert_cmpuint(picks, <=, 80);
}

/* Runs of dirty blocks join across a single clean block, not across three. */
static void test_merge_gap(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect a = { 0, 320, 160, 16 }, b = { 176, 320, 160, 16 };
    const QsRect c = { 0, 480, 160, 16 }, d = { 208, 480, 160, 16 };
    QsFlowItem item;

    /* Long enough not to be fast-lane: 10 + 10 blocks, bridged. */
    qs_scheduler_add_rect(s, &a, 1000);
    qs_scheduler_add_rect(s, &b, 1000);
    qs_scheduler_add_rect(s, &c, 1000);
    qs_scheduler_add_rect(s, &d, 1000);
    /* The groups are 10 blocks each: fast lane, one item each. Make them
     * bulk by heating nothing but asking with the fast lane shut. */
    {
        QsPacerBudget b2 = open_budget;

        b2.fast_bytes = 0;
        g_assert_cmpint(qs_scheduler_next(s, 1000, &b2, &item), ==, QS_PICK_ITEM);
        g_assert_cmpint(item.rect.y, ==, 320);
        g_assert_cmpint(item.rect.x, ==, 0);
        g_assert_cmpint(item.rect.width, ==, 336);       /* bridged */
        g_assert_cmpint(qs_scheduler_next(s, 1000, &b2, &item), ==, QS_PICK_ITEM);
        g_assert_cmpint(item.rect.y, ==, 480);
        g_assert_cmpint(item.rect.width, ==, 160);       /* not bridged */
    }
}

static void test_stream_hint(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect stream = { 100, 100, 400, 300 };   /* blocks 7..31 x 7..25 inside */
    const QsRect all = { 0, 0, W, H };
    const QsDamage *d = qs_scheduler_damage(s);
    QsFlowItem item;
    unsigned lo, hi;

    g_assert_true(qs_scheduler_stream_set(s, 7, &stream, 1000));
    qs_scheduler_add_rect(s, &all, 2000);
    g_assert_true(qs_damage_is_excluded(d, 10, 10));
    g_assert_false(qs_damage_is_excluded(d, 6, 10));     /* partly covered */
    g_assert_false(qs_damage_is_dirty(d, 10, 10));
    while (qs_scheduler_next(s, 3000, &open_budget, &item) == QS_PICK_ITEM) {
        QsRect inner = { 112, 112, 384 - 16, 288 - 16 };

        g_assert_false(rects_overlap(&item.rect, &inner));
    }
    /* Ending the stream sends its area once as images. */
    qs_scheduler_stream_clear(s, 7, 4000);
    g_assert_true(qs_damage_is_dirty(d, 10, 10));
    drain(s, 5000, &(QsRect){ 112, 112, 368, 272 }, &lo, &hi);
    g_assert_cmpuint(lo, ==, 1);
    g_assert_cmpuint(hi, ==, 1);
    /* The table of hints is bounded. */
    for (uint32_t i = 0; i < QS_SCHED_MAX_STREAMS; i++) {
        g_assert_true(qs_scheduler_stream_set(s, 100 + i, &stream, 6000));
    }
    g_assert_false(qs_scheduler_stream_set(s, 999, &stream, 6000));
    g_assert_true(qs_scheduler_stream_set(s, 100, &all, 6000));   /* update */
}

static void test_block_map(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    uint8_t map[50 * 96];
    const QsDamage *d = qs_scheduler_damage(s);

    memset(map, 0, sizeof(map));
    map[3 * 96 + 5] = 1;
    map[49 * 96 + 79] = 0xff;
    g_assert_false(qs_scheduler_add_blocks(s, map, 81, 50, 96, 1000));
    g_assert_false(qs_scheduler_add_blocks(s, map, 80, 49, 96, 1000));
    g_assert_false(qs_scheduler_add_blocks(s, map, 80, 50, 79, 1000));
    g_assert_cmpuint(qs_damage_dirty_count(d), ==, 0);
    g_assert_true(qs_scheduler_add_blocks(s, map, 80, 50, 96, 1000));
    g_assert_cmpuint(qs_damage_dirty_count(d), ==, 2);
    g_assert_true(qs_damage_is_dirty(d, 5, 3));
    g_assert_true(qs_damage_is_dirty(d, 79, 49));
}

/* Feedback and requeue validate what they are given. */
static void test_feedback_requeue(void)
{
    g_autoptr(QsScheduler) s = clean_sched();
    const QsRect r = { 0, 0, 640, 64 };
    QsFlowItem item, bogus;

    qs_scheduler_add_rect(s, &r, 1000);
    g_assert_cmpint(qs_scheduler_next(s, 1000, &open_budget, &item), ==, QS_PICK_ITEM);
    g_assert_cmpuint(qs_damage_dirty_count(qs_scheduler_damage(s)), <, 160);
    bogus = item;
    bogus.rect.width = 100000;
    qs_scheduler_feedback(s, &bogus, 5);
    qs_scheduler_requeue(s, &bogus, 1000);
    bogus = item;
    bogus.surface_serial++;
    qs_scheduler_requeue(s, &bogus, 1000);
    g_assert_cmpuint(qs_damage_dirty_count(qs_scheduler_damage(s)), <, 160);
    /* The real one comes back. */
    qs_scheduler_requeue(s, &item, 1000);
    g_assert_cmpuint(qs_damage_dirty_count(qs_scheduler_damage(s)), ==, 160);

    /* 4 B/px measured: the next band over these blocks is smaller. */
    qs_scheduler_feedback(s, &item, item.rect.width * item.rect.height * 4);
    qs_scheduler_requeue(s, &item, 1000);
    for (int guard = 0; guard < 100; guard++) {
        QsFlowItem again;

        g_assert_cmpint(qs_scheduler_next(s, 1000, &open_budget, &again), ==,
                        QS_PICK_ITEM);
        if (rects_overlap(&again.rect, &item.rect)) {
            g_assert_cmpint((int64_t)again.rect.width * again.rect.height, <,
                            (int64_t)item.rect.width * item.rect.height);
            g_assert_cmpuint(again.est_bytes, <=, open_budget.band_bytes + 1024);
            return;
        }
    }
    g_assert_not_reached();
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/scheduler/reset-limits", test_reset_limits);
    g_test_add_func("/flow/scheduler/newest-wins", test_newest_wins);
    g_test_add_func("/flow/scheduler/idle-blocked", test_idle_blocked);
    g_test_add_func("/flow/scheduler/bands-and-fast-lane", test_bands_and_fast_lane);
    g_test_add_func("/flow/scheduler/fast-needs-room", test_fast_needs_room);
    g_test_add_func("/flow/scheduler/fast-order", test_fast_order);
    g_test_add_func("/flow/scheduler/hot-small-is-bulk", test_hot_small_is_bulk);
    g_test_add_func("/flow/scheduler/sweep-fairness", test_sweep_fairness);
    g_test_add_func("/flow/scheduler/merge-gap", test_merge_gap);
    g_test_add_func("/flow/scheduler/stream-hint", test_stream_hint);
    g_test_add_func("/flow/scheduler/block-map", test_block_map);
    g_test_add_func("/flow/scheduler/feedback-requeue", test_feedback_requeue);
    return g_test_run();
}
