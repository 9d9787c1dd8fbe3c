/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The watch command: display activity and bytes per channel over a time window, as JSON. */
#include "qs-tc.h"

#include <stdio.h>

/* Times of the events with index first.. (those recorded), as a JSON list. */
static void append_times(GString *out, const char *name, const gint64 *times, guint64 first,
                         guint64 end)
{
    g_string_append_printf(out, ",\"%s\":[", name);
    for (guint64 i = first; i < end && i < QS_TC_STREAM_TIMES; i++)
        g_string_append_printf(out, "%s%" G_GINT64_FORMAT, i > first ? "," : "", times[i]);
    g_string_append_c(out, ']');
}

/* Onsets: the first invalidate touching the watched rectangle after at
 * least ONSET_QUIET_US without one, i.e. when activity there (re)started as
 * this client saw it. */
#define ONSET_QUIET_US 500000

typedef struct {
    int x, y, w, h;
    gint64 last_us;
    gint64 onset_us[QS_TC_STREAM_TIMES];
    guint n;
} Onsets;

static void on_rect_invalidate(QsTc *tc, int x, int y, int w, int h, gpointer data)
{
    Onsets *o = data;
    gint64 now = g_get_monotonic_time();

    (void)tc;
    if (x >= o->x + o->w || o->x >= x + w || y >= o->y + o->h || o->y >= y + h)
        return;
    if ((!o->last_us || now - o->last_us >= ONSET_QUIET_US) && o->n < QS_TC_STREAM_TIMES)
        o->onset_us[o->n++] = now;
    o->last_us = now;
}

gulong qs_tc_read_bytes(SpiceChannel *channel)
{
    gulong bytes = 0;

    g_object_get(channel, "total-read-bytes", &bytes, NULL);
    return bytes;
}

int qs_tc_cmd_watch(QsTc *tc, double seconds, const int *rect)
{
    Onsets onsets = { 0 };
    g_autoptr(GString) out = g_string_new(NULL);
    guint64 inv0 = tc->n_invalidates, pix0 = tc->invalidate_pixels;
    guint64 sc0, sd0, sf0, sl0, sr0;
    gint64 msum0, t0, t1;
    double elapsed;

    /* stream events are only visible in spice-gtk's debug log */
    qs_tc_log_capture(tc, TRUE);
    sc0 = tc->n_stream_create;
    sd0 = tc->n_stream_destroy;
    sf0 = tc->n_stream_frames;
    sl0 = tc->n_stream_late;
    sr0 = tc->n_stream_render_drops;
    msum0 = tc->margin_sum;
    tc->margin_min = G_MAXINT;
    tc->margin_max = G_MININT;
    for (guint i = 0; i < tc->channels->len; i++) {
        QsTcChannel *c = g_ptr_array_index(tc->channels, i);
        c->base_read_bytes = qs_tc_read_bytes(c->channel);
    }

    if (rect) {
        onsets.x = rect[0];
        onsets.y = rect[1];
        onsets.w = rect[2];
        onsets.h = rect[3];
        tc->on_invalidate = on_rect_invalidate;
        tc->on_invalidate_data = &onsets;
    }
    t0 = g_get_monotonic_time();
    qs_tc_wait(tc, NULL, NULL, (gint64)(seconds * G_USEC_PER_SEC));
    t1 = g_get_monotonic_time();
    tc->on_invalidate = NULL;
    tc->on_invalidate_data = NULL;
    qs_tc_log_capture(tc, FALSE);
    if (tc->fail_status)
        return tc->fail_status;

    elapsed = (double)(t1 - t0) / G_USEC_PER_SEC;
    g_string_append_printf(out, "{\"seconds\":%.3f,\"invalidates\":%" G_GUINT64_FORMAT
                           ",\"invalidates_per_s\":%.1f,\"invalidate_pixels\":%" G_GUINT64_FORMAT,
                           elapsed, tc->n_invalidates - inv0,
                           (double)(tc->n_invalidates - inv0) / elapsed, tc->invalidate_pixels - pix0);
    g_string_append_printf(out, ",\"streams_created\":%" G_GUINT64_FORMAT
                           ",\"streams_destroyed\":%" G_GUINT64_FORMAT
                           ",\"streams_open\":%" G_GUINT64_FORMAT
                           ",\"stream_frames\":%" G_GUINT64_FORMAT,
                           tc->n_stream_create - sc0, tc->n_stream_destroy - sd0,
                           tc->n_stream_create - tc->n_stream_destroy,
                           tc->n_stream_frames - sf0);
    g_string_append_printf(out, ",\"stream_late\":%" G_GUINT64_FORMAT
                           ",\"stream_render_drops\":%" G_GUINT64_FORMAT,
                           tc->n_stream_late - sl0, tc->n_stream_render_drops - sr0);
    append_times(out, "stream_create_us", tc->stream_create_us, sc0, tc->n_stream_create);
    append_times(out, "stream_destroy_us", tc->stream_destroy_us, sd0, tc->n_stream_destroy);
    if (rect)
        append_times(out, "rect_onset_us", onsets.onset_us, 0, onsets.n);
    if (tc->n_stream_frames > sf0)
        g_string_append_printf(out, ",\"video_margin_ms\":{\"min\":%d,\"max\":%d,\"mean\":%.1f}",
                               tc->margin_min, tc->margin_max,
                               (double)(tc->margin_sum - msum0) / (double)(tc->n_stream_frames - sf0));
    else
        g_string_append(out, ",\"video_margin_ms\":null");
    g_string_append(out, ",\"bytes_received\":{");
    for (guint i = 0; i < tc->channels->len; i++) {
        QsTcChannel *c = g_ptr_array_index(tc->channels, i);

        g_string_append_printf(out, "%s\"%s:%d\":%lu", i ? "," : "", qs_tc_channel_name(c->type),
                               c->id, qs_tc_read_bytes(c->channel) - c->base_read_bytes);
    }
    g_string_append(out, "}}\n");
    fputs(out->str, stdout);
    fflush(stdout);
    return QS_TC_EXIT_OK;
}
