/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsVideoEncoder: argument checks and the codec switch over the backends
 * (qs-video-private.h); what the backends share is below them, in
 * qs-video-convert.c. */
#include "encode/qs-video.h"
#include "encode/qs-video-private.h"

static gint encoders_alive;

static uint32_t clamp_bitrate(uint32_t bps)
{
    return CLAMP(bps, QS_VIDEO_MIN_BITRATE, QS_VIDEO_MAX_BITRATE);
}

QsVideoEncoder *qs_video_encoder_new(QsVideoCodec codec, uint32_t width,
                                     uint32_t height, uint32_t fps,
                                     uint32_t bitrate_bps, int quality,
                                     GError **error)
{
    const QsVideoBackend *backend;
    QsVideoEncoder *enc;

    switch (codec) {
    case QS_VIDEO_CODEC_H264:
        backend = &qs_video_x264_backend;
        break;
    case QS_VIDEO_CODEC_MJPEG:
        backend = &qs_video_mjpeg_backend;
        break;
    default:
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_UNSUPPORTED,
                    "video codec %d is not supported", (int)codec);
        return NULL;
    }
    if (width < QS_VIDEO_MIN_SIDE || height < QS_VIDEO_MIN_SIDE ||
        width > QS_VIDEO_MAX_SIDE || height > QS_VIDEO_MAX_SIDE ||
        (width | height) & 1) {
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_INVALID,
                    "video size %ux%u must be even and %u..%u", width, height,
                    QS_VIDEO_MIN_SIDE, QS_VIDEO_MAX_SIDE);
        return NULL;
    }
    if (fps == 0 || fps > QS_VIDEO_MAX_FPS) {
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_INVALID,
                    "video frame rate %u is not 1..%u", fps, QS_VIDEO_MAX_FPS);
        return NULL;
    }

    if (quality < 0 || quality > (codec == QS_VIDEO_CODEC_H264 ? 51 : QS_VIDEO_MAX_QUALITY)) {
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_INVALID,
                    "video quality %d is not 0..%d for %s", quality,
                    codec == QS_VIDEO_CODEC_H264 ? 51 : QS_VIDEO_MAX_QUALITY,
                    qs_video_codec_name(codec));
        return NULL;
    }

    enc = g_new0(QsVideoEncoder, 1);
    enc->backend = backend;
    enc->codec = codec;
    enc->width = width;
    enc->height = height;
    enc->fps = fps;
    enc->bitrate = clamp_bitrate(bitrate_bps);
    enc->quality = quality;
    if (!backend->init(enc, error)) {
        g_free(enc);
        return NULL;
    }
    g_atomic_int_inc(&encoders_alive);
    return enc;
}

guint qs_video_encoders_alive(void)
{
    return (guint)g_atomic_int_get(&encoders_alive);
}

void qs_video_encoder_free(QsVideoEncoder *enc)
{
    if (!enc) {
        return;
    }
    enc->backend->fini(enc);
    g_free(enc);
    g_atomic_int_add(&encoders_alive, -1);
}

gboolean qs_video_encoder_encode(QsVideoEncoder *enc, const uint8_t *pixels,
                                 size_t stride, gboolean force_keyframe,
                                 QsVideoFrame *frame, GError **error)
{
    g_return_val_if_fail(enc && pixels && frame, FALSE);
    g_return_val_if_fail(stride >= (size_t)enc->width * 4, FALSE);

    if (!enc->backend->encode(enc, pixels, stride,
                              force_keyframe || enc->frames == 0, frame, error)) {
        return FALSE;
    }
    enc->frames++;
    return TRUE;
}

void qs_video_encoder_set_source_interval(QsVideoEncoder *enc, int64_t interval_us)
{
    enc->source_interval_us = MAX(interval_us, 0);
}

gboolean qs_video_encoder_needs_flush(const QsVideoEncoder *enc)
{
    return enc->backend->flush != NULL;
}

gboolean qs_video_encoder_flush(QsVideoEncoder *enc, QsVideoFrame *frame,
                                GError **error)
{
    g_return_val_if_fail(enc && frame, FALSE);

    if (!enc->backend->flush || enc->frames == 0) {
        g_set_error(error, QS_VIDEO_ERROR, QS_VIDEO_ERROR_INVALID,
                    "nothing to flush");
        return FALSE;
    }
    if (!enc->backend->flush(enc, frame, error)) {
        return FALSE;
    }
    enc->frames++;
    return TRUE;
}

void qs_video_encoder_set_bitrate(QsVideoEncoder *enc, uint32_t bitrate_bps)
{
    uint32_t bps = clamp_bitrate(bitrate_bps);

    if (bps != enc->bitrate) {
        enc->bitrate = bps;
        enc->backend->set_bitrate(enc);
    }
}

uint32_t qs_video_encoder_get_bitrate(const QsVideoEncoder *enc)
{
    return enc->bitrate;
}

int qs_video_encoder_get_quality(const QsVideoEncoder *enc)
{
    return enc->quality;
}

QsVideoCodec qs_video_encoder_get_codec(const QsVideoEncoder *enc)
{
    return enc->codec;
}

const char *qs_video_codec_name(QsVideoCodec codec)
{
    switch (codec) {
    case QS_VIDEO_CODEC_MJPEG:
        return "mjpeg";
    case QS_VIDEO_CODEC_H264:
        return "h264";
    }
    return "unknown";
}
