/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display plan's video streams: their life, when a frame is read, bit rate, stamps, the client's reports. */
#include "flow/qs-plan-streams.h"
#include "flow/qs-plan-images.h"

/*
 * A frame is read when the previous one is back from the encoder and the
 * pacer has bulk room: a frame the link cannot carry is never read, never
 * queued. A stream starved or over its share of the link reads one frame
 * in qs_rate_fit_div() intervals (flow/qs-rate.h); the flush then goes
 * one nominal interval after each frame, so the client shows it as soon
 * as at full rate. Where streams start and end: qs-plan-detect.c.
 */

#define QS_STREAM_MAX_BITRATE 12000000u
#define QS_STREAM_MAX_DELIVERY_MS 10000
/* Bit rate steps: up after this many frames without a late one, down after
 * this many late ones (spice-gtk's own report window and drop sequence). */
#define QS_STREAM_RATE_WINDOW 20
#define QS_STREAM_RATE_DROPS 3
/* What a flush is counted as while the encoder has it. */
#define QS_STREAM_FLUSH_BYTES 64

void qs_plan_streams_init(QsDisplayPlan *plan)
{
    plan->streams.h264_ok = plan->caps.h264;
    plan->streams.mjpeg_ok = plan->caps.mjpeg;
    plan->streams.rate_pct = 100;
}

void qs_plan_streams_clear(QsDisplayPlan *plan)
{
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        g_clear_pointer(&plan->streams.slot[i], g_free);
    }
    qs_scheduler_set_heat(plan->sched, NULL);
    g_clear_pointer(&plan->streams.heat, qs_screen_heat_free);
}

gboolean qs_plan_streams_intersect(const QsDisplayPlan *plan, const QsRect *r)
{
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (plan->streams.slot[i] && qs_rect_overlap(&plan->streams.slot[i]->rect, r)) {
            return TRUE;
        }
    }
    return FALSE;
}

static guint n_streams(const QsDisplayPlan *plan)
{
    guint n = 0;

    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        n += plan->streams.slot[i] != NULL;
    }
    return n;
}

/* The stream's ceiling; what it spends below is the encoder's quality
 * target's, and a starved stream's frames are shorter still on the link
 * (flow/qs-rate.h). */
static uint32_t stream_bitrate(const QsDisplayPlan *plan, const QsPlanStream *s, guint n)
{
    uint64_t bw = qs_bwe_bandwidth(plan->bwe);
    uint32_t bps = qs_rate_stream_ceiling(bw, n, plan->streams.rate_pct,
                                          plan->caps.min_stream_bitrate,
                                          MIN(QS_STREAM_MAX_BITRATE,
                                              plan->caps.max_stream_bitrate));

    if (qs_rate_fit_div(&s->fit) > 1) {
        bps = MAX(plan->caps.min_stream_bitrate,
                  MIN(bps, qs_rate_starved_ceiling(bw, s->fps, s->source_interval_us)));
    }
    return bps;
}

static int find(const QsDisplayPlan *plan, uint32_t id)
{
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (plan->streams.slot[i] && plan->streams.slot[i]->id == id) {
            return (int)i;
        }
    }
    return -1;
}

void qs_plan_stream_end(QsDisplayPlan *plan, guint slot, gboolean tell, int64_t now_us)
{
    QsPlanStream *s = g_steal_pointer(&plan->streams.slot[slot]);

    qs_plan_push(plan, &(QsPlanAction){ .kind = QS_PLAN_STREAM_DESTROY, .stream = s->id,
                                        .rect = s->rect, .tell = tell });
    if (tell) {
        QsFlowItem all = { .surface_serial = plan->serial, .rect = s->rect };

        /* The client shows lossy video there: the repaint must be exact,
         * edge blocks (whose damage the stream absorbed) included. */
        qs_plan_images_mark(plan, &s->rect, now_us);
        qs_scheduler_stream_clear(plan->sched, s->id, now_us);
        qs_scheduler_requeue(plan->sched, &all, now_us);
    }
    g_debug("display: stream %u ended after %u frames", s->id, s->frames);
    g_free(s);
}

void qs_plan_streams_end_all(QsDisplayPlan *plan, gboolean tell, int64_t now_us)
{
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (plan->streams.slot[i]) {
            qs_plan_stream_end(plan, i, tell, now_us);
        }
    }
}

void qs_plan_stream_start(QsDisplayPlan *plan, guint slot, const QsRect *r, uint32_t fps,
                          int64_t now_us)
{
    QsPlanStreams *st = &plan->streams;
    QsPlanStream *s = g_new0(QsPlanStream, 1);

    do {
        s->id = st->next_id++ % QS_PLAN_STREAM_IDS;
    } while (find(plan, s->id) >= 0);
    s->rect = *r;
    s->codec = st->h264_ok && !st->prefer_mjpeg ? QS_PLAN_STREAM_H264 : QS_PLAN_STREAM_MJPEG;
    s->fps = fps;
    s->quality = qs_rate_stream_quality(s->codec == QS_PLAN_STREAM_H264);
    s->dirty = TRUE;
    s->last_change_us = now_us;
    st->slot[slot] = s;
    s->bitrate = stream_bitrate(plan, s, n_streams(plan));
    qs_plan_push(plan, &(QsPlanAction){ .kind = QS_PLAN_STREAM_CREATE, .stream = s->id,
                                        .rect = *r, .codec = s->codec, .fps = fps,
                                        .bitrate = s->bitrate, .quality = s->quality,
                                        .mm_time = qs_mm_time_from_monotonic(now_us),
                                        .report_window = QS_FRAME_TIME_REPORT_WINDOW });
    qs_scheduler_stream_set(plan->sched, s->id, r, now_us);
    plan->stats.streams++;
    g_debug("display: stream %u %s %dx%d at %d,%d, %u fps, %u bit/s", s->id,
            s->codec == QS_PLAN_STREAM_H264 ? "h264" : "mjpeg", r->width, r->height, r->x,
            r->y, fps, s->bitrate);
}

/* Follow the link, but not its noise: the encoder's ceiling is retuned on
 * a 20 % change. A frame's estimate is the ceiling over qemu's frame
 * interval (which the encoder is told too); its real size is usually far
 * below (the quality target's). */
static void hand_to_encoder(QsDisplayPlan *plan, QsPlanStream *s, QsPlanKind kind,
                            QsPlanAction *action)
{
    uint32_t cur = s->enc_bitrate;

    if (!cur || s->bitrate > cur + cur / 5 || s->bitrate < cur - cur / 5) {
        s->enc_bitrate = s->bitrate;
    }
    *action = (QsPlanAction){ .kind = kind, .stream = s->id, .rect = s->rect,
                              .codec = s->codec, .fps = s->fps,
                              .read_div = qs_rate_fit_div(&s->fit), .bitrate = s->enc_bitrate,
                              .quality = s->quality,
                              .source_interval_us = s->source_interval_us,
                              .item.surface_serial = plan->serial };
    action->est_bytes = kind == QS_PLAN_STREAM_FRAME
                         ? qs_rate_frame_bytes(s->bitrate, s->fps, s->source_interval_us)
                         : QS_STREAM_FLUSH_BYTES;
    s->encoding = TRUE;
    plan->encoding_bytes += action->est_bytes;
}

static int64_t nominal_interval(const QsPlanStream *s)
{
    return G_USEC_PER_SEC / MAX(s->fps, 1);
}

/* A lowered stream reads one frame in qs_rate_fit_div() nominal intervals. */
static int64_t read_interval(const QsPlanStream *s)
{
    return nominal_interval(s) * qs_rate_fit_div(&s->fit);
}

gboolean qs_plan_streams_next(QsDisplayPlan *plan, int64_t now_us,
                              const QsPacerBudget *budget, QsPlanAction *action)
{
    guint n = n_streams(plan);

    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        QsPlanStream *s = plan->streams.slot[i];
        int64_t interval, read_every, since;

        if (!s || s->encoding) {
            continue;
        }
        interval = nominal_interval(s);
        read_every = read_interval(s);
        since = now_us - s->last_frame_us;
        s->bitrate = stream_bitrate(plan, s, n);
        if (s->need_flush && since >= interval && budget->fast_bytes > 0 &&
            (!s->dirty || since < read_every)) {
            g_debug("display: stream %u flush", s->id);
            s->need_flush = FALSE;
            hand_to_encoder(plan, s, QS_PLAN_STREAM_FLUSH, action);
            return TRUE;
        }
        if (!s->dirty) {
            continue;
        }
        if (since < read_every || !qs_pacer_bulk_open(budget)) {
            continue;           /* newest pixels are read when it is time */
        }
        s->dirty = FALSE;
        s->last_frame_us = now_us;
        hand_to_encoder(plan, s, QS_PLAN_STREAM_FRAME, action);
        return TRUE;
    }
    return FALSE;
}

int64_t qs_plan_streams_deadline(const QsDisplayPlan *plan, int64_t now_us)
{
    int64_t next = 0;

    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        const QsPlanStream *s = plan->streams.slot[i];
        int64_t t;

        if (!s) {
            continue;
        }
        t = s->last_change_us + QS_PLAN_STREAM_END_US + 1000;
        if (!s->encoding && s->need_flush) {
            t = MIN(t, MAX(now_us + 1000, s->last_frame_us + nominal_interval(s)));
        }
        if (!s->encoding && s->dirty) {
            t = MIN(t, MAX(now_us + 1000, s->last_frame_us + read_interval(s)));
        }
        next = next ? MIN(next, t) : t;
    }
    return next;
}

static void codec_failed(QsDisplayPlan *plan, QsPlanStreamCodec codec)
{
    if (codec == QS_PLAN_STREAM_H264) {
        plan->streams.h264_ok = FALSE;
    } else {
        plan->streams.mjpeg_ok = FALSE;
    }
}

/* The frame's multimedia time: now, plus the time the link needs for the
 * bytes ahead of its last one, plus the lead the client's reports taught
 * (flow/qs-frame-time.h). */
static uint32_t frame_stamp(QsDisplayPlan *plan, QsPlanStream *s, const QsPlanLink *link,
                            int64_t now, gsize size, gboolean needs_flush)
{
    uint64_t ahead = qs_plan_link_queued(plan, link, now) + size;
    /* Until the client's own rate is known the socket's may be a proxy's:
     * a 100 KB keyframe "delivered" in 0 ms behind a 2 Mbit relay arrived
     * 466 ms late, and the lead then covered that for a whole window. The
     * initial guess errs the other way. */
    uint64_t bw = qs_bwe_e2e_bandwidth(plan->bwe)
                      ? qs_bwe_bandwidth(plan->bwe)
                      : MIN(qs_bwe_bandwidth(plan->bwe), QS_BWE_INITIAL_BW);
    uint32_t mm_now = qs_mm_time_from_monotonic(now);
    uint32_t delivery = (uint32_t)MIN(ahead * 1000 / MAX(bw, 1), QS_STREAM_MAX_DELIVERY_MS);
    /* spice-gtk's h264parse decodes a frame only when the next one arrives:
     * stamped at least one frame interval ahead, a frame is still on time
     * when decoded, and that costs nothing it could be shown sooner. */
    uint32_t hold = needs_flush ? 1000 / MAX(s->fps, 1) : 0;
    uint32_t lead = qs_frame_time_lead(plan->frame_time, delivery, hold);

    s->last_stamp = qs_stream_stamp_next(s->last_stamp, s->last_stamp_now, mm_now, mm_now + lead);
    s->last_stamp_now = mm_now;
    qs_frame_time_sent(plan->frame_time, s->id, s->last_stamp, (int32_t)(s->last_stamp - mm_now),
                       delivery);
    g_debug("display: stream %u frame now %u stamp %u est %u off %d scale %d ahead %"
            G_GUINT64_FORMAT " size %zu bw %" G_GUINT64_FORMAT, s->id, mm_now, s->last_stamp,
            delivery, qs_frame_time_offset(plan->frame_time),
            qs_frame_time_scale_milli(plan->frame_time), ahead, size, bw);
    return s->last_stamp;
}

void qs_plan_streams_frame_dropped(QsDisplayPlan *plan, uint32_t est_bytes)
{
    plan->encoding_bytes -= MIN(plan->encoding_bytes, est_bytes);
}

/* A frame's fit to its quality target and to its share of the link sets
 * the stream's frame rate (flow/qs-rate.h). */
static void follow_fit(QsDisplayPlan *plan, QsPlanStream *s, const QsPlanFrameDone *done)
{
    guint was = qs_rate_fit_div(&s->fit);
    QsRateVerdict v = qs_rate_frame_verdict(done->starved, done->bytes, s->fps, was,
                                            s->source_interval_us,
                                            qs_bwe_bandwidth(plan->bwe),
                                            qs_bwe_link_known(plan->bwe));

    plan->stats.frames_starved += done->starved;
    if (qs_rate_fit_frame(&s->fit, v)) {
        plan->stats.rate_halvings += qs_rate_fit_div(&s->fit) > was;
        g_debug("display: stream %u %s: %u fps (link %" G_GUINT64_FORMAT " bytes/s, %s)", s->id,
                done->starved ? "starved"
                : v == QS_RATE_FIT_LOWER ? "over its share of the link" : "fits again",
                s->fps / qs_rate_fit_div(&s->fit), qs_bwe_bandwidth(plan->bwe),
                qs_bwe_link_known(plan->bwe) ? "measured" : "at least");
    }
}

uint32_t qs_plan_streams_frame_done(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                    const QsPlanFrameDone *done, const QsPlanLink *link,
                                    int64_t now_us)
{
    int slot = find(plan, stream);
    QsPlanStream *s;

    qs_plan_streams_frame_dropped(plan, est_bytes);
    if (slot < 0 || !plan->streams.slot[slot]->encoding) {
        return 0;
    }
    s = plan->streams.slot[slot];
    s->encoding = FALSE;
    if (!done->ok) {
        QsPlanStreamCodec codec = s->codec;

        qs_plan_stream_end(plan, (guint)slot, TRUE, now_us);
        codec_failed(plan, codec);
        return 0;
    }
    s->need_flush = !done->flush && done->needs_flush;
    if (!done->flush) {
        s->frames++;
        follow_fit(plan, s, done);
    }
    return frame_stamp(plan, s, link, now_us, done->bytes, done->needs_flush);
}

void qs_plan_streams_dirty(QsDisplayPlan *plan, uint32_t stream)
{
    int slot = find(plan, stream);

    if (slot >= 0) {
        plan->streams.slot[slot]->dirty = TRUE;
    }
}

void qs_plan_streams_frame_lost(QsDisplayPlan *plan, uint32_t stream, uint32_t est_bytes,
                                int64_t now_us)
{
    int slot = find(plan, stream);

    qs_plan_streams_frame_dropped(plan, est_bytes);
    if (slot >= 0) {
        qs_plan_stream_end(plan, (guint)slot, FALSE, now_us);
    }
}

gboolean qs_plan_streams_report(QsDisplayPlan *plan, uint32_t stream, uint32_t unique_id,
                                uint32_t end_frame_mm_time, uint32_t num_frames,
                                uint32_t num_drops, int32_t last_frame_delay, int64_t now_us)
{
    int slot = find(plan, stream);
    QsPlanStream *s;

    if (slot < 0 || stream != unique_id) {
        return FALSE;
    }
    s = plan->streams.slot[slot];
    if (num_frames == 0 && num_drops == G_MAXUINT32) {
        QsPlanStreamCodec codec = s->codec;

        g_message("display: client cannot decode %s",
                  codec == QS_PLAN_STREAM_H264 ? "h264" : "mjpeg");
        codec_failed(plan, codec);
        qs_plan_stream_end(plan, (guint)slot, TRUE, now_us);
        return TRUE;
    }
    qs_frame_time_report(plan->frame_time, s->id, end_frame_mm_time, last_frame_delay);
    plan->stats.client_drops += num_drops;
    /* The client reports every frame (for the timing); the rate follows
     * windows of QS_STREAM_RATE_WINDOW frames, or of the first drops. */
    s->window_frames += num_frames;
    s->window_drops += num_drops;
    if (s->window_frames >= QS_STREAM_RATE_WINDOW || s->window_drops >= QS_STREAM_RATE_DROPS) {
        plan->streams.rate_pct = s->window_drops ? MAX(30, plan->streams.rate_pct * 80 / 100)
                                                 : MIN(100, plan->streams.rate_pct + 5);
        s->window_frames = s->window_drops = 0;
    }
    return FALSE;
}
