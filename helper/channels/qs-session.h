/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsSession: one client's channels under one session id, the state they share, and the channel types (channels-internal). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-channel-context.h"
#include "channels/qs-channel.h"
#include "net/qs-conn.h"

struct QsSession {
    const QsChannelContext *ctx;    /* its owner's; outlives the session */
    uint32_t id;
    QsChannel *main;            /* the channels are owned by their connections */
    QsChannel *displays[QS_CHANNELS_MAX_HEADS];     /* by channel id = head */
    QsChannel *inputs;
    QsChannel *cursors[QS_CHANNELS_MAX_HEADS];
    QsChannel *playback;        /* only while qemu offers audio */
    QsChannel *record;          /* only while qemu takes recorded sound */
    QsChannel *vmcs[QS_CHANNELS_MAX_BRIDGES];   /* by the context's bridge index */
    uint16_t mouse_mode;        /* SPICE_MOUSE_MODE_SERVER or _CLIENT */
    gint64 since_us;            /* wall clock when its main channel linked */
    /* Its client showed the view-only ticket: it sees and hears the guest;
     * its input, clipboard, resize and microphone do not reach it. */
    gboolean view_only;
    gboolean input_dropped_said;
};

QsSession *qs_session_new(const QsChannelContext *ctx, uint32_t id);
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

/* Channel types (qs-*-channel.c). */
QsChannel *qs_main_channel_new(QsSession *session, QsConn *conn);
void qs_main_channel_send_mouse_mode(QsChannel *ch);
/* Sends the channel list if it is held for qemu's audio answers. */
void qs_main_channel_release_list(QsChannel *ch);
QsChannel *qs_display_channel_new(QsSession *session, QsConn *conn);
/* The display plan's link estimate: bytes a second and smoothed RTT (0
 * when not measured yet). */
void qs_display_channel_link_estimate(QsChannel *ch, uint64_t *bytes_per_sec,
                                      uint32_t *srtt_us);
void qs_display_channel_pump(QsChannel *ch);
QsChannel *qs_inputs_channel_new(QsSession *session, QsConn *conn);
void qs_inputs_channel_modifiers_changed(QsChannel *ch);
QsChannel *qs_cursor_channel_new(QsSession *session, QsConn *conn);
void qs_cursor_channel_changed(QsChannel *ch);
QsChannel *qs_playback_channel_new(QsSession *session, QsConn *conn);
/* qemu's sound, from the context's owner: START at `freq` (a running
 * stream restarts), S16 stereo (START first at `freq` if stopped), STOP. */
void qs_playback_channel_start(QsChannel *ch, uint32_t freq);
void qs_playback_channel_data(QsChannel *ch, uint32_t freq, GBytes *s16_stereo);
void qs_playback_channel_stop(QsChannel *ch);
void qs_playback_channel_volume(QsChannel *ch, const QsAudioVolume *volume);
QsChannel *qs_record_channel_new(QsSession *session, QsConn *conn);
/* The guest records with `state`'s format / stopped recording. */
void qs_record_channel_start(QsChannel *ch, const QsRecordState *state);
void qs_record_channel_stop(QsChannel *ch);
void qs_record_channel_volume(QsChannel *ch, const QsAudioVolume *volume);
/* A spicevmc channel (port, webdav) carrying `bridge`'s chardev. */
QsChannel *qs_vmc_channel_new(QsSession *session, QsConn *conn, QsVmcBridge *bridge);
/* From the bridge: qemu's end of the chardev connected or closed. */
void qs_vmc_channel_qemu_state(QsChannel *ch, gboolean open);
