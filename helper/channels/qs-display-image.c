/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's images: pixels read at the plan's word, encoded on an encode worker, one at a time. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>

/*
 * An image's encode (JPEG, LZ, LZ4 and their fallback, a few ms for a
 * full frame) runs on the encode queue's workers, not on the main thread
 * that serves qemu's wake-ups and every client. The channel waits for it
 * before asking its plan again: the plan paces by the bytes framed, so it
 * must hear the image's size before its next decision, and the channel's
 * messages keep the order the plan gave them.
 */
struct QsDisplayImageJob {
    QsDisplayChannel *dc;       /* NULL once the channel has gone */
    QsImageShare *share;        /* a reference, while `making` */
    QsImageShareMaking *making; /* the console's other viewers wait for it */
    QsImageShareWait *wait;     /* or this channel waits for another's */
    QsPlanAction action;
    uint8_t *pixels;            /* packed rows of action.item.rect */
    size_t pixels_size;
    gboolean lossy;
    QsImageCodec lossless, used;
    uint64_t id;
    GBytes *msg;
};

static void job_free(QsDisplayImageJob *job)
{
    if (job->share) {
        qs_image_share_unref(job->share);
    }
    g_free(job->pixels);
    if (job->msg) {
        g_bytes_unref(job->msg);
    }
    g_free(job);
}

static QsPixelRect job_rect(const QsDisplayImageJob *job)
{
    const QsRect *r = &job->action.item.rect;

    return (QsPixelRect){ job->pixels, (size_t)r->width * 4, (uint32_t)r->width,
                          (uint32_t)r->height };
}

/* Sends the image's DRAW_COPY (taking `msg`) and tells the plan. */
static void finish(QsDisplayChannel *dc, const QsPlanAction *a, GBytes *msg, QsImageCodec used,
                   gboolean shared)
{
    gsize size = g_bytes_get_size(msg);

    qs_display_send(dc, SPICE_MSG_DISPLAY_DRAW_COPY, msg);
    qs_display_plan_image_sent(dc->plan, a, used == QS_IMAGE_CODEC_JPEG,
                               (uint32_t)MIN(size, G_MAXUINT32),
                               qs_display_clock_now(dc->clock));
    dc->stats.images[used]++;
    dc->stats.image_bytes += size;
    dc->stats.shared_images += shared;
}

/* On a worker: codec bytes framed by wire; touches nothing but the job. */
static void encode(gpointer data)
{
    QsDisplayImageJob *job = data;
    QsPixelRect px = job_rect(job);
    const QsRect *r = &job->action.item.rect;

    if (job->lossy) {
        job->msg = qs_msg_draw_copy_jpeg(0, r->x, r->y, &px, job->action.jpeg_quality,
                                         job->lossless, job->id, &job->used);
    } else {
        job->msg = qs_msg_draw_copy(0, r->x, r->y, &px, job->lossless, job->id, &job->used);
    }
}

/* The pixel buffer goes back for the next image. */
static void give_back_pixels(QsDisplayChannel *dc, QsDisplayImageJob *job)
{
    if (!dc->pixels) {
        dc->pixels = g_steal_pointer(&job->pixels);
        dc->pixels_size = job->pixels_size;
    }
}

/* The image is sent, made here or by another session. */
static void settle(QsDisplayChannel *dc, QsDisplayImageJob *job, GBytes *msg,
                   QsImageCodec used, gboolean shared)
{
    finish(dc, &job->action, msg, used, shared);
    give_back_pixels(dc, job);
    job_free(job);
}

/* The channel's one image in flight, until settled. */
static void claim(QsDisplayChannel *dc, QsDisplayImageJob *job)
{
    job->dc = dc;
    dc->image_job = job;
}

/* An image the channel waited for is sent: it takes its next action. */
static void job_done(QsDisplayChannel *dc, QsDisplayImageJob *job, GBytes *msg,
                     QsImageCodec used, gboolean shared)
{
    dc->image_job = NULL;
    settle(dc, job, msg, used, shared);
    dc->pump(&dc->base);
}

/* Back on the channel's thread. */
static void encoded(gpointer data)
{
    QsDisplayImageJob *job = data;

    /* The other viewers are answered even when this channel has gone. */
    if (job->making) {
        qs_image_share_made(job->share, g_steal_pointer(&job->making), job->used, job->msg);
    }
    if (!job->dc) {
        job_free(job);
        return;
    }
    job_done(job->dc, job, g_steal_pointer(&job->msg), job->used, FALSE);
}

static void queue_encode(QsDisplayChannel *dc, QsDisplayImageJob *job)
{
    claim(dc, job);
    qs_encode_queue_push(dc->encodes, encode, encoded, job);
}

/* Another session made the image this channel waited for (or did not:
 * then it is encoded here after all). */
static void on_ready(GBytes *msg, QsImageCodec used, gpointer data)
{
    QsDisplayImageJob *job = data;

    job->wait = NULL;           /* answered: the share freed it */
    if (!msg) {
        queue_encode(job->dc, job);
        return;
    }
    job_done(job->dc, job, msg, used, TRUE);
}

gboolean qs_display_image_send(QsDisplayChannel *dc, const QsPlanAction *a)
{
    const QsRect r = a->item.rect;
    size_t row = (size_t)r.width * 4, need = row * (size_t)r.height;
    QsDisplayImageJob *job;
    g_autoptr(GError) error = NULL;

    g_return_val_if_fail(!dc->image_job, TRUE);
    if (need > dc->pixels_size) {
        g_free(dc->pixels);
        dc->pixels = g_malloc(need);
        dc->pixels_size = need;
    }
    /* Pixels of a surface that has gone are not sent: the next take
     * redraws it. */
    if (!qs_screen_read(dc->screen, a->item.surface_serial, &r, dc->pixels, row, &error)) {
        g_debug("display: dropping stale item: %s", error->message);
        return TRUE;
    }
    job = g_new0(QsDisplayImageJob, 1);
    job->action = *a;
    job->pixels = g_steal_pointer(&dc->pixels);
    job->pixels_size = dc->pixels_size;
    dc->pixels_size = 0;
    job->lossless = a->bitmap ? QS_IMAGE_CODEC_BITMAP
                    : a->lz4 ? QS_IMAGE_CODEC_LZ4 : QS_IMAGE_CODEC_LZ;
    job->lossy = qs_display_plan_image_lossy(a, job->pixels);
    job->id = ++dc->image_id;
    if (!job->lossy) {
        QsPixelRect px = job_rect(job);
        QsImageShareAnswer share = qs_image_share_ask(dc->images, r.x, r.y, &px,
                                                      job->lossless, job->id, on_ready, job);

        if (share.msg) {
            settle(dc, job, share.msg, share.used, TRUE);
            return TRUE;
        }
        if (share.wait) {
            job->wait = share.wait;
            claim(dc, job);
            return FALSE;
        }
        job->making = share.making;
        if (job->making) {
            job->share = qs_image_share_ref(dc->images);
        }
    }
    queue_encode(dc, job);
    return FALSE;
}

void qs_display_image_forget(QsDisplayChannel *dc)
{
    QsDisplayImageJob *job = g_steal_pointer(&dc->image_job);

    if (!job) {
        return;
    }
    if (job->wait) {
        qs_image_share_withdraw(dc->images, job->wait);
        job_free(job);
    } else {
        job->dc = NULL;         /* its answer is dropped */
    }
}
