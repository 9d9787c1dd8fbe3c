/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The info command: what the session looks like once the display is up, as JSON. */
#include "qs-tc.h"

#include <stdio.h>

static void json_string(GString *out, const char *s)
{
    g_string_append_c(out, '"');
    for (; s && *s; s++) {
        unsigned char c = (unsigned char)*s;

        if (c == '"' || c == '\\')
            g_string_append_printf(out, "\\%c", c);
        else if (c < 0x20)
            g_string_append_printf(out, "\\u%04x", c);
        else
            g_string_append_c(out, (char)c);
    }
    g_string_append_c(out, '"');
}

static const char *event_state(int event)
{
    switch (event) {
    case 0: return "pending";
    case SPICE_CHANNEL_OPENED: return "open";
    case SPICE_CHANNEL_CLOSED: return "closed";
    default: return "error";
    }
}

static gboolean marked(QsTc *tc, gpointer data)
{
    (void)data;
    return tc->mark;
}

int qs_tc_cmd_info(QsTc *tc)
{
    g_autoptr(GString) out = g_string_new(NULL);
    g_autoptr(GArray) monitors = NULL;
    SpiceDisplayPrimary primary;
    gboolean have_primary;
    int mode = qs_tc_mouse_mode(tc);

    /* MONITORS_CONFIG comes just before MARK (spice-server's dcc_start), so
     * waiting for MARK makes "monitors_config" meaningful; bounded because a
     * server may never send MARK */
    qs_tc_wait(tc, marked, NULL, MIN((gint64)tc->timeout_s, 2) * G_USEC_PER_SEC);
    if (tc->fail_status)
        return tc->fail_status;

    have_primary = qs_tc_primary(tc, &primary);
    g_string_append(out, "{\"surface\":");
    if (have_primary) {
        g_string_append_printf(out, "{\"width\":%d,\"height\":%d,\"stride\":%d,\"format\":",
                               primary.width, primary.height, primary.stride);
        json_string(out, qs_tc_format_name(primary.format));
        g_string_append_printf(out, ",\"format_code\":%d}", primary.format);
    } else {
        g_string_append(out, "null");
    }

    g_string_append(out, ",\"channels\":[");
    for (guint i = 0; i < tc->channels->len; i++) {
        QsTcChannel *c = g_ptr_array_index(tc->channels, i);

        g_string_append_printf(out, "%s{\"type\":", i ? "," : "");
        json_string(out, qs_tc_channel_name(c->type));
        g_string_append_printf(out, ",\"id\":%d,\"state\":", c->id);
        json_string(out, event_state(c->event));
        g_string_append_printf(out, ",\"bytes_received\":%lu}", qs_tc_read_bytes(c->channel));
    }
    g_string_append(out, "],\"mouse_mode\":");
    json_string(out, qs_tc_mouse_mode_name(mode));

    g_string_append_printf(out, ",\"mark\":%s,\"monitors_config\":%s",
                           tc->mark ? "true" : "false", tc->monitors_config ? "true" : "false");
    g_string_append_printf(out, ",\"server_cap_monitors_config\":%s",
                           tc->display && spice_channel_test_capability(
                               tc->display, SPICE_DISPLAY_CAP_MONITORS_CONFIG) ? "true" : "false");
    g_string_append(out, ",\"monitors\":[");
    if (tc->display)
        g_object_get(tc->display, "monitors", &monitors, NULL);
    for (guint i = 0; monitors && i < monitors->len; i++) {
        SpiceDisplayMonitorConfig *m = &g_array_index(monitors, SpiceDisplayMonitorConfig, i);

        g_string_append_printf(out,
                               "%s{\"id\":%u,\"surface_id\":%u,\"x\":%u,\"y\":%u,\"width\":%u,\"height\":%u}",
                               i ? "," : "", m->id, m->surface_id, m->x, m->y, m->width, m->height);
    }
    g_string_append(out, "],\"spice_gtk\":");
    json_string(out, spice_util_get_version_string());
    g_string_append(out, "}\n");
    fputs(out->str, stdout);
    fflush(stdout);
    return QS_TC_EXIT_OK;
}
