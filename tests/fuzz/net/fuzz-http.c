/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: a browser's request on a console port, as the stream sees it
 * (net/qs-http.c, arriving in pieces), and what it is answered: the console
 * page's table (net/qs-web.c) or the WebSocket upgrade (net/qs-ws.c). The
 * first byte sets the piece size. Whatever comes in, an answer is one of
 * the table's entries or a refusal, with the strict headers, and its length
 * says its body's. */

#include <stdint.h>
#include <string.h>
#include "net/qs-web.h"
#include "net/qs-ws.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const char *const served[] = { "/", "/qs/console.js", "/qs/console.css",
                                      "/qs/token-state", "/spice-html5/main.js",
                                      "/spice-html5/thirdparty/rsa.js" };

static QsTokenStatus check(const char *token, gsize len, gpointer data)
{
    (void)data;
    return len > 4 && memcmp(token, "qst.", 4) == 0 ? (QsTokenStatus)(len % 11)
                                                   : QS_TOKEN_NOT_A_TOKEN;
}

static void check_answer(QsWeb *web, const QsHttpRequest *req)
{
    QsWebResponse resp;
    gsize head_len;
    const char *head;
    g_autofree char *length = NULL;
    gboolean known = FALSE;

    qs_web_respond(web, req, check, NULL, &resp);
    head = g_bytes_get_data(resp.head, &head_len);
    length = g_strdup_printf("\r\nContent-Length: %" G_GSIZE_FORMAT "\r\n",
                             g_bytes_get_size(resp.body));
    for (guint i = 0; i < G_N_ELEMENTS(served); i++) {
        known |= strcmp(req->path, served[i]) == 0;
    }
    if (!g_strstr_len(head, (gssize)head_len, length) ||
        !g_strstr_len(head, (gssize)head_len, "\r\nCache-Control: no-store\r\n") ||
        !g_strstr_len(head, (gssize)head_len, "\r\nContent-Security-Policy: default-src 'none';") ||
        (resp.status == 200 && (!known || req->has_query || strcmp(req->method, "GET") != 0)) ||
        (resp.status != 200 && resp.status != 400 && resp.status != 404 && resp.status != 405)) {
        __builtin_trap();
    }
    qs_web_response_clear(&resp);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static QsWeb *web;
    gsize piece, have = 0;

    if (size < 1) {
        return 0;
    }
    if (!web) {
        g_autoptr(GBytes) js = g_bytes_new_static("export {};\n", 11);

        web = qs_web_new_empty();
        qs_web_add_file(web, "main.js", js);
        qs_web_add_file(web, "thirdparty/rsa.js", js);
    }
    piece = (data[0] & 0x3f) + 1;
    data++;
    size--;
    while (have < size) {
        g_autoptr(QsHttpRequest) req = NULL;
        g_autoptr(GError) error = NULL;
        QsHttpParse r;

        have = MIN(have + piece, size);
        r = qs_http_parse((const char *)data, have, &req, &error);
        if ((r == QS_HTTP_BAD) != (error != NULL) || (r == QS_HTTP_OK) != (req != NULL)) {
            __builtin_trap();
        }
        if (r == QS_HTTP_BAD) {
            return 0;
        }
        if (r == QS_HTTP_OK) {
            if (req->path[0] != '/' || strchr(req->path, '?') || strchr(req->path, '#')) {
                __builtin_trap();
            }
            if (qs_http_wants_upgrade(req)) {
                g_autofree char *response = NULL;

                qs_ws_upgrade(req, &response, NULL);
                if (!response) {
                    __builtin_trap();
                }
            } else {
                check_answer(web, req);
            }
            return 0;
        }
    }
    return 0;
}
