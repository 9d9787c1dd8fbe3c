/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The QMP attach against a fake qemu: fd passing and one-line failures. */

#include <gio/gio.h>
#include <glib/gstdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "display/qs-qmp.h"

typedef enum {
    FAKE_OK,
    FAKE_BUS_MODE,      /* add_client refused as qemu does without p2p=on */
    FAKE_NOT_QMP,       /* speaks something else */
    FAKE_SILENT,        /* never answers */
} FakeMode;

typedef struct {
    FakeMode mode;
    int listen_fd;
    char *commands;     /* what the client sent, for checks */
} Fake;

static char *read_line(int fd, int *ret_passed)
{
    GString *s = g_string_new(NULL);

    for (;;) {
        char c;
        union {
            char buf[CMSG_SPACE(sizeof(int))];
            struct cmsghdr align;
        } control;
        struct iovec iov = { &c, 1 };
        struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1,
                             .msg_control = control.buf,
                             .msg_controllen = sizeof(control.buf) };
        ssize_t r = recvmsg(fd, &mh, 0);

        if (r <= 0) {
            return g_string_free(s, s->len == 0);
        }
        for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm;
             cm = CMSG_NXTHDR(&mh, cm)) {
            if (cm->cmsg_type == SCM_RIGHTS && ret_passed) {
                memcpy(ret_passed, CMSG_DATA(cm), sizeof(int));
            }
        }
        if (c == '\n') {
            return g_string_free(s, FALSE);
        }
        g_string_append_c(s, c);
    }
}

static void say(int fd, const char *text)
{
    g_assert_cmpint(write(fd, text, strlen(text)), ==, (ssize_t)strlen(text));
}

static gpointer fake_thread(gpointer data)
{
    Fake *f = data;
    int fd = accept(f->listen_fd, NULL, NULL);
    GString *log = g_string_new(NULL);
    int passed = -1;

    g_assert_cmpint(fd, >=, 0);
    if (f->mode == FAKE_NOT_QMP) {
        say(fd, "SSH-2.0-OpenSSH\n{\"x\": 1}\n");
    } else if (f->mode == FAKE_SILENT) {
        g_free(read_line(fd, NULL));    /* until the client gives up */
    } else {
        say(fd, "{\"QMP\": {\"version\": {}, \"capabilities\": []}}\r\n");
        for (int i = 0; i < 3; i++) {
            g_autofree char *line = read_line(fd, &passed);

            if (!line) {
                break;
            }
            g_string_append_printf(log, "%s\n", line);
            if (i == 1) {
                /* An event in between must be skipped. */
                say(fd, "{\"event\": \"RESUME\", \"timestamp\": {}}\r\n");
            }
            if (i == 2 && f->mode == FAKE_BUS_MODE) {
                say(fd, "{\"error\": {\"class\": \"GenericError\", \"desc\": "
                        "\"p2p connections not accepted in bus mode\"}}\r\n");
                g_free(read_line(fd, NULL));    /* closefd */
                say(fd, "{\"return\": {}}\r\n");
            } else {
                say(fd, "{\"return\": {}}\r\n");
            }
        }
        if (passed >= 0 && f->mode == FAKE_OK) {
            say(passed, "hello");
        }
    }
    if (passed >= 0) {
        close(passed);
    }
    close(fd);
    f->commands = g_string_free(log, FALSE);
    return NULL;
}

static int attach(FakeMode mode, int timeout_ms, char **ret_commands,
                  GError **error)
{
    g_autofree char *dir = g_dir_make_tmp("qs-qmp-XXXXXX", NULL);
    g_autofree char *path = g_build_filename(dir, "qmp.sock", NULL);
    struct sockaddr_un addr = { .sun_family = AF_UNIX };
    Fake f = { mode, -1, NULL };
    GThread *thread;
    int fd;

    g_assert_nonnull(dir);
    strcpy(addr.sun_path, path);
    f.listen_fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    g_assert_cmpint(bind(f.listen_fd, (struct sockaddr *)&addr, sizeof(addr)),
                    ==, 0);
    g_assert_cmpint(listen(f.listen_fd, 1), ==, 0);
    thread = g_thread_new("fake-qmp", fake_thread, &f);
    fd = qs_qmp_attach_dbus_p2p(path, timeout_ms, error);
    g_thread_join(thread);
    close(f.listen_fd);
    g_unlink(path);
    g_rmdir(dir);
    if (ret_commands) {
        *ret_commands = f.commands;
    } else {
        g_free(f.commands);
    }
    return fd;
}

static void test_ok(void)
{
    g_autoptr(GError) error = NULL;
    g_autofree char *commands = NULL;
    char buf[6] = { 0 };
    int fd = attach(FAKE_OK, 5000, &commands, &error);

    g_assert_no_error(error);
    g_assert_cmpint(fd, >=, 0);
    g_assert_cmpint(read(fd, buf, 5), ==, 5);
    g_assert_cmpstr(buf, ==, "hello");
    close(fd);
    g_assert_nonnull(strstr(commands, "qmp_capabilities"));
    g_assert_nonnull(strstr(commands, "\"getfd\""));
    g_assert_nonnull(strstr(commands, "\"protocol\":\"@dbus-display\""));
}

static void test_bus_mode(void)
{
    g_autoptr(GError) error = NULL;
    int fd = attach(FAKE_BUS_MODE, 5000, NULL, &error);

    g_assert_cmpint(fd, ==, -1);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_SUPPORTED);
    g_assert_nonnull(strstr(error->message, "not in p2p mode"));
    g_assert_null(strchr(error->message, '\n'));
}

static void test_not_qmp(void)
{
    g_autoptr(GError) error = NULL;
    int fd = attach(FAKE_NOT_QMP, 5000, NULL, &error);

    g_assert_cmpint(fd, ==, -1);
    g_assert_nonnull(error);
}

static void test_silent(void)
{
    g_autoptr(GError) error = NULL;
    int fd = attach(FAKE_SILENT, 200, NULL, &error);

    g_assert_cmpint(fd, ==, -1);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT);
}

static void test_no_socket(void)
{
    g_autoptr(GError) error = NULL;
    int fd = qs_qmp_attach_dbus_p2p("/nonexistent/qmp.sock", 1000, &error);

    g_assert_cmpint(fd, ==, -1);
    g_assert_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND);
    g_assert_nonnull(strstr(error->message, "/nonexistent/qmp.sock"));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/display/qmp-attach/ok", test_ok);
    g_test_add_func("/display/qmp-attach/bus-mode", test_bus_mode);
    g_test_add_func("/display/qmp-attach/not-qmp", test_not_qmp);
    g_test_add_func("/display/qmp-attach/silent", test_silent);
    g_test_add_func("/display/qmp-attach/no-socket", test_no_socket);
    return g_test_run();
}
