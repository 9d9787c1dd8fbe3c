/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The main channel: INIT, the channel list, mouse modes, and the emulated agent (qs-agent-channel.c). */
#include "channels/qs-agent-channel.h"
#include "channels/qs-main-channel.h"
#include "wire/qs-msg.h"
#include "channels/qs-session.h"
#include "channels/qs-vmc-bridge.h"
#include "flow/qs-frame-time.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/* The longest a channel list waits for qemu's answers to the audio
 * registrations (they take milliseconds; a loaded sanitizer build was seen
 * taking hundreds). */
#define QS_MAIN_LIST_HOLD_MS 3000

typedef struct {
    QsChannel base;
    QsAgent *agent;
    guint list_hold;            /* timeout while the list waits for qemu */
} QsMainChannel;

static void send_init(QsChannel *ch)
{
    QsSession *session = ch->session;
    gboolean agent = qs_agent_announce_connected(((QsMainChannel *)ch)->agent);
    QsMainInit init = {
        .session_id = session->id,
        .display_channels_hint = session->ctx->n_heads,
        .supported_mouse_modes = qs_session_supported_mouse_modes(session),
        .current_mouse_mode = session->mouse_mode,
        .agent_connected = agent,
        .agent_tokens = QS_AGENT_TOKENS,
        /* The client's media clock is ours (qs-stream-msg.c, "Multimedia
         * time"): stream frames are stamped against it. */
        .multi_media_time = qs_mm_time_for_client(qs_mm_time_from_monotonic(g_get_monotonic_time())),
        .ram_hint = 0,
    };
    const char *name = session->ctx->vm_name;
    const uint8_t *uuid = session->ctx->vm_uuid;

    if (session->view_only) {
        g_message("main channel: view-only client: no agent (no clipboard, no "
                  "resize), input and microphone not passed on");
    } else if (!agent) {
        g_message("main channel: no agent for this client (%s): no clipboard "
                  "sharing", qs_agent_absent_reason(((QsMainChannel *)ch)->agent));
    }
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

static void send_mouse_mode(QsChannel *ch)
{
    qs_channel_send(ch, SPICE_MSG_MAIN_MOUSE_MODE,
                    qs_msg_main_mouse_mode(qs_session_supported_mouse_modes(ch->session),
                                           ch->session->mouse_mode));
}

static void send_list(QsChannel *ch)
{
    QsChannelId channels[2 * QS_CHANNELS_MAX_HEADS + 4 + QS_CHANNELS_MAX_BRIDGES];
    guint n = 0, heads = ch->session->ctx->n_heads;

    /* Display ids first: spice-gtk opens a window per display channel
     * in the order it learns of them. */
    for (guint i = 0; i < heads; i++) {
        channels[n++] = (QsChannelId){ SPICE_CHANNEL_DISPLAY, (uint8_t)i };
    }
    channels[n++] = (QsChannelId){ SPICE_CHANNEL_INPUTS, 0 };
    for (guint i = 0; i < heads; i++) {
        channels[n++] = (QsChannelId){ SPICE_CHANNEL_CURSOR, (uint8_t)i };
    }
    if (ch->session->ctx->playback.available) {
        channels[n++] = (QsChannelId){ SPICE_CHANNEL_PLAYBACK, 0 };
    }
    if (ch->session->ctx->record.available) {
        channels[n++] = (QsChannelId){ SPICE_CHANNEL_RECORD, 0 };
    }
    for (guint i = 0; i < ch->session->ctx->n_bridges; i++) {
        QsVmcBridge *b = ch->session->ctx->bridges[i];

        channels[n++] = (QsChannelId){ qs_vmc_bridge_get_channel_type(b),
                                       qs_vmc_bridge_get_channel_id(b) };
    }
    qs_channel_send(ch, SPICE_MSG_MAIN_CHANNELS_LIST,
                    qs_msg_main_channels_list(channels, n));
}

static gboolean on_list_hold(gpointer data)
{
    QsChannel *ch = data;

    ((QsMainChannel *)ch)->list_hold = 0;
    if (ch->session) {
        g_message("main channel: qemu did not answer the audio registration within "
                  "%d ms; the channel list goes without the sound channels it "
                  "has not accepted yet", QS_MAIN_LIST_HOLD_MS);
        send_list(ch);
    }
    return G_SOURCE_REMOVE;
}

void qs_main_channel_release_list(QsChannel *ch)
{
    QsMainChannel *mc = (QsMainChannel *)ch;

    if (mc->list_hold) {
        g_source_remove(mc->list_hold);
        mc->list_hold = 0;
        send_list(ch);
    }
}

static gboolean main_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    const QsChannelContext *ctx = ch->session->ctx;
    QsMainChannel *mc = (QsMainChannel *)ch;

    switch (msg->type) {
    case SPICE_MSGC_MAIN_ATTACH_CHANNELS:
        /* A client that lists the channels before qemu answered our audio
         * registration would never be offered sound (spice-gtk asks once). */
        if (ctx->playback.settling || ctx->record.settling) {
            if (!mc->list_hold) {
                mc->list_hold = g_timeout_add(QS_MAIN_LIST_HOLD_MS, on_list_hold, ch);
            }
            return TRUE;
        }
        send_list(ch);
        return TRUE;
    case SPICE_MSGC_MAIN_MOUSE_MODE_REQUEST:
        qs_session_update_mouse_mode(ch->session, msg->u.mouse_mode);
        return TRUE;
    case SPICE_MSGC_MAIN_AGENT_START:
    case SPICE_MSGC_MAIN_AGENT_TOKEN:
    case SPICE_MSGC_MAIN_AGENT_DATA:
        return qs_agent_handle(mc->agent, msg, error);
    default:
        /* CLIENT_INFO, migration (never offered). */
        return TRUE;
    }
}

static void main_writable(QsChannel *ch)
{
    qs_agent_writable(((QsMainChannel *)ch)->agent);
}

static void main_finalize(QsChannel *ch)
{
    g_clear_handle_id(&((QsMainChannel *)ch)->list_hold, g_source_remove);
    qs_agent_free(((QsMainChannel *)ch)->agent);
}

static const QsChannelClass main_class = {
    .name = "main",
    .parse = qs_main_msg_parse,
    .handle = main_handle,
    .writable = main_writable,
    .finalize = main_finalize,
    .mouse_mode = send_mouse_mode,
};

QsChannel *qs_main_channel_new(QsSession *session, QsConn *conn)
{
    QsChannel *ch = qs_channel_new(&main_class, sizeof(QsMainChannel), session, conn);

    ((QsMainChannel *)ch)->agent = session->ctx->ops->agent_new(ch, session->ctx->owner);

    send_init(ch);
    return ch;
}
