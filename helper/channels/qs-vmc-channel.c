/* SPDX-License-Identifier: GPL-2.0-or-later */
/* A spicevmc channel (port, webdav) on a QsVmcBridge: PORT_INIT and PORT_EVENT for ports, SPICEVMC_DATA both ways. */
#include "wire/qs-msg.h"
#include "channels/qs-session.h"
#include "channels/qs-vmc-bridge.h"
#include "channels/qs-vmc-channel.h"
#include "wire/qs-vmc-msg.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/*
 * The bytes are the bridge's business; this is the SPICE side. A port's
 * "opened" is qemu's end of the chardev being connected: a socket chardev
 * does not tell whether the guest has the virtio port open (qemu keeps
 * that to its spice chardevs), so the client sees the port opened as long
 * as the helper can reach qemu's chardev. The client's PORT_EVENTs have
 * nowhere to go for the same reason: they are logged.
 */
typedef struct {
    QsChannel base;
    QsVmcBridge *bridge;        /* NULL once detached */
    gboolean port;              /* port or webdav: PORT_INIT / PORT_EVENT */
} QsVmcChannel;

static const char *event_name(uint8_t event)
{
    switch (event) {
    case SPICE_PORT_EVENT_OPENED:
        return "opened";
    case SPICE_PORT_EVENT_CLOSED:
        return "closed";
    case SPICE_PORT_EVENT_BREAK:
        return "sent a break on";
    default:
        return "sent an unknown event on";
    }
}

static gboolean vmc_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsVmcChannel *vc = (QsVmcChannel *)ch;

    (void)error;
    if (!vc->bridge) {
        return TRUE;
    }
    switch (msg->type) {
    case SPICE_MSGC_SPICEVMC_DATA:
        qs_vmc_bridge_from_client(vc->bridge, msg->u.bytes.data, msg->u.bytes.len);
        return TRUE;
    case SPICE_MSGC_PORT_EVENT:
        g_message("%s: the client %s the port", qs_vmc_bridge_get_name(vc->bridge),
                  event_name(msg->u.port_event));
        return TRUE;
    default:
        return TRUE;
    }
}

static gboolean port_parse(uint16_t type, const uint8_t *data, size_t size,
                           QsClientMsg *msg, GError **error)
{
    return qs_vmc_msg_parse(TRUE, type, data, size, msg, error);
}

static gboolean vmc_parse(uint16_t type, const uint8_t *data, size_t size,
                          QsClientMsg *msg, GError **error)
{
    return qs_vmc_msg_parse(FALSE, type, data, size, msg, error);
}

static void vmc_writable(QsChannel *ch)
{
    QsVmcChannel *vc = (QsVmcChannel *)ch;

    if (vc->bridge) {
        qs_vmc_bridge_client_writable(vc->bridge);
    }
}

static void vmc_detached(QsChannel *ch)
{
    QsVmcChannel *vc = (QsVmcChannel *)ch;

    if (vc->bridge) {
        qs_vmc_bridge_detach(vc->bridge, ch);
        vc->bridge = NULL;
    }
}

static const QsChannelClass port_class = {
    .name = "port",
    .parse = port_parse,
    .handle = vmc_handle,
    .writable = vmc_writable,
    .detached = vmc_detached,
};

static const QsChannelClass vmc_class = {
    .name = "spicevmc",
    .parse = vmc_parse,
    .handle = vmc_handle,
    .writable = vmc_writable,
    .detached = vmc_detached,
};

/* From the bridge: qemu's end of the chardev connected or closed. */
static void qemu_state(QsChannel *ch, gboolean open)
{
    QsVmcChannel *vc = (QsVmcChannel *)ch;

    if (vc->port) {
        qs_channel_send(ch, SPICE_MSG_PORT_EVENT,
                        qs_msg_port_event(open ? SPICE_PORT_EVENT_OPENED
                                               : SPICE_PORT_EVENT_CLOSED));
    }
}

QsChannel *qs_vmc_channel_new(QsSession *session, QsConn *conn)
{
    const QsLinkInfo *info = qs_conn_get_link_info(conn);
    QsVmcBridge *bridge = qs_session_bridge(session, info->channel_type, info->channel_id);
    uint8_t type = info->channel_type;
    gboolean port = type == SPICE_CHANNEL_PORT || type == SPICE_CHANNEL_WEBDAV;
    QsVmcChannel *vc = (QsVmcChannel *)qs_channel_new(port ? &port_class : &vmc_class,
                                                      sizeof(QsVmcChannel), session, conn);

    vc->bridge = bridge;
    vc->port = port;
    if (port) {
        qs_channel_send(&vc->base, SPICE_MSG_PORT_INIT,
                        qs_msg_port_init(qs_vmc_bridge_get_name(bridge),
                                         qs_vmc_bridge_is_open(bridge)));
    }
    qs_vmc_bridge_attach(bridge, &vc->base, qemu_state);
    return &vc->base;
}
