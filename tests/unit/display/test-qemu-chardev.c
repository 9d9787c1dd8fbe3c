/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsQemuChardev against a fake qemu Chardev over peer-to-peer D-Bus: a
 * registration gives us a connected socket whose other end qemu holds, a
 * second one while qemu holds a connection is refused (as qemu does), a
 * removed chardev is "gone", FEOpened changes reach the watcher, a
 * cancelled registration never answers. */
#include "display/qs-qemu-chardev.h"
#include "qs-dbus-display1.h"

#include <fcntl.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define PATH "/org/qemu/Display1/Chardev_vdagent"
#define IFACE "org.qemu.Display1.Chardev"

/* The fake qemu on its own thread and context, as qemu is beside us. */
typedef struct {
    GThread *thread;
    GMainContext *ctx;
    GMainLoop *loop;
    GSocket *socket;
    GDBusConnection *conn;
    QemuDBusDisplay1Chardev *skel;
    GMutex lock;
    GCond ready;
    gboolean exported;
    int held;                   /* qemu's end of the current connection, or -1 */
    guint registers;
} FakeQemu;

static gboolean fq_register(QemuDBusDisplay1Chardev *skel, GDBusMethodInvocation *inv,
                            GUnixFDList *fds, GVariant *stream, FakeQemu *fq)
{
    int fd = g_unix_fd_list_get(fds, g_variant_get_handle(stream), NULL);

    g_mutex_lock(&fq->lock);
    fq->registers++;
    if (fq->held >= 0) {
        g_mutex_unlock(&fq->lock);
        close(fd);
        /* What qemu answers while its socket chardev is connected. */
        g_dbus_method_invocation_return_dbus_error(inv, "org.qemu.Display1.Error.Failed",
                                                   "Couldn't register FD!");
        return TRUE;
    }
    fq->held = fd;
    g_mutex_unlock(&fq->lock);
    qemu_dbus_display1_chardev_complete_register(skel, inv, NULL);
    return TRUE;
}

static gpointer fq_thread(gpointer data)
{
    FakeQemu *fq = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocketConnection) stream = g_socket_connection_factory_create_connection(fq->socket);
    g_autofree char *guid = g_dbus_generate_guid();

    g_main_context_push_thread_default(fq->ctx);
    fq->conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), guid,
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_SERVER |
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_ALLOW_ANONYMOUS,
                                          NULL, NULL, &error);
    g_assert_no_error(error);
    fq->skel = qemu_dbus_display1_chardev_skeleton_new();
    qemu_dbus_display1_chardev_set_name(fq->skel, "com.redhat.spice.0");
    g_signal_connect(fq->skel, "handle-register", G_CALLBACK(fq_register), fq);
    g_assert_true(g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(fq->skel),
                                                   fq->conn, PATH, &error));
    g_mutex_lock(&fq->lock);
    fq->exported = TRUE;
    g_cond_signal(&fq->ready);
    g_mutex_unlock(&fq->lock);
    g_main_loop_run(fq->loop);
    g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(fq->skel));
    g_object_unref(fq->skel);
    g_dbus_connection_close_sync(fq->conn, NULL, NULL);
    g_object_unref(fq->conn);
    g_main_context_pop_thread_default(fq->ctx);
    return NULL;
}

typedef struct {
    FakeQemu fq;
    GDBusConnection *conn;
    QsQemuChardev *chardev;
    /* the last answer */
    guint answers;
    int fd;
    gboolean gone;
    char *error;
    GString *fe;                /* "1"/"0" per FEOpened change */
} Fixture;

static QsQemuChardev *chardev_at(GDBusConnection *conn, const char *path, const char *name)
{
    GVariantBuilder b;

    g_variant_builder_init(&b, G_VARIANT_TYPE("a{sa{sv}}"));
    g_variant_builder_open(&b, G_VARIANT_TYPE("{sa{sv}}"));
    g_variant_builder_add(&b, "s", IFACE);
    g_variant_builder_open(&b, G_VARIANT_TYPE("a{sv}"));
    if (name) {
        g_variant_builder_add(&b, "{sv}", "Name", g_variant_new_string(name));
    }
    g_variant_builder_add(&b, "{sv}", "FEOpened", g_variant_new_boolean(FALSE));
    g_variant_builder_close(&b);
    g_variant_builder_close(&b);
    {
        g_autoptr(GVariant) ifaces = g_variant_ref_sink(g_variant_builder_end(&b));

        return qs_qemu_chardev_from_object(conn, NULL, path, ifaces);
    }
}

static void setup(Fixture *fx)
{
    int sv[2];
    g_autoptr(GError) error = NULL;
    g_autoptr(GSocket) ours = NULL;
    g_autoptr(GSocketConnection) stream = NULL;

    g_assert_cmpint(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), ==, 0);
    g_mutex_init(&fx->fq.lock);
    g_cond_init(&fx->fq.ready);
    fx->fq.held = -1;
    fx->fq.ctx = g_main_context_new();
    fx->fq.loop = g_main_loop_new(fx->fq.ctx, FALSE);
    fx->fq.socket = g_socket_new_from_fd(sv[1], &error);
    g_assert_no_error(error);
    fx->fq.thread = g_thread_new("fake-qemu", fq_thread, &fx->fq);
    ours = g_socket_new_from_fd(sv[0], &error);
    g_assert_no_error(error);
    stream = g_socket_connection_factory_create_connection(ours);
    fx->conn = g_dbus_connection_new_sync(G_IO_STREAM(stream), NULL,
                                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                                          NULL, NULL, &error);
    g_assert_no_error(error);
    g_mutex_lock(&fx->fq.lock);
    while (!fx->fq.exported) {
        g_cond_wait(&fx->fq.ready, &fx->fq.lock);
    }
    g_mutex_unlock(&fx->fq.lock);
    fx->fd = -1;
    fx->fe = g_string_new(NULL);
    fx->chardev = chardev_at(fx->conn, PATH, "com.redhat.spice.0");
    g_assert_nonnull(fx->chardev);
}

static void teardown(Fixture *fx)
{
    qs_qemu_chardev_free(fx->chardev);
    g_main_loop_quit(fx->fq.loop);
    g_thread_join(fx->fq.thread);
    g_dbus_connection_close_sync(fx->conn, NULL, NULL);
    g_object_unref(fx->conn);
    while (g_main_context_iteration(NULL, FALSE)) {
    }
    if (fx->fq.held >= 0) {
        close(fx->fq.held);
    }
    if (fx->fd >= 0) {
        close(fx->fd);
    }
    g_object_unref(fx->fq.socket);
    g_main_loop_unref(fx->fq.loop);
    g_main_context_unref(fx->fq.ctx);
    g_mutex_clear(&fx->fq.lock);
    g_cond_clear(&fx->fq.ready);
    g_string_free(fx->fe, TRUE);
    g_free(fx->error);
}

static void on_registered(int fd, const GError *error, gboolean gone, gpointer data)
{
    Fixture *fx = data;

    fx->answers++;
    if (fx->fd >= 0) {
        close(fx->fd);
    }
    fx->fd = fd;
    fx->gone = gone;
    g_free(fx->error);
    fx->error = error ? g_strdup(error->message) : NULL;
}

static void wait_answers(Fixture *fx, guint n)
{
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    while (fx->answers < n) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

static int fq_take_held(FakeQemu *fq)
{
    int fd;

    g_mutex_lock(&fq->lock);
    fd = fq->held;
    fq->held = -1;
    g_mutex_unlock(&fq->lock);
    return fd;
}

/* A registration is a connection: bytes cross it; a second one while
 * qemu holds the first is refused (not gone); once qemu's end is closed a
 * new one is taken. */
static void test_register(void)
{
    Fixture fx = { 0 };
    char buf[8];
    int qemu_end;

    setup(&fx);
    g_assert_cmpstr(qs_qemu_chardev_get_name(fx.chardev), ==, "com.redhat.spice.0");
    g_assert_cmpstr(qs_qemu_chardev_get_path(fx.chardev), ==, PATH);
    g_assert_false(qs_qemu_chardev_get_fe_opened(fx.chardev));
    qs_qemu_chardev_register(fx.chardev, NULL, on_registered, &fx);
    wait_answers(&fx, 1);
    g_assert_null(fx.error);
    g_assert_cmpint(fx.fd, >=, 0);
    g_assert_cmpint(fcntl(fx.fd, F_GETFD) & FD_CLOEXEC, ==, FD_CLOEXEC);
    g_assert_cmpint(write(fx.fd, "ping", 4), ==, 4);
    qemu_end = fq_take_held(&fx.fq);
    g_assert_cmpint(read(qemu_end, buf, sizeof(buf)), ==, 4);
    g_assert_cmpmem(buf, 4, "ping", 4);
    g_mutex_lock(&fx.fq.lock);
    fx.fq.held = qemu_end;
    g_mutex_unlock(&fx.fq.lock);

    qs_qemu_chardev_register(fx.chardev, NULL, on_registered, &fx);
    wait_answers(&fx, 2);
    g_assert_cmpint(fx.fd, ==, -1);
    g_assert_false(fx.gone);
    g_assert_nonnull(strstr(fx.error, "Couldn't register FD!"));

    close(fq_take_held(&fx.fq));
    qs_qemu_chardev_register(fx.chardev, NULL, on_registered, &fx);
    wait_answers(&fx, 3);
    g_assert_null(fx.error);
    g_assert_cmpint(fx.fd, >=, 0);
    g_assert_cmpuint(fx.fq.registers, ==, 3);
    teardown(&fx);
}

/* A chardev qemu no longer has (chardev-remove) is gone for good. */
static void test_gone(void)
{
    Fixture fx = { 0 };
    QsQemuChardev *other;

    setup(&fx);
    other = chardev_at(fx.conn, "/org/qemu/Display1/Chardev_removed", "org.qemu.usbredir");
    qs_qemu_chardev_register(other, NULL, on_registered, &fx);
    wait_answers(&fx, 1);
    g_assert_cmpint(fx.fd, ==, -1);
    g_assert_true(fx.gone);
    qs_qemu_chardev_free(other);
    /* Objects without a Name or the interface are no chardevs of ours. */
    g_assert_null(chardev_at(fx.conn, PATH, NULL));
    teardown(&fx);
}

/* Cancelled: no answer, and qemu's registration (if it got there) is
 * ours to forget. */
static void test_cancelled(void)
{
    Fixture fx = { 0 };
    g_autoptr(GCancellable) cancel = g_cancellable_new();

    setup(&fx);
    qs_qemu_chardev_register(fx.chardev, cancel, on_registered, &fx);
    g_cancellable_cancel(cancel);
    for (int i = 0; i < 200; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    g_assert_cmpuint(fx.answers, ==, 0);
    teardown(&fx);
}

static void on_fe(QsQemuChardev *chardev, gboolean opened, gpointer data)
{
    (void)chardev;
    g_string_append(((Fixture *)data)->fe, opened ? "1" : "0");
}

static gboolean fq_set_fe(gpointer data)
{
    FakeQemu *fq = ((gpointer *)data)[0];

    qemu_dbus_display1_chardev_set_feopened(fq->skel, GPOINTER_TO_INT(((gpointer *)data)[1]));
    return G_SOURCE_REMOVE;
}

static void fq_fe(Fixture *fx, gboolean opened, gsize want_len)
{
    gpointer args[2] = { &fx->fq, GINT_TO_POINTER(opened) };
    gint64 deadline = g_get_monotonic_time() + 5 * G_USEC_PER_SEC;

    g_main_context_invoke(fx->fq.ctx, fq_set_fe, args);
    while (fx->fe->len < want_len) {
        g_assert_cmpint(g_get_monotonic_time(), <, deadline);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
}

/* The guest opening and closing the port reaches the watcher, and stops
 * reaching it once unwatched. */
static void test_fe_opened(void)
{
    Fixture fx = { 0 };

    setup(&fx);
    qs_qemu_chardev_watch_fe_opened(fx.chardev, on_fe, &fx);
    fq_fe(&fx, TRUE, 1);
    g_assert_true(qs_qemu_chardev_get_fe_opened(fx.chardev));
    fq_fe(&fx, FALSE, 2);
    g_assert_cmpstr(fx.fe->str, ==, "10");
    qs_qemu_chardev_watch_fe_opened(fx.chardev, NULL, NULL);
    {
        gpointer args[2] = { &fx.fq, GINT_TO_POINTER(TRUE) };

        g_main_context_invoke(fx.fq.ctx, fq_set_fe, args);
        for (int i = 0; i < 200; i++) {
            g_main_context_iteration(NULL, FALSE);
            g_usleep(1000);
        }
    }
    g_assert_cmpstr(fx.fe->str, ==, "10");
    teardown(&fx);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/display/qemu-chardev/register", test_register);
    g_test_add_func("/display/qemu-chardev/gone", test_gone);
    g_test_add_func("/display/qemu-chardev/cancelled", test_cancelled);
    g_test_add_func("/display/qemu-chardev/fe-opened", test_fe_opened);
    return g_test_run();
}
