/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsListener: a console's Listener on its p2p thread, qemu's frames into the screen. */

#include "display/qs-listener.h"

#include <gio/gio.h>
#include <gio/gunixfdlist.h>
#include <unistd.h>

#include "display/qs-listener-arrivals.h"
#include "display/qs-listener-calls.h"
#include "display/qs-p2p-peer.h"
#include "qs-dbus-display1.h"

#define MAX_STALL_S 60

struct QsListener {
    uint64_t id;
    QsConsoleSink *sink;
    GMainContext *main_ctx;
    QsListenerEventFunc func;
    gpointer user_data;
    QsP2pPeer *peer;            /* the connection and its thread */
    gint retired;               /* atomic; set before the peer's */

    QsListenerArrivals *arrivals;
    QsListenerCalls calls;

    /* listener thread only */
    GDBusConnection *conn;
    gboolean exported;
    guint filter_id;
    QemuDBusDisplay1Listener *skel;
    QemuDBusDisplay1ListenerUnixMap *map_skel;
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

/* ---- thread -------------------------------------------------------------- */

/* Before the handshake, or before our objects were exported, a closed
 * connection is a failed handshake; after, qemu closed the listener. */
static void on_peer_closed(const char *why, gpointer data)
{
    QsListener *l = data;

    post_event(l, l->exported ? QS_LISTENER_CLOSED : QS_LISTENER_FAILED, why);
}

static gboolean on_peer_export(GDBusConnection *conn, gpointer data, GError **error)
{
    static const char *const ifaces[] = { QS_IFACE_LISTENER_MAP, NULL };
    QsListener *l = data;

    l->conn = g_object_ref(conn);
    l->filter_id = qs_listener_arrivals_watch(l->arrivals, conn);
    l->skel = qemu_dbus_display1_listener_skeleton_new();
    l->map_skel = qemu_dbus_display1_listener_unix_map_skeleton_new();
    /* qemu 8.1+ reads it with GetAll right after the handshake; 9.2+ shares
     * its surface through Unix.Map when listed. Older qemu ignores both. */
    qemu_dbus_display1_listener_set_interfaces(l->skel, ifaces);
    qs_listener_calls_connect(&l->calls, l->skel, l->map_skel);
    if (!g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(l->skel),
                                          conn, QS_LISTENER_PATH, error) ||
        !g_dbus_interface_skeleton_export(G_DBUS_INTERFACE_SKELETON(l->map_skel),
                                          conn, QS_LISTENER_PATH, error)) {
        return FALSE;
    }
    l->exported = TRUE;
    post_event(l, QS_LISTENER_READY, NULL);
    return TRUE;
}

/* The thread ends: the listener is retired, so no handler that runs while
 * GDBus's leftovers are freed touches the sink or the map. */
static void on_peer_unexport(gpointer data)
{
    QsListener *l = data;

    if (l->skel) {
        g_dbus_interface_skeleton_unexport(G_DBUS_INTERFACE_SKELETON(l->skel));
        g_dbus_interface_skeleton_unexport(
            G_DBUS_INTERFACE_SKELETON(l->map_skel));
    }
    if (l->filter_id) {
        g_dbus_connection_remove_filter(l->conn, l->filter_id);
    }
    g_clear_object(&l->conn);
    qs_surface_map_close(&l->calls.map);
}

static const QsP2pPeerFuncs peer_funcs = {
    .export = on_peer_export,
    .unexport = on_peer_unexport,
    .closed = on_peer_closed,
};

QsListener *qs_listener_start(QsConsoleSink *sink, uint64_t id, int fd,
                              GMainContext *main_ctx, GSource *wake,
                              QsListenerEventFunc func, gpointer user_data,
                              GError **error)
{
    g_autofree char *name = g_strdup_printf("qs-listener-%" G_GUINT64_FORMAT, id);
    QsListener *l = g_new0(QsListener, 1);

    l->id = id;
    l->sink = sink;
    l->main_ctx = g_main_context_ref(main_ctx);
    l->func = func;
    l->user_data = user_data;
    l->arrivals = qs_listener_arrivals_new(wake);
    l->calls.sink = sink;
    l->calls.arrivals = l->arrivals;
    l->calls.retired = &l->retired;
    l->peer = qs_p2p_peer_new_from_fd(fd, name, &peer_funcs, l, error);
    if (!l->peer) {
        qs_listener_arrivals_unref(l->arrivals);
        g_main_context_unref(l->main_ctx);
        g_free(l);
        return NULL;
    }
    return l;
}

uint64_t qs_listener_get_id(QsListener *l)
{
    return l->id;
}

uint64_t qs_listener_get_progress(QsListener *l)
{
    return g_atomic_pointer_get(&l->calls.progress);
}

void qs_listener_get_backlog(QsListener *l, uint64_t *queued, uint64_t *unread)
{
    *queued = qs_listener_arrivals_get_queued(l->arrivals);
    *unread = qs_p2p_peer_get_unread(l->peer);
}

void qs_listener_probe_emptying(QsListener *l)
{
    qs_listener_arrivals_probe_emptying(l->arrivals);
}

gboolean qs_listener_take_emptied(QsListener *l)
{
    return qs_listener_arrivals_take_emptied(l->arrivals);
}

gboolean qs_listener_arm_wake(QsListener *l)
{
    uint64_t queued, unread;

    qs_listener_arrivals_arm(l->arrivals);
    qs_listener_get_backlog(l, &queued, &unread);
    if (queued || unread) {
        qs_listener_arrivals_disarm(l->arrivals);
        return FALSE;
    }
    return TRUE;
}

void qs_listener_disarm_wake(QsListener *l)
{
    qs_listener_arrivals_disarm(l->arrivals);
}

void qs_listener_trim(QsListener *l)
{
    g_mutex_lock(&l->sink->lock);
    qs_surface_map_trim(&l->calls.map);
    g_mutex_unlock(&l->sink->lock);
}

void qs_listener_get_stats(QsListener *l, QsListenerStats *stats)
{
    stats->scanouts = g_atomic_pointer_get(&l->calls.scanouts);
    stats->updates = g_atomic_pointer_get(&l->calls.updates);
    stats->scanout_maps = g_atomic_pointer_get(&l->calls.scanout_maps);
    stats->update_maps = g_atomic_pointer_get(&l->calls.update_maps);
    stats->dropped = g_atomic_pointer_get(&l->calls.dropped);
    stats->early = g_atomic_pointer_get(&l->calls.early);
}

void qs_listener_retire(QsListener *l)
{
    /* No sink lock here: a thread stuck while holding it must not stall the
     * main loop. Handlers test `retired` with the lock held, so once this is
     * set and a successor exists this listener writes nothing more. */
    g_atomic_int_set(&l->retired, 1);
    qs_p2p_peer_retire(l->peer);
}

gboolean qs_listener_finished(QsListener *l)
{
    return qs_p2p_peer_finished(l->peer);
}

void qs_listener_free(QsListener *l)
{
    if (!l) {
        return;
    }
    qs_p2p_peer_free(l->peer);
    g_clear_object(&l->skel);
    g_clear_object(&l->map_skel);
    g_main_context_unref(l->main_ctx);
    qs_listener_arrivals_unref(l->arrivals);
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
    g_source_attach(source, qs_p2p_peer_get_context(l->peer));
}

void qs_listener_slow_reader(QsListener *l, unsigned ms, unsigned seconds)
{
    qs_listener_arrivals_slow_reader(l->arrivals, ms, seconds);
}
#endif
