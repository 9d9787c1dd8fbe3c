/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chardev bridge and the port channel: a socketpair (or a listening socket) as qemu's chardev, a fake connection as the client (the parsers: test-vmc-msg.c). */
#include "channels/qs-channels.h"
#include "wire/qs-client-msg.h"
#include "channels/qs-vmc-bridge.h"
#include "wire/qs-vmc-msg.h"
#include "wire/qs-wire.h"
#include "fake-peers.h"
#include "vmc-fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>
#include <spice/enums.h>
#include <spice/protocol.h>


/* One port channel `name` on a socketpair whose other end (sv[1]) plays
 * qemu, with a client session that has linked it. */
static QsConn *one_port(Fixture *fx, int sv[2], const char *name)
{
    pair(sv);
    fixture_start(fx, bridge_on(sv[0], name, SPICE_CHANNEL_PORT, 0), NULL);
    fx->main = link_to(fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    return link_to(fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_OK);
}

static void one_port_stop(Fixture *fx, QsConn *port, int sv[2])
{
    qs_conn_unref(port);
    fixture_stop(fx);
    close(sv[1]);
}

static void pattern(guint8 *p, gsize n, gsize from)
{
    for (gsize i = 0; i < n; i++) {
        p[i] = (guint8)((from + i) * 7 + (from + i) / 251);
    }
}

static void test_offer(void)
{
    Fixture fx = { 0 };
    int a[2], b[2];
    QsConn *port;
    gsize size;
    const uint8_t *p;

    pair(a);
    pair(b);
    fixture_start(&fx, bridge_on(a[0], QS_PORT_WEBDAV, SPICE_CHANNEL_WEBDAV, 0),
                  bridge_on(b[0], "org.example.echo", SPICE_CHANNEL_PORT, 0));
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    fake_conn_deliver(fx.main, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
    p = msg_at(fx.main, fake_conn_sent(fx.main)->len - 1, SPICE_MSG_MAIN_CHANNELS_LIST, &size);
    /* display, inputs, cursor, then the bridges */
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 5);
    g_assert_cmpuint(p[4 + 6], ==, SPICE_CHANNEL_WEBDAV);
    g_assert_cmpuint(p[4 + 7], ==, 0);
    g_assert_cmpuint(p[4 + 8], ==, SPICE_CHANNEL_PORT);
    g_assert_cmpuint(p[4 + 9], ==, 0);

    /* Only what was given is linkable. */
    g_assert_null(link_to(&fx, SPICE_CHANNEL_PORT, 1, SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE));
    g_assert_null(link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE));
    g_assert_null(link_to(&fx, SPICE_CHANNEL_SMARTCARD, 0, SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE));

    port = link_to(&fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_OK);
    check_port_init(port, 0, "org.example.echo", TRUE);
    g_assert_cmpuint(fake_conn_max_message(port), ==, QS_VMC_MAX_CLIENT_MESSAGE);
    {
        g_autoptr(GPtrArray) clients = qs_channels_list_clients(fx.hub);
        QsClientInfo *info;

        g_assert_cmpuint(clients->len, ==, 1);
        info = g_ptr_array_index(clients, 0);
        g_assert_true(g_strv_contains((const char *const *)info->channels,
                                      "port:org.example.echo"));
    }
    /* COMPRESSED_DATA was not offered: the channel closes, naming it. */
    fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_COMPRESSED_DATA, "xxxxx", 5);
    g_assert_nonnull(strstr(fake_conn_close_reason(port), "COMPRESSED_DATA"));
    fake_loop_run_pending();
    qs_conn_unref(port);
    fixture_stop(&fx);
    close(a[1]);
    close(b[1]);
}

static void test_both_ways(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *port;
    guint8 buf[3000];
    g_autoptr(GByteArray) got = NULL;
    g_autoptr(GByteArray) sent = NULL;

    pair(sv);
    fixture_start(&fx, bridge_on(sv[0], QS_PORT_WEBDAV, SPICE_CHANNEL_WEBDAV, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    port = link_to(&fx, SPICE_CHANNEL_WEBDAV, 0, SPICE_LINK_ERR_OK);
    check_port_init(port, 0, QS_PORT_WEBDAV, TRUE);
    fake_conn_clear(port);

    /* Client to qemu, byte for byte, empty DATA included. */
    pattern(buf, sizeof(buf), 0);
    fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, buf, 1000);
    fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, NULL, 0);
    fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, buf + 1000, 2000);
    fake_conn_deliver(port, SPICE_MSGC_PORT_EVENT, (const guint8[]){ SPICE_PORT_EVENT_OPENED }, 1);
    fake_loop_run_pending();
    got = qemu_read(sv[1], sizeof(buf));
    g_assert_cmpmem(got->data, got->len, buf, sizeof(buf));

    /* qemu to client. */
    g_assert_cmpint(write(sv[1], buf, 777), ==, 777);
    fake_loop_run_pending();
    sent = data_sent(port);
    g_assert_cmpmem(sent->data, sent->len, buf, 777);

    /* Session over: qemu is no longer read until a new client's channel. */
    qs_channels_drop_clients(fx.hub, "test");
    fake_loop_run_pending();
    fake_conn_clear(port);
    g_assert_cmpint(write(sv[1], buf, 10), ==, 10);
    fake_loop_run_pending();
    g_assert_cmpuint(fake_conn_sent(port)->len, ==, 0);
    qs_conn_unref(port);
    g_clear_pointer(&fx.main, qs_conn_unref);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    port = link_to(&fx, SPICE_CHANNEL_WEBDAV, 0, SPICE_LINK_ERR_OK);
    fake_loop_run_pending();
    g_clear_pointer(&sent, g_byte_array_unref);
    sent = data_sent(port);
    g_assert_cmpmem(sent->data, sent->len, buf, 10);
    one_port_stop(&fx, port, sv);
}

/* qemu writes while the client does not read: the bridge stops reading
 * qemu at the client queue's mark, and resumes when it drains. */
static void test_flow_to_client(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *port;
    gsize total = 2 * 1024 * 1024, written = 0;
    g_autofree guint8 *buf = g_malloc(total);
    g_autoptr(GByteArray) sent = NULL;

    pattern(buf, total, 0);
    port = one_port(&fx, sv, "org.example.flood");
    fake_conn_clear(port);

    /* The client's queue is full: nothing is taken from qemu. */
    fake_conn_set_queued(port, QS_VMC_CLIENT_QUEUE);
    qs_vmc_bridge_client_writable(fx.bridge[0]);
    while (written < total) {
        ssize_t n = write(sv[1], buf + written, total - written);

        if (n <= 0) {
            break;
        }
        written += (gsize)n;
    }
    g_assert_cmpuint(written, >, 0);
    fake_loop_run_pending();
    g_assert_cmpuint(fake_conn_sent(port)->len, ==, 0);

    /* Each drain lets one read through, then the queue is full again. */
    for (int round = 0; round < 10000 && written < total; round++) {
        guint before = fake_conn_sent(port)->len;

        fake_conn_drain(port);
        fake_conn_set_queued(port, QS_VMC_CLIENT_QUEUE);
        fake_loop_run_pending();
        g_assert_cmpuint(fake_conn_sent(port)->len, <=, before + 1);
        while (written < total) {
            ssize_t n = write(sv[1], buf + written, total - written);

            if (n <= 0) {
                break;
            }
            written += (gsize)n;
        }
    }
    g_assert_cmpuint(written, ==, total);
    fake_conn_drain(port);
    for (int i = 0; i < 100; i++) {
        fake_loop_run_pending();
    }
    sent = data_sent(port);
    g_assert_cmpuint(sent->len, ==, total);
    g_assert_cmpmem(sent->data, sent->len, buf, total);
    one_port_stop(&fx, port, sv);
}

/* The client writes while qemu does not read: the client's messages stop
 * being read once qemu's queue reaches its mark; none is lost. */
static void test_flow_to_qemu(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *port;
    guint8 chunk[32 * 1024];
    gsize sent = 0;
    QsVmcBridgeStats st;
    g_autoptr(GByteArray) got = g_byte_array_new();

    port = one_port(&fx, sv, "org.example.sink");
    for (int i = 0; i < 1000 && fake_conn_is_reading(port); i++) {
        pattern(chunk, sizeof(chunk), sent);
        fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, chunk, sizeof(chunk));
        sent += sizeof(chunk);
        fake_loop_run_pending();
    }
    g_assert_false(fake_conn_is_reading(port));
    qs_vmc_bridge_get_stats(fx.bridge[0], &st);
    g_assert_cmpuint(st.to_qemu, ==, sent);
    /* qemu reads: the client is read again, and every byte arrived. */
    for (int i = 0; i < 1000 && (got->len < sent || !fake_conn_is_reading(port)); i++) {
        g_autoptr(GByteArray) part = qemu_read(sv[1], sent);

        g_byte_array_append(got, part->data, part->len);
        fake_loop_run_pending();
    }
    g_assert_true(fake_conn_is_reading(port));
    g_assert_cmpuint(got->len, ==, sent);
    for (gsize off = 0; off < sent; off += sizeof(chunk)) {
        pattern(chunk, sizeof(chunk), off);
        g_assert_cmpmem(got->data + off, sizeof(chunk), chunk, sizeof(chunk));
    }
    one_port_stop(&fx, port, sv);
}

/* The bound itself: qemu never reads; the helper's queue stays under the
 * mark plus one client message, however long the client goes on. */
static void test_bounded_to_qemu(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *port;
    guint8 chunk[60000];
    int rcv = 4096;
    QsVmcBridgeStats st;

    port = one_port(&fx, sv, "org.example.stuck");
    /* A small socket buffer, so the helper's own queue is what fills. */
    g_assert_cmpint(setsockopt(sv[0], SOL_SOCKET, SO_SNDBUF, &rcv, sizeof(rcv)), ==, 0);
    g_assert_cmpint(setsockopt(sv[1], SOL_SOCKET, SO_RCVBUF, &rcv, sizeof(rcv)), ==, 0);
    memset(chunk, 0x5a, sizeof(chunk));
    for (int i = 0; i < 100 && fake_conn_is_reading(port); i++) {
        fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, chunk, sizeof(chunk));
        fake_loop_run_pending();
    }
    g_assert_false(fake_conn_is_reading(port));
    qs_vmc_bridge_get_stats(fx.bridge[0], &st);
    /* Queued in the helper, plus what the kernel took (a few KiB). */
    g_test_message("queued for qemu when reading stopped: %" G_GUINT64_FORMAT, st.to_qemu);
    g_assert_cmpuint(st.to_qemu, <, QS_VMC_QEMU_QUEUE + sizeof(chunk) + 64 * 1024);
    one_port_stop(&fx, port, sv);
}

/* qemu connects to us: the port opens; qemu goes away: it closes and the
 * client's bytes are dropped; qemu connects again: it reopens. */
static void test_reopen(void)
{
    Fixture fx = { 0 };
    g_autofree char *path = NULL;
    int lfd = listening_socket(&path);
    QsConn *port;
    int q;
    QsVmcBridgeStats st;

    fixture_start(&fx, bridge_on(lfd, "org.example.again", SPICE_CHANNEL_PORT, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    port = link_to(&fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_OK);
    check_port_init(port, 0, "org.example.again", FALSE);
    fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, "lost", 4);
    qs_vmc_bridge_get_stats(fx.bridge[0], &st);
    g_assert_cmpuint(st.dropped, ==, 4);

    for (int round = 0; round < 2; round++) {
        g_autoptr(GByteArray) got = NULL;
        g_autoptr(GByteArray) sent = NULL;

        fake_conn_clear(port);
        q = qemu_connect(path);
        for (int i = 0; i < 100 && !qs_vmc_bridge_is_open(fx.bridge[0]); i++) {
            g_main_context_iteration(NULL, TRUE);
        }
        g_assert_true(qs_vmc_bridge_is_open(fx.bridge[0]));
        g_assert_cmpuint(last_type(port), ==, SPICE_MSG_PORT_EVENT);
        g_assert_cmpuint(*msg_at(port, 0, SPICE_MSG_PORT_EVENT, NULL), ==,
                         SPICE_PORT_EVENT_OPENED);
        fake_conn_deliver(port, SPICE_MSGC_SPICEVMC_DATA, "ping", 4);
        fake_loop_run_pending();
        got = qemu_read(q, 4);
        g_assert_cmpmem(got->data, got->len, "ping", 4);
        g_assert_cmpint(write(q, "pong", 4), ==, 4);
        for (int i = 0; i < 100 && fake_conn_sent(port)->len < 2; i++) {
            g_main_context_iteration(NULL, TRUE);
        }
        sent = data_sent(port);
        g_assert_cmpmem(sent->data, sent->len, "pong", 4);
        close(q);
        for (int i = 0; i < 100 && qs_vmc_bridge_is_open(fx.bridge[0]); i++) {
            g_main_context_iteration(NULL, TRUE);
        }
        g_assert_false(qs_vmc_bridge_is_open(fx.bridge[0]));
        g_assert_cmpuint(last_type(port), ==, SPICE_MSG_PORT_EVENT);
        g_assert_cmpuint(*msg_at(port, fake_conn_sent(port)->len - 1, SPICE_MSG_PORT_EVENT, NULL),
                         ==, SPICE_PORT_EVENT_CLOSED);
    }
    qs_conn_unref(port);
    fixture_stop(&fx);
    unlink(path);
}

/* A connected descriptor that qemu closes stays closed. */
static void test_closed_for_good(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *port;

    port = one_port(&fx, sv, "org.example.once");
    fake_conn_clear(port);
    g_assert_cmpint(write(sv[1], "last", 4), ==, 4);
    close(sv[1]);
    for (int i = 0; i < 100 && qs_vmc_bridge_is_open(fx.bridge[0]); i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_false(qs_vmc_bridge_is_open(fx.bridge[0]));
    /* What qemu wrote before it closed still reached the client. */
    {
        g_autoptr(GByteArray) sent = data_sent(port);

        g_assert_cmpmem(sent->data, sent->len, "last", 4);
    }
    g_assert_cmpuint(last_type(port), ==, SPICE_MSG_PORT_EVENT);
    /* The channel stays; new clients see the port closed. */
    g_assert_null(fake_conn_close_reason(port));
    qs_conn_unref(port);
    port = link_to(&fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_OK);
    check_port_init(port, 0, "org.example.once", FALSE);
    qs_conn_unref(port);
    fixture_stop(&fx);
}

/* Several client sessions: a port belongs to the first whose channel
 * links; another session's link is refused until that session ends. */
static void test_one_session_at_a_time(void)
{
    Fixture fx = { 0 };
    int sv[2];
    QsConn *port = one_port(&fx, sv, "org.example.shared");
    QsConn *main_a = g_steal_pointer(&fx.main);
    QsConn *port_b;
    g_autoptr(GByteArray) sent = NULL;

    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    g_assert_null(link_to(&fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE));
    g_assert_null(fake_conn_close_reason(port));
    fake_conn_vanish(main_a, "the first client left");
    fake_loop_run_pending();
    g_assert_nonnull(fake_conn_close_reason(port));
    port_b = link_to(&fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_OK);
    check_port_init(port_b, 0, "org.example.shared", TRUE);
    g_assert_cmpint(write(sv[1], "to b", 4), ==, 4);
    for (int i = 0; i < 100 && fake_conn_sent(port_b)->len < 2; i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    sent = data_sent(port_b);
    g_assert_cmpmem(sent->data, sent->len, "to b", 4);
    qs_conn_unref(port_b);
    qs_conn_unref(main_a);
    one_port_stop(&fx, port, sv);
}

/* A view-only client's port link is refused: its bytes would reach the
 * guest. */
static void test_view_only(void)
{
    Fixture fx = { 0 };
    int sv[2];
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    QsConn *port = one_port(&fx, sv, "org.example.input");
    QsConn *viewer = fake_conn_new(SPICE_CHANNEL_MAIN, 0, 0, 0);
    guint32 sid = 0;

    /* The first client (full rights) holds the port; it leaves. */
    fake_conn_vanish(fx.main, "the first client left");
    fake_loop_run_pending();
    fake_conn_set_view_only(viewer);
    g_assert_cmpint(cb->authorize(qs_conn_get_link_info(viewer), &sid, fx.hub), ==,
                    SPICE_LINK_ERR_OK);
    fake_conn_set_session_id(viewer, sid);
    cb->attach(qs_conn_ref(viewer), fx.hub);
    qs_conn_unref(fx.main);
    fx.main = viewer;
    fx.session_id = sid;
    g_assert_null(link_to(&fx, SPICE_CHANNEL_PORT, 0, SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE));
    one_port_stop(&fx, port, sv);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vmc/offer", test_offer);
    g_test_add_func("/vmc/both-ways", test_both_ways);
    g_test_add_func("/vmc/flow-to-client", test_flow_to_client);
    g_test_add_func("/vmc/flow-to-qemu", test_flow_to_qemu);
    g_test_add_func("/vmc/bounded-to-qemu", test_bounded_to_qemu);
    g_test_add_func("/vmc/reopen", test_reopen);
    g_test_add_func("/vmc/closed-for-good", test_closed_for_good);
    g_test_add_func("/vmc/one-session-at-a-time", test_one_session_at_a_time);
    g_test_add_func("/vmc/view-only", test_view_only);
    return g_test_run();
}
