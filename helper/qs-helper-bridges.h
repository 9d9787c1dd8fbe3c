/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chardev bridges of one helper, from the descriptors the launcher
 * opened: --port-fd (port and webdav channels), --usbredir-fd and
 * --smartcard-fd; and the guest agent's chardev from --agent-fd. */
#pragma once

#include <glib.h>
#include "channels/qs-agent-guest.h"
#include "channels/qs-vmc-bridge.h"

/* Fills `bridges` (room for QS_PORTS_MAX + QS_USBREDIR_MAX + 1) and logs one
 * line saying what clients will be offered; on error the bridges made so
 * far are in `bridges[0..*n)` for qs_helper_free_bridges(). */
gboolean qs_helper_make_bridges(char **port_fds, char **usbredir_fds, const char *smartcard_fd,
                                QsVmcBridge **bridges, guint *n, GError **error);
void qs_helper_free_bridges(QsVmcBridge **bridges, guint n);
/* The guest's agent on the chardev socket `agent_fd` (--agent-fd), one
 * line saying so. */
QsAgentGuest *qs_helper_make_guest_agent(int agent_fd, GError **error);
