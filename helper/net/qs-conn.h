/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsConn: one linked, authenticated SPICE channel connection, as the channel
 * layer sees it (framed messages in and out, never the socket). */
#pragma once

#include <glib.h>
#include "util/qs-link-facts.h"
#include "net/qs-spice-protocol.h"

G_BEGIN_DECLS

/* Largest client message net delivers when the channel layer sets no bound
 * of its own; our client messages (inputs, agent chunks ≤ 2 KiB, acks) are
 * small. Kerbside drops anything above 16 MiB, which is the ceiling for
 * qs_conn_set_max_message_size() and for qs_conn_send() payloads. */
#define QS_CONN_DEFAULT_MAX_MESSAGE (256u * 1024u)
#define QS_CONN_MAX_MESSAGE_CEILING (16u * 1024u * 1024u)

/* Default send-queue marks: "writable" fires when the queue (our bytes not
 * yet taken by the kernel) falls below the low-water mark after having been
 * at or above it; a queue above the hard cap means the client stopped
 * reading and the connection is closed. */
#define QS_CONN_DEFAULT_LOW_WATER (256u * 1024u)
#define QS_CONN_DEFAULT_HARD_CAP (64u * 1024u * 1024u)

/* The link as the client asked for it and the server accepted it. Cap words
 * are bitmaps: cap n is bit (n % 32) of word n / 32. Owned by the QsConn,
 * valid for its lifetime. */
typedef struct {
    guint32 connection_id;      /* as sent by the client (0 on a new main) */
    guint32 session_id;         /* as decided by QsServerCallbacks.authorize */
    guint8 channel_type;        /* SPICE_CHANNEL_* */
    guint8 channel_id;
    const guint32 *common_caps; /* client common caps */
    guint n_common_caps;
    const guint32 *channel_caps; /* client channel caps */
    guint n_channel_caps;
    gboolean tls;               /* linked on the TLS port */
    const char *peer;           /* "address:port" of the client, for logs */
    gboolean view_only;         /* it showed the view-only ticket */
} QsLinkInfo;

/* TRUE if bit `cap` is set in a cap word array (bounds-checked). */
gboolean qs_caps_test(const guint32 *caps, guint n_words, guint cap);

typedef struct QsConn QsConn;

/* Called from the GMainContext the QsServer runs in. Any of them may call
 * qs_conn_send(), qs_conn_close() or qs_conn_unref() on the connection. */
typedef struct {
    /* One complete client message whose size is within the bound; `data` is
     * valid only during the call. Unknown types are the channel layer's
     * business (net does not interpret types). */
    void (*message)(QsConn *conn, guint16 type, const guint8 *data,
                    guint32 size, gpointer user_data);
    /* The send queue fell below the low-water mark after having reached
     * it: time to produce more. A producer that stops below the mark gets
     * no call and should check qs_conn_get_queued_bytes() itself. */
    void (*writable)(QsConn *conn, gpointer user_data);
    /* The connection is closed (by the peer, an error, a bound or
     * qs_conn_close()); called exactly once, never from inside
     * qs_conn_close() or qs_conn_send() themselves but from the main loop.
     * No further callbacks follow. */
    void (*closed)(QsConn *conn, const char *reason, gpointer user_data);
} QsConnHandlers;

QsConn *qs_conn_ref(QsConn *conn);
void qs_conn_unref(QsConn *conn);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsConn, qs_conn_unref)

/* Installs the handlers; messages are only read once handlers are set (the
 * new-connection callback sets them before returning). `destroy` frees
 * user_data when the connection is finalised or the handlers are replaced. */
void qs_conn_set_handlers(QsConn *conn, const QsConnHandlers *handlers,
                          gpointer user_data, GDestroyNotify destroy);

const QsLinkInfo *qs_conn_get_link_info(QsConn *conn);
gboolean qs_conn_has_common_cap(QsConn *conn, guint cap);
gboolean qs_conn_has_channel_cap(QsConn *conn, guint cap);

/* Bound for incoming messages (headers announcing more are a protocol error
 * that closes the connection before anything is allocated). Clamped to
 * QS_CONN_MAX_MESSAGE_CEILING. */
void qs_conn_set_max_message_size(QsConn *conn, guint32 max_size);

/* Reading the client's messages off (on by default): the messages of what
 * was already read (at most one 64 KiB read) are still delivered, then
 * the client's bytes wait in the socket, and TCP slows the client down.
 * While not reading, a reset or a failed write still closes the
 * connection; a client's orderly close is seen once reading resumes. */
void qs_conn_set_reading(QsConn *conn, gboolean reading);

/* Send-queue marks in bytes (see the defaults above). */
void qs_conn_set_queue_limits(QsConn *conn, gsize low_water, gsize hard_cap);

/* Queues one server message; net adds the mini header when the client has
 * SPICE_COMMON_CAP_MINI_HEADER, else the full SpiceDataHeader with an
 * increasing serial and sub_list 0. `payload` may be NULL (empty) and is
 * referenced, not copied. Returns FALSE when the connection is closed or
 * closing (the message is dropped), or when this message pushed the queue
 * past the hard cap (the connection is then being closed). */
gboolean qs_conn_send(QsConn *conn, guint16 type, GBytes *payload);

/* Bytes queued by qs_conn_send() and not yet accepted by the kernel (TLS
 * record overhead not included). The flow layer paces on this. */
gsize qs_conn_get_queued_bytes(QsConn *conn);

/* Closes the connection: queued data is dropped, the socket shut down, the
 * reason logged once, and the closed handler called from an idle. Safe to
 * call more than once and from any handler. */
/* A snapshot of the socket for the flow layer (TCP_INFO, SIOCOUTQ,
 * SIOCOUTQNSD). bytes_written is socket-level (TLS ciphertext included):
 * tcpi_bytes_acked plus what the kernel still holds, so it lines up with
 * bytes_acked. FALSE (facts zeroed) when the connection is closed or the
 * socket is not TCP. */
gboolean qs_conn_get_link_facts(QsConn *conn, QsLinkFacts *facts);

/* TCP_NOTSENT_LOWAT: the kernel keeps at most this many unsent bytes
 * before it stops reporting the socket writable. Ignored where the socket
 * does not support it. */
void qs_conn_set_notsent_lowat(QsConn *conn, guint32 bytes);

void qs_conn_close(QsConn *conn, const char *reason);
gboolean qs_conn_is_closed(QsConn *conn);

G_END_DECLS
