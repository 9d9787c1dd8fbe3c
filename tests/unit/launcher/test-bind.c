/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qs_bind_listener: the first port of the range that binds, past ports in
 * use and ports the system refuses (EACCES), and an error that counts
 * both when none is left. */

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <gio/gio.h>
#include "qs-launch-spawn.h"

#define ADDR "127.0.0.1"

/* A listening socket on a free port whose next port is free too. */
static int occupy_pair(guint *port)
{
    for (guint tries = 0; tries < 50; tries++) {
        struct sockaddr_in sa = { .sin_family = AF_INET,
                                  .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
        socklen_t len = sizeof(sa);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        int next;

        g_assert_cmpint(fd, >=, 0);
        g_assert_cmpint(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), ==, 0);
        g_assert_cmpint(listen(fd, 1), ==, 0);
        g_assert_cmpint(getsockname(fd, (struct sockaddr *)&sa, &len), ==, 0);
        *port = ntohs(sa.sin_port);
        next = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        sa.sin_port = htons((guint16)(*port + 1));
        if (*port < 65535 && bind(next, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
            close(next);
            return fd;
        }
        close(next);
        close(fd);
    }
    g_error("no free pair of ports on " ADDR " in 50 tries");
}

static void test_skips_in_use(void)
{
    g_autoptr(GError) error = NULL;
    guint busy, got = 0;
    int blocker = occupy_pair(&busy);
    int fd = qs_bind_listener(ADDR, busy, busy + 1, &got, &error);

    g_assert_no_error(error);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpuint(got, ==, busy + 1);
    close(fd);
    fd = qs_bind_listener(ADDR, busy, busy, &got, &error);
    g_assert_cmpint(fd, ==, -1);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_ADDRESS_IN_USE);
    g_assert_nonnull(strstr(error->message, "no free port in"));
    g_assert_nonnull(strstr(error->message, "1 in use, 0 refused"));
    close(blocker);
}

static void test_bad_address(void)
{
    g_autoptr(GError) error = NULL;
    guint got = 0;

    g_assert_cmpint(qs_bind_listener("localhost", 5500, 5599, &got, &error), ==, -1);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT);
    g_assert_nonnull(strstr(error->message, "'localhost' is not a numeric address"));
}

/* Without CAP_NET_BIND_SERVICE, ports below 1024 are refused (EACCES):
 * run in a subprocess that drops every capability first. */
static void test_skips_refused(void)
{
    if (g_test_subprocess()) {
        struct __user_cap_header_struct hdr = { _LINUX_CAPABILITY_VERSION_3, 0 };
        struct __user_cap_data_struct data[2];
        g_autoptr(GError) error = NULL;
        guint got = 0;
        int fd;

        memset(data, 0, sizeof(data));
        g_assert_cmpint(syscall(SYS_capset, &hdr, data), ==, 0);
        fd = qs_bind_listener(ADDR, 1022, 1023, &got, &error);
        g_assert_cmpint(fd, ==, -1);
        g_assert_error(error, G_IO_ERROR, G_IO_ERROR_PERMISSION_DENIED);
        g_assert_nonnull(strstr(error->message, "0 in use, 2 refused"));
        g_clear_error(&error);
        /* 1024 is the first unprivileged port (net.ipv4.ip_unprivileged_port_start). */
        fd = qs_bind_listener(ADDR, 1023, 1024, &got, &error);
        g_assert_no_error(error);
        g_assert_cmpuint(got, ==, 1024);
        close(fd);
        return;
    }
    g_test_trap_subprocess(NULL, 10 * G_USEC_PER_SEC, G_TEST_SUBPROCESS_DEFAULT);
    g_test_trap_assert_passed();
}

int main(int argc, char **argv)
{
    g_autofree char *start = NULL;

    g_test_init(&argc, &argv, NULL);
    if (g_file_get_contents("/proc/sys/net/ipv4/ip_unprivileged_port_start",
                            &start, NULL, NULL) && atoi(start) != 1024) {
        g_error("net.ipv4.ip_unprivileged_port_start is %s; the refused-port "
                "test needs 1024", g_strstrip(start));
    }
    g_test_add_func("/launcher/bind/skips-in-use", test_skips_in_use);
    g_test_add_func("/launcher/bind/bad-address", test_bad_address);
    g_test_add_func("/launcher/bind/skips-refused", test_skips_refused);
    return g_test_run();
}
