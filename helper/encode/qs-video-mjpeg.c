/* SPDX-License-Identifier: GPL-2.0-or-later */
/* MJPEG video backend: one TurboJPEG frame per STREAM_DATA, quality steered by the frame budget. */
#include "encode/qs-enc-jpeg.h"
#include "encode/qs-video.h"
#include "encode/qs-video-private.h"

#include <turbojpeg.h>

/*
 * For clients without MULTI_CODEC/CODEC_H264 (spice-protocol.md §3.5).
 * spice-gtk decodes each frame on its own, so every frame is a keyframe and
 * the only rate control is the quality: after each frame, compare its size
 * with the budget (bitrate / fps) and step along a ladder, as spice-server's
 * mjpeg-encoder does with {20..80} (§8.2). Frames stay 4:2:0: 4:4:4 only
 * pays off for still text, which is not streamed.
 * With a quality target the ladder stops there, and the budget is the bit
 * rate (then a ceiling) over the source's frame interval: frames come at
 * qemu's rate, not at the nominal fps.
 */

static const int quality_ladder[] = { 10, 20, 30, 40, 50, 60, 70, 80, 85 };
#define LADDER_LEN ((int)G_N_ELEMENTS(quality_ladder))
#define START_STEP 4            /* quality 50 until the first sizes are known */

typedef struct {
    tjhandle tj;
    int step;                   /* index into quality_ladder */
} QsMjpeg;

static gboolean mjpeg_init(QsVideoEncoder *enc, GError **error)
{
    QsMjpeg *m = g_new0(QsMjpeg, 1);

    m->tj = tjInitCompress();
    if (!m->tj) {
        g_free(m);
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "cannot create a TurboJPEG compressor");
        return FALSE;
    }
    m->step = START_STEP;
    enc->priv = m;
    return TRUE;
}

/* One step per frame: a frame is 33 ms at 30 fps, so the ladder is crossed
 * in well under a second, and a single odd frame cannot swing it far. */
static void steer(QsMjpeg *m, size_t size, uint64_t budget)
{
    if (size > budget + budget / 8 && m->step > 0) {
        m->step--;
    } else if (size < budget * 5 / 8 && m->step < LADDER_LEN - 1) {
        m->step++;
    }
}

static gboolean mjpeg_encode(QsVideoEncoder *enc, const uint8_t *pixels,
                             size_t stride, gboolean force_keyframe,
                             QsVideoFrame *frame, GError **error)
{
    QsMjpeg *m = enc->priv;
    QsPixelRect rect = { pixels, stride, enc->width, enc->height };
    GByteArray *out = g_byte_array_new();
    /* The source's interval, 1 to 4 nominal ones (qs-video.h). */
    int64_t nominal = G_USEC_PER_SEC / enc->fps;
    int64_t dt = CLAMP(enc->source_interval_us, nominal, 4 * nominal);
    uint64_t budget = enc->quality ? (uint64_t)enc->bitrate * (uint64_t)dt / 8u / G_USEC_PER_SEC
                                   : enc->bitrate / 8u / enc->fps;
    int top = enc->quality ? enc->quality : QS_VIDEO_MAX_QUALITY;
    int used = MIN(MIN(quality_ladder[m->step], top), (int)QS_JPEG_QUALITY_444 - 1);

    (void)force_keyframe;       /* every frame is one */
    if (!qs_enc_jpeg_compress(m->tj, &rect, used, out)) {
        g_byte_array_unref(out);
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_FAILED,
                    "TurboJPEG failed: %s", tjGetErrorStr2(m->tj));
        return FALSE;
    }
    steer(m, out->len, budget);
    /* No step above the target: it would not show, and coming down from
     * there would cost frames over budget. */
    while (m->step > 0 && quality_ladder[m->step - 1] >= top) {
        m->step--;
    }
    frame->data = g_byte_array_free_to_bytes(out);
    frame->keyframe = TRUE;
    frame->starved = enc->quality > 0 && used <= enc->quality / 2;
    return TRUE;
}

static void mjpeg_set_bitrate(QsVideoEncoder *enc)
{
    (void)enc;                  /* steer() reads enc->bitrate each frame */
}

static void mjpeg_fini(QsVideoEncoder *enc)
{
    QsMjpeg *m = enc->priv;

    tjDestroy(m->tj);
    g_free(m);
}

const QsVideoBackend qs_video_mjpeg_backend = {
    .init = mjpeg_init,
    .encode = mjpeg_encode,
    .set_bitrate = mjpeg_set_bitrate,
    .flush = NULL,              /* spice-gtk decodes each JPEG on arrival */
    .fini = mjpeg_fini,
};
