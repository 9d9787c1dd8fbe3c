/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Lossless images shared by the viewers of one console: a DRAW_COPY made for one session is reused for another that sends the same pixels. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "encode/qs-encoder.h"

/*
 * Each viewer's plan decides on its own which rectangles to send, but
 * viewers of one console mostly send the same ones: the damage is the
 * screen's. A lossless DRAW_COPY made for one session is kept a while; a
 * session about to send the same codec at the same place with the same
 * pixels (compared byte for byte, never by a hash alone) takes a copy
 * with its own image id instead of encoding again. Nothing is kept while
 * the console has one viewer. Lossy (JPEG) images are not shared: their
 * quality is each plan's.
 *
 * Reference-counted: the hub and every display channel of the console
 * hold it (a channel may outlive the hub). All on the channels' thread.
 */

/* At most this many images, and this many bytes of them (the pixels kept
 * to compare with and the messages), are kept per console. */
#define QS_IMAGE_SHARE_MAX_ENTRIES 16
#define QS_IMAGE_SHARE_MAX_BYTES (16u << 20)

typedef struct QsImageShare QsImageShare;

QsImageShare *qs_image_share_new(void);
QsImageShare *qs_image_share_ref(QsImageShare *share);
void qs_image_share_unref(QsImageShare *share);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsImageShare, qs_image_share_unref)

/* A display channel of the console comes or goes. */
void qs_image_share_viewer_add(QsImageShare *share);
void qs_image_share_viewer_remove(QsImageShare *share);

/*
 * Viewers mostly ask for the same image at once (one screen change wakes
 * them all), before any encode of it is back: the first marks it as being
 * made, the others wait for it instead of encoding it too.
 */
typedef struct QsImageShareMaking QsImageShareMaking;
typedef struct QsImageShareWait QsImageShareWait;

/* Called once for a waiter: `msg` is the DRAW_COPY with the waiter's id
 * (its own now), or NULL when the image was not made (encode it then). */
typedef void (*QsImageShareReady)(GBytes *msg, QsImageCodec used, gpointer data);

/* What one look at the share tells a session about to send a lossless
 * image; at most one of the three is set. */
typedef struct {
    GBytes *msg;                /* kept: the DRAW_COPY with the asker's id, in codec `used` */
    QsImageCodec used;
    QsImageShareWait *wait;     /* another session makes it: `ready` will answer */
    QsImageShareMaking *making; /* the asker makes it for the others; it must end it
                                 * with qs_image_share_made(), holding a reference on
                                 * the share until then */
} QsImageShareAnswer;

/* The asker sends `rect` (packed rows: stride == width * 4) at (x, y) on
 * surface 0 in `codec` with image id `id`. All three unset: nobody to
 * share with, or too large to keep; the asker encodes it alone. */
QsImageShareAnswer qs_image_share_ask(QsImageShare *share, int32_t x, int32_t y,
                                      const QsPixelRect *rect, QsImageCodec codec,
                                      uint64_t id, QsImageShareReady ready, gpointer data);
/* Made (`msg`, which it `used`; NULL: not made): kept for later viewers,
 * and every waiter answered, before this returns. */
void qs_image_share_made(QsImageShare *share, QsImageShareMaking *making, QsImageCodec used,
                         GBytes *msg);
/* The waiter goes (its channel closes): `ready` is not called. */
void qs_image_share_withdraw(QsImageShare *share, QsImageShareWait *wait);

/* Images kept now (tests). */
guint qs_image_share_n_kept(const QsImageShare *share);
