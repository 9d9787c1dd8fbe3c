/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent we emulate on the main channel, the clipboard backend it bridges to (qemu's) and the monitors sink (resize). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-channel.h"
#include "wire/qs-agent.h"

typedef struct QsAgentGuest QsAgentGuest;

/*
 * The helper plays the guest agent toward the SPICE client (spice-protocol.md
 * §6): it answers capabilities and carries clipboard traffic to a backend,
 * qemu's org.qemu.Display1.Clipboard in the helper (qs-agent-clipboard.c), a
 * fake in tests. Text only: VD_AGENT_CLIPBOARD_UTF8_TEXT is the one type,
 * since qemu's D-Bus clipboard knows only "text/plain;charset=utf-8".
 * Selections are 0 (CLIPBOARD), 1 (PRIMARY), 2 (SECONDARY) on both sides.
 */
typedef struct {
    /* The client owns `selection` with text. */
    void (*grab)(gpointer backend, uint8_t selection);
    void (*release)(gpointer backend, uint8_t selection);
    /* The client wants the backend's text: answered by qs_agent_backend_data. */
    void (*fetch)(gpointer backend, uint8_t selection);
    /* The answer to qs_agent_backend_request, exactly once per request;
     * data NULL: nothing to give. */
    void (*provide)(gpointer backend, uint8_t selection, const uint8_t *data,
                    size_t size);
} QsAgentBackendOps;

/*
 * Monitors configs (resize): the client's monitor i is head i (display
 * channel i, the i-th served console), as spice-gtk numbers the displays
 * of single-monitor display channels by channel id. Each enabled monitor of
 * a head, checked, goes to a sink that asks qemu for that mode
 * (Console.SetUIInfo in the helper, wired by main.c); a disabled one leaves
 * its head as it is. The sink answers with qs_agent_monitors_done, later
 * or at once; the client is then sent VD_AGENT_REPLY, one per config. With
 * no sink the agent does not announce VD_AGENT_CAP_MONITORS_CONFIG and
 * refuses configs.
 */
typedef struct {
    void (*configure)(gpointer sink, guint head, const QsAgentMonitor *monitor);
} QsAgentMonitorsOps;

/* Channels-internal: what the agents of one hub serve (its clipboard
 * backend, its monitors sink, the guest's agent), and which of them serves
 * the backend now. The hub owns it (qs-channels-agent.h is its side);
 * NULL for an agent that serves nothing (a view-only client's). */
typedef struct QsAgentHost QsAgentHost;

QsAgentHost *qs_agent_host_new(void);
void qs_agent_host_free(QsAgentHost *host);
/* The hub's calls of the same names (qs-channels-agent.h), on its host. */
void qs_agent_host_set_backend(QsAgentHost *host, const QsAgentBackendOps *ops,
                               gpointer backend, gboolean available);
void qs_agent_host_backend_available(QsAgentHost *host, gboolean available);
void qs_agent_host_backend_grab(QsAgentHost *host, uint8_t selection);
void qs_agent_host_backend_release(QsAgentHost *host, uint8_t selection);
void qs_agent_host_backend_request(QsAgentHost *host, uint8_t selection);
void qs_agent_host_backend_data(QsAgentHost *host, uint8_t selection, GBytes *text);
void qs_agent_host_set_monitors(QsAgentHost *host, const QsAgentMonitorsOps *ops,
                                gpointer sink);
void qs_agent_host_monitors_done(QsAgentHost *host, gboolean applied);
void qs_agent_host_set_guest(QsAgentHost *host, QsAgentGuest *guest);

/* Channels-internal: one per main channel. */
typedef struct QsAgent QsAgent;

/* What INIT grants the client for AGENT_DATA (spice-server's
 * REDS_AGENT_WINDOW_SIZE). */
#define QS_AGENT_TOKENS 10u

/* Becomes its host's current agent (a newer main channel replaces it);
 * the hub makes it for each main channel. */
QsAgent *qs_agent_new(QsChannel *ch, QsAgentHost *host, guint n_heads);
void qs_agent_free(QsAgent *agent);
/* For MAIN_INIT.agent_connected; the agent remembers what it told. */
gboolean qs_agent_announce_connected(QsAgent *agent);
/* Why qs_agent_announce_connected said no, for the log. */
const char *qs_agent_absent_reason(QsAgent *agent);
/* AGENT_START, AGENT_TOKEN, AGENT_DATA; FALSE + error drops the client. */
gboolean qs_agent_handle(QsAgent *agent, const QsClientMsg *msg, GError **error);
/* The connection has room again. */
void qs_agent_writable(QsAgent *agent);
