/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The emulated agent of a main channel: tokens both ways, reassembly, clipboard to and from the backend. */
#include "channels/qs-agent-private.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>

/* Bytes of AGENT_DATA waiting for client tokens; one clipboard and some. */
#define OUT_MAX (QS_AGENT_CLIPBOARD_MSG_MAX + 65536u)
/* Tokens are returned in batches, once this many pieces were consumed. */
#define TOKEN_BATCH (QS_AGENT_TOKENS / 2)

/* ---- sending ---------------------------------------------------------------- */

GBytes *qs_agent_u32_body(uint32_t v)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u32(b, v);
    return g_byte_array_free_to_bytes(b);
}

static void flush(QsAgent *a)
{
    while (a->client_tokens > 0 && !g_queue_is_empty(&a->out) &&
           qs_channel_can_send(a->ch)) {
        GBytes *piece = g_queue_pop_head(&a->out);

        a->out_bytes -= g_bytes_get_size(piece);
        a->client_tokens--;
        qs_channel_send(a->ch, SPICE_MSG_MAIN_AGENT_DATA, piece);
    }
}

gboolean qs_agent_send_msg(QsAgent *a, uint32_t type, GBytes *body)
{
    size_t size = g_bytes_get_size(body);

    if (!a->started || a->out_bytes + size > OUT_MAX) {
        g_bytes_unref(body);
        return FALSE;
    }
    a->out_bytes += QS_AGENT_HEADER_SIZE + size;
    qs_agent_build(type, g_bytes_get_data(body, NULL), size, &a->out);
    g_bytes_unref(body);
    flush(a);
    return TRUE;
}

gboolean qs_agent_selection_ok(QsAgent *a, uint8_t sel)
{
    return sel < N_SELECTIONS &&
           (sel == VD_AGENT_CLIPBOARD_SELECTION_CLIPBOARD || a->selection);
}

void qs_agent_send_grab(QsAgent *a, uint8_t sel)
{
    uint32_t text = VD_AGENT_CLIPBOARD_UTF8_TEXT;

    if (a->caps_received && qs_agent_selection_ok(a, sel)) {
        qs_agent_send_msg(a, VD_AGENT_CLIPBOARD_GRAB, qs_agent_grab_body(a->selection, sel, &text, 1));
    }
}

static void send_caps(QsAgent *a, gboolean request)
{
    uint32_t caps[QS_AGENT_CAP_WORDS] = { 0 };

    caps[0] |= 1u << VD_AGENT_CAP_CLIPBOARD_BY_DEMAND;
    caps[0] |= 1u << VD_AGENT_CAP_CLIPBOARD_SELECTION;
    /* Clients then refuse file drops themselves. */
    caps[0] |= 1u << VD_AGENT_CAP_FILE_XFER_DISABLED;
    /* Only where a sink can ask qemu for the mode (qs-agent-resize.c). */
    if (qs_agent_has_monitors_sink(a->hub)) {
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

static gboolean keep_type(uint32_t type)
{
    switch (type) {
    case VD_AGENT_ANNOUNCE_CAPABILITIES:
    case VD_AGENT_CLIPBOARD_GRAB:
    case VD_AGENT_CLIPBOARD_REQUEST:
    case VD_AGENT_CLIPBOARD:
    case VD_AGENT_CLIPBOARD_RELEASE:
    case VD_AGENT_MONITORS_CONFIG:
        return TRUE;
    default:
        return FALSE;
    }
}

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

void qs_agent_release_tokens(QsAgent *a)
{
    a->tokens_held = FALSE;
    if (a->consumed >= TOKEN_BATCH) {
        qs_channel_send(a->ch, SPICE_MSG_MAIN_AGENT_TOKEN, qs_agent_u32_body(a->consumed));
        a->granted += a->consumed;
        a->consumed = 0;
    }
}

void qs_agent_return_token(QsAgent *a)
{
    a->consumed++;
    if (!a->tokens_held) {
        qs_agent_release_tokens(a);
    }
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
    flush(a);
    if (a->guest) {
        qs_agent_guest_steer(a->guest);
    }
}

void qs_agent_push_piece(QsAgent *a, GBytes *piece)
{
    a->out_bytes += g_bytes_get_size(piece);
    g_queue_push_tail(&a->out, piece);
    flush(a);
}

size_t qs_agent_queued_bytes(QsAgent *a)
{
    /* Ours only: flush() moves pieces on while the connection can take
     * them, and its writable callback (qs_agent_writable) comes when it can
     * again, so this queue empties whenever the client reads. */
    return a->out_bytes;
}

void qs_agent_set_connected(QsAgent *a, gboolean connected)
{
    qs_agent_reset(a);
    /* Tokens held for a guest queue that went: the client gets them back. */
    qs_agent_release_tokens(a);
    a->connected = connected;
    if (connected) {
        qs_channel_send(a->ch, SPICE_MSG_MAIN_AGENT_CONNECTED, NULL);
    } else {
        qs_channel_send(a->ch, SPICE_MSG_MAIN_AGENT_DISCONNECTED, qs_agent_u32_body(0));
    }
}

/* ---- lifecycle ---------------------------------------------------------------- */

void qs_agent_reset(QsAgent *a)
{
    qs_agent_reader_free(a->reader);
    a->reader = qs_agent_reader_new(keep_type);
    if (a->whole) {
        qs_agent_reader_free(a->whole);
        a->whole = qs_agent_reader_new_whole(QS_AGENT_CLIPBOARD_MSG_MAX);
    }
    a->tokens_held = FALSE;
    g_queue_clear_full(&a->out, (GDestroyNotify)g_bytes_unref);
    a->out_bytes = 0;
    a->started = FALSE;
    a->caps_received = a->caps_sent = a->selection = a->reply_cap = FALSE;
    a->replies_owed = 0;
    for (guint i = 0; i < N_SELECTIONS; i++) {
        if (a->providing[i] && a->be) {
            a->be->ops->provide(a->be->backend, (uint8_t)i, NULL, 0);
        }
        /* What this client offered cannot be fetched any more: qemu must
         * not keep offering it to the guest (spice-server tells the guest
         * agent CLIENT_DISCONNECTED, which releases such grabs). */
        if (a->client_owns[i] && a->be && a->be->available) {
            a->be->ops->release(a->be->backend, (uint8_t)i);
        }
        a->client_owns[i] = a->fetching[i] = FALSE;
        a->providing[i] = FALSE;
    }
}

QsAgent *qs_agent_new(QsChannel *ch, QsChannels *hub, guint n_heads)
{
    QsAgent *a = g_new0(QsAgent, 1);

    a->ch = ch;
    a->hub = hub;
    a->n_heads = n_heads;
    a->be = qs_agent_backend_for(hub);
    a->granted = QS_AGENT_TOKENS;
    g_queue_init(&a->out);
    a->reader = qs_agent_reader_new(keep_type);
    if (hub && qs_agent_guest_for(hub)) {
        /* The guest's agent serves; the emulated one steps aside. */
        a->be = NULL;
        qs_agent_guest_attach(qs_agent_guest_for(hub), a);
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
