/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Wires qemu's clipboard (display's QsClipboard) to the agent of the hub's client. */
#pragma once

#include "channels/qs-channels-agent.h"
#include "display/qs-clipboard.h"

/* Main context, before qs_clipboard_start. */
void qs_agent_use_clipboard(QsChannels *hub, QsClipboard *clipboard);
/* Before qs_channels_free and qs_clipboard_free. */
void qs_agent_drop_clipboard(QsChannels *hub, QsClipboard *clipboard);
