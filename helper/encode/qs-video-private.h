/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The backend table behind QsVideoEncoder (encode layer only). */
#pragma once

#include "encode/qs-video.h"

/* A backend keeps its state behind `priv`; qs-video.c checks the arguments
 * and the bounds before any backend function runs. */
typedef struct {
    gboolean (*init)(QsVideoEncoder *enc, GError **error);
    gboolean (*encode)(QsVideoEncoder *enc, const uint8_t *pixels, size_t stride,
                       gboolean force_keyframe, QsVideoFrame *frame,
                       GError **error);
    void (*set_bitrate)(QsVideoEncoder *enc);
    /* NULL: the client shows each frame as it arrives. */
    gboolean (*flush)(QsVideoEncoder *enc, QsVideoFrame *frame, GError **error);
    void (*fini)(QsVideoEncoder *enc);
} QsVideoBackend;

struct QsVideoEncoder {
    const QsVideoBackend *backend;
    QsVideoCodec codec;
    uint32_t width, height, fps;
    uint32_t bitrate;           /* bit/s, within the bounds: target, or ceiling */
    int quality;                /* 0: the bit rate is the target */
    int64_t source_interval_us; /* set_source_interval(); 0: 1/fps */
    uint64_t frames;            /* encoded so far */
    void *priv;
};

extern const QsVideoBackend qs_video_x264_backend;
extern const QsVideoBackend qs_video_mjpeg_backend;
