/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Listener thread: p2p handshake, exported Listener, frames into the screen. */

#include "display/qs-listener.h"

#include <errno.h>
#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "display/qs-ratelimit.h"
#include "qs-dbus-display1.h"

#define LISTENER_PATH "/org/qemu/Display1/Listener"
#define IFACE_LISTENER "org.qemu.Display1.Listener"
#define IFACE_MAP "org.qemu.Display1.Listener.Unix.Map"
#define ERROR_UNSUPPORTED "org.qemu.Display1.Error.Unsupported"
#define ERROR_INVALID "org.qemu.Display1.Error.Invalid"
#define MAX_STALL_S 60
/* Counted per message on top of its body, so empty calls count too. */
#define MESSAGE_OVERHEAD 64

typedef struct {
    uint8_t *base;          /* mmap()ed, page aligned */
    size_t base_len;
    const uint8_t *surface; /* base + offset within the page */
    size_t surface_len;
    uint32_t width, height, stride, format;
    gboolean trimmed;       /* our page-table entries dropped while idle */
} QsMap;

/* What the filter on GDBus's worker thread shares with the main thread. */
typedef struct {
    guint64 queued_bytes;   /* counted on arrival, minus handled */
    gint armed;             /* make `wake` ready at the next arrival */
    GSource *wake;          /* the watchdog's, or NULL */
} Arrivals;

static void arrivals_clear(gpointer data)
{
    Arrivals *a = data;

    if (a->wake) {
        g_source_unref(a->wake);
    }
}

static void release_arrivals(gpointer data)
{
    g_atomic_rc_box_release_full(data, arrivals_clear);
}

struct QsListener {
    uint64_t id;
    QsConsoleSink *sink;
    GMainContext *main_ctx;
    QsListenerEventFunc func;
    gpointer user_data;

    GThread *thread;
    GMainContext *ctx;
    GSocket *socket;            /* set before the thread starts */
    gint retired;               /* atomic */
    gint finished;              /* atomic: the thread touches nothing now */

    /* atomics, read by the main thread */
    /* A box of its own: GDBus may run the filter on its worker thread after
     * the filter is removed and the listener freed, so the filter holds a
     * reference, not the listener. */
    Arrivals *arrivals;
    guint64 progress;
    guint64 scanouts, updates, scanout_maps, update_maps, dropped, early;

    /* listener thread only */
    GDBusConnection *conn;
    guint filter_id;
    QemuDBusDisplay1Listener *skel;
    QemuDBusDisplay1ListenerUnixMap *map_skel;
    QsMap map;
    QsRateLimit rl;
};

/* Carries copies, not the listener: the main thread may free a finished
 * listener before its last event is dispatched. */
typedef struct {
    QsListenerEventFunc func;
    gpointer user_data;
    uint64_t id;
    QsListenerEvent event;
    char *message;
} Event;

static gboolean dispatch_event(gpointer data)
{
    Event *e = data;

    e->func(e->id, e->event, e->message, e->user_data);
    return G_SOURCE_REMOVE;
}

static void free_event(gpointer data)
{
    Event *e = data;

    g_free(e->message);
    g_free(e);
}

/* Listener thread -> main context. */
static void post_event(QsListener *l, QsListenerEvent event, const char *msg)
{
    Event *e = g_new0(Event, 1);

    e->func = l->func;
    e->user_data = l->user_data;
    e->id = l->id;
    e->event = event;
    e->message = g_strdup(msg);
    g_main_context_invoke_full(l->main_ctx, G_PRIORITY_DEFAULT,
                               dispatch_event, e, free_event);
}

static gboolean is_retired(QsListener *l)
{
    return g_atomic_int_get(&l->retired) != 0;
}

/* ---- accounting ---------------------------------------------------------- */

static uint64_t message_cost(GDBusMessage *msg)
{
    GVariant *body = g_dbus_message_get_body(msg);

    return MESSAGE_OVERHEAD + (body ? g_variant_get_size(body) : 0);
}

/* The calls our handlers complete, with their signatures: exactly these are
 * counted on arrival and uncounted in the handler, so the count cannot leak
 * (a call GDBus refuses before the handler is not counted). */
static gboolean is_counted(GDBusMessage *msg)
{
    static const struct {
        const char *iface, *member, *sig;
    } calls[] = {
        { IFACE_LISTENER, "Scanout", "(uuuuay)" },
        { IFACE_LISTENER, "Update", "(iiiiuuay)" },
        { IFACE_LISTENER, "ScanoutDMABUF", "(huuuutb)" },
        { IFACE_LISTENER, "UpdateDMABUF", "(iiii)" },
        { IFACE_LISTENER, "Disable", "()" },
        { IFACE_LISTENER, "MouseSet", "(iii)" },
        { IFACE_LISTENER, "CursorDefine", "(iiiiay)" },
        { IFACE_MAP, "ScanoutMap", "(huuuuu)" },
        { IFACE_MAP, "UpdateMap", "(iiii)" },
    };
    const char *iface = g_dbus_message_get_interface(msg);
    const char *member = g_dbus_message_get_member(msg);
    const char *path = g_dbus_message_get_path(msg);
    GVariant *body = g_dbus_message_get_body(msg);
    const char *sig = body ? g_variant_get_type_string(body) : "()";

    if (g_dbus_message_get_message_type(msg) != G_DBUS_MESSAGE_TYPE_METHOD_CALL ||
        !iface || !member || g_strcmp0(path, LISTENER_PATH) != 0) {
        return FALSE;
    }
    for (size_t i = 0; i < G_N_ELEMENTS(calls); i++) {
        if (g_str_equal(iface, calls[i].iface) &&
            g_str_equal(member, calls[i].member) &&
            g_str_equal(sig, calls[i].sig)) {
            return TRUE;
        }
    }
    return FALSE;
}

/* GDBus worker thread; user_data is the Arrivals box. The count is raised
 * before `armed` is read, and qs_listener_arm_wake() sets `armed` before it
 * reads the count: one of the two sees the other, so no arrival is missed.
 * (g_source_set_ready_time is thread-safe, and harmless on a source the
 * main thread has destroyed, which our reference keeps allocated.) */
static GDBusMessage *on_filter(GDBusConnection *conn, GDBusMessage *msg,
                               gboolean incoming, gpointer user_data)
{
    Arrivals *a = user_data;

    (void)conn;
    if (incoming && is_counted(msg)) {
        g_atomic_pointer_add(&a->queued_bytes, (gssize)message_cost(msg));
        if (a->wake && g_atomic_int_compare_and_exchange(&a->armed, 1, 0)) {
            g_source_set_ready_time(a->wake, 0);
        }
    }
    return msg;
}

/* Called first by every handler: the message is no longer waiting. */
static void handled(QsListener *l, GDBusMethodInvocation *inv)
{
    GDBusMessage *msg = g_dbus_method_invocation_get_message(inv);

    g_atomic_pointer_add(&l->arrivals->queued_bytes, -(gssize)message_cost(msg));
    g_atomic_pointer_add(&l->progress, 1);
}

static void log_dropped(QsListener *l, const char *what, const GError *error)
{
    unsigned suppressed = 0;

    g_atomic_pointer_add(&l->dropped, 1);
    if (qs_ratelimit_allow(&l->rl, g_get_monotonic_time(), &suppressed)) {
        g_warning("%s: dropped %s: %s%s", l->sink->name, what, error->message,
                  suppressed ? " (earlier messages suppressed)" : "");
    }
}

/* ---- frames -------------------------------------------------------------- */

static void unmap(QsListener *l)
{
    if (l->map.base) {
        munmap(l->map.base, l->map.base_len);
    }
    memset(&l->map, 0, sizeof(l->map));
}

static gboolean on_scanout(QemuDBusDisplay1Listener *skel,
                           GDBusMethodInvocation *inv, guint width,
                           guint height, guint stride, guint format,
                           GVariant *data, gpointer user_data)
{
    QsListener *l = user_data;
    g_autoptr(GError) error = NULL;
    gsize n = 0;
    const uint8_t *p = g_variant_get_fixed_array(data, &n, 1);
    QsConsoleSink *sink = l->sink;

    handled(l, inv);
    g_mutex_lock(&sink->lock);
    if (!is_retired(l)) {
        unmap(l);
        if (qs_screen_scanout(sink->screen, width, height, stride, format, p,
                              n, g_get_monotonic_time(), &error)) {
            sink->width = width;
            sink->height = height;
            sink->lost = FALSE;
        } else {
            sink->lost = TRUE;
        }
    }
    g_mutex_unlock(&sink->lock);
    g_atomic_pointer_add(&l->scanouts, 1);
    if (error) {
        g_autofree char *what = g_strdup_printf(
            "Scanout %ux%u stride %u format 0x%x (%zu bytes)", width, height,
            stride, format, (size_t)n);

        log_dropped(l, what, error);
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

    if (x < 0 || y < 0 || w <= 0 || h <= 0 ||
        (right <= sink->width && bottom <= sink->height) ||
        right > sink->console_width || bottom > sink->console_height ||
        (sink->console_width == sink->width &&
         sink->console_height == sink->height)) {
        return;
    }
    if (qs_screen_resize(sink->screen, sink->console_width,
                         sink->console_height, g_get_monotonic_time(), error)) {
        sink->width = sink->console_width;
        sink->height = sink->console_height;
    }
}

static gboolean outside(QsConsoleSink *sink, int32_t x, int32_t y, int32_t w,
                        int32_t h)
{
    return sink->width > 0 && x >= 0 && y >= 0 && w > 0 && h > 0 &&
           ((int64_t)x + w > sink->width || (int64_t)y + h > sink->height);
}

static gboolean on_update(QemuDBusDisplay1Listener *skel,
                          GDBusMethodInvocation *inv, gint x, gint y, gint w,
                          gint h, guint stride, guint format, GVariant *data,
                          gpointer user_data)
{
    QsListener *l = user_data;
    g_autoptr(GError) error = NULL;
    gsize n = 0;
    const uint8_t *p = g_variant_get_fixed_array(data, &n, 1);
    QsConsoleSink *sink = l->sink;
    gboolean early = FALSE;

    handled(l, inv);
    g_mutex_lock(&sink->lock);
    if (!is_retired(l)) {
        resize_if_announced(sink, x, y, w, h, &error);
        if (!error && outside(sink, x, y, w, h)) {
            /* qemu 7.2 resized without a Scanout and the Width/Height
             * change has not reached us yet; the console re-registers
             * for a fresh Scanout when it does (see sink->lost). */
            sink->lost = TRUE;
            early = TRUE;
        } else if (!error) {
            qs_screen_update(sink->screen, x, y, w, h, stride, format, p, n,
                             g_get_monotonic_time(), &error);
        }
        if (error) {
            sink->lost = TRUE;
        }
    }
    g_mutex_unlock(&sink->lock);
    g_atomic_pointer_add(&l->updates, 1);
    if (early) {
        g_atomic_pointer_add(&l->early, 1);
        g_debug("%s: Update %dx%d at (%d,%d) outside the %ux%u surface, "
                "waiting for qemu's resize", sink->name, w, h, x, y,
                sink->width, sink->height);
    } else if (error) {
        g_autofree char *what = g_strdup_printf(
            "Update %dx%d at (%d,%d) stride %u format 0x%x (%zu bytes)", w, h,
            x, y, stride, format, (size_t)n);

        log_dropped(l, what, error);
    }
    qemu_dbus_display1_listener_complete_update(skel, inv);
    return TRUE;
}

static gboolean on_disable(QemuDBusDisplay1Listener *skel,
                           GDBusMethodInvocation *inv, gpointer user_data)
{
    QsListener *l = user_data;

    handled(l, inv);
    g_mutex_lock(&l->sink->lock);
    if (!is_retired(l)) {
        unmap(l);
        qs_screen_disable(l->sink->screen);
        l->sink->width = l->sink->height = 0;
    }
    g_mutex_unlock(&l->sink->lock);
    qemu_dbus_display1_listener_complete_disable(skel, inv);
    return TRUE;
}

static gboolean on_cursor_define(QemuDBusDisplay1Listener *skel,
                                 GDBusMethodInvocation *inv, gint w, gint h,
                                 gint hot_x, gint hot_y, GVariant *data,
                                 gpointer user_data)
{
    QsListener *l = user_data;
    g_autoptr(GError) error = NULL;
    gsize n = 0;
    const uint8_t *p = g_variant_get_fixed_array(data, &n, 1);

    handled(l, inv);
    if (!is_retired(l) &&
        !qs_cursor_define(l->sink->cursor, w, h, hot_x, hot_y, p, n, &error)) {
        log_dropped(l, "CursorDefine", error);
    }
    qemu_dbus_display1_listener_complete_cursor_define(skel, inv);
    return TRUE;
}

static gboolean on_mouse_set(QemuDBusDisplay1Listener *skel,
                             GDBusMethodInvocation *inv, gint x, gint y,
                             gint on, gpointer user_data)
{
    QsListener *l = user_data;

    handled(l, inv);
    if (!is_retired(l)) {
        qs_cursor_set_position(l->sink->cursor, x, y, on != 0);
    }
    qemu_dbus_display1_listener_complete_mouse_set(skel, inv);
    return TRUE;
}

static void return_unsupported_dmabuf(QsListener *l, GDBusMethodInvocation *inv)
{
    static gsize logged;

    handled(l, inv);
    if (g_once_init_enter(&logged)) {
        g_warning("%s: qemu offers DMABUF frames (gl=on); qemu-spice does not "
                  "take them: start qemu without gl=on", l->sink->name);
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

/* Maps qemu's shared surface read-only; MAP_SHARED so later UpdateMaps see
 * the guest's new pixels. The size is checked against the file now; qemu
 * need not seal it, so a qemu that shrank it later could fault us (a qemu
 * can as well crash its VM). */
static gboolean map_surface(QsMap *map, int fd, uint32_t offset,
                            uint32_t width, uint32_t height, uint32_t stride,
                            uint32_t format, GError **error)
{
    long page = sysconf(_SC_PAGESIZE);
    uint64_t len = (uint64_t)stride * height;
    uint64_t page_off = offset - offset % (uint64_t)page;
    struct stat st;
    void *base;

    if (width == 0 || height == 0 || width > QS_SCREEN_MAX_SIDE ||
        height > QS_SCREEN_MAX_SIDE || stride < (uint64_t)width * 4 ||
        len > (uint64_t)QS_SCREEN_MAX_AREA * 4 * 2) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "surface %ux%u stride %u out of range", width, height,
                    stride);
        return FALSE;
    }
    if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
        (uint64_t)st.st_size < (uint64_t)offset + len) {
        g_set_error(error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "the passed fd does not hold %" G_GUINT64_FORMAT
                    " bytes at offset %u", len, offset);
        return FALSE;
    }
    base = mmap(NULL, (size_t)(offset - page_off + len), PROT_READ,
                MAP_SHARED, fd, (off_t)page_off);
    if (base == MAP_FAILED) {
        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(errno),
                    "mmap failed: %s", g_strerror(errno));
        return FALSE;
    }
    map->base = base;
    map->base_len = (size_t)(offset - page_off + len);
    map->surface = map->base + (offset - page_off);
    map->surface_len = (size_t)len;
    map->width = width;
    map->height = height;
    map->stride = stride;
    map->format = format;
    return TRUE;
}

static gboolean on_scanout_map(QemuDBusDisplay1ListenerUnixMap *skel,
                               GDBusMethodInvocation *inv, GUnixFDList *fds,
                               GVariant *handle, guint offset, guint width,
                               guint height, guint stride, guint format,
                               gpointer user_data)
{
    QsListener *l = user_data;
    g_autoptr(GError) error = NULL;
    QsConsoleSink *sink = l->sink;
    QsMap map = { 0 };
    int fd = -1;

    handled(l, inv);
    g_atomic_pointer_add(&l->scanout_maps, 1);
    if (fds) {
        fd = g_unix_fd_list_get(fds, g_variant_get_handle(handle), &error);
    } else {
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "no fd passed");
    }
    if (fd >= 0) {
        map_surface(&map, fd, offset, width, height, stride, format, &error);
        close(fd);
    }
    g_mutex_lock(&sink->lock);
    if (!error && !is_retired(l)) {
        unmap(l);
        l->map = map;
        map.base = NULL;
        if (qs_screen_scanout(sink->screen, width, height, stride, format,
                              l->map.surface, l->map.surface_len,
                              g_get_monotonic_time(), &error)) {
            sink->width = width;
            sink->height = height;
            sink->lost = FALSE;
        } else {
            unmap(l);
        }
    }
    g_mutex_unlock(&sink->lock);
    if (map.base) {
        munmap(map.base, map.base_len);
    }
    if (error) {
        g_autofree char *what = g_strdup_printf(
            "ScanoutMap %ux%u stride %u offset %u format 0x%x", width, height,
            stride, offset, format);

        /* qemu then falls back to Scanout/Update copies for this listener. */
        log_dropped(l, what, error);
        g_dbus_method_invocation_return_dbus_error(inv, ERROR_INVALID,
                                                   error->message);
        return TRUE;
    }
    qemu_dbus_display1_listener_unix_map_complete_scanout_map(skel, inv, NULL);
    return TRUE;
}

static gboolean on_update_map(QemuDBusDisplay1ListenerUnixMap *skel,
                              GDBusMethodInvocation *inv, gint x, gint y,
                              gint w, gint h, gpointer user_data)
{
    QsListener *l = user_data;
    g_autoptr(GError) error = NULL;
    QsConsoleSink *sink = l->sink;
    gboolean stale = FALSE;

    handled(l, inv);
    g_atomic_pointer_add(&l->update_maps, 1);
    g_mutex_lock(&sink->lock);
    if (is_retired(l)) {
        /* nothing */
    } else if (!l->map.base) {
        g_set_error(&error, G_IO_ERROR, G_IO_ERROR_INVALID_ARGUMENT,
                    "no mapped surface");
    } else if (l->map.width != sink->width || l->map.height != sink->height) {
        /* qemu's Width/Height change (main connection) overtook this last
         * update of the old surface (listener connection); the new surface
         * arrives as a ScanoutMap or Scanout of its own. */
        stale = TRUE;
    } else {
        l->map.trimmed = FALSE;
        qs_screen_update_from_map(sink->screen, l->map.surface,
                                  l->map.surface_len, l->map.width,
                                  l->map.height, l->map.stride, l->map.format,
                                  x, y, w, h, g_get_monotonic_time(), &error);
    }
    g_mutex_unlock(&sink->lock);
    if (stale) {
        g_atomic_pointer_add(&l->early, 1);
        g_debug("%s: UpdateMap %dx%d at (%d,%d) of a surface already resized",
                sink->name, w, h, x, y);
    }
    if (error) {
        g_autofree char *what = g_strdup_printf("UpdateMap %dx%d at (%d,%d)",
                                                w, h, x, y);

        log_dropped(l, what, error);
    }
    qemu_dbus_display1_listener_unix_map_complete_update_map(skel, inv);
    return TRUE;
}

/* ---- thread -------------------------------------------------------------- */

static void on_closed(GDBusConnection *conn, gboolean remote, GError *error,
                      gpointer user_data)
{
    QsListener *l = user_data;

    (void)conn, (void)remote;
    if (!is_retired(l)) {
        post_event(l, QS_LISTENER_CLOSED, error ? error->message : NULL);
    }
}

static gboolean export(QsListener *l, GError **error)
{
    static const char *const ifaces[] = { IFACE_MAP, NULL };

    l->skel = qemu_dbus_display1_listener_skeleton_new();
    l->map_skel = qemu_dbus_display1_listener_unix_map_skeleton_new();
    /* qemu 8.1+ reads it with GetAll right after the handshake; 9.2+ shares
     * its surface through Unix.Map when listed. Older qemu ignores both. */
    qemu_dbus_display1_listener_set_interfaces(l->skel, ifaces);
    g_object_connect(l->skel,
        "signal::handle-scanout", on_scanout, l,
        "signal::handle-update", on_update, l,
        "signal::handle-disable", on_disable, l,
        "signal::handle-cursor-define", on_cursor_define, l,
        "signal::handle-mouse-set", on_mouse_set, l,
        "signal::handle-scanout-dmabuf", on_scanout_dmabuf, l,
        "signal::handle-update-dmabuf", on_update_dmabuf, l,
        NULL);
    g_object_connect(l->map_skel,
        "signal::handle-scanout-map", on_scanout_map, l,
        "signal::handle-update-map", on_update_map, l,
        NULL);
    return g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(l->skel),
                                            l->conn, LISTENER_PATH, error) &&
           g_dbus_interface_skeleton_export(
               G_DBUS_INTERFACE_SKELETON(l->map_skel), l->conn, LISTENER_PATH,
               error);
}

static void on_connection(GObject *source, GAsyncResult *res, gpointer data)
{
    QsListener *l = data;
    g_autoptr(GError) error = NULL;

    (void)source;
    l->conn = g_dbus_connection_new_finish(res, &error);
    if (!l->conn) {
        if (!is_retired(l)) {
            post_event(l, QS_LISTENER_FAILED, error->message);
        }
        return;
    }
    g_dbus_connection_set_exit_on_close(l->conn, FALSE);
    g_signal_connect(l->conn, "closed", G_CALLBACK(on_closed), l);
    l->filter_id = g_dbus_connection_add_filter(
        l->conn, on_filter, g_atomic_rc_box_acquire(l->arrivals),
        release_arrivals);
    if (!export(l, &error)) {
        post_event(l, QS_LISTENER_FAILED, error->message);
        return;
    }
    g_dbus_connection_start_message_processing(l->conn);
    post_event(l, QS_LISTENER_READY, NULL);
}

static gpointer listener_thread(gpointer data)
{
    QsListener *l = data;
    g_autoptr(GSocketConnection) stream = NULL;

    g_main_context_push_thread_default(l->ctx);
    stream = g_socket_connection_factory_create_connection(l->socket);
    g_dbus_connection_new(G_IO_STREAM(stream), NULL,
                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                          G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                          NULL, NULL, on_connection, l);
    while (!is_retired(l)) {
        g_main_context_iteration(l->ctx, TRUE);
    }
    if (l->skel) {
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(l->skel));
        g_dbus_interface_skeleton_unexport(
            G_DBUS_INTERFACE_SKELETON(l->map_skel));
    }
    if (l->conn) {
        g_signal_handlers_disconnect_by_data(l->conn, l);
        if (l->filter_id) {
            g_dbus_connection_remove_filter(l->conn, l->filter_id);
        }
        /* Synchronously: an asynchronous close completes on l->ctx, which
         * nobody runs once this thread ends, and its pending completion
         * would keep the context (an eventfd) and the connection (its read
         * buffer) alive for good, one of each per replaced listener. The
         * socket is shut down already, so this does not wait on qemu. */
        g_dbus_connection_close_sync(l->conn, NULL, NULL);
    }
    /* Whatever GDBus queued to us and never ran is freed here. */
    while (g_main_context_iteration(l->ctx, FALSE)) {
    }
    g_clear_object(&l->skel);
    g_clear_object(&l->map_skel);
    g_clear_object(&l->conn);
    unmap(l);
    g_main_context_pop_thread_default(l->ctx);
    g_atomic_int_set(&l->finished, 1);
    return NULL;
}

QsListener *qs_listener_start(QsConsoleSink *sink, uint64_t id, int fd,
                              GMainContext *main_ctx, GSource *wake,
                              QsListenerEventFunc func, gpointer user_data,
                              GError **error)
{
    g_autofree char *name = NULL;
    QsListener *l;
    GSocket *socket = g_socket_new_from_fd(fd, error);

    if (!socket) {
        close(fd);
        return NULL;
    }
    l = g_new0(QsListener, 1);
    l->id = id;
    l->sink = sink;
    l->main_ctx = g_main_context_ref(main_ctx);
    l->func = func;
    l->user_data = user_data;
    l->socket = socket;
    l->arrivals = g_atomic_rc_box_new0(Arrivals);
    l->arrivals->wake = wake ? g_source_ref(wake) : NULL;
    l->ctx = g_main_context_new();
    name = g_strdup_printf("qs-listener-%" G_GUINT64_FORMAT, id);
    l->thread = g_thread_new(name, listener_thread, l);
    return l;
}

uint64_t qs_listener_get_id(QsListener *l)
{
    return l->id;
}

uint64_t qs_listener_get_progress(QsListener *l)
{
    return g_atomic_pointer_get(&l->progress);
}

void qs_listener_get_backlog(QsListener *l, uint64_t *queued, uint64_t *unread)
{
    int n = 0;

    *queued = g_atomic_pointer_get(&l->arrivals->queued_bytes);
    if (ioctl(g_socket_get_fd(l->socket), FIONREAD, &n) < 0) {
        n = 0;
    }
    *unread = (uint64_t)MAX(n, 0);
}

gboolean qs_listener_arm_wake(QsListener *l)
{
    uint64_t queued, unread;

    g_atomic_int_set(&l->arrivals->armed, 1);
    qs_listener_get_backlog(l, &queued, &unread);
    if (queued || unread) {
        g_atomic_int_set(&l->arrivals->armed, 0);
        return FALSE;
    }
    return TRUE;
}

void qs_listener_disarm_wake(QsListener *l)
{
    g_atomic_int_set(&l->arrivals->armed, 0);
}

void qs_listener_trim(QsListener *l)
{
    g_mutex_lock(&l->sink->lock);
    if (l->map.base && !l->map.trimmed) {
        /* A shared mapping: the pages stay qemu's, with their contents. */
        madvise(l->map.base, l->map.base_len, MADV_DONTNEED);
        l->map.trimmed = TRUE;
    }
    g_mutex_unlock(&l->sink->lock);
}

void qs_listener_get_stats(QsListener *l, QsListenerStats *stats)
{
    stats->scanouts = g_atomic_pointer_get(&l->scanouts);
    stats->updates = g_atomic_pointer_get(&l->updates);
    stats->scanout_maps = g_atomic_pointer_get(&l->scanout_maps);
    stats->update_maps = g_atomic_pointer_get(&l->update_maps);
    stats->dropped = g_atomic_pointer_get(&l->dropped);
    stats->early = g_atomic_pointer_get(&l->early);
}

void qs_listener_retire(QsListener *l)
{
    /* No sink lock here: a thread stuck while holding it must not stall the
     * main loop. Handlers test `retired` with the lock held, so once this is
     * set and a successor exists this listener writes nothing more. */
    g_atomic_int_set(&l->retired, 1);
    /* Works even while GDBus's reader or our thread is stuck: qemu sees the
     * hang-up at once and frees what it queued for us. */
    g_socket_shutdown(l->socket, TRUE, TRUE, NULL);
    g_main_context_wakeup(l->ctx);
}

gboolean qs_listener_finished(QsListener *l)
{
    return g_atomic_int_get(&l->finished) != 0;
}

void qs_listener_free(QsListener *l)
{
    if (!l) {
        return;
    }
    g_thread_join(l->thread);
    g_object_unref(l->socket);
    g_main_context_unref(l->ctx);
    g_main_context_unref(l->main_ctx);
    release_arrivals(l->arrivals);
    g_free(l);
}

#ifdef QS_TEST_CONTROLS
static gboolean stall(gpointer data)
{
    g_usleep(GPOINTER_TO_UINT(data) * G_USEC_PER_SEC);
    return G_SOURCE_REMOVE;
}

void qs_listener_stall(QsListener *l, unsigned seconds)
{
    /* Not g_main_context_invoke: that may run it right here. */
    g_autoptr(GSource) source = g_idle_source_new();

    g_source_set_callback(source, stall,
                          GUINT_TO_POINTER(MIN(seconds, MAX_STALL_S)), NULL);
    g_source_attach(source, l->ctx);
}
#endif
