/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsListenerCalls: qemu's Scanout, Update, ScanoutMap, UpdateMap, Disable and cursor calls, checked and written into the sink. */
#include "display/qs-listener-calls.h"

#include <gio/gunixfdlist.h>
#include <unistd.h>

#define ERROR_UNSUPPORTED "org.qemu.Display1.Error.Unsupported"
#define ERROR_INVALID "org.qemu.Display1.Error.Invalid"

static gboolean is_retired(QsListenerCalls *c)
{
    return g_atomic_int_get(c->retired) != 0;
}

/* Called first by every handler: the message is no longer waiting. */
static void handled(QsListenerCalls *c, GDBusMethodInvocation *inv)
{
    qs_listener_arrivals_handled(c->arrivals, inv);
    g_atomic_pointer_add(&c->progress, 1);
}

static void log_dropped(QsListenerCalls *c, const char *what, const GError *error)
{
    unsigned suppressed = 0;

    g_atomic_pointer_add(&c->dropped, 1);
    if (qs_ratelimit_allow(&c->rl, g_get_monotonic_time(), &suppressed)) {
        g_warning("%s: dropped %s: %s%s", c->sink->name, what, error->message,
                  suppressed ? " (earlier messages suppressed)" : "");
    }
}

static gboolean on_scanout(QemuDBusDisplay1Listener *skel,
                           GDBusMethodInvocation *inv, guint width,
                           guint height, guint stride, guint format,
                           GVariant *data, gpointer user_data)
{
    QsListenerCalls *c = user_data;
    g_autoptr(GError) error = NULL;
    gsize n = 0;
    const uint8_t *p = g_variant_get_fixed_array(data, &n, 1);
    QsConsoleSink *sink = c->sink;

    handled(c, inv);
    g_mutex_lock(&sink->lock);
    if (!is_retired(c)) {
        qs_surface_map_close(&c->map);
        if (qs_screen_scanout(sink->screen, width, height, stride, format, p,
                              n, g_get_monotonic_time(), &error)) {
            sink->lost = FALSE;
        } else {
            sink->lost = TRUE;
        }
    }
    g_mutex_unlock(&sink->lock);
    g_atomic_pointer_add(&c->scanouts, 1);
    if (error) {
        g_autofree char *what = g_strdup_printf(
            "Scanout %ux%u stride %u format 0x%x (%zu bytes)", width, height,
            stride, format, (size_t)n);

        log_dropped(c, what, error);
    }
    qemu_dbus_display1_listener_complete_scanout(skel, inv);
    return TRUE;
}

/* qemu 7.2 may send Updates for a size it announced only as a Width/Height
 * property change, which can arrive after them (another connection): take
 * the resize from the rectangle when it fits the console's announced size. */
static void resize_if_announced(QsConsoleSink *sink, int32_t x, int32_t y,
                                int32_t w, int32_t h, GError **error)
{
    int64_t right = (int64_t)x + w, bottom = (int64_t)y + h;
    uint32_t held_w, held_h;

    qs_console_sink_held(sink, &held_w, &held_h);
    if (x < 0 || y < 0 || w <= 0 || h <= 0 ||
        (right <= held_w && bottom <= held_h) ||
        right > sink->console_width || bottom > sink->console_height ||
        (sink->console_width == held_w && sink->console_height == held_h)) {
        return;
    }
    qs_screen_resize(sink->screen, sink->console_width, sink->console_height,
                     g_get_monotonic_time(), error);
}

static gboolean outside(QsConsoleSink *sink, int32_t x, int32_t y, int32_t w,
                        int32_t h)
{
    uint32_t held_w, held_h;

    qs_console_sink_held(sink, &held_w, &held_h);
    return held_w > 0 && x >= 0 && y >= 0 && w > 0 && h > 0 &&
           ((int64_t)x + w > held_w || (int64_t)y + h > held_h);
}

static gboolean on_update(QemuDBusDisplay1Listener *skel,
                          GDBusMethodInvocation *inv, gint x, gint y, gint w,
                          gint h, guint stride, guint format, GVariant *data,
                          gpointer user_data)
{
    QsListenerCalls *c = user_data;
    g_autoptr(GError) error = NULL;
    gsize n = 0;
    const uint8_t *p = g_variant_get_fixed_array(data, &n, 1);
    QsConsoleSink *sink = c->sink;
    gboolean early = FALSE;
    uint32_t held_w = 0, held_h = 0;

    handled(c, inv);
    g_mutex_lock(&sink->lock);
    if (!is_retired(c)) {
        resize_if_announced(sink, x, y, w, h, &error);
        if (!error && outside(sink, x, y, w, h)) {
            /* qemu 7.2 resized without a Scanout and the Width/Height
             * change has not reached us yet; the console re-registers
             * for a fresh Scanout when it does (see sink->lost). */
            sink->lost = TRUE;
            early = TRUE;
            qs_console_sink_held(sink, &held_w, &held_h);
        } else if (!error) {
            qs_screen_update(sink->screen, x, y, w, h, stride, format, p, n,
                             g_get_monotonic_time(), &error);
        }
        if (error) {
            sink->lost = TRUE;
        }
    }
    g_mutex_unlock(&sink->lock);
    g_atomic_pointer_add(&c->updates, 1);
    if (early) {
        g_atomic_pointer_add(&c->early, 1);
        g_debug("%s: Update %dx%d at (%d,%d) outside the %ux%u surface, "
                "waiting for qemu's resize", sink->name, w, h, x, y,
                held_w, held_h);
    } else if (error) {
        g_autofree char *what = g_strdup_printf(
            "Update %dx%d at (%d,%d) stride %u format 0x%x (%zu bytes)", w, h,
            x, y, stride, format, (size_t)n);

        log_dropped(c, what, error);
    }
    qemu_dbus_display1_listener_complete_update(skel, inv);
    return TRUE;
}

static gboolean on_disable(QemuDBusDisplay1Listener *skel,
                           GDBusMethodInvocation *inv, gpointer user_data)
{
    QsListenerCalls *c = user_data;

    handled(c, inv);
    g_mutex_lock(&c->sink->lock);
    if (!is_retired(c)) {
        qs_surface_map_close(&c->map);
        qs_screen_disable(c->sink->screen);
    }
    g_mutex_unlock(&c->sink->lock);
    qemu_dbus_display1_listener_complete_disable(skel, inv);
    return TRUE;
}

static gboolean on_cursor_define(QemuDBusDisplay1Listener *skel,
                                 GDBusMethodInvocation *inv, gint w, gint h,
                                 gint hot_x, gint hot_y, GVariant *data,
                                 gpointer user_data)
{
    QsListenerCalls *c = user_data;
    g_autoptr(GError) error = NULL;
    gsize n = 0;
    const uint8_t *p = g_variant_get_fixed_array(data, &n, 1);

    handled(c, inv);
    if (!is_retired(c) &&
        !qs_cursor_define(c->sink->cursor, w, h, hot_x, hot_y, p, n, &error)) {
        log_dropped(c, "CursorDefine", error);
    }
    qemu_dbus_display1_listener_complete_cursor_define(skel, inv);
    return TRUE;
}

static gboolean on_mouse_set(QemuDBusDisplay1Listener *skel,
                             GDBusMethodInvocation *inv, gint x, gint y,
                             gint on, gpointer user_data)
{
    QsListenerCalls *c = user_data;

    handled(c, inv);
    if (!is_retired(c)) {
        qs_cursor_set_position(c->sink->cursor, x, y, on != 0);
    }
    qemu_dbus_display1_listener_complete_mouse_set(skel, inv);
    return TRUE;
}

static void return_unsupported_dmabuf(QsListenerCalls *c, GDBusMethodInvocation *inv)
{
    static gsize logged;

    handled(c, inv);
    if (g_once_init_enter(&logged)) {
        g_warning("%s: qemu offers DMABUF frames (gl=on); qemu-spice does not "
                  "take them: start qemu without gl=on", c->sink->name);
        g_once_init_leave(&logged, 1);
    }
    g_dbus_method_invocation_return_dbus_error(
        inv, ERROR_UNSUPPORTED, "qemu-spice does not support DMABUF scanouts");
}

static gboolean on_scanout_dmabuf(QemuDBusDisplay1Listener *skel,
                                  GDBusMethodInvocation *inv,
                                  GUnixFDList *fds, GVariant *handle,
                                  guint w, guint h, guint stride, guint fourcc,
                                  guint64 modifier, gboolean y0_top,
                                  gpointer user_data)
{
    (void)skel, (void)fds, (void)handle, (void)w, (void)h, (void)stride;
    (void)fourcc, (void)modifier, (void)y0_top;
    return_unsupported_dmabuf(user_data, inv);
    return TRUE;
}

static gboolean on_update_dmabuf(QemuDBusDisplay1Listener *skel,
                                 GDBusMethodInvocation *inv, gint x, gint y,
                                 gint w, gint h, gpointer user_data)
{
    (void)skel, (void)x, (void)y, (void)w, (void)h;
    return_unsupported_dmabuf(user_data, inv);
    return TRUE;
}

static gboolean on_scanout_map(QemuDBusDisplay1ListenerUnixMap *skel,
                               GDBusMethodInvocation *inv, GUnixFDList *fds,
                               GVariant *handle, guint offset, guint width,
                               guint height, guint stride, guint format,
                               gpointer user_data)
{
    QsListenerCalls *c = user_data;
    g_autoptr(GError) error = NULL;
    QsConsoleSink *sink = c->sink;
    QsSurfaceMap map = { 0 };
    int fd = -1;

    handled(c, inv);
    g_atomic_pointer_add(&c->scanout_maps, 1);
    if (fds) {
        fd = g_unix_fd_list_get(fds, g_variant_get_handle(handle), &error);
    } else {
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "no fd passed");
    }
    if (fd >= 0) {
        qs_surface_map_open(&map, fd, offset, width, height, stride, format, &error);
        close(fd);
    }
    g_mutex_lock(&sink->lock);
    if (!error && !is_retired(c)) {
        qs_surface_map_close(&c->map);
        c->map = map;
        map.base = NULL;
        if (qs_screen_scanout(sink->screen, width, height, stride, format,
                              c->map.surface, c->map.surface_len,
                              g_get_monotonic_time(), &error)) {
            sink->lost = FALSE;
        } else {
            qs_surface_map_close(&c->map);
        }
    }
    g_mutex_unlock(&sink->lock);
    qs_surface_map_close(&map);
    if (error) {
        g_autofree char *what = g_strdup_printf(
            "ScanoutMap %ux%u stride %u offset %u format 0x%x", width, height,
            stride, offset, format);

        /* qemu then falls back to Scanout/Update copies for this listener. */
        log_dropped(c, what, error);
        g_dbus_method_invocation_return_dbus_error(inv, ERROR_INVALID,
                                                   error->message);
        return TRUE;
    }
    qemu_dbus_display1_listener_unix_map_complete_scanout_map(skel, inv, NULL);
    return TRUE;
}

static gboolean map_is_held(QsConsoleSink *sink, const QsSurfaceMap *map)
{
    uint32_t held_w, held_h;

    qs_console_sink_held(sink, &held_w, &held_h);
    return map->width == held_w && map->height == held_h;
}

static gboolean on_update_map(QemuDBusDisplay1ListenerUnixMap *skel,
                              GDBusMethodInvocation *inv, gint x, gint y,
                              gint w, gint h, gpointer user_data)
{
    QsListenerCalls *c = user_data;
    g_autoptr(GError) error = NULL;
    QsConsoleSink *sink = c->sink;
    gboolean stale = FALSE;

    handled(c, inv);
    g_atomic_pointer_add(&c->update_maps, 1);
    g_mutex_lock(&sink->lock);
    if (is_retired(c)) {
        /* nothing */
    } else if (!c->map.base) {
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "no mapped surface");
    } else if (!map_is_held(sink, &c->map)) {
        /* qemu's Width/Height change (main connection) overtook this last
         * update of the old surface (listener connection); the new surface
         * arrives as a ScanoutMap or Scanout of its own. */
        stale = TRUE;
    } else {
        c->map.trimmed = FALSE;
        qs_screen_update_from_map(sink->screen, c->map.surface,
                                  c->map.surface_len, c->map.width,
                                  c->map.height, c->map.stride, c->map.format,
                                  x, y, w, h, g_get_monotonic_time(), &error);
    }
    g_mutex_unlock(&sink->lock);
    if (stale) {
        g_atomic_pointer_add(&c->early, 1);
        g_debug("%s: UpdateMap %dx%d at (%d,%d) of a surface already resized",
                sink->name, w, h, x, y);
    }
    if (error) {
        g_autofree char *what = g_strdup_printf("UpdateMap %dx%d at (%d,%d)",
                                                w, h, x, y);

        log_dropped(c, what, error);
    }
    qemu_dbus_display1_listener_unix_map_complete_update_map(skel, inv);
    return TRUE;
}

void qs_listener_calls_connect(QsListenerCalls *c, QemuDBusDisplay1Listener *skel,
                               QemuDBusDisplay1ListenerUnixMap *map_skel)
{
    g_object_connect(skel,
        "signal::handle-scanout", on_scanout, c,
        "signal::handle-update", on_update, c,
        "signal::handle-disable", on_disable, c,
        "signal::handle-cursor-define", on_cursor_define, c,
        "signal::handle-mouse-set", on_mouse_set, c,
        "signal::handle-scanout-dmabuf", on_scanout_dmabuf, c,
        "signal::handle-update-dmabuf", on_update_dmabuf, c,
        NULL);
    g_object_connect(map_skel,
        "signal::handle-scanout-map", on_scanout_map, c,
        "signal::handle-update-map", on_update_map, c,
        NULL);
}
