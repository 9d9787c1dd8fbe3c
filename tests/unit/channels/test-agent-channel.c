/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the main channel's emulated agent over a fake connection, a fake clipboard backend and a fake monitors sink. */
#include "channels/qs-agent-channel.h"
#include "wire/qs-agent.h"
#include "channels/qs-channels-agent.h"
#include "channels/qs-channels.h"
#include "wire/qs-wire.h"
#include "fake-peers.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>
#include <string.h>

/* The backend: what the agent asked of "qemu". */
typedef struct {
    GString *log;
    GBytes *provided;
} FakeBackend;

static void be_grab(gpointer backend, uint8_t sel)
{
    g_string_append_printf(((FakeBackend *)backend)->log, "grab %u;", sel);
}

static void be_release(gpointer backend, uint8_t sel)
{
    g_string_append_printf(((FakeBackend *)backend)->log, "release %u;", sel);
}

static void be_fetch(gpointer backend, uint8_t sel)
{
    g_string_append_printf(((FakeBackend *)backend)->log, "fetch %u;", sel);
}

static void be_provide(gpointer backend, uint8_t sel, const uint8_t *data, size_t size)
{
    FakeBackend *be = backend;

    g_string_append_printf(be->log, "provide %u %s;", sel, data ? "text" : "none");
    g_clear_pointer(&be->provided, g_bytes_unref);
    be->provided = data ? g_bytes_new(data, size) : NULL;
}

static const QsAgentBackendOps fake_ops = {
    .grab = be_grab,
    .release = be_release,
    .fetch = be_fetch,
    .provide = be_provide,
};

typedef struct {
    QsScreen *screen;
    QsChannels *hub;
    QsConn *main;
    FakeBackend be;
} Fixture;

static void setup(Fixture *fx, gboolean backend, gboolean available)
{
    QsChannelsConfig cfg = { .vm_name = "vm" };

    fx->screen = qs_screen_new();
    cfg.screen = fx->screen;
    fx->hub = qs_channels_new(&cfg);
    fx->be.log = g_string_new(NULL);
    if (backend) {
        qs_agent_set_backend(fx->hub, &fake_ops, &fx->be, available);
    }
}

static void teardown(Fixture *fx)
{
    qs_agent_set_monitors(fx->hub, NULL, NULL);
    qs_agent_set_backend(fx->hub, NULL, NULL, FALSE);
    qs_channels_free(fx->hub);
    fake_loop_run_pending();
    if (fx->main) {
        qs_conn_unref(fx->main);
    }
    qs_screen_free(fx->screen);
    g_string_free(fx->be.log, TRUE);
    g_clear_pointer(&fx->be.provided, g_bytes_unref);
}

/* Links the main channel; returns INIT's agent_connected. */
static uint32_t open_main(Fixture *fx)
{
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    guint32 caps[QS_SERVER_MAX_CHANNEL_CAPS];
    guint n_caps;
    guint32 session_id = 0;
    GArray *sent;
    const uint8_t *p;
    gsize size;
    uint32_t connected;

    fx->main = fake_conn_new(SPICE_CHANNEL_MAIN, 0, 0, 0);
    g_assert_cmpint(cb->prepare(qs_conn_get_link_info(fx->main), caps, &n_caps, fx->hub),
                    ==, SPICE_LINK_ERR_OK);
    g_assert_cmpint(cb->authorize(qs_conn_get_link_info(fx->main), &session_id, fx->hub),
                    ==, SPICE_LINK_ERR_OK);
    fake_conn_set_session_id(fx->main, session_id);
    cb->attach(qs_conn_ref(fx->main), fx->hub);
    sent = fake_conn_sent(fx->main);
    g_assert_cmpuint(sent->len, ==, 1);
    g_assert_cmpuint(g_array_index(sent, FakeMsg, 0).type, ==, SPICE_MSG_MAIN_INIT);
    p = g_bytes_get_data(g_array_index(sent, FakeMsg, 0).payload, &size);
    g_assert_cmpuint(size, ==, 32);
    g_assert_cmpuint(qs_wire_get_u32(p + 20), ==, QS_AGENT_TOKENS);
    connected = qs_wire_get_u32(p + 16);
    fake_conn_clear(fx->main);
    return connected;
}

static void client_start(Fixture *fx, uint32_t tokens)
{
    uint8_t b[4];

    memcpy(b, (uint8_t[4]){ (uint8_t)tokens, (uint8_t)(tokens >> 8), (uint8_t)(tokens >> 16),
                            (uint8_t)(tokens >> 24) }, 4);
    fake_conn_deliver(fx->main, SPICE_MSGC_MAIN_AGENT_START, b, 4);
}

/* One agent message from the client, in pieces as spice-gtk cuts them. */
static void client_send(Fixture *fx, uint32_t type, GBytes *body)
{
    GQueue pieces = G_QUEUE_INIT;
    gsize size;
    const uint8_t *data = g_bytes_get_data(body, &size);

    qs_agent_build(type, data, size, &pieces);
    while (!g_queue_is_empty(&pieces)) {
        g_autoptr(GBytes) p = g_queue_pop_head(&pieces);
        gsize n;
        const uint8_t *d = g_bytes_get_data(p, &n);

        fake_conn_deliver(fx->main, SPICE_MSGC_MAIN_AGENT_DATA, d, n);
    }
    g_bytes_unref(body);
}

static gboolean keep_all(uint32_t type)
{
    (void)type;
    return TRUE;
}

static void collect(const QsAgentMsg *msg, gpointer user_data)
{
    GByteArray *b = g_byte_array_new();

    qs_wire_u32(b, msg->type);
    g_byte_array_append(b, msg->data, msg->size);
    g_ptr_array_add(user_data, g_byte_array_free_to_bytes(b));
}

/* The agent messages sent to the client so far, each as u32 type + body;
 * `tokens_returned` adds up the AGENT_TOKENs. */
static GPtrArray *client_received(Fixture *fx, uint32_t *tokens_returned)
{
    GPtrArray *msgs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autoptr(QsAgentReader) r = qs_agent_reader_new(keep_all);
    GArray *sent = fake_conn_sent(fx->main);

    if (tokens_returned) {
        *tokens_returned = 0;
    }
    for (guint i = 0; i < sent->len; i++) {
        FakeMsg *m = &g_array_index(sent, FakeMsg, i);
        gsize n;
        const uint8_t *d = g_bytes_get_data(m->payload, &n);
        g_autoptr(GError) error = NULL;

        if (m->type == SPICE_MSG_MAIN_AGENT_DATA) {
            g_assert_cmpuint(n, <=, QS_AGENT_CHUNK_MAX);
            g_assert_true(qs_agent_reader_feed(r, d, n, collect, msgs, &error));
        } else if (m->type == SPICE_MSG_MAIN_AGENT_TOKEN && tokens_returned) {
            *tokens_returned += qs_wire_get_u32(d);
        }
    }
    fake_conn_clear(fx->main);
    return msgs;
}

static const uint8_t *msg_body(GPtrArray *msgs, guint i, uint32_t type, gsize *size)
{
    const uint8_t *d;

    g_assert_cmpuint(i, <, msgs->len);
    d = g_bytes_get_data(msgs->pdata[i], size);
    g_assert_cmpuint(qs_wire_get_u32(d), ==, type);
    *size -= 4;
    return d + 4;
}

/* Client caps with selections; our answer; returns after the exchange. */
static void exchange_caps(Fixture *fx)
{
    uint32_t caps[1] = { (1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) |
                         (1u << VD_AGENT_CAP_CLIPBOARD_SELECTION) };
    g_autoptr(GPtrArray) msgs = NULL;
    const uint8_t *p;
    gsize size;

    client_start(fx, ~0u);
    client_send(fx, VD_AGENT_ANNOUNCE_CAPABILITIES, qs_agent_caps_body(TRUE, caps, 1));
    msgs = client_received(fx, NULL);
    p = msg_body(msgs, 0, VD_AGENT_ANNOUNCE_CAPABILITIES, &size);
    g_assert_cmpuint(size, ==, 8);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 0);        /* no request back */
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==,
                     (1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) |
                     (1u << VD_AGENT_CAP_CLIPBOARD_SELECTION) |
                     (1u << VD_AGENT_CAP_FILE_XFER_DISABLED));
}

static void test_no_backend(void)
{
    Fixture fx = { 0 };

    setup(&fx, FALSE, FALSE);
    g_assert_cmpuint(open_main(&fx), ==, 0);
    /* Agent traffic without an agent is dropped, not fatal. */
    client_start(&fx, 10);
    client_send(&fx, VD_AGENT_CLIPBOARD_RELEASE, qs_agent_release_body(FALSE, 0));
    g_assert_null(fake_conn_close_reason(fx.main));
    teardown(&fx);
}

/* The client copies: qemu asks, the client's 5000 bytes reach it. */
static void test_client_to_qemu(void)
{
    Fixture fx = { 0 };
    const uint32_t text = VD_AGENT_CLIPBOARD_UTF8_TEXT;
    g_autoptr(GPtrArray) msgs = NULL;
    g_autofree char *big = g_malloc(5000);
    uint32_t returned;
    const uint8_t *p;
    gsize size;

    memset(big, 'x', 5000);
    setup(&fx, TRUE, TRUE);
    g_assert_cmpuint(open_main(&fx), ==, 1);
    exchange_caps(&fx);
    client_send(&fx, VD_AGENT_CLIPBOARD_GRAB, qs_agent_grab_body(TRUE, 1, &text, 1));
    g_assert_cmpstr(fx.be.log->str, ==, "grab 1;");

    qs_agent_backend_request(fx.hub, 1);
    msgs = client_received(&fx, NULL);
    p = msg_body(msgs, 0, VD_AGENT_CLIPBOARD_REQUEST, &size);
    g_assert_cmpuint(size, ==, 8);
    g_assert_cmpuint(p[0], ==, 1);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, text);

    client_send(&fx, VD_AGENT_CLIPBOARD,
                qs_agent_clipboard_body(TRUE, 1, text, big, 5000));
    g_assert_cmpstr(fx.be.log->str, ==, "grab 1;provide 1 text;");
    g_assert_cmpmem(g_bytes_get_data(fx.be.provided, NULL),
                    g_bytes_get_size(fx.be.provided), big, 5000);
    /* caps (1 piece) + grab (1) + clipboard (3): 5 pieces, one batch back. */
    g_clear_pointer(&msgs, g_ptr_array_unref);
    msgs = client_received(&fx, &returned);
    g_assert_cmpuint(returned, ==, 5);

    /* Unasked data is dropped; a request for a selection the client does
     * not own is answered "none" at once. */
    client_send(&fx, VD_AGENT_CLIPBOARD, qs_agent_clipboard_body(TRUE, 1, text, "a", 1));
    qs_agent_backend_request(fx.hub, 2);
    g_assert_cmpstr(fx.be.log->str, ==, "grab 1;provide 1 text;provide 2 none;");

    client_send(&fx, VD_AGENT_CLIPBOARD_RELEASE, qs_agent_release_body(TRUE, 1));
    g_assert_cmpstr(fx.be.log->str, ==, "grab 1;provide 1 text;provide 2 none;release 1;");
    /* A pending request is answered "none" when the client goes, and what
     * it had grabbed is released in qemu (nobody can give that text now). */
    client_send(&fx, VD_AGENT_CLIPBOARD_GRAB, qs_agent_grab_body(TRUE, 0, &text, 1));
    qs_agent_backend_request(fx.hub, 0);
    g_string_truncate(fx.be.log, 0);
    fake_conn_deliver(fx.main, SPICE_MSGC_DISCONNECTING, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    fake_loop_run_pending();
    g_assert_cmpstr(fx.be.log->str, ==, "provide 0 none;release 0;");
    teardown(&fx);
}

/* qemu copies (before the client came, and after): the client asks and
 * gets the text; sends within its tokens. */
static void test_qemu_to_client(void)
{
    Fixture fx = { 0 };
    const uint32_t text = VD_AGENT_CLIPBOARD_UTF8_TEXT;
    g_autoptr(GPtrArray) msgs = NULL;
    g_autoptr(GBytes) hello = g_bytes_new_static("hello", 5);
    g_autofree char *big = g_malloc(4100);
    const uint8_t *p;
    gsize size;

    memset(big, 'q', 4100);
    setup(&fx, TRUE, TRUE);
    qs_agent_backend_grab(fx.hub, 0);
    g_assert_cmpuint(open_main(&fx), ==, 1);
    client_start(&fx, ~0u);
    {
        uint32_t caps[1] = { 1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND };

        /* No selection cap: bodies without selection headers. */
        client_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, qs_agent_caps_body(TRUE, caps, 1));
    }
    msgs = client_received(&fx, NULL);
    g_assert_cmpuint(msgs->len, ==, 2);
    p = msg_body(msgs, 1, VD_AGENT_CLIPBOARD_GRAB, &size);
    g_assert_cmpuint(size, ==, 4);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, text);

    client_send(&fx, VD_AGENT_CLIPBOARD_REQUEST, qs_agent_request_body(FALSE, 0, text));
    g_assert_cmpstr(fx.be.log->str, ==, "fetch 0;");
    qs_agent_backend_data(fx.hub, 0, hello);
    g_clear_pointer(&msgs, g_ptr_array_unref);
    msgs = client_received(&fx, NULL);
    p = msg_body(msgs, 0, VD_AGENT_CLIPBOARD, &size);
    g_assert_cmpmem(p, size, "\1\0\0\0hello", 9);

    /* Selection 1 cannot be told to a client without the selection cap. */
    qs_agent_backend_grab(fx.hub, 1);
    g_clear_pointer(&msgs, g_ptr_array_unref);
    msgs = client_received(&fx, NULL);
    g_assert_cmpuint(msgs->len, ==, 0);

    /* Token-bound sending: 2 tokens left, a 3-piece message waits for one. */
    client_start(&fx, 2);
    client_send(&fx, VD_AGENT_CLIPBOARD_REQUEST, qs_agent_request_body(FALSE, 0, text));
    {
        g_autoptr(GBytes) t = g_bytes_new(big, 4100);

        qs_agent_backend_data(fx.hub, 0, t);
    }
    g_assert_cmpuint(fake_conn_sent(fx.main)->len, ==, 2);
    fake_conn_deliver(fx.main, SPICE_MSGC_MAIN_AGENT_TOKEN, "\1\0\0\0", 4);
    g_clear_pointer(&msgs, g_ptr_array_unref);
    msgs = client_received(&fx, NULL);
    p = msg_body(msgs, 0, VD_AGENT_CLIPBOARD, &size);
    g_assert_cmpuint(size, ==, 4104);

    /* qemu lets go: told once the client has a token again. */
    qs_agent_backend_release(fx.hub, 0);
    g_assert_cmpuint(fake_conn_sent(fx.main)->len, ==, 0);
    fake_conn_deliver(fx.main, SPICE_MSGC_MAIN_AGENT_TOKEN, "\12\0\0\0", 4);
    g_clear_pointer(&msgs, g_ptr_array_unref);
    msgs = client_received(&fx, NULL);
    g_assert_cmpuint(msgs->len, ==, 1);
    msg_body(msgs, 0, VD_AGENT_CLIPBOARD_RELEASE, &size);
    g_assert_cmpuint(size, ==, 0);
    teardown(&fx);
}

static void expect_dropped(uint32_t protocol, uint32_t type, uint32_t size,
                           gsize piece, const char *reason)
{
    Fixture fx = { 0 };
    g_autoptr(GByteArray) b = g_byte_array_new();

    setup(&fx, TRUE, TRUE);
    open_main(&fx);
    client_start(&fx, ~0u);
    qs_wire_u32(b, protocol);
    qs_wire_u32(b, type);
    qs_wire_u64(b, 0);
    qs_wire_u32(b, size);
    g_byte_array_set_size(b, (guint)piece);
    fake_conn_deliver(fx.main, SPICE_MSGC_MAIN_AGENT_DATA, b->data, b->len);
    g_assert_nonnull(fake_conn_close_reason(fx.main));
    g_assert_nonnull(strstr(fake_conn_close_reason(fx.main), reason));
    teardown(&fx);
}

static void test_malformed(void)
{
    expect_dropped(2, VD_AGENT_CLIPBOARD, 0, 20, "malformed agent message: agent message with protocol 2");
    expect_dropped(1, VD_AGENT_CLIPBOARD, QS_AGENT_CLIPBOARD_MSG_MAX + 1, 20, "limit");
    expect_dropped(1, VD_AGENT_CLIPBOARD, 4000, 2049, "piece of 2049 bytes");
    /* A request too short for its type. */
    expect_dropped(1, VD_AGENT_CLIPBOARD_REQUEST, 3, 23, "needs 4");
    expect_dropped(1, VD_AGENT_MONITORS_CONFIG, 4, 24, "needs 8");
}

/* Messages we do not implement are skipped; the session goes on. */
static void test_ignored(void)
{
    Fixture fx = { 0 };
    g_autofree uint8_t *monitors = g_malloc0(3000);

    setup(&fx, TRUE, TRUE);
    open_main(&fx);
    exchange_caps(&fx);
    client_send(&fx, VD_AGENT_DISPLAY_CONFIG, g_bytes_new(monitors, 3000));
    client_send(&fx, VD_AGENT_FILE_XFER_START, g_bytes_new(monitors, 100));
    client_send(&fx, VD_AGENT_CLIPBOARD_RELEASE, qs_agent_release_body(TRUE, 0));
    g_assert_null(fake_conn_close_reason(fx.main));
    g_assert_cmpstr(fx.be.log->str, ==, "");
    teardown(&fx);
}

/* qemu's clipboard registers after the client came: AGENT_CONNECTED. */
static void test_late_backend(void)
{
    Fixture fx = { 0 };
    GArray *sent;

    setup(&fx, TRUE, FALSE);
    g_assert_cmpuint(open_main(&fx), ==, 0);
    qs_agent_backend_available(fx.hub, TRUE);
    sent = fake_conn_sent(fx.main);
    g_assert_cmpuint(sent->len, ==, 1);
    g_assert_cmpuint(g_array_index(sent, FakeMsg, 0).type, ==, SPICE_MSG_MAIN_AGENT_CONNECTED);
    fake_conn_clear(fx.main);
    exchange_caps(&fx);
    qs_agent_backend_available(fx.hub, FALSE);
    sent = fake_conn_sent(fx.main);
    g_assert_cmpuint(g_array_index(sent, FakeMsg, 0).type, ==, SPICE_MSG_MAIN_AGENT_DISCONNECTED);
    teardown(&fx);
}

/* ---- monitors configs ------------------------------------------------------ */

/* The sink: what the agent asked of "qemu". */
static void sink_configure(gpointer sink, guint head, const QsAgentMonitor *m)
{
    g_string_append_printf(((FakeBackend *)sink)->log, "%smode %ux%u%+d%+d %ux%umm;",
                           head ? "head 1 " : "", m->width, m->height, m->x, m->y,
                           m->width_mm, m->height_mm);
}

static const QsAgentMonitorsOps fake_monitors = { .configure = sink_configure };

static GBytes *one_monitor(uint32_t flags, uint32_t w, uint32_t h, int32_t x, int32_t y)
{
    GByteArray *b = g_byte_array_new();

    qs_wire_u32(b, 1);
    qs_wire_u32(b, flags);
    qs_wire_u32(b, h);
    qs_wire_u32(b, w);
    qs_wire_u32(b, 32);
    qs_wire_i32(b, x);
    qs_wire_i32(b, y);
    if (flags & VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE) {
        qs_wire_u16(b, 203);
        qs_wire_u16(b, 271);
    }
    return g_byte_array_free_to_bytes(b);
}

/* Client caps as spice-gtk's (REPLY among them, or not); returns ours. */
static uint32_t caps_with(Fixture *fx, gboolean reply)
{
    uint32_t caps[1] = { (1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) |
                         (1u << VD_AGENT_CAP_CLIPBOARD_SELECTION) |
                         (1u << VD_AGENT_CAP_MONITORS_CONFIG) |
                         (reply ? 1u << VD_AGENT_CAP_REPLY : 0) };
    g_autoptr(GPtrArray) msgs = NULL;
    const uint8_t *p;
    gsize size;

    client_start(fx, ~0u);
    client_send(fx, VD_AGENT_ANNOUNCE_CAPABILITIES, qs_agent_caps_body(TRUE, caps, 1));
    msgs = client_received(fx, NULL);
    g_assert_cmpuint(msgs->len, ==, 1);
    p = msg_body(msgs, 0, VD_AGENT_ANNOUNCE_CAPABILITIES, &size);
    g_assert_cmpuint(size, ==, 8);
    return qs_wire_get_u32(p + 4);
}

/* The VD_AGENT_REPLYs the client got since the last look, as "S" / "E". */
static char *replies(Fixture *fx)
{
    g_autoptr(GPtrArray) msgs = client_received(fx, NULL);
    GString *out = g_string_new(NULL);

    for (guint i = 0; i < msgs->len; i++) {
        gsize size;
        const uint8_t *p = msg_body(msgs, i, VD_AGENT_REPLY, &size);

        g_assert_cmpuint(size, ==, 8);
        g_assert_cmpuint(qs_wire_get_u32(p), ==, VD_AGENT_MONITORS_CONFIG);
        g_string_append(out, qs_wire_get_u32(p + 4) == VD_AGENT_SUCCESS ? "S" : "E");
    }
    return g_string_free(out, FALSE);
}

static void test_monitors(void)
{
    Fixture fx = { 0 };
    g_autofree char *r1 = NULL, *r2 = NULL, *r3 = NULL, *r4 = NULL, *r5 = NULL;

    setup(&fx, TRUE, TRUE);
    qs_agent_set_monitors(fx.hub, &fake_monitors, &fx.be);
    open_main(&fx);
    g_assert_cmphex(caps_with(&fx, TRUE), ==,
                    (1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND) |
                    (1u << VD_AGENT_CAP_CLIPBOARD_SELECTION) |
                    (1u << VD_AGENT_CAP_FILE_XFER_DISABLED) |
                    (1u << VD_AGENT_CAP_MONITORS_CONFIG) | (1u << VD_AGENT_CAP_REPLY) |
                    (1u << VD_AGENT_CAP_SPARSE_MONITORS_CONFIG));

    /* Passed on; answered when the sink is. */
    client_send(&fx, VD_AGENT_MONITORS_CONFIG,
                one_monitor(VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS |
                            VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE, 1024, 768, 0, 0));
    g_assert_cmpstr(fx.be.log->str, ==, "mode 1024x768+0+0 271x203mm;");
    r1 = replies(&fx);
    g_assert_cmpstr(r1, ==, "");
    qs_agent_monitors_done(fx.hub, TRUE);
    r2 = replies(&fx);
    g_assert_cmpstr(r2, ==, "S");

    /* Two before any answer: one answer serves both; no position without
     * USE_POS. */
    g_string_truncate(fx.be.log, 0);
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 800, 600, 5, 5));
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 640, 480, 5, 5));
    g_assert_cmpstr(fx.be.log->str, ==, "mode 800x600+0+0 0x0mm;mode 640x480+0+0 0x0mm;");
    qs_agent_monitors_done(fx.hub, FALSE);
    r3 = replies(&fx);
    g_assert_cmpstr(r3, ==, "EE");
    /* An answer nobody waits for sends nothing. */
    qs_agent_monitors_done(fx.hub, TRUE);
    g_assert_cmpuint(fake_conn_sent(fx.main)->len, ==, 0);

    /* Out of bounds, or nothing enabled: refused here, the session goes on. */
    g_string_truncate(fx.be.log, 0);
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 20000, 768, 0, 0));
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 8, 8, 0, 0));
    client_send(&fx, VD_AGENT_MONITORS_CONFIG,
                one_monitor(VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS, 800, 600, INT32_MIN, 0));
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, g_bytes_new("\0\0\0\0\0\0\0\0", 8));
    r4 = replies(&fx);
    g_assert_cmpstr(r4, ==, "EEEE");
    g_assert_cmpstr(fx.be.log->str, ==, "");
    g_assert_null(fake_conn_close_reason(fx.main));

    /* A client gone meanwhile: the late answer goes nowhere. */
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 1280, 800, 0, 0));
    fake_conn_deliver(fx.main, SPICE_MSGC_DISCONNECTING, "\0\0\0\0\0\0\0\0\0\0\0\0", 12);
    fake_loop_run_pending();
    qs_agent_monitors_done(fx.hub, TRUE);
    r5 = replies(&fx);
    g_assert_cmpstr(r5, ==, "");
    teardown(&fx);
}

/* MONITORS_CONFIG of `n` monitors {w, h} (0x0: disabled), no flags. */
static GBytes *monitors(guint n, const uint32_t (*wh)[2])
{
    GByteArray *b = g_byte_array_new();

    qs_wire_u32(b, n);
    qs_wire_u32(b, 0);
    for (guint i = 0; i < n; i++) {
        qs_wire_u32(b, wh[i][1]);
        qs_wire_u32(b, wh[i][0]);
        qs_wire_u32(b, 32);
        qs_wire_i32(b, 0);
        qs_wire_i32(b, 0);
    }
    return g_byte_array_free_to_bytes(b);
}

/* Two heads: monitor i is head i; a disabled monitor leaves its head, one
 * beyond the heads is ignored, one bad monitor refuses the whole config. */
static void test_monitors_heads(void)
{
    Fixture fx = { 0 };
    QsScreen *second = qs_screen_new();
    QsChannelsHead heads[2] = { { NULL, NULL, NULL }, { second, NULL, NULL } };
    QsChannelsConfig cfg = { .vm_name = "vm", .heads = heads, .n_heads = 2 };
    g_autofree char *r1 = NULL, *r2 = NULL;

    fx.screen = qs_screen_new();
    heads[0].screen = fx.screen;
    fx.hub = qs_channels_new(&cfg);
    fx.be.log = g_string_new(NULL);
    qs_agent_set_backend(fx.hub, &fake_ops, &fx.be, TRUE);
    qs_agent_set_monitors(fx.hub, &fake_monitors, &fx.be);
    open_main(&fx);
    caps_with(&fx, TRUE);

    client_send(&fx, VD_AGENT_MONITORS_CONFIG,
                monitors(3, (const uint32_t[][2]){ { 0, 0 }, { 1024, 768 }, { 800, 600 } }));
    g_assert_cmpstr(fx.be.log->str, ==, "head 1 mode 1024x768+0+0 0x0mm;");
    g_string_truncate(fx.be.log, 0);
    client_send(&fx, VD_AGENT_MONITORS_CONFIG,
                monitors(2, (const uint32_t[][2]){ { 1280, 800 }, { 640, 480 } }));
    g_assert_cmpstr(fx.be.log->str, ==, "mode 1280x800+0+0 0x0mm;head 1 mode 640x480+0+0 0x0mm;");
    qs_agent_monitors_done(fx.hub, TRUE);
    r1 = replies(&fx);
    g_assert_cmpstr(r1, ==, "SS");

    g_string_truncate(fx.be.log, 0);
    client_send(&fx, VD_AGENT_MONITORS_CONFIG,
                monitors(2, (const uint32_t[][2]){ { 1280, 800 }, { 20000, 10 } }));
    client_send(&fx, VD_AGENT_MONITORS_CONFIG,
                monitors(3, (const uint32_t[][2]){ { 0, 0 }, { 0, 0 }, { 800, 600 } }));
    r2 = replies(&fx);
    g_assert_cmpstr(r2, ==, "EE");
    g_assert_cmpstr(fx.be.log->str, ==, "");
    g_assert_null(fake_conn_close_reason(fx.main));
    teardown(&fx);
    qs_screen_free(second);
}

/* No REPLY cap: nothing answered; no sink: no MONITORS_CONFIG cap, refused. */
static void test_monitors_no_reply_no_sink(void)
{
    Fixture fx = { 0 };
    g_autofree char *r1 = NULL, *r2 = NULL;

    setup(&fx, TRUE, TRUE);
    qs_agent_set_monitors(fx.hub, &fake_monitors, &fx.be);
    open_main(&fx);
    caps_with(&fx, FALSE);
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 1024, 768, 0, 0));
    qs_agent_monitors_done(fx.hub, TRUE);
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 20000, 768, 0, 0));
    r1 = replies(&fx);
    g_assert_cmpstr(r1, ==, "");
    g_assert_cmpstr(fx.be.log->str, ==, "mode 1024x768+0+0 0x0mm;");
    teardown(&fx);

    memset(&fx, 0, sizeof(fx));
    setup(&fx, TRUE, TRUE);
    open_main(&fx);
    g_assert_false(caps_with(&fx, TRUE) & (1u << VD_AGENT_CAP_MONITORS_CONFIG));
    client_send(&fx, VD_AGENT_MONITORS_CONFIG, one_monitor(0, 1024, 768, 0, 0));
    r2 = replies(&fx);
    g_assert_cmpstr(r2, ==, "E");
    g_assert_null(fake_conn_close_reason(fx.main));
    teardown(&fx);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/agent-channel/no-backend", test_no_backend);
    g_test_add_func("/channels/agent-channel/client-to-qemu", test_client_to_qemu);
    g_test_add_func("/channels/agent-channel/qemu-to-client", test_qemu_to_client);
    g_test_add_func("/channels/agent-channel/malformed", test_malformed);
    g_test_add_func("/channels/agent-channel/ignored", test_ignored);
    g_test_add_func("/channels/agent-channel/late-backend", test_late_backend);
    g_test_add_func("/channels/agent-channel/monitors", test_monitors);
    g_test_add_func("/channels/agent-channel/monitors-heads", test_monitors_heads);
    g_test_add_func("/channels/agent-channel/monitors-no-reply-no-sink",
                    test_monitors_no_reply_no_sink);
    return g_test_run();
}
