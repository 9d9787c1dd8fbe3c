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
    GBytes *msg;                /* the DRAW_COPY as made, its maker's id */
    gsize bytes;                /* what keeping it costs */
} Kept;

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
    g_bytes_unref(k->msg);
    g_free(k);
}

static void forget_all(QsImageShare *share)
{
    g_queue_clear_full(&share->kept, (GDestroyNotify)kept_free);
    share->bytes = 0;
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

static gboolean same(const Kept *k, int32_t x, int32_t y, const QsPixelRect *r,
                     QsImageCodec codec)
{
    return k->codec == codec && k->x == x && k->y == y && k->width == r->width &&
           k->height == r->height &&
           memcmp(k->pixels, r->pixels, (size_t)r->width * r->height * 4) == 0;
}

/* The kept message with `id` in place of its maker's: the image
 * descriptor's first field, right after the DRAW_COPY header. */
static GBytes *copy_with_id(const Kept *k, uint64_t id)
{
    gsize n;
    const uint8_t *data = g_bytes_get_data(k->msg, &n);
    uint8_t *copy = g_memdup2(data, n);

    for (guint i = 0; i < 8; i++) {
        copy[QS_DRAW_COPY_HEADER_SIZE + i] = (uint8_t)(id >> (8 * i));
    }
    return g_bytes_new_take(copy, n);
}

static void keep(QsImageShare *share, Kept *k)
{
    if (k->bytes > QS_IMAGE_SHARE_MAX_BYTES / 2) {
        kept_free(k);           /* one image would crowd out the rest */
        return;
    }
    g_queue_push_head(&share->kept, k);
    share->bytes += k->bytes;
    while (share->kept.length > QS_IMAGE_SHARE_MAX_ENTRIES ||
           share->bytes > QS_IMAGE_SHARE_MAX_BYTES) {
        Kept *old = g_queue_pop_tail(&share->kept);

        share->bytes -= old->bytes;
        kept_free(old);
    }
}

GBytes *qs_image_share_find(QsImageShare *share, int32_t x, int32_t y,
                            const QsPixelRect *rect, QsImageCodec codec, uint64_t id,
                            QsImageCodec *used)
{
    g_return_val_if_fail(rect->stride == (size_t)rect->width * 4, NULL);
    if (share->viewers < 2) {
        return NULL;
    }
    for (GList *l = share->kept.head; l; l = l->next) {
        Kept *k = l->data;

        if (same(k, x, y, rect, codec)) {
            *used = k->used;
            return copy_with_id(k, id);
        }
    }
    return NULL;
}

void qs_image_share_keep(QsImageShare *share, int32_t x, int32_t y, const QsPixelRect *rect,
                         QsImageCodec codec, QsImageCodec used, GBytes *msg)
{
    size_t size = (size_t)rect->width * rect->height * 4;
    Kept *k;

    g_return_if_fail(rect->stride == (size_t)rect->width * 4);
    if (share->viewers < 2) {
        return;
    }
    k = g_new0(Kept, 1);
    *k = (Kept){ codec, used, x, y, rect->width, rect->height,
                 g_memdup2(rect->pixels, size), g_bytes_ref(msg),
                 size + g_bytes_get_size(msg) };
    keep(share, k);
}
