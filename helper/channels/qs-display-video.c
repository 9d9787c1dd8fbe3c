/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's video streams: each stream's encoder, frames encoded on a worker thread, their messages. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>

/*
 * A stream's frames come from its seat at an encoder that viewers of the
 * same console may share (encode/qs-video-share.h): encodes run on
 * workers, so the socket loop never waits on x264. When and at what rate a
 * frame is asked for is the plan's (flow/qs-plan-streams.c).
 */

static QsVideoCodec video_codec(QsPlanStreamCodec codec)
{
    return codec == QS_PLAN_STREAM_H264 ? QS_VIDEO_CODEC_H264 : QS_VIDEO_CODEC_MJPEG;
}

/* Ends the stream's seat; a frame still asked for is never answered. */
static void detach(QsDisplayChannel *dc, guint slot, gboolean tell_plan)
{
    QsDisplayVideo *v = g_steal_pointer(&dc->videos[slot]);

    if (v->encoding && tell_plan) {
        qs_display_plan_frame_dropped(dc->plan, v->est_bytes);
    }
    qs_video_seat_free(v->seat);
    g_free(v);
}

static void on_frame(QsVideoSeat *seat, const QsSharedFrame *f, gpointer data);

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
    QsDisplayVideo *v = g_new0(QsDisplayVideo, 1);
    QsVideoShape shape = { video_codec(a->codec), a->rect.x, a->rect.y,
                            (uint32_t)a->rect.width, (uint32_t)a->rect.height, a->fps,
                            a->bitrate, a->quality };

    dc->videos[slot] = v;
    v->dc = dc;
    v->id = a->stream;
    v->codec = shape.codec;
    v->seat = qs_video_seat_new(dc->streams, &shape, on_frame, v);
    c.id = a->stream;
    c.codec_type = (uint8_t)dc->videos[slot]->codec;
    c.top_down = TRUE;
    c.stamp = a->mm_time;
    c.stream_width = c.src_width = (uint32_t)a->rect.width;
    c.stream_height = c.src_height = (uint32_t)a->rect.height;
    c.dest = (QsStreamRect){ a->rect.x, a->rect.y, (uint32_t)a->rect.width,
                             (uint32_t)a->rect.height };
    qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_CREATE, qs_msg_stream_create(&c));
    g_message("display: stream %u, %dx%d at (%d,%d), %s at %u kbit/s, at most %u fps",
              a->stream, a->rect.width, a->rect.height, a->rect.x, a->rect.y,
              a->codec == QS_PLAN_STREAM_H264 ? "H.264" : "MJPEG", a->bitrate / 1000, a->fps);
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
            detach(dc, i, TRUE);
        }
    }
}

void qs_display_video_free_all(QsDisplayChannel *dc)
{
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (dc->videos[i]) {
            detach(dc, i, FALSE);
        }
    }
}

static void on_frame(QsVideoSeat *seat, const QsSharedFrame *f, gpointer data)
{
    QsDisplayVideo *v = data;
    QsDisplayChannel *dc = v->dc;
    gboolean asked_frame = !v->asked_flush;
    uint32_t id = v->id;
    gsize size = f->data ? g_bytes_get_size(f->data) : 0;
    QsPlanLink link;
    uint32_t stamp;

    (void)seat;
    v->encoding = FALSE;
    if (!f->ok) {
        g_warning("display: stream %u: %s", id, f->error ? f->error : "encoder failed");
    }
    qs_display_link(dc, &link);
    /* The plan hears of the frame that went, which a shared encoder may
     * make a flush where it asked for a frame, or the reverse. */
    stamp = qs_display_plan_frame_done(dc->plan, id, v->est_bytes,
                                       &(QsPlanFrameDone){ f->flush, f->ok, size,
                                                           f->needs_flush, f->starved },
                                       &link, qs_display_clock_now(dc->clock));
    if (f->ok && stamp && f->data) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_STREAM_DATA,
                        qs_msg_stream_data(id, stamp, f->data));
        if (f->flush) {
            dc->stats.flushes++;
        } else {
            dc->stats.frames++;
            dc->stats.shared_frames += f->shared;
        }
        dc->stats.frame_bytes += size;
    }
    if (f->ok && f->flush && asked_frame) {
        /* Its new pixels are still to go. */
        qs_display_plan_stream_dirty(dc->plan, id);
    }
    dc->pump(&dc->base);
}

void qs_display_video_encode(QsDisplayChannel *dc, const QsPlanAction *a, int64_t now_us)
{
    QsDisplayVideo *v = NULL;
    g_autofree uint8_t *pixels = NULL;
    g_autoptr(GError) error = NULL;
    gboolean flush = a->kind == QS_PLAN_STREAM_FLUSH;

    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (dc->videos[i] && dc->videos[i]->id == a->stream) {
            v = dc->videos[i];
        }
    }
    g_return_if_fail(v && !v->encoding);
    if (qs_video_seat_needs_pixels(v->seat, a->bitrate, a->read_div) && !flush) {
        pixels = g_malloc((size_t)a->rect.width * a->rect.height * 4);
        if (!qs_screen_read(dc->screen, a->item.surface_serial, &a->rect, pixels,
                            (size_t)a->rect.width * 4, &error)) {
            qs_display_plan_frame_lost(dc->plan, a->stream, a->est_bytes, now_us);
            return;
        }
    }
    v->encoding = TRUE;
    v->asked_flush = flush;
    v->est_bytes = a->est_bytes;
    qs_video_seat_request(v->seat, flush, g_steal_pointer(&pixels), a->source_interval_us);
}

gboolean qs_display_channel_encoding(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    if (dc->image_job) {
        return TRUE;
    }
    for (guint i = 0; i < QS_PLAN_MAX_STREAMS; i++) {
        if (dc->videos[i] && dc->videos[i]->encoding) {
            return TRUE;
        }
    }
    return FALSE;
}
