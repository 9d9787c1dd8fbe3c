/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The link stage of one connection, from accept (or TLS handshake) to the
 * hand-over of an authenticated QsConn, and the limits on such pending
 * connections. */

#include <string.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <gio/gio.h>
#include "net/qs-conn-private.h"
#include "net/qs-server-private.h"

typedef enum {
    ST_HANDSHAKE,
    ST_HEADER,
    ST_MESS,
    ST_KEY,
    ST_MECH,
    ST_TICKET,
    ST_DELAY,
    ST_CLOSING,       /* writing a final error, then dropped */
    ST_WEB,           /* answering a console-page request, then dropped */
} LinkState;

typedef struct {
    QsServer *server;
    QsStream *stream;
    char *source;     /* peer address without the port */
    GList *node;      /* in server->pending */
    LinkState state;
    guint8 in[QS_LINK_HEADER_SIZE + QS_LINK_MAX_BODY];
    gsize in_have;
    gsize in_need;
    guint8 out[QS_LINK_REPLY_MAX_SIZE];
    gsize out_len;
    gsize out_off;
    QsLinkMess mess;
    guint32 caps[QS_SERVER_MAX_CHANNEL_CAPS];
    guint n_caps;
    QsRsaKey *key;
    guint64 key_wait;
    GSource *deadline;
    GSource *delay;
    gboolean charged; /* took a token of the link rate limit */
    gboolean skip_auth; /* handed in with no credential asked */
    QsLinkGrant grant;  /* what its ticket granted */
    QsWebExchange *web; /* in ST_WEB */
} Pending;

static void pending_io(QsStream *stream, GIOCondition cond, gpointer data);

static void pending_free(Pending *p)
{
    QsServer *s = p->server;

    qs_link_limits_leave(s, p->source);
    g_queue_delete_link(&s->pending, p->node);
    if (p->key_wait) {
        qs_key_pool_cancel(s->keys, p->key_wait);
    }
    qs_net_source_cancel(&p->deadline);
    qs_net_source_cancel(&p->delay);
    qs_rsa_key_free(p->key);
    qs_web_exchange_free(p->web);
    qs_stream_free(p->stream);
    g_free(p->source);
    explicit_bzero(p->in, sizeof(p->in));
    g_free(p);
}

static void pending_drop(Pending *p, const char *why)
{
    g_debug("link from %s dropped: %s", qs_stream_get_peer(p->stream), why);
    pending_free(p);
}

static void update_condition(Pending *p)
{
    GIOCondition cond = 0;

    if (p->out_off < p->out_len || p->state == ST_WEB) {
        cond |= G_IO_OUT;
    }
    if (p->state != ST_KEY && p->state != ST_DELAY && p->state != ST_CLOSING &&
        p->state != ST_WEB) {
        cond |= G_IO_IN;
    }
    qs_stream_set_condition(p->stream, cond);
}

/* Queues bytes for the client (the whole link exchange fits in `out`). */
static void queue_out(Pending *p, const guint8 *data, gsize len)
{
    if (p->out_off == p->out_len) {
        p->out_off = p->out_len = 0;
    }
    g_assert(p->out_len + len <= sizeof(p->out));
    memcpy(p->out + p->out_len, data, len);
    p->out_len += len;
}

/* Refusal before authentication: a full link reply carrying the error. */
static void fail_reply(Pending *p, SpiceLinkErr err)
{
    guint8 buf[QS_LINK_REPLY_MAX_SIZE];
    gsize n = qs_link_build_reply(buf, err, NULL, NULL, 0, NULL, 0);

    if (qs_link_log_allowed(p->server)) {
        g_message("link from %s (%s channel) refused: %s",
                  qs_stream_get_peer(p->stream),
                  qs_channel_type_to_string(p->mess.channel_type),
                  qs_link_err_to_string(err));
    }
    queue_out(p, buf, n);
    p->state = ST_CLOSING;
}

/* Refusal after the reply: the u32 link result. */
static void fail_result(Pending *p, SpiceLinkErr err, const char *why)
{
    guint8 buf[4];

    if (qs_link_log_allowed(p->server)) {
        g_message("link from %s (%s channel) refused: %s",
                  qs_stream_get_peer(p->stream),
                  qs_channel_type_to_string(p->mess.channel_type), why);
    }
    qs_link_put_u32(buf, err);
    queue_out(p, buf, sizeof(buf));
    p->state = ST_CLOSING;
}

static void send_reply(Pending *p)
{
    static const guint32 common =
        1u << SPICE_COMMON_CAP_PROTOCOL_AUTH_SELECTION |
        1u << SPICE_COMMON_CAP_AUTH_SPICE |
        1u << SPICE_COMMON_CAP_MINI_HEADER;
    guint8 spki[QS_RSA_SPKI_BYTES];
    guint8 buf[QS_LINK_REPLY_MAX_SIZE];
    gsize n;

    qs_rsa_key_export_spki(p->key, spki);
    n = qs_link_build_reply(buf, SPICE_LINK_ERR_OK, spki, &common, 1,
                            p->caps, p->n_caps);
    queue_out(p, buf, n);
    p->in_have = 0;
    if (qs_caps_test(p->mess.common_caps, p->mess.n_common_caps,
                     SPICE_COMMON_CAP_PROTOCOL_AUTH_SELECTION)) {
        p->state = ST_MECH;
        p->in_need = 4;
    } else {
        p->state = ST_TICKET;
        p->in_need = QS_LINK_TICKET_SIZE;
    }
}

static void key_ready(QsRsaKey *key, gpointer data)
{
    Pending *p = data;

    p->key_wait = 0;
    if (!key) {
        fail_reply(p, SPICE_LINK_ERR_ERROR);
    } else {
        p->key = key;
        send_reply(p);
    }
    update_condition(p);
}

static QsLinkInfo info_of(Pending *p, guint32 session_id)
{
    return (QsLinkInfo) {
        .connection_id = p->mess.connection_id,
        .session_id = session_id,
        .channel_type = p->mess.channel_type,
        .channel_id = p->mess.channel_id,
        .view_only = p->grant.view_only,
        .common_caps = p->mess.common_caps,
        .n_common_caps = p->mess.n_common_caps,
        .channel_caps = p->mess.channel_caps,
        .n_channel_caps = p->mess.n_channel_caps,
        .tls = qs_stream_is_tls(p->stream),
        .peer = qs_stream_get_peer(p->stream),
    };
}

static void handle_mess(Pending *p)
{
    QsServer *s = p->server;
    SpiceLinkErr err = qs_link_parse_mess(p->in + QS_LINK_HEADER_SIZE,
                                          p->in_need - QS_LINK_HEADER_SIZE,
                                          &p->mess);
    QsLinkInfo info;

    if (err != SPICE_LINK_ERR_OK) {
        fail_reply(p, err);
        return;
    }
    if (!qs_stream_is_tls(p->stream) && p->mess.channel_type < 32 &&
        (s->secure_mask >> p->mess.channel_type) & 1) {
        fail_reply(p, SPICE_LINK_ERR_NEED_SECURED);
        return;
    }
    info = info_of(p, 0);
    p->n_caps = 0;
    err = s->cb.prepare ? s->cb.prepare(&info, p->caps, &p->n_caps,
                                        s->user_data)
                        : SPICE_LINK_ERR_OK;
    p->n_caps = MIN(p->n_caps, QS_SERVER_MAX_CHANNEL_CAPS);
    if (err != SPICE_LINK_ERR_OK) {
        fail_reply(p, err);
        return;
    }
    /* The key is what a plain link attempt costs us (a fresh RSA key,
     * ~7 ms of a core): each source gets a bounded rate of them. */
    if (!p->charged && !qs_link_charge(s, p->source)) {
        fail_reply(p, SPICE_LINK_ERR_ERROR);
        return;
    }
    p->charged = TRUE;
    p->key = qs_key_pool_take(s->keys);
    if (p->key) {
        send_reply(p);
    } else {
        p->state = ST_KEY;
        p->key_wait = qs_key_pool_wait(s->keys, key_ready, p);
    }
}

static gboolean delay_done(gpointer data)
{
    Pending *p = data;

    g_source_unref(g_steal_pointer(&p->delay));
    fail_result(p, SPICE_LINK_ERR_PERMISSION_DENIED, "wrong or expired credential");
    update_condition(p);
    return G_SOURCE_REMOVE;
}

/* Returns FALSE if `p` was handed over (freed). */
static gboolean finish_link(Pending *p)
{
    QsServer *s = p->server;
    guint32 session_id = 0;
    QsLinkInfo info = info_of(p, 0);
    SpiceLinkErr err;
    guint8 ok[4];
    QsStream *stream;
    QsConn *conn;
    int fd;

    err = s->cb.authorize ? s->cb.authorize(&info, &session_id, s->user_data)
                          : SPICE_LINK_ERR_OK;
    if (err != SPICE_LINK_ERR_OK) {
        fail_result(p, err, qs_link_err_to_string(err));
        return TRUE;
    }
    qs_link_auth_commit(s, &p->grant, session_id);
    if (s->rate && p->charged) {
        qs_rate_limit_refund(s->rate, p->source, s->rate_clock());
    }
    fd = qs_stream_get_fd(p->stream);
    /* Linked channels live long: let TCP notice a vanished client. */
    setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &(int){1}, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &(int){60}, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &(int){10}, sizeof(int));
    setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &(int){6}, sizeof(int));

    qs_link_put_u32(ok, SPICE_LINK_ERR_OK);
    stream = p->stream;
    p->stream = NULL;
    qs_stream_unwatch(stream);
    /* Anything not yet written of the reply goes first. */
    {
        guint8 first[QS_LINK_REPLY_MAX_SIZE + 4];
        gsize n = p->out_len - p->out_off;

        memcpy(first, p->out + p->out_off, n);
        memcpy(first + n, ok, 4);
        conn = qs_conn_new(stream, &p->mess, session_id, p->grant.view_only, first, n + 4);
    }
    g_message("%s channel %u:%u linked from %s%s%s%s%s%s",
              qs_channel_type_to_string(p->mess.channel_type),
              p->mess.channel_type, p->mess.channel_id, qs_stream_get_peer(stream),
              qs_stream_is_tls(stream) ? " (TLS)" : "",
              qs_stream_is_websocket(stream) ? " (WebSocket)" : "",
              p->grant.view_only ? " (view only)" : "", p->grant.by_token ? " (token)" : "",
              p->skip_auth ? " (added with no credential asked)" : "");
    pending_free(p);
    if (s->cb.attach) {
        s->cb.attach(conn, s->user_data);
    } else {
        qs_conn_unref(conn);
    }
    return FALSE;
}

/* Returns FALSE if `p` was handed over (freed). */
static gboolean handle_ticket(Pending *p)
{
    QsServer *s = p->server;
    guint8 plain[QS_RSA_BYTES];
    gsize len = 0;
    gboolean ok;

    ok = qs_rsa_oaep_decrypt_ticket(p->key, p->in, plain, sizeof(plain), &len);
    /* One ticket per key. */
    qs_rsa_key_free(p->key);
    p->key = NULL;
    if (ok) {
        /* The client sends the password and its NUL; compare up to it. */
        const guint8 *nul = memchr(plain, '\0', len);

        qs_link_auth_check(s, plain, nul ? (gsize)(nul - plain) : len,
                           p->mess.channel_type, p->mess.connection_id, &p->grant);
    }
    explicit_bzero(plain, sizeof(plain));
    if (p->skip_auth) {
        /* As spice-server's skip_auth: the ticket was read, not checked. */
        memset(&p->grant, 0, sizeof(p->grant));
        p->grant.ok = TRUE;
    }
    if (p->grant.ok) {
        return finish_link(p);
    }
    if (qs_link_log_allowed(s)) {
        g_message("link from %s (%s channel): %s", qs_stream_get_peer(p->stream),
                  qs_channel_type_to_string(p->mess.channel_type),
                  !ok ? "undecryptable ticket" : p->grant.why);
    }
    /* Slow down guessing; the connection still counts as pending. */
    p->state = ST_DELAY;
    p->delay = qs_net_timeout_source(s->auth_fail_delay_ms, delay_done, p,
                                     NULL);
    return TRUE;
}

/* Returns FALSE if `p` was freed. */
static gboolean handle_input(Pending *p)
{
    guint32 body;
    SpiceLinkErr err;

    switch (p->state) {
    case ST_HEADER:
        err = qs_link_parse_header(p->in, p->in_have, &body);
        if (err != SPICE_LINK_ERR_OK) {
            fail_reply(p, err);
            return TRUE;
        }
        p->state = ST_MESS;
        p->in_need = QS_LINK_HEADER_SIZE + body;
        return TRUE;
    case ST_MESS:
        handle_mess(p);
        return TRUE;
    case ST_MECH: {
        guint32 mech = qs_link_get_u32(p->in);

        if (mech == SPICE_COMMON_CAP_AUTH_SPICE) {
            p->state = ST_TICKET;
            p->in_have = 0;
            p->in_need = QS_LINK_TICKET_SIZE;
        } else {
            fail_result(p, SPICE_LINK_ERR_INVALID_DATA,
                        mech == SPICE_COMMON_CAP_AUTH_SASL
                            ? "SASL authentication is not supported"
                            : "unknown authentication mechanism");
        }
        return TRUE;
    }
    case ST_TICKET:
        p->in_have = 0;
        return handle_ticket(p);
    default:
        return TRUE;
    }
}

static gboolean do_read(Pending *p)
{
    while (p->state == ST_HEADER || p->state == ST_MESS ||
           p->state == ST_MECH || p->state == ST_TICKET) {
        g_autoptr(GError) error = NULL;
        gssize n;

        if (p->state == ST_HEADER && p->in_need == 0) {
            p->in_need = QS_LINK_HEADER_SIZE;
        }
        n = qs_stream_read(p->stream, p->in + p->in_have,
                           p->in_need - p->in_have, &error);
        if (n == -2) {
            return TRUE;
        }
        if (n == QS_STREAM_HTTP_REQUEST) {
            p->web = qs_web_exchange_new(p->server, p->stream);
            p->state = ST_WEB;
            return TRUE;
        }
        if (n <= 0) {
            if (n < 0 && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA) &&
                qs_link_log_allowed(p->server)) {     /* a malformed WebSocket upgrade or frame */
                g_message("link from %s refused: %s", qs_stream_get_peer(p->stream), error->message);
            }
            pending_drop(p, n == 0 ? "closed during link" : error->message);
            return FALSE;
        }
        p->in_have += (gsize)n;
        if (p->in_have == p->in_need && !handle_input(p)) {
            return FALSE;
        }
    }
    return TRUE;
}

/* The console page's answer; the connection ends with it. */
static gboolean web_write(Pending *p)
{
    g_autoptr(GError) error = NULL;

    switch (qs_web_exchange_write(p->web, p->stream, &error)) {
    case QS_STREAM_AGAIN:
        return TRUE;
    case QS_STREAM_ERROR:
        pending_drop(p, error->message);
        return FALSE;
    case QS_STREAM_DONE:
        /* A browser fetches the page's files one connection each: on the
         * TLS port a served one gives its token back, like a link. */
        if (p->server->rate && p->charged && qs_web_exchange_served(p->web)) {
            qs_rate_limit_refund(p->server->rate, p->source, g_get_monotonic_time());
        }
        break;
    }
    pending_drop(p, "console page answered");
    return FALSE;
}

static gboolean do_write(Pending *p)
{
    if (p->state == ST_WEB) {
        return web_write(p);
    }
    while (p->out_off < p->out_len) {
        g_autoptr(GError) error = NULL;
        struct iovec iov = {
            .iov_base = p->out + p->out_off,
            .iov_len = p->out_len - p->out_off,
        };
        gssize n = qs_stream_writev(p->stream, &iov, 1, &error);

        if (n == -2) {
            return TRUE;
        }
        if (n < 0) {
            pending_drop(p, error->message);
            return FALSE;
        }
        p->out_off += (gsize)n;
    }
    if (p->state == ST_CLOSING) {
        pending_drop(p, "refused");
        return FALSE;
    }
    return TRUE;
}

static void pending_io(QsStream *stream, GIOCondition cond, gpointer data)
{
    Pending *p = data;

    (void)stream;
    if (p->state == ST_HANDSHAKE) {
        g_autoptr(GError) error = NULL;
        gboolean want_write;

        switch (qs_stream_handshake(p->stream, &want_write, &error)) {
        case QS_STREAM_ERROR:
            pending_drop(p, error->message);
            return;
        case QS_STREAM_AGAIN:
            qs_stream_set_condition(p->stream, want_write ? G_IO_OUT : G_IO_IN);
            return;
        case QS_STREAM_DONE:
            p->state = ST_HEADER;
            cond |= G_IO_IN;
            break;
        }
    }
    if ((cond & G_IO_OUT) && !do_write(p)) {
        return;
    }
    if (cond & (G_IO_IN | G_IO_HUP | G_IO_ERR)) {
        if (p->state == ST_KEY || p->state == ST_DELAY ||
            p->state == ST_CLOSING || p->state == ST_WEB) {
            if (cond & (G_IO_HUP | G_IO_ERR)) {
                pending_drop(p, "connection lost");
                return;
            }
        } else if (!do_read(p)) {
            return;
        }
    }
    /* Replies are small: try to send them right away. */
    if ((p->out_off < p->out_len || p->state == ST_WEB) && !do_write(p)) {
        return;
    }
    update_condition(p);
}

static gboolean deadline_cb(gpointer data)
{
    Pending *p = data;

    g_source_unref(g_steal_pointer(&p->deadline));
    pending_drop(p, "link deadline passed");
    return G_SOURCE_REMOVE;
}

static const char *source_of(gconstpointer pending)
{
    return ((const Pending *)pending)->source;
}

void qs_link_stage_start(QsServer *s, QsStream *stream, const char *source,
                         gboolean skip_auth)
{
    gboolean tls = qs_stream_is_tls(stream);
    Pending *p;

    /* On the TLS port the handshake (a signature with the server key) is
     * the first costly step: the token is taken before it, and closing
     * is all a refused connection gets. */
    if (tls && !qs_link_charge(s, source)) {
        qs_stream_free(stream);
        return;
    }
    p = qs_link_limits_victim(s, source, source_of);
    if (p) {
        pending_free(p);
    }
    p = g_new0(Pending, 1);
    p->server = s;
    p->stream = stream;
    p->source = g_strdup(source);
    p->charged = tls;
    p->skip_auth = skip_auth;
    p->state = tls ? ST_HANDSHAKE : ST_HEADER;
    p->in_need = QS_LINK_HEADER_SIZE;
    g_queue_push_tail(&s->pending, p);
    p->node = s->pending.tail;
    qs_link_limits_enter(s, source);
    p->deadline = qs_net_timeout_source(s->link_timeout_ms, deadline_cb, p,
                                        NULL);
    /* Plain or TLS, the client speaks first. */
    qs_stream_watch(stream, G_IO_IN, pending_io, p);
}

void qs_link_stage_drop_all(QsServer *s)
{
    while (!g_queue_is_empty(&s->pending)) {
        pending_free(g_queue_peek_head(&s->pending));
    }
}
