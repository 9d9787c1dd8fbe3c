/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Byte-exact tests of the stream message builders (spice-protocol.md §3.2, §3.5, §3.6) and of the mm_time stamping rule. */
#include "wire/qs-msg.h"
#include "encode/qs-video.h"

#include <spice/enums.h>
#include <string.h>

/* Little-endian literals, so the expected bytes read like the layout. */
#define U32(v) (uint8_t)(v), (uint8_t)((v) >> 8), (uint8_t)((v) >> 16), (uint8_t)((uint32_t)(v) >> 24)
#define U64(v) U32((uint32_t)(v)), U32((uint32_t)((uint64_t)(v) >> 32))

static void check_bytes(GBytes *got, const uint8_t *want, size_t len)
{
    gsize n;
    const uint8_t *p = g_bytes_get_data(got, &n);

    g_assert_cmpmem(p, n, want, len);
}

static void test_stream_create(void)
{
    QsStreamCreate c = {
        .surface_id = 0,
        .id = 3,
        .codec_type = SPICE_VIDEO_CODEC_TYPE_H264,
        .top_down = TRUE,
        .stamp = 0x0102030405060708ull,
        .stream_width = 640, .stream_height = 480,
        .src_width = 640, .src_height = 480,
        .dest = { 624, 160, 640, 480 },
    };
    static const uint8_t want_none[] = {
        U32(0), U32(3), 1, 3, U64(0x0102030405060708ull),
        U32(640), U32(480), U32(640), U32(480),
        U32(160), U32(624), U32(640), U32(1264),     /* top left bottom right */
        0,                                          /* Clip NONE */
    };
    QsStreamRect r[2] = { { 624, 160, 100, 50 }, { -2, 0, 4, 1 } };
    static const uint8_t want_rects[] = {
        U32(0), U32(3), 0, 1, U64(0x0102030405060708ull),
        U32(640), U32(480), U32(640), U32(480),
        U32(160), U32(624), U32(640), U32(1264),
        1, U32(2),                                  /* Clip RECTS, 2 */
        U32(160), U32(624), U32(210), U32(724),
        U32(0), U32(-2), U32(1), U32(2),
    };
    static const uint8_t want_hidden[] = {
        U32(0), U32(3), 0, 1, U64(0x0102030405060708ull),
        U32(640), U32(480), U32(640), U32(480),
        U32(160), U32(624), U32(640), U32(1264),
        1, U32(0),                                  /* fully clipped */
    };
    g_autoptr(GBytes) none = qs_msg_stream_create(&c);
    g_autoptr(GBytes) rects = NULL;
    g_autoptr(GBytes) hidden = NULL;

    /* 50 fixed bytes + 1 for Clip NONE. */
    g_assert_cmpuint(sizeof(want_none), ==, 51);
    check_bytes(none, want_none, sizeof(want_none));

    c.top_down = FALSE;
    c.codec_type = SPICE_VIDEO_CODEC_TYPE_MJPEG;
    c.clip = (QsStreamClip){ TRUE, r, 2 };
    rects = qs_msg_stream_create(&c);
    check_bytes(rects, want_rects, sizeof(want_rects));

    c.clip = (QsStreamClip){ TRUE, NULL, 0 };
    hidden = qs_msg_stream_create(&c);
    check_bytes(hidden, want_hidden, sizeof(want_hidden));
}

static void test_stream_data(void)
{
    static const uint8_t frame_bytes[] = { 0, 0, 0, 1, 9, 0xf0 };
    g_autoptr(GBytes) frame = g_bytes_new_static(frame_bytes, sizeof(frame_bytes));
    g_autoptr(GBytes) empty = g_bytes_new_static("", 0);
    static const uint8_t want[] = {
        U32(7), U32(123456), U32(6), 0, 0, 0, 1, 9, 0xf0,
    };
    static const uint8_t want_empty[] = { U32(7), U32(1), U32(0) };
    QsStreamRect dest = { 10, 20, 320, 240 };
    static const uint8_t want_sized[] = {
        U32(7), U32(123456), U32(320), U32(240),
        U32(20), U32(10), U32(260), U32(330),
        U32(6), 0, 0, 0, 1, 9, 0xf0,
    };
    g_autoptr(GBytes) data = qs_msg_stream_data(7, 123456, frame);
    g_autoptr(GBytes) data0 = qs_msg_stream_data(7, 1, empty);
    g_autoptr(GBytes) sized = qs_msg_stream_data_sized(7, 123456, 320, 240, &dest,
                                                       frame);

    check_bytes(data, want, sizeof(want));
    check_bytes(data0, want_empty, sizeof(want_empty));
    check_bytes(sized, want_sized, sizeof(want_sized));
}

static void test_stream_small(void)
{
    QsStreamRect r = { 1, 2, 3, 4 };
    QsStreamClip clip = { TRUE, &r, 1 };
    static const uint8_t want_clip[] = {
        U32(5), 1, U32(1), U32(2), U32(1), U32(6), U32(4),
    };
    static const uint8_t want_clip_none[] = { U32(5), 0 };
    static const uint8_t want_destroy[] = { U32(63) };
    static const uint8_t want_report[] = { U32(2), U32(0xabcdef01), U32(5), U32(1000) };
    g_autoptr(GBytes) c1 = qs_msg_stream_clip(5, &clip);
    g_autoptr(GBytes) c0 = qs_msg_stream_clip(5, NULL);
    g_autoptr(GBytes) d = qs_msg_stream_destroy(63);
    g_autoptr(GBytes) a = qs_msg_stream_activate_report(2, 0xabcdef01, 5, 1000);

    check_bytes(c1, want_clip, sizeof(want_clip));
    check_bytes(c0, want_clip_none, sizeof(want_clip_none));
    check_bytes(d, want_destroy, sizeof(want_destroy));
    check_bytes(a, want_report, sizeof(want_report));
    /* Our codec enum is the wire's. */
    g_assert_cmpint(QS_VIDEO_CODEC_MJPEG, ==, SPICE_VIDEO_CODEC_TYPE_MJPEG);
    g_assert_cmpint(QS_VIDEO_CODEC_H264, ==, SPICE_VIDEO_CODEC_TYPE_H264);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/encode/stream-msg/create", test_stream_create);
    g_test_add_func("/encode/stream-msg/data", test_stream_data);
    g_test_add_func("/encode/stream-msg/small", test_stream_small);
    return g_test_run();
}
