/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A linked channel connection: framed reads, a byte-accounted send queue,
 * writable notifications and a single close. */

#include <string.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include "net/qs-conn-private.h"
#include "net/qs-frame.h"
#include "net/qs-tcp-facts.h"

#define READ_CHUNK (64 * 1024)
/* Bytes read per dispatch before yielding to other sources. */
#define READ_BUDGET (512 * 1024)
#define MAX_IOV 64
/* Small payloads travel with their header in one buffer, so TLS does not
 * make a record of a 6-byte header. */
#define COALESCE_LIMIT (16 * 1024)

typedef struct {
    GBytes *bytes;
    gsize offset;
} Chunk;

struct QsConn {
    gint ref;
    QsStream *stream;
    QsLinkInfo info;
    guint32 *caps;           /* common then channel caps */
    char *peer;
    QsFrameReader reader;
    gboolean mini;
    guint64 serial;

    GQueue queue;            /* of Chunk */
    gsize queued;
    gsize low_water;
    gsize hard_cap;
    gboolean above_low_water;

    QsConnHandlers handlers;
    gboolean have_handlers;
    gboolean paused;         /* qs_conn_set_reading(FALSE) */
    gpointer user_data;
    GDestroyNotify destroy;

    gboolean closed;
    char *close_reason;
    GSource *closed_idle;
};

gboolean qs_caps_test(const guint32 *caps, guint n_words, guint cap)
{
    return cap / 32 < n_words && (caps[cap / 32] >> (cap % 32)) & 1;
}

static void conn_io(QsStream *stream, GIOCondition cond, gpointer data);

static void chunk_free(gpointer p)
{
    Chunk *c = p;

    g_bytes_unref(c->bytes);
    g_free(c);
}

static void push_chunk(QsConn *conn, GBytes *bytes)
{
    Chunk *c = g_new0(Chunk, 1);

    c->bytes = bytes;
    g_queue_push_tail(&conn->queue, c);
    conn->queued += g_bytes_get_size(bytes);
}

static void update_condition(QsConn *conn)
{
    GIOCondition cond = 0;

    if (conn->closed) {
        return;
    }
    if (conn->have_handlers && !conn->paused) {
        cond |= G_IO_IN;
    }
    if (conn->queued > 0) {
        cond |= G_IO_OUT;
    }
    qs_stream_set_condition(conn->stream, cond);
}

QsConn *qs_conn_new(QsStream *stream, const QsLinkMess *mess,
                    guint32 session_id, gboolean view_only, const guint8 *first,
                    gsize first_len)
{
    QsConn *conn = g_new0(QsConn, 1);
    guint n = mess->n_common_caps + mess->n_channel_caps;

    conn->ref = 1;
    conn->stream = stream;
    conn->caps = g_new0(guint32, MAX(n, 1));
    memcpy(conn->caps, mess->common_caps, mess->n_common_caps * 4);
    memcpy(conn->caps + mess->n_common_caps, mess->channel_caps,
           mess->n_channel_caps * 4);
    conn->peer = g_strdup(qs_stream_get_peer(stream));
    conn->info = (QsLinkInfo) {
        .connection_id = mess->connection_id,
        .session_id = session_id,
        .channel_type = mess->channel_type,
        .channel_id = mess->channel_id,
        .common_caps = conn->caps,
        .n_common_caps = mess->n_common_caps,
        .channel_caps = conn->caps + mess->n_common_caps,
        .n_channel_caps = mess->n_channel_caps,
        .tls = qs_stream_is_tls(stream),
        .peer = conn->peer,
        .view_only = view_only,
    };
    conn->mini = qs_caps_test(conn->caps, mess->n_common_caps,
                              SPICE_COMMON_CAP_MINI_HEADER);
    qs_frame_reader_init(&conn->reader, conn->mini,
                         QS_CONN_DEFAULT_MAX_MESSAGE);
    g_queue_init(&conn->queue);
    conn->low_water = QS_CONN_DEFAULT_LOW_WATER;
    conn->hard_cap = QS_CONN_DEFAULT_HARD_CAP;
    if (first_len) {
        push_chunk(conn, g_bytes_new(first, first_len));
    }
    qs_stream_watch(stream, 0, conn_io, conn);
    update_condition(conn);
    return conn;
}

QsConn *qs_conn_ref(QsConn *conn)
{
    conn->ref++;
    return conn;
}

static void release_stream(QsConn *conn)
{
    if (conn->stream) {
        qs_stream_free(conn->stream);
        conn->stream = NULL;
    }
    g_queue_clear_full(&conn->queue, chunk_free);
    conn->queued = 0;
    /* The reader's buffer stays: a message handler that closes the
     * connection may still be looking at the message. */
}

void qs_conn_unref(QsConn *conn)
{
    if (!conn || --conn->ref > 0) {
        return;
    }
    /* Dropped without qs_conn_close(): nobody is left to tell. */
    release_stream(conn);
    qs_frame_reader_clear(&conn->reader);
    qs_net_source_cancel(&conn->closed_idle);
    if (conn->destroy) {
        conn->destroy(conn->user_data);
    }
    g_free(conn->close_reason);
    g_free(conn->caps);
    g_free(conn->peer);
    g_free(conn);
}

void qs_conn_set_handlers(QsConn *conn, const QsConnHandlers *handlers,
                          gpointer user_data, GDestroyNotify destroy)
{
    if (conn->destroy) {
        conn->destroy(conn->user_data);
    }
    conn->handlers = *handlers;
    conn->have_handlers = TRUE;
    conn->user_data = user_data;
    conn->destroy = destroy;
    update_condition(conn);
}

const QsLinkInfo *qs_conn_get_link_info(QsConn *conn)
{
    return &conn->info;
}

gboolean qs_conn_has_common_cap(QsConn *conn, guint cap)
{
    return qs_caps_test(conn->info.common_caps, conn->info.n_common_caps, cap);
}

gboolean qs_conn_has_channel_cap(QsConn *conn, guint cap)
{
    return qs_caps_test(conn->info.channel_caps, conn->info.n_channel_caps,
                        cap);
}

void qs_conn_set_max_message_size(QsConn *conn, guint32 max_size)
{
    conn->reader.max_size = MIN(max_size, QS_CONN_MAX_MESSAGE_CEILING);
}

void qs_conn_set_queue_limits(QsConn *conn, gsize low_water, gsize hard_cap)
{
    conn->low_water = low_water;
    conn->hard_cap = MAX(hard_cap, low_water);
}

gsize qs_conn_get_queued_bytes(QsConn *conn)
{
    return conn->queued;
}

void qs_conn_set_reading(QsConn *conn, gboolean reading)
{
    if (conn->paused != !reading) {
        conn->paused = !reading;
        update_condition(conn);
    }
}

gboolean qs_conn_is_closed(QsConn *conn)
{
    return conn->closed;
}

static gboolean closed_idle_cb(gpointer data)
{
    QsConn *conn = data;

    /* The source is finished by returning G_SOURCE_REMOVE; only drop our
     * pointer's reference. */
    g_source_unref(g_steal_pointer(&conn->closed_idle));
    if (conn->have_handlers && conn->handlers.closed) {
        conn->handlers.closed(conn, conn->close_reason, conn->user_data);
    }
    qs_frame_reader_clear(&conn->reader);
    return G_SOURCE_REMOVE;
}

void qs_conn_close(QsConn *conn, const char *reason)
{
    if (conn->closed) {
        return;
    }
    conn->closed = TRUE;
    conn->close_reason = g_strdup(reason);
    g_message("%s channel %u:%u from %s closed: %s",
              qs_channel_type_to_string(conn->info.channel_type),
              conn->info.channel_type, conn->info.channel_id, conn->peer,
              reason);
    if (conn->stream) {
        shutdown(qs_stream_get_fd(conn->stream), SHUT_RDWR);
    }
    release_stream(conn);
    /* The idle holds a reference so the closed handler sees a live conn. */
    conn->closed_idle = qs_net_idle_source(closed_idle_cb, qs_conn_ref(conn),
                                           (GDestroyNotify)qs_conn_unref);
}

gboolean qs_conn_send(QsConn *conn, guint16 type, GBytes *payload)
{
    guint8 hdr[QS_FRAME_FULL_HEADER_SIZE];
    gsize size = payload ? g_bytes_get_size(payload) : 0;
    gsize hlen;

    if (conn->closed) {
        return FALSE;
    }
    if (size > QS_CONN_MAX_MESSAGE_CEILING) {
        /* A bug in the upper layer, not the client's fault. */
        g_critical("refusing to send a %zu-byte message of type %u", size,
                   type);
        return FALSE;
    }
    hlen = qs_frame_build_header(hdr, conn->mini, ++conn->serial, type,
                                 (guint32)size);
    if (size > 0 && size <= COALESCE_LIMIT) {
        guint8 *buf = g_malloc(hlen + size);

        memcpy(buf, hdr, hlen);
        memcpy(buf + hlen, g_bytes_get_data(payload, NULL), size);
        push_chunk(conn, g_bytes_new_take(buf, hlen + size));
    } else {
        push_chunk(conn, g_bytes_new(hdr, hlen));
        if (size > 0) {
            push_chunk(conn, g_bytes_ref(payload));
        }
    }
    if (conn->queued > conn->hard_cap) {
        qs_conn_close(conn, "send queue over its hard cap: the client does "
                            "not read");
        return FALSE;
    }
    if (conn->queued >= conn->low_water) {
        conn->above_low_water = TRUE;
    }
    update_condition(conn);
    return TRUE;
}

/* Returns FALSE if the connection was closed. */
static gboolean flush(QsConn *conn)
{
    while (conn->queued > 0) {
        struct iovec iov[MAX_IOV];
        int n = 0;
        g_autoptr(GError) error = NULL;
        gssize w;

        for (GList *l = conn->queue.head; l && n < MAX_IOV; l = l->next) {
            Chunk *c = l->data;
            gsize len;
            const guint8 *d = g_bytes_get_data(c->bytes, &len);

            iov[n].iov_base = (void *)(d + c->offset);
            iov[n].iov_len = len - c->offset;
            n++;
        }
        w = qs_stream_writev(conn->stream, iov, n, &error);
        if (w == -2) {
            break;
        }
        if (w < 0) {
            qs_conn_close(conn, error->message);
            return FALSE;
        }
        conn->queued -= (gsize)w;
        while (w > 0) {
            Chunk *c = g_queue_peek_head(&conn->queue);
            gsize left = g_bytes_get_size(c->bytes) - c->offset;

            if ((gsize)w >= left) {
                w -= (gssize)left;
                chunk_free(g_queue_pop_head(&conn->queue));
            } else {
                c->offset += (gsize)w;
                w = 0;
            }
        }
    }
    return TRUE;
}

static void do_write(QsConn *conn)
{
    if (!flush(conn)) {
        return;
    }
    update_condition(conn);
    if (conn->above_low_water && conn->queued < conn->low_water) {
        conn->above_low_water = FALSE;
        if (conn->have_handlers && conn->handlers.writable) {
            conn->handlers.writable(conn, conn->user_data);
        }
    }
}

static void do_read(QsConn *conn)
{
    guint8 buf[READ_CHUNK];
    gsize budget = READ_BUDGET;

    while (!conn->closed && !conn->paused && budget > 0) {
        g_autoptr(GError) error = NULL;
        gssize n = qs_stream_read(conn->stream, buf, sizeof(buf), &error);
        gsize off = 0;

        if (n == -2) {
            return;
        }
        if (n == 0) {
            qs_conn_close(conn, "closed by the client");
            return;
        }
        if (n < 0) {
            qs_conn_close(conn, error->message);
            return;
        }
        budget -= MIN(budget, (gsize)n);
        while (off < (gsize)n && !conn->closed) {
            gsize used;
            QsFrameStatus st = qs_frame_reader_feed(&conn->reader, buf + off,
                                                    (gsize)n - off, &used,
                                                    &error);

            off += used;
            if (st == QS_FRAME_ERROR) {
                qs_conn_close(conn, error->message);
                return;
            }
            if (st == QS_FRAME_MESSAGE && conn->handlers.message) {
                conn->handlers.message(conn, conn->reader.type,
                                       conn->reader.body, conn->reader.size,
                                       conn->user_data);
            }
        }
    }
}

static void conn_io(QsStream *stream, GIOCondition cond, gpointer data)
{
    QsConn *conn = data;

    (void)stream;
    qs_conn_ref(conn);
    if ((cond & G_IO_OUT) && !conn->closed) {
        do_write(conn);
    }
    if ((cond & (G_IO_IN | G_IO_HUP | G_IO_ERR)) && !conn->closed) {
        if (conn->have_handlers && conn->paused) {
            /* Not reading: only the end of the connection matters. */
            if (cond & (G_IO_HUP | G_IO_ERR)) {
                qs_conn_close(conn, "closed by the client");
            }
        } else if (conn->have_handlers) {
            do_read(conn);
        } else if (cond & (G_IO_HUP | G_IO_ERR)) {
            qs_conn_close(conn, "connection lost");
        }
    }
    qs_conn_unref(conn);
}

gboolean qs_conn_get_link_facts(QsConn *conn, QsLinkFacts *facts)
{
    if (conn->closed || !conn->stream) {
        memset(facts, 0, sizeof(*facts));
        return FALSE;
    }
    return qs_tcp_facts_read(qs_stream_get_fd(conn->stream), facts);
}

void qs_conn_set_notsent_lowat(QsConn *conn, guint32 bytes)
{
    if (!conn->closed && conn->stream) {
        qs_tcp_facts_set_notsent_lowat(qs_stream_get_fd(conn->stream), bytes);
    }
}
