/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A peer-to-peer D-Bus connection to qemu, served by a thread of its own: the listeners' transport. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

/*
 * qemu connects to a listener we register (Audio.RegisterOutListener, ...)
 * through one end of a socket pair we pass it, then blocks its main loop on
 * the D-Bus handshake and on calls to our objects (AudioInListener.Read is
 * synchronous). So the other end is served by a thread with its own main
 * context, never waiting for ours: the objects are exported there, before
 * the first message is read, and what they receive crosses to the main
 * context by whatever means their owner chooses.
 *
 * The display listener is given its end by its console (qemu's
 * RegisterListener); the audio listeners make the pair and register here.
 */
typedef struct QsP2pPeer QsP2pPeer;

typedef struct {
    /* Peer thread: the connection is up; export the objects on it. FALSE
     * with `error` set gives up (reported through `closed`). */
    gboolean (*export)(GDBusConnection *conn, gpointer data, GError **error);
    /* Peer thread, when the peer is freed: unexport, drop references. */
    void (*unexport)(gpointer data);
    /* Peer thread: the connection closed or could not be made (or
     * `export` failed); `why` is NULL when GDBus gave no reason. Not
     * called once the peer is retired. */
    void (*closed)(const char *why, gpointer data);
} QsP2pPeerFuncs;

/* Starts the thread, which begins the D-Bus handshake (as the
 * authentication client) on `fd` at once; takes `fd` in all cases. */
QsP2pPeer *qs_p2p_peer_new_from_fd(int fd, const char *thread_name,
                                   const QsP2pPeerFuncs *funcs, gpointer data,
                                   GError **error);
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
/* Main context: hangs up now (qemu forgets the listener and frees its
 * queue) and tells the thread to finish, without waiting for it: the
 * thread may be stuck. `unexport` runs on the thread as it ends. */
void qs_p2p_peer_retire(QsP2pPeer *peer);
/* Any thread: retired (handlers should do nothing more). */
gboolean qs_p2p_peer_is_retired(QsP2pPeer *peer);
/* Any thread: the thread has ended; qs_p2p_peer_free will not wait. */
gboolean qs_p2p_peer_finished(QsP2pPeer *peer);
/* Bytes qemu sent that nobody has read from our end yet. */
uint64_t qs_p2p_peer_get_unread(QsP2pPeer *peer);
/* The peer thread's main context (for test controls that block it). */
GMainContext *qs_p2p_peer_get_context(QsP2pPeer *peer);
/* Main context: retires it if need be, waits for the thread, frees. */
void qs_p2p_peer_free(QsP2pPeer *peer);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsP2pPeer, qs_p2p_peer_free)
