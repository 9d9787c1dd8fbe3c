/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One of qemu's D-Bus chardevs: its name, registering our socket with it, following FEOpened. */
#include "display/qs-qemu-chardev.h"

#include <errno.h>
#include <gio/gunixfdlist.h>
#include <sys/socket.h>
#include <unistd.h>

#define IFACE_CHARDEV "org.qemu.Display1.Chardev"
/* qemu answers at once; a busy qemu gets this long before we try again. */
#define REGISTER_TIMEOUT_MS 10000

struct QsQemuChardev {
    GDBusConnection *conn;
    char *dest;                 /* qemu's unique name; NULL on p2p */
    char *path;
    char *name;
    gboolean fe_opened;
    guint props_sub;
    QsQemuChardevFeOpenedFunc fe_func;
    gpointer fe_data;
};

typedef struct {
    int ours;
    GCancellable *cancellable;
    QsQemuChardevRegistered done;
    gpointer data;
    GError *early;              /* the pair could not be made */
} Registration;

static void registration_free(Registration *r)
{
    if (r->ours >= 0) {
        close(r->ours);
    }
    g_clear_object(&r->cancellable);
    g_clear_error(&r->early);
    g_free(r);
}

QsQemuChardev *qs_qemu_chardev_from_object(GDBusConnection *conn, const char *dest,
                                           const char *path, GVariant *ifaces)
{
    g_autoptr(GVariant) props = g_variant_lookup_value(ifaces, IFACE_CHARDEV,
                                                       G_VARIANT_TYPE("a{sv}"));
    QsQemuChardev *c;
    const char *name = NULL;
    gboolean opened = FALSE;

    if (!props || !g_variant_lookup(props, "Name", "&s", &name)) {
        return NULL;
    }
    g_variant_lookup(props, "FEOpened", "b", &opened);
    c = g_new0(QsQemuChardev, 1);
    c->conn = g_object_ref(conn);
    c->dest = g_strdup(dest);
    c->path = g_strdup(path);
    c->name = g_strdup(name);
    c->fe_opened = opened;
    return c;
}

void qs_qemu_chardev_free(QsQemuChardev *c)
{
    if (!c) {
        return;
    }
    qs_qemu_chardev_watch_fe_opened(c, NULL, NULL);
    g_object_unref(c->conn);
    g_free(c->dest);
    g_free(c->path);
    g_free(c->name);
    g_free(c);
}

const char *qs_qemu_chardev_get_name(QsQemuChardev *c)
{
    return c->name;
}

const char *qs_qemu_chardev_get_path(QsQemuChardev *c)
{
    return c->path;
}

gboolean qs_qemu_chardev_get_fe_opened(QsQemuChardev *c)
{
    return c->fe_opened;
}

static void on_registered(GObject *source, GAsyncResult *res, gpointer data)
{
    Registration *r = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) reply = g_dbus_connection_call_with_unix_fd_list_finish(
        G_DBUS_CONNECTION(source), NULL, res, &error);
    gboolean gone;
    int fd;

    if (g_cancellable_is_cancelled(r->cancellable)) {
        registration_free(r);
        return;
    }
    if (reply) {
        fd = r->ours;
        r->ours = -1;
        r->done(fd, NULL, FALSE, r->data);
        registration_free(r);
        return;
    }
    /* The object or its interface went (chardev-remove): nothing will
     * take a registration again. */
    gone = g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT) ||
           g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_INTERFACE) ||
           g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD);
    g_dbus_error_strip_remote_error(error);
    g_prefix_error(&error, "qemu refused the registration: ");
    r->done(-1, error, gone, r->data);
    registration_free(r);
}

static gboolean report_early(gpointer data)
{
    Registration *r = data;

    if (!g_cancellable_is_cancelled(r->cancellable)) {
        r->done(-1, r->early, FALSE, r->data);
    }
    registration_free(r);
    return G_SOURCE_REMOVE;
}

void qs_qemu_chardev_register(QsQemuChardev *c, GCancellable *cancellable,
                              QsQemuChardevRegistered done, gpointer data)
{
    g_autoptr(GUnixFDList) fds = g_unix_fd_list_new();
    Registration *r = g_new0(Registration, 1);
    int sv[2];

    r->ours = -1;
    r->cancellable = cancellable ? g_object_ref(cancellable) : g_cancellable_new();
    r->done = done;
    r->data = data;
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0) {
        r->early = g_error_new(G_IO_ERROR, g_io_error_from_errno(errno),
                               "cannot make a socket pair: %s", g_strerror(errno));
        g_idle_add(report_early, r);
        return;
    }
    r->ours = sv[0];
    /* The list holds its own copy; ours of qemu's end goes now. */
    if (g_unix_fd_list_append(fds, sv[1], &r->early) < 0) {
        close(sv[1]);
        g_idle_add(report_early, r);
        return;
    }
    close(sv[1]);
    g_dbus_connection_call_with_unix_fd_list(
        c->conn, c->dest, c->path, IFACE_CHARDEV, "Register",
        g_variant_new("(h)", 0), G_VARIANT_TYPE_UNIT, G_DBUS_CALL_FLAGS_NO_AUTO_START,
        REGISTER_TIMEOUT_MS, fds, r->cancellable, on_registered, r);
}

static void on_properties_changed(GDBusConnection *conn, const char *sender,
                                  const char *path, const char *iface,
                                  const char *signal, GVariant *params, gpointer data)
{
    QsQemuChardev *c = data;
    g_autoptr(GVariant) changed = NULL;
    const char *which;
    gboolean opened;

    (void)conn, (void)sender, (void)path, (void)iface, (void)signal;
    if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(sa{sv}as)"))) {
        return;
    }
    g_variant_get(params, "(&s@a{sv}as)", &which, &changed, NULL);
    if (g_strcmp0(which, IFACE_CHARDEV) != 0 ||
        !g_variant_lookup(changed, "FEOpened", "b", &opened) || opened == c->fe_opened) {
        return;
    }
    c->fe_opened = opened;
    if (c->fe_func) {
        c->fe_func(c, opened, c->fe_data);
    }
}

void qs_qemu_chardev_watch_fe_opened(QsQemuChardev *c, QsQemuChardevFeOpenedFunc func,
                                     gpointer data)
{
    c->fe_func = func;
    c->fe_data = data;
    if (func && !c->props_sub) {
        c->props_sub = g_dbus_connection_signal_subscribe(
            c->conn, c->dest, "org.freedesktop.DBus.Properties", "PropertiesChanged",
            c->path, IFACE_CHARDEV, G_DBUS_SIGNAL_FLAGS_NONE, on_properties_changed, c,
            NULL);
    } else if (!func && c->props_sub) {
        g_dbus_connection_signal_unsubscribe(c->conn, c->props_sub);
        c->props_sub = 0;
    }
}
