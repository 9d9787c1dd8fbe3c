/* SPDX-License-Identifier: GPL-2.0-or-later */
/* QsSession: one client's channels under one session id and the state they share (channels-internal). */
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
/* The bridge the context offers as channel (type, id), or NULL. */
QsVmcBridge *qs_session_bridge(QsSession *session, uint8_t type, uint8_t id);

uint16_t qs_session_supported_mouse_modes(QsSession *session);
/* Re-evaluates the mouse mode (IsAbsolute changed, or the client asked for
 * `requested`, 0 = nothing asked) and tells the client (through the
 * channels' mouse_mode hooks). */
void qs_session_update_mouse_mode(QsSession *session, uint16_t requested);
