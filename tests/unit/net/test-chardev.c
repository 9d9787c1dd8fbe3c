/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsChardev's refusals: descriptors that are not a stream socket, named in the error (the bridge's tests drive the rest: tests/unit/channels/test-vmc.c). */
#include "net/qs-chardev.h"

#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

static void test_bad_descriptors(void)
{
    g_autoptr(GError) error = NULL;
    int p[2], d[2];

    g_assert_cmpint(pipe(p), ==, 0);
    g_assert_null(qs_chardev_new("org.x", p[0], &error));
    g_assert_nonnull(strstr(error->message, "not a socket"));
    g_assert_nonnull(strstr(error->message, "org.x"));
    g_clear_error(&error);
    g_assert_cmpint(socketpair(AF_UNIX, SOCK_DGRAM, 0, d), ==, 0);
    g_assert_null(qs_chardev_new("org.y", d[0], &error));
    g_assert_nonnull(strstr(error->message, "not a stream socket"));
    g_clear_error(&error);
    g_assert_null(qs_chardev_new("org.z", 1000, &error));
    g_assert_nonnull(strstr(error->message, "1000"));
    close(p[0]);
    close(p[1]);
    close(d[0]);
    close(d[1]);
}

/* A connected socket is open at once; a listening one waits for qemu. */
static void test_modes(void)
{
    g_autoptr(GError) error = NULL;
    int sv[2], l = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    QsChardev *cd;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    cd = qs_chardev_new("org.a", sv[0], &error);
    g_assert_no_error(error);
    g_assert_true(qs_chardev_is_open(cd));
    g_assert_false(qs_chardev_is_listening(cd));
    g_assert_cmpstr(qs_chardev_get_name(cd), ==, "org.a");
    qs_chardev_free(cd);
    close(sv[1]);
    /* An address of just the family: Linux binds an unused abstract one. */
    g_assert_cmpint(bind(l, (struct sockaddr *)&(struct sockaddr_un){ .sun_family = AF_UNIX },
                         sizeof(sa_family_t)), ==, 0);
    g_assert_cmpint(listen(l, 1), ==, 0);
    cd = qs_chardev_new("org.b", l, &error);
    g_assert_no_error(error);
    g_assert_false(qs_chardev_is_open(cd));
    g_assert_true(qs_chardev_is_listening(cd));
    g_assert_false(qs_chardev_write(cd, (const guint8 *)"x", 1));
    qs_chardev_free(cd);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/net/chardev/bad-descriptors", test_bad_descriptors);
    g_test_add_func("/net/chardev/modes", test_modes);
    return g_test_run();
}
