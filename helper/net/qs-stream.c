/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Non-blocking plain/TLS client socket I/O, WebSocket framing over either, and its main-loop watch. */

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include "net/qs-http.h"
#include "net/qs-stream.h"
#include "net/qs-ws.h"

/* What the first bytes said: undecided, a SPICE link, an HTTP request
 * still arriving, WebSocket frames from now on, or an HTTP request for the
 * console page that the caller answers. */
typedef enum {
    MODE_SNIFF,
    MODE_PLAIN,
    MODE_HTTP,
    MODE_WS,
    MODE_ANSWER,
} Mode;

#define BAD_REQUEST "HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"

/* Data frames are cut at this size so a large write does not need one
 * large header decision; the pacing keeps writes far below it anyway. */
#define WS_FRAME_MAX (256u * 1024)

typedef struct {
    QsWsDecoder dec;
    guint8 raw[16384];          /* read from the socket, not yet decoded */
    gsize raw_off, raw_len;
    guint8 hdr[QS_WS_MAX_HEADER];   /* the current data frame's header */
    guint hdr_off, hdr_len;
    guint64 frame_left;         /* its payload bytes not yet written */
    guint8 ctl[2 + QS_WS_MAX_CONTROL];  /* a PONG or CLOSE for the next frame boundary */
    guint ctl_off, ctl_len;
    gboolean closed;            /* the client sent CLOSE */
} Ws;

/*
 * The watch costs GLib's main loop as little as it can. On GLib 2.74 (Debian
 * 12) each change to a source's poll set, from any thread, writes the
 * context's wakeup eventfd, so the next poll() returns at once for nothing:
 * - a source that cannot recurse has its descriptor taken out of the poll
 *   set for each dispatch and put back after: one such wakeup per dispatch.
 *   The watch may recurse instead; dispatch guards against it itself.
 * - a sender that asks for G_IO_OUT and then, its queue written, drops it
 *   again changes the poll set twice per message. The first G_IO_OUT a
 *   caller asks for is tried without poll(): prepare() reports the source
 *   ready, so the write comes in the next iteration, which runs anyway. Only
 *   if the caller still wants G_IO_OUT after that try (the socket was full)
 *   does the descriptor's poll ask for it.
 */
typedef struct {
    GSource source;
    QsStream *stream;
    gpointer fd_tag;
    GIOCondition wanted;        /* what the caller asked for */
    GIOCondition polled;        /* what poll() watches on the descriptor */
    gboolean out_tried;         /* this G_IO_OUT episode had its free try */
    gboolean dispatching;
} QsStreamSource;

struct QsStream {
    int fd;
    QsTlsSession *tls;
    QsTlsCreds *creds;      /* kept alive for the session */
    char *peer;
    QsStreamSource *source;
    QsStreamFunc func;
    gpointer user_data;
    Mode mode;
    GByteArray *first;          /* sniffed bytes, or the HTTP request */
    Ws *ws;
    gboolean web;               /* a GET that is no upgrade goes to the caller */
    QsHttpRequest *http;        /* that request, until taken */
};

QsStream *qs_stream_new(int fd, QsTlsCreds *creds, const char *peer,
                        GError **error)
{
    QsStream *s = g_new0(QsStream, 1);

    s->fd = fd;
    s->peer = g_strdup(peer);
    s->first = g_byte_array_new();
    if (creds) {
        s->tls = qs_tls_session_new(creds, fd, error);
        if (!s->tls) {
            qs_stream_free(s);
            return NULL;
        }
        s->creds = qs_tls_creds_ref(creds);
    }
    return s;
}

void qs_stream_free(QsStream *s)
{
    if (!s) {
        return;
    }
    qs_stream_unwatch(s);
    qs_tls_session_free(s->tls);
    qs_tls_creds_unref(s->creds);
    if (s->fd >= 0) {
        close(s->fd);
    }
    g_free(s->peer);
    g_byte_array_unref(s->first);
    g_free(s->ws);
    qs_http_request_free(s->http);
    g_free(s);
}

const char *qs_stream_get_peer(QsStream *s)
{
    return s->peer;
}

gboolean qs_stream_is_tls(QsStream *s)
{
    return s->tls != NULL;
}

int qs_stream_get_fd(QsStream *s)
{
    return s->fd;
}

gboolean qs_stream_has_pending(QsStream *s)
{
    return (s->tls && qs_tls_session_pending(s->tls)) ||
           (s->mode == MODE_PLAIN && s->first->len > 0) ||
           (s->mode == MODE_WS && (s->ws->raw_off < s->ws->raw_len || s->ws->closed));
}

gboolean qs_stream_is_websocket(QsStream *s)
{
    return s->mode == MODE_WS;
}

void qs_stream_set_web(QsStream *s, gboolean on)
{
    s->web = on;
}

QsHttpRequest *qs_stream_steal_http_request(QsStream *s)
{
    return g_steal_pointer(&s->http);
}

static void apply_condition(QsStreamSource *ss, GIOCondition cond)
{
    GIOCondition polled;

    if (!(ss->wanted & G_IO_OUT) && (cond & G_IO_OUT)) {
        ss->out_tried = FALSE;      /* a new episode: one free try */
    }
    ss->wanted = cond;
    polled = ss->out_tried ? cond : (cond & ~G_IO_OUT);
    if (polled != ss->polled) {
        g_source_modify_unix_fd((GSource *)ss, ss->fd_tag, polled);
        ss->polled = polled;
    }
}

static gboolean source_prepare(GSource *source, gint *timeout)
{
    QsStreamSource *ss = (QsStreamSource *)source;

    *timeout = -1;
    if ((ss->wanted & G_IO_OUT) && !ss->out_tried) {
        return TRUE;
    }
    /* Records already decrypted by gnutls never wake poll(). */
    return (ss->wanted & G_IO_IN) && qs_stream_has_pending(ss->stream);
}

static gboolean source_dispatch(GSource *source, GSourceFunc cb,
                                gpointer data)
{
    QsStreamSource *ss = (QsStreamSource *)source;
    QsStream *s = ss->stream;
    GIOCondition cond = g_source_query_unix_fd(source, ss->fd_tag);

    (void)cb;
    (void)data;
    if (ss->dispatching) {
        return G_SOURCE_CONTINUE;   /* a nested main loop in our callback */
    }
    if ((ss->wanted & G_IO_IN) && qs_stream_has_pending(s)) {
        cond |= G_IO_IN;
    }
    if ((ss->wanted & G_IO_OUT) && !ss->out_tried) {
        cond |= G_IO_OUT;
        ss->out_tried = TRUE;
    }
    if (cond && s->func) {
        /* The callback may free the stream and destroy this source, which
         * lives on until g_main_dispatch drops its reference. */
        ss->dispatching = TRUE;
        s->func(s, cond, s->user_data);
        ss->dispatching = FALSE;
        if (!g_source_is_destroyed(source)) {
            /* A caller that still wants G_IO_OUT after its free try has a
             * full socket: poll() must watch for room now. */
            apply_condition(ss, ss->wanted);
        }
    }
    return G_SOURCE_CONTINUE;
}

static GSourceFuncs stream_source_funcs = {
    .prepare = source_prepare,
    .dispatch = source_dispatch,
};

void qs_stream_watch(QsStream *s, GIOCondition cond, QsStreamFunc func,
                     gpointer user_data)
{
    GSource *src;

    qs_stream_unwatch(s);
    src = g_source_new(&stream_source_funcs, sizeof(QsStreamSource));
    s->source = (QsStreamSource *)src;
    s->source->stream = s;
    s->source->fd_tag = g_source_add_unix_fd(src, s->fd, 0);
    apply_condition(s->source, cond);
    s->func = func;
    s->user_data = user_data;
    g_source_set_name(src, "qs-stream");
    g_source_set_can_recurse(src, TRUE);
    g_source_attach(src, g_main_context_get_thread_default());
}

void qs_stream_set_condition(QsStream *s, GIOCondition cond)
{
    if (s->source) {
        apply_condition(s->source, cond);
    }
}

void qs_stream_unwatch(QsStream *s)
{
    if (s->source) {
        g_source_destroy((GSource *)s->source);
        g_source_unref((GSource *)s->source);
        s->source = NULL;
    }
    s->func = NULL;
}

QsStreamStatus qs_stream_handshake(QsStream *s, gboolean *want_write,
                                   GError **error)
{
    int rc;

    *want_write = FALSE;
    if (!s->tls) {
        return QS_STREAM_DONE;
    }
    rc = qs_tls_session_handshake(s->tls, want_write, error);
    return rc > 0 ? QS_STREAM_DONE : rc == 0 ? QS_STREAM_AGAIN : QS_STREAM_ERROR;
}

static gssize raw_read(QsStream *s, void *buf, gsize len, GError **error)
{
    if (s->tls) {
        return qs_tls_session_recv(s->tls, buf, len, error);
    }
    for (;;) {
        ssize_t n = recv(s->fd, buf, len, 0);

        if (n >= 0) {
            return n;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return -2;
        }
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s",
                    g_strerror(errno));
        return -1;
    }
}

static gssize raw_writev(QsStream *s, const struct iovec *iov, int n, GError **error)
{
    if (n <= 0) {
        return 0;
    }
    if (s->tls) {
        return qs_tls_session_send(s->tls, iov[0].iov_base, iov[0].iov_len,
                                   error);
    }
    for (;;) {
        struct msghdr msg = {
            .msg_iov = (struct iovec *)iov,
            .msg_iovlen = (size_t)n,
        };
        ssize_t w = sendmsg(s->fd, &msg, MSG_NOSIGNAL);

        if (w >= 0) {
            return w;
        }
        if (errno == EINTR) {
            continue;
        }
        if (errno == EAGAIN || errno == EWOULDBLOCK) {
            return -2;
        }
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s",
                    g_strerror(errno));
        return -1;
    }
}

/* The whole of a small reply (the 101 or 400) on a fresh connection,
 * whose send buffer is empty: a partial write fails the upgrade. */
static gboolean write_all_now(QsStream *s, const char *text, GError **error)
{
    gsize len = strlen(text), off = 0;

    while (off < len) {
        struct iovec iov = { (char *)text + off, len - off };
        gssize w = raw_writev(s, &iov, 1, error);

        if (w == -2) {
            g_set_error(error, G_IO_ERROR, G_IO_ERROR_WOULD_BLOCK,
                        "the WebSocket handshake reply did not fit the socket");
            return FALSE;
        }
        if (w < 0) {
            return FALSE;
        }
        off += (gsize)w;
    }
    return TRUE;
}

/* The whole request was read: the console page's (for the caller), an
 * upgrade (answered here, WebSocket from now on) or a refusal. */
static gssize http_request(QsStream *s, GError **error)
{
    g_autoptr(QsHttpRequest) req = NULL;
    g_autofree char *response = NULL;
    QsHttpParse r = qs_http_parse((const char *)s->first->data, s->first->len, &req, error);

    if (r == QS_HTTP_MORE) {
        return 1;
    }
    if (r == QS_HTTP_BAD) {
        write_all_now(s, BAD_REQUEST, NULL);
        return -1;
    }
    g_byte_array_set_size(s->first, 0);
    if (!qs_http_wants_upgrade(req) && s->web) {
        s->http = g_steal_pointer(&req);
        s->mode = MODE_ANSWER;
        return QS_STREAM_HTTP_REQUEST;
    }
    if (!qs_http_wants_upgrade(req)) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA,
                    "an HTTP request that is not a WebSocket upgrade (this helper serves "
                    "no console page: --no-console-page)");
        write_all_now(s, BAD_REQUEST, NULL);
        return -1;
    }
    if (qs_ws_upgrade(req, &response, error) == QS_WS_REQUEST_BAD) {
        write_all_now(s, response, NULL);
        return -1;
    }
    if (!write_all_now(s, response, error)) {
        return -1;
    }
    s->ws = g_new0(Ws, 1);
    s->mode = MODE_WS;
    return -2;
}

/* The first bytes: a SPICE link (served as read), or "GET " and the rest of
 * an HTTP request. */
static gssize sniff(QsStream *s, GError **error)
{
    for (;;) {
        guint8 chunk[1024];
        gsize room = s->mode == MODE_SNIFF ? 4 - s->first->len
                                           : QS_HTTP_MAX_REQUEST - s->first->len;
        gssize n = raw_read(s, chunk, MIN(room, sizeof(chunk)), error);

        if (n <= 0) {
            return n;
        }
        g_byte_array_append(s->first, chunk, (guint)n);
        if (s->mode == MODE_SNIFF) {
            if (!qs_http_maybe_request(s->first->data, s->first->len)) {
                s->mode = MODE_PLAIN;
                return 1;
            }
            if (s->first->len == 4) {
                s->mode = MODE_HTTP;
            }
            continue;
        }
        n = http_request(s, error);
        if (n != 1) {
            return n;
        }
    }
}

/* Queues a control frame (one at a time: a newer PING's PONG replaces an
 * older one not yet begun, as RFC 6455 allows). */
static void queue_control(Ws *ws, guint8 opcode, const guint8 *payload, guint len)
{
    if (ws->ctl_off > 0 && ws->ctl_off < ws->ctl_len) {
        return;         /* one is half written: it goes first */
    }
    ws->ctl_len = qs_ws_frame_header(ws->ctl, opcode, len);
    memcpy(ws->ctl + ws->ctl_len, payload, len);
    ws->ctl_len += len;
    ws->ctl_off = 0;
}

static gssize ws_read(QsStream *s, guint8 *buf, gsize len, GError **error)
{
    Ws *ws = s->ws;

    for (;;) {
        gsize used = 0, produced = 0;
        QsWsEvent ev;

        if (ws->raw_off == ws->raw_len) {
            gssize n;

            if (ws->closed) {
                return 0;
            }
            n = raw_read(s, ws->raw, sizeof(ws->raw), error);
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

gssize qs_stream_read(QsStream *s, void *buf, gsize len, GError **error)
{
    gssize n;

    if (s->mode == MODE_ANSWER) {
        return -2;      /* the request is all the caller reads */
    }
    if (s->mode == MODE_SNIFF || s->mode == MODE_HTTP) {
        n = sniff(s, error);
        if (n <= 0 && s->mode != MODE_WS) {
            return n;
        }
    }
    if (s->mode == MODE_WS) {
        return ws_read(s, buf, len, error);
    }
    if (s->first->len > 0) {
        n = (gssize)MIN(len, s->first->len);
        memcpy(buf, s->first->data, (gsize)n);
        g_byte_array_remove_range(s->first, 0, (guint)n);
        return n;
    }
    return raw_read(s, buf, len, error);
}

/* Payload bytes of `iov` written inside data frames. */
static gssize ws_writev(QsStream *s, const struct iovec *iov, int n, GError **error)
{
    Ws *ws = s->ws;

    for (;;) {
        struct iovec out[1 + 16];
        int k = 0;
        guint64 room;
        gsize hdr_part;
        gssize w;

        if (ws->frame_left == 0 && ws->hdr_off == ws->hdr_len && ws->ctl_off < ws->ctl_len) {
            struct iovec c = { ws->ctl + ws->ctl_off, ws->ctl_len - ws->ctl_off };

            if ((w = raw_writev(s, &c, 1, error)) < 0) {
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
        w = raw_writev(s, out, k, error);
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

gssize qs_stream_writev(QsStream *s, const struct iovec *iov, int n, GError **error)
{
    return s->mode == MODE_WS ? ws_writev(s, iov, n, error) : raw_writev(s, iov, n, error);
}

static GSource *attach(GSource *src, GSourceFunc func, gpointer data,
                       GDestroyNotify notify)
{
    g_source_set_callback(src, func, data, notify);
    g_source_attach(src, g_main_context_get_thread_default());
    return src;
}

GSource *qs_net_timeout_source(guint ms, GSourceFunc func, gpointer data,
                               GDestroyNotify notify)
{
    return attach(g_timeout_source_new(ms), func, data, notify);
}

GSource *qs_net_idle_source(GSourceFunc func, gpointer data,
                            GDestroyNotify notify)
{
    return attach(g_idle_source_new(), func, data, notify);
}

void qs_net_source_cancel(GSource **source)
{
    if (*source) {
        g_source_destroy(*source);
        g_source_unref(*source);
        *source = NULL;
    }
}
