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

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/flow/rate/stream-quality", test_stream_quality);
    g_test_add_func("/flow/rate/stream-ceiling", test_stream_ceiling);
    g_test_add_func("/flow/rate/frame-bytes", test_frame_bytes);
    g_test_add_func("/flow/rate/jpeg-quality", test_jpeg_quality);
    g_test_add_func("/flow/rate/source-interval", test_source_interval);
    return g_test_run();
}
