/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reaching qemu's display at startup: the p2p handshake and, on a bus, which qemu, each within a bounded wait. */
#include "display/qs-display-connect.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>

/* ---- bounded waits at startup -------------------------------------------- */

typedef struct {
    gint refs;
    GAsyncResult *res;
} Wait;

static void wait_unref(Wait *w)
{
    if (g_atomic_int_dec_and_test(&w->refs)) {
        g_clear_object(&w->res);
        g_free(w);
    }
}

static void on_wait_ready(GObject *source, GAsyncResult *res, gpointer data)
{
    Wait *w = data;

    (void)source;
    w->res = g_object_ref(res);
    wait_unref(w);
}

static gboolean on_wait_timeout(gpointer data)
{
    *(gboolean *)data = TRUE;
    return G_SOURCE_REMOVE;
}

/* Iterates the default context until the operation started with `w`
 * finishes or timeout_ms passes (then it is cancelled and left to finish
 * on its own). Returns a ref to the result or NULL. */
static GAsyncResult *wait_for(Wait *w, GCancellable *cancellable,
                              int timeout_ms)
{
    GSource *timeout = g_timeout_source_new((guint)timeout_ms);
    gboolean timed_out = FALSE;
    GAsyncResult *res = NULL;

    g_source_set_callback(timeout, on_wait_timeout, &timed_out, NULL);
    g_source_attach(timeout, NULL);
    while (!w->res && !timed_out) {
        g_main_context_iteration(NULL, TRUE);
    }
    g_source_destroy(timeout);
    g_source_unref(timeout);
    if (w->res) {
        res = g_object_ref(w->res);
    } else {
        g_cancellable_cancel(cancellable);
    }
    wait_unref(w);
    return res;
}

GDBusConnection *qs_display_connect_p2p(int fd, int timeout_ms, GError **error)
{
    g_autoptr(GSocket) socket = NULL;
    g_autoptr(GSocketConnection) stream = NULL;
    g_autoptr(GCancellable) cancellable = g_cancellable_new();
    g_autoptr(GAsyncResult) res = NULL;
    Wait *w = g_new0(Wait, 1);
    struct stat st;

    if (fstat(fd, &st) < 0 || !S_ISSOCK(st.st_mode)) {
        g_free(w);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "descriptor %d is not a socket", fd);
        return NULL;
    }
    /* Inherited without CLOEXEC; nothing we start may keep qemu's peer. */
    fcntl(fd, F_SETFD, fcntl(fd, F_GETFD) | FD_CLOEXEC);
    socket = g_socket_new_from_fd(fd, error);
    if (!socket) {
        g_free(w);
        return NULL;
    }
    stream = g_socket_connection_factory_create_connection(socket);
    w->refs = 2;
    g_dbus_connection_new(G_IO_STREAM(stream), NULL,
                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT,
                          NULL, cancellable, on_wait_ready, w);
    res = wait_for(w, cancellable, timeout_ms);
    if (!res) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_TIMED_OUT,
                    "no D-Bus handshake from qemu on descriptor %d within "
                    "%d ms", fd, timeout_ms);
        return NULL;
    }
    GDBusConnection *conn = g_dbus_connection_new_finish(res, error);

    if (!conn) {
        g_prefix_error(error, "D-Bus handshake with qemu failed: ");
    }
    return conn;
}

/* ---- bus mode: which qemu --------------------------------------------------- */

static GVariant *get_vm_props(GDBusConnection *conn, const char *dest,
                              int timeout_ms, GError **error)
{
    g_autoptr(GVariant) ret = g_dbus_connection_call_sync(
        conn, dest, VM_PATH, "org.freedesktop.DBus.Properties", "GetAll",
        g_variant_new("(s)", IFACE_VM), G_VARIANT_TYPE("(a{sv})"),
        G_DBUS_CALL_FLAGS_NO_AUTO_START, timeout_ms, NULL, error);

    return ret ? g_variant_get_child_value(ret, 0) : NULL;
}

char *qs_display_lookup_string(GVariant *props, const char *key)
{
    const char *s = NULL;

    if (props && g_variant_lookup(props, key, "&s", &s)) {
        return g_strdup(s);
    }
    return NULL;
}

char *qs_display_pick_vm(GDBusConnection *conn, const char *want, int timeout_ms,
                     GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GVariant) ret = NULL;
    g_autoptr(GString) seen = g_string_new(NULL);
    g_autofree const char **owners = NULL;
    g_autofree char *match = NULL;
    unsigned n_matches = 0;

    ret = g_dbus_connection_call_sync(
        conn, "org.freedesktop.DBus", "/org/freedesktop/DBus",
        "org.freedesktop.DBus", "ListQueuedOwners",
        g_variant_new("(s)", BUS_NAME), G_VARIANT_TYPE("(as)"),
        G_DBUS_CALL_FLAGS_NONE, timeout_ms, NULL, &local);
    if (!ret) {
        if (g_dbus_error_is_remote_error(local)) {
            g_autofree char *name = g_dbus_error_get_remote_error(local);

            if (g_strcmp0(name, "org.freedesktop.DBus.Error.NameHasNoOwner") == 0) {
                g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                            "no qemu on the bus (nobody owns %s)", BUS_NAME);
                return NULL;
            }
        }
        g_dbus_error_strip_remote_error(local);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "cannot list the owners of %s: %s", BUS_NAME,
                    local->message);
        return NULL;
    }
    g_variant_get(ret, "(^a&s)", &owners);
    for (unsigned i = 0; owners[i]; i++) {
        g_autoptr(GError) e = NULL;
        g_autoptr(GVariant) props = get_vm_props(conn, owners[i], timeout_ms, &e);
        g_autofree char *name = qs_display_lookup_string(props, "Name");
        g_autofree char *uuid = qs_display_lookup_string(props, "UUID");

        if (!props) {
            g_debug("%s owns %s but has no VM object: %s", owners[i],
                    BUS_NAME, e->message);
            continue;
        }
        g_string_append_printf(seen, "%s'%s'", seen->len ? ", " : "",
                               name ? name : "");
        if (!want || g_strcmp0(name, want) == 0 ||
            (uuid && g_ascii_strcasecmp(uuid, want) == 0)) {
            n_matches++;
            g_free(match);
            match = g_strdup(owners[i]);
        }
    }
    if (n_matches == 1) {
        return g_steal_pointer(&match);
    }
    if (n_matches == 0 && want) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "no VM named '%s' on the bus (found: %s)", want,
                    seen->len ? seen->str : "none");
    } else if (n_matches == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "no qemu with a D-Bus display on the bus");
    } else {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "%u VMs on the bus (%s): choose one with --vm", n_matches,
                    seen->str);
    }
    return NULL;
}
