/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What one H.264 frame costs the encoder thread: the BGRX -> I420
 * conversion and the whole qs_video_encoder_encode(), on the unit
 * benchmark's 640x480 content at the helper's stream settings. Small and
 * single-threaded so it can also run under callgrind for instruction
 * counts, which load does not change (tests/bench/README.md). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "encode/qs-video.h"
#include "video-util.h"

#define W 640
#define H 480

static double cpu_now(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
    int frames = argc > 1 ? atoi(argv[1]) : 60;
    VtContent content = argc > 2 && g_str_equal(argv[2], "heavy") ? VT_HEAVY : VT_BUSY;
    /* CRF 25 under a 10 Mbit/s ceiling, as the helper's streams (flow/qs-rate.h). */
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_H264, W, H, 30,
                                                         10000000, 25, NULL);
    g_autofree uint8_t *buf = g_malloc(W * 4 * H);
    g_autofree uint8_t *y = g_malloc(W * H);
    g_autofree uint8_t *u = g_malloc(W * H / 4);
    g_autofree uint8_t *v = g_malloc(W * H / 4);
    GRand *rand = g_rand_new_with_seed(1);
    double convert = 0, encode = 0;
    uint64_t bytes = 0;

    if (!enc || frames <= 0) {
        fprintf(stderr, "usage: bench-video [FRAMES [busy|heavy]]\n");
        return 1;
    }
    for (int i = 0; i < frames; i++) {
        QsVideoFrame f = { 0 };
        double t0;

        vt_draw(content, (uint32_t)i, buf, W * 4, W, H, rand);
        t0 = cpu_now();
        qs_video_bgrx_to_i420(buf, W * 4, W, H, y, W, u, v, W / 2);
        convert += cpu_now() - t0;
        t0 = cpu_now();
        if (!qs_video_encoder_encode(enc, buf, W * 4, FALSE, &f, NULL)) {
            fprintf(stderr, "encode failed at frame %d\n", i);
            return 1;
        }
        encode += cpu_now() - t0;
        bytes += g_bytes_get_size(f.data);
        g_bytes_unref(f.data);
    }
    printf("%s 640x480, %d frames: conversion %.3f ms CPU/frame, "
           "qs_video_encoder_encode (conversion included) %.3f ms CPU/frame, %.0f B/frame\n",
           content == VT_BUSY ? "busy" : "heavy", frames, convert * 1000 / frames,
           encode * 1000 / frames, (double)bytes / frames);
    g_rand_free(rand);
    return 0;
}
