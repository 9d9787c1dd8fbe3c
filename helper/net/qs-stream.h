/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A non-blocking client socket, plain or TLS, with one read/write API and
 * a main-loop watch whose conditions can be changed. */
#pragma once

#include <sys/uio.h>
#include <glib.h>
#include "net/qs-http.h"
#include "net/qs-tls.h"

G_BEGIN_DECLS

typedef struct QsStream QsStream;

/* Called from the main loop with the conditions seen (G_IO_IN/OUT/HUP/ERR)
 * or 0 when buffered TLS data is pending. */
typedef void (*QsStreamFunc)(QsStream *stream, GIOCondition cond,
                             gpointer user_data);

/* Takes ownership of `fd` (non-blocking, CLOEXEC). With `creds` the stream
 * starts in a TLS server handshake. */
QsStream *qs_stream_new(int fd, QsTlsCreds *creds, const char *peer,
                        GError **error);
void qs_stream_free(QsStream *stream);

const char *qs_stream_get_peer(QsStream *stream);
gboolean qs_stream_is_tls(QsStream *stream);
int qs_stream_get_fd(QsStream *stream);

/* Attaches a watch to the thread-default main context. A G_IO_OUT not
 * asked for before is reported once in the next iteration without waiting
 * for poll(), even if the socket is full; if still asked for after that
 * callback, poll() waits for room. A condition stays asked for until it is
 * changed. */
void qs_stream_watch(QsStream *stream, GIOCondition cond, QsStreamFunc func,
                     gpointer user_data);
void qs_stream_set_condition(QsStream *stream, GIOCondition cond);
void qs_stream_unwatch(QsStream *stream);

typedef enum {
    QS_STREAM_DONE,
    QS_STREAM_AGAIN,      /* would block; wait for the watch */
    QS_STREAM_ERROR,
} QsStreamStatus;

/* Advances the TLS handshake (DONE at once for plain streams). On AGAIN
 * *want_write tells which direction to wait for. */
QsStreamStatus qs_stream_handshake(QsStream *stream, gboolean *want_write,
                                   GError **error);

/* > 0: bytes read; 0: the peer closed; -1: error (set); -2: would block;
 * QS_STREAM_HTTP_REQUEST: see qs_stream_set_web(). */
gssize qs_stream_read(QsStream *stream, void *buf, gsize len, GError **error);

/* Writes from an iovec array (TLS writes only the first element, and after
 * -2 must be called again with the same first element). Returns bytes
 * written, -1 on error (set) or -2 if it would block. */
gssize qs_stream_writev(QsStream *stream, const struct iovec *iov, int n,
                        GError **error);

/* TRUE if TLS or the WebSocket layer holds data that poll() will not
 * announce. */
gboolean qs_stream_has_pending(QsStream *stream);

/*
 * A client whose first bytes are "GET " is answered as a WebSocket upgrade
 * (net/qs-ws.h) inside qs_stream_read(), and from then on reads and writes
 * carry SPICE in WebSocket frames; any other first bytes are SPICE as they
 * come. A bad upgrade request gets a 400 and the read fails, naming why.
 */
gboolean qs_stream_is_websocket(QsStream *stream);

/*
 * With `on`, a GET request that is no upgrade (a browser asking for the
 * console page) is the caller's: qs_stream_read() returns
 * QS_STREAM_HTTP_REQUEST once the request is complete, and
 * qs_stream_steal_http_request() gives it. The caller writes the answer
 * with qs_stream_writev() and frees the stream; reads return -2 from then.
 * Without, such a request gets a 400 and the read fails, naming why.
 */
#define QS_STREAM_HTTP_REQUEST (-3)
void qs_stream_set_web(QsStream *stream, gboolean on);
QsHttpRequest *qs_stream_steal_http_request(QsStream *stream);

/* Timers and idles of the net layer run in the thread-default main context
 * (the one the server was created in), so they are kept as GSource
 * pointers: g_source_remove() only knows the global default context. */
GSource *qs_net_timeout_source(guint ms, GSourceFunc func, gpointer data,
                               GDestroyNotify notify);
GSource *qs_net_idle_source(GSourceFunc func, gpointer data,
                            GDestroyNotify notify);
/* Destroys and releases *source if set, and clears it. */
void qs_net_source_cancel(GSource **source);

G_END_DECLS
