/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The chardev bridges (qs-helper-bridges.h). */

#include <spice/enums.h>
#include "wire/qs-vmc-msg.h"
#include "net/qs-chardev.h"
#include "qs-helper-bridges.h"

/* One bridge per --port-fd, on the descriptors the launcher opened, and
 * one line saying what the client will be offered. */
gboolean qs_helper_make_bridges(char **port_fds, char **usbredir_fds, const char *smartcard_fd,
                                QsVmcBridge **bridges, guint *n, GError **error)
{
    g_autoptr(GString) offered = g_string_new(NULL);
    uint8_t next_port_id = 0;

    *n = 0;
    for (char **spec = port_fds; spec && *spec; spec++) {
        g_autofree char *name = NULL;
        QsChardev *cd;
        uint8_t type, id;
        int fd;

        if (!qs_port_spec_parse(*spec, &name, &fd, error)) {
            return FALSE;
        }
        if (*n == QS_PORTS_MAX) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--port-fd: more than %d ports", QS_PORTS_MAX);
            return FALSE;
        }
        for (guint i = 0; i < *n; i++) {
            if (g_str_equal(qs_vmc_bridge_get_name(bridges[i]), name)) {
                g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                            "--port-fd: port %s given twice", name);
                return FALSE;
            }
        }
        if (!(cd = qs_chardev_new(name, fd, error))) {
            return FALSE;
        }
        type = qs_port_channel_type(name);
        id = type == SPICE_CHANNEL_WEBDAV ? 0 : next_port_id++;
        g_string_append_printf(offered, "%s%s (%s channel %u, qemu's end %s)",
                               offered->len ? ", " : "", name,
                               type == SPICE_CHANNEL_WEBDAV ? "webdav" : "port", id,
                               qs_chardev_is_listening(cd) ? "connects to us"
                               : "connected");
        bridges[(*n)++] = qs_vmc_bridge_new(cd, type, id);
    }
    for (char **spec = usbredir_fds; spec && *spec; spec++) {
        uint8_t id = (uint8_t)(spec - usbredir_fds);
        g_autofree char *name = g_strdup_printf("usbredir.%u", id);
        QsChardev *cd;
        int fd;

        if (!qs_usbredir_fd_parse(*spec, &fd, error)) {
            return FALSE;
        }
        if (id == QS_USBREDIR_MAX) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--usbredir-fd: more than %d usb-redir devices", QS_USBREDIR_MAX);
            return FALSE;
        }
        if (!(cd = qs_chardev_new(name, fd, error))) {
            return FALSE;
        }
        if (!qs_chardev_is_listening(cd)) {
            /* qemu's usb-redir says hello once per chardev connection, and
             * a connected socket cannot be opened again for the next client. */
            qs_chardev_free(cd);
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "--usbredir-fd %d: the descriptor is connected, not listening: "
                        "qemu's usb-redir needs a fresh chardev connection for each "
                        "client, so qemu must connect to a socket we listen on "
                        "(-chardev socket,server=off,reconnect=1; libvirt's <source "
                        "mode='connect'> with <reconnect enabled='yes'>)", fd);
            return FALSE;
        }
        g_string_append_printf(offered, "%s%s (usbredir channel %u, qemu's end connects to us "
                               "while a client has the channel)",
                               offered->len ? ", " : "", name, id);
        bridges[(*n)++] = qs_vmc_bridge_new(cd, SPICE_CHANNEL_USBREDIR, id);
    }
    if (smartcard_fd) {
        QsChardev *cd;
        int fd;

        /* One reader: libvirt gives a domain one passthrough smartcard per
         * CCID controller, and spice-gtk adds its readers to channel 0. */
        if (!qs_smartcard_fd_parse(smartcard_fd, &fd, error) ||
            !(cd = qs_chardev_new("smartcard", fd, error))) {
            return FALSE;
        }
        g_string_append_printf(offered, "%ssmartcard (smartcard channel 0, one reader, "
                               "qemu's end %s)", offered->len ? ", " : "",
                               qs_chardev_is_listening(cd) ? "connects to us" : "connected");
        bridges[(*n)++] = qs_vmc_bridge_new(cd, SPICE_CHANNEL_SMARTCARD, 0);
    }
    if (*n) {
        g_message("offering qemu's chardevs as SPICE channels: %s", offered->str);
    }
    return TRUE;
}

QsAgentGuest *qs_helper_make_guest_agent(int agent_fd, GError **error)
{
    QsChardev *cd = qs_chardev_new(QS_PORT_AGENT, agent_fd, error);

    if (!cd) {
        g_prefix_error(error, "--agent-fd: ");
        return NULL;
    }
    g_message("agent: the guest's agent on com.redhat.spice.0 serves the clients "
              "(qemu's end %s); the emulated agent is off",
              qs_chardev_is_listening(cd) ? "connects to us" : "connected");
    return qs_agent_guest_new(cd);
}

void qs_helper_free_bridges(QsVmcBridge **bridges, guint n)
{
    for (guint i = 0; i < n; i++) {
        qs_vmc_bridge_free(bridges[i]);
    }
}

