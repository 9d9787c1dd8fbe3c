/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsStreamWs: WebSocket framing (net/qs-ws.h) of a stream's reads and writes, with the PONG and CLOSE it owes. */
#include "net/qs-stream-ws.h"

#include <string.h>
#include <gio/gio.h>
#include "net/qs-ws.h"

/* Data frames are cut at this size so a large write does not need one
 * large header decision; the pacing keeps writes far below it anyway. */
#define WS_FRAME_MAX (256u * 1024)

struct QsStreamWs {
    QsWsDecoder dec;
    guint8 raw[16384];          /* read from the socket, not yet decoded */
    gsize raw_off, raw_len;
    guint8 hdr[QS_WS_MAX_HEADER];   /* the current data frame's header */
    guint hdr_off, hdr_len;
    guint64 frame_left;         /* its payload bytes not yet written */
    guint8 ctl[2 + QS_WS_MAX_CONTROL];  /* a PONG or CLOSE for the next frame boundary */
    guint ctl_off, ctl_len;
    gboolean closed;            /* the client sent CLOSE */
};

QsStreamWs *qs_stream_ws_new(void)
{
    return g_new0(QsStreamWs, 1);
}

void qs_stream_ws_free(QsStreamWs *ws)
{
    g_free(ws);
}

gboolean qs_stream_ws_pending(QsStreamWs *ws)
{
    return ws->raw_off < ws->raw_len || ws->closed;
}

/* Queues a control frame (one at a time: a newer PING's PONG replaces an
 * older one not yet begun, as RFC 6455 allows). */
static void queue_control(QsStreamWs *ws, guint8 opcode, const guint8 *payload, guint len)
{
    if (ws->ctl_off > 0 && ws->ctl_off < ws->ctl_len) {
        return;         /* one is half written: it goes first */
    }
    ws->ctl_len = qs_ws_frame_header(ws->ctl, opcode, len);
    memcpy(ws->ctl + ws->ctl_len, payload, len);
    ws->ctl_len += len;
    ws->ctl_off = 0;
}

gssize qs_stream_ws_read(QsStreamWs *ws, QsStreamSocket *sock, guint8 *buf, gsize len,
                         GError **error)
{

    for (;;) {
        gsize used = 0, produced = 0;
        QsWsEvent ev;

        if (ws->raw_off == ws->raw_len) {
            gssize n;

            if (ws->closed) {
                return 0;
            }
            n = qs_stream_socket_read(sock, ws->raw, sizeof(ws->raw), error);
            if (n == 0 && (ws->dec.in_frame || ws->dec.header_have > 0)) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                            "WebSocket connection ended inside a frame");
                return -1;
            }
            if (n <= 0) {
                return n;
            }
            ws->raw_off = 0;
            ws->raw_len = (gsize)n;
        }
        ev = qs_ws_decode(&ws->dec, ws->raw + ws->raw_off, ws->raw_len - ws->raw_off, &used,
                          buf, len, &produced, error);
        ws->raw_off += used;
        if (ev == QS_WS_ERROR) {
            return -1;
        }
        if (ev == QS_WS_PING) {
            queue_control(ws, QS_WS_OP_PONG, ws->dec.control, ws->dec.control_len);
        } else if (ev == QS_WS_CLOSE) {
            /* Echo its status code; what it still sent is not read. */
            queue_control(ws, QS_WS_OP_CLOSE, ws->dec.control, MIN(ws->dec.control_len, 2u));
            ws->closed = TRUE;
            ws->raw_off = ws->raw_len;
        }
        if (produced > 0) {
            return (gssize)produced;
        }
        if (ws->closed) {
            return 0;
        }
    }
}

gssize qs_stream_ws_writev(QsStreamWs *ws, QsStreamSocket *sock, const struct iovec *iov,
                           int n, GError **error)
{

    for (;;) {
        struct iovec out[1 + 16];
        int k = 0;
        guint64 room;
        gsize hdr_part;
        gssize w;

        if (ws->frame_left == 0 && ws->hdr_off == ws->hdr_len && ws->ctl_off < ws->ctl_len) {
            struct iovec c = { ws->ctl + ws->ctl_off, ws->ctl_len - ws->ctl_off };

            if ((w = qs_stream_socket_writev(sock, &c, 1, error)) < 0) {
                return w;
            }
            ws->ctl_off += (guint)w;
            continue;
        }
        if (ws->frame_left == 0 && ws->hdr_off == ws->hdr_len) {
            guint64 total = 0;

            for (int i = 0; i < n; i++) {
                total += iov[i].iov_len;
            }
            if (total == 0) {
                return 0;
            }
            ws->frame_left = MIN(total, WS_FRAME_MAX);
            ws->hdr_len = qs_ws_frame_header(ws->hdr, QS_WS_OP_BINARY, ws->frame_left);
            ws->hdr_off = 0;
        }
        if (ws->hdr_off < ws->hdr_len) {
            out[k++] = (struct iovec){ ws->hdr + ws->hdr_off, ws->hdr_len - ws->hdr_off };
        }
        room = ws->frame_left;
        for (int i = 0; i < n && room > 0 && k < (int)G_N_ELEMENTS(out); i++) {
            gsize take = (gsize)MIN((guint64)iov[i].iov_len, room);

            out[k++] = (struct iovec){ iov[i].iov_base, take };
            room -= take;
        }
        w = qs_stream_socket_writev(sock, out, k, error);
        if (w < 0) {
            return w;
        }
        hdr_part = MIN((gsize)w, (gsize)(ws->hdr_len - ws->hdr_off));
        ws->hdr_off += (guint)hdr_part;
        if ((gsize)w > hdr_part) {
            ws->frame_left -= (gsize)w - hdr_part;
            return (gssize)((gsize)w - hdr_part);
        }
        /* Only header bytes went (TLS writes one element at a time). */
    }
}
