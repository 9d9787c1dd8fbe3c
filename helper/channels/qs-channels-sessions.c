/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's client sessions: the table, the policy when it is full, which one records, and what the control surface lists. */
#include "channels/qs-channels-private.h"
#include "channels/qs-vmc-bridge.h"
#include "util/qs-heap-trim.h"

QsSession *qs_channels_session(QsChannels *hub, uint32_t id)
{
    for (guint i = 0; id && i < hub->sessions->len; i++) {
        QsSession *s = g_ptr_array_index(hub->sessions, i);

        if (s->id == id) {
            return s;
        }
    }
    return NULL;
}

QsSession *qs_channels_newest(QsChannels *hub)
{
    return hub->sessions->len ? g_ptr_array_index(hub->sessions, hub->sessions->len - 1)
                              : NULL;
}

uint32_t qs_channels_new_session_id(QsChannels *hub)
{
    uint32_t id;

    do {
        id = g_random_int();
    } while (id == 0 || qs_channels_session(hub, id));
    return id;
}

/* One session at a time records: the oldest with a record channel, so that
 * the first viewer keeps the microphone while others come and go; when it
 * leaves, the next oldest takes over. The other sessions' record channels
 * are never started, so their clients send nothing. */
QsSession *qs_channels_recorder(QsChannels *hub)
{
    for (guint i = 0; i < hub->sessions->len; i++) {
        QsSession *s = g_ptr_array_index(hub->sessions, i);

        if (s->record && !s->view_only) {
            return s;
        }
    }
    return NULL;
}

void qs_channels_record_resume(QsChannels *hub)
{
    QsSession *s = qs_channels_recorder(hub);

    if (s && hub->ctx.record.recording) {
        qs_record_channel_start(s->record, &hub->ctx.record);
    }
}

void qs_channels_watch_sessions(QsChannels *hub, QsChannelsSessionsFunc func, gpointer data)
{
    hub->sessions_func = func;
    hub->sessions_data = data;
}

static void sessions_changed(QsChannels *hub)
{
    if (hub->sessions_func) {
        hub->sessions_func(hub->sessions->len, hub->sessions_data);
    }
}

void qs_channels_end_session(QsChannels *hub, QsSession *session, const char *reason)
{
    gboolean recorded = qs_channels_recorder(hub) == session;

    g_ptr_array_remove(hub->sessions, session);
    qs_session_free(session, reason);
    if (recorded) {
        qs_channels_record_resume(hub);
    }
    qs_heap_trim_soon();
    sessions_changed(hub);
}

QsSession *qs_channels_add_session(QsChannels *hub, uint32_t id, gboolean view_only)
{
    QsSession *session;

    while (hub->sessions->len >= hub->max_sessions) {
        /* Only QS_WHEN_FULL_REPLACE gets here full: a refusal is decided
         * before the ticket (qs-channels.c, on_prepare). */
        g_autofree char *why = g_strdup_printf(
            "replaced by a new client session (at most %u at once)", hub->max_sessions);

        qs_channels_end_session(hub, g_ptr_array_index(hub->sessions, 0), why);
    }
    session = qs_session_new(&hub->ctx, id);
    session->view_only = view_only;
    g_ptr_array_add(hub->sessions, session);
    sessions_changed(hub);
    return session;
}

uint32_t *qs_channels_session_ids(QsChannels *hub)
{
    uint32_t *ids = g_new0(uint32_t, hub->sessions->len + 1);

    for (guint i = 0; i < hub->sessions->len; i++) {
        ids[i] = ((QsSession *)g_ptr_array_index(hub->sessions, i))->id;
    }
    return ids;
}

uint32_t qs_channels_get_session_id(QsChannels *hub)
{
    QsSession *s = qs_channels_newest(hub);

    return s ? s->id : 0;
}

void qs_client_info_free(QsClientInfo *info)
{
    if (info) {
        g_free(info->address);
        g_strfreev(info->channels);
        g_free(info);
    }
}

/* "display" for head 0 (as before heads), "display:N" for the others. */
static void add_name(QsClientInfo *info, GPtrArray *names, QsChannel *ch, const char *type,
                     guint id)
{
    if (ch) {
        g_ptr_array_add(names, id ? g_strdup_printf("%s:%u", type, id) : g_strdup(type));
        info->bytes_sent += ch->sent_bytes;
    }
}

static QsClientInfo *client_info(QsChannels *hub, QsSession *s)
{
    QsClientInfo *info = g_new0(QsClientInfo, 1);
    GPtrArray *names = g_ptr_array_new();

    info->address = g_strdup(qs_conn_get_link_info(s->main->conn)->peer);
    info->tls = qs_conn_get_link_info(s->main->conn)->tls;
    info->since_us = s->since_us;
    info->view_only = s->view_only;
    add_name(info, names, s->main, "main", 0);
    for (guint i = 0; i < hub->ctx.n_heads; i++) {
        add_name(info, names, s->displays[i], "display", i);
    }
    add_name(info, names, s->inputs, "inputs", 0);
    for (guint i = 0; i < hub->ctx.n_heads; i++) {
        add_name(info, names, s->cursors[i], "cursor", i);
    }
    add_name(info, names, s->playback, "playback", 0);
    add_name(info, names, s->record, "record", 0);
    for (guint i = 0; i < hub->ctx.n_bridges; i++) {
        if (s->vmcs[i]) {
            QsVmcBridge *b = hub->ctx.bridges[i];
            uint8_t type = qs_vmc_bridge_get_channel_type(b);

            g_ptr_array_add(names, type == SPICE_CHANNEL_USBREDIR
                                   ? g_strdup_printf("usbredir:%u", qs_vmc_bridge_get_channel_id(b))
                                   : type == SPICE_CHANNEL_SMARTCARD
                                   ? g_strdup("smartcard:0")
                                   : g_strdup_printf("port:%s", qs_vmc_bridge_get_name(b)));
            info->bytes_sent += s->vmcs[i]->sent_bytes;
        }
    }
    if (s->displays[0]) {
        qs_display_channel_link_estimate(s->displays[0], &info->link_bytes_per_sec,
                                         &info->link_srtt_us);
    }
    g_ptr_array_add(names, NULL);
    info->channels = (char **)g_ptr_array_free(names, FALSE);
    return info;
}

GPtrArray *qs_channels_list_clients(QsChannels *hub)
{
    GPtrArray *out = g_ptr_array_new_with_free_func((GDestroyNotify)qs_client_info_free);

    for (guint i = 0; i < hub->sessions->len; i++) {
        QsSession *s = g_ptr_array_index(hub->sessions, i);

        if (s->main) {
            g_ptr_array_add(out, client_info(hub, s));
        }
    }
    return out;
}

gboolean qs_channels_drop_client(QsChannels *hub, const char *address, const char *reason)
{
    for (guint i = 0; i < hub->sessions->len; i++) {
        QsSession *s = g_ptr_array_index(hub->sessions, i);

        if (s->main && g_strcmp0(qs_conn_get_link_info(s->main->conn)->peer, address) == 0) {
            qs_channels_end_session(hub, s, reason);
            return TRUE;
        }
    }
    return FALSE;
}

guint qs_channels_drop_clients(QsChannels *hub, const char *reason)
{
    guint n = hub->sessions->len;

    while (hub->sessions->len) {
        qs_channels_end_session(hub, qs_channels_newest(hub), reason);
    }
    return n;
}
