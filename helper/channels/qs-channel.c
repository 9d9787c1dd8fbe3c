/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The base of every channel: parses client messages, handles the base ones, keeps ACK and RTT state. */
#include "channels/qs-channel.h"
#include "channels/qs-msg.h"
#include "channels/qs-session.h"

#include <spice/enums.h>

static void on_message(QsConn *conn, guint16 type, const guint8 *data,
                       guint32 size, gpointer user_data)
{
    (void)conn;
    qs_channel_receive(user_data, type, data, size);
}

static void on_writable(QsConn *conn, gpointer user_data)
{
    QsChannel *ch = user_data;

    (void)conn;
    if (ch->session && ch->klass->writable) {
        ch->klass->writable(ch);
    }
}

/* The end of a channel: net calls this exactly once, after which the
 * connection delivers nothing more, so the channel can go. */
static void on_closed(QsConn *conn, const char *reason, gpointer user_data)
{
    QsChannel *ch = user_data;

    (void)conn;
    (void)reason;
    if (ch->session) {
        qs_session_channel_closed(ch->session, ch);
    }
    if (ch->klass->finalize) {
        ch->klass->finalize(ch);
    }
    qs_conn_unref(ch->conn);
    g_free(ch);
}

QsChannel *qs_channel_new(const QsChannelClass *klass, gsize size,
                          QsSession *session, QsConn *conn)
{
    static const QsConnHandlers handlers = {
        .message = on_message,
        .writable = on_writable,
        .closed = on_closed,
    };
    QsChannel *ch;

    g_assert(size >= sizeof(QsChannel));
    ch = g_malloc0(size);
    ch->klass = klass;
    ch->session = session;
    ch->conn = qs_conn_ref(conn);
    ch->rtt_us = -1;
    qs_conn_set_handlers(conn, &handlers, ch, NULL);
    return ch;
}

gboolean qs_channel_send(QsChannel *ch, uint16_t type, GBytes *payload)
{
    gboolean ok = qs_conn_send(ch->conn, type, payload);

    if (payload) {
        g_bytes_unref(payload);
    }
    if (ok && ch->ack_window) {
        ch->unacked++;
    }
    return ok;
}

void qs_channel_set_ack(QsChannel *ch, uint32_t window)
{
    /* A new generation: ACKs for the previous one no longer count. */
    ch->ack_generation++;
    ch->ack_window = 0;
    qs_channel_send(ch, SPICE_MSG_SET_ACK, qs_msg_set_ack(ch->ack_generation, window));
    ch->ack_window = window;
    ch->unacked = 0;
}

gboolean qs_channel_ack_blocked(const QsChannel *ch)
{
    return ch->ack_window && ch->unacked >= 2 * ch->ack_window;
}

gboolean qs_channel_can_send(QsChannel *ch)
{
    return !qs_conn_is_closed(ch->conn) && !qs_channel_ack_blocked(ch) &&
           qs_conn_get_queued_bytes(ch->conn) < QS_CONN_DEFAULT_LOW_WATER;
}

void qs_channel_ping(QsChannel *ch, int64_t now_us)
{
    ch->ping_id++;
    qs_channel_send(ch, SPICE_MSG_PING, qs_msg_ping(ch->ping_id, (uint64_t)now_us));
}

gboolean qs_channel_has_cap(QsChannel *ch, guint cap)
{
    return qs_conn_has_channel_cap(ch->conn, cap);
}

void qs_channel_close(QsChannel *ch, const char *reason)
{
    qs_conn_close(ch->conn, reason);
}

static void handle_base(QsChannel *ch, const QsClientMsg *msg)
{
    gboolean was_blocked = qs_channel_ack_blocked(ch);

    switch (msg->type) {
    case SPICE_MSGC_ACK_SYNC:
        ch->client_generation = msg->u.generation;
        break;
    case SPICE_MSGC_ACK:
        if (ch->ack_window && ch->client_generation == ch->ack_generation) {
            ch->unacked -= MIN(ch->unacked, ch->ack_window);
        }
        break;
    case SPICE_MSGC_PONG:
        /* spice-gtk echoes id and timestamp; only our last ping counts. */
        if (msg->u.pong.id == ch->ping_id && ch->ping_id) {
            int64_t rtt = g_get_monotonic_time() - (int64_t)msg->u.pong.timestamp;

            if (rtt >= 0) {
                ch->rtt_us = rtt;
            }
        }
        break;
    case SPICE_MSGC_DISCONNECTING:
        qs_channel_close(ch, "client is disconnecting");
        break;
    default:
        /* MIGRATE_FLUSH_MARK, MIGRATE_DATA: we never migrate. */
        break;
    }
    if (was_blocked && !qs_channel_ack_blocked(ch) && ch->session &&
        ch->klass->writable) {
        ch->klass->writable(ch);
    }
}

void qs_channel_receive(QsChannel *ch, uint16_t type, const uint8_t *data,
                        size_t size)
{
    QsClientMsg msg;
    g_autoptr(GError) error = NULL;

    if (qs_conn_is_closed(ch->conn)) {
        return;
    }
    if (!ch->klass->parse(type, data, size, &msg, &error)) {
        qs_channel_close(ch, error->message);
        return;
    }
    if (type < SPICE_MSG_BASE_LAST) {
        handle_base(ch, &msg);
    } else if (ch->session && !ch->klass->handle(ch, &msg, &error)) {
        qs_channel_close(ch, error->message);
    }
}
