/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsConsole's listener only while wanted, against a fake qemu Console over peer-to-peer D-Bus. */
#include "display/qs-console.h"
#include "qs-dbus-display1.h"

#include <errno.h>
#include <gio/gunixfdlist.h>
#include <sys/socket.h>
#include <unistd.h>

#define PATH "/org/qemu/Display1/Console_3"

/*
 * The fake qemu runs on its own thread and main context, as qemu does beside
 * us. It keeps the listener socket each RegisterListener hands it (qemu's
 * end of the listener's connection) and never speaks on it: the test only
 * looks at when sockets come and when our end closes them.
 */
typedef struct {
    GThread *thread;
    GMainContext *ctx;
    GMainLoop *loop;
    GSocket *socket;
    GMutex lock;
    GCond ready;
    gboolean exported;
    GArray *fds;                /* int, one per RegisterListener */
} FakeQemu;

static gboolean fq_register(QemuDBusDisplay1Console *skel, GDBusMethodInvocation *inv,
                            GUnixFDList *fds, GVariant *handle, FakeQemu *fq)
{
    int fd;

    (void)handle;
    fd = g_unix_fd_list_get(fds, 0, NULL);
    g_assert_cmpint(fd, >=, 0);
    g_mutex_lock(&fq->lock);
    g_array_append_val(fq->fds, fd);
    g_mutex_unlock(&fq->lock);
    qemu_dbus_display1_console_complete_register_listener(skel, inv, NULL);
    return TRUE;
}

static gpointer fq_thread(gpointer data)
{
    FakeQemu *fq = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(fq->socket);
    g_autofree char *guid = g_dbus_generate_guid();
    g_autoptr(GDBusConnection) conn = NULL;
    QemuDBusDisplay1Console *skel;

    g_main_context_push_thread_default(fq->ctx);
    conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), guid,
                                      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER |
                                      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_ALLOW_ANONYMOUS,
                                      NULL, NULL, &error);
    g_assert_no_error(error);
    skel = qemu_dbus_display1_console_skeleton_new();
    qemu_dbus_display1_console_set_width(skel, 640);
    qemu_dbus_display1_console_set_height(skel, 480);
    g_signal_connect(skel, "handle-register-listener", G_CALLBACK(fq_register), fq);
    g_assert_true(g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(skel), conn,
                                                   PATH, &error));
    g_mutex_lock(&fq->lock);
    fq->exported = TRUE;
    g_cond_signal(&fq->ready);
    g_mutex_unlock(&fq->lock);
    g_main_loop_run(fq->loop);
    g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(skel));
    g_object_unref(skel);
    g_dbus_connection_close_sync(conn, NULL, NULL);
    g_main_context_pop_thread_default(fq->ctx);
    return NULL;
}

static guint fq_registrations(FakeQemu *fq)
{
    guint n;

    g_mutex_lock(&fq->lock);
    n = fq->fds->len;
    g_mutex_unlock(&fq->lock);
    return n;
}

static int fq_fd(FakeQemu *fq, guint i)
{
    int fd;

    g_mutex_lock(&fq->lock);
    fd = g_array_index(fq->fds, int, i);
    g_mutex_unlock(&fq->lock);
    return fd;
}

/* Runs our main context until the fake has had `n` RegisterListener calls;
 * bounded by the test's meson timeout. */
static void wait_registrations(FakeQemu *fq, guint n)
{
    while (fq_registrations(fq) < n) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

/* Runs our main context until our end of listener socket `i` is closed:
 * what qemu sees as the listener going away. */
static void wait_closed(FakeQemu *fq, guint i)
{
    int fd = fq_fd(fq, i);
    char buf[512];

    for (;;) {
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);

        if (n == 0 || (n < 0 && errno != EAGAIN && errno != EINTR)) {
            return;
        }
        if (n < 0) {
            g_main_context_iteration(NULL, FALSE);
            g_usleep(1000);
        }
    }
}

/* Whether our end of listener socket `i` is still open. */
static gboolean fq_open(FakeQemu *fq, guint i)
{
    char buf[512];
    ssize_t n;

    do {
        n = recv(fq_fd(fq, i), buf, sizeof(buf), MSG_DONTWAIT);
    } while (n > 0);
    return n < 0 && errno == EAGAIN;
}

/* Every call we sent before it has reached the fake. */
static void round_trip(GDBusConnection *conn)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) r = g_dbus_connection_call_sync(
        conn, NULL, PATH, "org.freedesktop.DBus.Peer", "Ping", NULL, NULL,
        G_DBUS_CALL_FLAGS_NONE, -1, NULL, &error);

    g_assert_no_error(error);
}

static void test_wanted(void)
{
    FakeQemu fq = { 0 };
    int sv[2];
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) ours = NULL;
    g_autoptr(GSocketConnection) stream = NULL;
    g_autoptr(GDBusConnection) conn = NULL;
    QsConsole *console;
    QsConsoleStats stats;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_mutex_init(&fq.lock);
    g_cond_init(&fq.ready);
    fq.fds = g_array_new(FALSE, FALSE, sizeof(int));
    fq.ctx = g_main_context_new();
    fq.loop = g_main_loop_new(fq.ctx, FALSE);
    fq.socket = g_socket_new_from_fd(sv[1], &error);
    g_assert_no_error(error);
    fq.thread = g_thread_new("fake-qemu", fq_thread, &fq);
    ours = g_socket_new_from_fd(sv[0], &error);
    g_assert_no_error(error);
    stream = g_socket_connection_factory_create_connection(ours);
    conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                      G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                                      NULL, NULL, &error);
    g_assert_no_error(error);
    g_mutex_lock(&fq.lock);
    while (!fq.exported) {
        g_cond_wait(&fq.ready, &fq.lock);
    }
    g_mutex_unlock(&fq.lock);

    console = qs_console_new(conn, NULL, 3, &error);
    g_assert_no_error(error);

    /* Started unwanted: nothing registered. */
    qs_console_start(console);
    round_trip(conn);
    g_assert_cmpuint(fq_registrations(&fq), ==, 0);
    g_assert_false(qs_console_is_listening(console));

    /* Wanted: one registration, its connection kept. */
    qs_console_set_wanted(console, TRUE);
    g_assert_true(qs_console_is_listening(console));
    wait_registrations(&fq, 1);
    qs_console_set_wanted(console, TRUE);
    round_trip(conn);
    g_assert_cmpuint(fq_registrations(&fq), ==, 1);
    g_assert_true(fq_open(&fq, 0));

    /* Unwanted: the listener's connection closed, nothing registered. */
    qs_console_set_wanted(console, FALSE);
    g_assert_false(qs_console_is_listening(console));
    wait_closed(&fq, 0);
    round_trip(conn);
    g_assert_cmpuint(fq_registrations(&fq), ==, 1);

    /* Wanted again at once: registered after qemu's hang-up window. */
    qs_console_set_wanted(console, TRUE);
    wait_registrations(&fq, 2);
    g_assert_true(qs_console_is_listening(console));
    g_assert_true(fq_open(&fq, 1));

    /* The watchdog took none of it for a stall or a loss. */
    qs_console_get_stats(console, &stats);
    g_assert_cmpuint(stats.registrations, ==, 2);
    g_assert_cmpuint(stats.watchdog_resets, ==, 0);
    g_assert_cmpuint(stats.listener_losses, ==, 0);

    qs_console_free(console);
    wait_closed(&fq, 1);
    g_main_loop_quit(fq.loop);
    g_thread_join(fq.thread);
    g_dbus_connection_close_sync(conn, NULL, NULL);
    while (g_main_context_iteration(NULL, FALSE)) {
    }
    for (guint i = 0; i < fq.fds->len; i++) {
        close(g_array_index(fq.fds, int, i));
    }
    g_array_unref(fq.fds);
    g_object_unref(fq.socket);
    g_main_loop_unref(fq.loop);
    g_main_context_unref(fq.ctx);
    g_mutex_clear(&fq.lock);
    g_cond_clear(&fq.ready);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/display/console/listener-only-while-wanted", test_wanted);
    return g_test_run();
}
