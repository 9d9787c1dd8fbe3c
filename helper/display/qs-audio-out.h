/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The door to qemu's sound output (org.qemu.Display1.Audio, -audiodev dbus): our AudioOutListener on its own thread. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

#include "display/qs-audio-listener.h"
#include "display/qs-display.h"

/*
 * qemu (audio/dbusaudio.c) calls our AudioOutListener for each of its
 * output voices, named by an id: Init (the PCM format), SetEnabled, then
 * Write every few milliseconds, SetVolume, Fini. The listener's p2p
 * connection is served by a thread of its own (qemu answers our
 * registration and then blocks on the handshake and a GetAll of our
 * object); what qemu says reaches the main context in order, through a
 * queue that holds at most QS_AUDIO_MAX_QUEUE_MS of sound per voice: older
 * PCM is dropped rather than the queue grown.
 */
#define QS_AUDIO_MAX_QUEUE_MS 200
typedef struct QsAudioOut QsAudioOut;

/* Main context, in qemu's order. */
typedef struct {
    /* Registered with qemu (TRUE), or refused / connection lost (FALSE). */
    void (*available)(gboolean available, gpointer user_data);
    /* A voice's format (only valid ones are passed on). */
    void (*init)(uint64_t id, const QsAudioFormat *format, gpointer user_data);
    void (*fini)(uint64_t id, gpointer user_data);
    void (*enabled)(uint64_t id, gboolean enabled, gpointer user_data);
    /* volume: n values 0..255, one per channel. */
    void (*volume)(uint64_t id, gboolean mute, const uint8_t *volume, guint n,
                   gpointer user_data);
    /* Whole frames of PCM in the voice's format. */
    void (*write)(uint64_t id, GBytes *pcm, gpointer user_data);
} QsAudioOutFuncs;

/* `dest`: qemu's bus name, NULL on a peer-to-peer connection. */
QsAudioOut *qs_audio_out_new(GDBusConnection *conn, const char *dest);
void qs_audio_out_free(QsAudioOut *out);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAudioOut, qs_audio_out_free)

void qs_audio_out_set_funcs(QsAudioOut *out, const QsAudioOutFuncs *funcs,
                            gpointer user_data);
/* Starts the listener thread and registers it with qemu, asynchronously,
 * when `audio` (qs_display_get_audio) says qemu can take it. Otherwise, or
 * when qemu refuses: one log line, and `available` never becomes TRUE.
 * TRUE when qemu's answer is still to come (`available` then runs once it
 * is in, FALSE included). */
gboolean qs_audio_out_start(QsAudioOut *out, QsDisplayAudio audio);
gboolean qs_audio_out_is_available(QsAudioOut *out);
/* PCM dropped because the main context fell behind (tests, stats). */
uint64_t qs_audio_out_get_dropped(QsAudioOut *out);
