/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's rate decisions: quality targets, the link's share as ceiling, frame budgets, still-image JPEG quality. */
#include "flow/qs-rate.h"

#define MBIT(x) ((uint64_t)(x) * 1000000 / 8)   /* bytes/s */

/* Streams aim at a quality, not at the link: CRF for H.264 (within x264's
 * 0..51), a JPEG quality for MJPEG no higher than spice-server's top. */
static void test_stream_quality(void)
{
    int crf = qs_rate_stream_quality(TRUE), q = qs_rate_stream_quality(FALSE);

    g_assert_cmpint(crf, >, 0);
    g_assert_cmpint(crf, <=, 51);
    g_assert_cmpint(crf, ==, QS_RATE_H264_CRF);
    g_assert_cmpint(q, ==, QS_RATE_MJPEG_QUALITY);
    g_assert_cmpint(q, <=, 80);
}

/* The ceiling is the streams' share of the link, split between streams,
 * less what drop reports took, within the caps' bounds. */
static void test_stream_ceiling(void)
{
    const uint32_t lo = 64000, hi = 12000000;

    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(10), 1, 100, lo, hi), ==, 6000000);
    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(10), 2, 100, lo, hi), ==, 3000000);
    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(10), 1, 50, lo, hi), ==, 3000000);
    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(10), 0, 100, lo, hi), ==, 6000000);
    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(1000), 1, 100, lo, hi), ==, hi);
    g_assert_cmpuint(qs_rate_stream_ceiling(1000, 1, 100, lo, hi), ==, lo);
    /* rate_pct over 100 is no licence to pass the share. */
    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(10), 1, 250, lo, hi), ==, 6000000);
    /* Bounds the wrong way round: the lower one wins. */
    g_assert_cmpuint(qs_rate_stream_ceiling(MBIT(10), 1, 100, lo, 1000), ==, lo);
}

/* A frame's budget is the ceiling over qemu's frame interval: a 15 fps
 * source gets twice a 30 fps frame's, a slow one at most four intervals'
 * worth, a fast one never less than one. */
static void test_frame_bytes(void)
{
    const uint32_t ceil = 6000000;      /* 750000 B/s */

    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 30, 0), ==, 24999);
    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 30, -5), ==, 24999);
    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 30, 33333), ==, 24999);
    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 30, 66667), ==, 50000);
    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 30, 5000), ==, 24999);
    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 30, 10 * G_USEC_PER_SEC), ==, 99999);
    g_assert_cmpuint(qs_rate_frame_bytes(ceil, 0, 0), ==, 750000);
}

/* Still images: the target while lossy images go out quickly, down by a
 * step while one holds the link over QS_RATE_JPEG_IMAGE_US, never under
 * the floor, back up once they are quick again. */
static void test_jpeg_quality(void)
{
    uint64_t bw = MBIT(2);              /* 250000 B/s: 100 ms = 25000 B */
    int q = QS_RATE_JPEG_TARGET;

    g_assert_cmpint(qs_rate_jpeg_next(q, 3000, bw), ==, QS_RATE_JPEG_TARGET);
    q = qs_rate_jpeg_next(q, 60000, bw);
    g_assert_cmpint(q, ==, QS_RATE_JPEG_TARGET - QS_RATE_JPEG_STEP_DOWN);
    /* Between a quarter and the whole budget: kept. */
    g_assert_cmpint(qs_rate_jpeg_next(q, 20000, bw), ==, q);
    for (int i = 0; i < 20; i++) {
        q = qs_rate_jpeg_next(q, 200000, bw);
    }
    g_assert_cmpint(q, ==, QS_RATE_JPEG_FLOOR);
    q = qs_rate_jpeg_next(q, 1000, bw);
    g_assert_cmpint(q, ==, QS_RATE_JPEG_FLOOR + QS_RATE_JPEG_STEP_UP);
    for (int i = 0; i < 20; i++) {
        q = qs_rate_jpeg_next(q, 1000, bw);
    }
    g_assert_cmpint(q, ==, QS_RATE_JPEG_TARGET);
    /* The same image on a LAN stays at the target; an unknown (0) link
     * counts as the slowest. */
    g_assert_cmpint(qs_rate_jpeg_next(QS_RATE_JPEG_TARGET, 200000, MBIT(1000)), ==,
                    QS_RATE_JPEG_TARGET);
    g_assert_cmpint(qs_rate_jpeg_next(QS_RATE_JPEG_TARGET, 200000, 0), ==,
                    QS_RATE_JPEG_TARGET - QS_RATE_JPEG_STEP_DOWN);
    /* Out-of-range input is brought into range first. */
    g_assert_cmpint(qs_rate_jpeg_next(100, 3000, bw), ==, QS_RATE_JPEG_TARGET);
    g_assert_cmpint(qs_rate_jpeg_next(0, 20000, bw), ==, QS_RATE_JPEG_FLOOR);
}

/* qemu's frame interval: several updates of one picture count once, a
 * pause counts as one second, the average moves by an eighth. */
static void test_source_interval(void)
{
    int64_t avg = 0;

    g_assert_cmpint(qs_rate_source_interval(0, 100000), ==, 100000);
    g_assert_cmpint(qs_rate_source_interval(100000, 1000), ==, 100000);
    g_assert_cmpint(qs_rate_source_interval(100000, QS_RATE_SAME_PICTURE_US - 1), ==, 100000);
    g_assert_cmpint(qs_rate_source_interval(100000, 20 * G_USEC_PER_SEC), ==,
                    (100000 * 7 + G_USEC_PER_SEC) / 8);
    g_assert_cmpint(qs_rate_source_interval(80000, 160000), ==, 90000);
    /* A 30 fps source whose frames come as three updates 1 ms apart. */
    for (int i = 0; i < 60; i++) {
        avg = qs_rate_source_interval(avg, i % 3 ? 1000 : 33333 - 2000);
    }
    g_assert_cmpint(avg, ==, 31333);
}

/* Lowering verdicts halve the frame rate after a run of them, down to a
 * quarter; a run of raising ones doubles it back; mixed or holding
 * sequences move nothing. */
static void test_fit(void)
{
    QsRateFit fit = { 0 };
    guint changes = 0;

    for (int i = 0; i < QS_RATE_LOWER_RUN - 1; i++) {
        g_assert_false(qs_rate_fit_frame(&fit, QS_RATE_FIT_LOWER));
    }
    g_assert_cmpuint(qs_rate_fit_div(&fit), ==, 1);
    g_assert_true(qs_rate_fit_frame(&fit, QS_RATE_FIT_LOWER));
    g_assert_cmpuint(qs_rate_fit_div(&fit), ==, 2);
    for (int i = 0; i < 10 * QS_RATE_LOWER_RUN; i++) {
        changes += qs_rate_fit_frame(&fit, QS_RATE_FIT_LOWER);
    }
    g_assert_cmpuint(changes, ==, 1);
    g_assert_cmpuint(qs_rate_fit_div(&fit), ==, QS_RATE_FPS_DIV_MAX);
    /* Raise and lower by turns, or hold: neither run is long enough. */
    for (int i = 0; i < 100; i++) {
        g_assert_false(qs_rate_fit_frame(&fit, i % 3 == 0 ? QS_RATE_FIT_LOWER
                                                           : QS_RATE_FIT_RAISE));
        g_assert_false(qs_rate_fit_frame(&fit, QS_RATE_FIT_HOLD));
    }
    g_assert_cmpuint(qs_rate_fit_div(&fit), ==, QS_RATE_FPS_DIV_MAX);
    for (int i = 0; i < QS_RATE_RAISE_RUN - 1; i++) {
        g_assert_false(qs_rate_fit_frame(&fit, QS_RATE_FIT_RAISE));
    }
    g_assert_true(qs_rate_fit_frame(&fit, QS_RATE_FIT_RAISE));
    g_assert_cmpuint(qs_rate_fit_div(&fit), ==, QS_RATE_FPS_DIV_MAX / 2);
    for (int i = 0; i < 10 * QS_RATE_RAISE_RUN; i++) {
        qs_rate_fit_frame(&fit, QS_RATE_FIT_RAISE);
    }
    g_assert_cmpuint(qs_rate_fit_div(&fit), ==, 1);
}

/* The verdict: starved lowers; so does a frame rate over the share of the
 * link, counted at the slower of the read rate and qemu's, once the link's
 * rate is known; raising needs room for twice the rate. */
static void test_verdict(void)
{
    const uint64_t link = 250000;       /* 2 Mbit/s: the share is 37 500 B/s */

    g_assert_cmpint(qs_rate_frame_verdict(TRUE, 10, 30, 1, 33333, link, TRUE), ==,
                    QS_RATE_FIT_LOWER);
    /* 3 000 B at 30 fps is 90 000 B/s; at 7.5 fps, 22 500. */
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 1, 33333, link, TRUE), ==,
                    QS_RATE_FIT_LOWER);
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 2, 33333, link, TRUE), ==,
                    QS_RATE_FIT_LOWER);
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 4, 33333, link, TRUE), ==,
                    QS_RATE_FIT_HOLD);
    /* qemu at 5 fps: 15 000 B/s whatever the divisor. */
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 1, 200000, link, TRUE), ==,
                    QS_RATE_FIT_RAISE);
    /* A LAN takes it at full rate. */
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 1, 33333, 12500000, TRUE), ==,
                    QS_RATE_FIT_RAISE);
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 1, 0, 12500000, TRUE), ==,
                    QS_RATE_FIT_RAISE);
    /* A rate only the sender's floor: over its share no longer lowers,
     * starved still does, and room in it still raises. */
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 1, 33333, link, FALSE), ==,
                    QS_RATE_FIT_HOLD);
    g_assert_cmpint(qs_rate_frame_verdict(TRUE, 10, 30, 1, 33333, link, FALSE), ==,
                    QS_RATE_FIT_LOWER);
    g_assert_cmpint(qs_rate_frame_verdict(FALSE, 3000, 30, 1, 200000, link, FALSE), ==,
                    QS_RATE_FIT_RAISE);
}

/* A starved stream's ceiling makes each frame QS_RATE_STARVED_FRAME_US of
 * the link, whatever the source's interval. */
static void test_starved_ceiling(void)
{
    static const uint64_t links[] = { 250000, 625000, 1250000, 6250000 };
    static const int64_t intervals[] = { 0, 33333, 70000, 200000 };

    for (guint i = 0; i < G_N_ELEMENTS(links); i++) {
        for (guint j = 0; j < G_N_ELEMENTS(intervals); j++) {
            uint32_t bps = qs_rate_starved_ceiling(links[i], 30, intervals[j]);
            uint64_t want = links[i] * QS_RATE_STARVED_FRAME_US / G_USEC_PER_SEC;

            g_assert_cmpuint(qs_rate_frame_bytes(bps, 30, intervals[j]), <=, want);
            g_assert_cmpuint(qs_rate_frame_bytes(bps, 30, intervals[j]), >=, want - 1);
        }
    }
    /* 10 Mbit/s, qemu at 70 ms: 18 750 bytes a frame, over 70 ms. */
    g_assert_cmpuint(qs_rate_starved_ceiling(1250000, 30, 70000), ==, 2142857);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/rate/stream-quality", test_stream_quality);
    g_test_add_func("/flow/rate/stream-ceiling", test_stream_ceiling);
    g_test_add_func("/flow/rate/frame-bytes", test_frame_bytes);
    g_test_add_func("/flow/rate/jpeg-quality", test_jpeg_quality);
    g_test_add_func("/flow/rate/source-interval", test_source_interval);
    g_test_add_func("/flow/rate/fit", test_fit);
    g_test_add_func("/flow/rate/verdict", test_verdict);
    g_test_add_func("/flow/rate/starved-ceiling", test_starved_ceiling);
    return g_test_run();
}
