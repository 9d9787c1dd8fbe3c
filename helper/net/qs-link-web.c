/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A browser's request for the console page on a console port, answered in
 * the link stage: the connection counts as pending (limits, deadline) until
 * the answer is written, and then closes. */

#include <string.h>
#include <spice/enums.h>
#include "net/qs-server-private.h"

struct QsWebExchange {
    QsWebResponse resp;
    gsize off;              /* bytes of head and body written */
};

QsTokenStatus qs_link_auth_token_state(QsServer *s, const char *token, gsize len)
{
    gboolean view_only;
    QsTokenUse use;

    if (!s->tokens) {
        return QS_TOKEN_NOT_A_TOKEN;
    }
    /* As a new main channel would be checked; nothing is used up. */
    return qs_token_verifier_check(s->tokens, (const guint8 *)token, len,
                                   g_get_real_time() / G_USEC_PER_SEC, SPICE_CHANNEL_MAIN, 0,
                                   &view_only, &use);
}

static QsTokenStatus token_state(const char *token, gsize len, gpointer data)
{
    return qs_link_auth_token_state(data, token, len);
}

QsWebExchange *qs_web_exchange_new(QsServer *s, QsStream *stream)
{
    g_autoptr(QsHttpRequest) req = qs_stream_steal_http_request(stream);
    QsWebExchange *x = g_new0(QsWebExchange, 1);
    QsTokenStatus st;

    qs_web_respond(s->web, req, token_state, s, &x->resp);
    st = x->resp.token;
    /* The page explains a refusal; the log says it once, as for a link. */
    if (x->resp.token_checked && st != QS_TOKEN_VALID && st != QS_TOKEN_NOT_A_TOKEN &&
        qs_link_log_allowed(s)) {
        g_message("console page for %s: token refused: %s", qs_stream_get_peer(stream),
                  qs_token_status_to_string(st));
    }
    g_debug("console page for %s: GET %s: %u", qs_stream_get_peer(stream), req->path,
            x->resp.status);
    return x;
}

void qs_web_exchange_free(QsWebExchange *x)
{
    if (x) {
        qs_web_response_clear(&x->resp);
        g_free(x);
    }
}

gboolean qs_web_exchange_served(const QsWebExchange *x)
{
    return x->resp.status == 200;
}

QsStreamStatus qs_web_exchange_write(QsWebExchange *x, QsStream *stream, GError **error)
{
    gsize head_len, body_len;
    const guint8 *head = g_bytes_get_data(x->resp.head, &head_len);
    const guint8 *body = g_bytes_get_data(x->resp.body, &body_len);

    while (x->off < head_len + body_len) {
        struct iovec iov[2];
        int n = 0;
        gssize w;

        if (x->off < head_len) {
            iov[n++] = (struct iovec){ (guint8 *)head + x->off, head_len - x->off };
            iov[n++] = (struct iovec){ (guint8 *)body, body_len };
        } else {
            iov[n++] = (struct iovec){ (guint8 *)body + (x->off - head_len),
                                       body_len - (x->off - head_len) };
        }
        w = qs_stream_writev(stream, iov, n, error);
        if (w == -2) {
            return QS_STREAM_AGAIN;
        }
        if (w < 0) {
            return QS_STREAM_ERROR;
        }
        x->off += (gsize)w;
    }
    return QS_STREAM_DONE;
}
