/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The channel layer's front door: link decisions for net, the client sessions, qemu-side changes in. */
#include "channels/qs-channel-types.h"
#include "channels/qs-channels-private.h"
#include "wire/qs-msg.h"
#include "channels/qs-image-share.h"
#include "encode/qs-encode-queue.h"
#include "encode/qs-video-share.h"
#include "flow/qs-share-policy.h"
#include "channels/qs-vmc-bridge.h"
#include "util/qs-heap-trim.h"
#include "util/qs-wake.h"

#include <spice/enums.h>
#include <spice/protocol.h>

static gboolean on_wake(gpointer user_data)
{
    QsChannels *hub = user_data;
    guint screens = g_atomic_int_and(&hub->screen_changed, 0);
    guint cursors = g_atomic_int_and(&hub->cursor_changed, 0);

    g_autofree uint32_t *ids = NULL;

    if (!screens && !cursors) {
        return G_SOURCE_CONTINUE;
    }
    /* Each session is looked up again before each call: a send can close a
     * connection, and its session may end (closing completes later). Every
     * session pumps its own plan: one client's slow link holds no other. */
    ids = qs_channels_session_ids(hub);
    for (guint k = 0; ids[k]; k++) {
        for (guint i = 0; i < hub->ctx.n_heads; i++) {
            QsSession *session = qs_channels_session(hub, ids[k]);

            if ((screens & (1u << i)) && session && session->displays[i]) {
                qs_display_channel_pump(session->displays[i]);
            }
        }
        for (guint i = 0; i < hub->ctx.n_heads; i++) {
            QsSession *session = qs_channels_session(hub, ids[k]);

            if ((cursors & (1u << i)) && session && session->cursors[i]) {
                qs_cursor_channel_changed(session->cursors[i]);
            }
        }
    }
    return G_SOURCE_CONTINUE;
}

static void on_screen_changed(QsScreen *screen, gpointer user_data)
{
    QsChannelsWatch *watch = user_data;

    (void)screen;
    g_atomic_int_or(&watch->hub->screen_changed, 1u << watch->index);
    qs_wake(watch->hub->wake);
}

static void on_cursor_changed(QsCursor *cursor, gboolean shape, gpointer user_data)
{
    QsChannelsWatch *watch = user_data;

    (void)cursor;
    (void)shape;
    g_atomic_int_or(&watch->hub->cursor_changed, 1u << watch->index);
    qs_wake(watch->hub->wake);
}

static void on_input_changed(QsInput *input, QsInputChange what, gpointer user_data)
{
    QsChannels *hub = user_data;

    if (what == QS_INPUT_CHANGED_ABSOLUTE) {
        qs_channels_set_mouse_absolute(hub, qs_input_is_absolute(input));
    } else {
        qs_channels_set_modifiers(hub, (uint16_t)qs_input_get_modifiers(input));
    }
}

/* --- the context's ops ---------------------------------------------------- */

static void ended(QsSession *session, gpointer owner)
{
    qs_channels_end_session(owner, session, "the session's main channel closed");
}

static QsAgent *agent_new(QsChannel *main, gpointer owner)
{
    QsChannels *hub = owner;

    /* A view-only client's agent serves nothing (no clipboard, no
     * monitors config): it is announced as absent. */
    return qs_agent_new(main, main->session->view_only ? NULL : hub->agents, hub->ctx.n_heads);
}

static gboolean may_record(QsSession *session, gpointer owner)
{
    QsSession *recorder = qs_channels_recorder(owner);

    return !session->view_only && (!recorder || recorder == session);
}

static const QsChannelContextOps context_ops = {
    .session_ended = ended,
    .agent_new = agent_new,
    .may_record = may_record,
};

QsChannels *qs_channels_new(const QsChannelsConfig *config)
{
    QsChannels *hub = g_new0(QsChannels, 1);
    QsChannelContext *ctx = &hub->ctx;
    g_autoptr(GMainContext) context = g_main_context_ref_thread_default();
    /* One pool of encode workers for every console's shares and every
     * display channel's images (they hold it), and the switch read once:
     * QS_STREAM_SHARE=0 gives each stream an encoder of its own, for the
     * benchmark's comparison. */
    g_autoptr(QsEncodeQueue) encodes = config->encodes ? qs_encode_queue_ref(config->encodes)
                                                       : qs_encode_queue_new();
    gboolean share_streams = qs_share_enabled(g_getenv("QS_STREAM_SHARE"));

    QsChannelsHead one = { config->screen, config->cursor, config->input };
    const QsChannelsHead *heads = config->n_heads ? config->heads : &one;
    QsInput *input;

    g_assert(config->n_heads <= QS_CHANNELS_MAX_HEADS);
    hub->vm_name = g_strdup(config->vm_name);
    ctx->vm_name = hub->vm_name;
    if (config->vm_uuid && qs_uuid_parse(config->vm_uuid, hub->uuid)) {
        ctx->vm_uuid = hub->uuid;
    }
    ctx->n_heads = MAX(config->n_heads, 1);
    g_assert(config->n_bridges <= QS_CHANNELS_MAX_BRIDGES);
    for (guint i = 0; i < config->n_bridges; i++) {
        ctx->bridges[i] = config->bridges[i];
    }
    ctx->n_bridges = config->n_bridges;
    ctx->max_fps = config->max_fps;
    ctx->display_clock = config->display_clock;
    ctx->encodes = qs_encode_queue_ref(encodes);
    ctx->channel_types = qs_channel_types;
    ctx->ops = &context_ops;
    ctx->owner = hub;
    g_assert(config->max_sessions <= QS_CHANNELS_MAX_SESSIONS);
    hub->max_sessions = config->max_sessions ? config->max_sessions
                                             : QS_CHANNELS_DEFAULT_SESSIONS;
    hub->when_full = config->when_full;
    hub->sessions = g_ptr_array_new();
    hub->agents = qs_agent_host_new();

    hub->wake = qs_wake_source_new("qs-channels-wake", on_wake, hub, context);

    for (guint i = 0; i < ctx->n_heads; i++) {
        QsConsoleView *head = &ctx->heads[i];
        QsChannelsWatch *watch = &hub->watches[i];

        g_assert(heads[i].screen);
        *head = (QsConsoleView){ heads[i].screen, heads[i].cursor, heads[i].input };
        ctx->streams[i] = qs_video_share_new(encodes, &qs_share_rules, share_streams);
        ctx->images[i] = qs_image_share_new();
        *watch = (QsChannelsWatch){ hub, i, 0 };
        watch->screen_func = qs_screen_add_changed_func(head->screen, on_screen_changed,
                                                        watch);
        if (head->cursor) {
            qs_cursor_set_changed_func(head->cursor, on_cursor_changed, watch);
        }
    }
    input = ctx->heads[0].input;
    if (input) {
        ctx->mouse_absolute = qs_input_is_absolute(input);
        ctx->modifiers = (uint16_t)qs_input_get_modifiers(input);
        qs_input_set_changed_func(input, on_input_changed, hub);
    }
    return hub;
}

void qs_channels_free(QsChannels *hub)
{
    if (!hub) {
        return;
    }
    qs_channels_drop_clients(hub, "server shutting down");
    g_ptr_array_free(hub->sessions, TRUE);
    /* Removal waits for a running callback, so none touches hub after this. */
    for (guint i = 0; i < hub->ctx.n_heads; i++) {
        qs_screen_remove_changed_func(hub->ctx.heads[i].screen, hub->watches[i].screen_func);
        if (hub->ctx.heads[i].cursor) {
            qs_cursor_set_changed_func(hub->ctx.heads[i].cursor, NULL, NULL);
        }
        qs_video_share_free(hub->ctx.streams[i]);
        qs_image_share_unref(hub->ctx.images[i]);
    }
    qs_encode_queue_unref(hub->ctx.encodes);
    if (hub->ctx.heads[0].input) {
        qs_input_set_changed_func(hub->ctx.heads[0].input, NULL, NULL);
    }
    /* After the session: its channels have let go of them. */
    for (guint i = 0; i < hub->ctx.n_bridges; i++) {
        qs_vmc_bridge_free(hub->ctx.bridges[i]);
    }
    qs_agent_host_free(hub->agents);
    g_source_destroy(hub->wake);
    g_source_unref(hub->wake);
    g_free(hub->vm_name);
    g_free(hub);
}

/* --- QsServerCallbacks ------------------------------------------------- */

static void set_cap(guint32 *caps, guint *n_caps, guint cap)
{
    guint word = cap / 32;

    while (*n_caps <= word) {
        caps[(*n_caps)++] = 0;
    }
    caps[word] |= 1u << (cap % 32);
}

/* Whether channel (type, id) may link for session `session_id`: its
 * chardev is bridged, the session may send the guest input (a port's
 * bytes reach the guest: not for a view-only client), and no other
 * session's channel holds it (a byte stream has one client at a time: the
 * first keeps it). */
static SpiceLinkErr bridge_link(QsChannels *hub, const QsLinkInfo *info)
{
    for (guint i = 0; i < hub->ctx.n_bridges; i++) {
        QsVmcBridge *b = hub->ctx.bridges[i];
        QsSession *session;
        QsChannel *holder;

        if (qs_vmc_bridge_get_channel_type(b) != info->channel_type ||
            qs_vmc_bridge_get_channel_id(b) != info->channel_id) {
            continue;
        }
        session = qs_channels_session(hub, info->connection_id);
        if (session && session->view_only) {
            g_message("%s: view-only client %s refused: its bytes would reach the guest",
                      qs_vmc_bridge_get_name(b), info->peer);
            return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
        }
        holder = qs_vmc_bridge_get_channel(b);
        if (holder && holder->session && holder->session->id != info->connection_id) {
            g_message("%s: client %s refused: another client session holds it",
                      qs_vmc_bridge_get_name(b), info->peer);
            return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
        }
        return SPICE_LINK_ERR_OK;
    }
    return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
}

/* Said once a second at most: the peer has not shown a ticket yet. */
static void refused_full(QsChannels *hub, const char *peer)
{
    gint64 now = g_get_monotonic_time();

    if (now - hub->full_logged_us < G_USEC_PER_SEC) {
        hub->full_unlogged++;
        return;
    }
    g_message("client %s refused: %u sessions are connected, the most allowed "
              "(--max-sessions)%s", peer, hub->sessions->len,
              hub->full_unlogged ? "; more refusals since the last such line" : "");
    hub->full_logged_us = now;
    hub->full_unlogged = 0;
}

static SpiceLinkErr on_prepare(const QsLinkInfo *info, guint32 *caps,
                               guint *n_caps, gpointer user_data)
{
    QsChannels *hub = user_data;
    gboolean per_head = info->channel_type == SPICE_CHANNEL_DISPLAY ||
                        info->channel_type == SPICE_CHANNEL_CURSOR;

    *n_caps = 0;
    switch (info->channel_type) {
    case SPICE_CHANNEL_SMARTCARD:
    case SPICE_CHANNEL_USBREDIR:
    case SPICE_CHANNEL_PORT:
    case SPICE_CHANNEL_WEBDAV:
        /* Only the chardevs we were given; no LZ4 (SPICEVMC_CAP_DATA_COMPRESS_LZ4):
         * the bytes are the guest's, and compressing them is the client's
         * CPU for little on a LAN. */
        return bridge_link(hub, info);
    default:
        break;
    }
    /* Display and cursor channels 0..n-1, one per head; main and inputs 0. */
    if (info->channel_id >= (per_head ? hub->ctx.n_heads : 1)) {
        return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
    }
    switch (info->channel_type) {
    case SPICE_CHANNEL_MAIN:
        /* A new client (a main link without a session id) when full: said
         * at once, before its ticket, as a link error the client reports. */
        if (info->connection_id == 0 && hub->when_full == QS_WHEN_FULL_REFUSE &&
            hub->sessions->len >= hub->max_sessions) {
            refused_full(hub, info->peer);
            return SPICE_LINK_ERR_ERROR;
        }
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_CURSOR:
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_DISPLAY:
        /* MONITORS_CONFIG obliges us to send MONITORS_CONFIG to clients that
         * have the cap (we do); PREF_COMPRESSION lets a client ask for LZ4
         * or plain bitmaps. */
        set_cap(caps, n_caps, SPICE_DISPLAY_CAP_MONITORS_CONFIG);
        set_cap(caps, n_caps, SPICE_DISPLAY_CAP_PREF_COMPRESSION);
        /* Without it spice-gtk never sends the user's codec order. */
        set_cap(caps, n_caps, SPICE_DISPLAY_CAP_PREF_VIDEO_CODEC_TYPE);
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_INPUTS:
        set_cap(caps, n_caps, SPICE_INPUTS_CAP_KEY_SCANCODE);
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_PLAYBACK:
        /* Only while qemu has D-Bus audio (-audiodev dbus). Opus when the
         * client has it too and qemu's rate is one Opus codes. */
        if (!hub->ctx.playback.available) {
            return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
        }
        set_cap(caps, n_caps, SPICE_PLAYBACK_CAP_VOLUME);
        set_cap(caps, n_caps, SPICE_PLAYBACK_CAP_OPUS);
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_RECORD:
        /* Only while qemu takes recorded sound; Opus or raw S16 from the
         * client (qs-record-channel.c). */
        if (!hub->ctx.record.available) {
            return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
        }
        set_cap(caps, n_caps, SPICE_RECORD_CAP_VOLUME);
        set_cap(caps, n_caps, SPICE_RECORD_CAP_OPUS);
        return SPICE_LINK_ERR_OK;
    default:
        return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
    }
}

static SpiceLinkErr on_authorize(const QsLinkInfo *info, guint32 *session_id,
                                 gpointer user_data)
{
    QsChannels *hub = user_data;
    QsSession *session;

    if (info->channel_type == SPICE_CHANNEL_MAIN) {
        /* A non-zero id on main is a migration target: not supported. */
        if (info->connection_id != 0) {
            return SPICE_LINK_ERR_BAD_CONNECTION_ID;
        }
        *session_id = qs_channels_new_session_id(hub);
        return SPICE_LINK_ERR_OK;
    }
    session = qs_channels_session(hub, info->connection_id);
    if (!session) {
        return SPICE_LINK_ERR_BAD_CONNECTION_ID;
    }
    /* A session's rights are its main channel's: a view-only credential
     * must not add a channel (inputs, say) to a session that has control. */
    if (info->view_only && !session->view_only) {
        g_message("channel %u:%u from %s refused: a view-only credential for a session "
                  "with control", info->channel_type, info->channel_id, info->peer);
        return SPICE_LINK_ERR_PERMISSION_DENIED;
    }
    *session_id = info->connection_id;
    return SPICE_LINK_ERR_OK;
}

static void on_attach(QsConn *conn, gpointer user_data)
{
    QsChannels *hub = user_data;
    const QsLinkInfo *info = qs_conn_get_link_info(conn);
    QsSession *session;

    if (info->channel_type == SPICE_CHANNEL_MAIN) {
        session = qs_channels_add_session(hub, info->session_id, info->view_only);
    } else {
        session = qs_channels_session(hub, info->session_id);
    }
    if (session) {
        qs_session_attach(session, conn);
    } else {
        qs_conn_close(conn, "session ended during the link");
    }
    qs_conn_unref(conn);
}

const QsServerCallbacks *qs_channels_server_callbacks(void)
{
    static const QsServerCallbacks callbacks = {
        .prepare = on_prepare,
        .authorize = on_authorize,
        .attach = on_attach,
    };

    return &callbacks;
}

/* --- qemu-side state ---------------------------------------------------- */

void qs_channels_set_mouse_absolute(QsChannels *hub, gboolean absolute)
{
    absolute = !!absolute;
    if (hub->ctx.mouse_absolute == absolute) {
        return;
    }
    hub->ctx.mouse_absolute = absolute;
    for (guint i = 0; i < hub->sessions->len; i++) {
        qs_session_update_mouse_mode(g_ptr_array_index(hub->sessions, i), 0);
    }
}

void qs_channels_set_modifiers(QsChannels *hub, uint16_t modifiers)
{
    if (hub->ctx.modifiers == modifiers) {
        return;
    }
    hub->ctx.modifiers = modifiers;
    for (guint i = 0; i < hub->sessions->len; i++) {
        QsSession *session = g_ptr_array_index(hub->sessions, i);

        if (session->inputs) {
            qs_inputs_channel_modifiers_changed(session->inputs);
        }
    }
}

guint qs_channels_get_n_heads(QsChannels *hub)
{
    return hub->ctx.n_heads;
}
