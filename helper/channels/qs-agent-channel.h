/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent we emulate on the main channel, the clipboard backend it bridges to (qemu's) and the monitors sink (resize). */
#pragma once

#include <glib.h>
#include <stdint.h>

#include "channels/qs-channel.h"
#include "wire/qs-agent.h"

/* The hub (qs-channels.h), to the agent only the key under which main.c
 * registers the clipboard backend and the monitors sink; never called. */
typedef struct QsChannels QsChannels;

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

/* Main context; ops NULL removes the sink (before qs_channels_free). */
void qs_agent_set_monitors(QsChannels *hub, const QsAgentMonitorsOps *ops,
                           gpointer sink);
/* `applied`: qemu took the mode (the guest may still keep its own). */
void qs_agent_monitors_done(QsChannels *hub, gboolean applied);

/* Channels-internal: one per main channel. */
typedef struct QsAgent QsAgent;

/* What INIT grants the client for AGENT_DATA (spice-server's
 * REDS_AGENT_WINDOW_SIZE). */
#define QS_AGENT_TOKENS 10u

/* Becomes the hub's current agent (a newer main channel replaces it);
 * the hub makes it for each main channel. */
QsAgent *qs_agent_new(QsChannel *ch, QsChannels *hub, guint n_heads);
void qs_agent_free(QsAgent *agent);
/* For MAIN_INIT.agent_connected; the agent remembers what it told. */
gboolean qs_agent_announce_connected(QsAgent *agent);
/* Why qs_agent_announce_connected said no, for the log. */
const char *qs_agent_absent_reason(QsAgent *agent);
/* AGENT_START, AGENT_TOKEN, AGENT_DATA; FALSE + error drops the client. */
gboolean qs_agent_handle(QsAgent *agent, const QsClientMsg *msg, GError **error);
/* The connection has room again. */
void qs_agent_writable(QsAgent *agent);
