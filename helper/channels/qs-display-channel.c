/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel's protocol side: surfaces, MARK, client messages, timers. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>
#include <spice/protocol.h>

gboolean qs_display_send(QsDisplayChannel *dc, uint16_t type, GBytes *payload)
{
    dc->stats.messages++;
    return qs_channel_send(&dc->base, type, payload);
}

void qs_display_forget_surface(QsDisplayChannel *dc)
{
    qs_display_streams_destroy_all(dc, dc->surface_created);
    if (dc->surface_created) {
        qs_display_send(dc, SPICE_MSG_DISPLAY_SURFACE_DESTROY,
                        qs_msg_surface_destroy(0));
        dc->surface_created = FALSE;
    }
    dc->mark_pending = FALSE;
}

/* The surface of `damage` exists on the client; a new one (resize) is
 * SURFACE_DESTROY, SURFACE_CREATE, full image, MONITORS_CONFIG, MARK
 * (spice-protocol.md §3.4). FALSE when the console has no surface. */
gboolean qs_display_ensure_surface(QsDisplayChannel *dc, const QsScreenDamage *damage,
                                   int64_t now_us)
{
    if (!damage->enabled) {
        qs_display_forget_surface(dc);
        return FALSE;
    }
    if (!damage->new_surface && dc->surface_created && damage->serial == dc->serial &&
        damage->width == dc->width && damage->height == dc->height) {
        return TRUE;
    }
    qs_display_forget_surface(dc);
    dc->serial = damage->serial;
    dc->width = damage->width;
    dc->height = damage->height;
    qs_display_send(dc, SPICE_MSG_DISPLAY_SURFACE_CREATE,
                    qs_msg_surface_create(0, dc->width, dc->height,
                                          SPICE_SURFACE_FMT_32_xRGB,
                                          SPICE_SURFACE_FLAGS_PRIMARY));
    dc->surface_created = TRUE;
    dc->mark_pending = TRUE;
    qs_display_sender_reset(dc, now_us);
    g_debug("display: surface %ux%u", dc->width, dc->height);
    return TRUE;
}

void qs_display_send_mark(QsDisplayChannel *dc)
{
    if (qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_MONITORS_CONFIG)) {
        QsMonitor head = { 0, 0, dc->width, dc->height, 0, 0, 0 };

        qs_display_send(dc, SPICE_MSG_DISPLAY_MONITORS_CONFIG,
                        qs_msg_monitors_config(&head, 1, 1));
    }
    qs_display_send(dc, SPICE_MSG_DISPLAY_MARK, NULL);
    dc->mark_pending = FALSE;
}

static gboolean on_wake(gpointer user_data)
{
    QsDisplayChannel *dc = user_data;

    g_source_unref(dc->wake);
    dc->wake = NULL;
    dc->wake_at = 0;
    qs_display_channel_pump(&dc->base);
    return G_SOURCE_REMOVE;
}

/* One timer for every deadline of the send loop: the earliest wins. */
void qs_display_arm_wake(QsDisplayChannel *dc, int64_t at_us)
{
    int64_t now = g_get_monotonic_time();

    if (at_us <= 0 || (dc->wake && dc->wake_at <= at_us)) {
        return;
    }
    if (dc->wake) {
        g_source_destroy(dc->wake);
        g_source_unref(dc->wake);
    }
    dc->wake_at = at_us;
    /* Millisecond timers round up: a pacer wake 300 us away is 1 ms. */
    dc->wake = g_timeout_source_new((guint)MAX(0, (at_us - now + 999) / 1000));
    g_source_set_callback(dc->wake, on_wake, dc, NULL);
    g_source_attach(dc->wake, dc->context);
}

static gboolean on_ping_timer(gpointer user_data)
{
    QsDisplayChannel *dc = user_data;

    if (!qs_conn_is_closed(dc->base.conn)) {
        qs_display_send_probe(dc, g_get_monotonic_time());
        /* Also a guard: nothing waits for a lost wake-up longer than this. */
        qs_display_channel_pump(&dc->base);
    }
    return G_SOURCE_CONTINUE;
}

static gboolean display_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    (void)error;
    switch (msg->type) {
    case SPICE_MSGC_DISPLAY_INIT:
        dc->init_received = TRUE;
        qs_display_send_probe(dc, g_get_monotonic_time());
        qs_display_channel_pump(ch);
        break;
    case SPICE_MSGC_DISPLAY_PREFERRED_COMPRESSION:
        dc->prefer_bitmap = msg->u.compression == SPICE_IMAGE_COMPRESSION_OFF;
        break;
    case SPICE_MSGC_DISPLAY_STREAM_REPORT:
        qs_display_streams_report(dc, msg);
        break;
    case SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE:
        qs_display_streams_preferred(dc, msg->u.bytes.data, msg->u.bytes.len);
        break;
    default:
        /* GL_DRAW_DONE: no GL scanout over TCP. */
        break;
    }
    return TRUE;
}

static void display_writable(QsChannel *ch)
{
    qs_display_channel_pump(ch);
}

static void display_pong(QsChannel *ch, uint32_t id, int64_t now_us)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    /* What the client read may free budget a blocked pump waits for. */
    if (qs_e2e_on_pong(dc->e2e, dc->bwe, now_us, id)) {
        qs_display_channel_pump(ch);
    }
}

static void display_finalize(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    qs_display_stats_log(dc);
    qs_display_streams_destroy_all(dc, FALSE);
    if (dc->wake) {
        g_source_destroy(dc->wake);
        g_source_unref(dc->wake);
    }
    g_source_destroy(dc->ping_timer);
    g_source_unref(dc->ping_timer);
    dc->life->dc = NULL;
    if (g_atomic_int_dec_and_test(&dc->life->ref)) {
        g_free(dc->life);
    }
    qs_display_sender_clear(dc);
    qs_screen_watch_free(dc->watch);
    g_main_context_unref(dc->context);
}

static const QsChannelClass display_class = {
    .name = "display",
    .parse = qs_display_msg_parse,
    .handle = display_handle,
    .writable = display_writable,
    .finalize = display_finalize,
    .pong = display_pong,
};

QsChannel *qs_display_channel_new(QsSession *session, QsConn *conn)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)qs_channel_new(
        &display_class, sizeof(QsDisplayChannel), session, conn);

    dc->screen = qs_channels_screen(session->hub, qs_conn_get_link_info(conn)->channel_id);
    dc->watch = qs_screen_watch_new(dc->screen);
    dc->context = g_main_context_ref_thread_default();
    dc->life = g_new0(QsDisplayLife, 1);
    dc->life->ref = 1;
    dc->life->dc = dc;
    dc->stats.start_us = g_get_monotonic_time();
    dc->h264_ok = qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_MULTI_CODEC) &&
                  qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_CODEC_H264);
    /* Every spice-gtk decodes MJPEG; without MULTI_CODEC it is the only one. */
    dc->mjpeg_ok = TRUE;
    dc->stream_rate_pct = 100;
    qs_display_sender_init(dc);
    dc->ping_timer = g_timeout_source_new(QS_DISPLAY_PING_MS);
    g_source_set_callback(dc->ping_timer, on_ping_timer, dc, NULL);
    g_source_attach(dc->ping_timer, dc->context);
    qs_channel_set_ack(&dc->base, QS_DISPLAY_ACK_WINDOW);
    return &dc->base;
}
