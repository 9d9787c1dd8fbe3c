/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's video streams: each stream's encoder, frames encoded on a worker thread, their messages. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>

/*
 * The encoder (and a copy of the pixels) belongs to the worker job while it
 * runs, so the socket loop never waits on x264. When and at what rate a
 * frame is encoded is the plan's (flow/qs-plan-streams.c).
 */

typedef struct {
    QsDisplayLife *life;
    QsDisplayVideo *v;
    QsVideoEncoder *enc;        /* NULL: create on the worker */
    QsVideoCodec codec;
    uint32_t width, height, fps, bitrate;
    int quality;                /* the plan's target; bitrate is then its ceiling */
    int64_t source_interval_us; /* qemu's frame interval over the stream */
    uint8_t *pixels;            /* owned copy, NULL for a flush */
    uint32_t est_bytes;
    QsVideoFrame frame;
    GError *error;
} EncodeJob;

static QsVideoCodec video_codec(QsPlanStreamCodec codec)
{
    return codec == QS_PLAN_STREAM_H264 ? QS_VIDEO_CODEC_H264 : QS_VIDEO_CODEC_MJPEG;
}

static void free_video(QsDisplayVideo *v)
{
    qs_video_encoder_free(v->enc);
    g_free(v);
}

/* Takes the stream's encoder from the channel: a worker still encoding for
 * it frees it when done. */
static void detach(QsDisplayChannel *dc, guint slot)
{
    QsDisplayVideo *v = g_steal_pointer(&dc->videos[slot]);

    if (v->encoding) {
        v->dead = TRUE;
    } else {
        free_video(v);
    }
}

void qs_display_video_create(QsDisplayChannel *dc, const QsPlanAction *a)
{
    QsStreamCreate c = { 0 };
    guint slot = 0;

    while (slot < QS_PLAN_MAX_STREAMS && dc->videos[slot]) {
        slot++;
    }
    /* The plan has at most QS_PLAN_MAX_STREAMS, and ends one before it
     * starts another in its place. */
    g_return_if_fail(slot < QS_PLAN_MAX_STREAMS);
    dc->videos[slot] = g_new0(QsDisplayVideo, 1);
    dc->videos[slot]->id = a->stream;
    dc->videos[slot]->codec = video_codec(a->codec);
    c.id = a->stream;
    c.codec_type = (uint8_t)dc->videos[slot]->codec;
    c.top_down = TRUE;
    c.stamp = a->mm_time;
    c.stream_width = c.src_width = (uint32_t)a->rect.width;
    c.stream_height = c.src_height = (uint32_t)a->rect.height;
    c.dest = (QsStreamRect){ a->rect.x, a->rect.y, (uint32_t)a->rect.width,
                             (uint32_t)a->rect.height };
    qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_CREATE, qs_msg_stream_create(&c));
    g_message("display: stream %u, %dx%d at (%d,%d), %s at %u kbit/s", a->stream,
              a->rect.width, a->rect.height, a->rect.x, a->rect.y,
              a->codec == QS_PLAN_STREAM_H264 ? "H.264" : "MJPEG", a->bitrate / 1000);
    if (qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_STREAM_REPORT)) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_ACTIVATE_REPORT,
                        qs_msg_stream_activate_report(a->stream, a->stream,
                                                      a->report_window, 1000));
    }
}

void qs_display_video_destroy(QsDisplayChannel *dc, const QsPlanAction *a)
{
    if (a->tell) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_DESTROY, qs_msg_stream_destroy(a->stream));
    }
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (dc->videos[i] && dc->videos[i]->id == a->stream) {
            detach(dc, i);
        }
    }
}

void qs_display_video_free_all(QsDisplayChannel *dc)
{
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (dc->videos[i]) {
            detach(dc, i);
        }
    }
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
                                        job->bitrate, job->quality, &job->error);
        if (!job->enc) {
            g_task_return_boolean(task, FALSE);
            return;
        }
    }
    if (job->pixels) {
        qs_video_encoder_set_source_interval(job->enc, job->source_interval_us);
        ok = qs_video_encoder_encode(job->enc, job->pixels, (size_t)job->width * 4,
                                     FALSE, &job->frame, &job->error);
    } else {
        ok = qs_video_encoder_flush(job->enc, &job->frame, &job->error);
    }
    g_task_return_boolean(task, ok);
}

static void encode_done(GObject *source, GAsyncResult *res, gpointer data)
{
    EncodeJob *job = g_task_get_task_data(G_TASK(res));
    QsDisplayChannel *dc = job->life->dc;
    QsDisplayVideo *v = job->v;
    gboolean flush = job->pixels == NULL;
    gboolean ok;
    QsPlanLink link;
    uint32_t stamp;
    gsize size = 0;

    (void)source;
    (void)data;
    if (!dc) {
        /* The channel is gone (it marked the stream dead); the task frees
         * the job. */
        free_video(v);
        return;
    }
    v->encoding = FALSE;
    if (v->dead) {
        qs_display_plan_frame_dropped(dc->plan, job->est_bytes);
        free_video(v);
        qs_display_channel_pump(&dc->base);
        return;
    }
    v->enc = g_steal_pointer(&job->enc);
    ok = g_task_propagate_boolean(G_TASK(res), NULL) && !job->error;
    if (!ok) {
        g_warning("display: stream %u: %s", v->id,
                  job->error ? job->error->message : "encoder failed");
    } else {
        size = g_bytes_get_size(job->frame.data);
    }
    qs_display_link(dc, &link);
    stamp = qs_display_plan_frame_done(dc->plan, v->id, job->est_bytes, flush, ok, size,
                                       v->enc && qs_video_encoder_needs_flush(v->enc), &link,
                                       g_get_monotonic_time());
    if (ok && stamp) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_DATA,
                        qs_msg_stream_data(v->id, stamp, job->frame.data));
        if (flush) {
            dc->stats.flushes++;
        } else {
            dc->stats.frames++;
        }
        dc->stats.frame_bytes += size;
    }
    qs_display_channel_pump(&dc->base);
}

void qs_display_video_encode(QsDisplayChannel *dc, const QsPlanAction *a, int64_t now_us)
{
    QsDisplayVideo *v = NULL;
    EncodeJob *job;
    g_autoptr(GTask) task = NULL;
    g_autofree uint8_t *pixels = NULL;
    g_autoptr(GError) error = NULL;

    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (dc->videos[i] && dc->videos[i]->id == a->stream) {
            v = dc->videos[i];
        }
    }
    g_return_if_fail(v && !v->encoding);
    if (a->kind == QS_PLAN_STREAM_FRAME) {
        pixels = g_malloc((size_t)a->rect.width * a->rect.height * 4);
        if (!qs_screen_read(dc->screen, a->item.surface_serial, &a->rect, pixels,
                            (size_t)a->rect.width * 4, &error)) {
            qs_display_plan_frame_lost(dc->plan, a->stream, a->est_bytes, now_us);
            return;
        }
    }
    job = g_new0(EncodeJob, 1);
    job->life = dc->life;
    g_atomic_int_inc(&dc->life->ref);
    job->v = v;
    job->enc = g_steal_pointer(&v->enc);
    job->codec = v->codec;
    job->width = (uint32_t)a->rect.width;
    job->height = (uint32_t)a->rect.height;
    job->fps = a->fps;
    job->bitrate = a->bitrate;
    job->quality = a->quality;
    job->source_interval_us = a->source_interval_us;
    job->pixels = g_steal_pointer(&pixels);
    job->est_bytes = a->est_bytes;
    if (job->enc && a->bitrate != v->bitrate) {
        qs_video_encoder_set_bitrate(job->enc, a->bitrate);
    }
    v->bitrate = a->bitrate;
    v->encoding = TRUE;
    task = g_task_new(NULL, NULL, encode_done, NULL);
    g_task_set_task_data(task, job, (GDestroyNotify)encode_job_free);
    g_task_run_in_thread(task, encode_thread);
}
