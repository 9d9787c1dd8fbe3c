/* SPDX-License-Identifier: GPL-2.0-or-later */
/* HTTP/1.1 request heads, parsed strictly (qs-http.h). */
#include "net/qs-http.h"

#include <gio/gio.h>
#include <string.h>

#define MAX_METHOD 16

#define BAD(...) (g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_DATA, __VA_ARGS__), \
                  QS_HTTP_BAD)

void qs_http_request_free(QsHttpRequest *req)
{
    if (!req) {
        return;
    }
    g_free(req->text);
    g_free(req);
}

gboolean qs_http_maybe_request(const guint8 *buf, gsize len)
{
    return memcmp(buf, "GET ", MIN(len, 4)) == 0;
}

gboolean qs_http_wants_upgrade(const QsHttpRequest *req)
{
    return req->upgrade != NULL;
}

gboolean qs_http_list_has(const char *value, const char *token)
{
    g_auto(GStrv) parts = g_strsplit(value, ",", -1);

    for (guint i = 0; parts[i]; i++) {
        if (g_ascii_strcasecmp(g_strstrip(parts[i]), token) == 0) {
            return TRUE;
        }
    }
    return FALSE;
}

gboolean qs_http_accepts(const char *value, const char *coding)
{
    g_auto(GStrv) parts = value ? g_strsplit(value, ",", -1) : NULL;

    for (guint i = 0; parts && parts[i]; i++) {
        char *params = strchr(parts[i], ';');
        const char *q;

        if (params) {
            *params++ = '\0';
        }
        if (g_ascii_strcasecmp(g_strstrip(parts[i]), coding) != 0 &&
            strcmp(parts[i], "*") != 0) {
            continue;
        }
        q = params ? strstr(params, "q=") : NULL;
        /* RFC 9110 12.4.2: a weight of 0 means "not acceptable". */
        return !q || g_ascii_strtod(q + 2, NULL) > 0.0;
    }
    return FALSE;
}

/* RFC 9110 tchar. */
static gboolean is_token(const char *s, gsize max)
{
    gsize n = strlen(s);

    return n > 0 && n <= max &&
           strspn(s, "!#$%&'*+-.^_`|~0123456789"
                     "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") == n;
}

/* A field value: visible bytes, spaces and tabs (obs-text allowed). */
static gboolean value_ok(const char *v)
{
    for (const guchar *p = (const guchar *)v; *p; p++) {
        if (*p != '\t' && (*p < 0x20 || *p == 0x7f)) {
            return FALSE;
        }
    }
    return TRUE;
}

static QsHttpParse parse_request_line(QsHttpRequest *req, char *line, GError **error)
{
    char *sp1 = strchr(line, ' ');
    char *sp2 = sp1 ? strchr(sp1 + 1, ' ') : NULL;
    char *target;

    if (!sp1 || !sp2 || strchr(sp2 + 1, ' ')) {
        return BAD("an HTTP request line that is not METHOD TARGET VERSION");
    }
    *sp1 = *sp2 = '\0';
    if (!is_token(line, MAX_METHOD)) {
        return BAD("an HTTP method that is not a token");
    }
    if (strcmp(sp2 + 1, "HTTP/1.1") != 0) {
        return BAD("not an HTTP/1.1 request");
    }
    target = sp1 + 1;
    if (target[0] != '/') {
        return BAD("an HTTP request target that is not a path");
    }
    for (const guchar *p = (const guchar *)target; *p; p++) {
        if (*p <= 0x20 || *p >= 0x7f || *p == '#') {
            return BAD("an HTTP request target with a byte outside a path's alphabet");
        }
    }
    req->method = line;
    req->path = target;
    if ((target = strchr(target, '?'))) {
        *target = '\0';
        req->has_query = TRUE;
    }
    return QS_HTTP_OK;
}

/* The headers read here, each allowed once. */
static char **known_header(QsHttpRequest *req, const char *name)
{
    const struct {
        const char *name;
        gsize offset;
    } known[] = {
        { "Host", G_STRUCT_OFFSET(QsHttpRequest, host) },
        { "Upgrade", G_STRUCT_OFFSET(QsHttpRequest, upgrade) },
        { "Connection", G_STRUCT_OFFSET(QsHttpRequest, connection) },
        { "Sec-WebSocket-Key", G_STRUCT_OFFSET(QsHttpRequest, ws_key) },
        { "Sec-WebSocket-Version", G_STRUCT_OFFSET(QsHttpRequest, ws_version) },
        { "Sec-WebSocket-Protocol", G_STRUCT_OFFSET(QsHttpRequest, ws_protocol) },
        { "Authorization", G_STRUCT_OFFSET(QsHttpRequest, authorization) },
        { "Accept-Encoding", G_STRUCT_OFFSET(QsHttpRequest, accept_encoding) },
    };

    for (guint i = 0; i < G_N_ELEMENTS(known); i++) {
        if (g_ascii_strcasecmp(name, known[i].name) == 0) {
            return G_STRUCT_MEMBER_P(req, known[i].offset);
        }
    }
    return NULL;
}

static QsHttpParse parse_header(QsHttpRequest *req, char *line, GError **error)
{
    char *colon = strchr(line, ':');
    char **slot;
    char *value;

    if (line[0] == ' ' || line[0] == '\t') {
        return BAD("a folded HTTP header line");
    }
    if (!colon) {
        return BAD("an HTTP header line without a colon");
    }
    *colon = '\0';
    if (!is_token(line, 256)) {
        return BAD("an HTTP header name that is not a token");
    }
    value = g_strstrip(colon + 1);
    if (!value_ok(value)) {
        return BAD("a control byte in the value of HTTP header %s", line);
    }
    if (g_ascii_strcasecmp(line, "Transfer-Encoding") == 0 ||
        (g_ascii_strcasecmp(line, "Content-Length") == 0 && strcmp(value, "0") != 0)) {
        return BAD("an HTTP request with a body (header %s)", line);
    }
    if ((slot = known_header(req, line))) {
        if (*slot) {
            return BAD("HTTP header %s twice", line);
        }
        *slot = value;
    }
    return QS_HTTP_OK;
}

static QsHttpParse parse_head(QsHttpRequest *req, GError **error)
{
    char *line = req->text;
    guint n_headers = 0;

    for (gboolean first = TRUE; line; first = FALSE) {
        char *next = strstr(line, "\r\n");
        QsHttpParse r;

        if (next) {
            *next = '\0';
            next += 2;
        }
        if (strchr(line, '\r') || strchr(line, '\n')) {
            return BAD("a bare CR or LF in the HTTP request");
        }
        if (first) {
            r = parse_request_line(req, line, error);
        } else if (++n_headers > QS_HTTP_MAX_HEADERS) {
            return BAD("over %u HTTP headers", QS_HTTP_MAX_HEADERS);
        } else {
            r = parse_header(req, line, error);
        }
        if (r != QS_HTTP_OK) {
            return r;
        }
        line = next;
    }
    return QS_HTTP_OK;
}

QsHttpParse qs_http_parse(const char *buf, gsize len, QsHttpRequest **out, GError **error)
{
    const char *end = g_strstr_len(buf, (gssize)MIN(len, QS_HTTP_MAX_REQUEST), "\r\n\r\n");
    g_autoptr(QsHttpRequest) req = NULL;
    gsize head;

    *out = NULL;
    if (!end) {
        if (len >= QS_HTTP_MAX_REQUEST) {
            return BAD("HTTP request over %u bytes", QS_HTTP_MAX_REQUEST);
        }
        /* g_strstr_len stops at a NUL: a head never has one. */
        if (memchr(buf, '\0', len)) {
            return BAD("a NUL byte in the HTTP request");
        }
        return QS_HTTP_MORE;
    }
    head = (gsize)(end - buf);
    if (head + 4 != len) {
        return BAD("bytes after the HTTP request before its answer");
    }
    req = g_new0(QsHttpRequest, 1);
    req->text = g_strndup(buf, head);
    if (strlen(req->text) != head) {
        return BAD("a NUL byte in the HTTP request");
    }
    if (parse_head(req, error) != QS_HTTP_OK) {
        return QS_HTTP_BAD;
    }
    *out = g_steal_pointer(&req);
    return QS_HTTP_OK;
}
