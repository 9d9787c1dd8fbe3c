/* SPDX-License-Identifier: GPL-2.0-or-later */
/* PORT_INIT and PORT_EVENT bodies, the NAME=FD descriptors of --port-fd, --usbredir-fd's and --smartcard-fd's FD. */
#include "wire/qs-vmc-msg.h"
#include "wire/qs-wire.h"

#include <limits.h>
#include <string.h>
#include <spice/enums.h>

#define PORT_INIT_FIXED 9u

GBytes *qs_msg_port_init(const char *name, gboolean opened)
{
    gsize len = strlen(name) + 1;
    GByteArray *b = g_byte_array_sized_new((guint)(PORT_INIT_FIXED + len));

    qs_wire_u32(b, (uint32_t)len);
    qs_wire_u32(b, PORT_INIT_FIXED);
    qs_wire_u8(b, opened ? 1 : 0);
    g_byte_array_append(b, (const guint8 *)name, (guint)len);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_msg_port_event(uint8_t event)
{
    return g_bytes_new(&event, 1);
}

static gboolean name_char(char c)
{
    return g_ascii_isalnum(c) || c == '.' || c == '_' || c == '-';
}

/* Decimal digits only, at most INT_MAX. */
static gboolean fd_number(const char *digits, int *fd)
{
    gsize n = strlen(digits);

    if (n == 0 || n > 10 || strspn(digits, "0123456789") != n ||
        g_ascii_strtoull(digits, NULL, 10) > INT_MAX) {
        return FALSE;
    }
    *fd = (int)g_ascii_strtoull(digits, NULL, 10);
    return TRUE;
}

gboolean qs_usbredir_fd_parse(const char *text, int *fd, GError **error)
{
    if (!fd_number(text, fd)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--usbredir-fd '%s': expected a descriptor number", text);
        return FALSE;
    }
    return TRUE;
}

gboolean qs_smartcard_fd_parse(const char *text, int *fd, GError **error)
{
    if (!fd_number(text, fd)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--smartcard-fd '%s': expected a descriptor number", text);
        return FALSE;
    }
    return TRUE;
}

gboolean qs_port_spec_parse(const char *text, char **name, int *fd, GError **error)
{
    const char *eq = strrchr(text, '=');
    const char *digits;
    int v;
    gsize n;

    if (!eq || eq == text) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--port-fd '%s': expected NAME=FD, e.g. %s=5", text, QS_PORT_WEBDAV);
        return FALSE;
    }
    n = (gsize)(eq - text);
    if (n > QS_PORT_NAME_MAX) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--port-fd: a port name of %zu characters; at most %d", n,
                    QS_PORT_NAME_MAX);
        return FALSE;
    }
    for (gsize i = 0; i < n; i++) {
        if (!name_char(text[i])) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--port-fd: the port name has a character other than "
                        "letters, digits, '.', '_' and '-' (at %zu)", i);
            return FALSE;
        }
    }
    digits = eq + 1;
    if (!fd_number(digits, &v)) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--port-fd: '%s' after the port name is not a descriptor number", digits);
        return FALSE;
    }
    if (n == strlen(QS_PORT_AGENT) && memcmp(text, QS_PORT_AGENT, n) == 0) {
        g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                    "--port-fd: %s is the guest agent's port, which is not a port "
                    "channel; give it with --agent-fd FD",
                    QS_PORT_AGENT);
        return FALSE;
    }
    *name = g_strndup(text, n);
    *fd = v;
    return TRUE;
}

uint8_t qs_port_channel_type(const char *name)
{
    return strcmp(name, QS_PORT_WEBDAV) == 0 ? SPICE_CHANNEL_WEBDAV : SPICE_CHANNEL_PORT;
}
