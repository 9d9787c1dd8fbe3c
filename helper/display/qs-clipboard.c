/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Our peer of qemu's D-Bus clipboard: asynchronous registration, grabs and requests both ways, bounded. */
#include "display/qs-clipboard.h"

#include <string.h>

#include "qs-dbus-display1.h"

#define CLIPBOARD_PATH "/org/qemu/Display1/Clipboard"
#define IFACE_CLIPBOARD "org.qemu.Display1.Clipboard"
#define QS_CLIPBOARD_UNREGISTER_TIMEOUT_MS 1000

/* qemu's Request to us, waiting for the SPICE client's text. */
typedef struct {
    GDBusMethodInvocation *invocation;
    guint timeout_id;
} Pending;

struct QsClipboard {
    GDBusConnection *conn;
    char *dest;
    QemuDBusDisplay1Clipboard *skeleton;
    gboolean exported;
    gboolean available;
    GCancellable *cancellable;
    const QsClipboardFuncs *funcs;
    gpointer user_data;
    /* The vdagent serial rule (qemu ui/clipboard.c): a grab wins with a
     * serial at least the last one seen; qemu resets them with Register. */
    uint32_t serial[QS_CLIPBOARD_SELECTIONS];
    Pending pending[QS_CLIPBOARD_SELECTIONS];
};

static void set_available(QsClipboard *cb, gboolean available)
{
    if (cb->available == available) {
        return;
    }
    cb->available = available;
    if (cb->funcs && cb->funcs->available) {
        cb->funcs->available(available, cb->user_data);
    }
}

/* ---- qemu calling us --------------------------------------------------------- */

static gboolean on_register(QemuDBusDisplay1Clipboard *skel,
                            GDBusMethodInvocation *invocation, gpointer data)
{
    QsClipboard *cb = data;

    /* qemu's "reset your serials" (qemu_clipboard_reset_serial). */
    memset(cb->serial, 0, sizeof(cb->serial));
    qemu_dbus_display1_clipboard_complete_register(skel, invocation);
    return TRUE;
}

static gboolean on_unregister(QemuDBusDisplay1Clipboard *skel,
                              GDBusMethodInvocation *invocation, gpointer data)
{
    (void)data;
    qemu_dbus_display1_clipboard_complete_unregister(skel, invocation);
    return TRUE;
}

static gboolean on_grab(QemuDBusDisplay1Clipboard *skel,
                        GDBusMethodInvocation *invocation, guint selection,
                        guint serial, const char *const *mimes, gpointer data)
{
    QsClipboard *cb = data;
    gboolean text = mimes && g_strv_contains(mimes, QS_CLIPBOARD_MIME_TEXT);

    qemu_dbus_display1_clipboard_complete_grab(skel, invocation);
    g_debug("clipboard: qemu grabbed selection %u (serial %u, %s)", selection, serial,
            text ? "text" : "no text");
    if (selection >= QS_CLIPBOARD_SELECTIONS) {
        g_debug("clipboard: qemu grabbed unknown selection %u", selection);
        return TRUE;
    }
    cb->serial[selection] = serial;
    if (cb->funcs) {
        if (text) {
            cb->funcs->grab((uint8_t)selection, cb->user_data);
        } else {
            /* Nothing we can pass on: whatever the client had is stale. */
            cb->funcs->release((uint8_t)selection, cb->user_data);
        }
    }
    return TRUE;
}

static gboolean on_release(QemuDBusDisplay1Clipboard *skel,
                           GDBusMethodInvocation *invocation, guint selection,
                           gpointer data)
{
    QsClipboard *cb = data;

    qemu_dbus_display1_clipboard_complete_release(skel, invocation);
    g_debug("clipboard: qemu released selection %u", selection);
    if (selection < QS_CLIPBOARD_SELECTIONS && cb->funcs) {
        cb->funcs->release((uint8_t)selection, cb->user_data);
    }
    return TRUE;
}

static void pending_finish(QsClipboard *cb, uint8_t sel, const uint8_t *data,
                           size_t size)
{
    Pending *p = &cb->pending[sel];
    GDBusMethodInvocation *invocation = g_steal_pointer(&p->invocation);

    g_clear_handle_id(&p->timeout_id, g_source_remove);
    if (!invocation) {
        return;
    }
    if (!data) {
        g_dbus_method_invocation_return_error_literal(
            invocation, G_DBUS_ERROR, G_DBUS_ERROR_FAILED,
            "the SPICE client gave no text");
        return;
    }
    qemu_dbus_display1_clipboard_complete_request(
        cb->skeleton, invocation, QS_CLIPBOARD_MIME_TEXT,
        g_variant_new_fixed_array(G_VARIANT_TYPE_BYTE, data, size, 1));
}

static gboolean on_request_timeout(gpointer data)
{
    Pending *p = data;

    p->timeout_id = 0;
    if (p->invocation) {
        g_dbus_method_invocation_return_error_literal(
            g_steal_pointer(&p->invocation), G_DBUS_ERROR, G_DBUS_ERROR_TIMEOUT,
            "the SPICE client did not answer in time");
        g_message("clipboard: the SPICE client did not answer qemu's request "
                  "within %d ms", QS_CLIPBOARD_REQUEST_TIMEOUT_MS);
    }
    return G_SOURCE_REMOVE;
}

static gboolean on_request(QemuDBusDisplay1Clipboard *skel,
                           GDBusMethodInvocation *invocation, guint selection,
                           const char *const *mimes, gpointer data)
{
    QsClipboard *cb = data;
    Pending *p;

    (void)skel;
    g_debug("clipboard: qemu requests selection %u", selection);
    if (selection >= QS_CLIPBOARD_SELECTIONS || !mimes ||
        !g_strv_contains(mimes, QS_CLIPBOARD_MIME_TEXT) || !cb->funcs) {
        g_dbus_method_invocation_return_error(
            invocation, G_DBUS_ERROR, G_DBUS_ERROR_NOT_SUPPORTED,
            "only %s of selections 0-2", QS_CLIPBOARD_MIME_TEXT);
        return TRUE;
    }
    p = &cb->pending[selection];
    if (p->invocation) {
        g_dbus_method_invocation_return_error_literal(
            invocation, G_DBUS_ERROR, G_DBUS_ERROR_LIMITS_EXCEEDED,
            "a request for this selection is pending");
        return TRUE;
    }
    p->invocation = g_object_ref(invocation);
    /* qemu waits synchronously: keep the wait short. */
    p->timeout_id = g_timeout_add(QS_CLIPBOARD_REQUEST_TIMEOUT_MS, on_request_timeout, p);
    cb->funcs->request((uint8_t)selection, cb->user_data);
    return TRUE;
}

/* ---- us calling qemu ------------------------------------------------------------ */

static void call(QsClipboard *cb, const char *method, GVariant *args,
                 const GVariantType *reply, GAsyncReadyCallback done,
                 gpointer user_data)
{
    g_dbus_connection_call(cb->conn, cb->dest, CLIPBOARD_PATH, IFACE_CLIPBOARD,
                           method, args, reply, G_DBUS_CALL_FLAGS_NO_AUTO_START,
                           QS_CLIPBOARD_CALL_TIMEOUT_MS, cb->cancellable, done,
                           user_data);
}

static void on_registered(GObject *source, GAsyncResult *res, gpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source),
                                                           res, &error);

    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        return;
    }
    if (!ret) {
        g_dbus_error_strip_remote_error(error);
        g_message("clipboard: qemu's D-Bus clipboard is not available (%s): "
                  "clients get no agent and no clipboard", error->message);
        return;
    }
    g_message("clipboard: registered with qemu's D-Bus clipboard");
    set_available(data, TRUE);
}

static void on_done(GObject *source, GAsyncResult *res, gpointer data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source),
                                                           res, &error);

    if (!ret && !g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        g_dbus_error_strip_remote_error(error);
        g_message("clipboard: qemu refused %s: %s", (const char *)data, error->message);
    }
}

typedef struct {
    QsClipboard *cb;
    uint8_t selection;
} Fetch;

static void on_fetched(GObject *source, GAsyncResult *res, gpointer data)
{
    g_autofree Fetch *f = data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source),
                                                           res, &error);
    g_autoptr(GVariant) bytes = NULL;
    g_autoptr(GBytes) text = NULL;
    const char *mime = NULL;

    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        return;         /* f->cb is gone */
    }
    if (!ret) {
        g_dbus_error_strip_remote_error(error);
        g_message("clipboard: qemu gave no text for selection %u: %s",
                  f->selection, error->message);
    } else {
        g_variant_get(ret, "(&s@ay)", &mime, &bytes);
        if (g_strcmp0(mime, QS_CLIPBOARD_MIME_TEXT) != 0) {
            g_message("clipboard: qemu answered with type '%s'; dropped", mime);
        } else if (g_variant_get_size(bytes) > QS_CLIPBOARD_MAX) {
            g_message("clipboard: qemu's text of %zu bytes is over the %u byte "
                      "limit; dropped", g_variant_get_size(bytes), QS_CLIPBOARD_MAX);
        } else {
            text = g_variant_get_data_as_bytes(bytes);
        }
    }
    if (f->cb->funcs) {
        f->cb->funcs->data(f->selection, text, f->cb->user_data);
    }
}

void qs_clipboard_grab(QsClipboard *cb, uint8_t sel)
{
    const char *mimes[] = { QS_CLIPBOARD_MIME_TEXT, NULL };

    if (!cb->available || sel >= QS_CLIPBOARD_SELECTIONS) {
        return;
    }
    cb->serial[sel]++;
    call(cb, "Grab", g_variant_new("(uu^as)", sel, cb->serial[sel], mimes), NULL,
         on_done, "a clipboard grab");
}

void qs_clipboard_release(QsClipboard *cb, uint8_t sel)
{
    if (!cb->available || sel >= QS_CLIPBOARD_SELECTIONS) {
        return;
    }
    call(cb, "Release", g_variant_new("(u)", sel), NULL, on_done,
         "a clipboard release");
}

void qs_clipboard_fetch(QsClipboard *cb, uint8_t sel)
{
    const char *mimes[] = { QS_CLIPBOARD_MIME_TEXT, NULL };
    Fetch *f;

    if (!cb->available || sel >= QS_CLIPBOARD_SELECTIONS) {
        if (cb->funcs) {
            cb->funcs->data(sel, NULL, cb->user_data);
        }
        return;
    }
    f = g_new0(Fetch, 1);
    f->cb = cb;
    f->selection = sel;
    call(cb, "Request", g_variant_new("(u^as)", sel, mimes), G_VARIANT_TYPE("(say)"),
         on_fetched, f);
}

void qs_clipboard_provide(QsClipboard *cb, uint8_t sel, const uint8_t *data,
                          size_t size)
{
    if (sel >= QS_CLIPBOARD_SELECTIONS) {
        return;
    }
    if (data && size > QS_CLIPBOARD_MAX) {
        g_message("clipboard: client text of %zu bytes is over the %u byte "
                  "limit; not given to qemu", size, QS_CLIPBOARD_MAX);
        data = NULL;
    }
    pending_finish(cb, sel, data, size);
}

/* ---- lifecycle -------------------------------------------------------------------- */

QsClipboard *qs_clipboard_new(GDBusConnection *conn, const char *dest)
{
    QsClipboard *cb = g_new0(QsClipboard, 1);

    cb->conn = g_object_ref(conn);
    cb->dest = g_strdup(dest);
    cb->cancellable = g_cancellable_new();
    cb->skeleton = qemu_dbus_display1_clipboard_skeleton_new();
    g_signal_connect(cb->skeleton, "handle-register", G_CALLBACK(on_register), cb);
    g_signal_connect(cb->skeleton, "handle-unregister", G_CALLBACK(on_unregister), cb);
    g_signal_connect(cb->skeleton, "handle-grab", G_CALLBACK(on_grab), cb);
    g_signal_connect(cb->skeleton, "handle-release", G_CALLBACK(on_release), cb);
    g_signal_connect(cb->skeleton, "handle-request", G_CALLBACK(on_request), cb);
    return cb;
}

void qs_clipboard_set_funcs(QsClipboard *cb, const QsClipboardFuncs *funcs,
                            gpointer user_data)
{
    cb->funcs = funcs;
    cb->user_data = user_data;
}

void qs_clipboard_start(QsClipboard *cb)
{
    g_autoptr(GError) error = NULL;

    /* Exported first: qemu's Register handler reads our object back. */
    if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(cb->skeleton),
                                          cb->conn, CLIPBOARD_PATH, &error)) {
        g_message("clipboard: cannot export our clipboard object (%s): no "
                  "clipboard", error->message);
        return;
    }
    cb->exported = TRUE;
    call(cb, "Register", NULL, NULL, on_registered, cb);
}

gboolean qs_clipboard_is_available(QsClipboard *cb)
{
    return cb->available;
}

void qs_clipboard_free(QsClipboard *cb)
{
    if (!cb) {
        return;
    }
    g_cancellable_cancel(cb->cancellable);
    for (uint8_t i = 0; i < QS_CLIPBOARD_SELECTIONS; i++) {
        pending_finish(cb, i, NULL, 0);
    }
    if (cb->available && !g_dbus_connection_is_closed(cb->conn)) {
        g_autoptr(GError) error = NULL;
        g_autoptr(GVariant) ret = NULL;

        /* Some qemu (7.2) forget a peer only when it says so or its bus
         * name goes, which a peer-to-peer connection does not have: a helper
         * attached after us would be refused. Shutdown only, and bounded,
         * so waiting here holds nobody up. */
        ret = g_dbus_connection_call_sync(cb->conn, cb->dest, CLIPBOARD_PATH,
                                          IFACE_CLIPBOARD, "Unregister", NULL, NULL,
                                          G_DBUS_CALL_FLAGS_NO_AUTO_START,
                                          QS_CLIPBOARD_UNREGISTER_TIMEOUT_MS, NULL, &error);
        if (!ret) {
            g_debug("clipboard: Unregister: %s", error->message);
        }
    }
    if (cb->exported) {
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(cb->skeleton));
    }
    g_signal_handlers_disconnect_by_data(cb->skeleton, cb);
    g_object_unref(cb->skeleton);
    g_object_unref(cb->cancellable);
    g_object_unref(cb->conn);
    g_free(cb->dest);
    g_free(cb);
}
