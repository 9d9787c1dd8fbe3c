/* SPDX-License-Identifier: GPL-2.0-or-later */
/* What the display plan's actions send at once (surfaces, marks, probes), and the link facts it reads. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>
#include <spice/protocol.h>

/*
 * Everything that decides is the plan's; here a decision becomes bytes.
 * The client's ACK window is honoured by the base channel
 * (qs_channel_can_send) but set large enough never to bind.
 */

gboolean qs_display_send(QsDisplayChannel *dc, uint16_t type, GBytes *payload)
{
    dc->stats.messages++;
    return qs_channel_send(&dc->base, type, payload);
}

void qs_display_link(QsDisplayChannel *dc, QsPlanLink *link)
{
    uint32_t lowat = qs_display_plan_notsent_lowat(dc->plan);

    *link = (QsPlanLink){ 0 };
    link->have_facts = qs_conn_get_link_facts(dc->base.conn, &link->facts);
    if (link->have_facts) {
        dc->stats.bytes_written = link->facts.bytes_written;
    }
    link->conn_queued = qs_conn_get_queued_bytes(dc->base.conn);
    link->sent_bytes = dc->base.sent_bytes;
    link->can_send = qs_channel_can_send(&dc->base);
    if (lowat != dc->notsent_lowat) {
        dc->notsent_lowat = lowat;
        qs_conn_set_notsent_lowat(dc->base.conn, lowat);
    }
}

void qs_display_send_probe(QsDisplayChannel *dc, int64_t now_us)
{
    uint32_t id = qs_channel_ping(&dc->base, now_us);

    qs_display_plan_probe_sent(dc->plan, now_us, id, dc->base.sent_bytes);
    dc->stats.messages++;
}

static void send_surface_create(QsDisplayChannel *dc, const QsPlanAction *a)
{
    qs_display_send(dc, SPICE_MSG_DISPLAY_SURFACE_CREATE,
                    qs_msg_surface_create(0, (uint32_t)a->rect.width, (uint32_t)a->rect.height,
                                          SPICE_SURFACE_FMT_32_xRGB,
                                          SPICE_SURFACE_FLAGS_PRIMARY));
}

static void send_mark(QsDisplayChannel *dc)
{
    uint32_t width, height;

    if (qs_display_plan_surface(dc->plan, &width, &height) &&
        qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_MONITORS_CONFIG)) {
        QsMonitor head = { 0, 0, width, height, 0, 0, 0 };

        qs_display_send(dc, SPICE_MSG_DISPLAY_MONITORS_CONFIG,
                        qs_msg_monitors_config(&head, 1, 1));
    }
    qs_display_send(dc, SPICE_MSG_DISPLAY_MARK, NULL);
}

void qs_display_send_action(QsDisplayChannel *dc, const QsPlanAction *a, int64_t now_us)
{
    switch (a->kind) {
    case QS_PLAN_SURFACE_DESTROY:
        qs_display_send(dc, SPICE_MSG_DISPLAY_SURFACE_DESTROY, qs_msg_surface_destroy(0));
        break;
    case QS_PLAN_SURFACE_CREATE:
        send_surface_create(dc, a);
        break;
    case QS_PLAN_MARK:
        send_mark(dc);
        break;
    case QS_PLAN_PROBE:
        qs_display_send_probe(dc, now_us);
        break;
    default:
        g_return_if_reached();
    }
}
