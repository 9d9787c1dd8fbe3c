/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The main channel: INIT, the channel list, mouse modes; agent messages are ignored (no agent yet). */
#include "channels/qs-msg.h"
#include "channels/qs-session.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/* What INIT grants a client for AGENT_DATA; spice-server's
 * REDS_AGENT_WINDOW_SIZE. Without an agent the client sends none anyway. */
#define AGENT_TOKENS 10

static void send_init(QsChannel *ch)
{
    QsSession *session = ch->session;
    QsMainInit init = {
        .session_id = session->id,
        .display_channels_hint = 1,
        .supported_mouse_modes = qs_session_supported_mouse_modes(session),
        .current_mouse_mode = session->mouse_mode,
        .agent_connected = 0,
        .agent_tokens = AGENT_TOKENS,
        /* The client's media clock is ours (qs-stream-msg.c, "Multimedia
         * time"): stream frames are stamped against it. */
        .multi_media_time = qs_mm_time_for_client(qs_mm_time_from_monotonic(g_get_monotonic_time())),
        .ram_hint = 0,
    };
    const char *name = qs_channels_vm_name(session->hub);
    const uint8_t *uuid = qs_channels_vm_uuid(session->hub);

    qs_channel_send(ch, SPICE_MSG_MAIN_INIT, qs_msg_main_init(&init));
    if (qs_channel_has_cap(ch, SPICE_MAIN_CAP_NAME_AND_UUID)) {
        if (name) {
            qs_channel_send(ch, SPICE_MSG_MAIN_NAME, qs_msg_main_name(name));
        }
        if (uuid) {
            qs_channel_send(ch, SPICE_MSG_MAIN_UUID, qs_msg_main_uuid(uuid));
        }
    }
}

void qs_main_channel_send_mouse_mode(QsChannel *ch)
{
    qs_channel_send(ch, SPICE_MSG_MAIN_MOUSE_MODE,
                    qs_msg_main_mouse_mode(qs_session_supported_mouse_modes(ch->session),
                                           ch->session->mouse_mode));
}

static gboolean main_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    static const QsChannelId channels[] = {
        { SPICE_CHANNEL_DISPLAY, 0 },
        { SPICE_CHANNEL_INPUTS, 0 },
        { SPICE_CHANNEL_CURSOR, 0 },
    };

    (void)error;
    switch (msg->type) {
    case SPICE_MSGC_MAIN_ATTACH_CHANNELS:
        qs_channel_send(ch, SPICE_MSG_MAIN_CHANNELS_LIST,
                        qs_msg_main_channels_list(channels, G_N_ELEMENTS(channels)));
        return TRUE;
    case SPICE_MSGC_MAIN_MOUSE_MODE_REQUEST:
        qs_session_update_mouse_mode(ch->session, msg->u.mouse_mode);
        return TRUE;
    default:
        /* CLIENT_INFO, AGENT_* (agent_connected is 0, so a client has no
         * reason to send them; dropped), migration (never offered). */
        return TRUE;
    }
}

static const QsChannelClass main_class = {
    .name = "main",
    .parse = qs_main_msg_parse,
    .handle = main_handle,
};

QsChannel *qs_main_channel_new(QsSession *session, QsConn *conn)
{
    QsChannel *ch = qs_channel_new(&main_class, sizeof(QsChannel), session, conn);

    send_init(ch);
    return ch;
}
