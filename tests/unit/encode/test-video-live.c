/* SPDX-License-Identifier: GPL-2.0-or-later */
/* H.264 through spice-gtk's live decoding pipeline (the h264parse hold and flush), and the encoder figures (-m perf). */
#include "encode/qs-video.h"
#include "video-util.h"
#include "../test-cpu-time.h"

#include <glib/gstdio.h>
#include <sys/wait.h>
#include <time.h>
#include <turbojpeg.h>

#define W 320
#define H 240
#define STRIDE ((W + 8) * 4)

/*
 * Runs h264-live.py: pushes the access units in `aus` one at a time into
 * spice-gtk's pipeline shape and records after which push each frame came
 * out (`out_at[frame]`, G_MAXUINT = never, n = after EOS). FALSE: no
 * GStreamer for Python, or no `decoder`.
 */
static gboolean run_live(GPtrArray *aus, const char *decoder, const char *caps,
                         const char *dir, guint *out_at)
{
    const char *script = g_getenv("QS_H264_LIVE");
    g_autofree char *path = g_build_filename(dir, "live.bin", NULL);
    g_autoptr(GByteArray) file = g_byte_array_new();
    g_autofree char *out = NULL;
    g_auto(GStrv) lines = NULL;
    int status = -1;

    if (!script) {
        return FALSE;
    }
    for (guint i = 0; i < aus->len; i++) {
        gsize len;
        const uint8_t *d = g_bytes_get_data(aus->pdata[i], &len);
        uint8_t l[4] = { (uint8_t)len, (uint8_t)(len >> 8), (uint8_t)(len >> 16),
                         (uint8_t)(len >> 24) };

        g_byte_array_append(file, l, 4);
        g_byte_array_append(file, d, (guint)len);
        out_at[i] = G_MAXUINT;
    }
    g_assert_true(g_file_set_contents(path, (const char *)file->data, file->len, NULL));
    {
        const char *argv[] = { "timeout", "120", "/usr/bin/python3", script, path,
                               decoder, caps, NULL };

        g_assert_true(g_spawn_sync(NULL, (char **)argv, NULL, G_SPAWN_SEARCH_PATH,
                                   NULL, NULL, &out, NULL, &status, NULL));
    }
    g_unlink(path);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 77) {
        return FALSE;
    }
    g_assert_true(g_spawn_check_wait_status(status, NULL));
    lines = g_strsplit(out, "\n", -1);
    for (guint i = 0; lines[i]; i++) {
        g_auto(GStrv) f = g_strsplit(lines[i], " ", -1);
        guint at;

        if (!f[0] || !f[1] || (f[0][0] != 'P' && f[0][0] != 'E')) {
            continue;
        }
        at = f[0][0] == 'E' ? aus->len : (guint)g_ascii_strtoull(f[1], NULL, 10);
        for (guint k = f[0][0] == 'E' ? 1 : 2; f[k]; k++) {
            guint64 frame = g_ascii_strtoull(f[k], NULL, 10);

            if (frame < aus->len && out_at[frame] == G_MAXUINT) {
                out_at[frame] = at;
            }
        }
    }
    return TRUE;
}

/*
 * spice-gtk's h264parse holds each access unit until the next one arrives
 * (qs-video.h); flush() must release the last real frame, and the flush
 * frame must be a tiny P-frame.
 */
static void test_h264_live(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-live-XXXXXX", NULL);
    g_autoptr(GError) error = NULL;
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_H264, W, H,
                                                         30, 2000000, 0, &error);
    g_autoptr(GPtrArray) aus = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autofree uint8_t *buf = g_malloc(STRIDE * H);
    GRand *rand = g_rand_new_with_seed(3);
    const guint n = 8;
    guint at[16];
    QsVideoFrame f = { 0 };
    gsize real = 0;

    g_assert_no_error(error);
    g_assert_true(qs_video_encoder_needs_flush(enc));
    g_assert_false(qs_video_encoder_flush(enc, &f, NULL));     /* nothing yet */
    for (guint i = 0; i < n; i++) {
        vt_draw(VT_BUSY, i, buf, STRIDE, W, H, rand);
        g_assert_true(qs_video_encoder_encode(enc, buf, STRIDE, FALSE, &f, &error));
        real += g_bytes_get_size(f.data);
        g_ptr_array_add(aus, f.data);
    }
    g_assert_true(qs_video_encoder_flush(enc, &f, &error));
    g_assert_no_error(error);
    g_assert_false(f.keyframe);
    g_test_message("flush frame %zu B, real frames %zu B on average",
                   g_bytes_get_size(f.data), real / n);
    g_assert_cmpuint(g_bytes_get_size(f.data), <, real / n / 4);

    /* Without the flush: the last real frame appears only at EOS. */
    if (!run_live(aus, "avdec_h264", "video/x-h264", dir, at)) {
        g_rand_free(rand);
        g_bytes_unref(f.data);
        g_rmdir(dir);
        g_test_fail_printf("no GStreamer for /usr/bin/python3, or no avdec_h264 "
                           "(gir1.2-gstreamer-1.0, gstreamer1.0-libav)");
        return;
    }
    for (guint i = 0; i < n; i++) {
        g_assert_cmpuint(at[i], <=, n);
    }
    g_test_message("spice-gtk caps: frame 0 out after push %u, last frame after %s",
                   at[0], at[n - 1] == n ? "EOS" : "its successor");

    /* With it: every real frame is out by the flush push. */
    g_ptr_array_add(aus, f.data);
    g_assert_true(run_live(aus, "avdec_h264", "video/x-h264", dir, at));
    for (guint i = 0; i < n; i++) {
        g_assert_cmpuint(at[i], <=, i + 1);
    }
    g_assert_cmpuint(at[n - 1], <=, n);
    if (vt_gst_has("openh264dec")) {
        g_assert_true(run_live(aus, "openh264dec", "video/x-h264", dir, at));
        for (guint i = 0; i < n; i++) {
            g_assert_cmpuint(at[i], <=, i + 1);
        }
    }
    /* The hold is h264parse's: with alignment=au each frame comes at once. */
    g_assert_true(run_live(aus, "avdec_h264",
                           "video/x-h264,stream-format=byte-stream,alignment=au",
                           dir, at));
    g_test_message("alignment=au caps: last real frame out after push %u",
                   at[n - 1]);
    g_rand_free(rand);
    g_rmdir(dir);
}

/*
 * Figures for the report, not a pass/fail test (run with -m perf): ms per
 * frame on this core, bytes per frame and Y PSNR of what a decoder shows,
 * for 640x480 busy and heavy content at several targets.
 */
#define BW 640
#define BH 480
#define BFRAMES 90

/* `quality` 0: the bit rate is the target; else the quality the helper's
 * streams use (flow/qs-rate.h) under `bitrate` as ceiling. */
static void bench_one(QsVideoCodec codec, VtContent content, uint32_t bitrate, int quality,
                      const char *dir)
{
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(codec, BW, BH, 30, bitrate, quality,
                                                         NULL);
    g_autofree uint8_t *buf = g_malloc(BW * 4 * BH);
    g_autofree uint8_t *ys = g_malloc((size_t)BW * BH * BFRAMES);
    g_autofree uint8_t *u = g_malloc(BW * BH / 4);
    g_autofree uint8_t *v = g_malloc(BW * BH / 4);
    g_autofree uint8_t *dec = g_malloc(BW * 4 * BH);
    g_autofree uint8_t *dy = g_malloc(BW * BH);
    g_autoptr(GByteArray) all = g_byte_array_new();
    GRand *rand = g_rand_new_with_seed(1);
    tjhandle tj = tjInitDecompress();
    double secs = 0, worst = 0, psnr = 0;
    uint64_t bytes = 0;
    guint decoded = 0;

    g_assert_nonnull(enc);
    for (guint i = 0; i < BFRAMES; i++) {
        QsVideoFrame f = { 0 };
        double t0, dt;
        gsize len;
        const uint8_t *data;

        vt_draw(content, i, buf, BW * 4, BW, BH, rand);
        qs_video_bgrx_to_i420(buf, BW * 4, BW, BH, ys + (size_t)BW * BH * i, BW,
                              u, v, BW / 2);
        t0 = qs_test_cpu_now();
        g_assert_true(qs_video_encoder_encode(enc, buf, BW * 4, FALSE, &f, NULL));
        dt = qs_test_cpu_now() - t0;
        secs += dt;
        worst = MAX(worst, dt);
        data = g_bytes_get_data(f.data, &len);
        bytes += len;
        if (codec == QS_VIDEO_CODEC_H264) {
            g_byte_array_append(all, data, (guint)len);
        } else if (tjDecompress2(tj, data, len, dec, BW, BW * 4, BH, TJPF_BGRX, 0) == 0) {
            qs_video_bgrx_to_i420(dec, BW * 4, BW, BH, dy, BW, u, v, BW / 2);
            psnr += vt_psnr(dy, ys + (size_t)BW * BH * i, BW * BH);
            decoded++;
        }
        g_bytes_unref(f.data);
    }
    if (codec == QS_VIDEO_CODEC_H264 && vt_gst_has("avdec_h264")) {
        g_autofree char *path = g_build_filename(dir, "bench.h264", NULL);
        g_autoptr(GBytes) yuv = NULL;
        const uint8_t *d;
        gsize len;

        g_assert_true(g_file_set_contents(path, (const char *)all->data, all->len,
                                          NULL));
        yuv = vt_gst_decode_h264(path, "avdec_h264");
        g_assert_nonnull(yuv);
        d = g_bytes_get_data(yuv, &len);
        for (guint i = 0; i < len / (BW * BH * 3 / 2) && i < BFRAMES; i++) {
            psnr += vt_psnr(d + (size_t)BW * BH * 3 / 2 * i,
                            ys + (size_t)BW * BH * i, BW * BH);
            decoded++;
        }
        g_unlink(path);
    }
    g_test_minimized_result(secs * 1000 / BFRAMES,
                            "%s %s %2u Mbit/s%s: %.2f ms CPU/frame (worst %.2f), "
                            "%.0f B/frame (%.2f Mbit/s at 30 fps), Y PSNR %.2f dB "
                            "over %u decoded frames",
                            qs_video_codec_name(codec),
                            content == VT_BUSY ? "busy " : "heavy",
                            bitrate / 1000000, quality ? " ceiling, by quality" : "",
                            secs * 1000 / BFRAMES, worst * 1000,
                            (double)bytes / BFRAMES,
                            bytes * 8.0 * 30 / BFRAMES / 1e6,
                            decoded ? psnr / decoded : 0.0, decoded);
    tjDestroy(tj);
    g_rand_free(rand);
}

/* CPU of the flush a lowered stream sends after each frame (flow/qs-rate.h):
 * the same picture again, which should cost a fraction of a frame. */
static void bench_flush(VtContent content, uint32_t bitrate)
{
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_H264, BW, BH, 30,
                                                         bitrate, 25, NULL);
    g_autofree uint8_t *buf = g_malloc(BW * 4 * BH);
    GRand *rand = g_rand_new_with_seed(1);
    double secs = 0;
    uint64_t bytes = 0;

    g_assert_nonnull(enc);
    g_assert_true(qs_video_encoder_needs_flush(enc));
    for (guint i = 0; i < BFRAMES; i++) {
        QsVideoFrame f = { 0 };
        double t0;

        vt_draw(content, i, buf, BW * 4, BW, BH, rand);
        g_assert_true(qs_video_encoder_encode(enc, buf, BW * 4, FALSE, &f, NULL));
        g_bytes_unref(f.data);
        t0 = qs_test_cpu_now();
        g_assert_true(qs_video_encoder_flush(enc, &f, NULL));
        secs += qs_test_cpu_now() - t0;
        bytes += g_bytes_get_size(f.data);
        g_bytes_unref(f.data);
    }
    g_test_minimized_result(secs * 1000 / BFRAMES,
                            "h264 %s %2u Mbit/s ceiling, by quality, a flush after "
                            "each frame: %.2f ms CPU/flush, %.0f B/flush",
                            content == VT_BUSY ? "busy " : "heavy", bitrate / 1000000,
                            secs * 1000 / BFRAMES, (double)bytes / BFRAMES);
    g_rand_free(rand);
}

static void test_bench(void)
{
    static const uint32_t rates[] = { 2000000, 5000000, 10000000 };
    g_autofree char *dir = g_dir_make_tmp("qs-bench-XXXXXX", NULL);
    g_autofree uint8_t *buf = g_malloc(BW * 4 * BH);
    g_autofree uint8_t *y = g_malloc(BW * BH);
    g_autofree uint8_t *u = g_malloc(BW * BH / 4);
    g_autofree uint8_t *v = g_malloc(BW * BH / 4);
    GRand *rand = g_rand_new_with_seed(2);
    double t0, ms;

    vt_draw(VT_BUSY, 0, buf, BW * 4, BW, BH, rand);
    t0 = qs_test_cpu_now();
    for (int i = 0; i < 100; i++) {
        qs_video_bgrx_to_i420(buf, BW * 4, BW, BH, y, BW, u, v, BW / 2);
    }
    ms = (qs_test_cpu_now() - t0) * 10;
    g_test_minimized_result(ms, "BGRX->I420 640x480: %.3f ms CPU", ms);
    for (int content = VT_BUSY; content <= VT_HEAVY; content++) {
        for (guint r = 0; r < G_N_ELEMENTS(rates); r++) {
            bench_one(QS_VIDEO_CODEC_H264, content, rates[r], 0, dir);
            bench_one(QS_VIDEO_CODEC_MJPEG, content, rates[r], 0, dir);
        }
        /* What the helper's streams do: the quality target under a ceiling
         * (CRF 25 and MJPEG's top of 80, flow/qs-rate.h). */
        for (guint r = 0; r < G_N_ELEMENTS(rates); r++) {
            bench_one(QS_VIDEO_CODEC_H264, content, rates[r], 25, dir);
            bench_one(QS_VIDEO_CODEC_MJPEG, content, rates[r], 80, dir);
        }
        bench_flush(content, rates[0]);
    }
    g_rand_free(rand);
    g_rmdir(dir);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/video/h264-live", test_h264_live);
    if (g_test_perf()) {
        g_test_add_func("/encode/video/bench", test_bench);
    }
    return g_test_run();
}
