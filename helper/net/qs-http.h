/* SPDX-License-Identifier: GPL-2.0-or-later */
/* HTTP/1.1 requests on a console port (a browser's page and file requests,
 * its WebSocket upgrade), parsed strictly, without sockets. */
#pragma once

#include <glib.h>

G_BEGIN_DECLS

/*
 * A console port answers one request per connection and never reads a
 * body, so only GET is served and a request is its head: the request line
 * and the header lines up to the blank line. Whatever this parser accepts
 * reaches a fixed table of answers (net/qs-web.c) or the WebSocket upgrade
 * (net/qs-ws.c): the path is compared, never decoded or looked up on disk.
 *
 * Refused, each with the reason: another version than HTTP/1.1, a target
 * that is not a path (absolute-form, '*', a fragment), bytes outside
 * visible ASCII in the target, control bytes or folded lines in the headers,
 * a bare LF, a header named twice among those read here (a smuggling
 * attempt), a body (Content-Length other than 0, Transfer-Encoding), bytes
 * after the blank line, more than QS_HTTP_MAX_HEADERS headers or
 * QS_HTTP_MAX_REQUEST bytes.
 */

#define QS_HTTP_MAX_REQUEST 8192u   /* the head, blank line included */
#define QS_HTTP_MAX_HEADERS 64u

typedef struct {
    char *method;           /* a token, e.g. "GET" */
    char *path;             /* the target up to any '?', starting with '/' */
    gboolean has_query;     /* the target had a '?' */
    /* The headers the server reads, as sent (trimmed); NULL when absent. */
    char *host;
    char *upgrade;
    char *connection;
    char *ws_key;           /* Sec-WebSocket-Key */
    char *ws_version;       /* Sec-WebSocket-Version */
    char *ws_protocol;      /* Sec-WebSocket-Protocol */
    char *authorization;
    char *accept_encoding;
    char *text;             /* owns the strings above */
} QsHttpRequest;

void qs_http_request_free(QsHttpRequest *req);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsHttpRequest, qs_http_request_free)

typedef enum {
    QS_HTTP_MORE,           /* no blank line yet, and under the bound */
    QS_HTTP_OK,             /* *req is set */
    QS_HTTP_BAD,            /* error says why */
} QsHttpParse;

/* Looks at the request bytes received so far (buf[0..len), len >= 1). */
QsHttpParse qs_http_parse(const char *buf, gsize len, QsHttpRequest **req, GError **error);

/* Could `buf` (len bytes so far, len >= 1) start a GET request rather than
 * a SPICE link ("REDQ")? */
gboolean qs_http_maybe_request(const guint8 *buf, gsize len);

/* Does the request ask for a protocol switch (an Upgrade header)? */
gboolean qs_http_wants_upgrade(const QsHttpRequest *req);

/* Does the comma list `value` hold `token` (case-insensitive)? */
gboolean qs_http_list_has(const char *value, const char *token);

/* Does an Accept-Encoding value (NULL: none sent) accept `coding`, by name
 * or '*', with a weight other than q=0? */
gboolean qs_http_accepts(const char *value, const char *coding);

G_END_DECLS
