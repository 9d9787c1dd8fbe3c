/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's clipboard backend: which agent serves it, and its events passed to that client. */
#include "channels/qs-agent-private.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>

/* One hub per helper; the list only keeps tests with several hubs apart. */
static GSList *backends;

QsAgentBackend *qs_agent_backend_for(QsChannels *hub)
{
    for (GSList *l = backends; l; l = l->next) {
        QsAgentBackend *be = l->data;

        if (be->hub == hub) {
            return be;
        }
    }
    return NULL;
}

void qs_agent_set_backend(QsChannels *hub, const QsAgentBackendOps *ops,
                          gpointer backend, gboolean available)
{
    QsAgentBackend *be = qs_agent_backend_for(hub);

    if (be) {
        if (be->current) {
            qs_agent_reset(be->current);
            be->current->be = NULL;
        }
        backends = g_slist_remove(backends, be);
        g_free(be);
    }
    if (!ops) {
        return;
    }
    be = g_new0(QsAgentBackend, 1);
    be->hub = hub;
    be->ops = ops;
    be->backend = backend;
    be->available = available;
    backends = g_slist_prepend(backends, be);
}

/* The hub's live agent, if its channel is still in a session. */
static QsAgent *live_agent(QsChannels *hub, QsAgentBackend **ret_be)
{
    QsAgentBackend *be = qs_agent_backend_for(hub);

    *ret_be = be;
    if (!be || !be->current || !be->current->ch->session) {
        return NULL;
    }
    return be->current;
}

void qs_agent_backend_available(QsChannels *hub, gboolean available)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(hub, &be);

    if (!be || be->available == !!available) {
        return;
    }
    be->available = !!available;
    for (guint i = 0; !available && i < N_SELECTIONS; i++) {
        be->backend_owns[i] = FALSE;
    }
    if (!a || a->connected == be->available) {
        return;
    }
    qs_agent_reset(a);
    a->connected = be->available;
    if (a->connected) {
        qs_channel_send(a->ch, SPICE_MSG_MAIN_AGENT_CONNECTED, NULL);
    } else {
        qs_channel_send(a->ch, SPICE_MSG_MAIN_AGENT_DISCONNECTED, qs_agent_u32_body(0));
    }
}

void qs_agent_backend_grab(QsChannels *hub, uint8_t sel)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(hub, &be);

    if (!be || sel >= N_SELECTIONS) {
        return;
    }
    be->backend_owns[sel] = TRUE;
    if (a) {
        a->client_owns[sel] = FALSE;
        qs_agent_send_grab(a, sel);
    }
}

void qs_agent_backend_release(QsChannels *hub, uint8_t sel)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(hub, &be);

    if (!be || sel >= N_SELECTIONS || !be->backend_owns[sel]) {
        return;
    }
    be->backend_owns[sel] = FALSE;
    if (a && a->caps_received && qs_agent_selection_ok(a, sel)) {
        qs_agent_send_msg(a, VD_AGENT_CLIPBOARD_RELEASE, qs_agent_release_body(a->selection, sel));
    }
}

void qs_agent_backend_request(QsChannels *hub, uint8_t sel)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(hub, &be);

    if (!be) {
        return;
    }
    if (a && sel < N_SELECTIONS && a->providing[sel]) {
        /* Asked already; the answer serves this request (the backend timed
         * the earlier one out). */
        return;
    }
    if (!a || sel >= N_SELECTIONS || !a->client_owns[sel] ||
        !qs_agent_selection_ok(a, sel) ||
        !qs_agent_send_msg(a, VD_AGENT_CLIPBOARD_REQUEST,
                  qs_agent_request_body(a->selection, sel, VD_AGENT_CLIPBOARD_UTF8_TEXT))) {
        be->ops->provide(be->backend, sel, NULL, 0);
        return;
    }
    a->providing[sel] = TRUE;
}

void qs_agent_backend_data(QsChannels *hub, uint8_t sel, GBytes *text)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(hub, &be);
    size_t size = text ? g_bytes_get_size(text) : 0;

    if (!a || sel >= N_SELECTIONS || !a->fetching[sel]) {
        return;
    }
    a->fetching[sel] = FALSE;
    if (size > QS_AGENT_CLIPBOARD_MAX) {
        g_message("agent: qemu's clipboard text of %zu bytes is over the %u byte "
                  "limit; not passed on", size, QS_AGENT_CLIPBOARD_MAX);
        text = NULL;
        size = 0;
    }
    if (!qs_agent_send_msg(a, VD_AGENT_CLIPBOARD,
                  qs_agent_clipboard_body(a->selection, sel,
                                          text ? VD_AGENT_CLIPBOARD_UTF8_TEXT
                                               : VD_AGENT_CLIPBOARD_NONE,
                                          text ? g_bytes_get_data(text, NULL) : NULL,
                                          size))) {
        g_message("agent: clipboard reply dropped: the client's agent queue is full");
    }
}
