/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The host's clipboard backend: which agent serves it, and its events passed to that client. */
#include "channels/qs-agent-private.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>

void qs_agent_host_set_backend(QsAgentHost *host, const QsAgentBackendOps *ops,
                               gpointer backend, gboolean available)
{
    QsAgentBackend *be = g_steal_pointer(&host->be);

    if (be) {
        if (be->current) {
            qs_agent_reset(be->current);
            be->current->be = NULL;
        }
        g_free(be);
    }
    if (!ops) {
        return;
    }
    be = g_new0(QsAgentBackend, 1);
    be->ops = ops;
    be->backend = backend;
    be->available = available;
    host->be = be;
}

/* The host's live agent, if its channel is still in a session. */
static QsAgent *live_agent(QsAgentHost *host, QsAgentBackend **ret_be)
{
    QsAgentBackend *be = host->be;

    *ret_be = be;
    if (!be || !be->current || !be->current->ch->session) {
        return NULL;
    }
    return be->current;
}

void qs_agent_host_backend_available(QsAgentHost *host, gboolean available)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(host, &be);

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

void qs_agent_host_backend_grab(QsAgentHost *host, uint8_t sel)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(host, &be);

    if (!be || sel >= N_SELECTIONS) {
        return;
    }
    be->backend_owns[sel] = TRUE;
    if (a) {
        a->client_owns[sel] = FALSE;
        qs_agent_send_grab(a, sel);
    }
}

void qs_agent_host_backend_release(QsAgentHost *host, uint8_t sel)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(host, &be);

    if (!be || sel >= N_SELECTIONS || !be->backend_owns[sel]) {
        return;
    }
    be->backend_owns[sel] = FALSE;
    if (a && a->caps_received && qs_agent_selection_ok(a, sel)) {
        qs_agent_send_msg(a, VD_AGENT_CLIPBOARD_RELEASE, qs_agent_release_body(a->selection, sel));
    }
}

void qs_agent_host_backend_request(QsAgentHost *host, uint8_t sel)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(host, &be);

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

void qs_agent_host_backend_data(QsAgentHost *host, uint8_t sel, GBytes *text)
{
    QsAgentBackend *be;
    QsAgent *a = live_agent(host, &be);
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
