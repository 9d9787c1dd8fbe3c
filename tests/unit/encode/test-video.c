/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the video encoders: H.264 bitstream shape, decoding by real decoders, rate control, MJPEG. */
#include "encode/qs-video.h"
#include "video-util.h"

#include <glib/gstdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

#define W 320
#define H 240
#define STRIDE ((W + 8) * 4)    /* not width * 4 on purpose */
#define FRAMES 30
#define FORCED 15               /* frame forced to be a keyframe */

/* A stream of FRAMES encoded frames of busy content, plus each source
 * frame's I420 Y plane (what the decoder should give back). */
typedef struct {
    GBytes *au[FRAMES];
    gboolean key[FRAMES];
    uint8_t *y[FRAMES];
} Clip;

static void clip_encode(Clip *c, QsVideoCodec codec, uint32_t bitrate)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(codec, W, H, 30, bitrate, 0,
                                                         &error);
    g_autofree uint8_t *buf = g_malloc(STRIDE * H);
    g_autofree uint8_t *u = g_malloc(W * H / 4);
    g_autofree uint8_t *v = g_malloc(W * H / 4);
    GRand *rand = g_rand_new_with_seed(42);

    g_assert_no_error(error);
    g_assert_cmpint(qs_video_encoder_get_codec(enc), ==, codec);
    for (guint i = 0; i < FRAMES; i++) {
        QsVideoFrame f = { 0 };

        vt_draw(VT_BUSY, i, buf, STRIDE, W, H, rand);
        c->y[i] = g_malloc(W * H);
        qs_video_bgrx_to_i420(buf, STRIDE, W, H, c->y[i], W, u, v, W / 2);
        g_assert_true(qs_video_encoder_encode(enc, buf, STRIDE, i == FORCED, &f,
                                              &error));
        g_assert_no_error(error);
        g_assert_nonnull(f.data);
        c->au[i] = f.data;
        c->key[i] = f.keyframe;
    }
    g_rand_free(rand);
}

static void clip_clear(Clip *c)
{
    for (guint i = 0; i < FRAMES; i++) {
        g_bytes_unref(c->au[i]);
        g_free(c->y[i]);
    }
}

/* The SPS promises what spice-gtk's decoders need to show each frame as
 * soon as its access unit arrives: no reordering (bitstream_restriction
 * with max_num_reorder_frames 0, else FFmpeg may hold frames back), the
 * right size, and BT.601 full range as our converter produces. */
static void check_sps(const VtNal *nal)
{
    VtSps sps;

    g_assert_true(vt_parse_sps(nal, &sps));
    g_assert_cmpint(sps.width, ==, W);
    g_assert_cmpint(sps.height, ==, H);
    g_assert_cmpint(sps.vui, ==, 1);
    g_assert_cmpint(sps.video_full_range, ==, 1);
    g_assert_cmpint(sps.colour_primaries, ==, 6);
    g_assert_cmpint(sps.transfer, ==, 6);
    g_assert_cmpint(sps.matrix, ==, 6);
    g_assert_cmpint(sps.bitstream_restriction, ==, 1);
    g_assert_cmpint(sps.max_num_reorder_frames, ==, 0);
    g_test_message("SPS %dx%d poc_type %d refs %d reorder %d dpb %d", sps.width,
                   sps.height, sps.poc_type, sps.max_num_ref_frames,
                   sps.max_num_reorder_frames, sps.max_dec_frame_buffering);
}

/* Every access unit: AUD first; keyframes are SPS, PPS, IDR; the others
 * one non-IDR P slice. The SPS says constrained baseline. */
static void test_h264_structure(void)
{
    Clip c = { 0 };

    clip_encode(&c, QS_VIDEO_CODEC_H264, 2000000);
    for (guint i = 0; i < FRAMES; i++) {
        gsize len;
        const uint8_t *data = g_bytes_get_data(c.au[i], &len);
        VtNal nals[16];
        guint n = vt_nals(data, len, nals, G_N_ELEMENTS(nals));
        gboolean want_key = i == 0 || i == FORCED;

        g_assert_cmpmem(data, 4, "\0\0\0\1", 4);
        g_assert_cmpuint(n, >=, 2);
        g_assert_cmpint(nals[0].type, ==, 9);           /* AUD */
        g_assert_cmpint(c.key[i], ==, want_key);
        if (want_key) {
            const uint8_t *sps;

            g_assert_cmpuint(n, >=, 4);
            g_assert_cmpint(nals[1].type, ==, 7);       /* SPS */
            g_assert_cmpint(nals[2].type, ==, 8);       /* PPS */
            sps = nals[1].p;
            g_assert_cmpuint(nals[1].len, >=, 4);
            /* profile_idc 66 with constraint_set1: constrained baseline,
             * what openh264 and every hardware decoder accept. */
            g_assert_cmpuint(sps[1], ==, 66);
            g_assert_cmpuint(sps[2] & 0x40, ==, 0x40);
            g_test_message("SPS profile_idc %u constraints 0x%02x level_idc %u",
                           sps[1], sps[2], sps[3]);
            check_sps(&nals[1]);
            for (guint k = 3; k < n; k++) {
                /* x264 puts its version SEI (6) before the first IDR. */
                if (nals[k].type == 6 && i == 0) {
                    continue;
                }
                g_assert_cmpint(nals[k].type, ==, 5);   /* IDR slices */
                g_assert_cmpint(vt_slice_type(&nals[k]) % 5, ==, 2);  /* I */
            }
        } else {
            for (guint k = 1; k < n; k++) {
                g_assert_cmpint(nals[k].type, ==, 1);
                /* P (0) or I (2), never B (1). */
                g_assert_cmpint(vt_slice_type(&nals[k]) % 5, !=, 1);
                g_assert_cmpint(vt_slice_type(&nals[k]), >=, 0);
            }
        }
    }
    clip_clear(&c);
}

static char *write_stream(Clip *c, guint from, const char *dir)
{
    char *path = g_build_filename(dir, "stream.h264", NULL);
    g_autoptr(GByteArray) all = g_byte_array_new();

    for (guint i = from; i < FRAMES; i++) {
        gsize len;
        const uint8_t *data = g_bytes_get_data(c->au[i], &len);

        g_byte_array_append(all, data, (guint)len);
    }
    g_assert_true(g_file_set_contents(path, (const char *)all->data, all->len, NULL));
    return path;
}

/* Decodes the stream from frame `from` with `decoder`: one picture per
 * access unit, each closest to its own source frame. */
static void check_decode(Clip *c, guint from, const char *decoder, const char *dir)
{
    g_autofree char *path = write_stream(c, from, dir);
    g_autoptr(GBytes) yuv = vt_gst_decode_h264(path, decoder);
    size_t frame_size = W * H * 3 / 2;
    const uint8_t *d;
    gsize len;
    double min_psnr = 99;

    g_assert_nonnull(yuv);
    d = g_bytes_get_data(yuv, &len);
    g_assert_cmpuint(len % frame_size, ==, 0);
    g_assert_cmpuint(len / frame_size, ==, FRAMES - from);
    for (guint i = from; i < FRAMES; i++) {
        const uint8_t *y = d + frame_size * (i - from);
        double own = vt_psnr(y, c->y[i], W * H);

        if (i + 1 < FRAMES) {
            /* The content moves, so a picture off by one frame scores
             * lower against the neighbour than against its own source. */
            g_assert_cmpfloat(own, >, vt_psnr(y, c->y[i + 1], W * H));
        }
        min_psnr = MIN(min_psnr, own);
    }
    g_test_message("%s from frame %u: %u frames, min Y PSNR %.2f dB", decoder,
                   from, FRAMES - from, min_psnr);
    g_assert_cmpfloat(min_psnr, >, 28.0);
    g_unlink(path);
}

static void test_h264_decode(void)
{
    static const char *const decoders[] = { "avdec_h264", "openh264dec" };
    g_autofree char *dir = g_dir_make_tmp("qs-video-XXXXXX", NULL);
    Clip c = { 0 };
    guint tried = 0;

    g_assert_nonnull(dir);
    clip_encode(&c, QS_VIDEO_CODEC_H264, 5000000);
    for (guint k = 0; k < G_N_ELEMENTS(decoders); k++) {
        if (!vt_gst_has(decoders[k])) {
            g_test_message("%s not available", decoders[k]);
            continue;
        }
        check_decode(&c, 0, decoders[k], dir);
        /* A client joining at a forced keyframe decodes from there. */
        check_decode(&c, FORCED, decoders[k], dir);
        tried++;
    }
    clip_clear(&c);
    g_rmdir(dir);
    if (tried == 0) {
        g_test_fail_printf("no GStreamer H.264 decoder (gstreamer1.0-libav, -plugins-bad)");
    }
}

/* ABR holds the average near the target, and set_bitrate moves it without
 * a keyframe. */
static void test_h264_bitrate(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_H264, W, H,
                                                         30, 2000000, 0, &error);
    g_autofree uint8_t *buf = g_malloc(STRIDE * H);
    GRand *rand = g_rand_new_with_seed(7);
    uint64_t bytes[2] = { 0, 0 };
    const guint n = 60;

    g_assert_no_error(error);
    for (guint phase = 0; phase < 2; phase++) {
        for (guint i = 0; i < n; i++) {
            QsVideoFrame f = { 0 };

            vt_draw(VT_BUSY, phase * n + i, buf, STRIDE, W, H, rand);
            g_assert_true(qs_video_encoder_encode(enc, buf, STRIDE, FALSE, &f, NULL));
            g_assert_true(f.keyframe == (phase == 0 && i == 0));
            if (i >= 10) {      /* let the rate control settle */
                bytes[phase] += g_bytes_get_size(f.data);
            }
            g_bytes_unref(f.data);
        }
        if (phase == 0) {
            qs_video_encoder_set_bitrate(enc, 500000);
            g_assert_cmpuint(qs_video_encoder_get_bitrate(enc), ==, 500000);
        }
    }
    for (guint phase = 0; phase < 2; phase++) {
        double target = (phase ? 500000.0 : 2000000.0) / 8 / 30;
        double avg = (double)bytes[phase] / (n - 10);

        g_test_message("target %.0f B/frame, got %.0f", target, avg);
        g_assert_cmpfloat(avg, <, target * 1.3);
        g_assert_cmpfloat(avg, >, target * 0.5);
    }
    /* Bounds are applied, not rejected. */
    qs_video_encoder_set_bitrate(enc, 1);
    g_assert_cmpuint(qs_video_encoder_get_bitrate(enc), ==, QS_VIDEO_MIN_BITRATE);
    g_rand_free(rand);
}

/* Average bytes of frames 10..n-1 of `content` (or a gradient sliding one
 * pixel a frame when `smooth`) at quality `crf` under `ceiling`, the
 * source delivering a picture every `interval_us`; how many of them came
 * back starved in `starved`. */
static double crf_average(gboolean smooth, uint32_t ceiling, int crf, int64_t interval_us,
                          guint *starved)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_H264, W, H, 30,
                                                         ceiling, crf, &error);
    g_autofree uint8_t *buf = g_malloc(STRIDE * H);
    GRand *rand = g_rand_new_with_seed(11);
    uint64_t bytes = 0;
    const guint n = 60;

    g_assert_no_error(error);
    g_assert_cmpint(qs_video_encoder_get_quality(enc), ==, crf);
    qs_video_encoder_set_source_interval(enc, interval_us);
    for (guint i = 0; i < n; i++) {
        QsVideoFrame f = { 0 };

        if (smooth) {
            for (guint y = 0; y < H; y++) {
                for (guint x = 0; x < W; x++) {
                    uint8_t *px = buf + y * STRIDE + x * 4;

                    px[0] = (uint8_t)((x + i) * 255 / (W + n));
                    px[1] = (uint8_t)(y * 255 / H);
                    px[2] = 128;
                    px[3] = 0;
                }
            }
        } else {
            vt_draw(VT_HEAVY, i, buf, STRIDE, W, H, rand);
        }
        gboolean ok = qs_video_encoder_encode(enc, buf, STRIDE, FALSE, &f, &error);

        g_assert_no_error(error);
        g_assert_true(ok);
        if (i >= 10) {
            bytes += g_bytes_get_size(f.data);
            *starved += f.starved;
        }
        g_bytes_unref(f.data);
    }
    g_rand_free(rand);
    return (double)bytes / (n - 10);
}

/* By quality, the link as ceiling: a smooth moving picture costs a small
 * part of the ceiling, noise is held under it, and the ceiling is spread
 * over the source's frame interval (qemu's rate), not over 1/fps. */
static void test_h264_crf(void)
{
    const uint32_t ceiling = 4000000;
    double nominal = ceiling / 8.0 / 30;
    guint smooth_starved = 0, noise_starved = 0, slow_starved = 0, low_starved = 0;
    double smooth = crf_average(TRUE, ceiling, 25, 33333, &smooth_starved);
    double noise = crf_average(FALSE, ceiling, 25, 33333, &noise_starved);
    double noise_10fps = crf_average(FALSE, ceiling, 25, 100000, &slow_starved);
    /* A quarter of the ceiling: per pixel, 640x480 noise under 4 Mbit/s. */
    double noise_low = crf_average(FALSE, ceiling / 4, 25, 33333, &low_starved);
    g_autoptr(GError) error = NULL;

    g_test_message("ceiling %.0f B/frame at 30 fps: smooth %.0f, noise %.0f, "
                   "noise at 10 fps %.0f, noise under a quarter of the ceiling %.0f; "
                   "starved of 50: %u, %u, %u, %u", nominal, smooth, noise, noise_10fps,
                   noise_low, smooth_starved, noise_starved, slow_starved, low_starved);
    /* The smooth picture reaches CRF 25; noise under a ceiling that gives
     * each pixel what 640x480 gets at 4 Mbit/s is far from it, every frame. */
    g_assert_cmpuint(smooth_starved, ==, 0);
    g_assert_cmpuint(low_starved, ==, 50);
    g_assert_cmpfloat(smooth, <, nominal / 4);
    g_assert_cmpfloat(noise, <, nominal * 1.3);
    g_assert_cmpfloat(noise, >, nominal * 0.5);
    g_assert_cmpfloat(noise_10fps, >, nominal * 1.5);
    g_assert_cmpfloat(noise_10fps, <, nominal * 3 * 1.3);
    /* A CRF beyond H.264's QP range is refused. */
    g_assert_null(qs_video_encoder_new(QS_VIDEO_CODEC_H264, W, H, 30, ceiling, 52, &error));
    g_assert_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_INVALID);
}

/* A flush after every frame (a stream at a lowered frame rate) shares the
 * ceiling with its frame: noise frames stay at the ceiling's frame size,
 * not at twice it, though each flush refills x264's VBV. */
static void test_h264_flush_shares_budget(void)
{
    const uint32_t ceiling = 2000000;
    double nominal = ceiling / 8.0 / 30;
    g_autoptr(GError) error = NULL;
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_H264, W, H, 30,
                                                         ceiling, 25, &error);
    g_autofree uint8_t *buf = g_malloc(STRIDE * H);
    GRand *rand = g_rand_new_with_seed(13);
    uint64_t frames = 0, flushes = 0;
    const guint n = 60;

    g_assert_no_error(error);
    g_assert_true(qs_video_encoder_needs_flush(enc));
    for (guint i = 0; i < n; i++) {
        QsVideoFrame f = { 0 }, fl = { 0 };

        vt_draw(VT_HEAVY, i, buf, STRIDE, W, H, rand);
        g_assert_true(qs_video_encoder_encode(enc, buf, STRIDE, FALSE, &f, &error));
        g_assert_no_error(error);
        g_assert_true(qs_video_encoder_flush(enc, &fl, &error));
        g_assert_no_error(error);
        if (i >= 10) {
            frames += g_bytes_get_size(f.data);
            flushes += g_bytes_get_size(fl.data);
        }
        g_bytes_unref(f.data);
        g_bytes_unref(fl.data);
    }
    g_test_message("ceiling %.0f B/frame at 30 fps: frames %.0f, flushes %.0f", nominal,
                   (double)frames / (n - 10), (double)flushes / (n - 10));
    g_assert_cmpfloat((double)frames / (n - 10), <, nominal * 1.3);
    g_assert_cmpfloat((double)frames / (n - 10), >, nominal * 0.5);
    g_assert_cmpfloat((double)flushes / (n - 10), <, nominal * 0.1);
    g_rand_free(rand);
}

/* MJPEG frames are keyframes that TurboJPEG decodes to the source, and
 * the quality follows the budget down for noise. */
static void test_mjpeg(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_MJPEG, W, H,
                                                         30, 1000000, 0, &error);
    g_autofree uint8_t *buf = g_malloc(STRIDE * H);
    g_autofree uint8_t *dec = g_malloc(W * 4 * H);
    GRand *rand = g_rand_new_with_seed(5);
    tjhandle tj = tjInitDecompress();
    gsize first = 0, last = 0;

    g_assert_no_error(error);
    for (guint i = 0; i < 20; i++) {
        QsVideoFrame f = { 0 };
        const uint8_t *jpeg;
        gsize len;
        int w = 0, h = 0, samp = -1, cs = -1;
        double se = 0;

        vt_draw(i < 10 ? VT_BUSY : VT_HEAVY, i, buf, STRIDE, W, H, rand);
        g_assert_true(qs_video_encoder_encode(enc, buf, STRIDE, FALSE, &f, &error));
        g_assert_true(f.keyframe);
        jpeg = g_bytes_get_data(f.data, &len);
        g_assert_cmpint(tjDecompressHeader3(tj, jpeg, len, &w, &h, &samp, &cs), ==, 0);
        g_assert_cmpint(w, ==, W);
        g_assert_cmpint(h, ==, H);
        g_assert_cmpint(tjDecompress2(tj, jpeg, len, dec, W, W * 4, H, TJPF_BGRX, 0),
                        ==, 0);
        if (i < 10) {
            for (guint y = 0; y < H; y++) {
                for (guint x = 0; x < W * 4; x++) {
                    if (x % 4 != 3) {
                        double d = (double)buf[STRIDE * y + x] - dec[W * 4 * y + x];

                        se += d * d;
                    }
                }
            }
            g_assert_cmpfloat(10 * log10(255.0 * 255 / (se / (W * H * 3))), >, 25.0);
        }
        if (i == 10) {
            first = len;
        }
        last = len;
        g_bytes_unref(f.data);
    }
    g_test_message("noise frames: first %zu B, last %zu B (budget %u)", first, last,
                   1000000 / 8 / 30);
    g_assert_cmpuint(last, <, first);
    tjDestroy(tj);
    g_rand_free(rand);
}

/* MJPEG with a quality target: noise under a small ceiling walks the
 * ladder to half the target and below, and says so; a busy picture under
 * a large one stays at the target, fed. */
static void test_mjpeg_starved(void)
{
    static const struct { int content; uint32_t ceiling; gboolean starved; } runs[] = {
        { VT_BUSY, 20000000, FALSE },
        { VT_HEAVY, 500000, TRUE },
    };

    for (guint r = 0; r < G_N_ELEMENTS(runs); r++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(QsVideoEncoder) enc = qs_video_encoder_new(QS_VIDEO_CODEC_MJPEG, W, H, 30,
                                                             runs[r].ceiling, 80, &error);
        g_autofree uint8_t *buf = g_malloc(STRIDE * H);
        GRand *rand = g_rand_new_with_seed(5);
        guint starved = 0;

        g_assert_no_error(error);
        for (guint i = 0; i < 30; i++) {
            QsVideoFrame f = { 0 };

            vt_draw(runs[r].content, i, buf, STRIDE, W, H, rand);
            g_assert_true(qs_video_encoder_encode(enc, buf, STRIDE, FALSE, &f, &error));
            starved += i >= 20 && f.starved;
            g_bytes_unref(f.data);
        }
        g_test_message("run %u: %u of the last 10 frames starved", r, starved);
        g_assert_cmpuint(starved, ==, runs[r].starved ? 10 : 0);
        g_rand_free(rand);
    }
}

static void test_invalid(void)
{
    static const struct { int codec; uint32_t w, h, fps; } bad[] = {
        { QS_VIDEO_CODEC_H264, 321, 240, 30 },  /* odd */
        { QS_VIDEO_CODEC_H264, 8, 8, 30 },      /* too small */
        { QS_VIDEO_CODEC_H264, 8192, 240, 30 }, /* too big */
        { QS_VIDEO_CODEC_MJPEG, 320, 240, 0 },
        { QS_VIDEO_CODEC_MJPEG, 320, 240, 61 },
        { 2, 320, 240, 30 },                    /* VP8: not built */
    };

    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        QsVideoEncoder *enc = qs_video_encoder_new(bad[i].codec, bad[i].w, bad[i].h,
                                                   bad[i].fps, 1000000, 0, &error);
        int want = bad[i].codec == 2 ? QS_VIDEO_ERROR_UNSUPPORTED
                                     : QS_VIDEO_ERROR_INVALID;

        g_assert_null(enc);
        g_assert_error(error, QS_VIDEO_ERROR, want);
    }
    g_assert_cmpstr(qs_video_codec_name(QS_VIDEO_CODEC_H264), ==, "h264");
    g_assert_cmpstr(qs_video_codec_name(QS_VIDEO_CODEC_MJPEG), ==, "mjpeg");
}

/* The converter against the BT.601 full-range formulas: luma exactly the
 * integer rounding below, chroma within one step of the exact 2x2 sum
 * (libyuv rounds the block's average before the matrix), both within
 * 1-1.5 steps of the real-valued result. 70 px = SIMD blocks and a tail
 * for any vector width libyuv picks; the first rows hold the extremes. */
static void test_i420(void)
{
    const uint32_t w = 70, h = 22;
    g_autofree uint8_t *buf = g_malloc((size_t)w * 4 * h);
    g_autofree uint8_t *y = g_malloc(w * h);
    g_autofree uint8_t *u = g_malloc(w * h / 4);
    g_autofree uint8_t *v = g_malloc(w * h / 4);
    GRand *rand = g_rand_new_with_seed(11);

    for (size_t i = 0; i < (size_t)w * 4 * h; i++) {
        buf[i] = (uint8_t)g_rand_int(rand);
    }
    memset(buf, 0xff, w * 4);                   /* white row */
    memset(buf + w * 4, 0, w * 4);              /* black row */
    for (uint32_t x = 0; x < w; x++) {          /* saturated colours */
        buf[w * 8 + 4 * x + x % 3] = 255;
        buf[w * 8 + 4 * x + (x + 1) % 3] = 0;
        buf[w * 8 + 4 * x + (x + 2) % 3] = 0;
    }
    qs_video_bgrx_to_i420(buf, w * 4, w, h, y, w, u, v, w / 2);
    for (uint32_t j = 0; j < h; j++) {
        for (uint32_t i = 0; i < w; i++) {
            const uint8_t *p = buf + (size_t)w * 4 * j + 4 * i;
            double ry = 0.299 * p[2] + 0.587 * p[1] + 0.114 * p[0];
            int iy = (77 * p[2] + 150 * p[1] + 29 * p[0] + 128) >> 8;

            g_assert_cmpint(y[w * j + i], ==, iy);
            g_assert_cmpfloat(fabs(ry - y[w * j + i]), <=, 1.0);
        }
    }
    for (uint32_t j = 0; j < h / 2; j++) {
        for (uint32_t i = 0; i < w / 2; i++) {
            int r = 0, g = 0, b = 0;
            double ru, rv;

            for (int k = 0; k < 4; k++) {
                const uint8_t *p = buf + (size_t)w * 4 * (2 * j + k / 2) + 4 * (2 * i + k % 2);

                b += p[0];
                g += p[1];
                r += p[2];
            }
            int eu = MIN(((-43 * r - 85 * g + 128 * b + 512) >> 10) + 128, 255);
            int ev = MIN(((128 * r - 107 * g - 21 * b + 512) >> 10) + 128, 255);

            g_assert_cmpint(abs(u[w / 2 * j + i] - eu), <=, 1);
            g_assert_cmpint(abs(v[w / 2 * j + i] - ev), <=, 1);
            ru = MIN(128 + (-0.168736 * r - 0.331264 * g + 0.5 * b) / 4, 255);
            rv = MIN(128 + (0.5 * r - 0.418688 * g - 0.081312 * b) / 4, 255);
            g_assert_cmpfloat(fabs(ru - u[w / 2 * j + i]), <=, 1.5);
            g_assert_cmpfloat(fabs(rv - v[w / 2 * j + i]), <=, 1.5);
        }
    }
    g_rand_free(rand);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/video/i420", test_i420);
    g_test_add_func("/encode/video/invalid", test_invalid);
    g_test_add_func("/encode/video/h264-structure", test_h264_structure);
    g_test_add_func("/encode/video/h264-decode", test_h264_decode);
    g_test_add_func("/encode/video/h264-bitrate", test_h264_bitrate);
    g_test_add_func("/encode/video/h264-crf", test_h264_crf);
    g_test_add_func("/encode/video/h264-flush-shares-budget", test_h264_flush_shares_budget);
    g_test_add_func("/encode/video/mjpeg", test_mjpeg);
    g_test_add_func("/encode/video/mjpeg-starved", test_mjpeg_starved);
    return g_test_run();
}
