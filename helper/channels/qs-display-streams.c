/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Video streams of the display channel: lifecycle, frames encoded on a worker, client reports. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>
#include <string.h>

/*
 * Frames are read when the previous one is encoded and the pacer has bulk
 * room: a frame the link cannot carry is never read, never queued. The
 * encoder (and a copy of the pixels) belongs to the worker job while it
 * runs, so the socket loop never waits on x264. Detection and the stream
 * rectangle: qs-display-detect.c.
 */

#define QS_STREAM_MAX_BITRATE 12000000u
#define QS_STREAM_LINK_SHARE_PCT 60     /* the rest is the fast lane's and images' */
#define QS_STREAM_MAX_DELIVERY_MS 10000
/* Bit rate steps: up after this many frames without a late one, down after
 * this many late ones (spice-gtk's own report window and drop sequence). */
#define QS_STREAM_RATE_WINDOW 20
#define QS_STREAM_RATE_DROPS 3

typedef struct {
    QsDisplayLife *life;
    QsDisplayStream *s;
    QsVideoEncoder *enc;        /* NULL: create on the worker */
    QsVideoCodec codec;
    uint32_t width, height, fps, bitrate;
    uint8_t *pixels;            /* owned copy, NULL for a flush */
    gboolean keyframe;
    uint32_t est_bytes;
    QsVideoFrame frame;
    GError *error;
} EncodeJob;

gboolean qs_display_streams_intersect(QsDisplayChannel *dc, const QsRect *r)
{
    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        if (dc->streams[i] && qs_rect_overlap(&dc->streams[i]->rect, r)) {
            return TRUE;
        }
    }
    return FALSE;
}

static uint32_t stream_bitrate(QsDisplayChannel *dc, guint n_streams)
{
    uint64_t bps = qs_bwe_bandwidth(dc->bwe) * 8 * QS_STREAM_LINK_SHARE_PCT / 100;

    bps = bps / MAX(n_streams, 1) * dc->stream_rate_pct / 100;
    return (uint32_t)CLAMP(bps, QS_VIDEO_MIN_BITRATE, QS_STREAM_MAX_BITRATE);
}

static guint n_streams(QsDisplayChannel *dc)
{
    guint n = 0;

    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        n += dc->streams[i] != NULL;
    }
    return n;
}

static void free_stream(QsDisplayStream *s)
{
    qs_video_encoder_free(s->enc);
    g_free(s);
}

void qs_display_stream_end(QsDisplayChannel *dc, guint slot, gboolean tell_client, int64_t now_us)
{
    QsDisplayStream *s = dc->streams[slot];

    dc->streams[slot] = NULL;
    if (tell_client) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_DESTROY, qs_msg_stream_destroy(s->id));
        QsFlowItem all = { .surface_serial = dc->serial,
                           .rect = s->rect };

        /* The client shows lossy video there: the repaint must be exact,
         * edge blocks (whose damage the stream absorbed) included. */
        qs_display_mark_exact(dc, &s->rect, now_us);
        qs_scheduler_stream_clear(dc->sched, s->id, now_us);
        qs_scheduler_requeue(dc->sched, &all, now_us);
    }
    g_debug("display: stream %u ended after %u frames", s->id, s->frames);
    if (s->encoding) {
        s->dead = TRUE;         /* the finishing job frees it */
    } else {
        free_stream(s);
    }
}

void qs_display_streams_destroy_all(QsDisplayChannel *dc, gboolean tell_client)
{
    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        if (dc->streams[i]) {
            qs_display_stream_end(dc, i, tell_client, g_get_monotonic_time());
        }
    }
}

static gboolean id_used(QsDisplayChannel *dc, uint32_t id)
{
    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        if (dc->streams[i] && dc->streams[i]->id == id) {
            return TRUE;
        }
    }
    return FALSE;
}

void qs_display_stream_start(QsDisplayChannel *dc, guint slot, const QsRect *r,
                         uint32_t fps, int64_t now_us)
{
    QsDisplayStream *s = g_new0(QsDisplayStream, 1);
    QsStreamCreate c = { 0 };

    do {
        s->id = dc->next_stream_id++ % 64;
    } while (id_used(dc, s->id));
    s->rect = *r;
    s->codec = dc->h264_ok && !dc->prefer_mjpeg ? QS_VIDEO_CODEC_H264 : QS_VIDEO_CODEC_MJPEG;
    s->fps = fps;
    s->dirty = TRUE;
    s->last_change_us = now_us;
    dc->streams[slot] = s;
    s->bitrate = stream_bitrate(dc, n_streams(dc));
    c.id = s->id;
    c.codec_type = (uint8_t)s->codec;
    c.top_down = TRUE;
    c.stamp = qs_mm_time_from_monotonic(now_us);
    c.stream_width = c.src_width = (uint32_t)r->width;
    c.stream_height = c.src_height = (uint32_t)r->height;
    c.dest = (QsStreamRect){ r->x, r->y, (uint32_t)r->width, (uint32_t)r->height };
    qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_CREATE, qs_msg_stream_create(&c));
    if (qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_STREAM_REPORT)) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_ACTIVATE_REPORT,
                        qs_msg_stream_activate_report(s->id, s->id,
                                                      QS_FRAME_TIME_REPORT_WINDOW, 1000));
    }
    qs_scheduler_stream_set(dc->sched, s->id, r,
                            now_us);
    dc->stats.streams++;
    g_debug("display: stream %u %s %dx%d at %d,%d, %u fps, %u bit/s", s->id,
            qs_video_codec_name(s->codec), r->width, r->height, r->x, r->y, fps, s->bitrate);
}

static void encode_job_free(EncodeJob *job)
{
    g_free(job->pixels);
    g_clear_pointer(&job->frame.data, g_bytes_unref);
    g_clear_error(&job->error);
    qs_video_encoder_free(job->enc);
    if (g_atomic_int_dec_and_test(&job->life->ref)) {
        g_free(job->life);
    }
    g_free(job);
}

/* Worker thread: the job owns its pixels and the encoder while it runs. */
static void encode_thread(GTask *task, gpointer source, gpointer data, GCancellable *c)
{
    EncodeJob *job = data;
    gboolean ok;

    (void)source;
    (void)c;
    if (!job->enc) {
        job->enc = qs_video_encoder_new(job->codec, job->width, job->height, job->fps,
                                        job->bitrate, &job->error);
        if (!job->enc) {
            g_task_return_boolean(task, FALSE);
            return;
        }
    }
    if (job->pixels) {
        ok = qs_video_encoder_encode(job->enc, job->pixels, (size_t)job->width * 4,
                                     job->keyframe, &job->frame, &job->error);
    } else {
        ok = qs_video_encoder_flush(job->enc, &job->frame, &job->error);
    }
    g_task_return_boolean(task, ok);
}

static uint32_t stamp_frame(QsDisplayStream *s, uint32_t mm_now, uint32_t wanted)
{
    s->last_stamp = qs_stream_stamp_next(s->last_stamp, s->last_stamp_now, mm_now, wanted);
    s->last_stamp_now = mm_now;
    return s->last_stamp;
}

/* spice-gtk's h264parse decodes a frame only when the next one arrives
 * (qs-video.h): stamped at least one frame interval ahead, a frame is
 * still on time when decoded, and that costs nothing it could be shown
 * sooner. A codec without that hold is shown as it arrives. */
static uint32_t decode_hold(QsDisplayStream *s)
{
    return qs_video_encoder_needs_flush(s->enc) ? 1000 / MAX(s->fps, 1) : 0;
}

/* The frame's multimedia time: now, plus the time the link needs for the
 * bytes ahead of its last one, plus the lead the client's reports taught
 * (flow/qs-frame-time.h). */
static uint32_t frame_stamp(QsDisplayChannel *dc, QsDisplayStream *s, int64_t now, gsize size)
{
    uint64_t ahead = qs_display_link_queued(dc, now) + size;
    /* Until the client's own rate is known the socket's may be a proxy's:
     * a 100 KB keyframe "delivered" in 0 ms behind a 2 Mbit relay arrived
     * 466 ms late, and the lead then covered that for a whole window. The
     * initial guess errs the other way. */
    uint64_t bw = qs_bwe_e2e_bandwidth(dc->bwe)
                      ? qs_bwe_bandwidth(dc->bwe)
                      : MIN(qs_bwe_bandwidth(dc->bwe), QS_BWE_INITIAL_BW);
    uint32_t mm_now = qs_mm_time_from_monotonic(now);
    uint32_t delivery = (uint32_t)MIN(ahead * 1000 / MAX(bw, 1), QS_STREAM_MAX_DELIVERY_MS);
    uint32_t lead = qs_frame_time_lead(dc->frame_time, delivery, decode_hold(s));
    uint32_t stamp = stamp_frame(s, mm_now, mm_now + lead);

    qs_frame_time_sent(dc->frame_time, s->id, stamp, (int32_t)(stamp - mm_now), delivery);
    g_debug("display: stream %u frame now %u stamp %u est %u off %d scale %d ahead %"
            G_GUINT64_FORMAT " size %zu bw %" G_GUINT64_FORMAT, s->id, mm_now, stamp, delivery,
            qs_frame_time_offset(dc->frame_time), qs_frame_time_scale_milli(dc->frame_time),
            ahead, size, bw);
    return stamp;
}

static void encode_done(GObject *source, GAsyncResult *res, gpointer data)
{
    EncodeJob *job = g_task_get_task_data(G_TASK(res));
    QsDisplayChannel *dc = job->life->dc;
    QsDisplayStream *s = job->s;
    gboolean flush = job->pixels == NULL;

    (void)source;
    (void)data;
    if (!dc) {
        /* The channel is gone (it marked the stream dead); the task frees
         * the job. */
        free_stream(s);
        return;
    }
    dc->encoding_bytes -= MIN(dc->encoding_bytes, job->est_bytes);
    s->encoding = FALSE;
    if (s->dead) {
        free_stream(s);
        qs_display_channel_pump(&dc->base);
        return;
    }
    s->enc = g_steal_pointer(&job->enc);
    if (!g_task_propagate_boolean(G_TASK(res), NULL) || job->error) {
        g_warning("display: stream %u: %s", s->id,
                  job->error ? job->error->message : "encoder failed");
        for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
            if (dc->streams[i] == s) {
                qs_display_stream_end(dc, i, TRUE, g_get_monotonic_time());
            }
        }
        if (s->codec == QS_VIDEO_CODEC_H264) {
            dc->h264_ok = FALSE;
        } else {
            dc->mjpeg_ok = FALSE;
        }
    } else {
        gsize size = g_bytes_get_size(job->frame.data);
        uint32_t stamp = frame_stamp(dc, s, g_get_monotonic_time(), size);

        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_DATA,
                        qs_msg_stream_data(s->id, stamp, job->frame.data));
        s->need_flush = !flush && qs_video_encoder_needs_flush(s->enc);
        if (flush) {
            dc->stats.flushes++;
        } else {
            s->frames++;
            dc->stats.frames++;
        }
        dc->stats.frame_bytes += size;
    }
    qs_display_channel_pump(&dc->base);
}

static void start_job(QsDisplayChannel *dc, QsDisplayStream *s, uint8_t *pixels)
{
    EncodeJob *job = g_new0(EncodeJob, 1);
    g_autoptr(GTask) task = g_task_new(NULL, NULL, encode_done, NULL);

    job->life = dc->life;
    g_atomic_int_inc(&dc->life->ref);
    job->s = s;
    job->enc = g_steal_pointer(&s->enc);
    job->codec = s->codec;
    job->width = (uint32_t)s->rect.width;
    job->height = (uint32_t)s->rect.height;
    job->fps = s->fps;
    job->bitrate = s->bitrate;
    job->pixels = pixels;
    job->est_bytes = pixels ? s->bitrate / 8 / MAX(s->fps, 1) : 64;
    if (job->enc) {
        uint32_t cur = qs_video_encoder_get_bitrate(job->enc);

        /* Follow the link, but not its noise: retune on a 20 % change. */
        if (s->bitrate > cur + cur / 5 || s->bitrate < cur - cur / 5) {
            qs_video_encoder_set_bitrate(job->enc, s->bitrate);
        }
    }
    s->encoding = TRUE;
    dc->encoding_bytes += job->est_bytes;
    g_task_set_task_data(task, job, (GDestroyNotify)encode_job_free);
    g_task_run_in_thread(task, encode_thread);
}

gboolean qs_display_streams_send(QsDisplayChannel *dc, int64_t now_us,
                                 const QsPacerBudget *budget)
{
    guint n = n_streams(dc);

    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        QsDisplayStream *s = dc->streams[i];
        int64_t interval;
        uint8_t *pixels;
        g_autoptr(GError) error = NULL;

        if (!s || s->encoding) {
            continue;
        }
        interval = G_USEC_PER_SEC / MAX(s->fps, 1);
        s->bitrate = stream_bitrate(dc, n);
        if (!s->dirty) {
            if (s->need_flush && now_us - s->last_frame_us >= interval &&
                budget->fast_bytes > 0) {
                g_debug("display: stream %u flush", s->id);
                s->need_flush = FALSE;
                start_job(dc, s, NULL);
                return TRUE;
            }
            continue;
        }
        if (now_us - s->last_frame_us < interval || !qs_pacer_bulk_open(budget)) {
            continue;           /* newest pixels are read when it is time */
        }
        pixels = g_malloc((size_t)s->rect.width * s->rect.height * 4);
        if (!qs_screen_read(dc->screen, dc->serial, &s->rect, pixels,
                            (size_t)s->rect.width * 4, &error)) {
            g_free(pixels);
            qs_display_stream_end(dc, i, FALSE, now_us);
            continue;
        }
        s->dirty = FALSE;
        s->last_frame_us = now_us;
        start_job(dc, s, pixels);
        return TRUE;
    }
    return FALSE;
}

int64_t qs_display_streams_deadline(QsDisplayChannel *dc, int64_t now_us)
{
    int64_t next = 0;

    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        QsDisplayStream *s = dc->streams[i];
        int64_t t;

        if (!s) {
            continue;
        }
        t = s->last_change_us + QS_STREAM_END_US + 1000;
        if (!s->encoding && (s->dirty || s->need_flush)) {
            t = MIN(t, MAX(now_us + 1000, s->last_frame_us + G_USEC_PER_SEC / MAX(s->fps, 1)));
        }
        next = next ? MIN(next, t) : t;
    }
    return next;
}

void qs_display_streams_report(QsDisplayChannel *dc, const QsClientMsg *msg)
{
    for (guint i = 0; i < QS_DISPLAY_MAX_STREAMS; i++) {
        QsDisplayStream *s = dc->streams[i];

        if (!s || s->id != msg->u.stream_report.stream_id ||
            s->id != msg->u.stream_report.unique_id) {
            continue;
        }
        if (msg->u.stream_report.num_frames == 0 &&
            msg->u.stream_report.num_drops == G_MAXUINT32) {
            /* The client cannot decode this codec. */
            g_message("display: client cannot decode %s", qs_video_codec_name(s->codec));
            if (s->codec == QS_VIDEO_CODEC_H264) {
                dc->h264_ok = FALSE;
            } else {
                dc->mjpeg_ok = FALSE;
            }
            qs_display_stream_end(dc, i, TRUE, g_get_monotonic_time());
            return;
        }
        qs_frame_time_report(dc->frame_time, s->id, msg->u.stream_report.end_frame_mm_time,
                             msg->u.stream_report.last_frame_delay);
        s->drops_reported += msg->u.stream_report.num_drops;
        dc->stats.client_drops += msg->u.stream_report.num_drops;
        /* The client reports every frame (for the timing); the rate follows
         * windows of QS_STREAM_RATE_WINDOW frames, or of the first drops. */
        s->window_frames += msg->u.stream_report.num_frames;
        s->window_drops += msg->u.stream_report.num_drops;
        if (s->window_frames >= QS_STREAM_RATE_WINDOW || s->window_drops >= QS_STREAM_RATE_DROPS) {
            dc->stream_rate_pct = s->window_drops ? MAX(30, dc->stream_rate_pct * 80 / 100)
                                                  : MIN(100, dc->stream_rate_pct + 5);
            s->window_frames = s->window_drops = 0;
        }
    }
}

void qs_display_streams_preferred(QsDisplayChannel *dc, const uint8_t *codecs, uint32_t n)
{
    dc->prefer_mjpeg = FALSE;
    for (uint32_t i = 0; i < n; i++) {
        if (codecs[i] == SPICE_VIDEO_CODEC_TYPE_MJPEG ||
            codecs[i] == SPICE_VIDEO_CODEC_TYPE_H264) {
            dc->prefer_mjpeg = codecs[i] == SPICE_VIDEO_CODEC_TYPE_MJPEG;
            return;
        }
    }
}
