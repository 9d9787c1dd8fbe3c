/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Non-blocking plain/TLS client socket I/O and its main-loop watch. */

#include <errno.h>
#include <unistd.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include "net/qs-stream.h"

typedef struct {
    GSource source;
    QsStream *stream;
    gpointer fd_tag;
    GIOCondition wanted;
} QsStreamSource;

struct QsStream {
    int fd;
    QsTlsSession *tls;
    QsTlsCreds *creds;      /* kept alive for the session */
    char *peer;
    QsStreamSource *source;
    QsStreamFunc func;
    gpointer user_data;
};

QsStream *qs_stream_new(int fd, QsTlsCreds *creds, const char *peer,
                        GError **error)
{
    QsStream *s = g_new0(QsStream, 1);

    s->fd = fd;
    s->peer = g_strdup(peer);
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
    return s->tls && qs_tls_session_pending(s->tls);
}

static gboolean source_prepare(GSource *source, gint *timeout)
{
    QsStreamSource *ss = (QsStreamSource *)source;

    *timeout = -1;
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
    if ((ss->wanted & G_IO_IN) && qs_stream_has_pending(s)) {
        cond |= G_IO_IN;
    }
    if (cond && s->func) {
        s->func(s, cond, s->user_data);
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
    s->source->fd_tag = g_source_add_unix_fd(src, s->fd, cond);
    s->source->wanted = cond;
    s->func = func;
    s->user_data = user_data;
    g_source_set_name(src, "qs-stream");
    g_source_attach(src, g_main_context_get_thread_default());
}

void qs_stream_set_condition(QsStream *s, GIOCondition cond)
{
    if (s->source && s->source->wanted != cond) {
        g_source_modify_unix_fd((GSource *)s->source, s->source->fd_tag, cond);
        s->source->wanted = cond;
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

gssize qs_stream_read(QsStream *s, void *buf, gsize len, GError **error)
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

gssize qs_stream_writev(QsStream *s, const struct iovec *iov, int n,
                        GError **error)
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
