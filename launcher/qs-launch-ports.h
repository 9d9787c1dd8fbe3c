/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The domain's virtio-serial ports with a unix-socket chardev, connected with the launcher's rights for the helper to bridge. */
#pragma once

#include <glib.h>
#include "qs-launch-domain.h"
#include "qs-launch-spawn.h"

/* Connects to each usable port of `info` (qs_domain_port_usable) that qemu
 * listens on, at most QS_SPAWN_MAX_PORTS, into `out`; returns how many. A
 * port skipped or not connectable is logged, with why, and the others go
 * on: a port is no reason not to serve the console. */
guint qs_launch_open_ports(const QsDomainInfo *info, QsSpawnPort *out);
void qs_launch_close_ports(QsSpawnPort *ports, guint n);
/* Listens, for qemu's usb-redir to connect, on the socket path of each
 * usable redirdev of `info` (qs_domain_redirdev_usable), at most
 * QS_SPAWN_MAX_USBREDIR, appending to `out` (which has `n` entries);
 * returns the new count. Each start listens anew: a stale socket at the
 * path is replaced. Skipped ones are logged with why. */
guint qs_launch_open_redirdevs(const QsDomainInfo *info, QsSpawnPort *out, guint n);
/* The domain's first passthrough smartcard, appended to `out` (which has
 * `n` entries): connected to when qemu listens (mode='bind'), listened on
 * when qemu connects; returns the new count. Failing is logged, and the
 * console is served without it. */
guint qs_launch_open_smartcard(const QsDomainInfo *info, QsSpawnPort *out, guint n);
