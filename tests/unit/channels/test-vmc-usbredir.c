/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The usbredir channel's bridge: qemu's connection taken only while a client channel is attached, ended when it goes, the client's bytes kept until qemu connects. */
#include "channels/qs-vmc-msg.h"
#include "vmc-fixture.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>
#include <spice/enums.h>
#include <spice/protocol.h>

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
        int q = qemu_connect(path);
        QsConn *usb;

        g_assert_cmpint(write(q, "hello", 5), ==, 5);
        iterate_idle();
        g_assert_false(qs_vmc_bridge_is_open(fx.bridge[0]));
        usb = link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
        iterate_until_open(fx.bridge[0], TRUE);
        wait_sent(usb, 1);
        sent = data_sent(usb);
        g_assert_cmpmem(sent->data, sent->len, "hello", 5);
        fake_conn_deliver(usb, SPICE_MSGC_SPICEVMC_DATA, "device", 6);
        fake_loop_run_pending();
        got = qemu_read(q, 6);
        g_assert_cmpmem(got->data, got->len, "device", 6);
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
    QsConn *usb;
    int q;

    fixture_start(&fx, bridge_on(lfd, "usbredir.0", SPICE_CHANNEL_USBREDIR, 0), NULL);
    fx.main = link_to(&fx, SPICE_CHANNEL_MAIN, 0, SPICE_LINK_ERR_OK);
    usb = link_to(&fx, SPICE_CHANNEL_USBREDIR, 0, SPICE_LINK_ERR_OK);
    fake_conn_deliver(usb, SPICE_MSGC_SPICEVMC_DATA, "early", 5);
    fake_loop_run_pending();
    q = qemu_connect(path);
    iterate_until_open(fx.bridge[0], TRUE);
    fake_loop_run_pending();
    got = qemu_read(q, 5);
    g_assert_cmpmem(got->data, got->len, "early", 5);
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
    g_test_add_func("/vmc/usbredir/qemu-closes", test_qemu_closes);
    g_test_add_func("/vmc/usbredir/fd-parse", test_fd_parse);
    return g_test_run();
}
