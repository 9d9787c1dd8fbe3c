/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent's way to the client: agent messages as AGENT_DATA pieces under the client's tokens, the client's tokens given back, and the state reset when the agent comes or goes. */
#include "channels/qs-agent-private.h"
#include "wire/qs-wire.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <spice/vd_agent.h>

/* Bytes of AGENT_DATA waiting for client tokens; one clipboard and some. */
#define OUT_MAX (QS_AGENT_CLIPBOARD_MSG_MAX + 65536u)
/* Tokens are returned in batches, once this many pieces were consumed. */
#define TOKEN_BATCH (QS_AGENT_TOKENS / 2)

/*
 * spice-gtk queues a cancelled or failed file transfer's STATUS without
 * waking its main channel (src/channel-main.c,
 * file_transfer_operation_task_finished): it goes out only when a message
 * from us next wakes that channel. Our token batches often end before it,
 * so the guest's agent would wait with the transfer's file half written
 * and nothing more to come. While a client's transfer is under way (a
 * FILE_XFER message from it in the last XFER_QUIET_US), its main channel
 * gets a PING each XFER_WAKE_MS, so such a message waits at most that.
 */
#define XFER_WAKE_MS 500
#define XFER_QUIET_US (5 * G_USEC_PER_SEC)

GBytes *qs_agent_u32_body(uint32_t v)
{
    GByteArray *b = g_byte_array_sized_new(4);

    qs_wire_u32(b, v);
    return g_byte_array_free_to_bytes(b);
}

void qs_agent_flush(QsAgent *a)
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
    qs_agent_flush(a);
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

static gboolean on_xfer_wake(gpointer data)
{
    QsAgent *a = data;
    int64_t now = g_get_monotonic_time();

    if (now - a->xfer_last_us > XFER_QUIET_US) {
        a->xfer_wake = 0;
        return G_SOURCE_REMOVE;
    }
    qs_channel_ping(a->ch, now);
    return G_SOURCE_CONTINUE;
}

void qs_agent_xfer_seen(QsAgent *a)
{
    a->xfer_last_us = g_get_monotonic_time();
    if (!a->xfer_wake) {
        a->xfer_wake = g_timeout_add(XFER_WAKE_MS, on_xfer_wake, a);
    }
}

void qs_agent_push_piece(QsAgent *a, GBytes *piece)
{
    a->out_bytes += g_bytes_get_size(piece);
    g_queue_push_tail(&a->out, piece);
    qs_agent_flush(a);
}

size_t qs_agent_queued_bytes(QsAgent *a)
{
    /* Ours only: qs_agent_flush() moves pieces on while the connection can take
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

void qs_agent_reset(QsAgent *a)
{
    qs_agent_reader_free(a->reader);
    a->reader = qs_agent_reader_new(qs_agent_keep_type);
    if (a->whole) {
        qs_agent_reader_free(a->whole);
        a->whole = qs_agent_reader_new_whole(QS_AGENT_CLIPBOARD_MSG_MAX);
    }
    a->tokens_held = FALSE;
    g_clear_handle_id(&a->xfer_wake, g_source_remove);
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
