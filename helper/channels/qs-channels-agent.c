/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The hub's agent services: the helper's clipboard backend, monitors sink and guest agent, kept in the hub's QsAgentHost. */
#include "channels/qs-channels-agent.h"
#include "channels/qs-channels-private.h"

void qs_agent_set_backend(QsChannels *hub, const QsAgentBackendOps *ops,
                          gpointer backend, gboolean available)
{
    qs_agent_host_set_backend(hub->agents, ops, backend, available);
}

void qs_agent_backend_available(QsChannels *hub, gboolean available)
{
    qs_agent_host_backend_available(hub->agents, available);
}

void qs_agent_backend_grab(QsChannels *hub, uint8_t selection)
{
    qs_agent_host_backend_grab(hub->agents, selection);
}

void qs_agent_backend_release(QsChannels *hub, uint8_t selection)
{
    qs_agent_host_backend_release(hub->agents, selection);
}

void qs_agent_backend_request(QsChannels *hub, uint8_t selection)
{
    qs_agent_host_backend_request(hub->agents, selection);
}

void qs_agent_backend_data(QsChannels *hub, uint8_t selection, GBytes *text)
{
    qs_agent_host_backend_data(hub->agents, selection, text);
}

void qs_agent_set_monitors(QsChannels *hub, const QsAgentMonitorsOps *ops, gpointer sink)
{
    qs_agent_host_set_monitors(hub->agents, ops, sink);
}

void qs_agent_monitors_done(QsChannels *hub, gboolean applied)
{
    qs_agent_host_monitors_done(hub->agents, applied);
}

void qs_agent_set_guest(QsChannels *hub, QsAgentGuest *guest)
{
    qs_agent_host_set_guest(hub->agents, guest);
}
