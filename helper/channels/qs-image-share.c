/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lossless images shared by the viewers of one console: the kept images, their comparison, the id each copy gets. */
#include "channels/qs-image-share.h"
#include "wire/qs-msg.h"

#include <string.h>

typedef struct {
    QsImageCodec codec, used;
    int32_t x, y;
    uint32_t width, height;
    uint8_t *pixels;            /* packed rows, compared byte for byte */
    GBytes *msg;                /* the DRAW_COPY as made, its maker's id; NULL while made */
    gsize bytes;                /* what keeping it costs */
    gboolean making;            /* a session encodes it now */
    gboolean in_queue;          /* else forgotten while made: freed by qs_image_share_made */
    GPtrArray *waiters;         /* QsImageShareWait *, while making */
} Kept;

struct QsImageShareWait {
    Kept *kept;
    uint64_t id;
    QsImageShareReady ready;
    gpointer data;
};

struct QsImageShare {
    gint ref;
    guint viewers;
    GQueue kept;                /* Kept *, newest first */
    gsize bytes;
};

QsImageShare *qs_image_share_new(void)
{
    QsImageShare *share = g_new0(QsImageShare, 1);

    share->ref = 1;
    g_queue_init(&share->kept);
    return share;
}

QsImageShare *qs_image_share_ref(QsImageShare *share)
{
    g_atomic_int_inc(&share->ref);
    return share;
}

static void kept_free(Kept *k)
{
    g_free(k->pixels);
    if (k->msg) {
        g_bytes_unref(k->msg);
    }
    if (k->waiters) {
        g_ptr_array_unref(k->waiters);
    }
    g_free(k);
}

/* `msg` (a DRAW_COPY) with `id` in place of its maker's: the image
 * descriptor's first field, right after the DRAW_COPY header. */
static GBytes *copy_with_id(GBytes *msg, uint64_t id)
{
    gsize n;
    const uint8_t *data = g_bytes_get_data(msg, &n);
    uint8_t *copy = g_memdup2(data, n);

    for (guint i = 0; i < 8; i++) {
        copy[QS_DRAW_COPY_HEADER_SIZE + i] = (uint8_t)(id >> (8 * i));
    }
    return g_bytes_new_take(copy, n);
}

/* Answers (and frees) sessions that waited: a copy of `msg` with each one's
 * own id, or NULL when it was not made. Called once the share is
 * consistent again: a waiter's channel goes on and may ask it again. */
static void answer_waiters(GPtrArray *waiters, GBytes *msg, QsImageCodec used)
{
    for (guint i = 0; waiters && i < waiters->len; i++) {
        QsImageShareWait *w = waiters->pdata[i];

        w->ready(msg ? copy_with_id(msg, w->id) : NULL, used, w->data);
        g_free(w);
    }
}

/* Drops every kept image; one being made leaves the queue and is freed
 * when its maker says it is made, its waiters told now to encode it
 * themselves. */
static void forget_all(QsImageShare *share)
{
    g_autoptr(GPtrArray) told = g_ptr_array_new_with_free_func((GDestroyNotify)g_ptr_array_unref);
    Kept *k;

    while ((k = g_queue_pop_head(&share->kept))) {
        k->in_queue = FALSE;
        if (k->making) {
            g_ptr_array_add(told, g_steal_pointer(&k->waiters));
        } else {
            kept_free(k);
        }
    }
    share->bytes = 0;
    for (guint i = 0; i < told->len; i++) {
        answer_waiters(told->pdata[i], NULL, QS_IMAGE_CODEC_BITMAP);
    }
}

void qs_image_share_unref(QsImageShare *share)
{
    if (share && g_atomic_int_dec_and_test(&share->ref)) {
        forget_all(share);
        g_free(share);
    }
}

void qs_image_share_viewer_add(QsImageShare *share)
{
    share->viewers++;
}

void qs_image_share_viewer_remove(QsImageShare *share)
{
    g_return_if_fail(share->viewers > 0);
    if (--share->viewers < 2) {
        forget_all(share);      /* nobody to share with */
    }
}

guint qs_image_share_n_kept(const QsImageShare *share)
{
    return share->kept.length;
}

/* The one entry for this codec, place and pixels, made or being made. */
static Kept *lookup(QsImageShare *share, int32_t x, int32_t y, const QsPixelRect *r,
                    QsImageCodec codec)
{
    for (GList *l = share->kept.head; l; l = l->next) {
        Kept *k = l->data;

        if (k->codec == codec && k->x == x && k->y == y && k->width == r->width &&
            k->height == r->height &&
            memcmp(k->pixels, r->pixels, (size_t)r->width * r->height * 4) == 0) {
            return k;
        }
    }
    return NULL;
}

/* The oldest images that are made go first; none being made is dropped
 * (its maker holds it). */
static void evict(QsImageShare *share)
{
    GList *l = share->kept.tail;

    while (l && (share->kept.length > QS_IMAGE_SHARE_MAX_ENTRIES ||
                 share->bytes > QS_IMAGE_SHARE_MAX_BYTES)) {
        GList *prev = l->prev;
        Kept *k = l->data;

        if (!k->making) {
            g_queue_delete_link(&share->kept, l);
            share->bytes -= k->bytes;
            kept_free(k);
        }
        l = prev;
    }
}

/* A new entry being made by the asker; NULL when it would crowd out the
 * rest. */
static Kept *start_making(QsImageShare *share, int32_t x, int32_t y, const QsPixelRect *rect,
                          QsImageCodec codec)
{
    size_t size = (size_t)rect->width * rect->height * 4;
    Kept *k;

    if (size > QS_IMAGE_SHARE_MAX_BYTES / 4) {
        return NULL;
    }
    k = g_new0(Kept, 1);
    *k = (Kept){ codec, codec, x, y, rect->width, rect->height, g_memdup2(rect->pixels, size),
                 NULL, size, TRUE, TRUE, g_ptr_array_new() };
    g_queue_push_head(&share->kept, k);
    share->bytes += k->bytes;
    evict(share);
    return k;
}

QsImageShareAnswer qs_image_share_ask(QsImageShare *share, int32_t x, int32_t y,
                                      const QsPixelRect *rect, QsImageCodec codec,
                                      uint64_t id, QsImageShareReady ready, gpointer data)
{
    QsImageShareAnswer answer = { NULL, codec, NULL, NULL };
    Kept *k;

    g_return_val_if_fail(rect->stride == (size_t)rect->width * 4, answer);
    if (share->viewers < 2) {
        return answer;          /* nobody to share with */
    }
    k = lookup(share, x, y, rect, codec);
    if (!k) {
        answer.making = (QsImageShareMaking *)start_making(share, x, y, rect, codec);
    } else if (k->making) {
        answer.wait = g_new0(QsImageShareWait, 1);
        *answer.wait = (QsImageShareWait){ k, id, ready, data };
        g_ptr_array_add(k->waiters, answer.wait);
    } else {
        answer.used = k->used;
        answer.msg = copy_with_id(k->msg, id);
    }
    return answer;
}

void qs_image_share_withdraw(QsImageShare *share, QsImageShareWait *wait)
{
    (void)share;
    if (wait->kept->waiters) {
        g_ptr_array_remove(wait->kept->waiters, wait);
    }
    g_free(wait);
}

void qs_image_share_made(QsImageShare *share, QsImageShareMaking *making, QsImageCodec used,
                         GBytes *msg)
{
    Kept *k = (Kept *)making;
    g_autoptr(GPtrArray) waiters = g_steal_pointer(&k->waiters);

    k->making = FALSE;
    if (!k->in_queue) {
        kept_free(k);           /* forgotten meanwhile */
    } else if (!msg) {
        g_queue_remove(&share->kept, k);
        share->bytes -= k->bytes;
        kept_free(k);
    } else {
        k->used = used;
        k->msg = g_bytes_ref(msg);
        k->bytes += g_bytes_get_size(msg);
        share->bytes += g_bytes_get_size(msg);
        evict(share);
    }
    answer_waiters(waiters, msg, used);
}
