/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsStream: what a client's first bytes make of its socket (SPICE, a WebSocket upgrade, a console page request), and its main-loop watch. */

#include <string.h>
#include <gio/gio.h>
#include "net/qs-http.h"
#include "net/qs-stream.h"
#include "net/qs-stream-socket.h"
#include "net/qs-stream-ws.h"
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
    QsStreamSocket sock;
    char *peer;
    QsStreamSource *source;
    QsStreamFunc func;
    gpointer user_data;
    Mode mode;
    GByteArray *first;          /* sniffed bytes, or the HTTP request */
    QsStreamWs *ws;
    gboolean web;               /* a GET that is no upgrade goes to the caller */
    QsHttpRequest *http;        /* that request, until taken */
};

QsStream *qs_stream_new(int fd, QsTlsCreds *creds, const char *peer,
                        GError **error)
{
    QsStream *s = g_new0(QsStream, 1);

    s->peer = g_strdup(peer);
    s->first = g_byte_array_new();
    if (!qs_stream_socket_init(&s->sock, fd, creds, error)) {
        qs_stream_free(s);
        return NULL;
    }
    return s;
}

void qs_stream_free(QsStream *s)
{
    if (!s) {
        return;
    }
    qs_stream_unwatch(s);
    qs_stream_socket_clear(&s->sock);
    g_free(s->peer);
    g_byte_array_unref(s->first);
    qs_stream_ws_free(s->ws);
    qs_http_request_free(s->http);
    g_free(s);
}

const char *qs_stream_get_peer(QsStream *s)
{
    return s->peer;
}

gboolean qs_stream_is_tls(QsStream *s)
{
    return s->sock.tls != NULL;
}

int qs_stream_get_fd(QsStream *s)
{
    return s->sock.fd;
}

gboolean qs_stream_has_pending(QsStream *s)
{
    return qs_stream_socket_pending(&s->sock) ||
           (s->mode == MODE_PLAIN && s->first->len > 0) ||
           (s->mode == MODE_WS && qs_stream_ws_pending(s->ws));
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
    s->source->fd_tag = g_source_add_unix_fd(src, s->sock.fd, 0);
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
    int rc = qs_stream_socket_handshake(&s->sock, want_write, error);

    return rc > 0 ? QS_STREAM_DONE : rc == 0 ? QS_STREAM_AGAIN : QS_STREAM_ERROR;
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
        qs_stream_socket_write_all_now(&s->sock, BAD_REQUEST, NULL);
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
        qs_stream_socket_write_all_now(&s->sock, BAD_REQUEST, NULL);
        return -1;
    }
    if (qs_ws_upgrade(req, &response, error) == QS_WS_REQUEST_BAD) {
        qs_stream_socket_write_all_now(&s->sock, response, NULL);
        return -1;
    }
    if (!qs_stream_socket_write_all_now(&s->sock, response, error)) {
        return -1;
    }
    s->ws = qs_stream_ws_new();
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
        gssize n = qs_stream_socket_read(&s->sock, chunk, MIN(room, sizeof(chunk)), error);

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
        return qs_stream_ws_read(s->ws, &s->sock, buf, len, error);
    }
    if (s->first->len > 0) {
        n = (gssize)MIN(len, s->first->len);
        memcpy(buf, s->first->data, (gsize)n);
        g_byte_array_remove_range(s->first, 0, (guint)n);
        return n;
    }
    return qs_stream_socket_read(&s->sock, buf, len, error);
}

gssize qs_stream_writev(QsStream *s, const struct iovec *iov, int n, GError **error)
{
    return s->mode == MODE_WS ? qs_stream_ws_writev(s->ws, &s->sock, iov, n, error)
                              : qs_stream_socket_writev(&s->sock, iov, n, error);
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
