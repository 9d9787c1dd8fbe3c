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

/* The time a frame's budget spreads the ceiling over. */
static int64_t frame_span_us(uint32_t fps, int64_t source_interval_us)
{
    int64_t interval = G_USEC_PER_SEC / MAX(fps, 1);

    return source_interval_us <= 0
               ? interval
               : CLAMP(source_interval_us, interval, QS_RATE_FRAME_MAX_INTERVALS * interval);
}

uint32_t qs_rate_frame_bytes(uint32_t ceiling_bps, uint32_t fps, int64_t source_interval_us)
{
    int64_t dt = frame_span_us(fps, source_interval_us);

    return (uint32_t)((uint64_t)ceiling_bps * (uint64_t)dt / 8 / G_USEC_PER_SEC);
}

uint32_t qs_rate_starved_ceiling(uint64_t link_bytes_per_s, uint32_t fps,
                                 int64_t source_interval_us)
{
    uint64_t frame = link_bytes_per_s * QS_RATE_STARVED_FRAME_US / G_USEC_PER_SEC;
    uint64_t bps = frame * 8 * G_USEC_PER_SEC / (uint64_t)frame_span_us(fps, source_interval_us);

    return (uint32_t)MIN(bps, G_MAXUINT32);
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

QsRateVerdict qs_rate_frame_verdict(gboolean starved, uint64_t bytes, uint32_t fps, guint div,
                                    int64_t source_interval_us, uint64_t link_bytes_per_s,
                                    gboolean link_known)
{
    int64_t read_us = (int64_t)(G_USEC_PER_SEC / MAX(fps, 1)) * div;
    /* A frame is read at most every read_us, and never more often than
     * qemu changes the picture. */
    uint64_t per_s = bytes * G_USEC_PER_SEC / (uint64_t)MAX(source_interval_us, read_us);
    uint64_t share = link_bytes_per_s * QS_RATE_STREAM_TARGET_SHARE_PCT / 100;

    if (starved || (link_known && per_s > share)) {
        return QS_RATE_FIT_LOWER;
    }
    return per_s * 2 <= share ? QS_RATE_FIT_RAISE : QS_RATE_FIT_HOLD;
}

gboolean qs_rate_fit_frame(QsRateFit *fit, QsRateVerdict verdict)
{
    fit->lower_run = verdict == QS_RATE_FIT_LOWER ? fit->lower_run + 1 : 0;
    fit->raise_run = verdict == QS_RATE_FIT_RAISE ? fit->raise_run + 1 : 0;
    if (fit->lower_run >= QS_RATE_LOWER_RUN && qs_rate_fit_div(fit) < QS_RATE_FPS_DIV_MAX) {
        fit->halvings++;
    } else if (fit->raise_run >= QS_RATE_RAISE_RUN && fit->halvings > 0) {
        fit->halvings--;
    } else {
        return FALSE;
    }
    fit->lower_run = fit->raise_run = 0;
    return TRUE;
}
