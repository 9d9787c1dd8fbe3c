/* SPDX-License-Identifier: GPL-2.0-or-later */
/* One client's session: its channels by type (made from its context's table), its mouse mode, and how it ends. */
#include "channels/qs-session.h"
#include "channels/qs-vmc-bridge.h"

#include <spice/enums.h>

QsSession *qs_session_new(const QsChannelContext *ctx, uint32_t id)
{
    QsSession *session = g_new0(QsSession, 1);

    session->ctx = ctx;
    session->id = id;
    session->since_us = g_get_real_time();
    session->mouse_mode = ctx->mouse_absolute ? SPICE_MOUSE_MODE_CLIENT
                                              : SPICE_MOUSE_MODE_SERVER;
    return session;
}

/* The index of the bridge carried by channel (type, id), or -1. */
static int bridge_index(QsSession *session, uint8_t type, uint8_t id)
{
    for (guint i = 0; i < session->ctx->n_bridges; i++) {
        QsVmcBridge *b = session->ctx->bridges[i];

        if (qs_vmc_bridge_get_channel_type(b) == type && qs_vmc_bridge_get_channel_id(b) == id) {
            return (int)i;
        }
    }
    return -1;
}

QsVmcBridge *qs_session_bridge(QsSession *session, uint8_t type, uint8_t id)
{
    int i = bridge_index(session, type, id);

    return i >= 0 ? session->ctx->bridges[i] : NULL;
}

/* The link check admits display/cursor ids < n_heads, main/inputs 0, and
 * the bridges' channels. */
static QsChannel **slot_for(QsSession *session, uint8_t type, uint8_t id)
{
    int bridge;

    switch (type) {
    case SPICE_CHANNEL_MAIN:
        return &session->main;
    case SPICE_CHANNEL_DISPLAY:
        return id < QS_CHANNELS_MAX_HEADS ? &session->displays[id] : NULL;
    case SPICE_CHANNEL_INPUTS:
        return &session->inputs;
    case SPICE_CHANNEL_CURSOR:
        return id < QS_CHANNELS_MAX_HEADS ? &session->cursors[id] : NULL;
    case SPICE_CHANNEL_PLAYBACK:
        return &session->playback;
    case SPICE_CHANNEL_RECORD:
        return &session->record;
    case SPICE_CHANNEL_SMARTCARD:
    case SPICE_CHANNEL_USBREDIR:
    case SPICE_CHANNEL_PORT:
    case SPICE_CHANNEL_WEBDAV:
        bridge = bridge_index(session, type, id);
        return bridge >= 0 ? &session->vmcs[bridge] : NULL;
    default:
        return NULL;
    }
}

/* The channel stays alive until its connection reports closed; from now on
 * it belongs to nobody but that connection. */
static void detach(QsChannel **slot, const char *reason)
{
    QsChannel *ch = *slot;

    if (ch) {
        *slot = NULL;
        ch->session = NULL;
        if (ch->klass->detached) {
            ch->klass->detached(ch);
        }
        qs_channel_close(ch, reason);
    }
}

void qs_session_free(QsSession *session, const char *reason)
{
    if (!session) {
        return;
    }
    for (guint i = 0; i < QS_CHANNELS_MAX_HEADS; i++) {
        detach(&session->displays[i], reason);
    }
    detach(&session->inputs, reason);
    for (guint i = 0; i < QS_CHANNELS_MAX_HEADS; i++) {
        detach(&session->cursors[i], reason);
    }
    detach(&session->playback, reason);
    detach(&session->record, reason);
    for (guint i = 0; i < QS_CHANNELS_MAX_BRIDGES; i++) {
        detach(&session->vmcs[i], reason);
    }
    detach(&session->main, reason);
    g_free(session);
}

static gboolean bridged(uint8_t type)
{
    return type == SPICE_CHANNEL_SMARTCARD || type == SPICE_CHANNEL_USBREDIR ||
           type == SPICE_CHANNEL_PORT || type == SPICE_CHANNEL_WEBDAV;
}

static void channel_closed(QsChannel *ch, gpointer data);

void qs_session_attach(QsSession *session, QsConn *conn)
{
    const QsLinkInfo *info = qs_conn_get_link_info(conn);
    QsChannel **slot = slot_for(session, info->channel_type, info->channel_id);
    QsChannelNewFunc new_channel = info->channel_type < SPICE_END_CHANNEL
                                       ? session->ctx->channel_types[info->channel_type]
                                       : NULL;

    if (!slot || !new_channel) {
        /* The prepare callback only lets our types through. */
        qs_conn_close(conn, "channel type not served");
        return;
    }
    detach(slot, "replaced by a newer connection of the same channel");
    /* The link check refuses a view-only client's bridged channels; a link
     * that showed the view-only ticket for a session that did not is
     * closed here. */
    if (bridged(info->channel_type) && (session->view_only || info->view_only)) {
        qs_conn_close(conn, "view-only client: no port channel (its bytes would "
                            "reach the guest)");
        return;
    }
    *slot = new_channel(session, conn);
    qs_channel_set_closed_func(*slot, channel_closed, session);
}

static void forget(QsChannel **slot, QsChannel *ch)
{
    if (*slot == ch) {
        *slot = NULL;
        ch->session = NULL;
        if (ch->klass->detached) {
            ch->klass->detached(ch);
        }
    }
}

/* The channel's connection is closing. */
static void channel_closed(QsChannel *ch, gpointer data)
{
    QsSession *session = data;

    for (uint8_t type = SPICE_CHANNEL_MAIN; type <= SPICE_CHANNEL_RECORD; type++) {
        for (uint8_t id = 0; id < QS_CHANNELS_MAX_HEADS; id++) {
            QsChannel **slot = slot_for(session, type, id);

            if (slot) {
                forget(slot, ch);
            }
        }
    }
    for (guint i = 0; i < QS_CHANNELS_MAX_BRIDGES; i++) {
        forget(&session->vmcs[i], ch);
    }
    /* Without its main channel a SPICE session is over (spice-gtk
     * reconnects everything with a new main link). */
    if (!session->main) {
        session->ctx->ops->session_ended(session, session->ctx->owner);
    }
}

uint16_t qs_session_supported_mouse_modes(QsSession *session)
{
    /* CLIENT mode needs an absolute pointer in the guest (a tablet): without
     * one, qemu drops absolute positions. */
    return SPICE_MOUSE_MODE_SERVER |
           (session->ctx->mouse_absolute ? SPICE_MOUSE_MODE_CLIENT : 0);
}

void qs_session_update_mouse_mode(QsSession *session, uint16_t requested)
{
    uint16_t supported = qs_session_supported_mouse_modes(session);
    uint16_t mode;

    if (requested == SPICE_MOUSE_MODE_SERVER || requested == SPICE_MOUSE_MODE_CLIENT) {
        mode = (requested & supported) ? requested : session->mouse_mode;
    } else {
        /* qemu changed: follow it, client mode whenever possible. */
        mode = (supported & SPICE_MOUSE_MODE_CLIENT) ? SPICE_MOUSE_MODE_CLIENT
                                                      : SPICE_MOUSE_MODE_SERVER;
    }
    if (!(mode & supported)) {
        mode = SPICE_MOUSE_MODE_SERVER;
    }
    session->mouse_mode = mode;
    if (session->main && session->main->klass->mouse_mode) {
        session->main->klass->mouse_mode(session->main);
    }
    for (guint i = 0; i < QS_CHANNELS_MAX_HEADS; i++) {
        QsChannel *cursor = session->cursors[i];

        if (cursor && cursor->klass->mouse_mode) {
            cursor->klass->mouse_mode(cursor);
        }
    }
}
