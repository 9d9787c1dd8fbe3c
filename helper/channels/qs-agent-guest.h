/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The guest's own agent (spice-vdagent on com.redhat.spice.0) behind the main channel, in place of the emulated one. */
#pragma once

#include <glib.h>

#include "net/qs-chardev.h"

typedef struct QsAgentGuest QsAgentGuest;

/*
 * With a guest agent the main channel's agent messages pass between the
 * client and the guest's virtio port, framed in VDIChunkHeaders there
 * (qs-agent-chunk.h): capabilities, clipboard of any type, file transfer,
 * monitors configs are the guest agent's business, not ours. The client is
 * told the agent is connected once the guest agent has spoken on its port
 * (spice-vdagentd announces its capabilities when it opens the port) and
 * disconnected when the chardev closes or the guest breaks the framing.
 *
 * Bounds: toward the client, the port is read only while the client's
 * queue of agent pieces is under QS_AGENT_GUEST_CLIENT_QUEUE (and always
 * while no client takes them: they are dropped, as spice-server does).
 * Toward the guest, client messages are reassembled whole (at most
 * QS_AGENT_CLIPBOARD_MSG_MAX) and the client's tokens come back only while
 * the chardev's queue is under QS_AGENT_GUEST_QUEUE.
 */
#define QS_AGENT_GUEST_CLIENT_QUEUE (64u * 1024u)
#define QS_AGENT_GUEST_QUEUE (256u * 1024u)

/* Takes the chardev. */
QsAgentGuest *qs_agent_guest_new(QsChardev *chardev);
void qs_agent_guest_free(QsAgentGuest *guest);
G_DEFINE_AUTOPTR_CLEANUP_FUNC(QsAgentGuest, qs_agent_guest_free)
