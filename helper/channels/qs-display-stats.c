/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's session summary, logged when the client goes. */
#include "channels/qs-display-private.h"

void qs_display_stats_log(QsDisplayChannel *dc)
{
    const QsDisplayStats *st = &dc->stats;
    const QsPlanStats *ps = qs_display_plan_stats(dc->plan);
    const QsBwe *bwe = qs_display_plan_bwe(dc->plan);
    int64_t dur = g_get_monotonic_time() - st->start_us;
    int64_t lag_mean = -1, lag_p95 = -1;
    double secs = MAX((double)dur / G_USEC_PER_SEC, 0.001);

    if (!qs_channel_ack_lag(&dc->base, &lag_mean, &lag_p95)) {
        lag_mean = lag_p95 = -1;
    }
    g_message("display session: %.1f s, %" G_GUINT64_FORMAT " bytes (%.2f Mbit/s), "
              "%" G_GUINT64_FORMAT " messages; images bitmap %" G_GUINT64_FORMAT
              " lz %" G_GUINT64_FORMAT " lz4 %" G_GUINT64_FORMAT " jpeg %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT
              " bytes), lossless repairs %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " from another viewer's; streams %" G_GUINT64_FORMAT
              ", frames %" G_GUINT64_FORMAT " (%" G_GUINT64_FORMAT " bytes, %" G_GUINT64_FORMAT
              " flushes, %" G_GUINT64_FORMAT " from a shared encoder, %" G_GUINT64_FORMAT " skipped at source, client drops %" G_GUINT64_FORMAT ", %" G_GUINT64_FORMAT " starved, frame rate halved %" G_GUINT64_FORMAT " times); ACK lag mean %" G_GINT64_FORMAT
              " ms p95 %" G_GINT64_FORMAT " ms; RTT min %u ms srtt %u ms; bandwidth %.2f Mbit/s; "
              "pumps %" G_GUINT64_FORMAT " (%.1f/s), heat snapshots %" G_GUINT64_FORMAT,
              secs, st->bytes_written, (double)st->bytes_written * 8 / secs / 1e6,
              st->messages, st->images[QS_IMAGE_CODEC_BITMAP], st->images[QS_IMAGE_CODEC_LZ],
              st->images[QS_IMAGE_CODEC_LZ4],
              st->images[QS_IMAGE_CODEC_JPEG], st->image_bytes, ps->repairs, st->shared_images, ps->streams,
              st->frames, st->frame_bytes, st->flushes, st->shared_frames, ps->frames_skipped, ps->client_drops,
              ps->frames_starved, ps->rate_halvings,
              lag_mean < 0 ? -1 : lag_mean / 1000, lag_p95 < 0 ? -1 : lag_p95 / 1000,
              qs_bwe_min_rtt_us(bwe) / 1000, qs_bwe_srtt_us(bwe) / 1000,
              (double)qs_bwe_bandwidth(bwe) * 8 / 1e6,
              st->pumps, (double)st->pumps / secs, st->heat_snapshots);
}
