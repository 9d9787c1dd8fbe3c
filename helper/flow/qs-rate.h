/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's rate decisions: a picture-quality target, the link's share as its ceiling. */
#pragma once

#include <glib.h>
#include <stdint.h>

/*
 * Before, a stream's bit rate was the link's share itself (about 11.6
 * Mbit/s on a LAN whether the picture was a smooth gradient or noise), and
 * a still image's JPEG quality followed the link alone. Now the encoder
 * gets a quality to reach and the link's share only bounds it:
 *
 *   H.264   x264's CRF QS_RATE_H264_CRF, with the share as VBV max rate;
 *   MJPEG   JPEG quality up to QS_RATE_MJPEG_QUALITY, stepping down only
 *           when a frame overruns the share (encode/qs-video-mjpeg.c);
 *   images  JPEG quality QS_RATE_JPEG_TARGET, stepped down while lossy
 *           images take longer than QS_RATE_JPEG_IMAGE_US on the link,
 *           back up when they take less than a quarter of it. The lossless
 *           refine follows either way (qs-plan-images.c).
 *
 * Why these targets: CRF 25 is two steps coarser than x264's default of 23,
 * for a picture that is seen for one frame interval and then replaced or
 * refined. On the benchmark's busy guest (docs/performance.md, 2026-12-02)
 * it sent 0.6 Mbit/s, 0.03x to 0.14x spice-server's MJPEG, its frozen
 * frame at 34.4 dB PSNR against the MJPEG's 38.0 (80 ms / 10 Mbit); CRF 22
 * gained 0.5 dB of that for 1.5x the bytes, CRF 20 went over a quarter of
 * spice-server's bytes there. The gap was not the CRF's: most of it was the
 * studio-swing colour space, which spice-gtk's conversion darkens, and the
 * rest ultrafast's settings (encode/qs-video-x264.c); with full range,
 * deblocking and finer chroma the same frame scored 37.0 dB at 0.7 Mbit/s.
 * spice-server's
 * MJPEG ladder tops at 80 (spice-protocol.md §8.2), so ours does too; still
 * images start at 85, the top of the old link rule, since a still image is
 * looked at until its refine.
 */

#define QS_RATE_H264_CRF 25
#define QS_RATE_MJPEG_QUALITY 80
#define QS_RATE_JPEG_TARGET 85
#define QS_RATE_JPEG_FLOOR 40
#define QS_RATE_JPEG_STEP_DOWN 10
#define QS_RATE_JPEG_STEP_UP 5
#define QS_RATE_JPEG_IMAGE_US 100000
/* The share of the link's bandwidth all streams together may use: the rest
 * is the fast lane's and images'. */
#define QS_RATE_STREAM_LINK_SHARE_PCT 60
/* A frame after a pause may be bigger (the VBV refilled), up to this many
 * nominal frame intervals' worth of the ceiling. */
#define QS_RATE_FRAME_MAX_INTERVALS 4

/* The quality target of a new stream: CRF for H.264, top JPEG quality for
 * MJPEG (encode/qs-video.h). */
int qs_rate_stream_quality(gboolean h264);

/* The ceiling of each of `n_streams` streams (bit/s): the streams' share of
 * `link_bytes_per_s`, less what the client's drop reports took off
 * (`rate_pct` of it), within [min_bps, max_bps]. */
uint32_t qs_rate_stream_ceiling(uint64_t link_bytes_per_s, guint n_streams, uint32_t rate_pct,
                                uint32_t min_bps, uint32_t max_bps);

/* What a frame may cost at most (bytes) when the source (qemu) delivers
 * a picture every `source_interval_us`: the ceiling over that interval, at
 * least one nominal interval at `fps`, at most QS_RATE_FRAME_MAX_INTERVALS.
 * <= 0: one nominal interval (not known yet). */
uint32_t qs_rate_frame_bytes(uint32_t ceiling_bps, uint32_t fps, int64_t source_interval_us);

/* Changes closer than this are one picture of qemu's (a frame may come as
 * several updates). */
#define QS_RATE_SAME_PICTURE_US 5000
/* The source's frame interval after a change `dt_us` after the previous
 * picture, from the average so far (0: none): a 1/8 moving average, each
 * sample at most 1 s (a pause is not a frame rate). Samples under
 * QS_RATE_SAME_PICTURE_US leave it as it was. */
int64_t qs_rate_source_interval(int64_t avg_us, int64_t dt_us);

/*
 * A stream whose frames come back starved (encode/qs-video.h: the ceiling
 * held them to at most half the bits the quality target asks for) shows
 * a picture the link cannot carry at a useful quality: the benchmark's
 * heavy noise scored 10.7 to 11.9 dB PSNR whether it had 1.1 or 11.8
 * Mbit/s (docs/performance.md, 2026-12-02). Spending the share on it buys little to see and makes every
 * other update (a keypress's image) wait behind frames that fill the
 * link: heavy noise at 80 ms / 5 Mbit, ~19 KB frames, p95 keypress RTT +
 * 36 ms (docs/performance.md, 2026-12-02). So after QS_RATE_LOWER_RUN
 * starved frames in a row the stream's frame rate halves, down to
 * 1/QS_RATE_FPS_DIV_MAX of the nominal, and while it is lowered a frame
 * may occupy the link for at most QS_RATE_STARVED_FRAME_US
 * (qs_rate_starved_ceiling()): the link has room between frames, and a
 * keypress waits behind at most that much of one. After
 * QS_RATE_RAISE_RUN frames in a row not starved (the picture became
 * simpler, or the link faster) the rate doubles back. What is lowered
 * only ever starves a frame more, so it cannot undo its own cause and
 * flap. The price: a real video the link cannot carry at the target plays
 * at a quarter of its frame rate, its frames coarser; the link's time
 * goes to interaction first.
 */
#define QS_RATE_LOWER_RUN 4
#define QS_RATE_RAISE_RUN 16
#define QS_RATE_FPS_DIV_MAX 4
#define QS_RATE_STARVED_FRAME_US 15000

/*
 * The same lowering holds a stream that reaches its target but would take
 * more than QS_RATE_STREAM_TARGET_SHARE_PCT of the link doing so: the busy
 * guest at CRF 25 is 0.7 Mbit/s, a third of a 2 Mbit/s link, where
 * spice-server's MJPEG took 1.2 (docs/performance.md, 2026-12-02). Each
 * frame keeps its quality; fewer of them go. 15 % is a quarter of the
 * 60 % share spice-server's streams were measured to fill on slow links,
 * which is issue 22's bytes goal, and leaves the link's rest to
 * interaction, repairs and sound. A stream is raised again only when it
 * would still fit at twice its rate, so lowering cannot undo its cause.
 * It lowers only on a rate measured while the link held the helper back
 * (qs_bwe_link_known()): otherwise the estimate is what the helper managed
 * to send, a floor of the link's (on loopback, a sanitizer build's 3.7 to
 * 11.6 Mbit/s), and a stream on a LAN was lowered for the helper's own
 * slowness.
 */
#define QS_RATE_STREAM_TARGET_SHARE_PCT 15

typedef enum {
    QS_RATE_FIT_HOLD,           /* neither: the rate stays */
    QS_RATE_FIT_LOWER,          /* starved, or over its share of the link */
    QS_RATE_FIT_RAISE,          /* fed, and would fit at twice the rate */
} QsRateVerdict;

/* Zeroed: the nominal frame rate. */
typedef struct {
    guint halvings;             /* the frame rate is the nominal / 2^halvings */
    guint lower_run, raise_run; /* verdicts in a row */
} QsRateFit;

/* What the nominal frame interval is multiplied by. */
static inline guint qs_rate_fit_div(const QsRateFit *fit)
{
    return 1u << fit->halvings;
}

/* One encoded frame (not a flush) of `bytes`, `starved` or not, from a
 * source delivering every `source_interval_us` (0: not known), read at
 * `fps` / `div` (qs_rate_fit_div()), on a link of `link_bytes_per_s`.
 * Unless `link_known` (qs_bwe_link_known()) that rate is only a floor of
 * the link's: fitting in its share still raises, going over it no longer
 * lowers. */
QsRateVerdict qs_rate_frame_verdict(gboolean starved, uint64_t bytes, uint32_t fps, guint div,
                                    int64_t source_interval_us, uint64_t link_bytes_per_s,
                                    gboolean link_known);

/* Follows one verdict; TRUE when the frame rate changed. */
gboolean qs_rate_fit_frame(QsRateFit *fit, QsRateVerdict verdict);

/* The ceiling (bit/s) under which a frame, spread over the source's
 * interval as qs_rate_frame_bytes() spreads it, takes QS_RATE_STARVED_FRAME_US
 * of a link of `link_bytes_per_s`. */
uint32_t qs_rate_starved_ceiling(uint64_t link_bytes_per_s, uint32_t fps,
                                 int64_t source_interval_us);

/* The JPEG quality of the next still image after one of `bytes` went out
 * at `quality` on a link of `link_bytes_per_s`. */
int qs_rate_jpeg_next(int quality, uint64_t bytes, uint64_t link_bytes_per_s);
