/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Cuts the client's post-link byte stream into messages, refusing
 * oversized headers before allocating for them. */

#include <string.h>
#include <gio/gio.h>
#include "net/qs-frame.h"
#include "net/qs-link.h"

void qs_frame_reader_init(QsFrameReader *r, gboolean mini, guint32 max_size)
{
    memset(r, 0, sizeof(*r));
    r->mini = mini;
    r->max_size = max_size;
}

void qs_frame_reader_clear(QsFrameReader *r)
{
    g_free(r->body);
    r->body = NULL;
    r->body_cap = 0;
}

static gsize header_size(const QsFrameReader *r)
{
    return r->mini ? QS_FRAME_MINI_HEADER_SIZE : QS_FRAME_FULL_HEADER_SIZE;
}

QsFrameStatus qs_frame_reader_feed(QsFrameReader *r, const guint8 *data,
                                   gsize len, gsize *consumed,
                                   GError **error)
{
    gsize used = 0;
    gsize hsize = header_size(r);

    if (r->complete) {
        /* The previous message was delivered: start the next one. */
        r->complete = FALSE;
        r->hdr_have = 0;
        r->body_have = 0;
    }
    if (r->hdr_have < hsize) {
        gsize n = MIN(hsize - r->hdr_have, len);
        const guint8 *h = r->hdr;

        memcpy(r->hdr + r->hdr_have, data, n);
        r->hdr_have += n;
        used += n;
        if (r->hdr_have < hsize) {
            *consumed = used;
            return QS_FRAME_NEED_MORE;
        }
        if (!r->mini) {
            h += 8; /* the client's serial is not used */
        }
        r->type = (guint16)(h[0] | h[1] << 8);
        r->size = qs_link_get_u32(h + 2);
        /* sub_list (full header only) is ignored: clients send none. */
        if (r->size > r->max_size) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_MESSAGE_TOO_LARGE,
                        "message type %u of %u bytes exceeds the bound of %u",
                        r->type, r->size, r->max_size);
            *consumed = used;
            return QS_FRAME_ERROR;
        }
        /* Grow for this message; give a big buffer back once messages
         * are small again. */
        if (r->size > r->body_cap ||
            (r->body_cap > 64 * 1024 && r->size <= 64 * 1024)) {
            g_free(r->body);
            r->body = g_malloc(r->size);
            r->body_cap = r->size;
        }
    }
    if (r->body_have < r->size) {
        gsize n = MIN(r->size - r->body_have, len - used);

        memcpy(r->body + r->body_have, data + used, n);
        r->body_have += n;
        used += n;
    }
    *consumed = used;
    if (r->body_have < r->size) {
        return QS_FRAME_NEED_MORE;
    }
    r->complete = TRUE;
    return QS_FRAME_MESSAGE;
}

gsize qs_frame_build_header(guint8 *buf, gboolean mini, guint64 serial,
                            guint16 type, guint32 size)
{
    guint8 *h = buf;

    if (!mini) {
        qs_link_put_u32(buf, (guint32)serial);
        qs_link_put_u32(buf + 4, (guint32)(serial >> 32));
        h = buf + 8;
    }
    h[0] = type & 0xff;
    h[1] = type >> 8;
    qs_link_put_u32(h + 2, size);
    if (!mini) {
        qs_link_put_u32(h + 6, 0);
        return QS_FRAME_FULL_HEADER_SIZE;
    }
    return QS_FRAME_MINI_HEADER_SIZE;
}
