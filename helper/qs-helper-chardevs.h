/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's D-Bus chardevs (-chardev dbus) as the chardevs of the bridges and
 * of the guest's agent, beside those the command line gave as
 * descriptors (qs-helper-bridges.h). */
#pragma once

#include <glib.h>

#include "channels/qs-agent-guest.h"
#include "channels/qs-vmc-bridge.h"
#include "display/qs-display.h"

/*
 * After attach: for each of the display's chardevs whose name makes a
 * channel (display/qs-chardev-names.h) a dialed QsChardev, registered
 * with qemu when its user wants a connection. Bridges are appended to
 * `bridges[*n]` (room for QS_PORTS_MAX + QS_USBREDIR_MAX + 1); the agent's
 * chardev becomes *guest. One line says what is offered, one per chardev
 * left alone says why. Errors, before anything is made: a name the
 * command line gave too (--port-fd NAME, --agent-fd for the agent,
 * --usbredir-fd or --smartcard-fd beside qemu's chardevs of that kind).
 * The chardevs must not outlive the display.
 */
gboolean qs_helper_add_dbus_chardevs(QsDisplay *display, QsVmcBridge **bridges, guint *n,
                                     QsAgentGuest **guest, GError **error);
