/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The emulated agent of a main channel: the client's agent messages (reassembled, under tokens), clipboard to and from the backend, its life; its parts are in qs-agent-private.h. */
#include "channels/qs-agent-private.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>

static void send_caps(QsAgent *a, gboolean request)
{
    uint32_t caps[QS_AGENT_CAP_WORDS] = { 0 };

    caps[0] |= 1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND;
    caps[0] |= 1u << VD_AGENT_CAP_CLIPBOARD_SELECTION;
    /* Clients then refuse file drops themselves. */
    caps[0] |= 1u << VD_AGENT_CAP_FILE_XFER_DISABLED;
    /* Only where a sink can ask qemu for the mode (qs-agent-resize.c). */
    if (a->host && a->host->monitors) {
        caps[0] |= 1u << VD_AGENT_CAP_MONITORS_CONFIG;
        caps[0] |= 1u << VD_AGENT_CAP_REPLY;
        /* Monitor i stays at index i when others are disabled: without
         * it spice-gtk packs the enabled ones, and a lone display 1 would
         * arrive as monitor 0, resizing the wrong console. */
        caps[0] |= 1u << VD_AGENT_CAP_SPARSE_MONITORS_CONFIG;
    }
    qs_agent_send_msg(a, VD_AGENT_ANNOUNCE_CAPABILITIES,
             qs_agent_caps_body(request, caps, QS_AGENT_CAP_WORDS));
    a->caps_sent = TRUE;
}

/* ---- client messages ------------------------------------------------------------- */

static void on_caps(QsAgent *a, const QsAgentMsg *msg, GError **error)
{
    QsAgentCaps caps;
    gboolean first = !a->caps_received;

    if (!qs_agent_parse_caps(msg, &caps, error)) {
        return;
    }
    a->caps_received = TRUE;
    a->selection = qs_agent_has_cap(caps.caps, QS_AGENT_CAP_WORDS,
                                    VD_AGENT_CAP_CLIPBOARD_SELECTION);
    a->reply_cap = qs_agent_has_cap(caps.caps, QS_AGENT_CAP_WORDS, VD_AGENT_CAP_REPLY);
    if (caps.request || !a->caps_sent) {
        send_caps(a, FALSE);
    }
    /* What qemu held before this client came. */
    for (uint8_t sel = 0; first && a->be && sel < N_SELECTIONS; sel++) {
        if (a->be->backend_owns[sel]) {
            qs_agent_send_grab(a, sel);
        }
    }
}

static void on_grab(QsAgent *a, const QsAgentMsg *msg, GError **error)
{
    QsAgentGrab grab;
    gboolean text = FALSE;

    if (!qs_agent_parse_grab(msg, a->selection, &grab, error)) {
        return;
    }
    for (uint32_t i = 0; i < grab.n_types; i++) {
        text |= grab.types[i] == VD_AGENT_CLIPBOARD_UTF8_TEXT;
    }
    if (!a->be) {
        return;
    }
    a->be->backend_owns[grab.selection] = FALSE;
    if (text) {
        a->client_owns[grab.selection] = TRUE;
        a->be->ops->grab(a->be->backend, grab.selection);
    } else if (a->client_owns[grab.selection]) {
        /* Only types qemu cannot take (images): its old text must go. */
        g_debug("agent: client grab of selection %u without text", grab.selection);
        a->client_owns[grab.selection] = FALSE;
        a->be->ops->release(a->be->backend, grab.selection);
    }
}

static void on_request(QsAgent *a, const QsAgentMsg *msg, GError **error)
{
    QsAgentClip req;

    if (!qs_agent_parse_request(msg, a->selection, &req, error)) {
        return;
    }
    if (!a->be || req.type != VD_AGENT_CLIPBOARD_UTF8_TEXT ||
        !a->be->backend_owns[req.selection] || a->fetching[req.selection]) {
        qs_agent_send_msg(a, VD_AGENT_CLIPBOARD,
                 qs_agent_clipboard_body(a->selection, req.selection,
                                         VD_AGENT_CLIPBOARD_NONE, NULL, 0));
        return;
    }
    a->fetching[req.selection] = TRUE;
    a->be->ops->fetch(a->be->backend, req.selection);
}

static void on_clipboard(QsAgent *a, const QsAgentMsg *msg, GError **error)
{
    QsAgentClip clip;
    gboolean text;

    if (!qs_agent_parse_clipboard(msg, a->selection, &clip, error)) {
        return;
    }
    if (!a->providing[clip.selection] || !a->be) {
        g_debug("agent: unrequested clipboard data for selection %u dropped",
                clip.selection);
        return;
    }
    a->providing[clip.selection] = FALSE;
    text = clip.type == VD_AGENT_CLIPBOARD_UTF8_TEXT;
    a->be->ops->provide(a->be->backend, clip.selection, text ? clip.data : NULL,
                        text ? clip.size : 0);
}

static void on_release(QsAgent *a, const QsAgentMsg *msg, GError **error)
{
    uint8_t sel;

    if (!qs_agent_parse_release(msg, a->selection, &sel, error)) {
        return;
    }
    if (a->be && a->client_owns[sel]) {
        a->client_owns[sel] = FALSE;
        a->be->ops->release(a->be->backend, sel);
    }
}

typedef struct {
    QsAgent *agent;
    GError *error;
} Dispatch;

static void on_message(const QsAgentMsg *msg, gpointer user_data)
{
    Dispatch *d = user_data;

    if (d->error) {
        return;         /* the client is being dropped */
    }
    switch (msg->type) {
    case VD_AGENT_ANNOUNCE_CAPABILITIES:
        on_caps(d->agent, msg, &d->error);
        break;
    case VD_AGENT_CLIPBOARD_GRAB:
        on_grab(d->agent, msg, &d->error);
        break;
    case VD_AGENT_CLIPBOARD_REQUEST:
        on_request(d->agent, msg, &d->error);
        break;
    case VD_AGENT_CLIPBOARD:
        on_clipboard(d->agent, msg, &d->error);
        break;
    case VD_AGENT_CLIPBOARD_RELEASE:
        on_release(d->agent, msg, &d->error);
        break;
    case VD_AGENT_MONITORS_CONFIG:
        qs_agent_on_monitors(d->agent, msg, &d->error);
        break;
    default:
        /* DISPLAY_CONFIG, file transfer, MAX_CLIPBOARD...:
         * not implemented by this agent. */
        g_debug("agent: message type %u (%u bytes) not implemented; ignored",
                msg->type, msg->size);
        break;
    }
}

/* Every piece costs the client a token, used or dropped; they go back in
 * batches, so a client that waits for them never stalls. */
static gboolean take_token(QsAgent *a, GError **error)
{
    if (a->granted == 0) {
        g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_PROTOCOL,
                    "main channel: agent data beyond the tokens granted");
        return FALSE;
    }
    a->granted--;
    return TRUE;
}

static gboolean on_data(QsAgent *a, const QsClientMsg *msg, GError **error)
{
    Dispatch d = { a, NULL };

    if (!a->connected || !a->started) {
        g_debug("agent: data while no agent is connected; dropped");
        qs_agent_return_token(a);
        return TRUE;
    }
    if (!qs_agent_reader_feed(a->reader, msg->u.bytes.data, msg->u.bytes.len,
                              on_message, &d, error) || d.error) {
        if (d.error) {
            g_propagate_error(error, d.error);
        }
        g_prefix_error(error, "main channel: malformed agent message: ");
        return FALSE;
    }
    qs_agent_return_token(a);
    return TRUE;
}

gboolean qs_agent_handle(QsAgent *a, const QsClientMsg *msg, GError **error)
{
    switch (msg->type) {
    case SPICE_MSGC_MAIN_AGENT_START:
        if (!a->connected) {
            g_debug("agent: AGENT_START without an agent; ignored");
            return TRUE;
        }
        a->started = TRUE;
        a->client_tokens = msg->u.tokens;
        qs_agent_writable(a);
        return TRUE;
    case SPICE_MSGC_MAIN_AGENT_TOKEN:
        a->client_tokens = MIN(a->client_tokens + msg->u.tokens, (uint64_t)UINT32_MAX);
        qs_agent_writable(a);
        return TRUE;
    case SPICE_MSGC_MAIN_AGENT_DATA:
        if (!take_token(a, error)) {
            return FALSE;
        }
        if (msg->u.bytes.len > QS_AGENT_CHUNK_MAX) {
            g_set_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED,
                        "main channel: agent data piece of %u bytes (limit %u)",
                        msg->u.bytes.len, QS_AGENT_CHUNK_MAX);
            return FALSE;
        }
        return a->guest ? qs_agent_guest_on_data(a, msg->u.bytes.data, msg->u.bytes.len, error)
                        : on_data(a, msg, error);
    default:
        return TRUE;
    }
}

void qs_agent_writable(QsAgent *a)
{
    qs_agent_flush(a);
    if (a->guest) {
        qs_agent_guest_steer(a->guest);
    }
}

/* ---- lifecycle ---------------------------------------------------------------- */

QsAgent *qs_agent_new(QsChannel *ch, QsAgentHost *host, guint n_heads)
{
    QsAgent *a = g_new0(QsAgent, 1);

    a->ch = ch;
    a->host = host;
    a->n_heads = n_heads;
    a->be = host ? host->be : NULL;
    a->granted = QS_AGENT_TOKENS;
    g_queue_init(&a->out);
    a->reader = qs_agent_reader_new(qs_agent_keep_type);
    if (host && host->guest) {
        /* The guest's agent serves; the emulated one steps aside. */
        a->be = NULL;
        qs_agent_guest_attach(host->guest, a);
    } else if (a->be) {
        a->be->current = a;
    }
    return a;
}

void qs_agent_free(QsAgent *a)
{
    if (!a) {
        return;
    }
    qs_agent_reset(a);
    if (a->be && a->be->current == a) {
        a->be->current = NULL;
    }
    if (a->guest) {
        qs_agent_guest_detach(a->guest, a);
    }
    qs_agent_reader_free(a->reader);
    qs_agent_reader_free(a->whole);
    g_free(a);
}

const char *qs_agent_absent_reason(QsAgent *a)
{
    return a->guest ? "the guest's agent has not spoken on its port yet"
                    : "qemu's D-Bus clipboard is not available";
}

gboolean qs_agent_announce_connected(QsAgent *a)
{
    a->connected = a->guest ? qs_agent_guest_ready(a->guest) : a->be && a->be->available;
    return a->connected;
}

QsAgentHost *qs_agent_host_new(void)
{
    return g_new0(QsAgentHost, 1);
}

/* The helper removes what it set before the hub goes; what is left is
 * let go without calling it. */
void qs_agent_host_free(QsAgentHost *host)
{
    if (!host) {
        return;
    }
    qs_agent_host_set_guest(host, NULL);
    if (host->be) {
        if (host->be->current) {
            host->be->current->be = NULL;
        }
        g_free(host->be);
    }
    g_free(host);
}
