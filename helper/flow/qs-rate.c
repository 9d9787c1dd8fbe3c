/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's rate decisions: a picture-quality target, the link's share as its ceiling. */
#include "flow/qs-rate.h"

int qs_rate_stream_quality(gboolean h264)
{
    return h264 ? QS_RATE_H264_CRF : QS_RATE_MJPEG_QUALITY;
}

uint32_t qs_rate_stream_ceiling(uint64_t link_bytes_per_s, guint n_streams, uint32_t rate_pct,
                                uint32_t min_bps, uint32_t max_bps)
{
    uint64_t bps = link_bytes_per_s * 8 * QS_RATE_STREAM_LINK_SHARE_PCT / 100;

    bps = bps / MAX(n_streams, 1) * MIN(rate_pct, 100) / 100;
    return (uint32_t)CLAMP(bps, min_bps, MAX(min_bps, max_bps));
}

uint32_t qs_rate_frame_bytes(uint32_t ceiling_bps, uint32_t fps, int64_t source_interval_us)
{
    int64_t interval = G_USEC_PER_SEC / MAX(fps, 1);
    int64_t dt = source_interval_us <= 0
                     ? interval
                     : CLAMP(source_interval_us, interval, QS_RATE_FRAME_MAX_INTERVALS * interval);

    return (uint32_t)((uint64_t)ceiling_bps * (uint64_t)dt / 8 / G_USEC_PER_SEC);
}

int64_t qs_rate_source_interval(int64_t avg_us, int64_t dt_us)
{
    if (dt_us < QS_RATE_SAME_PICTURE_US) {
        return avg_us;
    }
    dt_us = MIN(dt_us, G_USEC_PER_SEC);
    return avg_us > 0 ? (avg_us * 7 + dt_us) / 8 : dt_us;
}

int qs_rate_jpeg_next(int quality, uint64_t bytes, uint64_t link_bytes_per_s)
{
    uint64_t us = bytes * G_USEC_PER_SEC / MAX(link_bytes_per_s, 1);

    quality = CLAMP(quality, QS_RATE_JPEG_FLOOR, QS_RATE_JPEG_TARGET);
    if (us > QS_RATE_JPEG_IMAGE_US) {
        return MAX(QS_RATE_JPEG_FLOOR, quality - QS_RATE_JPEG_STEP_DOWN);
    }
    if (us < QS_RATE_JPEG_IMAGE_US / 4) {
        return MIN(QS_RATE_JPEG_TARGET, quality + QS_RATE_JPEG_STEP_UP);
    }
    return quality;
}
