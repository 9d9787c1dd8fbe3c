/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The base of every channel: parses client messages, handles the base ones, keeps ACK and RTT state. */
#include "channels/qs-channel.h"
#include "wire/qs-msg.h"

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
    if (ch->session && ch->closed) {
        ch->closed(ch, ch->closed_data);
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

void qs_channel_set_closed_func(QsChannel *ch, QsChannelClosedFunc func, gpointer data)
{
    ch->closed = func;
    ch->closed_data = data;
}

gboolean qs_channel_send(QsChannel *ch, uint16_t type, GBytes *payload)
{
    gboolean ok = qs_conn_send(ch->conn, type, payload);

    if (ok) {
        /* 6: the mini header; without it the count is 12 bytes a message
         * short, which only end-to-end estimates read, as differences. */
        ch->sent_bytes += 6 + (payload ? g_bytes_get_size(payload) : 0);
    }
    if (payload) {
        g_bytes_unref(payload);
    }
    if (ok && ch->ack_window) {
        ch->unacked++;
        ch->sent_count++;
        if (ch->sent_count % ch->ack_window == 0 && ch->ack_due_len < QS_CHANNEL_ACK_LAG_RING) {
            ch->ack_due_us[(ch->ack_due_head + ch->ack_due_len++) % QS_CHANNEL_ACK_LAG_RING] =
                g_get_monotonic_time();
        }
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
    ch->sent_count = 0;
    ch->ack_due_len = 0;
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

uint32_t qs_channel_ping(QsChannel *ch, int64_t now_us)
{
    ch->ping_id++;
    qs_channel_send(ch, SPICE_MSG_PING, qs_msg_ping(ch->ping_id, (uint64_t)now_us));
    return ch->ping_id;
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
            if (ch->ack_due_len) {
                int64_t lag = g_get_monotonic_time() - ch->ack_due_us[ch->ack_due_head];

                ch->ack_due_head = (ch->ack_due_head + 1) % QS_CHANNEL_ACK_LAG_RING;
                ch->ack_due_len--;
                ch->ack_lag_n++;
                ch->ack_lag_sum_us += lag;
                ch->ack_lag_hist[MIN(lag / 10000, QS_CHANNEL_ACK_LAG_BUCKETS - 1)]++;
            }
        }
        break;
    case SPICE_MSGC_PONG:
        /* spice-gtk echoes id and timestamp; only our last ping counts. */
        if (msg->u.pong.id == ch->ping_id && ch->ping_id) {
            int64_t rtt = g_get_monotonic_time() - (int64_t)msg->u.pong.timestamp;

            if (rtt >= 0) {
                ch->rtt_us = rtt;
                ch->pongs++;
            }
        }
        if (ch->session && ch->klass->pong) {
            ch->klass->pong(ch, msg->u.pong.id, g_get_monotonic_time());
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

gboolean qs_channel_ack_lag(const QsChannel *ch, int64_t *mean_us, int64_t *p95_us)
{
    uint64_t want, seen = 0;

    if (!ch->ack_lag_n) {
        return FALSE;
    }
    *mean_us = ch->ack_lag_sum_us / (int64_t)ch->ack_lag_n;
    want = (ch->ack_lag_n * 95 + 99) / 100;
    *p95_us = 0;
    for (uint32_t i = 0; i < QS_CHANNEL_ACK_LAG_BUCKETS; i++) {
        seen += ch->ack_lag_hist[i];
        if (seen >= want) {
            *p95_us = (int64_t)(i + 1) * 10000;
            break;
        }
    }
    return TRUE;
}
