/* SPDX-License-Identifier: GPL-2.0-or-later */
/* qemu's D-Bus chardevs as bridges and as the guest agent's chardev (qs-helper-chardevs.h). */
#include "qs-helper-chardevs.h"

#include <spice/enums.h>

#include "wire/qs-vmc-msg.h"
#include "display/qs-chardev-names.h"
#include "net/qs-chardev.h"

/* What a dialed chardev's dials go through: the display's chardev. */
typedef struct {
    QsQemuChardev *qc;
    QsChardev *cd;
    GCancellable *cancel;       /* of the registration under way */
} Dial;

static void on_registered(int fd, const GError *error, gboolean gone, gpointer data)
{
    Dial *dl = data;

    g_clear_object(&dl->cancel);
    if (fd >= 0) {
        qs_chardev_dialed(dl->cd, fd);
    } else {
        qs_chardev_dial_failed(dl->cd, error->message, gone);
    }
}

static void dial(QsChardev *cd, gpointer data)
{
    Dial *dl = data;

    dl->cd = cd;
    dl->cancel = g_cancellable_new();
    qs_qemu_chardev_register(dl->qc, dl->cancel, on_registered, dl);
}

static void release(gpointer data)
{
    Dial *dl = data;

    if (dl->cancel) {
        g_cancellable_cancel(dl->cancel);
        g_clear_object(&dl->cancel);
    }
    qs_qemu_chardev_watch_fe_opened(dl->qc, NULL, NULL);
    g_free(dl);
}

/* The agent: the guest closing its port (vdagentd stopped) is seen only
 * here, the connection staying up. Ending it tells the clients the agent
 * went, drops what was queued for the old agent, and a new connection is
 * registered at once, ready for the next agent's announcement. */
static void on_agent_fe_opened(QsQemuChardev *qc, gboolean opened, gpointer data)
{
    Dial *dl = data;

    g_message("agent: the guest %s its port %s", opened ? "opened" : "closed",
              qs_qemu_chardev_get_name(qc));
    if (!opened && dl->cd && qs_chardev_is_open(dl->cd)) {
        qs_chardev_disconnect(dl->cd, "the guest closed its agent port");
    }
}

static QsChardev *dialed_chardev(QsQemuChardev *qc, const char *name, gboolean agent)
{
    static const QsChardevDialer dialer = { dial, release };
    Dial *dl = g_new0(Dial, 1);

    dl->qc = qc;
    dl->cd = qs_chardev_new_dialed(name, &dialer, dl);
    if (agent) {
        qs_qemu_chardev_watch_fe_opened(qc, on_agent_fe_opened, dl);
    }
    return dl->cd;
}

static QsVmcBridge *find_bridge(QsVmcBridge **bridges, guint n, uint8_t type, const char *name)
{
    for (guint i = 0; i < n; i++) {
        if ((type && qs_vmc_bridge_get_channel_type(bridges[i]) == type) ||
            (name && g_str_equal(qs_vmc_bridge_get_name(bridges[i]), name))) {
            return bridges[i];
        }
    }
    return NULL;
}

/* A chardev both on the command line and on qemu's D-Bus display would be
 * served twice or by chance: refused before anything is made. */
static gboolean check_given(QsDisplay *display, QsVmcBridge **bridges, guint n,
                            gboolean agent_fd, GError **error)
{
    for (guint i = 0; i < qs_display_get_n_chardevs(display); i++) {
        QsQemuChardev *qc = qs_display_get_chardev_at(display, i);
        const char *name = qs_qemu_chardev_get_name(qc);
        const char *option = NULL;

        switch (qs_chardev_role_of(name, NULL)) {
        case QS_CHARDEV_ROLE_AGENT:
            option = agent_fd ? "--agent-fd" : NULL;
            break;
        case QS_CHARDEV_ROLE_USBREDIR:
            option = find_bridge(bridges, n, SPICE_CHANNEL_USBREDIR, NULL) ? "--usbredir-fd"
                                                                           : NULL;
            break;
        case QS_CHARDEV_ROLE_SMARTCARD:
            option = find_bridge(bridges, n, SPICE_CHANNEL_SMARTCARD, NULL) ? "--smartcard-fd"
                                                                            : NULL;
            break;
        case QS_CHARDEV_ROLE_PORT:
            option = find_bridge(bridges, n, 0, name) ? "--port-fd" : NULL;
            break;
        case QS_CHARDEV_ROLE_NONE:
            break;
        }
        if (option) {
            g_set_error(error, G_OPTION_ERROR, G_OPTION_ERROR_BAD_VALUE,
                        "%s: given by %s and also found as qemu's D-Bus chardev %s; "
                        "give it one way only", name, option, qs_qemu_chardev_get_path(qc));
            return FALSE;
        }
    }
    return TRUE;
}

static void left_alone(QsQemuChardev *qc, const char *why)
{
    g_message("qemu's D-Bus chardev %s (%s) left alone: %s", qs_qemu_chardev_get_path(qc),
              qs_qemu_chardev_get_name(qc), why);
}

gboolean qs_helper_add_dbus_chardevs(QsDisplay *display, QsVmcBridge **bridges, guint *n,
                                     QsAgentGuest **guest, GError **error)
{
    g_autoptr(GString) offered = g_string_new(NULL);
    guint n_ports = 0, n_usbredir = 0;
    uint8_t next_port_id = 0;

    if (!check_given(display, bridges, *n, *guest != NULL, error)) {
        return FALSE;
    }
    for (guint i = 0; i < *n; i++) {
        uint8_t type = qs_vmc_bridge_get_channel_type(bridges[i]);

        n_ports += type == SPICE_CHANNEL_PORT || type == SPICE_CHANNEL_WEBDAV;
        next_port_id += type == SPICE_CHANNEL_PORT;
    }
    for (guint i = 0; i < qs_display_get_n_chardevs(display); i++) {
        QsQemuChardev *qc = qs_display_get_chardev_at(display, i);
        const char *name = qs_qemu_chardev_get_name(qc);
        const char *path = qs_qemu_chardev_get_path(qc);
        const char *why = NULL;
        g_autofree char *bridge_name = NULL;
        uint8_t type, id;

        switch (qs_chardev_role_of(name, &why)) {
        case QS_CHARDEV_ROLE_NONE:
            left_alone(qc, why);
            continue;
        case QS_CHARDEV_ROLE_AGENT:
            if (*guest) {
                left_alone(qc, "a second agent chardev (the first one serves)");
                continue;
            }
            g_message("agent: the guest's agent on %s serves the clients (qemu's D-Bus chardev "
                      "%s, the guest's port %s now); the emulated agent is off", name, path,
                      qs_qemu_chardev_get_fe_opened(qc) ? "open" : "closed");
            *guest = qs_agent_guest_new(dialed_chardev(qc, name, TRUE));
            continue;
        case QS_CHARDEV_ROLE_USBREDIR:
            if (n_usbredir == QS_USBREDIR_MAX) {
                left_alone(qc, "more usb-redir devices than the usbredir channels offered "
                               "(at most 8)");
                continue;
            }
            type = SPICE_CHANNEL_USBREDIR;
            id = (uint8_t)n_usbredir++;
            bridge_name = g_strdup_printf("usbredir.%u", id);
            break;
        case QS_CHARDEV_ROLE_SMARTCARD:
            if (find_bridge(bridges, *n, SPICE_CHANNEL_SMARTCARD, NULL)) {
                left_alone(qc, "a second smartcard (the channel has one reader)");
                continue;
            }
            type = SPICE_CHANNEL_SMARTCARD;
            id = 0;
            bridge_name = g_strdup("smartcard");
            break;
        case QS_CHARDEV_ROLE_PORT:
        default:
            if (find_bridge(bridges, *n, 0, name)) {
                left_alone(qc, "a second chardev of that name (the first one serves)");
                continue;
            }
            if (n_ports == QS_PORTS_MAX) {
                left_alone(qc, "more ports than the port channels offered (at most 16)");
                continue;
            }
            n_ports++;
            type = qs_port_channel_type(name);
            id = type == SPICE_CHANNEL_WEBDAV ? 0 : next_port_id++;
            bridge_name = g_strdup(name);
            break;
        }
        g_string_append_printf(offered, "%s%s (%s channel %u%s, %s)", offered->len ? ", " : "",
                               bridge_name,
                               type == SPICE_CHANNEL_WEBDAV ? "webdav"
                               : type == SPICE_CHANNEL_PORT ? "port"
                               : type == SPICE_CHANNEL_USBREDIR ? "usbredir" : "smartcard",
                               id, type == SPICE_CHANNEL_SMARTCARD ? ", one reader" : "", path);
        bridges[(*n)++] = qs_vmc_bridge_new(dialed_chardev(qc, bridge_name, FALSE), type, id);
    }
    if (offered->len) {
        g_message("offering qemu's D-Bus chardevs as SPICE channels: %s", offered->str);
    }
    return TRUE;
}
