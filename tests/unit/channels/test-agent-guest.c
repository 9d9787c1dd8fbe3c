/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest's own agent behind the main channel: a socketpair as the guest agent's port, fake connections as control and view-only clients. */
#include "channels/qs-agent-channel.h"
#include "wire/qs-agent-chunk.h"
#include "channels/qs-agent-guest.h"
#include "wire/qs-agent.h"
#include "channels/qs-channels-agent.h"
#include "channels/qs-channels.h"
#include "wire/qs-wire.h"
#include "fake-peers.h"

#include <errno.h>
#include <fcntl.h>
#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct {
    QsScreen *screen;
    QsChannels *hub;
    QsAgentGuest *guest;
    int port;                       /* the guest's end of the agent port */
    GByteArray *from_host;          /* what the guest read */
} Fixture;

static void setup(Fixture *fx)
{
    QsChannelsConfig cfg = { .vm_name = "vm" };
    g_autoptr(GError) error = NULL;
    int sv[2];
    QsChardev *cd;

    fx->screen = qs_screen_new();
    cfg.screen = fx->screen;
    fx->hub = qs_channels_new(&cfg);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_assert_cmpint(fcntl(sv[1], F_SETFL, O_NONBLOCK), ==, 0);
    cd = qs_chardev_new("com.redhat.spice.0", sv[0], &error);
    g_assert_no_error(error);
    fx->guest = qs_agent_guest_new(cd);
    qs_agent_set_guest(fx->hub, fx->guest);
    fx->port = sv[1];
    fx->from_host = g_byte_array_new();
}

static void teardown(Fixture *fx)
{
    qs_agent_set_guest(fx->hub, NULL);
    qs_channels_free(fx->hub);
    fake_loop_run_pending();
    qs_agent_guest_free(fx->guest);
    qs_screen_free(fx->screen);
    close(fx->port);
    g_byte_array_unref(fx->from_host);
}

/* Runs the main loop until `cond` or 5 s. */
static void pump(Fixture *fx, gboolean (*cond)(Fixture *, gpointer), gpointer data)
{
    gint64 end = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    while (!cond(fx, data)) {
        uint8_t buf[65536];
        ssize_t n;

        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_main_context_iteration(NULL, FALSE);
        while ((n = read(fx->port, buf, sizeof(buf))) > 0) {
            g_byte_array_append(fx->from_host, buf, (guint)n);
        }
        g_assert_true(n == 0 || errno == EAGAIN);
        g_usleep(1000);
    }
}

static void guest_send(Fixture *fx, uint32_t type, const void *body, uint32_t size)
{
    g_autoptr(GByteArray) header = g_byte_array_new();
    g_autoptr(GByteArray) out = g_byte_array_new();

    qs_wire_u32(header, VD_AGENT_PROTOCOL);
    qs_wire_u32(header, type);
    qs_wire_u64(header, 0);
    qs_wire_u32(header, size);
    qs_agent_chunk_build(VDP_CLIENT_PORT, header->data, body, size, out);
    g_assert_cmpint(write(fx->port, out->data, out->len), ==, (ssize_t)out->len);
}

static QsConn *open_main(Fixture *fx, gboolean view_only, uint32_t *agent_connected)
{
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    guint32 caps[QS_SERVER_MAX_CHANNEL_CAPS];
    guint n_caps;
    guint32 session_id = 0;
    QsConn *conn = fake_conn_new(SPICE_CHANNEL_MAIN, 0, 0, 0);
    const uint8_t *p;

    if (view_only) {
        fake_conn_set_view_only(conn);
    }
    g_assert_cmpint(cb->prepare(qs_conn_get_link_info(conn), caps, &n_caps, fx->hub), ==,
                    SPICE_LINK_ERR_OK);
    g_assert_cmpint(cb->authorize(qs_conn_get_link_info(conn), &session_id, fx->hub), ==,
                    SPICE_LINK_ERR_OK);
    fake_conn_set_session_id(conn, session_id);
    cb->attach(qs_conn_ref(conn), fx->hub);
    p = g_bytes_get_data(g_array_index(fake_conn_sent(conn), FakeMsg, 0).payload, NULL);
    *agent_connected = qs_wire_get_u32(p + 16);
    fake_conn_clear(conn);
    return conn;
}

static guint count_type(QsConn *conn, uint16_t type)
{
    GArray *sent = fake_conn_sent(conn);
    guint n = 0;

    for (guint i = 0; i < sent->len; i++) {
        n += g_array_index(sent, FakeMsg, i).type == type;
    }
    return n;
}

typedef struct {
    QsConn *conn;
    uint16_t type;
    guint count;
} Want;

static gboolean has_msgs(Fixture *fx, gpointer data)
{
    Want *w = data;

    (void)fx;
    return count_type(w->conn, w->type) >= w->count;
}

static gboolean host_bytes(Fixture *fx, gpointer data)
{
    return fx->from_host->len >= GPOINTER_TO_UINT(data);
}

/* The guest's agent has not spoken: the helper asks it for its
 * capabilities as a client would (ANNOUNCE_CAPABILITIES, request 1, no
 * capabilities of its own), since spice-vdagentd speaks first only when it
 * opens its port. Every test starts by taking that question. */
static void take_caps_question(Fixture *fx)
{
    const uint8_t *p;

    pump(fx, host_bytes, GUINT_TO_POINTER(8 + 20 + 8));
    g_assert_cmpuint(fx->from_host->len, ==, 8 + 20 + 8);
    p = fx->from_host->data;
    g_assert_cmpuint(qs_wire_get_u32(p), ==, VDP_CLIENT_PORT);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, 20 + 8);
    g_assert_cmpuint(qs_wire_get_u32(p + 8), ==, VD_AGENT_PROTOCOL);
    g_assert_cmpuint(qs_wire_get_u32(p + 12), ==, VD_AGENT_ANNOUNCE_CAPABILITIES);
    g_assert_cmpuint(qs_wire_get_u32(p + 24), ==, 8);
    g_assert_cmpuint(qs_wire_get_u32(p + 28), ==, 1);
    g_assert_cmpuint(qs_wire_get_u32(p + 32), ==, 0);
    g_byte_array_set_size(fx->from_host, 0);
}

static void on_msg(const QsAgentMsg *msg, gpointer user_data)
{
    g_ptr_array_add(user_data, g_bytes_new(msg->data, msg->size));
}

static gboolean keep_all(uint32_t type)
{
    (void)type;
    return TRUE;
}

/* The client's AGENT_DATA so far, reassembled. */
static GPtrArray *client_msgs(QsConn *conn)
{
    GPtrArray *msgs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    g_autoptr(QsAgentReader) r = qs_agent_reader_new(keep_all);
    GArray *sent = fake_conn_sent(conn);

    for (guint i = 0; i < sent->len; i++) {
        FakeMsg *m = &g_array_index(sent, FakeMsg, i);
        gsize n;
        const uint8_t *d = g_bytes_get_data(m->payload, &n);

        if (m->type == SPICE_MSG_MAIN_AGENT_DATA) {
            g_assert_cmpuint(n, <=, QS_AGENT_CHUNK_MAX);
            g_assert_true(qs_agent_reader_feed(r, d, n, on_msg, msgs, NULL));
        }
    }
    return msgs;
}

typedef struct {
    QsAgentReader *reader;          /* the client port's messages */
    GPtrArray *msgs;
    guint server;
    uint32_t server_type;
} HostGot;

static void on_host_chunk(uint32_t port, const uint8_t *data, uint32_t size, gpointer user_data)
{
    HostGot *got = user_data;

    if (port == VDP_SERVER_PORT) {
        got->server++;
        got->server_type = size >= 8 ? qs_wire_get_u32(data + 4) : 0;
        return;
    }
    g_assert_true(qs_agent_reader_feed(got->reader, data, size, on_msg, got->msgs, NULL));
}

static void test_control_and_view_only(void)
{
    Fixture fx;
    uint32_t connected;
    QsConn *main_c, *view;
    uint8_t big[5000], from_client[3000];
    uint8_t start[4] = { 10, 0, 0, 0 };
    Want w;
    g_autoptr(GPtrArray) msgs = NULL;
    g_autoptr(QsAgentChunkReader) chunks = qs_agent_chunk_reader_new();
    g_autoptr(QsAgentReader) reader = qs_agent_reader_new(keep_all);
    g_autoptr(GPtrArray) host_msgs = g_ptr_array_new_with_free_func((GDestroyNotify)g_bytes_unref);
    HostGot got = { reader, host_msgs, 0, 0 };
    GQueue pieces = G_QUEUE_INIT;

    setup(&fx);
    take_caps_question(&fx);
    /* Not yet spoken: no agent. */
    main_c = open_main(&fx, FALSE, &connected);
    g_assert_cmpuint(connected, ==, 0);
    guest_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, (uint8_t[8]){ 1 }, 8);
    w = (Want){ main_c, SPICE_MSG_MAIN_AGENT_CONNECTED, 1 };
    pump(&fx, has_msgs, &w);
    /* A view-only client is told there is none, even now. */
    view = open_main(&fx, TRUE, &connected);
    g_assert_cmpuint(connected, ==, 0);
    /* The control client starts; the guest's 5000-byte message reaches it whole. */
    fake_conn_clear(main_c);
    fake_conn_deliver(main_c, SPICE_MSGC_MAIN_AGENT_START, start, 4);
    for (guint i = 0; i < sizeof(big); i++) {
        big[i] = (uint8_t)(i * 13);
    }
    guest_send(&fx, VD_AGENT_CLIPBOARD, big, sizeof(big));
    w = (Want){ main_c, SPICE_MSG_MAIN_AGENT_DATA, 3 };
    pump(&fx, has_msgs, &w);
    msgs = client_msgs(main_c);
    g_assert_cmpuint(msgs->len, ==, 1);
    g_assert_cmpmem(g_bytes_get_data(msgs->pdata[0], NULL), g_bytes_get_size(msgs->pdata[0]),
                    big, sizeof(big));
    g_assert_cmpuint(count_type(view, SPICE_MSG_MAIN_AGENT_DATA), ==, 0);
    g_assert_cmpuint(count_type(view, SPICE_MSG_MAIN_AGENT_CONNECTED), ==, 0);
    /* The client's 3000-byte message reaches the guest whole, in chunks. */
    for (guint i = 0; i < sizeof(from_client); i++) {
        from_client[i] = (uint8_t)(i * 5 + 1);
    }
    qs_agent_build(VD_AGENT_FILE_XFER_DATA, from_client, sizeof(from_client), &pieces);
    while (!g_queue_is_empty(&pieces)) {
        g_autoptr(GBytes) p = g_queue_pop_head(&pieces);
        gsize n;
        const uint8_t *d = g_bytes_get_data(p, &n);

        fake_conn_deliver(main_c, SPICE_MSGC_MAIN_AGENT_DATA, d, n);
    }
    pump(&fx, host_bytes, GUINT_TO_POINTER(sizeof(from_client) + 20 + 2 * 8));
    g_assert_true(qs_agent_chunk_reader_feed(chunks, fx.from_host->data, fx.from_host->len,
                                             on_host_chunk, &got, NULL));
    g_assert_cmpuint(host_msgs->len, ==, 1);
    g_assert_cmpmem(g_bytes_get_data(host_msgs->pdata[0], NULL),
                    g_bytes_get_size(host_msgs->pdata[0]), from_client, sizeof(from_client));
    g_byte_array_set_size(fx.from_host, 0);
    /* The view-only client's agent data goes nowhere. */
    fake_conn_deliver(view, SPICE_MSGC_MAIN_AGENT_START, start, 4);
    /* The control client goes: the guest agent hears CLIENT_DISCONNECTED. */
    fake_conn_vanish(main_c, "test");
    fake_loop_run_pending();
    pump(&fx, host_bytes, GUINT_TO_POINTER(8 + 20));
    g_assert_true(qs_agent_chunk_reader_feed(chunks, fx.from_host->data, fx.from_host->len,
                                             on_host_chunk, &got, NULL));
    g_assert_cmpuint(got.server, ==, 1);
    g_assert_cmpuint(got.server_type, ==, VD_AGENT_CLIENT_DISCONNECTED);
    g_assert_cmpuint(host_msgs->len, ==, 1);
    fake_conn_vanish(view, "test");
    teardown(&fx);
    qs_conn_unref(main_c);
    qs_conn_unref(view);
}

/* A chunk for port 7: the client is told the agent went. */
static void test_bad_framing(void)
{
    Fixture fx;
    uint32_t connected;
    QsConn *main_c;
    Want w;
    g_autoptr(GByteArray) bad = g_byte_array_new();

    setup(&fx);
    take_caps_question(&fx);
    guest_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, (uint8_t[8]){ 1 }, 8);
    for (int i = 0; i < 50; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    main_c = open_main(&fx, FALSE, &connected);
    g_assert_cmpuint(connected, ==, 1);
    qs_wire_u32(bad, 7);
    qs_wire_u32(bad, 4);
    qs_wire_u32(bad, 0);
    g_assert_cmpint(write(fx.port, bad->data, bad->len), ==, (ssize_t)bad->len);
    w = (Want){ main_c, SPICE_MSG_MAIN_AGENT_DISCONNECTED, 1 };
    pump(&fx, has_msgs, &w);
    /* More from the guest is ignored: no AGENT_CONNECTED again. */
    guest_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, (uint8_t[8]){ 1 }, 8);
    for (int i = 0; i < 50; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpuint(count_type(main_c, SPICE_MSG_MAIN_AGENT_CONNECTED), ==, 0);
    fake_conn_vanish(main_c, "test");
    teardown(&fx);
    qs_conn_unref(main_c);
}

/* Runs the main loop for `ms` milliseconds. */
static void run_for_ms(guint ms)
{
    for (gint64 end = g_get_monotonic_time() + (gint64)ms * 1000; g_get_monotonic_time() < end;) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

/* The client's agent message, in AGENT_DATA pieces on its main channel. */
static void client_send(QsConn *main_c, uint32_t type, const void *body, size_t size)
{
    GQueue pieces = G_QUEUE_INIT;

    qs_agent_build(type, body, size, &pieces);
    while (!g_queue_is_empty(&pieces)) {
        g_autoptr(GBytes) p = g_queue_pop_head(&pieces);
        gsize n;
        const uint8_t *d = g_bytes_get_data(p, &n);

        fake_conn_deliver(main_c, SPICE_MSGC_MAIN_AGENT_DATA, d, n);
    }
}

/* A control client whose agent has started, the guest's agent having
 * answered the helper's question with `guest_request`. */
static QsConn *started_client(Fixture *fx, uint32_t guest_request)
{
    uint8_t caps[8] = { (uint8_t)guest_request };
    uint8_t start[4] = { 10, 0, 0, 0 };
    uint32_t connected;
    QsConn *main_c;

    setup(fx);
    take_caps_question(fx);
    guest_send(fx, VD_AGENT_ANNOUNCE_CAPABILITIES, caps, 8);
    run_for_ms(50);
    main_c = open_main(fx, FALSE, &connected);
    g_assert_cmpuint(connected, ==, 1);
    fake_conn_deliver(main_c, SPICE_MSGC_MAIN_AGENT_START, start, 4);
    return main_c;
}

/* spice-gtk queues a cancelled transfer's STATUS without waking its main
 * channel: while a client's file transfer is under way its main channel
 * gets PINGs, which stop once it has been quiet for 5 s. A clipboard
 * message starts none. */
static void test_xfer_wakes_client(void)
{
    Fixture fx;
    uint8_t status[8] = { 7, 0, 0, 0, 1, 0, 0, 0 }; /* id 7, cancelled */
    uint32_t grab = VD_AGENT_CLIPBOARD_UTF8_TEXT;
    QsConn *main_c = started_client(&fx, 1);
    Want w = { main_c, SPICE_MSG_PING, 2 };
    gint64 quiet;
    guint pings;

    /* Not a transfer: no PING in over a second. */
    client_send(main_c, VD_AGENT_CLIPBOARD_GRAB, &grab, sizeof(grab));
    run_for_ms(1200);
    g_assert_cmpuint(count_type(main_c, SPICE_MSG_PING), ==, 0);
    /* A transfer's STATUS: PINGs come. */
    client_send(main_c, VD_AGENT_FILE_XFER_STATUS, status, sizeof(status));
    quiet = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;
    pump(&fx, has_msgs, &w);
    /* Quiet for 5 s: any timer that fires from now on stops them. */
    run_for_ms((guint)MAX(0, (quiet - g_get_monotonic_time()) / 1000) + 100);
    pings = count_type(main_c, SPICE_MSG_PING);
    run_for_ms(1200);
    g_assert_cmpuint(count_type(main_c, SPICE_MSG_PING), ==, pings);
    fake_conn_vanish(main_c, "test");
    teardown(&fx);
    qs_conn_unref(main_c);
}

/* spice-vdagentd asks for a client's capabilities only when it opens its
 * port: once it has spoken, such a message means it started over, and the
 * control client is told the agent went and came back (as spice-server
 * tells it when the port closes and opens); the message itself is for
 * nobody now. Its answer to a client's question (request 0) is passed on. */
static void test_agent_started_over(void)
{
    Fixture fx;
    uint8_t start[4] = { 10, 0, 0, 0 };
    QsConn *main_c = started_client(&fx, 0);
    Want w = { main_c, SPICE_MSG_MAIN_AGENT_DATA, 1 };

    guest_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, (uint8_t[8]){ 0 }, 8);
    pump(&fx, has_msgs, &w);
    g_assert_cmpuint(count_type(main_c, SPICE_MSG_MAIN_AGENT_DISCONNECTED), ==, 0);

    fake_conn_clear(main_c);
    guest_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, (uint8_t[8]){ 1 }, 8);
    w = (Want){ main_c, SPICE_MSG_MAIN_AGENT_CONNECTED, 1 };
    pump(&fx, has_msgs, &w);
    g_assert_cmpuint(fake_conn_sent(main_c)->len, ==, 2);
    g_assert_cmpuint(g_array_index(fake_conn_sent(main_c), FakeMsg, 0).type, ==,
                     SPICE_MSG_MAIN_AGENT_DISCONNECTED);
    g_assert_cmpuint(g_array_index(fake_conn_sent(main_c), FakeMsg, 1).type, ==,
                     SPICE_MSG_MAIN_AGENT_CONNECTED);
    /* The client starts over; the agent's answers reach it again. */
    fake_conn_deliver(main_c, SPICE_MSGC_MAIN_AGENT_START, start, 4);
    guest_send(&fx, VD_AGENT_ANNOUNCE_CAPABILITIES, (uint8_t[8]){ 0 }, 8);
    w = (Want){ main_c, SPICE_MSG_MAIN_AGENT_DATA, 1 };
    pump(&fx, has_msgs, &w);
    fake_conn_vanish(main_c, "test");
    teardown(&fx);
    qs_conn_unref(main_c);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/agent-guest/control-and-view-only", test_control_and_view_only);
    g_test_add_func("/channels/agent-guest/bad-framing", test_bad_framing);
    g_test_add_func("/channels/agent-guest/xfer-wakes-client", test_xfer_wakes_client);
    g_test_add_func("/channels/agent-guest/started-over", test_agent_started_over);
    return g_test_run();
}
