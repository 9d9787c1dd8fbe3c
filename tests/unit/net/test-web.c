/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The console page's table (net/qs-web.c): what is read from spice-html5's
 * directory and when, what each path is answered, and the headers. */
#include "net/qs-web.h"

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <unistd.h>

typedef struct {
    guint status;
    char *head;
    char *body;
    GBytes *body_bytes;
} Got;

static void got_clear(Got *g)
{
    g_free(g->head);
    g_free(g->body);
    g_clear_pointer(&g->body_bytes, g_bytes_unref);
}

/* A gzip body inflated (kept by the Got that owns `body`). */
static const char *inflate(const char *head, GBytes *body)
{
    static char out[4096];
    g_autoptr(GConverter) c = G_CONVERTER(g_zlib_decompressor_new(G_ZLIB_COMPRESSOR_FORMAT_GZIP));
    gsize len, read = 0, written = 0;
    const void *data = g_bytes_get_data(body, &len);

    (void)head;
    g_assert_cmpint(g_converter_convert(c, data, len, out, sizeof(out) - 1,
                                        G_CONVERTER_INPUT_AT_END, &read, &written, NULL),
                    ==, G_CONVERTER_FINISHED);
    out[written] = '\0';
    return out;
}
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC(Got, got_clear)

static QsTokenStatus fake_check(const char *token, gsize len, gpointer data)
{
    (void)len;
    *(int *)data += 1;
    return strcmp(token, "qst.used") == 0 ? QS_TOKEN_REPLAYED
         : strcmp(token, "qst.old") == 0 ? QS_TOKEN_EXPIRED
         : strcmp(token, "qst.good") == 0 ? QS_TOKEN_VALID
         : strcmp(token, "qst.full") == 0 ? QS_TOKEN_CACHE_FULL
         : strcmp(token, "qst.forged") == 0 ? QS_TOKEN_BAD_MAC : QS_TOKEN_NOT_A_TOKEN;
}

static Got get(QsWeb *web, const char *target, const char *extra)
{
    g_autofree char *text = g_strdup_printf("GET %s HTTP/1.1\r\nHost: h\r\n%s\r\n", target,
                                            extra ? extra : "");
    g_autoptr(QsHttpRequest) req = NULL;
    QsWebResponse resp;
    int checks = 0;
    Got g;

    g_assert_cmpint(qs_http_parse(text, strlen(text), &req, NULL), ==, QS_HTTP_OK);
    qs_web_respond(web, req, fake_check, &checks, &resp);
    g.status = resp.status;
    g.head = g_strndup(g_bytes_get_data(resp.head, NULL), g_bytes_get_size(resp.head));
    g.body = g_strndup(g_bytes_get_data(resp.body, NULL), g_bytes_get_size(resp.body));
    g.body_bytes = g_bytes_ref(resp.body);
    g_assert_cmpint(checks, ==, resp.token_checked ? 1 : 0);
    qs_web_response_clear(&resp);
    return g;
}

static void write_file(const char *dir, const char *name, const char *text)
{
    g_autofree char *path = g_build_filename(dir, name, NULL);

    g_assert_true(g_file_set_contents(path, text, -1, NULL));
}

static char *html5_dir(void)
{
    char *dir = g_dir_make_tmp("qs-test-web-XXXXXX", NULL);
    g_autofree char *third = g_build_filename(dir, "thirdparty", NULL);
    g_autofree char *deep = g_build_filename(third, "deep", NULL);
    g_autofree char *link = g_build_filename(dir, "link.js", NULL);
    g_autofree char *subdir = g_build_filename(dir, "sub.js", NULL);

    g_assert_cmpint(g_mkdir_with_parents(deep, 0700), ==, 0);
    g_assert_cmpint(g_mkdir(subdir, 0700), ==, 0);
    write_file(dir, "main.js", "export const main = 1;\n");
    write_file(dir, "spice.css", "body {}\n");
    write_file(dir, "README", "not served\n");
    write_file(dir, "spice_auto.html", "<html>not served</html>\n");
    write_file(third, "rsa.js", "export const rsa = 1;\n");
    write_file(deep, "x.js", "not served\n");
    g_assert_cmpint(symlink("/etc/passwd", link), ==, 0);
    return dir;
}

static void remove_tree(const char *dir)
{
    g_autofree char *cmd = g_strdup_printf("rm -rf '%s'", dir);

    g_assert_cmpint(system(cmd), ==, 0);
}

static void assert_strict(const Got *g)
{
    g_assert_nonnull(strstr(g->head, "\r\nContent-Security-Policy: default-src 'none'; "
                                     "script-src 'self'; style-src 'self';"));
    g_assert_nonnull(strstr(g->head, "frame-ancestors 'none'\r\n"));
    g_assert_nonnull(strstr(g->head, "\r\nCache-Control: no-store\r\n"));
    g_assert_nonnull(strstr(g->head, "\r\nX-Content-Type-Options: nosniff\r\n"));
    g_assert_nonnull(strstr(g->head, "\r\nReferrer-Policy: no-referrer\r\n"));
    g_assert_nonnull(strstr(g->head, "\r\nConnection: close\r\n\r\n"));
}

static void test_table(void)
{
    g_autofree char *dir = html5_dir();
    g_autoptr(GError) error = NULL;
    g_autoptr(QsWeb) web = qs_web_new(dir, TRUE, &error);

    g_assert_no_error(error);
    g_assert_null(qs_web_missing(web));
    /* main.js, spice.css, thirdparty/rsa.js: not the link, the directory
     * named like a script, the README, the HTML or what lies deeper. */
    g_assert_cmpuint(qs_web_n_files(web), ==, 3);
    /* Read once: what changes on disk afterwards is never seen. */
    write_file(dir, "main.js", "changed\n");
    write_file(dir, "new.js", "new\n");
    {
        g_auto(Got) g = get(web, "/", NULL);

        g_assert_cmpuint(g.status, ==, 200);
        g_assert_nonnull(strstr(g.head, "Content-Type: text/html; charset=utf-8\r\n"));
        g_assert_nonnull(strstr(g.head, "\r\nX-Frame-Options: DENY\r\n"));
        g_assert_nonnull(strstr(g.body, "/qs/console.js"));
        assert_strict(&g);
    }
    {
        g_auto(Got) g = get(web, "/spice-html5/main.js", NULL);
        g_autofree char *len = g_strdup_printf("Content-Length: %zu\r\n", strlen(g.body));

        g_assert_cmpuint(g.status, ==, 200);
        g_assert_cmpstr(g.body, ==, "export const main = 1;\n");
        g_assert_nonnull(strstr(g.head, "Content-Type: text/javascript; charset=utf-8\r\n"));
        g_assert_nonnull(strstr(g.head, len));
        assert_strict(&g);
    }
    {
        g_auto(Got) g = get(web, "/spice-html5/thirdparty/rsa.js", NULL);

        g_assert_cmpuint(g.status, ==, 200);
        g_assert_cmpstr(g.body, ==, "export const rsa = 1;\n");
        g_assert_null(strstr(g.head, "Content-Encoding"));
    }
    /* Kept gzipped: a browser that takes gzip gets it so, the same bytes
     * once inflated; one that refuses it by weight gets them plain. */
    {
        g_auto(Got) g = get(web, "/spice-html5/main.js", "Accept-Encoding: gzip, deflate, br\r\n");
        g_auto(Got) h = get(web, "/spice-html5/main.js", "Accept-Encoding: gzip;q=0\r\n");
        g_autofree char *len = NULL;

        g_assert_cmpuint(g.status, ==, 200);
        g_assert_nonnull(strstr(g.head, "\r\nContent-Encoding: gzip\r\n"));
        g_assert_cmpstr(inflate(g.head, g.body_bytes), ==, "export const main = 1;\n");
        g_assert_null(strstr(h.head, "Content-Encoding"));
        g_assert_cmpstr(h.body, ==, "export const main = 1;\n");
        len = g_strdup_printf("Content-Length: %" G_GSIZE_FORMAT "\r\n",
                              g_bytes_get_size(g.body_bytes));
        g_assert_nonnull(strstr(g.head, len));
    }
    /* The page's own files are never gzipped. */
    {
        g_auto(Got) g = get(web, "/", "Accept-Encoding: gzip\r\n");

        g_assert_null(strstr(g.head, "Content-Encoding"));
    }
    {
        const char *absent[] = {
            "/spice-html5/new.js", "/spice-html5/link.js", "/spice-html5/README",
            "/spice-html5/spice_auto.html", "/spice-html5/thirdparty/deep/x.js",
            "/spice-html5/", "/spice-html5", "/spice-html5/../main.js",
            "/spice-html5/./main.js", "/spice-html5//main.js", "/spice-html5/main.js?x",
            "/etc/passwd", "/../../etc/passwd", "/spice-html5/%2e%2e/main.js",
            "/console.html", "/qs/", "/index.html",
        };

        for (guint i = 0; i < G_N_ELEMENTS(absent); i++) {
            g_auto(Got) g = get(web, absent[i], NULL);

            if (g.status != 404) {
                g_error("%s: %u, not 404", absent[i], g.status);
            }
            g_assert_cmpstr(g.body, ==, "not found\n");
            assert_strict(&g);
        }
    }
    {
        g_auto(Got) g = get(web, "/?password=x", NULL);

        g_assert_cmpuint(g.status, ==, 400);
        g_assert_nonnull(strstr(g.body, "after '#', never after '?'"));
    }
    remove_tree(dir);
}

static void test_token_state(void)
{
    g_autoptr(QsWeb) web = qs_web_new_empty();
    const struct {
        const char *token, *state;
    } cases[] = {
        { "qst.good", "valid" }, { "qst.used", "used" }, { "qst.old", "expired" },
        { "qst.full", "busy" }, { "qst.forged", "wrong" }, { "a-ticket", "ticket" },
    };

    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autofree char *auth = g_strdup_printf("Authorization: Bearer %s\r\n", cases[i].token);
        g_autofree char *want = g_strdup_printf("{\"state\":\"%s\"}\n", cases[i].state);
        g_auto(Got) g = get(web, "/qs/token-state", auth);

        g_assert_cmpuint(g.status, ==, 200);
        g_assert_cmpstr(g.body, ==, want);
        g_assert_nonnull(strstr(g.head, "Content-Type: application/json\r\n"));
        assert_strict(&g);
    }
    {
        g_auto(Got) g = get(web, "/qs/token-state", NULL);

        g_assert_cmpuint(g.status, ==, 400);
    }
    {
        g_auto(Got) g = get(web, "/qs/token-state", "Authorization: Basic eDp5\r\n");

        g_assert_cmpuint(g.status, ==, 400);
    }
}

static void test_not_get(void)
{
    g_autoptr(QsWeb) web = qs_web_new_empty();
    const char text[] = "DELETE / HTTP/1.1\r\n\r\n";
    g_autoptr(QsHttpRequest) req = NULL;
    QsWebResponse resp;

    g_assert_cmpint(qs_http_parse(text, sizeof(text) - 1, &req, NULL), ==, QS_HTTP_OK);
    qs_web_respond(web, req, NULL, NULL, &resp);
    g_assert_cmpuint(resp.status, ==, 405);
    g_assert_nonnull(g_strstr_len(g_bytes_get_data(resp.head, NULL),
                                  (gssize)g_bytes_get_size(resp.head), "\r\nAllow: GET\r\n"));
    qs_web_response_clear(&resp);
}

static void test_missing_and_bounds(void)
{
    g_autofree char *dir = g_dir_make_tmp("qs-test-web-XXXXXX", NULL);
    g_autofree char *big = g_strnfill(QS_WEB_MAX_FILE + 1, 'x');
    g_autoptr(GError) error = NULL;
    QsWeb *web = qs_web_new(dir, TRUE, &error);

    g_assert_null(web);
    g_assert_nonnull(strstr(error->message, "spice-html5 is not installed"));
    g_clear_error(&error);
    web = qs_web_new(dir, FALSE, &error);
    g_assert_no_error(error);
    g_assert_nonnull(qs_web_missing(web));
    {
        g_auto(Got) g = get(web, "/", NULL);

        g_assert_cmpuint(g.status, ==, 503);
        g_assert_nonnull(strstr(g.body, "spice-html5 is not installed"));
    }
    qs_web_unref(web);
    write_file(dir, "main.js", "x\n");
    write_file(dir, "huge.js", big);
    web = qs_web_new(dir, TRUE, &error);
    g_assert_null(web);
    g_assert_nonnull(strstr(error->message, "huge.js"));
    g_assert_nonnull(strstr(error->message, "over the console page's bound"));
    remove_tree(dir);
}

/* Debian's spice-html5: read whole, within the bounds. */
static void test_installed(void)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(QsWeb) web = NULL;

    /* tools/install-deps installs it: missing, this fails. */
    web = qs_web_new(QS_WEB_HTML5_DIR, TRUE, &error);
    g_assert_no_error(error);
    g_assert_cmpuint(qs_web_n_files(web), >=, 20);
    {
        g_auto(Got) g = get(web, "/spice-html5/thirdparty/jsbn.js", NULL);

        g_assert_cmpuint(g.status, ==, 200);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/web/table", test_table);
    g_test_add_func("/net/web/token-state", test_token_state);
    g_test_add_func("/net/web/not-get", test_not_get);
    g_test_add_func("/net/web/missing-and-bounds", test_missing_and_bounds);
    g_test_add_func("/net/web/installed", test_installed);
    return g_test_run();
}
