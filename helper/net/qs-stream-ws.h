/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A QsStream's WebSocket layer once the upgrade is done: SPICE in binary frames over its socket. */
#pragma once

#include "net/qs-stream-socket.h"

typedef struct QsStreamWs QsStreamWs;

QsStreamWs *qs_stream_ws_new(void);
void qs_stream_ws_free(QsStreamWs *ws);

/* TRUE if frames already read wait to be decoded, or the client's CLOSE
 * waits to be read as the end: poll() will not announce either. */
gboolean qs_stream_ws_pending(QsStreamWs *ws);
/* As qs_stream_read(): payload bytes; answers PING and CLOSE on the way. */
gssize qs_stream_ws_read(QsStreamWs *ws, QsStreamSocket *sock, guint8 *buf, gsize len,
                         GError **error);
/* As qs_stream_writev(): payload bytes of `iov` written inside data frames. */
gssize qs_stream_ws_writev(QsStreamWs *ws, QsStreamSocket *sock, const struct iovec *iov,
                           int n, GError **error);
