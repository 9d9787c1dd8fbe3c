/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The port channel's server messages, and the command line's chardev descriptors (--port-fd NAME=FD, --usbredir-fd FD, --smartcard-fd FD). */
#pragma once

#include <glib.h>
#include <stdint.h>

/* Longest port name we take (virtio-serial names are short: libvirt's and
 * spice's are under 32 bytes). */
#define QS_PORT_NAME_MAX 127
/* Ports bridged at most (each a SPICE channel id). */
#define QS_PORTS_MAX 16
/* usbredir channels at most (libvirt's domains have a few redirdevs;
 * spice-gtk opens every usbredir channel offered). */
#define QS_USBREDIR_MAX 8

/* The name spice-gtk's folder sharing (its webdav channel) serves, and
 * the guest agent's port, which is not a port channel. */
#define QS_PORT_WEBDAV "org.spice-space.webdav.0"
#define QS_PORT_AGENT "com.redhat.spice.0"

/* PORT_INIT: u32 name_size (NUL included); u32 offset of the name (9,
 * right after the fixed part); u8 opened; the name, NUL-terminated. */
GBytes *qs_msg_port_init(const char *name, gboolean opened);
/* PORT_EVENT: u8 event (SPICE_PORT_EVENT_OPENED / _CLOSED / _BREAK). */
GBytes *qs_msg_port_event(uint8_t event);

/* "NAME=FD" from --port-fd: NAME of 1..QS_PORT_NAME_MAX characters from
 * [A-Za-z0-9._-], FD a descriptor number (decimal, >= 0). The agent's
 * port is refused, with why. */
gboolean qs_port_spec_parse(const char *text, char **name, int *fd, GError **error);

/* --usbredir-fd's FD: a descriptor number (decimal, >= 0). */
gboolean qs_usbredir_fd_parse(const char *text, int *fd, GError **error);
/* --smartcard-fd's FD: a descriptor number (decimal, >= 0). */
gboolean qs_smartcard_fd_parse(const char *text, int *fd, GError **error);

/* Which SPICE channel carries port `name`: WEBDAV for QS_PORT_WEBDAV (what
 * spice-gtk's folder sharing opens), PORT for any other. */
uint8_t qs_port_channel_type(const char *name);
