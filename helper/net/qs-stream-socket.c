/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsStreamSocket: a client's non-blocking socket, read and written plain or through TLS. */
#include "net/qs-stream-socket.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <gio/gio.h>

gboolean qs_stream_socket_init(QsStreamSocket *sock, int fd, QsTlsCreds *creds,
                               GError **error)
{
    sock->fd = fd;
    if (creds) {
        sock->tls = qs_tls_session_new(creds, fd, error);
        if (!sock->tls) {
            return FALSE;
        }
        sock->creds = qs_tls_creds_ref(creds);
    }
    return TRUE;
}

void qs_stream_socket_clear(QsStreamSocket *sock)
{
    qs_tls_session_free(sock->tls);
    sock->tls = NULL;
    qs_tls_creds_unref(sock->creds);
    sock->creds = NULL;
    if (sock->fd >= 0) {
        close(sock->fd);
        sock->fd = -1;
    }
}

int qs_stream_socket_handshake(QsStreamSocket *sock, gboolean *want_write, GError **error)
{
    *want_write = FALSE;
    if (!sock->tls) {
        return 1;
    }
    return qs_tls_session_handshake(sock->tls, want_write, error);
}

gboolean qs_stream_socket_pending(QsStreamSocket *sock)
{
    return sock->tls && qs_tls_session_pending(sock->tls);
}

/* A recv or sendmsg result as this file's callers take it: the count, -2
 * when the socket would block, or -1 with `error` set. */
static gssize socket_result(ssize_t n, GError **error)
{
    if (n >= 0) {
        return n;
    }
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
        return -2;
    }
    g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno), "%s",
                g_strerror(errno));
    return -1;
}

gssize qs_stream_socket_read(QsStreamSocket *s, void *buf, gsize len, GError **error)
{
    if (s->tls) {
        return qs_tls_session_recv(s->tls, buf, len, error);
    }
    for (;;) {
        ssize_t n = recv(s->fd, buf, len, 0);

        if (n >= 0 || errno != EINTR) {
            return socket_result(n, error);
        }
    }
}

gssize qs_stream_socket_writev(QsStreamSocket *s, const struct iovec *iov, int n,
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

        if (w >= 0 || errno != EINTR) {
            return socket_result(w, error);
        }
    }
}

gboolean qs_stream_socket_write_all_now(QsStreamSocket *s, const char *text,
                                        GError **error)
{
    gsize len = strlen(text), off = 0;

    while (off < len) {
        struct iovec iov = { (char *)text + off, len - off };
        gssize w = qs_stream_socket_writev(s, &iov, 1, error);

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
