/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The WebSocket pieces (net/qs-ws.c): the upgrade request, frame decoding, frame headers. */
#include "net/qs-ws.h"

#include <gio/gio.h>
#include <string.h>

#define KEY "dGhlIHNhbXBsZSBub25jZQ=="
#define REQUEST(extra) \
    "GET /spice HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n" \
    "Sec-WebSocket-Key: " KEY "\r\nSec-WebSocket-Version: 13\r\n" extra "\r\n"

/* RFC 6455 section 1.3's example. */
static void test_accept(void)
{
    g_autofree char *a = qs_ws_accept(KEY);

    g_assert_cmpstr(a, ==, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

typedef enum {
    MORE,
    OK,
    BAD,
} Got;

/* What the stream does with a request's bytes: parse, then upgrade (a
 * parser's refusal is a 400 too). */
static Got request(const char *text, char **response, GError **error)
{
    g_autoptr(QsHttpRequest) req = NULL;

    *response = NULL;
    switch (qs_http_parse(text, strlen(text), &req, error)) {
    case QS_HTTP_MORE:
        return MORE;
    case QS_HTTP_BAD:
        *response = g_strdup("HTTP/1.1 400 Bad Request\r\n\r\n");
        return BAD;
    case QS_HTTP_OK:
        break;
    }
    return qs_ws_upgrade(req, response, error) == QS_WS_REQUEST_OK ? OK : BAD;
}

static void test_request(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *r = NULL;
    g_autofree char *big = g_strnfill(QS_HTTP_MAX_REQUEST, 'x');

    g_assert_true(qs_http_maybe_request((const guint8 *)"GE", 2));
    g_assert_false(qs_http_maybe_request((const guint8 *)"REDQ", 4));
    g_assert_cmpint(request("GET / HTTP/1.1\r\nUpgrade: websocket\r\n", &r, &error), ==,
                    MORE);
    g_assert_cmpint(request(REQUEST(""), &r, &error), ==, OK);
    g_assert_nonnull(strstr(r, "101 Switching Protocols"));
    g_assert_nonnull(strstr(r, "Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"));
    g_assert_null(strstr(r, "Sec-WebSocket-Protocol"));
    g_clear_pointer(&r, g_free);
    g_assert_cmpint(request(REQUEST("Sec-WebSocket-Protocol: chat, binary\r\n"), &r, &error),
                    ==, OK);
    g_assert_nonnull(strstr(r, "Sec-WebSocket-Protocol: binary\r\n"));
    g_clear_pointer(&r, g_free);

    /* Each refusal gets a 400 and says why. */
    {
        const struct {
            const char *text, *why;
        } bad[] = {
            { REQUEST("Sec-WebSocket-Protocol: chat\r\n"), "without 'binary'" },
            { "GET / HTTP/1.1\r\nHost: h\r\n\r\n", "not a WebSocket upgrade" },
            { "POST / HTTP/1.1\r\nUpgrade: websocket\r\n\r\n", "not a GET" },
            { "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
              "Sec-WebSocket-Version: 8\r\nSec-WebSocket-Key: " KEY "\r\n\r\n", "version '8'" },
            { "GET / HTTP/1.1\r\nUpgrade: websocket\r\nConnection: upgrade\r\n"
              "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Key: short\r\n\r\n", "Sec-WebSocket-Key" },
            { "GET / HTTP/1.1\r\nno colon here\r\n\r\n", "without a colon" },
        };

        for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
            g_clear_error(&error);
            g_clear_pointer(&r, g_free);
            g_assert_cmpint(request(bad[i].text, &r, &error), ==, BAD);
            g_assert_nonnull(strstr(r, "400 Bad Request"));
            g_assert_nonnull(strstr(error->message, bad[i].why));
        }
    }
    g_clear_error(&error);
    g_clear_pointer(&r, g_free);
    g_assert_cmpint(request(big, &r, &error), ==, BAD);
    g_assert_nonnull(strstr(error->message, "over 8192 bytes"));
}

/* A masked client frame of `payload`. */
static GByteArray *client_frame(guint8 b0, const guint8 *payload, gsize len)
{
    GByteArray *f = g_byte_array_new();
    const guint8 mask[4] = { 0x37, 0xfa, 0x21, 0x3d };
    guint8 h[QS_WS_MAX_HEADER];
    guint n = qs_ws_frame_header(h, 0, len);

    h[0] = b0;
    h[1] |= 0x80;
    g_byte_array_append(f, h, n);
    g_byte_array_append(f, mask, 4);
    for (gsize i = 0; i < len; i++) {
        guint8 c = payload[i] ^ mask[i & 3];

        g_byte_array_append(f, &c, 1);
    }
    return f;
}

/* Feeds `in` a byte at a time into a small output: everything decodes, in
 * order, whatever the cut. */
static void test_decode_stream(void)
{
    g_autoptr(GByteArray) in = g_byte_array_new();
    g_autoptr(GByteArray) got = g_byte_array_new();
    guint8 big[70000];
    QsWsDecoder d = { 0 };
    guint pings = 0;

    for (gsize i = 0; i < sizeof(big); i++) {
        big[i] = (guint8)(i * 7);
    }
    {
        g_autoptr(GByteArray) a = client_frame(0x02, (const guint8 *)"REDQ", 4);       /* FIN=0 */
        g_autoptr(GByteArray) p = client_frame(0x89, (const guint8 *)"hi", 2);         /* PING */
        g_autoptr(GByteArray) b = client_frame(0x80, big, 300);                         /* cont. FIN */
        g_autoptr(GByteArray) c = client_frame(0x82, big, sizeof(big));                 /* 64-bit */

        g_byte_array_append(in, a->data, a->len);
        g_byte_array_append(in, p->data, p->len);
        g_byte_array_append(in, b->data, b->len);
        g_byte_array_append(in, c->data, c->len);
    }
    for (gsize off = 0; off < in->len;) {
        guint8 out[7];
        gsize used = 0, produced = 0;
        QsWsEvent ev = qs_ws_decode(&d, in->data + off, MIN(1 + off % 5, in->len - off), &used,
                                    out, sizeof(out), &produced, NULL);

        g_assert_cmpint(ev, !=, QS_WS_ERROR);
        g_assert_true(used > 0 || produced > 0 || ev == QS_WS_PING);
        if (ev == QS_WS_PING) {
            g_assert_cmpmem(d.control, d.control_len, "hi", 2);
            pings++;
        }
        g_byte_array_append(got, out, (guint)produced);
        off += used;
    }
    g_assert_cmpuint(pings, ==, 1);
    g_assert_cmpuint(got->len, ==, 4 + 300 + sizeof(big));
    g_assert_cmpmem(got->data, 4, "REDQ", 4);
    g_assert_cmpmem(got->data + 4, 300, big, 300);
    g_assert_cmpmem(got->data + 304, sizeof(big), big, sizeof(big));
}

static QsWsEvent decode_all(const GByteArray *f, GError **error)
{
    QsWsDecoder d = { 0 };
    guint8 out[256];
    gsize used, produced;

    return qs_ws_decode(&d, f->data, f->len, &used, out, sizeof(out), &produced, error);
}

static void test_decode_errors(void)
{
    const guint8 x[200] = { 0 };
    const struct {
        guint8 b0;
        gsize len;
        gboolean unmasked;
        const char *why;
    } bad[] = {
        { 0x82, 4, TRUE, "unmasked" },
        { 0xc2, 4, FALSE, "reserved bits" },
        { 0x81, 4, FALSE, "text frame" },
        { 0x83, 4, FALSE, "opcode 0x3" },
        { 0x80, 4, FALSE, "continuation frame outside" },
        { 0x09, 2, FALSE, "control frame fragmented" },
        { 0x89, 126, FALSE, "over 125" },
    };

    for (guint i = 0; i < G_N_ELEMENTS(bad); i++) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GByteArray) f = client_frame(bad[i].b0, x, bad[i].len);

        if (bad[i].unmasked) {
            f->data[1] &= 0x7f;
        }
        g_assert_cmpint(decode_all(f, &error), ==, QS_WS_ERROR);
        g_assert_nonnull(strstr(error->message, bad[i].why));
    }
    {
        /* A 64-bit length over the bound, refused from its header alone. */
        g_autoptr(GError) error = NULL;
        g_autoptr(GByteArray) f = g_byte_array_new();
        guint8 h[QS_WS_MAX_HEADER];
        guint n = qs_ws_frame_header(h, QS_WS_OP_BINARY, (guint64)QS_WS_MAX_FRAME + 1);

        h[1] |= 0x80;
        g_byte_array_append(f, h, n);
        g_byte_array_append(f, x, 4);
        g_assert_cmpint(decode_all(f, &error), ==, QS_WS_ERROR);
        g_assert_nonnull(strstr(error->message, "over the 16777216 byte limit"));
    }
    {
        /* CLOSE ends the stream; its status code is kept to echo. */
        g_autoptr(GByteArray) f = client_frame(0x88, (const guint8 *)"\x03\xe8", 2);
        QsWsDecoder d = { 0 };
        guint8 out[4];
        gsize used, produced;

        g_assert_cmpint(qs_ws_decode(&d, f->data, f->len, &used, out, sizeof(out), &produced,
                                     NULL), ==, QS_WS_CLOSE);
        g_assert_cmpuint(d.control_len, ==, 2);
    }
}

static void test_frame_header(void)
{
    guint8 h[QS_WS_MAX_HEADER];

    g_assert_cmpuint(qs_ws_frame_header(h, QS_WS_OP_BINARY, 125), ==, 2);
    g_assert_cmpuint(h[0], ==, 0x82);
    g_assert_cmpuint(h[1], ==, 125);
    g_assert_cmpuint(qs_ws_frame_header(h, QS_WS_OP_BINARY, 126), ==, 4);
    g_assert_cmpuint(h[1], ==, 126);
    g_assert_cmpuint(h[2] << 8 | h[3], ==, 126);
    g_assert_cmpuint(qs_ws_frame_header(h, QS_WS_OP_PONG, 65536), ==, 10);
    g_assert_cmpuint(h[0], ==, 0x8a);
    g_assert_cmpuint(h[7], ==, 1);
    g_assert_cmpuint(h[8], ==, 0);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/ws/accept", test_accept);
    g_test_add_func("/net/ws/request", test_request);
    g_test_add_func("/net/ws/decode-stream", test_decode_stream);
    g_test_add_func("/net/ws/decode-errors", test_decode_errors);
    g_test_add_func("/net/ws/frame-header", test_frame_header);
    return g_test_run();
}
