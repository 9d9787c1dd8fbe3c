/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The agent's clipboard backend in the helper: QsClipboard calls one way, its events the other. */
#include "channels/qs-agent-clipboard.h"
#include "channels/qs-agent-channel.h"

/*
 * Kept out of qs-agent-channel.c so that only the helper links display's
 * QsClipboard; tests give the agent a backend of their own.
 */

static void op_grab(gpointer backend, uint8_t selection)
{
    qs_clipboard_grab(backend, selection);
}

static void op_release(gpointer backend, uint8_t selection)
{
    qs_clipboard_release(backend, selection);
}

static void op_fetch(gpointer backend, uint8_t selection)
{
    qs_clipboard_fetch(backend, selection);
}

static void op_provide(gpointer backend, uint8_t selection, const uint8_t *data,
                       size_t size)
{
    qs_clipboard_provide(backend, selection, data, size);
}

static const QsAgentBackendOps ops = {
    .grab = op_grab,
    .release = op_release,
    .fetch = op_fetch,
    .provide = op_provide,
};

static void ev_available(gboolean available, gpointer hub)
{
    qs_agent_backend_available(hub, available);
}

static void ev_grab(uint8_t selection, gpointer hub)
{
    qs_agent_backend_grab(hub, selection);
}

static void ev_release(uint8_t selection, gpointer hub)
{
    qs_agent_backend_release(hub, selection);
}

static void ev_request(uint8_t selection, gpointer hub)
{
    qs_agent_backend_request(hub, selection);
}

static void ev_data(uint8_t selection, GBytes *text, gpointer hub)
{
    qs_agent_backend_data(hub, selection, text);
}

static const QsClipboardFuncs funcs = {
    .available = ev_available,
    .grab = ev_grab,
    .release = ev_release,
    .request = ev_request,
    .data = ev_data,
};

void qs_agent_use_clipboard(QsChannels *hub, QsClipboard *clipboard)
{
    qs_clipboard_set_funcs(clipboard, &funcs, hub);
    qs_agent_set_backend(hub, &ops, clipboard, qs_clipboard_is_available(clipboard));
}

void qs_agent_drop_clipboard(QsChannels *hub, QsClipboard *clipboard)
{
    qs_agent_set_backend(hub, NULL, NULL, FALSE);
    qs_clipboard_set_funcs(clipboard, NULL, NULL);
}
