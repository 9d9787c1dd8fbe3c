/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The door to qemu's sound input (org.qemu.Display1.Audio, -audiodev dbus): our AudioInListener on its own thread. */
#pragma once

#include <gio/gio.h>
#include <stdint.h>

#include "display/qs-audio-out.h"
#include "display/qs-display.h"

/*
 * qemu (audio/dbusaudio.c) calls our AudioInListener for each of its
 * capture voices, named by an id: Init (the PCM format), SetEnabled while
 * the guest records, SetVolume, Fini, and, while a voice is enabled, a
 * synchronous Read on its audio timer: qemu's main loop waits for our
 * reply. So Read is answered on the listener's thread from what the
 * client sent (QsAudioPace: paced by the clock, silence when the client
 * sends nothing), never waiting for the main context.
 *
 * One voice at a time is recorded (SPICE has one record stream): the first
 * enabled one, until it is disabled; other voices get silence.
 */
typedef struct QsAudioIn QsAudioIn;

/* Main context, in qemu's order. */
typedef struct {
    /* Registered with qemu (TRUE), or refused / connection lost (FALSE). */
    void (*available)(gboolean available, gpointer user_data);
    /* The guest records: the client's sound is wanted in `format`. */
    void (*start)(const QsAudioFormat *format, gpointer user_data);
    void (*stop)(gpointer user_data);
    /* The recorded voice's volume: n values 0..255, one per channel. */
    void (*volume)(gboolean mute, const uint8_t *volume, guint n, gpointer user_data);
} QsAudioInFuncs;

/* `dest`: qemu's bus name, NULL on a peer-to-peer connection. */
QsAudioIn *qs_audio_in_new(GDBusConnection *conn, const char *dest);
void qs_audio_in_free(QsAudioIn *in);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAudioIn, qs_audio_in_free)

void qs_audio_in_set_funcs(QsAudioIn *in, const QsAudioInFuncs *funcs,
                           gpointer user_data);
/* Registers with qemu, asynchronously, when `audio` says qemu can take it;
 * otherwise nothing (qs_audio_out_start says why in its one line). TRUE
 * when qemu's answer is still to come, as qs_audio_out_start. */
gboolean qs_audio_in_start(QsAudioIn *in, QsDisplayAudio audio);
gboolean qs_audio_in_is_available(QsAudioIn *in);
/* Main context: the client's sound, in the format `start` named. Ignored
 * when no voice records. */
void qs_audio_in_push(QsAudioIn *in, const uint8_t *pcm, gsize size);
/* Bytes of sound: the client's handed to qemu, silence handed to qemu, and
 * the client's dropped because qemu took it more slowly than it came. */
typedef struct {
    uint64_t client, silence, dropped;
} QsAudioInCounts;
void qs_audio_in_get_counts(QsAudioIn *in, QsAudioInCounts *counts);
