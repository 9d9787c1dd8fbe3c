/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: VDAgent reassembly and the clipboard and monitors body parsers (as the main channel feeds them). */
#include "wire/qs-agent.h"

#include <spice/vd_agent.h>

/*
 * Input: u8 flags (bit 0: selection headers), then pieces, each a u16
 * little-endian length (cut to QS_AGENT_CHUNK_MAX) and that many bytes, as
 * AGENT_DATA bodies would come.
 */
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static gboolean keep(uint32_t type)
{
    return type == VD_AGENT_ANNOUNCE_CAPABILITIES || type == VD_AGENT_CLIPBOARD_GRAB ||
           type == VD_AGENT_CLIPBOARD_REQUEST || type == VD_AGENT_CLIPBOARD ||
           type == VD_AGENT_CLIPBOARD_RELEASE || type == VD_AGENT_MONITORS_CONFIG;
}

static void on_msg(const QsAgentMsg *msg, gpointer user_data)
{
    gboolean selection = *(gboolean *)user_data;
    GError *error = NULL;
    QsAgentCaps caps;
    QsAgentGrab grab;
    QsAgentClip clip;
    QsAgentMonitors mon;
    uint8_t sel;

    if (!msg->kept) {
        return;
    }
    switch (msg->type) {
    case VD_AGENT_ANNOUNCE_CAPABILITIES:
        if (qs_agent_parse_caps(msg, &caps, &error)) {
            (void)qs_agent_has_cap(caps.caps, QS_AGENT_CAP_WORDS, VD_AGENT_CAP_CLIPBOARD_SELECTION);
        }
        break;
    case VD_AGENT_CLIPBOARD_GRAB:
        if (qs_agent_parse_grab(msg, selection, &grab, &error)) {
            g_assert(grab.n_types <= QS_AGENT_GRAB_TYPES_MAX && grab.selection < 3);
        }
        break;
    case VD_AGENT_CLIPBOARD_REQUEST:
        qs_agent_parse_request(msg, selection, &clip, &error);
        break;
    case VD_AGENT_CLIPBOARD:
        if (qs_agent_parse_clipboard(msg, selection, &clip, &error)) {
            GQueue out = G_QUEUE_INIT;

            /* What we would send back of it stays within the pieces' limit. */
            qs_agent_build(VD_AGENT_CLIPBOARD, clip.data, clip.size, &out);
            for (GList *l = out.head; l; l = l->next) {
                g_assert(g_bytes_get_size(l->data) <= QS_AGENT_CHUNK_MAX);
            }
            g_queue_clear_full(&out, (GDestroyNotify)g_bytes_unref);
        }
        break;
    case VD_AGENT_CLIPBOARD_RELEASE:
        qs_agent_parse_release(msg, selection, &sel, &error);
        break;
    case VD_AGENT_MONITORS_CONFIG:
        if (qs_agent_parse_monitors(msg, &mon, &error)) {
            g_assert(mon.n_monitors <= QS_AGENT_MONITORS_MAX);
            for (uint32_t i = 0; i < mon.n_monitors; i++) {
                GError *bad = NULL;

                if (qs_agent_monitor_check(&mon.monitors[i], &bad)) {
                    /* What goes to SetUIInfo is within the bounds. */
                    g_assert(mon.monitors[i].width >= QS_AGENT_MONITOR_MIN &&
                             mon.monitors[i].width <= QS_AGENT_MONITOR_MAX &&
                             mon.monitors[i].height >= QS_AGENT_MONITOR_MIN &&
                             mon.monitors[i].height <= QS_AGENT_MONITOR_MAX);
                } else {
                    g_error_free(bad);
                }
            }
        }
        break;
    default:
        break;
    }
    g_clear_error(&error);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    QsAgentReader *r;
    gboolean selection;

    if (size < 1) {
        return 0;
    }
    selection = data[0] & 1;
    data++;
    size--;
    r = qs_agent_reader_new(keep);
    while (size >= 2) {
        size_t n = (size_t)(data[0] | data[1] << 8);
        GError *error = NULL;

        data += 2;
        size -= 2;
        n = MIN(MIN(n, size), (size_t)QS_AGENT_CHUNK_MAX);
        if (!qs_agent_reader_feed(r, data, n, on_msg, &selection, &error)) {
            g_error_free(error);
            break;
        }
        data += n;
        size -= n;
    }
    qs_agent_reader_free(r);
    return 0;
}
