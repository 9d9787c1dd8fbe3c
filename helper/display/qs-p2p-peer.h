/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A peer-to-peer D-Bus connection to qemu, served by a thread of its own: the audio listeners' transport. */
#pragma once

#include <gio/gio.h>

/*
 * qemu connects to a listener we register (Audio.RegisterOutListener, ...)
 * through one end of a socket pair we pass it, then blocks its main loop on
 * the D-Bus handshake and on calls to our objects (AudioInListener.Read is
 * synchronous). So the other end is served by a thread with its own main
 * context, never waiting for ours: the objects are exported there, before
 * the first message is read, and what they receive crosses to the main
 * context by whatever means their owner chooses.
 */
typedef struct QsP2pPeer QsP2pPeer;

typedef struct {
    /* Peer thread: the connection is up; export the objects on it. FALSE
     * with `error` set gives up (reported through `closed`). */
    gboolean (*export)(GDBusConnection *conn, gpointer data, GError **error);
    /* Peer thread, when the peer is freed: unexport, drop references. */
    void (*unexport)(gpointer data);
    /* Peer thread: the connection closed or could not be made. Not called
     * once the peer is being freed. */
    void (*closed)(const char *why, gpointer data);
} QsP2pPeerFuncs;

/* Makes the socket pair and starts the thread on our end; `*qemu_fd` gets
 * the other end (CLOEXEC, the caller's to pass to qemu and close). */
QsP2pPeer *qs_p2p_peer_new(const char *thread_name, const QsP2pPeerFuncs *funcs,
                           gpointer data, int *qemu_fd, GError **error);
/* Main context: qemu's answer to the registration: `error` NULL when it
 * took the listener, else why not, with `remote` naming qemu's D-Bus error
 * if it sent one. Not called once the registration's cancellable is
 * cancelled. */
typedef void (*QsP2pRegisteredFunc)(const GError *error, const char *remote,
                                    gpointer data);

/* qs_p2p_peer_new, then `method(h)` of qemu's `path`/`iface` (at `dest`,
 * NULL on a p2p connection) with the other end, asynchronously: how qemu
 * is given a listener (Audio.RegisterOutListener, RegisterInListener). */
QsP2pPeer *qs_p2p_peer_register(GDBusConnection *conn, const char *dest,
                                const char *path, const char *iface,
                                const char *method, const char *thread_name,
                                const QsP2pPeerFuncs *funcs, gpointer data,
                                GCancellable *cancellable,
                                QsP2pRegisteredFunc registered, GError **error);
/* Any thread: the peer is being freed (handlers should do nothing more). */
gboolean qs_p2p_peer_is_retired(QsP2pPeer *peer);
/* Main context: hangs up (qemu forgets the listener), joins the thread. */
void qs_p2p_peer_free(QsP2pPeer *peer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsP2pPeer, qs_p2p_peer_free)
