/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A fake of net's QsConn: records what the channels send, delivers client messages. */
#include "fake-peers.h"

#include <string.h>

struct QsConn {
    gint refs;
    QsLinkInfo info;
    guint32 caps[1];
    guint32 common_caps[1];
    QsConnHandlers handlers;
    gpointer user_data;
    GArray *sent;
    gsize queued;
    char *close_reason;
    gboolean closed_reported;
};

static void fake_msg_clear(gpointer p)
{
    FakeMsg *m = p;

    g_bytes_unref(m->payload);
}

QsConn *fake_conn_new(guint8 channel_type, guint8 channel_id,
                      guint32 connection_id, guint32 caps)
{
    QsConn *conn = g_new0(QsConn, 1);

    conn->refs = 1;
    conn->caps[0] = caps;
    conn->common_caps[0] = 1u << SPICE_COMMON_CAP_MINI_HEADER;
    conn->info.connection_id = connection_id;
    conn->info.channel_type = channel_type;
    conn->info.channel_id = channel_id;
    conn->info.channel_caps = conn->caps;
    conn->info.n_channel_caps = 1;
    conn->info.common_caps = conn->common_caps;
    conn->info.n_common_caps = 1;
    conn->info.peer = "fake:1";
    conn->sent = g_array_new(FALSE, TRUE, sizeof(FakeMsg));
    g_array_set_clear_func(conn->sent, fake_msg_clear);
    return conn;
}

void fake_conn_set_session_id(QsConn *conn, guint32 session_id)
{
    conn->info.session_id = session_id;
}

QsConn *qs_conn_ref(QsConn *conn)
{
    conn->refs++;
    return conn;
}

void qs_conn_unref(QsConn *conn)
{
    if (conn && --conn->refs == 0) {
        g_array_unref(conn->sent);
        g_free(conn->close_reason);
        g_free(conn);
    }
}

void qs_conn_set_handlers(QsConn *conn, const QsConnHandlers *handlers,
                          gpointer user_data, GDestroyNotify destroy)
{
    g_assert_null(destroy);
    conn->handlers = *handlers;
    conn->user_data = user_data;
}

const QsLinkInfo *qs_conn_get_link_info(QsConn *conn)
{
    return &conn->info;
}

gboolean qs_caps_test(const guint32 *caps, guint n_words, guint cap)
{
    return cap / 32 < n_words && (caps[cap / 32] & (1u << (cap % 32)));
}

gboolean qs_conn_has_common_cap(QsConn *conn, guint cap)
{
    return qs_caps_test(conn->common_caps, 1, cap);
}

gboolean qs_conn_has_channel_cap(QsConn *conn, guint cap)
{
    return qs_caps_test(conn->caps, 1, cap);
}

void qs_conn_set_max_message_size(QsConn *conn, guint32 max_size)
{
    (void)conn;
    (void)max_size;
}

void qs_conn_set_queue_limits(QsConn *conn, gsize low_water, gsize hard_cap)
{
    (void)conn;
    (void)low_water;
    (void)hard_cap;
}

gboolean qs_conn_send(QsConn *conn, guint16 type, GBytes *payload)
{
    FakeMsg m = { type, payload ? g_bytes_ref(payload) : g_bytes_new(NULL, 0) };

    if (conn->close_reason) {
        g_bytes_unref(m.payload);
        return FALSE;
    }
    g_array_append_val(conn->sent, m);
    return TRUE;
}

gsize qs_conn_get_queued_bytes(QsConn *conn)
{
    return conn->queued;
}

/* Net reports closing from the main loop, never from inside close. */
static gboolean report_closed(gpointer user_data)
{
    QsConn *conn = user_data;

    if (!conn->closed_reported && conn->handlers.closed) {
        conn->closed_reported = TRUE;
        conn->handlers.closed(conn, conn->close_reason, conn->user_data);
        conn->handlers = (QsConnHandlers){ 0 };     /* nothing follows closed */
    }
    qs_conn_unref(conn);
    return G_SOURCE_REMOVE;
}

void qs_conn_close(QsConn *conn, const char *reason)
{
    if (conn->close_reason) {
        return;
    }
    conn->close_reason = g_strdup(reason);
    g_idle_add(report_closed, qs_conn_ref(conn));
}

gboolean qs_conn_is_closed(QsConn *conn)
{
    return conn->close_reason != NULL;
}

void fake_conn_deliver(QsConn *conn, guint16 type, const void *data, gsize size)
{
    /* A private copy: the channel must not keep pointers into it. */
    g_autofree guint8 *copy = g_memdup2(data, size);

    if (conn->closed_reported) {
        return;                 /* net delivers nothing after closed */
    }
    g_assert_nonnull(conn->handlers.message);
    conn->handlers.message(conn, type, copy, (guint32)size, conn->user_data);
}

GArray *fake_conn_sent(QsConn *conn)
{
    return conn->sent;
}

void fake_conn_clear(QsConn *conn)
{
    g_array_set_size(conn->sent, 0);
}

void fake_conn_set_queued(QsConn *conn, gsize bytes)
{
    conn->queued = bytes;
}

void fake_conn_drain(QsConn *conn)
{
    conn->queued = 0;
    if (conn->handlers.writable && !conn->close_reason) {
        conn->handlers.writable(conn, conn->user_data);
    }
}

const char *fake_conn_close_reason(QsConn *conn)
{
    return conn->close_reason;
}

gboolean fake_conn_has_handlers(QsConn *conn)
{
    return conn->handlers.message != NULL;
}

