/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What both audio listeners share: registration with qemu, the peer thread, the calls both take, the event queue to the main context. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

/*
 * qemu takes an audio listener (Audio.RegisterOutListener or
 * RegisterInListener) and connects to it over a socket pair served by a
 * thread of its own (QsP2pPeer). Both listeners take Init, Fini,
 * SetEnabled and SetVolume with the same arguments; each direction adds
 * one call of its own (Write, Read). What qemu says reaches the main
 * context as events, in order, through one queue under one lock; the lock
 * is the direction's too, for whatever else its peer thread shares with the
 * main context (the voices and what bounds them).
 *
 * The listener is available once its object is exported (qemu may call it
 * before its reply to the registration arrives) unless qemu refused it,
 * and no longer once the connection closes.
 */

/* Voices followed at once; qemu has one per audiodev in practice. */
#define QS_AUDIO_MAX_VOICES 8
#define QS_AUDIO_MAX_CHANNELS 8

/* qemu's Init arguments, validated (qs_audio_format_check). */
typedef struct {
    uint8_t bits;               /* 8, 16 or 32 */
    gboolean is_signed;
    gboolean is_float;          /* only with 32 bits */
    gboolean be;                /* big-endian samples */
    uint32_t freq;              /* frames per second */
    uint8_t nchannels;          /* 1..QS_AUDIO_MAX_CHANNELS, interleaved */
    uint32_t bytes_per_frame;   /* bits / 8 * nchannels */
    uint32_t bytes_per_second;  /* freq * bytes_per_frame */
} QsAudioFormat;

/* Is this a format qemu can mean, and one we can bound? Peer input. */
gboolean qs_audio_format_check(const QsAudioFormat *format, GError **error);

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
    /* Peer thread: qemu's calls both listeners take, in qemu's order; each
     * call is answered once its function returns. Init's format is valid
     * (qs_audio_format_check; an invalid one is one log line). */
    void (*init)(uint64_t id, const QsAudioFormat *format, gpointer data);
    void (*fini)(uint64_t id, gpointer data);
    void (*enabled)(uint64_t id, gboolean enabled, gpointer data);
    /* volume: n values 0..255, one per channel (n may be 0). */
    void (*volume)(uint64_t id, gboolean mute, const uint8_t *volume, gsize n,
                   gpointer data);
    /* Peer thread: the handler of the direction's own call on our object
     * (AudioOutListener.Write, AudioInListener.Read), given `data`. */
    GCallback call;
    /* Main context: a direction's event, in qemu's order, while available
     * and the direction's owner has set its `funcs` (given back here). */
    void (*deliver)(const QsAudioEvent *e, gconstpointer funcs, gpointer user_data);
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
 * asynchronously, once; a failure is one log line. TRUE when qemu's answer
 * is still to come: the available func then runs once it is in, with FALSE
 * too if qemu refused. */
gboolean qs_audio_listener_start(QsAudioListener *l);
/* Main context: qemu's connection is hung up and the peer thread joined;
 * no handler runs after it. */
void qs_audio_listener_retire(QsAudioListener *l);
/* Retires it, then frees what is still queued. */
void qs_audio_listener_free(QsAudioListener *l);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAudioListener, qs_audio_listener_free)

/* Main context: registered (TRUE), or refused / connection lost. */
typedef void (*QsAudioAvailableFunc)(gboolean available, gpointer user_data);
/* The owner's functions (a direction's own table, NULL: none), handed to
 * `deliver`, and which of them tells availability. */
void qs_audio_listener_set_funcs(QsAudioListener *l, gconstpointer funcs,
                                 QsAudioAvailableFunc available, gpointer user_data);
gboolean qs_audio_listener_is_available(QsAudioListener *l);

void qs_audio_listener_lock(QsAudioListener *l);
void qs_audio_listener_unlock(QsAudioListener *l);
/* With the lock held: the queue, for a direction that bounds it. */
GQueue *qs_audio_listener_queue_locked(QsAudioListener *l);
/* Peer thread -> main context, in order; takes `e`. */
void qs_audio_listener_post_locked(QsAudioListener *l, QsAudioEvent *e);
void qs_audio_listener_post(QsAudioListener *l, QsAudioEvent *e);
