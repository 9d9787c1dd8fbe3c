/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What both audio listeners share: registration with qemu, the peer thread, the event queue to the main context. */
#pragma once

#include <gio/gio.h>

/*
 * qemu takes an audio listener (Audio.RegisterOutListener or
 * RegisterInListener) and connects to it over a socket pair served by a
 * thread of its own (QsP2pPeer). What qemu says there reaches the main
 * context as events, in order, through one queue under one lock; the lock
 * is the direction's too, for whatever else its peer thread shares with the
 * main context (the voices and what bounds them).
 *
 * The listener is available once its object is exported (qemu may call it
 * before its reply to the registration arrives) unless qemu refused it,
 * and no longer once the connection closes.
 */
typedef struct QsAudioListener QsAudioListener;

/* The head of every event; a direction's kinds start at
 * QS_AUDIO_EVENT_OWN (those below are the listener's own). */
enum {
    QS_AUDIO_EVENT_READY,
    QS_AUDIO_EVENT_CLOSED,
    QS_AUDIO_EVENT_OWN,
};

typedef struct {
    guint kind;
} QsAudioEvent;

/* The two listeners qemu's Audio takes; each has its registration method,
 * object path, peer thread and log lines. */
typedef enum {
    QS_AUDIO_OUT_LISTENER,      /* the guest's sound, to our clients */
    QS_AUDIO_IN_LISTENER,       /* our clients' sound, to the guest */
} QsAudioDirection;

typedef struct {
    /* Peer thread: our object, its handlers connected to `data`. */
    GDBusInterfaceSkeleton *(*new_skeleton)(gpointer data);
    /* Main context: a direction's event, in qemu's order, while available. */
    void (*deliver)(const QsAudioEvent *e, gpointer data);
    void (*event_free)(QsAudioEvent *e);
    /* Main context, with the lock held: `e` leaves the queue (optional). */
    void (*taken)(const QsAudioEvent *e, gpointer data);
} QsAudioListenerClass;

/* `dest`: qemu's bus name, NULL on a peer-to-peer connection. Call from
 * the main context, whose wake source delivers the events. */
QsAudioListener *qs_audio_listener_new(GDBusConnection *conn, const char *dest,
                                       QsAudioDirection direction,
                                       const QsAudioListenerClass *klass,
                                       gpointer data);
/* Main context: starts the peer thread and registers it with qemu,
 * asynchronously, once; a failure is one log line. */
void qs_audio_listener_start(QsAudioListener *l);
/* Main context: qemu's connection is hung up and the peer thread joined;
 * no handler runs after it. */
void qs_audio_listener_retire(QsAudioListener *l);
/* Retires it, then frees what is still queued. */
void qs_audio_listener_free(QsAudioListener *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAudioListener, qs_audio_listener_free)

/* Main context: registered (TRUE), or refused / connection lost. */
typedef void (*QsAudioAvailableFunc)(gboolean available, gpointer user_data);
/* Whom to tell (NULL: nobody). */
void qs_audio_listener_set_available_func(QsAudioListener *l,
                                          QsAudioAvailableFunc func,
                                          gpointer user_data);
gboolean qs_audio_listener_is_available(QsAudioListener *l);

void qs_audio_listener_lock(QsAudioListener *l);
void qs_audio_listener_unlock(QsAudioListener *l);
/* With the lock held: the queue, for a direction that bounds it. */
GQueue *qs_audio_listener_queue_locked(QsAudioListener *l);
/* Peer thread -> main context, in order; takes `e`. */
void qs_audio_listener_post_locked(QsAudioListener *l, QsAudioEvent *e);
void qs_audio_listener_post(QsAudioListener *l, QsAudioEvent *e);
