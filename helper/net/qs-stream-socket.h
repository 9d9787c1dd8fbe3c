/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The client's socket under a QsStream: plain or TLS, the bytes as they go. */
#pragma once

#include <sys/uio.h>
#include <glib.h>
#include "net/qs-tls.h"

typedef struct {
    int fd;
    QsTlsSession *tls;
    QsTlsCreds *creds;          /* kept alive for the session */
} QsStreamSocket;

/* Takes `fd`; with `creds` a TLS server handshake is to come. On failure
 * the socket still holds `fd`: clear it. */
gboolean qs_stream_socket_init(QsStreamSocket *sock, int fd, QsTlsCreds *creds,
                               GError **error);
void qs_stream_socket_clear(QsStreamSocket *sock);

/* DONE/AGAIN/ERROR as 1/0/-1; plain sockets are done at once. */
int qs_stream_socket_handshake(QsStreamSocket *sock, gboolean *want_write, GError **error);
/* TRUE if TLS holds records already decrypted, which poll() never announces. */
gboolean qs_stream_socket_pending(QsStreamSocket *sock);

/* As qs_stream_read() and qs_stream_writev(): bytes, 0 closed (read), -1
 * error (set), -2 would block. TLS writes only the first element. */
gssize qs_stream_socket_read(QsStreamSocket *sock, void *buf, gsize len, GError **error);
gssize qs_stream_socket_writev(QsStreamSocket *sock, const struct iovec *iov, int n,
                               GError **error);
/* The whole of a small reply (a 101 or 400) on a fresh connection, whose
 * send buffer is empty: a partial write fails. */
gboolean qs_stream_socket_write_all_now(QsStreamSocket *sock, const char *text,
                                        GError **error);
