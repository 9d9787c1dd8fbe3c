/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The channel layer's front door: link decisions for net, the one active session, qemu-side changes in. */
#include "channels/qs-channels.h"
#include "channels/qs-msg.h"
#include "channels/qs-session.h"

#include <spice/enums.h>
#include <spice/protocol.h>

struct QsChannels {
    char *vm_name;
    gboolean has_uuid;
    uint8_t uuid[16];
    QsScreen *screen;
    QsCursor *cursor;
    QsInput *input;
    guint screen_func;

    /* Screen and cursor changes arrive on qemu's listener thread; they only
     * raise a flag and make this source ready (g_source_set_ready_time is
     * thread-safe), and the main context does the work. */
    GSource *wake;
    gint screen_changed;
    gint cursor_changed;

    QsSession *session;
    gboolean mouse_absolute;
    uint16_t modifiers;
};

static gboolean wake_dispatch(GSource *source, GSourceFunc callback,
                              gpointer user_data)
{
    g_source_set_ready_time(source, -1);
    return callback(user_data);
}

static GSourceFuncs wake_funcs = {
    .dispatch = wake_dispatch,
};

static gboolean on_wake(gpointer user_data)
{
    QsChannels *hub = user_data;
    QsSession *session = hub->session;

    if (g_atomic_int_exchange(&hub->screen_changed, 0) && session && session->display) {
        qs_display_channel_pump(session->display);
    }
    /* The session may have changed under the display pump (a send can close
     * a connection, but closing completes later), so reread it. */
    session = hub->session;
    if (g_atomic_int_exchange(&hub->cursor_changed, 0) && session && session->cursor) {
        qs_cursor_channel_changed(session->cursor);
    }
    return G_SOURCE_CONTINUE;
}

static void on_screen_changed(QsScreen *screen, gpointer user_data)
{
    QsChannels *hub = user_data;

    (void)screen;
    g_atomic_int_set(&hub->screen_changed, 1);
    g_source_set_ready_time(hub->wake, 0);
}

static void on_cursor_changed(QsCursor *cursor, gboolean shape, gpointer user_data)
{
    QsChannels *hub = user_data;

    (void)cursor;
    (void)shape;
    g_atomic_int_set(&hub->cursor_changed, 1);
    g_source_set_ready_time(hub->wake, 0);
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

QsChannels *qs_channels_new(const QsChannelsConfig *config)
{
    QsChannels *hub = g_new0(QsChannels, 1);
    g_autoptr(GMainContext) context = g_main_context_ref_thread_default();

    g_assert(config->screen);
    hub->vm_name = g_strdup(config->vm_name);
    hub->has_uuid = config->vm_uuid && qs_uuid_parse(config->vm_uuid, hub->uuid);
    hub->screen = config->screen;
    hub->cursor = config->cursor;
    hub->input = config->input;

    hub->wake = g_source_new(&wake_funcs, sizeof(GSource));
    g_source_set_callback(hub->wake, on_wake, hub, NULL);
    g_source_set_name(hub->wake, "qs-channels-wake");
    g_source_attach(hub->wake, context);

    hub->screen_func = qs_screen_add_changed_func(hub->screen, on_screen_changed, hub);
    if (hub->cursor) {
        qs_cursor_set_changed_func(hub->cursor, on_cursor_changed, hub);
    }
    if (hub->input) {
        hub->mouse_absolute = qs_input_is_absolute(hub->input);
        hub->modifiers = (uint16_t)qs_input_get_modifiers(hub->input);
        qs_input_set_changed_func(hub->input, on_input_changed, hub);
    }
    return hub;
}

void qs_channels_free(QsChannels *hub)
{
    if (!hub) {
        return;
    }
    qs_session_free(g_steal_pointer(&hub->session), "server shutting down");
    /* Removal waits for a running callback, so none touches hub after this. */
    qs_screen_remove_changed_func(hub->screen, hub->screen_func);
    if (hub->cursor) {
        qs_cursor_set_changed_func(hub->cursor, NULL, NULL);
    }
    if (hub->input) {
        qs_input_set_changed_func(hub->input, NULL, NULL);
    }
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

static SpiceLinkErr on_prepare(const QsLinkInfo *info, guint32 *caps,
                               guint *n_caps, gpointer user_data)
{
    (void)user_data;
    *n_caps = 0;
    /* One console for now: display, inputs and cursor channel 0. */
    if (info->channel_id != 0) {
        return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
    }
    switch (info->channel_type) {
    case SPICE_CHANNEL_MAIN:
    case SPICE_CHANNEL_CURSOR:
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_DISPLAY:
        /* MONITORS_CONFIG obliges us to send MONITORS_CONFIG to clients that
         * have the cap (we do); PREF_COMPRESSION lets a client ask for LZ4
         * or plain bitmaps. */
        set_cap(caps, n_caps, SPICE_DISPLAY_CAP_MONITORS_CONFIG);
        set_cap(caps, n_caps, SPICE_DISPLAY_CAP_PREF_COMPRESSION);
        return SPICE_LINK_ERR_OK;
    case SPICE_CHANNEL_INPUTS:
        set_cap(caps, n_caps, SPICE_INPUTS_CAP_KEY_SCANCODE);
        return SPICE_LINK_ERR_OK;
    default:
        return SPICE_LINK_ERR_CHANNEL_NOT_AVAILABLE;
    }
}

static SpiceLinkErr on_authorize(const QsLinkInfo *info, guint32 *session_id,
                                 gpointer user_data)
{
    QsChannels *hub = user_data;

    if (info->channel_type == SPICE_CHANNEL_MAIN) {
        uint32_t id;

        /* A non-zero id on main is a migration target: not supported. */
        if (info->connection_id != 0) {
            return SPICE_LINK_ERR_BAD_CONNECTION_ID;
        }
        do {
            id = g_random_int();
        } while (id == 0 || (hub->session && id == hub->session->id));
        *session_id = id;
        return SPICE_LINK_ERR_OK;
    }
    if (!hub->session || info->connection_id != hub->session->id) {
        return SPICE_LINK_ERR_BAD_CONNECTION_ID;
    }
    *session_id = hub->session->id;
    return SPICE_LINK_ERR_OK;
}

static void on_attach(QsConn *conn, gpointer user_data)
{
    QsChannels *hub = user_data;
    const QsLinkInfo *info = qs_conn_get_link_info(conn);

    if (info->channel_type == SPICE_CHANNEL_MAIN) {
        /* One client at a time: a newly authenticated main link wins. */
        qs_session_free(g_steal_pointer(&hub->session), "replaced by a new client session");
        hub->session = qs_session_new(hub, info->session_id);
    }
    if (hub->session && hub->session->id == info->session_id) {
        qs_session_attach(hub->session, conn);
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
    if (hub->mouse_absolute == absolute) {
        return;
    }
    hub->mouse_absolute = absolute;
    if (hub->session) {
        qs_session_update_mouse_mode(hub->session, 0);
    }
}

void qs_channels_set_modifiers(QsChannels *hub, uint16_t modifiers)
{
    if (hub->modifiers == modifiers) {
        return;
    }
    hub->modifiers = modifiers;
    if (hub->session && hub->session->inputs) {
        qs_inputs_channel_modifiers_changed(hub->session->inputs);
    }
}

uint32_t qs_channels_get_session_id(QsChannels *hub)
{
    return hub->session ? hub->session->id : 0;
}

void qs_channels_session_ended(QsChannels *hub, QsSession *session)
{
    if (hub->session == session) {
        hub->session = NULL;
    }
    qs_session_free(session, "the session's main channel closed");
}

QsScreen *qs_channels_screen(QsChannels *hub) { return hub->screen; }
QsCursor *qs_channels_cursor(QsChannels *hub) { return hub->cursor; }
QsInput *qs_channels_input(QsChannels *hub) { return hub->input; }
gboolean qs_channels_mouse_absolute(QsChannels *hub) { return hub->mouse_absolute; }
uint16_t qs_channels_modifiers(QsChannels *hub) { return hub->modifiers; }
const char *qs_channels_vm_name(QsChannels *hub) { return hub->vm_name; }

const uint8_t *qs_channels_vm_uuid(QsChannels *hub)
{
    return hub->has_uuid ? hub->uuid : NULL;
}
