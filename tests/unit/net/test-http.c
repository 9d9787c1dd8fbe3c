/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A browser's request head (net/qs-http.c): what is read, and each refusal
 * with its reason. */
#include "net/qs-http.h"

#include <gio/gio.h>
#include <string.h>

static QsHttpParse parse(const char *text, QsHttpRequest **req, GError **error)
{
    return qs_http_parse(text, strlen(text), req, error);
}

static void test_accepted(void)
{
    g_autoptr(QsHttpRequest) req = NULL;
    g_autoptr(GError) error = NULL;
    const char *text = "GET /spice-html5/main.js?v=1 HTTP/1.1\r\nHost: hv1:5500\r\n"
                       "upgrade:  websocket \r\nAuthorization: Bearer qst.x\r\n"
                       "User-Agent: M\xc3\xbcller/1.0\r\nContent-Length: 0\r\n\r\n";

    /* Every prefix is "more", the whole head is read. */
    for (gsize n = 1; n < strlen(text); n++) {
        g_assert_cmpint(qs_http_parse(text, n, &req, &error), ==, QS_HTTP_MORE);
        g_assert_null(req);
        g_assert_no_error(error);
    }
    g_assert_cmpint(parse(text, &req, &error), ==, QS_HTTP_OK);
    g_assert_no_error(error);
    g_assert_cmpstr(req->method, ==, "GET");
    g_assert_cmpstr(req->path, ==, "/spice-html5/main.js");
    g_assert_true(req->has_query);
    g_assert_cmpstr(req->host, ==, "hv1:5500");
    g_assert_cmpstr(req->upgrade, ==, "websocket");
    g_assert_cmpstr(req->authorization, ==, "Bearer qst.x");
    g_assert_null(req->connection);
    g_assert_true(qs_http_wants_upgrade(req));
    g_assert_true(qs_http_list_has("keep-alive, Upgrade", "upgrade"));
    g_assert_false(qs_http_list_has("keep-alive", "upgrade"));
}

static void test_accepts(void)
{
    g_assert_true(qs_http_accepts("gzip, deflate, br", "gzip"));
    g_assert_true(qs_http_accepts("br;q=1.0, GZIP;q=0.5", "gzip"));
    g_assert_true(qs_http_accepts("*", "gzip"));
    g_assert_false(qs_http_accepts("gzip;q=0", "gzip"));
    g_assert_false(qs_http_accepts("gzip; q=0.000", "gzip"));
    g_assert_false(qs_http_accepts("identity", "gzip"));
    g_assert_false(qs_http_accepts("", "gzip"));
    g_assert_false(qs_http_accepts(NULL, "gzip"));
}

static void test_refused(void)
{
    const struct {
        const char *text, *why;
    } bad[] = {
        { "GET / HTTP/1.0\r\n\r\n", "not an HTTP/1.1 request" },
        { "GET  / HTTP/1.1\r\n\r\n", "not METHOD TARGET VERSION" },
        { "GET / HTTP/1.1 x\r\n\r\n", "not METHOD TARGET VERSION" },
        { "G(T / HTTP/1.1\r\n\r\n", "method that is not a token" },
        { "GET http://h/ HTTP/1.1\r\n\r\n", "target that is not a path" },
        { "GET * HTTP/1.1\r\n\r\n", "target that is not a path" },
        { "GET /a#b HTTP/1.1\r\n\r\n", "outside a path's alphabet" },
        { "GET /\xc3\xa9 HTTP/1.1\r\n\r\n", "outside a path's alphabet" },
        { "GET / HTTP/1.1\nHost: h\r\n\r\n", "bare CR or LF" },
        { "GET / HTTP/1.1\r\nHost: h\rx\r\n\r\n", "bare CR or LF" },
        { "GET / HTTP/1.1\r\nX: a\r\n b\r\n\r\n", "folded" },
        { "GET / HTTP/1.1\r\nno colon\r\n\r\n", "without a colon" },
        { "GET / HTTP/1.1\r\nX Y: z\r\n\r\n", "name that is not a token" },
        { "GET / HTTP/1.1\r\nX: a\x01" "b\r\n\r\n", "control byte" },
        { "GET / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n", "HTTP header host twice" },
        { "GET / HTTP/1.1\r\nAuthorization: a\r\nAuthorization: b\r\n\r\n", "twice" },
        { "GET / HTTP/1.1\r\nContent-Length: 3\r\n\r\n", "with a body" },
        { "GET / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n", "with a body" },
        { "GET / HTTP/1.1\r\n\r\nGET", "bytes after" },
        { "\r\n\r\n", "not METHOD TARGET VERSION" },
    };

    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(QsHttpRequest) req = NULL;
        g_autoptr(GError) error = NULL;

        g_assert_cmpint(parse(bad[i].text, &req, &error), ==, QS_HTTP_BAD);
        g_assert_null(req);
        g_assert_nonnull(error);
        if (!strstr(error->message, bad[i].why)) {
            g_error("case %u: '%s' does not say '%s'", i, error->message, bad[i].why);
        }
    }
}

static void test_bounds(void)
{
    g_autoptr(GString) many = g_string_new("GET / HTTP/1.1\r\n");
    g_autofree char *big = g_strnfill(QS_HTTP_MAX_REQUEST, 'x');
    g_autoptr(QsHttpRequest) req = NULL;
    g_autoptr(GError) error = NULL;
    const char nul[] = "GET / HT\0TP/1.1\r\n\r\n";

    for (guint i = 0; i <= QS_HTTP_MAX_HEADERS; i++) {
        g_string_append_printf(many, "X-%u: y\r\n", i);
    }
    g_string_append(many, "\r\n");
    g_assert_cmpint(parse(many->str, &req, &error), ==, QS_HTTP_BAD);
    g_assert_nonnull(strstr(error->message, "over 64 HTTP headers"));
    g_clear_error(&error);
    g_assert_cmpint(parse(big, &req, &error), ==, QS_HTTP_BAD);
    g_assert_nonnull(strstr(error->message, "over 8192 bytes"));
    g_clear_error(&error);
    g_assert_cmpint(qs_http_parse(nul, sizeof(nul) - 1, &req, &error), ==, QS_HTTP_BAD);
    g_assert_nonnull(strstr(error->message, "NUL"));
    g_assert_false(qs_http_maybe_request((const guint8 *)"REDQ", 4));
    g_assert_true(qs_http_maybe_request((const guint8 *)"G", 1));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/http/accepted", test_accepted);
    g_test_add_func("/net/http/accepts", test_accepts);
    g_test_add_func("/net/http/refused", test_refused);
    g_test_add_func("/net/http/bounds", test_bounds);
    return g_test_run();
}
