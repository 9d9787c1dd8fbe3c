/* SPDX-License-Identifier: GPL-2.0-or-later */
/* The display channel: client messages, timers, the loop that carries out its plan's actions, the channel's life. */
#include "channels/qs-display-private.h"

#include <spice/enums.h>
#include <spice/protocol.h>

static gboolean on_wake(gpointer user_data)
{
    QsDisplayChannel *dc = user_data;

    g_source_unref(dc->wake);
    dc->wake = NULL;
    dc->wake_at = 0;
    qs_display_channel_pump(&dc->base);
    return G_SOURCE_REMOVE;
}

/* One timer for every deadline the plan names: the earliest wins. */
static void arm_wake(QsDisplayChannel *dc, int64_t at_us)
{
    int64_t now = qs_display_clock_now(dc->clock);

    if (at_us <= 0 || (dc->wake && dc->wake_at <= at_us)) {
        return;
    }
    if (dc->wake) {
        g_source_destroy(dc->wake);
        g_source_unref(dc->wake);
    }
    dc->wake_at = at_us;
    /* Millisecond timers round up: a pacer wake 300 us away is 1 ms. */
    dc->wake = qs_display_clock_timeout(dc->clock, (guint)MAX(0, (at_us - now + 999) / 1000));
    g_source_set_callback(dc->wake, on_wake, dc, NULL);
    g_source_attach(dc->wake, dc->context);
}

/* Carries out one action; FALSE when the plan has nothing more now. */
static gboolean carry_out(QsDisplayChannel *dc, const QsPlanAction *a, int64_t now_us)
{
    switch (a->kind) {
    case QS_PLAN_IDLE:
    case QS_PLAN_WAIT:
        arm_wake(dc, a->wake_us);
        return FALSE;
    case QS_PLAN_SURFACE_DESTROY:
    case QS_PLAN_SURFACE_CREATE:
    case QS_PLAN_MARK:
    case QS_PLAN_PROBE:
        qs_display_send_action(dc, a, now_us);
        break;
    case QS_PLAN_IMAGE:
        return qs_display_image_send(dc, a);
    case QS_PLAN_STREAM_CREATE:
        qs_display_video_create(dc, a);
        break;
    case QS_PLAN_STREAM_DESTROY:
        qs_display_video_destroy(dc, a);
        break;
    case QS_PLAN_STREAM_FRAME:
    case QS_PLAN_STREAM_FLUSH:
        qs_display_video_encode(dc, a, now_us);
        break;
    }
    return TRUE;
}

/* Sends while the plan has something and no image is encoding; called on
 * DISPLAY_INIT, screen changes, socket writable, ACKs, PONGs, finished
 * encodes and the wake timer. */
void qs_display_channel_pump(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;
    int64_t now = qs_display_clock_now(dc->clock);
    g_autoptr(QsScreenDamage) damage = NULL;
    QsPlanAction action;

    if (!dc->init_received || dc->pumping || dc->image_job || !ch->session ||
        qs_conn_is_closed(ch->conn)) {
        return;
    }
    dc->pumping = TRUE;
    dc->stats.pumps++;
    damage = qs_screen_watch_take(dc->watch);
    if (damage) {
        qs_display_plan_damage(dc->plan, damage, now);
    }
    if (qs_display_plan_tick(dc->plan, now)) {
        dc->stats.heat_snapshots++;
        qs_display_plan_heat(dc->plan, qs_screen_heat_snapshot(dc->screen, now), now);
    }
    do {
        QsPlanLink link;

        qs_display_link(dc, &link);
        qs_display_plan_next(dc->plan, now, &link, &action);
    } while (carry_out(dc, &action, now));
    dc->pumping = FALSE;
}

static gboolean on_ping_timer(gpointer user_data)
{
    QsDisplayChannel *dc = user_data;

    if (!qs_conn_is_closed(dc->base.conn)) {
        qs_display_send_probe(dc, qs_display_clock_now(dc->clock));
        /* Also a guard: nothing waits for a lost wake-up longer than this. */
        qs_display_channel_pump(&dc->base);
    }
    return G_SOURCE_CONTINUE;
}

static void preferred_codecs(QsDisplayChannel *dc, const uint8_t *codecs, uint32_t n)
{
    for (uint32_t i = 0; i < n; i++) {
        if (codecs[i] == SPICE_VIDEO_CODEC_TYPE_MJPEG ||
            codecs[i] == SPICE_VIDEO_CODEC_TYPE_H264) {
            qs_display_plan_prefer_mjpeg(dc->plan, codecs[i] == SPICE_VIDEO_CODEC_TYPE_MJPEG);
            return;
        }
    }
    qs_display_plan_prefer_mjpeg(dc->plan, FALSE);
}

static gboolean display_handle(QsChannel *ch, const QsClientMsg *msg, GError **error)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    (void)error;
    switch (msg->type) {
    case SPICE_MSGC_DISPLAY_INIT:
        dc->init_received = TRUE;
        qs_display_send_probe(dc, qs_display_clock_now(dc->clock));
        qs_display_channel_pump(ch);
        break;
    case SPICE_MSGC_DISPLAY_PREFERRED_COMPRESSION:
        qs_display_plan_prefer_bitmap(dc->plan,
                                      msg->u.compression == SPICE_IMAGE_COMPRESSION_OFF);
        break;
    case SPICE_MSGC_DISPLAY_STREAM_REPORT:
        if (qs_display_plan_stream_report(dc->plan, msg->u.stream_report.stream_id,
                                          msg->u.stream_report.unique_id,
                                          msg->u.stream_report.end_frame_mm_time,
                                          msg->u.stream_report.num_frames,
                                          msg->u.stream_report.num_drops,
                                          msg->u.stream_report.last_frame_delay,
                                          qs_display_clock_now(dc->clock))) {
            qs_display_channel_pump(ch);
        }
        break;
    case SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE:
        preferred_codecs(dc, msg->u.bytes.data, msg->u.bytes.len);
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

    /* What the client read may free budget a waiting plan wants. The
     * probe went out on the channel's clock: the answer is timed on it. */
    if (dc->clock) {
        now_us = qs_display_clock_now(dc->clock);
    }
    if (qs_display_plan_pong(dc->plan, now_us, id)) {
        qs_display_channel_pump(ch);
    }
}

static void display_finalize(QsChannel *ch)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)ch;

    qs_display_stats_log(dc);
    qs_display_image_forget(dc);
    qs_display_video_free_all(dc);
    if (dc->wake) {
        g_source_destroy(dc->wake);
        g_source_unref(dc->wake);
    }
    g_source_destroy(dc->ping_timer);
    g_source_unref(dc->ping_timer);
    qs_image_share_viewer_remove(dc->images);
    qs_image_share_unref(dc->images);
    qs_display_plan_free(dc->plan);
    g_free(dc->pixels);
    qs_encode_queue_unref(dc->encodes);
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

/*
 * JPEG is a base image type, and spice-gtk, spice-html5 and Ryll all decode
 * it, but no capability says so. A client that announces display caps
 * speaks for itself; one that announces none may be a proxy that forwards
 * nothing, whose own client (or its own image parser) we cannot know: it
 * gets lossless images only, SPICE LZ, which every decoder takes.
 */
static gboolean speaks_for_itself(QsConn *conn)
{
    const QsLinkInfo *info = qs_conn_get_link_info(conn);

    for (guint i = 0; i < info->n_channel_caps; i++) {
        if (info->channel_caps[i]) {
            return TRUE;
        }
    }
    return FALSE;
}

#ifdef QS_TEST_CONTROLS
/* Test builds: QS_TEST_LINK_BYTES_PER_S fixes what the plan takes the
 * link's bandwidth to be, so that a test's viewers get the same plan:
 * measured, it is capped by the helper's own speed (a sanitizer build
 * sends its first pictures slower than loopback carries them), and the
 * busy guest's stream then sits at the edge of its share, lowered for one
 * viewer and not for the other. */
static void pin_bandwidth(QsDisplayPlan *plan)
{
    const char *env = g_getenv("QS_TEST_LINK_BYTES_PER_S");
    guint64 v = 0;

    if (env && g_ascii_string_to_unsigned(env, 10, 1, G_MAXUINT32, &v, NULL)) {
        g_message("display: test build: the link is taken to carry %" G_GUINT64_FORMAT
                  " bytes/s", v);
        qs_display_plan_pin_bandwidth(plan, v);
    } else if (env) {
        g_warning("display: QS_TEST_LINK_BYTES_PER_S=%s is not a number of bytes/s from 1 "
                  "to %u: the link is measured", env, G_MAXUINT32);
    }
}
#endif

QsChannel *qs_display_channel_new(QsSession *session, QsConn *conn)
{
    QsDisplayChannel *dc = (QsDisplayChannel *)qs_channel_new(
        &display_class, sizeof(QsDisplayChannel), session, conn);
    QsPlanCaps caps = {
        .lz4 = qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_LZ4_COMPRESSION),
        .jpeg = speaks_for_itself(conn),
        .h264 = qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_MULTI_CODEC) &&
                qs_channel_has_cap(&dc->base, SPICE_DISPLAY_CAP_CODEC_H264),
        /* Every spice-gtk decodes MJPEG; without MULTI_CODEC it is the only one. */
        .mjpeg = TRUE,
        .max_stream_side = QS_VIDEO_MAX_SIDE,
        .min_stream_bitrate = QS_VIDEO_MIN_BITRATE,
        .max_stream_bitrate = QS_VIDEO_MAX_BITRATE,
        .max_fps = session->ctx->max_fps,
    };

    guint head = qs_conn_get_link_info(conn)->channel_id;

    /* The link check admits only ids below n_heads. */
    head = head < session->ctx->n_heads ? head : 0;
    dc->screen = qs_channel_context_head(session->ctx, head)->screen;
    dc->streams = session->ctx->streams[head];
    dc->images = qs_image_share_ref(session->ctx->images[head]);
    dc->encodes = qs_encode_queue_ref(session->ctx->encodes);
    qs_image_share_viewer_add(dc->images);
    dc->watch = qs_screen_watch_new(dc->screen);
    dc->context = g_main_context_ref_thread_default();
    dc->clock = session->ctx->display_clock;
    dc->stats.start_us = g_get_monotonic_time();
    dc->plan = qs_display_plan_new(&caps);
    dc->pump = qs_display_channel_pump;
#ifdef QS_TEST_CONTROLS
    pin_bandwidth(dc->plan);
#endif
    dc->ping_timer = qs_display_clock_timeout(dc->clock, QS_DISPLAY_PING_MS);
    g_source_set_callback(dc->ping_timer, on_ping_timer, dc, NULL);
    g_source_attach(dc->ping_timer, dc->context);
    qs_channel_set_ack(&dc->base, QS_DISPLAY_ACK_WINDOW);
    return &dc->base;
}

void qs_display_channel_link_estimate(QsChannel *ch, uint64_t *bytes_per_sec,
                                      uint32_t *srtt_us)
{
    const QsBwe *bwe = qs_display_plan_bwe(((QsDisplayChannel *)ch)->plan);

    *bytes_per_sec = qs_bwe_bandwidth(bwe);
    *srtt_us = qs_bwe_srtt_us(bwe);
}
