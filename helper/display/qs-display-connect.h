/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Reaching qemu's display at startup: the p2p handshake, which qemu on a bus, within bounded waits (display-internal). */
#pragma once

#include <gio/gio.h>

#define DISPLAY_PATH "/org/qemu/Display1"
#define VM_PATH DISPLAY_PATH "/VM"
#define CONSOLE_PREFIX DISPLAY_PATH "/Console_"
#define IFACE_VM "org.qemu.Display1.VM"
#define IFACE_CONSOLE "org.qemu.Display1.Console"
#define AUDIO_PATH DISPLAY_PATH "/Audio"
#define CHARDEV_PREFIX DISPLAY_PATH "/Chardev_"
#define IFACE_AUDIO "org.qemu.Display1.Audio"
#define IFACE_OBJECT_MANAGER "org.freedesktop.DBus.ObjectManager"
#define BUS_NAME "org.qemu"
#define MAX_CONSOLES 64
/* -chardev dbus objects taken at attach (more than any channel list has
 * room for: what is not served is still named in the log). */
#define MAX_CHARDEVS 64

/* The server side of qemu's p2p D-Bus handshake on `fd` (ours), at most
 * `timeout_ms`. */
GDBusConnection *qs_display_connect_p2p(int fd, int timeout_ms, GError **error);
/* Bus mode: the unique name of the qemu whose VM is `want` (its name or
 * UUID; NULL: the only qemu on the bus), at most `timeout_ms`. */
char *qs_display_pick_vm(GDBusConnection *conn, const char *want, int timeout_ms,
                         GError **error);
/* A string in an a{sv} of properties, or NULL. */
char *qs_display_lookup_string(GVariant *props, const char *key);
