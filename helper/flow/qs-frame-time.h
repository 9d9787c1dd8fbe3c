/* SPDX-License-Identifier: GPL-2.0-or-later */
/* How far past now a video frame is stamped, learnt from the margins the client reports. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * spice-gtk judges a stream frame by its multimedia time T against its own
 * clock C (the MAIN_INIT value plus the time since that message arrived):
 * on arrival, T < C is "too late" (counted as a drop, MJPEG discarded);
 * after decoding, a frame whose T has passed is discarded when a newer
 * decoded frame already waits; a frame with T ahead is held until C = T.
 * The margin T - C on arrival is what the client reports per frame when
 * STREAM_ACTIVATE_REPORT asks for a window of one frame
 * (QS_FRAME_TIME_REPORT_WINDOW).
 *
 * A frame is stamped T = S + lead, S the server's mm-time now. Each report
 * tells y = T - S - margin: how long, in the client's clock, the frame took
 * from stamping to arrival (its delivery, less the main channel's one-way
 * delay that C lags S by). The caller's delivery estimate x (bytes ahead
 * of the frame's last byte over the estimated bandwidth) is mostly right
 * in shape but not in scale: behind a 2 Mbit tbf the bandwidth estimate
 * read 2.6-2.9 Mbit/s while frames drained at ~1.5 (5.2 ms per KB), so
 * large frames came late; unshaped, before the client's rate was known,
 * the 1 Mbit/s guess put 360-530 ms on frames that took a few ms, and any
 * scale above 0 made the hold follow the frame's size. The last QS_FRAME_TIME_WINDOW reports are fitted
 * as y = a + b x (b by least squares within [0, 4], a the median of
 * y - b x); the lead is
 *    a + b x + offset + hold + QS_FRAME_TIME_GUARD_MS,
 *    offset = the largest y - (a + b x) among those reports, but at most
 *             QS_FRAME_TIME_SPREAD_MAX_MS above the median one,
 * so every frame like those seen recently arrives at least hold + guard
 * ahead of its time, and the client's extra hold is the spread of the
 * fit's residuals (measured: median hold 37-45 ms beyond hold + guard),
 * never a fixed 400 ms (spice-server's). A rarer spike (a frame behind a
 * megabyte of images the client decodes first) is let be late rather than
 * held against for seconds. A late frame raises the offset at once; a spike is
 * forgotten once QS_FRAME_TIME_WINDOW newer frames were reported. Before
 * QS_FRAME_TIME_FIT_MIN reports, or when x hardly varies, b is 1.
 *
 * `hold` is the caller's: for H.264 one frame interval, because spice-gtk's
 * h264parse decodes frame N only when frame N+1 arrives (qs-video.h); a
 * frame still ahead of its time when decoded is shown on time, one already
 * late is dropped if a newer one is decoded meanwhile. That hold costs no
 * latency (the frame could not be shown sooner); for MJPEG it is 0.
 */

#define QS_FRAME_TIME_REPORT_WINDOW 1     /* frames per STREAM_REPORT */
#define QS_FRAME_TIME_WINDOW 128          /* reports the offset looks back on (~4 s at 30 fps) */
#define QS_FRAME_TIME_SENT 64             /* frames awaiting their report */
#define QS_FRAME_TIME_GUARD_MS 5
#define QS_FRAME_TIME_INITIAL_OFFSET_MS 0
#define QS_FRAME_TIME_MAX_MS 2000         /* bound on offset and lead */
#define QS_FRAME_TIME_FIT_MIN 16          /* reports before the scale is fitted */
/* The offset covers residuals up to this far above the median one: the
 * spread measured behind a 2 Mbit tbf was 45-65 ms. */
#define QS_FRAME_TIME_SPREAD_MAX_MS 80

typedef struct QsFrameTime QsFrameTime;

QsFrameTime *qs_frame_time_new(void);
void qs_frame_time_free(QsFrameTime *ft);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsFrameTime, qs_frame_time_free)

/* Milliseconds past now to stamp a frame with whose delivery the caller
 * estimates at `delivery_ms`: within [0, QS_FRAME_TIME_MAX_MS]. */
uint32_t qs_frame_time_lead(const QsFrameTime *ft, uint32_t delivery_ms, uint32_t hold_ms);

/* Frame `stamp` of stream `id` went out `lead_ms` ahead of now (the stamp
 * the caller made, which may differ from qs_frame_time_lead()'s), with the
 * delivery estimate `delivery_ms`. */
void qs_frame_time_sent(QsFrameTime *ft, uint32_t id, uint32_t stamp, int32_t lead_ms,
                        uint32_t delivery_ms);

/* The client saw frame `stamp` of stream `id` with `margin` ms (a one-frame
 * STREAM_REPORT: end_frame_mm_time, last_frame_delay). FALSE for a frame
 * not (or no longer) known, which teaches nothing. */
gboolean qs_frame_time_report(QsFrameTime *ft, uint32_t id, uint32_t stamp, int32_t margin);

/* The learnt offset (ms, may be negative), the fitted scale of the
 * delivery estimate (1/1000), and reports used (statistics). */
int32_t qs_frame_time_offset(const QsFrameTime *ft);
int32_t qs_frame_time_scale_milli(const QsFrameTime *ft);
uint64_t qs_frame_time_reports(const QsFrameTime *ft);

/* Server multimedia clock, ms (wraps after 49 days, as SPICE's does). */
uint32_t qs_mm_time_from_monotonic(int64_t monotonic_us);
/* The stamp of a stream's next frame, made at `now`: `wanted`, but at least
 * the previous stamp `last` (0: none yet), made at `last_now`, plus half
 * the time since; never 0. */
uint32_t qs_stream_stamp_next(uint32_t last, uint32_t last_now, uint32_t now,
                              uint32_t wanted);
