/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the hub's client agents serve, set by the helper: qemu's clipboard, the monitors sink (resize) and the guest's own agent (qs-channels-agent.c). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-agent-channel.h"
#include "channels/qs-agent-guest.h"

typedef struct QsChannels QsChannels;

/*
 * The hub keeps them for the agents of its sessions (QsAgentHost,
 * qs-agent-channel.h); these calls pass them on.
 */

/* Main context. One backend per hub; ops NULL removes it (before
 * qs_channels_free). `available`: the backend is usable now. */
void qs_agent_set_backend(QsChannels *hub, const QsAgentBackendOps *ops,
                          gpointer backend, gboolean available);

/* From the backend, main context. */
void qs_agent_backend_available(QsChannels *hub, gboolean available);
/* The backend owns `selection` with text / no longer owns it. */
void qs_agent_backend_grab(QsChannels *hub, uint8_t selection);
void qs_agent_backend_release(QsChannels *hub, uint8_t selection);
/* The backend wants the client's text: `provide` answers it. */
void qs_agent_backend_request(QsChannels *hub, uint8_t selection);
/* The text asked for with `fetch`, or NULL. */
void qs_agent_backend_data(QsChannels *hub, uint8_t selection, GBytes *text);

/* Main context; ops NULL removes the sink (before qs_channels_free). */
void qs_agent_set_monitors(QsChannels *hub, const QsAgentMonitorsOps *ops,
                           gpointer sink);
/* `applied`: qemu took the mode (the guest may still keep its own). */
void qs_agent_monitors_done(QsChannels *hub, gboolean applied);

/* Main context: the hub's control sessions use `guest` instead of the
 * emulated agent; NULL removes it (before qs_channels_free). */
void qs_agent_set_guest(QsChannels *hub, QsAgentGuest *guest);
