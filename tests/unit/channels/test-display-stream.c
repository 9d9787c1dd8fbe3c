/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the display channel's streams over a fake connection: detection, codec choice, end and lossless repaint. */
/*
 * Time is the test's (FakeClock): the channel's pump, its timers, the
 * screen's stamps and the simulated link all read it, and it moves a
 * millisecond at a time, each step waiting for every encode the plan
 * started to be answered. So the counts below are exact on any machine,
 * loaded or under the sanitizers; only the waits for a worker thread are
 * real, with a liveness limit that is no part of what is checked.
 */
#include "channels/qs-channels.h"
#include "channels/qs-display-channel.h"
#include "encode/qs-video.h"
#include "wire/qs-wire.h"
#include "fake-peers.h"

#include <spice/enums.h>
#include <spice/protocol.h>
#include <string.h>

#define W 320
#define H 240
#define AX 37           /* off the block grid on purpose */
#define AY 50
#define AW 160
#define AH 120

typedef struct {
    QsScreen *screen;
    QsChannels *hub;
    QsConn *main, *display;
    uint32_t frame;
    FakeClock clock;
} Fx;

#define LIVENESS_US (60 * G_USEC_PER_SEC)     /* an encode that never answers */

static uint32_t animated(uint32_t x, uint32_t y, uint32_t f)
{
    return ((x * 3 + f * 7) & 0xff) | (((y * 5 + f * 3) & 0xff) << 8) |
           ((((x ^ y) + f) & 0xff) << 16);
}

static QsConn *link_conn(Fx *fx, guint8 type, guint32 conn_id, guint32 caps)
{
    const QsServerCallbacks *cb = qs_channels_server_callbacks();
    QsConn *conn = fake_conn_new(type, 0, conn_id, caps);
    guint32 server_caps[QS_SERVER_MAX_CHANNEL_CAPS];
    guint n_caps = QS_SERVER_MAX_CHANNEL_CAPS;
    guint32 session_id = 0;

    g_assert_cmpint(cb->prepare(qs_conn_get_link_info(conn), server_caps, &n_caps, fx->hub),
                    ==, SPICE_LINK_ERR_OK);
    g_assert_cmpint(cb->authorize(qs_conn_get_link_info(conn), &session_id, fx->hub),
                    ==, SPICE_LINK_ERR_OK);
    fake_conn_set_session_id(conn, session_id);
    cb->attach(qs_conn_ref(conn), fx->hub);
    return conn;
}

static void setup_link(Fx *fx, guint32 display_caps, uint64_t bw, uint32_t rtt_us);

static void setup(Fx *fx, guint32 display_caps)
{
    setup_link(fx, display_caps, 0, 0);
}

static void setup_link(Fx *fx, guint32 display_caps, uint64_t bw, uint32_t rtt_us)
{
    QsChannelsConfig cfg = { .vm_name = "g", .display_clock = &fx->clock.clock };
    g_autofree uint32_t *px = g_new0(uint32_t, W * H);
    g_autoptr(GError) error = NULL;
    static const uint8_t init[14] = { 0 };

    for (uint32_t i = 0; i < W * H; i++) {
        px[i] = (i / W / 8) % 2 ? 0xffffff : 0x102030;      /* flat stripes */
    }
    fake_clock_init(&fx->clock);
    fake_conn_use_clock(&fx->clock.clock);
    fx->screen = qs_screen_new();
    g_assert_true(qs_screen_scanout(fx->screen, W, H, W * 4, QS_PIXMAN_X8R8G8B8,
                                    (const uint8_t *)px, W * H * 4, fx->clock.now_us,
                                    &error));
    cfg.screen = fx->screen;
    fx->hub = qs_channels_new(&cfg);
    fx->main = link_conn(fx, SPICE_CHANNEL_MAIN, 0, 0);
    fake_conn_deliver(fx->main, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
    fx->display = link_conn(fx, SPICE_CHANNEL_DISPLAY, qs_channels_get_session_id(fx->hub),
                            display_caps);
    if (bw) {
        fake_conn_set_link(fx->display, bw, rtt_us);
    }
    fake_conn_deliver(fx->display, SPICE_MSGC_DISPLAY_INIT, init, sizeof(init));
}

static void teardown(Fx *fx)
{
    qs_channels_free(fx->hub);
    for (int i = 0; i < 200; i++) {
        g_main_context_iteration(NULL, FALSE);
        g_usleep(1000);
    }
    qs_conn_unref(fx->main);
    qs_conn_unref(fx->display);
    qs_screen_free(fx->screen);
    fake_conn_use_clock(NULL);
}

/* Runs what is ready now, and waits for every encode the display channel
 * has at a worker to be answered (and whatever that starts). */
static void settle(Fx *fx)
{
    int64_t limit = g_get_monotonic_time() + LIVENESS_US;

    for (;;) {
        QsChannel *ch;

        for (int i = 0; i < 10000 && g_main_context_iteration(NULL, FALSE); i++) {
        }
        ch = fake_conn_channel(fx->display);
        if (!ch || !qs_display_channel_encoding(ch)) {
            return;
        }
        g_assert_cmpint(g_get_monotonic_time(), <, limit);
        g_usleep(200);
    }
}

/* Moves the test's clock `ms` on, a millisecond at a time (every timer
 * fires at its millisecond), settling after each. */
static void spin(Fx *fx, guint ms)
{
    settle(fx);
    for (guint i = 0; i < ms; i++) {
        fx->clock.now_us += 1000;
        settle(fx);
    }
}

static void draw_frame(Fx *fx)
{
    g_autofree uint32_t *px = g_new(uint32_t, AW * AH);
    g_autoptr(GError) error = NULL;

    for (uint32_t y = 0; y < AH; y++) {
        for (uint32_t x = 0; x < AW; x++) {
            px[y * AW + x] = animated(AX + x, AY + y, fx->frame);
        }
    }
    fx->frame++;
    g_assert_true(qs_screen_update(fx->screen, AX, AY, AW, AH, AW * 4, QS_PIXMAN_X8R8G8B8,
                                   (const uint8_t *)px, AW * AH * 4, fx->clock.now_us,
                                   &error));
}

static gint find_msg(QsConn *conn, guint16 type, guint from)
{
    GArray *sent = fake_conn_sent(conn);

    for (guint i = from; i < sent->len; i++) {
        if (g_array_index(sent, FakeMsg, i).type == type) {
            return (gint)i;
        }
    }
    return -1;
}

static guint count_msgs(QsConn *conn, guint16 type)
{
    GArray *sent = fake_conn_sent(conn);
    guint n = 0;

    for (guint i = 0; i < sent->len; i++) {
        n += g_array_index(sent, FakeMsg, i).type == type;
    }
    return n;
}

static const uint8_t *body(QsConn *conn, gint i, gsize *size)
{
    return g_bytes_get_data(g_array_index(fake_conn_sent(conn), FakeMsg, i).payload, size);
}

/* Animates until a stream starts (at most 20 frames); returns its codec. */
static uint8_t animate_until_stream(Fx *fx, guint *frames_needed)
{
    gint i = -1;
    gsize size;
    const uint8_t *p;

    for (guint f = 0; f < 20 && i < 0; f++) {
        draw_frame(fx);
        spin(fx, 33);
        i = find_msg(fx->display, SPICE_MSG_DISPLAY_STREAM_CREATE, 0);
        *frames_needed = f + 1;
    }
    g_assert_cmpint(i, >=, 0);
    p = body(fx->display, i, &size);
    g_assert_cmpuint(size, >=, 51);
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 0);                    /* surface */
    g_assert_cmpuint(p[8], ==, SPICE_STREAM_FLAGS_TOP_DOWN);
    g_assert_cmpuint(qs_wire_get_u32(p + 18), ==, AW);              /* stream_width */
    g_assert_cmpuint(qs_wire_get_u32(p + 22), ==, AH);
    g_assert_cmpuint(qs_wire_get_i32(p + 34), ==, AY);              /* dest top */
    g_assert_cmpuint(qs_wire_get_i32(p + 38), ==, AX);              /* left */
    g_assert_cmpuint(qs_wire_get_i32(p + 42), ==, AY + AH);         /* bottom */
    g_assert_cmpuint(qs_wire_get_i32(p + 46), ==, AX + AW);         /* right */
    return p[9];
}

/* After the stream: the area comes back as lossless images covering it. */
static void check_end(Fx *fx)
{
    gint d, i;
    guint lossless = 0;
    GArray *sent;

    spin(fx, 700);
    d = find_msg(fx->display, SPICE_MSG_DISPLAY_STREAM_DESTROY, 0);
    g_assert_cmpint(d, >=, 0);
    sent = fake_conn_sent(fx->display);
    for (i = d + 1; i < (gint)sent->len; i++) {
        FakeMsg *m = &g_array_index(sent, FakeMsg, i);
        gsize size;
        const uint8_t *p = g_bytes_get_data(m->payload, &size);

        if (m->type != SPICE_MSG_DISPLAY_DRAW_COPY) {
            continue;
        }
        g_assert_cmpuint(size, >, 57 + 18);
        /* Image descriptor type at 57 + 8: never JPEG after a stream. */
        g_assert_cmpuint(p[57 + 8], !=, SPICE_IMAGE_TYPE_JPEG);
        lossless++;
    }
    g_assert_cmpuint(lossless, >=, 1);
    g_assert_cmpint(find_msg(fx->display, SPICE_MSG_DISPLAY_STREAM_DATA, d), <, 0);
}

static void test_mjpeg_without_caps(void)
{
    Fx fx = { 0 };
    guint frames = 0;

    setup(&fx, 1u << SPICE_DISPLAY_CAP_LZ4_COMPRESSION);
    g_assert_cmpuint(animate_until_stream(&fx, &frames), ==, SPICE_VIDEO_CODEC_TYPE_MJPEG);
    g_test_message("stream after %u frames", frames);
    g_assert_cmpuint(frames, ==, 5);   /* hot at the 5th */
    for (guint f = 0; f < 10; f++) {
        draw_frame(&fx);
        spin(&fx, 33);
    }
    g_test_message("%u frames sent", count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA));
    /* The 5th frame and the 10 after it, each encoded before the next. */
    g_assert_cmpuint(count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA), ==, 11);
    check_end(&fx);
    teardown(&fx);
}

static void test_h264_with_caps(void)
{
    Fx fx = { 0 };
    guint frames = 0, data_before;

    setup(&fx, (1u << SPICE_DISPLAY_CAP_LZ4_COMPRESSION) |
                   (1u << SPICE_DISPLAY_CAP_MULTI_CODEC) |
                   (1u << SPICE_DISPLAY_CAP_CODEC_H264) |
                   (1u << SPICE_DISPLAY_CAP_CODEC_MJPEG));
    g_assert_cmpuint(animate_until_stream(&fx, &frames), ==, SPICE_VIDEO_CODEC_TYPE_H264);
    g_assert_cmpuint(frames, ==, 5);
    for (guint f = 0; f < 10; f++) {
        draw_frame(&fx);
        spin(&fx, 33);
    }
    /* Still: the H.264 flush frame follows the last real frame. */
    data_before = count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA);
    g_test_message("%u frames sent", data_before);
    g_assert_cmpuint(data_before, ==, 11);
    spin(&fx, 150);
    g_assert_cmpuint(count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA), ==, data_before + 1);
    check_end(&fx);
    teardown(&fx);
}

static void test_preferred_and_refused(void)
{
    Fx fx = { 0 };
    guint frames = 0;
    static const uint8_t prefer_mjpeg[3] = { 2, SPICE_VIDEO_CODEC_TYPE_MJPEG,
                                             SPICE_VIDEO_CODEC_TYPE_H264 };
    uint8_t report[32] = { 0 };
    gint c;

    setup(&fx, (1u << SPICE_DISPLAY_CAP_MULTI_CODEC) | (1u << SPICE_DISPLAY_CAP_CODEC_H264) |
                   (1u << SPICE_DISPLAY_CAP_STREAM_REPORT));
    fake_conn_deliver(fx.display, SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE,
                      prefer_mjpeg, sizeof(prefer_mjpeg));
    g_assert_cmpuint(animate_until_stream(&fx, &frames), ==, SPICE_VIDEO_CODEC_TYPE_MJPEG);
    g_assert_cmpint(find_msg(fx.display, SPICE_MSG_DISPLAY_STREAM_ACTIVATE_REPORT, 0), >=, 0);
    /* The client asks for H.264 first now, then says it cannot decode it. */
    {
        static const uint8_t prefer_h264[2] = { 1, SPICE_VIDEO_CODEC_TYPE_H264 };

        fake_conn_deliver(fx.display, SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE,
                          prefer_h264, sizeof(prefer_h264));
    }
    /* Reports of a stream with drops: the stream stays (no re-create). */
    c = find_msg(fx.display, SPICE_MSG_DISPLAY_STREAM_CREATE, 0);
    memcpy(report, body(fx.display, c, NULL) + 4, 4);        /* stream id */
    memcpy(report + 4, report, 4);                          /* unique id = id */
    report[16] = 10;                                        /* num_frames */
    report[20] = 3;                                         /* num_drops */
    fake_conn_deliver(fx.display, SPICE_MSGC_DISPLAY_STREAM_REPORT, report, sizeof(report));
    draw_frame(&fx);
    spin(&fx, 33);
    g_assert_cmpuint(count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_CREATE), ==, 1);
    g_assert_cmpint(find_msg(fx.display, SPICE_MSG_DISPLAY_STREAM_DESTROY, 0), <, 0);
    /* "Cannot decode" (0 frames, 0xffffffff drops) ends the stream. */
    memset(report + 16, 0, 4);
    memset(report + 20, 0xff, 4);
    fake_conn_deliver(fx.display, SPICE_MSGC_DISPLAY_STREAM_REPORT, report, sizeof(report));
    g_assert_cmpint(find_msg(fx.display, SPICE_MSG_DISPLAY_STREAM_DESTROY, 0), >=, 0);
    teardown(&fx);
}

/* 2 Mbit/s, 80 ms: the animation still streams within a few guest frames
 * (heat is counted from the screen, not from what the link let out), the
 * bottleneck never holds more than a fraction of a second, and a small
 * change beside the animation meets little queue. */
static void test_slow_link(void)
{
    Fx fx = { 0 };
    guint frames = 0, n_before = 0;
    int64_t worst = 0, key_delay = -1;
    g_autofree uint32_t *key = g_new(uint32_t, 32 * 32);
    g_autoptr(GError) error = NULL;
    GArray *sent;

    setup_link(&fx, (1u << SPICE_DISPLAY_CAP_LZ4_COMPRESSION) |
                        (1u << SPICE_DISPLAY_CAP_MULTI_CODEC) |
                        (1u << SPICE_DISPLAY_CAP_CODEC_H264),
               250000, 80000);
    spin(&fx, 400);                  /* the first full picture drains */
    g_assert_cmpuint(animate_until_stream(&fx, &frames), ==, SPICE_VIDEO_CODEC_TYPE_H264);
    g_test_message("stream after %u frames", frames);
    g_assert_cmpuint(frames, ==, 5);   /* hot at the 5th: the link holds nothing back */
    for (guint f = 0; f < 45; f++) {
        draw_frame(&fx);
        spin(&fx, 33);
        worst = MAX(worst, fake_conn_link_delay_us(fx.display));
        if (f == 30) {
            for (guint i = 0; i < 32 * 32; i++) {
                key[i] = 0xff0000 + i;
            }
            n_before = fake_conn_sent(fx.display)->len;
            g_assert_true(qs_screen_update(fx.screen, 270, 190, 32, 32, 32 * 4,
                                           QS_PIXMAN_X8R8G8B8, (const uint8_t *)key,
                                           32 * 32 * 4, fx.clock.now_us, &error));
        }
        if (f >= 30 && key_delay < 0) {
            sent = fake_conn_sent(fx.display);
            for (guint i = n_before; i < sent->len; i++) {
                const uint8_t *p = body(fx.display, (gint)i, NULL);

                if (g_array_index(sent, FakeMsg, i).type == SPICE_MSG_DISPLAY_DRAW_COPY &&
                    qs_wire_get_i32(p + 8) == 256 && qs_wire_get_i32(p + 4) == 176) {
                    key_delay = fake_conn_msg_delay_us(fx.display, i);
                }
            }
        }
    }
    g_test_message("worst bottleneck backlog %" G_GINT64_FORMAT " ms, key box met %"
                   G_GINT64_FORMAT " ms", worst / 1000, key_delay / 1000);
    g_assert_cmpint(worst, <, 400000);
    g_assert_cmpint(key_delay, >=, 0);
    g_assert_cmpint(key_delay, <, 150000);
    g_test_message("%u frames sent", count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA));
    g_assert_cmpuint(count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA), >=, 20);
    check_end(&fx);
    teardown(&fx);
}

/* A small animation (below the stream size) of photographic content goes
 * as JPEG once hot (on a 10 Mbit/s, 80 ms link, whose bands are large
 * enough for JPEG to pay); once still it is resent losslessly within
 * ~0.5 s. */
static void test_lossy_then_exact(void)
{
    Fx fx = { 0 };
    guint jpeg = 0, after = 0, lossless_after = 0;
    gint last_jpeg = -1;
    GArray *sent;
    g_autofree uint8_t *covered = g_malloc0(96 * 96);

    setup_link(&fx, 1u << SPICE_DISPLAY_CAP_LZ4_COMPRESSION, 1250000, 80000);
    for (guint f = 0; f < 30; f++) {
        g_autofree uint32_t *px = g_new(uint32_t, 96 * 96);
        g_autoptr(GError) error = NULL;

        for (uint32_t i = 0; i < 96 * 96; i++) {
            px[i] = animated(i % 96, i / 96, f) ^ (i * 2654435761u >> 8);
        }
        g_assert_true(qs_screen_update(fx.screen, 32, 32, 96, 96, 96 * 4, QS_PIXMAN_X8R8G8B8,
                                       (const uint8_t *)px, 96 * 96 * 4,
                                       fx.clock.now_us, &error));
        spin(&fx, 33);
    }
    g_assert_cmpint(find_msg(fx.display, SPICE_MSG_DISPLAY_STREAM_CREATE, 0), <, 0);
    spin(&fx, 900);
    sent = fake_conn_sent(fx.display);
    for (guint i = 0; i < sent->len; i++) {
        const uint8_t *p = body(fx.display, (gint)i, NULL);

        if (g_array_index(sent, FakeMsg, i).type == SPICE_MSG_DISPLAY_DRAW_COPY &&
            p[57 + 8] == SPICE_IMAGE_TYPE_JPEG) {
            jpeg++;
            last_jpeg = (gint)i;
        }
    }
    g_test_message("%u JPEG images", jpeg);
    g_assert_cmpuint(jpeg, >=, 1);
    /* Everything after the last JPEG covers its area losslessly. */
    for (guint i = (guint)last_jpeg + 1; i < sent->len; i++) {
        const uint8_t *p = body(fx.display, (gint)i, NULL);

        if (g_array_index(sent, FakeMsg, i).type == SPICE_MSG_DISPLAY_DRAW_COPY) {
            int32_t top = qs_wire_get_i32(p + 4), left = qs_wire_get_i32(p + 8);
            int32_t bottom = qs_wire_get_i32(p + 12), right = qs_wire_get_i32(p + 16);

            after++;
            lossless_after += p[57 + 8] != SPICE_IMAGE_TYPE_JPEG;
            for (int32_t y = MAX(top, 32); y < MIN(bottom, 128); y++) {
                for (int32_t x = MAX(left, 32); x < MIN(right, 128); x++) {
                    covered[(y - 32) * 96 + (x - 32)] = 1;
                }
            }
        }
    }
    g_assert_cmpuint(after, >=, 1);
    g_assert_cmpuint(lossless_after, ==, after);
    /* ... and covers all of it. */
    for (guint i = 0; i < 96 * 96; i++) {
        g_assert_cmpuint(covered[i], ==, 1);
    }
    teardown(&fx);
}

/* The client goes while a frame is being encoded: the worker's result
 * finds no channel and is dropped, nothing more is sent, and the encoder
 * the job held is freed with it (ASan/LSan builds check the rest). */
static void test_close_while_encoding(void)
{
    Fx fx = { 0 };
    guint frames = 0, base = qs_video_encoders_alive(), data_at_close;
    int64_t end;

    setup(&fx, (1u << SPICE_DISPLAY_CAP_MULTI_CODEC) | (1u << SPICE_DISPLAY_CAP_CODEC_H264));
    animate_until_stream(&fx, &frames);
    /* The results of the frames so far (and of the flush frame one frame
     * interval after the last) are in, and the next frame is due: it gets
     * a job of its own. Well inside QS_PLAN_STREAM_END_US, so the stream stays. */
    spin(&fx, 150);
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base + 1);
    draw_frame(&fx);
    /* The pump reads the frame and starts its job within this call; with
     * no loop iteration between it and the close, the job's result cannot
     * have been delivered yet. */
    fake_conn_drain(fx.display);
    data_at_close = count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA);
    fake_conn_vanish(fx.display, "the client went");
    /* The channel is gone; the encoder is out with the job (had no job been
     * running, the channel would have freed it with the stream). */
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base + 1);
    /* The worker's answer, however long the machine takes to give it. */
    end = g_get_monotonic_time() + LIVENESS_US;
    while (qs_video_encoders_alive() != base) {
        g_assert_cmpint(g_get_monotonic_time(), <, end);
        g_main_context_iteration(NULL, FALSE);
        g_usleep(200);
    }
    g_assert_cmpuint(qs_video_encoders_alive(), ==, base);
    g_assert_cmpuint(count_msgs(fx.display, SPICE_MSG_DISPLAY_STREAM_DATA), ==, data_at_close);
    g_assert_cmpuint(fake_conn_sent_after_close(fx.display), ==, 0);
    teardown(&fx);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/stream/mjpeg-without-caps", test_mjpeg_without_caps);
    g_test_add_func("/channels/stream/h264-with-caps", test_h264_with_caps);
    g_test_add_func("/channels/stream/preferred-and-refused", test_preferred_and_refused);
    g_test_add_func("/channels/stream/slow-link", test_slow_link);
    g_test_add_func("/channels/stream/lossy-then-exact", test_lossy_then_exact);
    g_test_add_func("/channels/stream/close-while-encoding", test_close_while_encoding);
    return g_test_run();
}
