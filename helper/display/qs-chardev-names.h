/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's D-Bus chardevs by name: which SPICE channel each name makes, and
 * the order several of one kind are numbered in. Pure. */
#pragma once

#include <glib.h>

/*
 * The names (org.qemu.Display1.Chardev's Name, `-chardev dbus,name=`) and
 * what they become:
 * - com.redhat.spice.0: the guest's agent (the main channel's agent);
 * - org.qemu.usbredir (libvirt's name for every dbus redirdev): a usbredir
 *   channel each, numbered in chardev order;
 * - org.spice-space.smartcard: the smartcard channel (one reader);
 * - a port channel for a name under org.spice-space. (the webdav channel
 *   for org.spice-space.webdav.0, what spice-gtk's folder sharing opens;
 *   the streaming agent's org.spice-space.stream.0 ...) or
 *   org.qemu.console. (org.qemu.console.serial.0, remote-viewer's serial
 *   console), the name being a port name as --port-fd takes it;
 * - anything else is not served: qemu's own D-Bus clients' chardevs
 *   (org.qemu.monitor.qmp.0, org.qemu.monitor.hmp.0: the monitor is not
 *   offered to SPICE clients) and names of no SPICE convention.
 */
#define QS_CHARDEV_NAME_AGENT "com.redhat.spice.0"
#define QS_CHARDEV_NAME_USBREDIR "org.qemu.usbredir"
#define QS_CHARDEV_NAME_SMARTCARD "org.spice-space.smartcard"

typedef enum {
    QS_CHARDEV_ROLE_NONE,       /* left alone */
    QS_CHARDEV_ROLE_AGENT,
    QS_CHARDEV_ROLE_USBREDIR,
    QS_CHARDEV_ROLE_SMARTCARD,
    QS_CHARDEV_ROLE_PORT,
} QsChardevRole;

/* What `name` makes; for NONE, *why (if not NULL) says why in a few
 * words, for the log. */
QsChardevRole qs_chardev_role_of(const char *name, const char **why);

/* Orders chardev object paths (/org/qemu/Display1/Chardev_ID) by id, runs
 * of digits by value: charredir2 before charredir10. A strcmp-like
 * result; equal only for equal strings. */
int qs_chardev_path_compare(const char *a, const char *b);
