/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Console.SetUIInfo calls to qemu: asynchronous, coalesced, refused for good where the device has no UI info. */
#include "display/qs-ui-info.h"

#include "display/qs-ratelimit.h"

#define CONSOLE_IFACE "org.qemu.Display1.Console"
#define ERROR_UNSUPPORTED "org.qemu.Display1.Error.Unsupported"

struct QsUiInfo {
    GDBusConnection *conn;
    char *dest;
    char *path;
    QsUiInfoDoneFunc done;
    gpointer user_data;
    GCancellable *cancellable;
    gboolean in_flight;
    gboolean has_next;
    QsUiInfoRequest next;           /* arrived while a call was in flight */
    gboolean unsupported;
    QsRateLimit failed_rl;
};

static void call(QsUiInfo *ui, const QsUiInfoRequest *req);

static gboolean is_unsupported(const GError *error)
{
    g_autofree char *remote = g_dbus_error_get_remote_error(error);

    /* qemu's own answer, or a qemu whose Console lacks the method. */
    return (remote && g_str_equal(remote, ERROR_UNSUPPORTED)) ||
           g_error_matches(error, G_DBUS_ERROR, G_DBUS_ERROR_UNKNOWN_METHOD);
}

static void on_reply(GObject *source, GAsyncResult *res, gpointer user_data)
{
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = NULL;
    QsUiInfo *ui;
    gboolean applied;

    ret = g_dbus_connection_call_finish(G_DBUS_CONNECTION(source), res, &error);
    if (g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        return;                     /* freed meanwhile */
    }
    ui = user_data;
    ui->in_flight = FALSE;
    applied = error == NULL;
    if (error && is_unsupported(error)) {
        g_autofree char *remote = g_dbus_error_get_remote_error(error);

        g_dbus_error_strip_remote_error(error);
        g_message("display: %s cannot change its mode (SetUIInfo: %s%s%s); the "
                  "clients' monitor configs are refused and the size stays",
                  ui->path, remote ? remote : "", remote ? ": " : "", error->message);
        ui->unsupported = TRUE;
        ui->has_next = FALSE;
    } else if (error) {
        unsigned suppressed = 0;

        if (qs_ratelimit_allow(&ui->failed_rl, g_get_monotonic_time(), &suppressed)) {
            g_message("display: SetUIInfo on %s failed: %s%s", ui->path, error->message,
                      suppressed ? " (more failures were not logged)" : "");
        }
    }
    if (ui->has_next) {
        /* The newer request answers the older ones too. */
        ui->has_next = FALSE;
        call(ui, &ui->next);
        return;
    }
    if (ui->done) {
        ui->done(applied, ui->user_data);
    }
}

static void call(QsUiInfo *ui, const QsUiInfoRequest *req)
{
    ui->in_flight = TRUE;
    g_dbus_connection_call(ui->conn, ui->dest, ui->path, CONSOLE_IFACE, "SetUIInfo",
                           g_variant_new("(qqiiuu)", req->width_mm, req->height_mm,
                                         req->x, req->y, req->width, req->height),
                           G_VARIANT_TYPE_UNIT, G_DBUS_CALL_FLAGS_NO_AUTO_START,
                           QS_UI_INFO_CALL_TIMEOUT_MS, ui->cancellable, on_reply, ui);
}

void qs_ui_info_request(QsUiInfo *ui, const QsUiInfoRequest *req)
{
    if (ui->unsupported) {
        if (ui->done) {
            ui->done(FALSE, ui->user_data);
        }
        return;
    }
    if (ui->in_flight) {
        /* A window being dragged sends many: only the last one matters. */
        ui->next = *req;
        ui->has_next = TRUE;
        return;
    }
    call(ui, req);
}

gboolean qs_ui_info_is_supported(QsUiInfo *ui)
{
    return !ui->unsupported;
}

QsUiInfo *qs_ui_info_new(GDBusConnection *conn, const char *dest,
                         uint32_t console_id, QsUiInfoDoneFunc done,
                         gpointer user_data)
{
    QsUiInfo *ui = g_new0(QsUiInfo, 1);

    ui->conn = g_object_ref(conn);
    ui->dest = g_strdup(dest);
    ui->path = g_strdup_printf("/org/qemu/Display1/Console_%u", console_id);
    ui->done = done;
    ui->user_data = user_data;
    ui->cancellable = g_cancellable_new();
    return ui;
}

void qs_ui_info_free(QsUiInfo *ui)
{
    if (!ui) {
        return;
    }
    g_cancellable_cancel(ui->cancellable);
    g_clear_object(&ui->cancellable);
    g_clear_object(&ui->conn);
    g_free(ui->dest);
    g_free(ui->path);
    g_free(ui);
}
