/* SPDX-License-Identifier: GPL-2.0-or-later */
/* WebSocket (RFC 6455), server side: the upgrade request and the frames, without sockets. */
#include "net/qs-ws.h"

#include <gio/gio.h>
#include <string.h>

/* RFC 6455 section 1.3: appended to the key before hashing. */
#define WS_GUID "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"

#define BAD(...) (g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, __VA_ARGS__), \
                  *response = g_strdup("HTTP/1.1 400 Bad Request\r\nConnection: close\r\n" \
                                       "Content-Length: 0\r\n\r\n"),                   \
                  QS_WS_REQUEST_BAD)

char *qs_ws_accept(const char *key)
{
    g_autoptr(GChecksum) sha1 = g_checksum_new(G_CHECKSUM_SHA1);
    guint8 digest[20];
    gsize n = sizeof(digest);

    g_checksum_update(sha1, (const guchar *)key, -1);
    g_checksum_update(sha1, (const guchar *)WS_GUID, -1);
    g_checksum_get_digest(sha1, digest, &n);
    return g_base64_encode(digest, n);
}

static gboolean key_ok(const char *key)
{
    gsize n = 0;
    g_autofree guchar *raw = NULL;

    /* 16 random bytes in base64: 24 characters. */
    if (strlen(key) != 24 || strspn(key, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
                                         "0123456789+/=") != 24) {
        return FALSE;
    }
    raw = g_base64_decode(key, &n);
    return n == 16;
}

QsWsRequest qs_ws_upgrade(const QsHttpRequest *req, char **response, GError **error)
{
    g_autofree char *accept = NULL;

    *response = NULL;
    if (strcmp(req->method, "GET") != 0) {
        return BAD("a WebSocket upgrade that is not a GET request");
    }
    if (!req->upgrade || !qs_http_list_has(req->upgrade, "websocket") || !req->connection ||
        !qs_http_list_has(req->connection, "upgrade")) {
        return BAD("an HTTP request that is not a WebSocket upgrade");
    }
    if (!req->ws_version || strcmp(req->ws_version, "13") != 0) {
        return BAD("WebSocket version '%s', not 13", req->ws_version ? req->ws_version : "(none)");
    }
    if (!req->ws_key || !key_ok(req->ws_key)) {
        return BAD("a Sec-WebSocket-Key that is not 16 bytes in base64");
    }
    /* A browser that offered subprotocols fails an answer that picks none:
     * spice-html5 offers "binary", as websockify named it. */
    if (req->ws_protocol && !qs_http_list_has(req->ws_protocol, "binary")) {
        return BAD("WebSocket subprotocols '%s' without 'binary'", req->ws_protocol);
    }
    accept = qs_ws_accept(req->ws_key);
    *response = g_strdup_printf("HTTP/1.1 101 Switching Protocols\r\n"
                                "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                                "Sec-WebSocket-Accept: %s\r\n%s\r\n",
                                accept, req->ws_protocol ? "Sec-WebSocket-Protocol: binary\r\n" : "");
    return QS_WS_REQUEST_OK;
}

guint qs_ws_frame_header(guint8 *h, guint8 opcode, guint64 len)
{
    h[0] = 0x80 | opcode;
    if (len < 126) {
        h[1] = (guint8)len;
        return 2;
    }
    if (len <= 0xffff) {
        h[1] = 126;
        h[2] = (guint8)(len >> 8);
        h[3] = (guint8)len;
        return 4;
    }
    h[1] = 127;
    for (guint i = 0; i < 8; i++) {
        h[2 + i] = (guint8)(len >> (56 - 8 * i));
    }
    return 10;
}

/* How many header bytes the frame needs, from what arrived so far. */
static guint header_size(const QsWsDecoder *d)
{
    guint len7;

    if (d->header_have < 2) {
        return 2;
    }
    len7 = d->header[1] & 0x7f;
    return 2 + (len7 == 126 ? 2 : len7 == 127 ? 8 : 0) + 4;
}

#define FAIL(...) (g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, __VA_ARGS__), \
                   QS_WS_ERROR)

/* The header is complete: checks it and sets up the payload. */
static QsWsEvent start_frame(QsWsDecoder *d, GError **error)
{
    guint8 b0 = d->header[0], b1 = d->header[1];
    guint len7 = b1 & 0x7f, at = 2;
    guint64 len = len7;
    gboolean control;

    if (b0 & 0x70) {
        return FAIL("WebSocket frame with reserved bits set");
    }
    if (!(b1 & 0x80)) {
        return FAIL("unmasked WebSocket frame from a client");
    }
    d->fin = (b0 & 0x80) != 0;
    d->opcode = b0 & 0x0f;
    control = d->opcode & 0x8;
    if (len7 == 126) {
        len = (guint64)d->header[2] << 8 | d->header[3];
        at = 4;
    } else if (len7 == 127) {
        len = 0;
        for (guint i = 0; i < 8; i++) {
            len = len << 8 | d->header[2 + i];
        }
        at = 10;
    }
    memcpy(d->mask, d->header + at, 4);
    switch (d->opcode) {
    case QS_WS_OP_CONTINUATION:
        if (!d->in_message) {
            return FAIL("WebSocket continuation frame outside a message");
        }
        break;
    case QS_WS_OP_BINARY:
        if (d->in_message) {
            return FAIL("WebSocket data frame inside a fragmented message");
        }
        break;
    case QS_WS_OP_TEXT:
        return FAIL("WebSocket text frame (SPICE travels in binary frames)");
    case QS_WS_OP_CLOSE:
    case QS_WS_OP_PING:
    case QS_WS_OP_PONG:
        break;
    default:
        return FAIL("WebSocket frame with opcode 0x%x", d->opcode);
    }
    if (control && (!d->fin || len > QS_WS_MAX_CONTROL)) {
        return FAIL("WebSocket control frame fragmented or over %u bytes", QS_WS_MAX_CONTROL);
    }
    if (len > QS_WS_MAX_FRAME) {
        return FAIL("WebSocket frame of %" G_GUINT64_FORMAT " bytes, over the %u byte limit",
                    len, QS_WS_MAX_FRAME);
    }
    if (!control) {
        d->in_message = !d->fin;
    }
    d->left = len;
    d->pos = 0;
    d->control_len = 0;
    d->in_frame = TRUE;
    return QS_WS_MORE;
}

/* The frame's payload is complete. */
static QsWsEvent end_frame(QsWsDecoder *d)
{
    d->in_frame = FALSE;
    d->header_have = 0;
    if (d->opcode == QS_WS_OP_PING) {
        return QS_WS_PING;
    }
    if (d->opcode == QS_WS_OP_CLOSE) {
        return QS_WS_CLOSE;
    }
    return QS_WS_MORE;
}

QsWsEvent qs_ws_decode(QsWsDecoder *d, const guint8 *in, gsize in_len, gsize *used,
                       guint8 *out, gsize out_len, gsize *produced, GError **error)
{
    gsize i = 0, o = 0;
    QsWsEvent ev = QS_WS_MORE;

    while (ev == QS_WS_MORE) {
        if (!d->in_frame) {
            guint need = header_size(d);

            if (i == in_len) {
                break;
            }
            while (d->header_have < need && i < in_len) {
                d->header[d->header_have++] = in[i++];
                need = header_size(d);
            }
            if (d->header_have < need) {
                break;
            }
            ev = start_frame(d, error);
            if (ev == QS_WS_MORE && d->left == 0) {
                ev = end_frame(d);
            }
            continue;
        }
        if (d->opcode & 0x8) {
            /* Control payload: kept (at most 125 bytes), never output. */
            while (d->left && i < in_len) {
                d->control[d->control_len++] = in[i++] ^ d->mask[d->pos++ & 3];
                d->left--;
            }
        } else {
            gsize n = (gsize)MIN(MIN((guint64)(in_len - i), (guint64)(out_len - o)), d->left);

            for (gsize k = 0; k < n; k++) {
                out[o + k] = in[i + k] ^ d->mask[(d->pos + k) & 3];
            }
            i += n;
            o += n;
            d->pos += n;
            d->left -= n;
            if (d->left && o == out_len) {
                break;
            }
        }
        if (d->left == 0) {
            ev = end_frame(d);
        } else if (i == in_len) {
            break;
        }
    }
    *used = i;
    *produced = o;
    return ev;
}
