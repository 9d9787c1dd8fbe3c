/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Attach (p2p fd, bus, QMP), discover VM and consoles, notice qemu leaving. */

#include "display/qs-display.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "display/qs-chardev-names.h"
#include "display/qs-display-connect.h"
#include "display/qs-qmp.h"

/* qemu 7.2 serves one p2p client: a newer one takes the display objects
 * off our connection, but qemu's clipboard proxy keeps the connection open,
 * so no "closed" tells us. A cheap property read does: every
 * TAKEOVER_PROBE_WATCHED_S while a client watches (a viewer must not stare
 * at a display nobody updates), at once when the first client arrives, and
 * every TAKEOVER_PROBE_IDLE_S otherwise. qemu sends no event on a takeover,
 * so the probe cannot wait for one; but with no client nobody sees the
 * stale display, and the arrival's probe catches it before the first
 * picture matters, so the idle probe only lets the helper exit (and the
 * launcher detach) eventually. One read costs about a millisecond of
 * wakeups across our threads: 0.00007 cores at 15 s, 0.000017 at 60 s,
 * against a goal of 0.0001 for a whole idle helper (docs/performance.md
 * "Idle"). */
#define TAKEOVER_PROBE_WATCHED_S 3
#define TAKEOVER_PROBE_IDLE_S 60

struct QsDisplay {
    GDBusConnection *conn;
    char *dest;                 /* qemu's unique name on a bus; NULL on p2p */
    QsDisplayAudio audio;
    char *vm_name;
    char *vm_uuid;
    GPtrArray *consoles;        /* QsConsole, served, in console order */
    GPtrArray *chardevs;        /* QsQemuChardev, in object path order */
    guint watch_id;
    guint removed_sub, added_sub;
    gulong closed_handler;
    guint probe_id;
    gboolean probing;
    gboolean watched;           /* a client is connected */
    GCancellable *probe_cancel;
    gboolean gone;
    QsDisplayGoneFunc gone_func;
    gpointer gone_data;
};

/* ---- discovery ------------------------------------------------------------- */

/* Console id from an object path, or -1. */
static int console_id(const char *path)
{
    const char *s;
    char *end;
    unsigned long id;

    if (!g_str_has_prefix(path, CONSOLE_PREFIX)) {
        return -1;
    }
    s = path + strlen(CONSOLE_PREFIX);
    if (!g_ascii_isdigit(*s)) {
        return -1;
    }
    errno = 0;
    id = strtoul(s, &end, 10);
    if (errno || *end || id > 1000000) {
        return -1;
    }
    return (int)id;
}

typedef struct {
    int id;
    gboolean graphic;
} ConsoleInfo;

static int compare_console(gconstpointer a, gconstpointer b)
{
    return ((const ConsoleInfo *)a)->id - ((const ConsoleInfo *)b)->id;
}

static int compare_chardev(gconstpointer a, gconstpointer b)
{
    return qs_chardev_path_compare(qs_qemu_chardev_get_path(*(QsQemuChardev *const *)a),
                                   qs_qemu_chardev_get_path(*(QsQemuChardev *const *)b));
}

static gboolean discover(QsDisplay *d, const QsDisplayOptions *opts,
                         GArray *chosen, GError **error)
{
    g_autoptr(GError) local = NULL;
    g_autoptr(GVariant) ret = NULL;
    g_autoptr(GVariant) objects = NULL;
    g_autoptr(GArray) consoles = g_array_new(FALSE, FALSE, sizeof(ConsoleInfo));
    g_autoptr(GString) list = g_string_new(NULL);
    g_autoptr(GString) served = g_string_new(NULL);
    gboolean has_interfaces = FALSE;
    GVariantIter iter;
    const char *path;
    GVariant *ifaces;

    ret = g_dbus_connection_call_sync(
        d->conn, d->dest, DISPLAY_PATH, IFACE_OBJECT_MANAGER,
        "GetManagedObjects", NULL, G_VARIANT_TYPE("(a{oa{sa{sv}}})"),
        G_DBUS_CALL_FLAGS_NO_AUTO_START, opts->timeout_ms, NULL, &local);
    if (!ret) {
        g_dbus_error_strip_remote_error(local);
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_FAILED,
                    "qemu offers no D-Bus display objects (is it started "
                    "with -display dbus?): %s", local->message);
        return FALSE;
    }
    objects = g_variant_get_child_value(ret, 0);
    g_variant_iter_init(&iter, objects);
    while (g_variant_iter_loop(&iter, "{&o@a{sa{sv}}}", &path, &ifaces)) {
        g_autoptr(GVariant) vm = g_variant_lookup_value(
            ifaces, IFACE_VM, G_VARIANT_TYPE("a{sv}"));
        g_autoptr(GVariant) con = g_variant_lookup_value(
            ifaces, IFACE_CONSOLE, G_VARIANT_TYPE("a{sv}"));
        g_autoptr(GVariant) audio = g_variant_lookup_value(
            ifaces, IFACE_AUDIO, G_VARIANT_TYPE("a{sv}"));
        int id = console_id(path);

        if (vm && g_str_equal(path, VM_PATH)) {
            g_free(d->vm_name);
            d->vm_name = qs_display_lookup_string(vm, "Name");
            g_free(d->vm_uuid);
            d->vm_uuid = qs_display_lookup_string(vm, "UUID");
            /* qemu 8.1+ has it; the 7.x set (no Unix.Map) otherwise. */
            has_interfaces = g_variant_lookup_value(vm, "Interfaces", NULL) != NULL;
        } else if (audio && g_str_equal(path, AUDIO_PATH)) {
            d->audio = QS_DISPLAY_AUDIO_YES;
        } else if (g_str_has_prefix(path, CHARDEV_PREFIX)) {
            QsQemuChardev *c = qs_qemu_chardev_from_object(d->conn, d->dest, path, ifaces);

            if (c && d->chardevs->len < MAX_CHARDEVS) {
                g_ptr_array_add(d->chardevs, c);
            } else if (c) {
                g_warning("chardev %s (%s) left alone: more than %d D-Bus chardevs", path,
                          qs_qemu_chardev_get_name(c), MAX_CHARDEVS);
                qs_qemu_chardev_free(c);
            }
        } else if (con && id >= 0 && consoles->len < MAX_CONSOLES) {
            g_autofree char *type = qs_display_lookup_string(con, "Type");
            ConsoleInfo info = { id, g_strcmp0(type, "Graphic") == 0 };

            g_array_append_val(consoles, info);
        }
    }
    g_array_sort(consoles, compare_console);
    g_ptr_array_sort(d->chardevs, compare_chardev);
    for (guint i = 0; i < consoles->len; i++) {
        ConsoleInfo *c = &g_array_index(consoles, ConsoleInfo, i);
        gboolean serve = opts->console >= 0 ? c->id == opts->console
                                            : c->graphic;

        g_string_append_printf(list, "%s%d%s", i ? ", " : "", c->id,
                               c->graphic ? "" : " (text)");
        /* Each served console is one SPICE display channel, ids 0..n-1. */
        if (serve && chosen->len < QS_DISPLAY_MAX_SERVED) {
            g_array_append_val(chosen, c->id);
            g_string_append_printf(served, "%s%d (display channel %u)",
                                   served->len ? ", " : "", c->id,
                                   chosen->len - 1);
        } else if (serve) {
            g_warning("console %d not served: at most %d consoles are",
                      c->id, QS_DISPLAY_MAX_SERVED);
        }
    }
    if (chosen->len == 0 && opts->console >= 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "console %d absent (qemu has: %s)", opts->console,
                    list->len ? list->str : "none");
        return FALSE;
    }
    if (chosen->len == 0) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_NOT_FOUND,
                    "qemu has no graphic console (consoles: %s)",
                    list->len ? list->str : "none");
        return FALSE;
    }
    if (d->audio == QS_DISPLAY_AUDIO_YES && !d->dest && !has_interfaces) {
        /* qemu before 8.0 keys audio listeners by the caller's bus name,
         * which a peer-to-peer call lacks: it crashes (NULL hash key). 8.0
         * fixed it; 8.0 cannot be told from 7.x here, so < 8.1 is refused. */
        d->audio = QS_DISPLAY_AUDIO_P2P_UNSAFE;
    }
    g_message("attached to VM '%s' (qemu %s); consoles %s; serving console%s %s",
              d->vm_name ? d->vm_name : "", has_interfaces ? ">= 8.1" : "< 8.1",
              list->str, chosen->len > 1 ? "s" : "", served->str);
    return TRUE;
}

/* ---- qemu going away ------------------------------------------------------ */

static void gone(QsDisplay *d, const char *reason)
{
    if (d->gone) {
        return;
    }
    d->gone = TRUE;
    for (guint i = 0; d->consoles && i < d->consoles->len; i++) {
        qs_console_stop(d->consoles->pdata[i]);
    }
    if (d->gone_func) {
        d->gone_func(d, reason, d->gone_data);
    }
}

static void on_closed(GDBusConnection *conn, gboolean remote, GError *error,
                      gpointer data)
{
    g_autofree char *reason = NULL;

    (void)conn;
    /* A plain hang-up needs no GIO detail ("0 bytes on an async read"). */
    reason = g_strdup_printf("qemu closed the D-Bus connection%s%s",
                             !remote && error ? ": " : "",
                             !remote && error ? error->message : "");
    gone(data, reason);
}

static void on_vanished(GDBusConnection *conn, const char *name, gpointer data)
{
    g_autofree char *reason = g_strdup_printf("qemu (%s) left the bus", name);

    (void)conn;
    gone(data, reason);
}

static void on_probe_done(GObject *source, GAsyncResult *res, gpointer data)
{
    QsDisplay *d = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) reply = g_dbus_connection_call_finish(
        G_DBUS_CONNECTION(source), res, &error);

    if (!reply && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        return;                 /* d is being freed */
    }
    d->probing = FALSE;
    /* Timeouts and other failures are the watchdog's business. */
    if (!reply && (g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD) ||
                   g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_OBJECT) ||
                   g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_INTERFACE))) {
        gone(d, "qemu no longer serves the display on our D-Bus connection "
                "(another D-Bus display client took it over)");
    }
}

static gboolean on_probe(gpointer data)
{
    QsDisplay *d = data;

    if (d->gone) {
        d->probe_id = 0;
        return G_SOURCE_REMOVE;
    }
    if (!d->probing) {
        d->probing = TRUE;
        g_dbus_connection_call(d->conn, NULL, VM_PATH,
                               "org.freedesktop.DBus.Properties", "Get",
                               g_variant_new("(ss)", IFACE_VM, "Name"),
                               G_VARIANT_TYPE("(v)"), G_DBUS_CALL_FLAGS_NONE,
                               10000, d->probe_cancel, on_probe_done, d);
    }
    return G_SOURCE_CONTINUE;
}

static void schedule_probe(QsDisplay *d)
{
    g_clear_handle_id(&d->probe_id, g_source_remove);
    d->probe_id = g_timeout_add_seconds(
        d->watched ? TAKEOVER_PROBE_WATCHED_S : TAKEOVER_PROBE_IDLE_S, on_probe, d);
}

void qs_display_set_watched(QsDisplay *d, gboolean watched)
{
    if (watched == d->watched) {
        return;
    }
    d->watched = watched;
    if (!d->probe_cancel || d->gone) {
        return;                 /* not started, on a bus, or leaving */
    }
    if (watched) {
        on_probe(d);            /* the first client arrived */
    }
    schedule_probe(d);
}

/* The served console at `path`, or NULL. */
static QsConsole *console_at(QsDisplay *d, const char *path)
{
    int id = console_id(path);

    for (guint i = 0; id >= 0 && d->consoles && i < d->consoles->len; i++) {
        if ((int)qs_console_get_id(d->consoles->pdata[i]) == id) {
            return d->consoles->pdata[i];
        }
    }
    return NULL;
}

static void on_interfaces_removed(GDBusConnection *conn, const char *sender,
                                  const char *obj, const char *iface,
                                  const char *signal, GVariant *params,
                                  gpointer data)
{
    QsDisplay *d = data;
    QsConsole *console;
    const char *path;
    g_autofree const char **ifaces = NULL;

    (void)conn, (void)sender, (void)obj, (void)iface, (void)signal;
    if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(oas)"))) {
        return;
    }
    g_variant_get(params, "(&o^a&s)", &path, &ifaces);
    console = console_at(d, path);
    if (console && g_strv_contains(ifaces, IFACE_CONSOLE)) {
        qs_console_vanished(console);
    }
}

static void on_interfaces_added(GDBusConnection *conn, const char *sender,
                                const char *obj, const char *iface,
                                const char *signal, GVariant *params,
                                gpointer data)
{
    QsDisplay *d = data;
    QsConsole *console;
    const char *path;
    g_autoptr(GVariant) ifaces = NULL;
    g_autoptr(GVariant) con = NULL;

    (void)conn, (void)sender, (void)obj, (void)iface, (void)signal;
    if (!g_variant_is_of_type(params, G_VARIANT_TYPE("(oa{sa{sv}})"))) {
        return;
    }
    g_variant_get(params, "(&o@a{sa{sv}})", &path, &ifaces);
    con = g_variant_lookup_value(ifaces, IFACE_CONSOLE, NULL);
    console = console_at(d, path);
    if (console && con) {
        qs_console_appeared(console);
    }
}

/* ---- API ------------------------------------------------------------------ */

QsDisplay *qs_display_attach(const QsDisplayOptions *opts, GError **error)
{
    g_autoptr(QsDisplay) d = g_new0(QsDisplay, 1);
    g_autoptr(GArray) chosen = g_array_new(FALSE, FALSE, sizeof(int));

    if (opts->qmp_path) {
        int fd = qs_qmp_attach_dbus_p2p(opts->qmp_path, opts->timeout_ms, error);

        if (fd < 0) {
            return NULL;
        }
        d->conn = qs_display_connect_p2p(fd, opts->timeout_ms, error);
    } else if (opts->p2p_fd >= 0) {
        d->conn = qs_display_connect_p2p(opts->p2p_fd, opts->timeout_ms, error);
    } else {
        g_autoptr(GError) local = NULL;

        d->conn = g_dbus_connection_new_for_address_sync(
            opts->dbus_address,
            G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
            G_DBUS_CONNECTION_FLAGS_MESSAGE_BUS_CONNECTION,
            NULL, NULL, &local);
        if (!d->conn) {
            g_set_error(error, G_IO_ERROR, local->code,
                        "cannot connect to the D-Bus bus '%s': %s",
                        opts->dbus_address, local->message);
            return NULL;
        }
        d->dest = qs_display_pick_vm(d->conn, opts->vm, opts->timeout_ms, error);
        if (!d->dest) {
            return NULL;
        }
    }
    if (!d->conn) {
        return NULL;
    }
    g_dbus_connection_set_exit_on_close(d->conn, FALSE);
    d->chardevs = g_ptr_array_new_with_free_func((GDestroyNotify)qs_qemu_chardev_free);
    if (!discover(d, opts, chosen, error)) {
        return NULL;
    }
    d->consoles = g_ptr_array_new_with_free_func((GDestroyNotify)qs_console_free);
    for (guint i = 0; i < chosen->len; i++) {
        int id = g_array_index(chosen, int, i);
        QsConsole *console = qs_console_new(d->conn, d->dest, (uint32_t)id, error);

        if (!console) {
            g_prefix_error(error, "console %d: ", id);
            return NULL;
        }
        g_ptr_array_add(d->consoles, console);
    }
    return g_steal_pointer(&d);
}

void qs_display_start(QsDisplay *d, QsDisplayGoneFunc func, gpointer user_data)
{
    d->gone_func = func;
    d->gone_data = user_data;
    d->closed_handler = g_signal_connect(d->conn, "closed",
                                         G_CALLBACK(on_closed), d);
    if (d->dest) {
        d->watch_id = g_bus_watch_name_on_connection(
            d->conn, d->dest, G_BUS_NAME_WATCHER_FLAGS_NONE, NULL,
            on_vanished, d, NULL);
    }
    d->removed_sub = g_dbus_connection_signal_subscribe(
        d->conn, d->dest, IFACE_OBJECT_MANAGER, "InterfacesRemoved",
        DISPLAY_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_interfaces_removed,
        d, NULL);
    d->added_sub = g_dbus_connection_signal_subscribe(
        d->conn, d->dest, IFACE_OBJECT_MANAGER, "InterfacesAdded",
        DISPLAY_PATH, NULL, G_DBUS_SIGNAL_FLAGS_NONE, on_interfaces_added,
        d, NULL);
    if (g_dbus_connection_is_closed(d->conn)) {
        gone(d, "qemu closed the D-Bus connection");
        return;
    }
    if (!d->dest) {
        d->probe_cancel = g_cancellable_new();
        schedule_probe(d);
    }
    for (guint i = 0; i < d->consoles->len; i++) {
        qs_console_start(d->consoles->pdata[i]);
    }
}

void qs_display_free(QsDisplay *d)
{
    if (!d) {
        return;
    }
    g_clear_pointer(&d->consoles, g_ptr_array_unref);
    g_clear_pointer(&d->chardevs, g_ptr_array_unref);
    g_clear_handle_id(&d->probe_id, g_source_remove);
    if (d->probe_cancel) {
        g_cancellable_cancel(d->probe_cancel);
        g_clear_object(&d->probe_cancel);
    }
    if (d->conn) {
        if (d->watch_id) {
            g_bus_unwatch_name(d->watch_id);
        }
        if (d->removed_sub) {
            g_dbus_connection_signal_unsubscribe(d->conn, d->removed_sub);
        }
        if (d->added_sub) {
            g_dbus_connection_signal_unsubscribe(d->conn, d->added_sub);
        }
        g_clear_signal_handler(&d->closed_handler, d->conn);
        g_dbus_connection_close_sync(d->conn, NULL, NULL);
    }
    g_clear_object(&d->conn);
    g_free(d->dest);
    g_free(d->vm_name);
    g_free(d->vm_uuid);
    g_free(d);
}

const char *qs_display_get_vm_name(QsDisplay *d)
{
    return d->vm_name;
}

const char *qs_display_get_vm_uuid(QsDisplay *d)
{
    return d->vm_uuid;
}

QsConsole *qs_display_get_console(QsDisplay *d)
{
    return d->consoles->pdata[0];
}

guint qs_display_get_n_consoles(QsDisplay *d)
{
    return d->consoles->len;
}

QsConsole *qs_display_get_console_at(QsDisplay *d, guint index)
{
    return index < d->consoles->len ? d->consoles->pdata[index] : NULL;
}

GDBusConnection *qs_display_get_connection(QsDisplay *d)
{
    return d->conn;
}

QsDisplayAudio qs_display_get_audio(QsDisplay *d)
{
    return d->audio;
}

const char *qs_display_get_dest(QsDisplay *d)
{
    return d->dest;
}

guint qs_display_get_n_chardevs(QsDisplay *d)
{
    return d->chardevs->len;
}

QsQemuChardev *qs_display_get_chardev_at(QsDisplay *d, guint index)
{
    return index < d->chardevs->len ? d->chardevs->pdata[index] : NULL;
}
