/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The usbredir channel's bridge: qemu's connection taken only while a client channel is attached, ended when it goes, the client's bytes kept until qemu connects. */
#include "wire/qs-vmc-msg.h"
#include "wire/qs-usbredir-check.h"
#include "wire/qs-wire.h"
#include "vmc-fixture.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <spice/enums.h>
#include <spice/protocol.h>

/* A usbredir packet with a 12-byte header (no 64-bit ids): type,
 * length, id 0, then `body`. */
static GByteArray *packet(guint32 type, const void *body, gsize len)
{
    GByteArray *b = g_byte_array_new();

    qs_wire_u32(b, type);
    qs_wire_u32(b, (guint32)len);
    qs_wire_u32(b, 0);
    g_byte_array_append(b, body, (guint)len);
    return b;
}

/* A hello from `who` with no capabilities. */
static GByteArray *hello(const char *who)
{
    char version[64] = { 0 };

    g_strlcpy(version, who, sizeof(version));
    return packet(0, version, sizeof(version));
}

/* qemu's end writes its hello. */
static void qemu_hello(int q)
{
    g_autoptr(GByteArray) h = hello("qemu usb-redir guest");

    g_assert_cmpint(write(q, h->data, h->len), ==, (gssize)h->len);
}

/* Up to `n` bytes from qemu's (non-blocking) end, waiting on the loop
 * while the bridge still writes. */
static GByteArray *qemu_read_n(int q, gsize n)
{
    GByteArray *out = g_byte_array_new();

    for (int i = 0; i < 100 && out->len < n; i++) {
        g_autoptr(GByteArray) part = qemu_read(q, n - out->len);

        g_byte_array_append(out, part->data, part->len);
        if (out->len < n) {
            g_main_context_iteration(NULL, FALSE);
            g_usleep(1000);
        }
    }
    return out;
}

static void deliver(QsConn *usb, GByteArray *bytes)
{
    fake_conn_deliver(usb, SPICE_MSGC_SPICEVMC_DATA, bytes->data, bytes->len);
    fake_loop_run_pending();
}

static void iterate_until_open(QsVmcBridge *b, gboolean open)
{
    for (int i = 0; i < 100 && qs_vmc_bridge_is_open(b) != open; i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_cmpint(qs_vmc_bridge_is_open(b), ==, open);
}

/* A few idle rounds of the loop: nothing may change in them. */
static void iterate_idle(void)
{
    for (int i = 0; i < 20; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

/* qemu's end saw its peer close: EOF within a second. */
static void check_eof(int q)
{
    struct pollfd p = { .fd = q, .events = POLLIN };
    char c;

    g_assert_cmpint(poll(&p, 1, 1000), ==, 1);
    g_assert_cmpint(read(q, &c, 1), ==, 0);
}

static void wait_sent(QsConn *conn, guint n)
{
    for (int i = 0; i < 100 && fake_conn_sent(conn)->len < n; i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_cmpuint(fake_conn_sent(conn)->len, >=, n);
}

/* Two clients in turn, each with a connection of its own: qemu's waits
 * unaccepted while no client has the channel, its hello reaches the
 * client that takes it, and the client leaving ends it. */
static void test_per_client(void)
{
    Fixture fx = { 0 };
    g_autofree char *path = NULL;
    int lfd = listening_socket(&path);

    fixture_start(&fx, bridge_on(lfd, "usbredir.0", SPICE_CHANNEL_USBREDIR, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    for (int round = 0; round < 2; round++) {
        g_autoptr(GByteArray) sent = NULL;
        g_autoptr(GByteArray) got = NULL;
        g_autoptr(GByteArray) qh = hello("qemu usb-redir guest");
        g_autoptr(GByteArray) ch = hello("client");
        int q = qemu_connect(path);
        QsConn *usb;

        qemu_hello(q);
        iterate_idle();
        g_assert_false(qs_vmc_bridge_is_open(fx.bridge[0]));
        usb = link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
        iterate_until_open(fx.bridge[0], TRUE);
        wait_sent(usb, 1);
        sent = data_sent(usb);
        g_assert_cmpmem(sent->data, sent->len, qh->data, qh->len);
        deliver(usb, ch);
        got = qemu_read(q, ch->len);
        g_assert_cmpmem(got->data, got->len, ch->data, ch->len);
        fake_conn_vanish(usb, "the client left");
        fake_loop_run_pending();
        g_assert_false(qs_vmc_bridge_is_open(fx.bridge[0]));
        check_eof(q);
        close(q);
        qs_conn_unref(usb);
    }
    fixture_stop(&fx);
    unlink(path);
}

/* The client speaks first (its hello) before qemu has connected: its
 * bytes wait, bounded, and reach qemu once it does. */
static void test_client_first(void)
{
    Fixture fx = { 0 };
    g_autofree char *path = NULL;
    int lfd = listening_socket(&path);
    g_autoptr(GByteArray) got = NULL;
    g_autoptr(GByteArray) early = hello("client");
    QsConn *usb;
    int q;

    fixture_start(&fx, bridge_on(lfd, "usbredir.0", SPICE_CHANNEL_USBREDIR, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    usb = link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
    deliver(usb, early);
    q = qemu_connect(path);
    iterate_until_open(fx.bridge[0], TRUE);
    fake_loop_run_pending();
    /* Held until qemu's hello tells how to judge them. */
    g_assert_cmpint(fcntl(q, F_SETFL, O_NONBLOCK), ==, 0);
    got = qemu_read(q, early->len);
    g_assert_cmpuint(got->len, ==, 0);
    g_clear_pointer(&got, g_byte_array_unref);
    qemu_hello(q);
    for (int i = 0; i < 100 && fake_conn_sent(usb)->len < 1; i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    fake_loop_run_pending();
    got = qemu_read(q, early->len);
    g_assert_cmpmem(got->data, got->len, early->data, early->len);
    close(q);
    qs_conn_unref(usb);
    fixture_stop(&fx);
    unlink(path);
}

/* A client that floods before qemu has connected: the bridge stops
 * reading it at the bound instead of growing. What it sent is garbage:
 * once qemu's hello tells how to read it, the channel is closed and qemu
 * gets none of it. */
static void test_client_first_bounded(void)
{
    Fixture fx = { 0 };
    g_autofree char *path = NULL;
    int lfd = listening_socket(&path);
    g_autoptr(GByteArray) got = NULL;
    guint8 chunk[60000];
    gsize delivered = 0;
    QsConn *usb;
    int q;

    memset(chunk, 0x5a, sizeof(chunk));
    fixture_start(&fx, bridge_on(lfd, "usbredir.0", SPICE_CHANNEL_USBREDIR, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    usb = link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
    for (int i = 0; i < 100 && fake_conn_is_reading(usb); i++) {
        fake_conn_deliver(usb, SPICE_MSGC_SPICEVMC_DATA, chunk, sizeof(chunk));
        delivered += sizeof(chunk);
        fake_loop_run_pending();
    }
    g_assert_false(fake_conn_is_reading(usb));
    g_assert_cmpuint(delivered, <, QS_VMC_QEMU_QUEUE + sizeof(chunk) + 1);
    q = qemu_connect(path);
    g_assert_cmpint(fcntl(q, F_SETFL, O_NONBLOCK), ==, 0);
    iterate_until_open(fx.bridge[0], TRUE);
    qemu_hello(q);
    for (int i = 0; i < 100 && !fake_conn_close_reason(usb); i++) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_assert_nonnull(fake_conn_close_reason(usb));
    g_assert_nonnull(strstr(fake_conn_close_reason(usb), "usbredir packet"));
    fake_loop_run_pending();
    got = qemu_read(q, delivered);
    g_assert_cmpuint(got->len, ==, 0);
    close(q);
    qs_conn_unref(usb);
    fixture_stop(&fx);
    unlink(path);
}

/* One session's channel with qemu connected and both hellos through;
 * qemu's end in *q (non-blocking). */
static QsConn *usb_up(Fixture *fx, const char *path, int *q)
{
    g_autoptr(GByteArray) ch = hello("client");
    g_autoptr(GByteArray) got = NULL;
    QsConn *usb;

    fx->main = link_to(fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    usb = link_to(fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
    *q = qemu_connect(path);
    g_assert_cmpint(fcntl(*q, F_SETFL, O_NONBLOCK), ==, 0);
    iterate_until_open(fx->bridge[0], TRUE);
    qemu_hello(*q);
    wait_sent(usb, 1);
    deliver(usb, ch);
    got = qemu_read_n(*q, ch->len);
    g_assert_cmpuint(got->len, ==, ch->len);
    return usb;
}

/* Good packets pass, split anywhere; an unknown packet type or a packet
 * over the bound closes the channel, and qemu gets nothing of it. */
static void test_bad_stream(gconstpointer bad_kind)
{
    Fixture fx = { 0 };
    g_autofree char *path = NULL;
    int lfd = listening_socket(&path);
    g_autoptr(GByteArray) good = packet(2 /* device_disconnect */, NULL, 0);
    g_autoptr(GByteArray) bad = NULL;
    g_autoptr(GByteArray) got = NULL;
    QsConn *usb;
    int q;

    fixture_start(&fx, bridge_on(lfd, "usbredir.0", SPICE_CHANNEL_USBREDIR, 0), NULL);
    usb = usb_up(&fx, path, &q);
    /* A good packet a byte at a time. */
    for (guint i = 0; i < good->len; i++) {
        fake_conn_deliver(usb, SPICE_MSGC_SPICEVMC_DATA, good->data + i, 1);
        fake_loop_run_pending();
    }
    got = qemu_read_n(q, good->len);
    g_assert_cmpmem(got->data, got->len, good->data, good->len);
    g_clear_pointer(&got, g_byte_array_unref);
    if (g_str_equal(bad_kind, "type")) {
        bad = packet(0x52e6a938, NULL, 0);
    } else {
        bad = packet(101 /* bulk_packet */, NULL, 0);
        bad->data[4] = 0xff, bad->data[5] = 0xff, bad->data[6] = 0xff, bad->data[7] = 0x0f;
    }
    deliver(usb, bad);
    g_assert_nonnull(fake_conn_close_reason(usb));
    g_test_message("closed: %s", fake_conn_close_reason(usb));
    got = qemu_read(q, bad->len);
    g_assert_cmpuint(got->len, ==, 0);
    close(q);
    qs_conn_unref(usb);
    fixture_stop(&fx);
    unlink(path);
}

/* qemu closing its end (the guest or qemu restarting it) ends the client's
 * channel: its usbredir parser spoke to the connection that went. */
static void test_qemu_closes(void)
{
    Fixture fx = { 0 };
    g_autofree char *path = NULL;
    int lfd = listening_socket(&path);
    QsConn *usb;
    int q;

    fixture_start(&fx, bridge_on(lfd, "usbredir.0", SPICE_CHANNEL_USBREDIR, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    usb = link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
    q = qemu_connect(path);
    iterate_until_open(fx.bridge[0], TRUE);
    close(q);
    iterate_until_open(fx.bridge[0], FALSE);
    g_assert_nonnull(fake_conn_close_reason(usb));
    g_assert_nonnull(strstr(fake_conn_close_reason(usb), "usb-redir"));
    /* qemu connecting again waits for the next client channel. */
    q = qemu_connect(path);
    iterate_idle();
    g_assert_false(qs_vmc_bridge_is_open(fx.bridge[0]));
    close(q);
    qs_conn_unref(usb);
    fixture_stop(&fx);
    unlink(path);
}

static void test_fd_parse(void)
{
    g_autoptr(GError) error = NULL;
    int fd = -1;

    g_assert_true(qs_usbredir_fd_parse("7", &fd, &error));
    g_assert_cmpint(fd, ==, 7);
    g_assert_false(qs_usbredir_fd_parse("x7", &fd, &error));
    g_assert_nonnull(strstr(error->message, "--usbredir-fd"));
    g_clear_error(&error);
    g_assert_false(qs_usbredir_fd_parse("99999999999", &fd, &error));
    g_clear_error(&error);
    g_assert_false(qs_usbredir_fd_parse("", &fd, &error));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/vmc/usbredir/per-client", test_per_client);
    g_test_add_func("/vmc/usbredir/client-first", test_client_first);
    g_test_add_func("/vmc/usbredir/client-first-bounded", test_client_first_bounded);
    g_test_add_func("/vmc/usbredir/qemu-closes", test_qemu_closes);
    g_test_add_data_func("/vmc/usbredir/bad-type", "type", test_bad_stream);
    g_test_add_data_func("/vmc/usbredir/too-long", "length", test_bad_stream);
    g_test_add_func("/vmc/usbredir/fd-parse", test_fd_parse);
    return g_test_run();
}
