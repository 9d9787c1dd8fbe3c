/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsSession: one client's channels under one session id, and the state they share (channels-internal). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-channel.h"
#include "channels/qs-channels.h"
#include "channels/qs-playback.h"

struct QsSession {
    QsChannels *hub;
    uint32_t id;
    QsChannel *main;            /* the channels are owned by their connections */
    QsChannel *displays[QS_CHANNELS_MAX_HEADS];     /* by channel id = head */
    QsChannel *inputs;
    QsChannel *cursors[QS_CHANNELS_MAX_HEADS];
    QsChannel *playback;        /* only while qemu offers audio */
    QsChannel *record;          /* only while qemu takes recorded sound */
    uint16_t mouse_mode;        /* SPICE_MOUSE_MODE_SERVER or _CLIENT */
};

QsSession *qs_session_new(QsChannels *hub, uint32_t id);
/* Detaches and closes every channel, then frees the session. */
void qs_session_free(QsSession *session, const char *reason);
/* A linked connection of this session: creates its channel (replacing a
 * previous one of the same type). */
void qs_session_attach(QsSession *session, QsConn *conn);
/* From the base channel: `ch` is closing. */
void qs_session_channel_closed(QsSession *session, QsChannel *ch);

uint16_t qs_session_supported_mouse_modes(QsSession *session);
/* Re-evaluates the mouse mode (IsAbsolute changed, or the client asked for
 * `requested`, 0 = nothing asked) and tells the client. */
void qs_session_update_mouse_mode(QsSession *session, uint16_t requested);

/* qemu's sound output as the hub knows it (qs-playback-channel.c). */
typedef struct {
    gboolean available;         /* qemu's D-Bus audio registered */
    gboolean playing;           /* a voice is on */
    uint32_t freq;              /* its rate; always S16 stereo */
    QsAudioVolume volume;
} QsPlaybackState;

/* qemu's sound input as the hub knows it (qs-record-channel.c). */
typedef struct {
    gboolean available;         /* qemu's capture listener registered */
    gboolean recording;         /* the guest records */
    uint32_t freq;              /* S16, at this rate */
    uint8_t nchannels;          /* 1 or 2 */
    QsAudioVolume volume;
    QsRecordSink sink;          /* where the client's sound goes */
    gpointer sink_data;
} QsRecordState;

/* What the hub knows of qemu (channels-internal accessors), by head
 * (display/cursor channel id); the keyboard is head 0's input. */
QsScreen *qs_channels_screen(QsChannels *hub, guint head);
QsCursor *qs_channels_cursor(QsChannels *hub, guint head);
QsInput *qs_channels_input(QsChannels *hub, guint head);
gboolean qs_channels_mouse_absolute(QsChannels *hub);
uint16_t qs_channels_modifiers(QsChannels *hub);
const char *qs_channels_vm_name(QsChannels *hub);
const uint8_t *qs_channels_vm_uuid(QsChannels *hub);   /* 16 bytes or NULL */
QsPlaybackState *qs_channels_playback_state(QsChannels *hub);
QsRecordState *qs_channels_record_state(QsChannels *hub);
QsSession *qs_channels_session(QsChannels *hub);       /* the active one, or NULL */
/* The session ended by itself (its main channel went away). */
void qs_channels_session_ended(QsChannels *hub, QsSession *session);

/* Channel types (qs-*-channel.c). */
QsChannel *qs_main_channel_new(QsSession *session, QsConn *conn);
void qs_main_channel_send_mouse_mode(QsChannel *ch);
QsChannel *qs_display_channel_new(QsSession *session, QsConn *conn);
void qs_display_channel_pump(QsChannel *ch);
QsChannel *qs_inputs_channel_new(QsSession *session, QsConn *conn);
void qs_inputs_channel_modifiers_changed(QsChannel *ch);
QsChannel *qs_cursor_channel_new(QsSession *session, QsConn *conn);
void qs_cursor_channel_changed(QsChannel *ch);
QsChannel *qs_playback_channel_new(QsSession *session, QsConn *conn);
QsChannel *qs_record_channel_new(QsSession *session, QsConn *conn);
