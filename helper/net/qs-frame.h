/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Post-link message framing: a byte stream from the client cut into
 * (type, size, data) messages, headers checked before any allocation. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

#define QS_FRAME_MINI_HEADER_SIZE 6
#define QS_FRAME_FULL_HEADER_SIZE 18

typedef struct {
    gboolean mini;       /* SpiceMiniDataHeader, else SpiceDataHeader */
    guint32 max_size;    /* larger announced sizes are an error */
    guint8 hdr[QS_FRAME_FULL_HEADER_SIZE];
    gsize hdr_have;
    guint16 type;
    guint32 size;
    guint8 *body;
    gsize body_cap;
    gsize body_have;
    gboolean complete;   /* type/size/body hold a complete message */
} QsFrameReader;

void qs_frame_reader_init(QsFrameReader *r, gboolean mini, guint32 max_size);
void qs_frame_reader_clear(QsFrameReader *r);

typedef enum {
    QS_FRAME_NEED_MORE,  /* all of the input consumed, no message yet */
    QS_FRAME_MESSAGE,    /* r->type, r->body, r->size hold a message */
    QS_FRAME_ERROR,      /* oversize message; the stream is unusable */
} QsFrameStatus;

/* Consumes up to `len` bytes; stops after one complete message (valid
 * until the next call). *consumed says how many bytes were used. */
QsFrameStatus qs_frame_reader_feed(QsFrameReader *r, const guint8 *data,
                                   gsize len, gsize *consumed,
                                   GError **error);

/* Writes a server message header; returns its length (6 or 18). */
gsize qs_frame_build_header(guint8 *buf, gboolean mini, guint64 serial,
                            guint16 type, guint32 size);

G_END_DECLS
