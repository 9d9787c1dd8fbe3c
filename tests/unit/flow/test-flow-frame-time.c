/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Frame stamping learnt from the client's per-frame margins: matching, bounds, simulated links. */
#include "flow/qs-frame-time.h"

static void test_initial_lead(void)
{
    g_autoptr(QsFrameTime) ft = qs_frame_time_new();

    g_assert_cmpint(qs_frame_time_offset(ft), ==, QS_FRAME_TIME_INITIAL_OFFSET_MS);
    g_assert_cmpint(qs_frame_time_scale_milli(ft), ==, 1000);
    g_assert_cmpuint(qs_frame_time_lead(ft, 0, 0), ==,
                     QS_FRAME_TIME_INITIAL_OFFSET_MS + QS_FRAME_TIME_GUARD_MS);
    g_assert_cmpuint(qs_frame_time_lead(ft, 20, 33), ==,
                     20 + QS_FRAME_TIME_INITIAL_OFFSET_MS + 33 + QS_FRAME_TIME_GUARD_MS);
    g_assert_cmpuint(qs_frame_time_lead(ft, G_MAXUINT32, G_MAXUINT32), ==, QS_FRAME_TIME_MAX_MS);
    g_assert_cmpuint(qs_frame_time_reports(ft), ==, 0);
}

static void test_matching(void)
{
    g_autoptr(QsFrameTime) ft = qs_frame_time_new();

    /* Delivery 10 ms estimated each. */
    qs_frame_time_sent(ft, 1, 1000, 15, 10);
    qs_frame_time_sent(ft, 1, 1000, 19, 10);    /* the same stamp again */
    qs_frame_time_sent(ft, 2, 1000, 17, 10);
    g_assert_false(qs_frame_time_report(ft, 3, 1000, 0));  /* no such stream */
    g_assert_false(qs_frame_time_report(ft, 1, 999, 0));   /* no such frame */
    g_assert_cmpuint(qs_frame_time_reports(ft), ==, 0);
    /* The first of the two: took 15 - 2 = 13 ms, 3 more than estimated. */
    g_assert_true(qs_frame_time_report(ft, 1, 1000, 2));
    g_assert_cmpuint(qs_frame_time_lead(ft, 10, 0), ==, 10 + 3 + QS_FRAME_TIME_GUARD_MS);
    /* The second: 19 - 1 = 18 ms, 8 more. */
    g_assert_true(qs_frame_time_report(ft, 1, 1000, 1));
    g_assert_cmpuint(qs_frame_time_lead(ft, 10, 0), ==, 10 + 8 + QS_FRAME_TIME_GUARD_MS);
    g_assert_false(qs_frame_time_report(ft, 1, 1000, 1));  /* both reported */
    /* Stream 2's frame, early: does not lower the worst. */
    g_assert_true(qs_frame_time_report(ft, 2, 1000, 40));
    g_assert_cmpuint(qs_frame_time_lead(ft, 10, 33), ==, 10 + 8 + 33 + QS_FRAME_TIME_GUARD_MS);

    /* A report frees the slots of older frames, which the client skipped. */
    qs_frame_time_sent(ft, 4, 10, 0, 0);
    qs_frame_time_sent(ft, 4, 20, 0, 0);
    qs_frame_time_sent(ft, 4, 30, 0, 0);
    g_assert_true(qs_frame_time_report(ft, 4, 20, 100));
    g_assert_false(qs_frame_time_report(ft, 4, 10, 100));
    g_assert_true(qs_frame_time_report(ft, 4, 30, 100));

    /* The ring forgets the oldest unreported frame. */
    for (uint32_t i = 0; i <= QS_FRAME_TIME_SENT; i++) {
        qs_frame_time_sent(ft, 5, 100 + i, 0, 0);
    }
    g_assert_false(qs_frame_time_report(ft, 5, 100, 0));
    g_assert_true(qs_frame_time_report(ft, 5, 101, 0));
}

static void test_bounds(void)
{
    g_autoptr(QsFrameTime) ft = qs_frame_time_new();

    qs_frame_time_sent(ft, 0, 1, G_MAXINT32, 0);
    g_assert_true(qs_frame_time_report(ft, 0, 1, G_MININT32));
    g_assert_cmpuint(qs_frame_time_lead(ft, 0, 0), ==, QS_FRAME_TIME_MAX_MS);
    /* Frames far early: after a window the lead never goes below 0. */
    for (uint32_t i = 0; i < QS_FRAME_TIME_WINDOW; i++) {
        qs_frame_time_sent(ft, 0, 2 + i, G_MININT32, 0);
        g_assert_true(qs_frame_time_report(ft, 0, 2 + i, G_MAXINT32));
    }
    g_assert_cmpint(qs_frame_time_offset(ft), <=, 0);
    g_assert_cmpuint(qs_frame_time_lead(ft, 0, 33), ==, 0);
}

/*
 * A link whose delivery estimate is wrong by a constant plus noise: the
 * client's clock runs `d_main` ms behind ours, each frame takes the
 * estimated delivery plus `bias` plus uniform noise in [0, noise] plus,
 * once in a while, a spike. Reports come back `lag` frames later. Returns
 * the late frames among `frames`, the mean margin (the client's hold) in
 * `mean_hold`.
 */
typedef struct {
    int32_t bias, noise, spike, spike_every, d_main;
    double scale;               /* real delivery / estimate (1 if 0) */
    gboolean unrelated;         /* the real delivery ignores the estimate */
    uint32_t est_lo, est_hi;    /* the estimates' range (5-60 ms if 0) */
    uint32_t hold, lag, frames;
} Link;

static uint32_t run_link(const Link *l, guint32 seed, uint32_t skip, double *mean_hold)
{
    g_autoptr(QsFrameTime) ft = qs_frame_time_new();
    g_autoptr(GRand) rand = g_rand_new_with_seed(seed);
    int32_t *margin = g_new(int32_t, l->frames);
    uint32_t *stamp = g_new(uint32_t, l->frames);
    uint32_t late = 0, now = 100000;
    double sum = 0;

    for (uint32_t i = 0; i < l->frames + l->lag; i++) {
        if (i >= l->lag) {
            uint32_t j = i - l->lag;

            qs_frame_time_report(ft, 7, stamp[j], margin[j]);
        }
        if (i >= l->frames) {
            continue;
        }
        {
            uint32_t delivery = l->est_hi ? (uint32_t)g_rand_int_range(rand, (gint32)l->est_lo,
                                                                        (gint32)l->est_hi)
                                          : (uint32_t)g_rand_int_range(rand, 5, 60);
            uint32_t lead = qs_frame_time_lead(ft, delivery, l->hold);
            uint32_t every = (uint32_t)l->spike_every;
            int32_t actual = (l->unrelated ? 0 : (int32_t)(delivery * (l->scale > 0 ? l->scale : 1.0))) +
                             l->bias +
                             g_rand_int_range(rand, 0, l->noise + 1) +
                             (every && i % every == every - 1 ? l->spike : 0);

            stamp[i] = now + lead;
            qs_frame_time_sent(ft, 7, stamp[i], (int32_t)lead, delivery);
            /* Client clock on arrival: our now + actual - d_main. */
            margin[i] = (int32_t)(stamp[i] - (now + (uint32_t)actual - (uint32_t)l->d_main));
            if (i >= skip) {
                late += margin[i] < 0;
                sum += margin[i];
            }
            now += 33;
        }
    }
    *mean_hold = sum / (l->frames - skip);
    g_free(margin);
    g_free(stamp);
    return late;
}

static void test_noisy_link(void)
{
    /* Estimates 10 ms short, 0-30 ms of noise, 2 ms main-channel delay:
     * the first reports teach the offset; after the first window no frame
     * is late, and the client holds frames for the noise plus hold and
     * guard, not more. */
    Link l = { .bias = 10, .noise = 30, .d_main = 2, .hold = 33, .lag = 3, .frames = 2000 };
    double hold;

    for (guint32 seed = 1; seed <= 5; seed++) {
        uint32_t early = run_link(&l, seed, 0, &hold);
        uint32_t late = run_link(&l, seed, QS_FRAME_TIME_WINDOW, &hold);

        g_test_message("seed %u: %u late in all, %u after the first window, mean hold %.1f ms",
                       seed, early, late, hold);
        g_assert_cmpuint(early, <=, 10);
        g_assert_cmpuint(late, ==, 0);
        g_assert_cmpfloat(hold, >=, l.hold + QS_FRAME_TIME_GUARD_MS);
        g_assert_cmpfloat(hold, <=, l.hold + QS_FRAME_TIME_GUARD_MS + l.noise);
    }
}

static void test_scale_learnt(void)
{
    /* The bandwidth estimate is 1.8x the link's (measured behind a 2 Mbit
     * tbf): without the fit the offset would have to cover 0.8 x 55 ms of
     * spread; with it the hold stays near the noise. */
    Link l = { .bias = 5, .noise = 10, .scale = 1.8, .d_main = 2, .hold = 0, .lag = 3,
               .frames = 1000 };
    double hold;
    uint32_t late = run_link(&l, 3, QS_FRAME_TIME_WINDOW, &hold);

    g_test_message("scale 1.8: %u late after the first window, mean hold %.1f ms", late, hold);
    g_assert_cmpuint(late, ==, 0);
    g_assert_cmpfloat(hold, <=, QS_FRAME_TIME_GUARD_MS + l.noise + 5);
}

static void test_estimate_unrelated(void)
{
    /* The estimate has no bearing on the delivery (measured unshaped: the
     * bandwidth guess of 1 Mbit/s put 360-530 ms on frames that took a few
     * ms): the scale must fall to 0, or each frame's hold follows the
     * noise of its estimate and the lead swings by a quarter second. */
    Link l = { .bias = 3, .noise = 8, .unrelated = TRUE, .est_lo = 360, .est_hi = 530,
               .d_main = 1, .hold = 33, .lag = 3, .frames = 1000 };
    double hold;
    uint32_t late = run_link(&l, 5, QS_FRAME_TIME_WINDOW, &hold);

    g_test_message("unrelated estimate: %u late after the first window, mean hold %.1f ms",
                   late, hold);
    g_assert_cmpuint(late, ==, 0);
    g_assert_cmpfloat(hold, <=, l.hold + QS_FRAME_TIME_GUARD_MS + l.noise + 10);
}

static void test_spike_bounded(void)
{
    /* A 120 ms spike every 1000 frames: the frame of the spike is late
     * (nothing could know), and the offset covers it only up to
     * QS_FRAME_TIME_SPREAD_MAX_MS above the median, for one window. */
    Link l = { .bias = 0, .noise = 10, .spike = 120, .spike_every = 1000, .d_main = 0,
               .hold = 0, .lag = 2, .frames = 3000 };
    double hold;
    uint32_t late = run_link(&l, 9, QS_FRAME_TIME_WINDOW, &hold);

    g_test_message("spikes: %u late, mean hold %.1f ms", late, hold);
    g_assert_cmpuint(late, <=, 3);
    g_assert_cmpfloat(hold, <=, QS_FRAME_TIME_GUARD_MS + 10 + 5 +
                                (double)QS_FRAME_TIME_SPREAD_MAX_MS * QS_FRAME_TIME_WINDOW / 1000);

    /* One frame 900 ms late among frames on time: the offset stays near
     * the spread bound, not 900 ms. */
    {
        g_autoptr(QsFrameTime) ft = qs_frame_time_new();

        for (uint32_t i = 0; i < 64; i++) {
            qs_frame_time_sent(ft, 1, 1000 + i, 10, 5);
            g_assert_true(qs_frame_time_report(ft, 1, 1000 + i, i == 40 ? -895 : (int32_t)(i % 5)));
        }
        /* The frames took 6-10 ms (y = 10 - margin), the median 8: the
         * lead covers up to 80 ms more, plus the guard. */
        g_test_message("lead after a 900 ms spike: %u ms", qs_frame_time_lead(ft, 5, 0));
        g_assert_cmpuint(qs_frame_time_lead(ft, 5, 0), >=, 8 + QS_FRAME_TIME_SPREAD_MAX_MS);
        g_assert_cmpuint(qs_frame_time_lead(ft, 5, 0), <=,
                         8 + QS_FRAME_TIME_SPREAD_MAX_MS + QS_FRAME_TIME_GUARD_MS + 2);
    }
}

static void test_stamp_edges(void)
{
    /* The wanted stamp when it moves forward. */
    g_assert_cmpuint(qs_stream_stamp_next(0, 0, 1000, 1100), ==, 1100);
    g_assert_cmpuint(qs_stream_stamp_next(1100, 1000, 1033, 1140), ==, 1140);
    /* A falling lead: at least half the time since the last stamp on. */
    g_assert_cmpuint(qs_stream_stamp_next(1100, 1000, 1040, 1050), ==, 1120);
    /* A clock that went backwards does not move the previous stamp back. */
    g_assert_cmpuint(qs_stream_stamp_next(1100, 1000, 990, 1000), ==, 1100);
    /* Never 0, and wraps like the client's arithmetic. */
    g_assert_cmpuint(qs_stream_stamp_next(0, 0, 0, 0), ==, 1);
    g_assert_cmpuint(qs_stream_stamp_next(0xfffffff0u, 0xffffffe0u, 0xfffffff8u, 0xfffffff4u),
                     ==, 0xfffffff0u + 12);
    g_assert_cmpuint(qs_stream_stamp_next(0xfffffff0u, 0xfffffff0u, 0xfffffff8u, 20), ==, 20);
    g_assert_cmpuint(qs_stream_stamp_next(0xfffffffeu, 0xfffffff0u, 0xfffffff2u, 0xfffffff0u),
                     ==, 0xffffffffu);
    g_assert_cmpuint(qs_stream_stamp_next(0xfffffffeu, 0xfffffff0u, 0xfffffff6u, 0xfffffff0u),
                     ==, 1);

    g_assert_cmpuint(qs_mm_time_from_monotonic(G_GINT64_CONSTANT(5000123)), ==, 5000);
    g_assert_cmpuint(qs_mm_time_from_monotonic(G_GINT64_CONSTANT(4294967296000) + 7000),
                     ==, 7);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/frame-time/initial-lead", test_initial_lead);
    g_test_add_func("/flow/frame-time/matching", test_matching);
    g_test_add_func("/flow/frame-time/bounds", test_bounds);
    g_test_add_func("/flow/frame-time/noisy-link", test_noisy_link);
    g_test_add_func("/flow/frame-time/scale-learnt", test_scale_learnt);
    g_test_add_func("/flow/frame-time/estimate-unrelated", test_estimate_unrelated);
    g_test_add_func("/flow/frame-time/spike-bounded", test_spike_bounded);
    g_test_add_func("/flow/frame-time/stamp-edges", test_stamp_edges);
    return g_test_run();
}
