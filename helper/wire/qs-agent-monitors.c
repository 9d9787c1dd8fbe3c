/* SPDX-License-Identifier: GPL-2.0-or-later */
/* VDAgent monitors configs from the client: structure, value bounds, and the reply (pure). */
#include "wire/qs-agent.h"
#include "wire/qs-wire.h"

#include <spice/vd_agent.h>
#include <string.h>

#define HEADER_SIZE 8u
#define MON_SIZE 20u
#define MM_SIZE 4u
#define KNOWN_FLAGS (VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS | \
                     VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE)

gboolean qs_agent_parse_monitors(const QsAgentMsg *msg, QsAgentMonitors *mon,
                                 GError **error)
{
    uint32_t n, flags, need;
    gboolean mm;

    if (!msg->kept || msg->size < HEADER_SIZE) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "agent MONITORS_CONFIG message of %u bytes, needs %u",
                    msg->size, HEADER_SIZE);
        return FALSE;
    }
    n = qs_wire_get_u32(msg->data);
    flags = qs_wire_get_u32(msg->data + 4);
    if (n > QS_AGENT_MONITORS_MAX) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_TOO_BIG,
                    "agent MONITORS_CONFIG with %u monitors (limit %u)", n,
                    QS_AGENT_MONITORS_MAX);
        return FALSE;
    }
    mm = (flags & VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE) != 0;
    need = HEADER_SIZE + n * (MON_SIZE + (mm ? MM_SIZE : 0));
    if (msg->size < need) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "agent MONITORS_CONFIG of %u monitors in %u bytes, needs %u",
                    n, msg->size, need);
        return FALSE;
    }
    memset(mon, 0, sizeof(*mon));
    /* Unknown flags belong to newer clients; what they add is ignored. */
    mon->flags = flags & KNOWN_FLAGS;
    mon->n_monitors = n;
    for (uint32_t i = 0; i < n; i++) {
        const uint8_t *p = msg->data + HEADER_SIZE + i * MON_SIZE;
        QsAgentMonitor *m = &mon->monitors[i];

        m->height = qs_wire_get_u32(p);
        m->width = qs_wire_get_u32(p + 4);
        m->depth = qs_wire_get_u32(p + 8);
        if (flags & VD_AGENT_CONFIG_MONITORS_FLAG_USE_POS) {
            m->x = (int32_t)qs_wire_get_u32(p + 12);
            m->y = (int32_t)qs_wire_get_u32(p + 16);
        }
        if (mm) {
            const uint8_t *q = msg->data + HEADER_SIZE + n * MON_SIZE + i * MM_SIZE;

            m->height_mm = qs_wire_get_u16(q);
            m->width_mm = qs_wire_get_u16(q + 2);
        }
    }
    return TRUE;
}

gboolean qs_agent_monitor_check(const QsAgentMonitor *m, GError **error)
{
    if (m->width == 0 && m->height == 0) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "the monitor is disabled (0x0)");
        return FALSE;
    }
    if (m->width < QS_AGENT_MONITOR_MIN || m->width > QS_AGENT_MONITOR_MAX ||
        m->height < QS_AGENT_MONITOR_MIN || m->height > QS_AGENT_MONITOR_MAX) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "monitor size %ux%u outside %u..%u", m->width, m->height,
                    QS_AGENT_MONITOR_MIN, QS_AGENT_MONITOR_MAX);
        return FALSE;
    }
    if (m->x < -QS_AGENT_MONITOR_POS_MAX || m->x > QS_AGENT_MONITOR_POS_MAX ||
        m->y < -QS_AGENT_MONITOR_POS_MAX || m->y > QS_AGENT_MONITOR_POS_MAX) {
        g_set_error(error, QS_AGENT_ERROR, QS_AGENT_ERROR_MALFORMED,
                    "monitor position %d,%d beyond +-%d", m->x, m->y,
                    QS_AGENT_MONITOR_POS_MAX);
        return FALSE;
    }
    return TRUE;
}

GBytes *qs_agent_reply_body(uint32_t type, uint32_t result)
{
    GByteArray *b = g_byte_array_sized_new(8);

    qs_wire_u32(b, type);
    qs_wire_u32(b, result);
    return g_byte_array_free_to_bytes(b);
}

GBytes *qs_agent_monitors_body_for_guest(const QsAgentMonitors *mon)
{
    GByteArray *b = g_byte_array_sized_new(HEADER_SIZE + mon->n_monitors * MON_SIZE);

    qs_wire_u32(b, mon->n_monitors);
    qs_wire_u32(b, mon->flags & ~(uint32_t)VD_AGENT_CONFIG_MONITORS_FLAG_PHYSICAL_SIZE);
    for (uint32_t i = 0; i < mon->n_monitors; i++) {
        const QsAgentMonitor *m = &mon->monitors[i];

        qs_wire_u32(b, m->height);
        qs_wire_u32(b, m->width);
        qs_wire_u32(b, m->depth);
        qs_wire_u32(b, (uint32_t)m->x);
        qs_wire_u32(b, (uint32_t)m->y);
    }
    return g_byte_array_free_to_bytes(b);
}
