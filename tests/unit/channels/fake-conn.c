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
    guint sent_after_close;
    gboolean ignore_pings;
    gboolean paused;            /* qs_conn_set_reading(FALSE) */
    guint32 max_message;        /* qs_conn_set_max_message_size, 0 = default */

    GArray *delays;             /* int64_t per sent message: link backlog it met */
    uint64_t link_bw, link_written, link_drained;
    uint32_t link_rtt;
    int64_t link_last_us;
#define FAKE_LINK_HIST 4096
    /* Allocated by fake_conn_set_link() only: 64 KiB a connection that
     * most tests (and every fuzz input) would otherwise zero for nothing. */
    int64_t *link_hist_t;
    uint64_t *link_hist_d;
    guint link_hist_len;
};

static const QsDisplayClock *link_clock;    /* NULL: the real one */

void fake_conn_use_clock(const QsDisplayClock *clock)
{
    link_clock = clock;
}

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
    conn->delays = g_array_new(FALSE, TRUE, sizeof(int64_t));
    g_array_set_clear_func(conn->sent, fake_msg_clear);
    return conn;
}

void fake_conn_set_session_id(QsConn *conn, guint32 session_id)
{
    conn->info.session_id = session_id;
}

void fake_conn_set_view_only(QsConn *conn)
{
    conn->info.view_only = TRUE;
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
        g_array_unref(conn->delays);
        g_free(conn->close_reason);
        g_free(conn->link_hist_t);
        g_free(conn->link_hist_d);
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
    conn->max_message = max_size;
}

void qs_conn_set_queue_limits(QsConn *conn, gsize low_water, gsize hard_cap)
{
    (void)conn;
    (void)low_water;
    (void)hard_cap;
}

typedef struct {
    QsConn *conn;
    guint8 body[12];
} Pong;

static gboolean deliver_pong(gpointer user_data)
{
    Pong *p = user_data;

    if (!p->conn->close_reason && p->conn->handlers.message) {
        fake_conn_deliver(p->conn, SPICE_MSGC_PONG, p->body, sizeof(p->body));
    }
    qs_conn_unref(p->conn);
    g_free(p);
    return G_SOURCE_REMOVE;
}

void fake_conn_set_ignore_pings(QsConn *conn, gboolean ignore)
{
    conn->ignore_pings = ignore;
}

gboolean qs_conn_send(QsConn *conn, guint16 type, GBytes *payload)
{
    FakeMsg m = { type, payload ? g_bytes_ref(payload) : g_bytes_new(NULL, 0) };

    if (conn->close_reason) {
        conn->sent_after_close++;
        g_bytes_unref(m.payload);
        return FALSE;
    }
    {
        int64_t delay = fake_conn_link_delay_us(conn);

        g_array_append_val(conn->delays, delay);
        conn->link_written += g_bytes_get_size(m.payload) + 6;     /* mini header */
    }
    g_array_append_val(conn->sent, m);
    if (type == SPICE_MSG_PING && !conn->ignore_pings &&
        g_bytes_get_size(m.payload) >= 12) {
        /* Like spice-gtk: the PONG echoes id and time once the client has
         * read the PING: on the next loop iteration, or with a simulated
         * link when the backlog ahead of it drained and a round trip
         * passed. */
        Pong *p = g_new0(Pong, 1);
        int64_t due = conn->link_bw ? fake_conn_link_delay_us(conn) + conn->link_rtt : 0;
        GSource *later = qs_display_clock_timeout(link_clock, (guint)((due + 999) / 1000));

        p->conn = qs_conn_ref(conn);
        memcpy(p->body, g_bytes_get_data(m.payload, NULL), sizeof(p->body));
        g_source_set_callback(later, deliver_pong, p, NULL);
        g_source_attach(later, NULL);
        g_source_unref(later);
    }
    return TRUE;
}

gsize qs_conn_get_queued_bytes(QsConn *conn)
{
    return conn->queued;
}

static void report_closed_now(QsConn *conn)
{
    if (!conn->closed_reported && conn->handlers.closed) {
        conn->closed_reported = TRUE;
        conn->handlers.closed(conn, conn->close_reason, conn->user_data);
        conn->handlers = (QsConnHandlers){ 0 };     /* nothing follows closed */
    }
}

/* Net reports closing from the main loop, never from inside close. */
static gboolean report_closed(gpointer user_data)
{
    QsConn *conn = user_data;

    report_closed_now(conn);
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
    g_array_set_size(conn->delays, 0);
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

void fake_conn_vanish(QsConn *conn, const char *reason)
{
    /* Called from the test's top level, where net's socket source would
     * run, never from inside a channel's call. */
    qs_conn_close(conn, reason);
    report_closed_now(conn);
}

guint fake_conn_sent_after_close(QsConn *conn)
{
    return conn->sent_after_close;
}

gpointer fake_conn_channel(QsConn *conn)
{
    return conn->handlers.message ? conn->user_data : NULL;
}

gboolean fake_conn_has_handlers(QsConn *conn)
{
    return conn->handlers.message != NULL;
}


/*
 * An optional simulated link (fake_conn_set_link): one bottleneck of
 * `bw` bytes/s draining what was sent, and a base round trip; ACKs report
 * what drained `rtt` ago. Enough for the pacer to see a queue build, and
 * for tests to see how long each message waited for the wire.
 */
static void link_advance(QsConn *conn)
{
    int64_t now = qs_display_clock_now(link_clock);
    uint64_t can = (uint64_t)(now - conn->link_last_us) * conn->link_bw / G_USEC_PER_SEC;

    if (can > 0) {
        conn->link_drained = MIN(conn->link_written, conn->link_drained + can);
        conn->link_last_us = now;
    }
    if (conn->link_hist_len == 0 ||
        now - conn->link_hist_t[(conn->link_hist_len - 1) % FAKE_LINK_HIST] >= 1000) {
        conn->link_hist_t[conn->link_hist_len % FAKE_LINK_HIST] = now;
        conn->link_hist_d[conn->link_hist_len % FAKE_LINK_HIST] = conn->link_drained;
        conn->link_hist_len++;
    }
}

void fake_conn_set_link(QsConn *conn, uint64_t bytes_per_s, uint32_t rtt_us)
{
    if (!conn->link_hist_t) {
        conn->link_hist_t = g_new0(int64_t, FAKE_LINK_HIST);
        conn->link_hist_d = g_new0(uint64_t, FAKE_LINK_HIST);
    }
    conn->link_bw = bytes_per_s;
    conn->link_rtt = rtt_us;
    conn->link_last_us = qs_display_clock_now(link_clock);
}

int64_t fake_conn_link_delay_us(QsConn *conn)
{
    if (!conn->link_bw) {
        return 0;
    }
    link_advance(conn);
    return (int64_t)((conn->link_written - conn->link_drained) * G_USEC_PER_SEC / conn->link_bw);
}

int64_t fake_conn_msg_delay_us(QsConn *conn, guint i)
{
    g_assert_cmpuint(i, <, conn->delays->len);
    return g_array_index(conn->delays, int64_t, i);
}

gboolean qs_conn_get_link_facts(QsConn *conn, QsLinkFacts *facts)
{
    int64_t now = qs_display_clock_now(link_clock);
    uint64_t acked = 0;

    memset(facts, 0, sizeof(*facts));
    if (!conn->link_bw) {
        return FALSE;           /* no socket: the pacer runs on its defaults */
    }
    link_advance(conn);
    for (guint k = MIN(conn->link_hist_len, FAKE_LINK_HIST); k > 0; k--) {
        guint j = (conn->link_hist_len - k) % FAKE_LINK_HIST;

        if (now - conn->link_hist_t[j] >= conn->link_rtt) {
            acked = conn->link_hist_d[j];
        }
    }
    facts->bytes_written = conn->link_written;
    facts->bytes_acked = acked;
    facts->in_flight_bytes = (uint32_t)MIN(conn->link_written - acked, G_MAXUINT32);
    facts->rtt_us = conn->link_rtt + (uint32_t)fake_conn_link_delay_us(conn);
    facts->min_rtt_us = conn->link_rtt;
    facts->delivery_rate = conn->link_bw;
    facts->delivery_rate_app_limited = conn->link_written == conn->link_drained;
    return TRUE;
}

void qs_conn_set_notsent_lowat(QsConn *conn, guint32 bytes)
{
    (void)conn;
    (void)bytes;
}

void qs_conn_set_reading(QsConn *conn, gboolean reading)
{
    conn->paused = !reading;
}

gboolean fake_conn_is_reading(QsConn *conn)
{
    return !conn->paused;
}

guint32 fake_conn_max_message(QsConn *conn)
{
    return conn->max_message;
}
