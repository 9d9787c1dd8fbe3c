/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChannel: what every SPICE channel shares: dispatch, ACK window, ping/pong RTT. */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "wire/qs-client-msg.h"
#include "net/qs-conn.h"

typedef struct QsChannel QsChannel;
typedef struct QsSession QsSession;

typedef gboolean (*QsChannelParseFunc)(uint16_t type, const uint8_t *data,
                                       size_t size, QsClientMsg *msg,
                                       GError **error);

#define QS_CHANNEL_ACK_LAG_RING 64
#define QS_CHANNEL_ACK_LAG_BUCKETS 1000

typedef struct {
    const char *name;
    QsChannelParseFunc parse;
    /* A parsed message that is not a base one; FALSE + error disconnects. */
    gboolean (*handle)(QsChannel *ch, const QsClientMsg *msg, GError **error);
    /* Optional: the connection can take more (queue low, ACK window open). */
    void (*writable)(QsChannel *ch);
    /* Optional: the session let go of the channel (replaced, the session
     * ended, or the channel closing by itself); once, before finalize. */
    void (*detached)(QsChannel *ch);
    /* Optional: frees what the channel type added. */
    void (*finalize)(QsChannel *ch);
    /* Optional: any PONG, with the id it echoes (the base keeps only the
     * RTT of the last PING). */
    void (*pong)(QsChannel *ch, uint32_t id, int64_t now_us);
    /* Optional: the session's mouse mode changed; the client is told. */
    void (*mouse_mode)(QsChannel *ch);
} QsChannelClass;

/* The owner's: its channel is closing (called only while attached, once). */
typedef void (*QsChannelClosedFunc)(QsChannel *ch, gpointer data);

/* A channel is created on attach and freed from its connection's closed
 * handler, never earlier: the session only forgets it (session = NULL). */
struct QsChannel {
    const QsChannelClass *klass;
    QsSession *session;             /* NULL once detached */
    QsConn *conn;                   /* owned reference */
    QsChannelClosedFunc closed;     /* its owner's, while attached */
    gpointer closed_data;

    /* ACK window: after SET_ACK(generation, window) the client sends
     * ACK_SYNC(generation) and one ACK per `window` messages received. */
    uint32_t ack_generation;        /* of the last SET_ACK, 0 = none sent */
    uint32_t ack_window;
    uint32_t client_generation;     /* from ACK_SYNC */
    uint32_t unacked;               /* messages sent and not yet ACKed */

    uint32_t ping_id;               /* id of the last PING sent */
    int64_t rtt_us;                 /* last PONG round trip, -1 if none */
    uint32_t pongs;                 /* PONGs of our pings received */
    uint64_t sent_bytes;            /* message bytes queued (payload + mini
                                     * header), for end-to-end ACKs */

    /* ACK lag: when the message each ACK will cover was sent. */
    uint64_t sent_count;
    int64_t ack_due_us[QS_CHANNEL_ACK_LAG_RING];
    uint32_t ack_due_head, ack_due_len;
    uint64_t ack_lag_n;
    int64_t ack_lag_sum_us;
    uint32_t ack_lag_hist[QS_CHANNEL_ACK_LAG_BUCKETS];  /* by 10 ms, last = more */
};

/* Mean and p95 of the time from sending a message to the client's ACK
 * covering it; FALSE if no ACK arrived. */
gboolean qs_channel_ack_lag(const QsChannel *ch, int64_t *mean_us, int64_t *p95_us);

/* spice-server's window (messages); sending stops at twice this. */
#define QS_CHANNEL_ACK_WINDOW 20

/* `size` is the channel type's struct size (QsChannel first). Installs the
 * connection handlers; takes a reference on `conn`. */
QsChannel *qs_channel_new(const QsChannelClass *klass, gsize size,
                          QsSession *session, QsConn *conn);

/* The session that attaches the channel says how it hears of its end. */
void qs_channel_set_closed_func(QsChannel *ch, QsChannelClosedFunc func, gpointer data);

/* Sends one message (payload may be NULL, ownership taken). FALSE when the
 * connection is closed or closing. */
gboolean qs_channel_send(QsChannel *ch, uint16_t type, GBytes *payload);
void qs_channel_set_ack(QsChannel *ch, uint32_t window);
/* Too many unacknowledged messages: send nothing until an ACK. */
gboolean qs_channel_ack_blocked(const QsChannel *ch);
/* Sends a PING stamped now_us; returns its id. */
uint32_t qs_channel_ping(QsChannel *ch, int64_t now_us);
/* Room to send (ACK window open and the queue under the low-water mark). */
gboolean qs_channel_can_send(QsChannel *ch);
gboolean qs_channel_has_cap(QsChannel *ch, guint cap);
void qs_channel_close(QsChannel *ch, const char *reason);

/* The connection handlers, exposed for tests that drive a fake QsConn. */
void qs_channel_receive(QsChannel *ch, uint16_t type, const uint8_t *data,
                        size_t size);
