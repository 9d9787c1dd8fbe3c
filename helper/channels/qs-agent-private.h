/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the agent's two halves share: the per-client state and the hub's backend (channels-internal). */
#pragma once

#include "channels/qs-agent-channel.h"
#include "wire/qs-agent.h"
#include "channels/qs-agent-guest.h"

#define N_SELECTIONS 3u

/* The hub's backend and which agent serves it now. */
typedef struct {
    QsChannels *hub;
    const QsAgentBackendOps *ops;
    gpointer backend;
    gboolean available;
    gboolean backend_owns[N_SELECTIONS];    /* qemu holds text there */
    QsAgent *current;
} QsAgentBackend;

struct QsAgent {
    QsChannel *ch;
    QsChannels *hub;                /* the key of its backend and monitors sink */
    guint n_heads;                  /* the consoles a monitors config may resize */
    QsAgentBackend *be;             /* NULL: no backend for this hub */
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
};

/* qs-agent-backend.c */
QsAgentBackend *qs_agent_backend_for(QsChannels *hub);

/* qs-agent-channel.c */
GBytes *qs_agent_u32_body(uint32_t v);
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
/* Queues an AGENT_DATA piece (a guest's) toward the client, as tokens allow. */
void qs_agent_push_piece(QsAgent *a, GBytes *piece);
size_t qs_agent_queued_bytes(QsAgent *a);
/* Tells the client the agent came or went (its state starts over). */
void qs_agent_set_connected(QsAgent *a, gboolean connected);

/* qs-agent-guest.c */
QsAgentGuest *qs_agent_guest_for(QsChannels *hub);
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
gboolean qs_agent_has_monitors_sink(QsChannels *hub);
/* A client's VD_AGENT_MONITORS_CONFIG; `error` only for a malformed one. */
void qs_agent_on_monitors(QsAgent *a, const QsAgentMsg *msg, GError **error);
