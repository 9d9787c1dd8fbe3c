/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The client's monitors config: checked, handed to the host's sink (qemu's SetUIInfo), answered with VD_AGENT_REPLY. */
#include "channels/qs-agent-private.h"
#include "display/qs-ratelimit.h"

#include <spice/vd_agent.h>

/* Replies kept for configs in flight; a client sending more before any
 * answer gets this many (spice-gtk only logs them). */
#define REPLIES_OWED_MAX 8u

static QsRateLimit refused_rl;

void qs_agent_host_set_monitors(QsAgentHost *host, const QsAgentMonitorsOps *ops,
                                gpointer sink)
{
    host->monitors = ops;
    host->sink = ops ? sink : NULL;
}

static void reply(QsAgent *a, gboolean applied)
{
    if (a->reply_cap && a->caps_received) {
        qs_agent_send_msg(a, VD_AGENT_REPLY,
                          qs_agent_reply_body(VD_AGENT_MONITORS_CONFIG,
                                              applied ? VD_AGENT_SUCCESS : VD_AGENT_ERROR));
    }
}

static void refused(QsAgent *a, const char *why)
{
    unsigned suppressed = 0;

    if (qs_ratelimit_allow(&refused_rl, g_get_monotonic_time(), &suppressed)) {
        g_message("agent: client's monitors config refused: %s%s", why,
                  suppressed ? " (more refusals were not logged)" : "");
    }
    reply(a, FALSE);
}

static gboolean disabled(const QsAgentMonitor *m)
{
    return m->width == 0 && m->height == 0;
}

void qs_agent_on_monitors(QsAgent *a, const QsAgentMsg *msg, GError **error)
{
    g_autoptr(GError) bad = NULL;
    QsAgentMonitors mon;
    guint heads = a->n_heads, n, enabled = 0;

    if (!qs_agent_parse_monitors(msg, &mon, error)) {
        return;
    }
    /* Monitors beyond our heads have no console to resize. All of a
     * config is checked before any of it is asked for. */
    n = MIN(mon.n_monitors, heads);
    for (guint i = 0; i < n; i++) {
        if (disabled(&mon.monitors[i])) {
            continue;
        }
        if (!qs_agent_monitor_check(&mon.monitors[i], &bad)) {
            g_autofree char *why = g_strdup_printf("monitor %u: %s", i, bad->message);

            refused(a, why);
            return;
        }
        enabled++;
    }
    if (enabled == 0) {
        refused(a, "no monitor of a served console enabled");
        return;
    }
    if (!a->host || !a->host->monitors) {
        refused(a, "no way to change the mode");
        return;
    }
    /* Counted first: the sink may answer at once. */
    if (a->replies_owed < REPLIES_OWED_MAX) {
        a->replies_owed++;
    }
    for (guint i = 0; i < n; i++) {
        const QsAgentMonitor *m = &mon.monitors[i];

        if (!disabled(m)) {
            g_debug("agent: client asks for %ux%u+%d+%d (%ux%u mm) on head %u", m->width,
                    m->height, m->x, m->y, m->width_mm, m->height_mm, i);
            a->host->monitors->configure(a->host->sink, i, m);
        }
    }
}

void qs_agent_host_monitors_done(QsAgentHost *host, gboolean applied)
{
    QsAgentBackend *be = host->be;
    QsAgent *a = be ? be->current : NULL;

    if (!a || !a->ch->session) {
        return;
    }
    /* The sink coalesces configs: one answer serves all that waited. */
    while (a->replies_owed > 0) {
        a->replies_owed--;
        reply(a, applied);
    }
}
