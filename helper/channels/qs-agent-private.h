/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent's state, shared by the agent (qs-agent-channel.c) and its parts: the per-client state and its host's (channels-internal). */
#pragma once

#include "channels/qs-agent-channel.h"
#include "wire/qs-agent.h"
#include "channels/qs-agent-guest.h"

#include <spice/vd_agent.h>

/*
 * The agent (qs-agent-channel.c: client messages, its life) uses its parts,
 * which use this header and qs-agent-send.c, never the agent's own
 * functions:
 *   qs-agent-send.c     toward the client: pieces under its tokens, the
 *                       tokens given back, the state reset
 *   qs-agent-backend.c  the host's clipboard backend and its events
 *   qs-agent-resize.c   the host's monitors sink: configs and replies
 *   qs-agent-guest.c    the guest's own agent in place of ours
 */

#define N_SELECTIONS 3u

/* The host's backend and which agent serves it now. */
typedef struct {
    const QsAgentBackendOps *ops;
    gpointer backend;
    gboolean available;
    gboolean backend_owns[N_SELECTIONS];    /* qemu holds text there */
    QsAgent *current;
} QsAgentBackend;

struct QsAgentHost {
    QsAgentBackend *be;             /* NULL: no clipboard backend */
    const QsAgentMonitorsOps *monitors;     /* NULL: no monitors sink */
    gpointer sink;
    QsAgentGuest *guest;            /* NULL: the emulated agent serves */
};

struct QsAgent {
    QsChannel *ch;
    QsAgentHost *host;              /* NULL: it serves nothing */
    guint n_heads;                  /* the consoles a monitors config may resize */
    QsAgentBackend *be;             /* NULL: no backend for its host */
    gboolean connected;             /* what the client was told */
    gboolean started;               /* AGENT_START seen */
    uint64_t client_tokens;         /* pieces we may send */
    uint32_t granted;               /* pieces the client may still send */
    uint32_t consumed;              /* pieces handled, not yet returned */
    QsAgentReader *reader;
    GQueue out;                     /* GBytes pieces waiting for tokens */
    size_t out_bytes;
    gboolean caps_received, caps_sent;
    gboolean selection;             /* both sides: selection headers */
    gboolean client_owns[N_SELECTIONS];
    gboolean fetching[N_SELECTIONS];    /* client asked, backend answering */
    gboolean providing[N_SELECTIONS];   /* backend asked, client answering */
    gboolean reply_cap;             /* the client takes VD_AGENT_REPLY */
    guint replies_owed;             /* monitors configs not yet answered */
    QsAgentGuest *guest;            /* the guest's agent serves, not us */
    QsAgentReader *whole;           /* guest: the client's messages, whole */
    gboolean tokens_held;           /* guest: its queue is full, tokens wait */
    guint xfer_wake;                /* guest: PINGs while a transfer is under way */
    int64_t xfer_last_us;           /* guest: the client's last FILE_XFER message */
};

/* The client's messages the emulated agent reassembles; others are
 * dropped piece by piece. */
static inline gboolean qs_agent_keep_type(uint32_t type)
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

/* qs-agent-send.c */
GBytes *qs_agent_u32_body(uint32_t v);
/* Sends queued pieces while the client has tokens and the connection room. */
void qs_agent_flush(QsAgent *a);
/* Takes `body`. FALSE (nothing queued) when not started or the queue is full. */
gboolean qs_agent_send_msg(QsAgent *a, uint32_t type, GBytes *body);
/* Can this client be told about `sel`? */
gboolean qs_agent_selection_ok(QsAgent *a, uint8_t sel);
void qs_agent_send_grab(QsAgent *a, uint8_t sel);
/* Back to before AGENT_START; pending backend requests are answered "none". */
void qs_agent_reset(QsAgent *a);

/* Counts one AGENT_DATA piece as handled; tokens go back in batches, held
 * while a->tokens_held. */
void qs_agent_return_token(QsAgent *a);
/* Sends the batch held back, if any (tokens_held cleared). */
void qs_agent_release_tokens(QsAgent *a);
/* The client sent a FILE_XFER message: its main channel is woken by PINGs
 * for a while (qs-agent-send.c says why). */
void qs_agent_xfer_seen(QsAgent *a);
/* Queues an AGENT_DATA piece (a guest's) toward the client, as tokens allow. */
void qs_agent_push_piece(QsAgent *a, GBytes *piece);
size_t qs_agent_queued_bytes(QsAgent *a);
/* Tells the client the agent came or went (its state starts over). */
void qs_agent_set_connected(QsAgent *a, gboolean connected);

/* qs-agent-guest.c */
/* The guest agent has spoken on its open port. */
gboolean qs_agent_guest_ready(QsAgentGuest *guest);
/* `a` serves the guest's agent from now (the newest control session). */
void qs_agent_guest_attach(QsAgentGuest *guest, QsAgent *a);
/* `a` goes: the guest agent is told the client disconnected. */
void qs_agent_guest_detach(QsAgentGuest *guest, QsAgent *a);
/* AGENT_START, tokens or room toward the client: reading may resume. */
void qs_agent_guest_steer(QsAgentGuest *guest);
/* A client's AGENT_DATA piece (token already taken). */
gboolean qs_agent_guest_on_data(QsAgent *a, const uint8_t *data, size_t size, GError **error);

/* qs-agent-resize.c */
/* A client's VD_AGENT_MONITORS_CONFIG; `error` only for a malformed one. */
void qs_agent_on_monitors(QsAgent *a, const QsAgentMsg *msg, GError **error);
