/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsP2pPeer: a socket pair, a thread with its own main context, and the D-Bus connection it serves. */
#include "display/qs-p2p-peer.h"

#include <errno.h>
#include <gio/gunixfdlist.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

/* qemu answers at once; this only bounds a qemu that hangs. */
#define REGISTER_TIMEOUT_MS 5000

struct QsP2pPeer {
    const QsP2pPeerFuncs *funcs;
    gpointer data;
    GThread *thread;
    GMainContext *ctx;
    GSocket *socket;
    gint retired;                   /* atomic */
    gint finished;                  /* atomic: the thread touches nothing now */
    GDBusConnection *conn;          /* peer thread */
};

gboolean qs_p2p_peer_is_retired(QsP2pPeer *peer)
{
    return g_atomic_int_get(&peer->retired) != 0;
}

static void on_closed(GDBusConnection *conn, gboolean remote, GError *error,
                      gpointer data)
{
    QsP2pPeer *peer = data;

    (void)conn, (void)remote;
    if (!qs_p2p_peer_is_retired(peer)) {
        peer->funcs->closed(error ? error->message : NULL, peer->data);
    }
}

static void on_connection(GObject *source, GAsyncResult *res, gpointer data)
{
    QsP2pPeer *peer = data;
    g_autoptr(GError) error = NULL;

    (void)source;
    peer->conn = g_dbus_connection_new_finish(res, &error);
    if (peer->conn) {
        g_dbus_connection_set_exit_on_close(peer->conn, FALSE);
        g_signal_connect(peer->conn, "closed", G_CALLBACK(on_closed), peer);
        if (peer->funcs->export(peer->conn, peer->data, &error)) {
            g_dbus_connection_start_message_processing(peer->conn);
            return;
        }
    }
    if (!qs_p2p_peer_is_retired(peer)) {
        peer->funcs->closed(error->message, peer->data);
    }
}

static gpointer peer_thread(gpointer data)
{
    QsP2pPeer *peer = data;
    g_autoptr(GSocketConnection) stream = NULL;

    g_main_context_push_thread_default(peer->ctx);
    stream = g_socket_connection_factory_create_connection(peer->socket);
    /* qemu is the authentication server; delayed processing lets the
     * objects be exported before qemu's first call is read. */
    g_dbus_connection_new(G_IO_STREAM(stream), NULL,
                          G_DBUS_CONNECTION_FLAGS_AUTHENTICATION_CLIENT |
                          G_DBUS_CONNECTION_FLAGS_DELAY_MESSAGE_PROCESSING,
                          NULL, NULL, on_connection, peer);
    while (!qs_p2p_peer_is_retired(peer)) {
        g_main_context_iteration(peer->ctx, TRUE);
    }
    peer->funcs->unexport(peer->data);
    if (peer->conn) {
        g_signal_handlers_disconnect_by_data(peer->conn, peer);
        /* Synchronously: an asynchronous close completes on peer->ctx,
         * which nobody runs once this thread ends, and its pending
         * completion would keep the context (an eventfd) and the connection
         * (its read buffer) alive for good, one of each per peer. The
         * socket is shut down already, so this does not wait on qemu. */
        g_dbus_connection_close_sync(peer->conn, NULL, NULL);
    }
    /* Whatever GDBus queued to us and never ran is freed here. */
    while (g_main_context_iteration(peer->ctx, FALSE)) {
    }
    g_clear_object(&peer->conn);
    g_main_context_pop_thread_default(peer->ctx);
    g_atomic_int_set(&peer->finished, 1);
    return NULL;
}

QsP2pPeer *qs_p2p_peer_new_from_fd(int fd, const char *thread_name,
                                   const QsP2pPeerFuncs *funcs, gpointer data,
                                   GError **error)
{
    QsP2pPeer *peer;
    GSocket *socket = g_socket_new_from_fd(fd, error);

    if (!socket) {
        close(fd);
        return NULL;
    }
    peer = g_new0(QsP2pPeer, 1);
    peer->funcs = funcs;
    peer->data = data;
    peer->socket = socket;
    peer->ctx = g_main_context_new();
    peer->thread = g_thread_new(thread_name, peer_thread, peer);
    return peer;
}

QsP2pPeer *qs_p2p_peer_new(const char *thread_name, const QsP2pPeerFuncs *funcs,
                           gpointer data, int *qemu_fd, GError **error)
{
    QsP2pPeer *peer;
    int pair[2];

    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        int e = errno;

        g_set_error(error, G_IO_ERROR, g_io_error_from_errno(e),
                    "socketpair failed: %s", g_strerror(e));
        return NULL;
    }
    peer = qs_p2p_peer_new_from_fd(pair[0], thread_name, funcs, data, error);
    if (!peer) {
        close(pair[1]);
        return NULL;
    }
    *qemu_fd = pair[1];
    return peer;
}

void qs_p2p_peer_retire(QsP2pPeer *peer)
{
    g_atomic_int_set(&peer->retired, 1);
    /* Works even while GDBus's reader or the peer thread is stuck: qemu
     * sees the hang-up at once, frees what it queued for us and forgets
     * the listener. */
    g_socket_shutdown(peer->socket, TRUE, TRUE, NULL);
    g_main_context_wakeup(peer->ctx);
}

gboolean qs_p2p_peer_finished(QsP2pPeer *peer)
{
    return g_atomic_int_get(&peer->finished) != 0;
}

uint64_t qs_p2p_peer_get_unread(QsP2pPeer *peer)
{
    int n = 0;

    if (ioctl(g_socket_get_fd(peer->socket), FIONREAD, &n) < 0) {
        n = 0;
    }
    return (uint64_t)MAX(n, 0);
}

GMainContext *qs_p2p_peer_get_context(QsP2pPeer *peer)
{
    return peer->ctx;
}

void qs_p2p_peer_free(QsP2pPeer *peer)
{
    if (!peer) {
        return;
    }
    qs_p2p_peer_retire(peer);
    g_thread_join(peer->thread);
    g_main_context_unref(peer->ctx);
    g_object_unref(peer->socket);
    g_free(peer);
}

typedef struct {
    QsP2pRegisteredFunc registered;
    gpointer data;
} Registration;

static void on_registered(GObject *source, GAsyncResult *res, gpointer user_data)
{
    g_autofree Registration *reg = user_data;
    g_autoptr(GError) error = NULL;
    g_autoptr(GVariant) ret = NULL;
    g_autofree char *remote = NULL;

    ret = g_dbus_connection_call_with_unix_fd_list_finish(
        G_DBUS_CONNECTION(source), NULL, res, &error);
    if (!ret && g_error_matches(error, G_IO_ERROR, G_IO_ERROR_CANCELLED)) {
        return;         /* its owner may be gone */
    }
    if (!ret) {
        remote = g_dbus_error_get_remote_error(error);
        g_dbus_error_strip_remote_error(error);
    }
    reg->registered(ret ? NULL : error, remote, reg->data);
}

QsP2pPeer *qs_p2p_peer_register(GDBusConnection *conn, const char *dest,
                                const char *path, const char *iface,
                                const char *method, const char *thread_name,
                                const QsP2pPeerFuncs *funcs, gpointer data,
                                GCancellable *cancellable,
                                QsP2pRegisteredFunc registered, GError **error)
{
    g_autoptr(GUnixFDList) fds = NULL;
    Registration *reg;
    QsP2pPeer *peer;
    int qemu_fd = -1;

    peer = qs_p2p_peer_new(thread_name, funcs, data, &qemu_fd, error);
    if (!peer) {
        return NULL;
    }
    /* The list owns the descriptor from here. */
    fds = g_unix_fd_list_new_from_array(&qemu_fd, 1);
    reg = g_new0(Registration, 1);
    reg->registered = registered;
    reg->data = data;
    g_dbus_connection_call_with_unix_fd_list(
        conn, dest, path, iface, method, g_variant_new("(h)", 0), NULL,
        G_DBUS_CALL_FLAGS_NO_AUTO_START, REGISTER_TIMEOUT_MS, fds, cancellable,
        on_registered, reg);
    return peer;
}
