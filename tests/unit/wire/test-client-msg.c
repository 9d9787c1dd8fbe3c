/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the client message parsers: fields, short bodies, unknown types. */
#include "wire/qs-client-msg.h"

#include <spice/enums.h>

typedef gboolean (*ParseFunc)(uint16_t, const uint8_t *, size_t, QsClientMsg *, GError **);

static QsClientMsg parse_ok(ParseFunc parse, uint16_t type, const uint8_t *data,
                            size_t size)
{
    QsClientMsg msg;
    g_autoptr(GError) error = NULL;

    g_assert_true(parse(type, data, size, &msg, &error));
    g_assert_no_error(error);
    g_assert_cmpuint(msg.type, ==, type);
    return msg;
}

/* Every proper prefix of a fixed-size body must be refused as MALFORMED. */
static void check_short(ParseFunc parse, uint16_t type, const uint8_t *data,
                        size_t size)
{
    for (size_t n = 0; n < size; n++) {
        QsClientMsg msg;
        g_autoptr(GError) error = NULL;

        g_assert_false(parse(type, n ? data : NULL, n, &msg, &error));
        g_assert_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED);
    }
}

static void test_base(void)
{
    static const uint8_t sync[] = { 9, 0, 0, 0 };
    static const uint8_t pong[] = { 1, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1 };
    static const uint8_t disc[] = { 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0 };
    ParseFunc all[] = { qs_main_msg_parse, qs_display_msg_parse,
                        qs_inputs_msg_parse, qs_cursor_msg_parse };

    for (guint i = 0; i < G_N_ELEMENTS(all); i++) {
        QsClientMsg m = parse_ok(all[i], SPICE_MSGC_ACK_SYNC, sync, 4);

        g_assert_cmpuint(m.u.generation, ==, 9);
        parse_ok(all[i], SPICE_MSGC_ACK, NULL, 0);
        m = parse_ok(all[i], SPICE_MSGC_PONG, pong, sizeof(pong));
        g_assert_cmpuint(m.u.pong.id, ==, 1);
        g_assert_cmpuint(m.u.pong.timestamp, ==, 0x0102030405060708ull);
        m = parse_ok(all[i], SPICE_MSGC_DISCONNECTING, disc, sizeof(disc));
        g_assert_cmpuint(m.u.disconnecting.timestamp, ==, 1);
        g_assert_cmpuint(m.u.disconnecting.reason, ==, 3);
        parse_ok(all[i], SPICE_MSGC_MIGRATE_FLUSH_MARK, NULL, 0);
        m = parse_ok(all[i], SPICE_MSGC_MIGRATE_DATA, sync, 4);
        g_assert_cmpuint(m.u.bytes.len, ==, 4);
        check_short(all[i], SPICE_MSGC_ACK_SYNC, sync, 4);
        check_short(all[i], SPICE_MSGC_PONG, pong, sizeof(pong));
        check_short(all[i], SPICE_MSGC_DISCONNECTING, disc, sizeof(disc));
    }
}

static void check_unknown(ParseFunc parse, uint16_t type)
{
    QsClientMsg msg;
    g_autoptr(GError) error = NULL;
    static const uint8_t junk[16] = { 0 };

    g_assert_false(parse(type, junk, sizeof(junk), &msg, &error));
    g_assert_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_UNKNOWN_TYPE);
    g_assert_nonnull(strstr(error->message, "unknown"));
}

static void test_unknown(void)
{
    check_unknown(qs_main_msg_parse, 0);
    check_unknown(qs_main_msg_parse, 7);
    check_unknown(qs_main_msg_parse, SPICE_MSGC_END_MAIN);
    check_unknown(qs_display_msg_parse, SPICE_MSGC_END_DISPLAY);
    check_unknown(qs_display_msg_parse, SPICE_MSGC_INPUTS_KEY_DOWN + 200);
    check_unknown(qs_inputs_msg_parse, 105);
    check_unknown(qs_inputs_msg_parse, SPICE_MSGC_END_INPUTS);
    check_unknown(qs_cursor_msg_parse, 101);
    check_unknown(qs_cursor_msg_parse, 0xffff);
}

static void test_main(void)
{
    static const uint8_t info[] = { 1, 2, 0, 0, 0, 0, 0, 0 };
    static const uint8_t mode[] = { 2, 0 };
    static const uint8_t tokens[] = { 0xff, 0xff, 0xff, 0xff };
    QsClientMsg m;

    m = parse_ok(qs_main_msg_parse, SPICE_MSGC_MAIN_CLIENT_INFO, info, 8);
    g_assert_cmpuint(m.u.cache_size, ==, 0x201);
    check_short(qs_main_msg_parse, SPICE_MSGC_MAIN_CLIENT_INFO, info, 8);
    parse_ok(qs_main_msg_parse, SPICE_MSGC_MAIN_ATTACH_CHANNELS, NULL, 0);
    m = parse_ok(qs_main_msg_parse, SPICE_MSGC_MAIN_MOUSE_MODE_REQUEST, mode, 2);
    g_assert_cmpuint(m.u.mouse_mode, ==, SPICE_MOUSE_MODE_CLIENT);
    check_short(qs_main_msg_parse, SPICE_MSGC_MAIN_MOUSE_MODE_REQUEST, mode, 2);
    m = parse_ok(qs_main_msg_parse, SPICE_MSGC_MAIN_AGENT_START, tokens, 4);
    g_assert_cmpuint(m.u.tokens, ==, 0xffffffffu);
    check_short(qs_main_msg_parse, SPICE_MSGC_MAIN_AGENT_TOKEN, tokens, 4);
    m = parse_ok(qs_main_msg_parse, SPICE_MSGC_MAIN_AGENT_DATA, info, 8);
    g_assert_true(m.u.bytes.data == info);
    g_assert_cmpuint(m.u.bytes.len, ==, 8);
}

static void test_display(void)
{
    /* spice-gtk's DISPLAY_INIT: cache id 1, 20 Mpx cache, glz dict 1, window. */
    static const uint8_t init[] = { 1, 0x00, 0x00, 0x40, 0x01, 0, 0, 0, 0,
                                    1, 0x00, 0x00, 0x80, 0xff };
    static const uint8_t report[32] = { 1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0, 4, 0, 0, 0,
                                        5, 0, 0, 0, 0xff, 0xff, 0xff, 0xff,
                                        0xf1, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
    static const uint8_t comp[] = { SPICE_IMAGE_COMPRESSION_LZ4 };
    static const uint8_t codecs[] = { 2, SPICE_VIDEO_CODEC_TYPE_H264,
                                      SPICE_VIDEO_CODEC_TYPE_MJPEG };
    QsClientMsg m;
    g_autoptr(GError) error = NULL;

    m = parse_ok(qs_display_msg_parse, SPICE_MSGC_DISPLAY_INIT, init, sizeof(init));
    g_assert_cmpuint(m.u.display_init.pixmap_cache_id, ==, 1);
    g_assert_cmpint(m.u.display_init.pixmap_cache_size, ==, 0x01400000);
    g_assert_cmpuint(m.u.display_init.glz_dictionary_id, ==, 1);
    g_assert_cmpint(m.u.display_init.glz_dictionary_window_size, ==, (int32_t)0xff800000);
    check_short(qs_display_msg_parse, SPICE_MSGC_DISPLAY_INIT, init, sizeof(init));

    m = parse_ok(qs_display_msg_parse, SPICE_MSGC_DISPLAY_STREAM_REPORT, report, 32);
    g_assert_cmpuint(m.u.stream_report.stream_id, ==, 1);
    g_assert_cmpuint(m.u.stream_report.unique_id, ==, 2);
    g_assert_cmpuint(m.u.stream_report.start_frame_mm_time, ==, 3);
    g_assert_cmpuint(m.u.stream_report.end_frame_mm_time, ==, 4);
    g_assert_cmpuint(m.u.stream_report.num_frames, ==, 5);
    g_assert_cmpuint(m.u.stream_report.num_drops, ==, 0xffffffffu);
    g_assert_cmpint(m.u.stream_report.last_frame_delay, ==, -15);
    g_assert_cmpuint(m.u.stream_report.audio_delay, ==, 0xffffffffu);
    check_short(qs_display_msg_parse, SPICE_MSGC_DISPLAY_STREAM_REPORT, report, 32);

    m = parse_ok(qs_display_msg_parse, SPICE_MSGC_DISPLAY_PREFERRED_COMPRESSION, comp, 1);
    g_assert_cmpuint(m.u.compression, ==, SPICE_IMAGE_COMPRESSION_LZ4);
    check_short(qs_display_msg_parse, SPICE_MSGC_DISPLAY_PREFERRED_COMPRESSION, comp, 1);

    m = parse_ok(qs_display_msg_parse, SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE,
                 codecs, sizeof(codecs));
    g_assert_cmpuint(m.u.bytes.len, ==, 2);
    g_assert_cmpuint(m.u.bytes.data[0], ==, SPICE_VIDEO_CODEC_TYPE_H264);
    g_assert_cmpuint(m.u.bytes.data[1], ==, SPICE_VIDEO_CODEC_TYPE_MJPEG);
    /* A count the body cannot hold. */
    g_assert_false(qs_display_msg_parse(SPICE_MSGC_DISPLAY_PREFERRED_VIDEO_CODEC_TYPE,
                                        codecs, 2, &m, &error));
    g_assert_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED);
    parse_ok(qs_display_msg_parse, SPICE_MSGC_DISPLAY_GL_DRAW_DONE, NULL, 0);
}

static void test_inputs(void)
{
    static const uint8_t key[] = { 0xe0, 0x48, 0, 0 };
    static const uint8_t mods[] = { 6, 0 };
    static const uint8_t scan[] = { 0xe0, 0x1d, 0xe0, 0x9d };
    static const uint8_t motion[] = { 0xfb, 0xff, 0xff, 0xff, 7, 0, 0, 0, 1, 0 };
    static const uint8_t pos[] = { 0x20, 3, 0, 0, 0x58, 2, 0, 0, 4, 0, 1 };
    static const uint8_t press[] = { SPICE_MOUSE_BUTTON_LEFT, 1, 0 };
    uint8_t big[65] = { 0 };
    QsClientMsg m;
    g_autoptr(GError) error = NULL;

    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_KEY_DOWN, key, 4);
    g_assert_cmpuint(m.u.key, ==, 0x48e0);
    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_KEY_UP, key, 4);
    g_assert_cmpuint(m.u.key, ==, 0x48e0);
    check_short(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_KEY_DOWN, key, 4);
    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_KEY_MODIFIERS, mods, 2);
    g_assert_cmpuint(m.u.modifiers, ==, 6);
    check_short(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_KEY_MODIFIERS, mods, 2);
    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_KEY_SCANCODE, scan, 4);
    g_assert_cmpuint(m.u.bytes.len, ==, 4);
    g_assert_true(m.u.bytes.data == scan);
    g_assert_false(qs_inputs_msg_parse(SPICE_MSGC_INPUTS_KEY_SCANCODE, big,
                                       sizeof(big), &m, &error));
    g_assert_error(error, QS_CHANNEL_ERROR, QS_CHANNEL_ERROR_MALFORMED);

    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_MOTION, motion, 10);
    g_assert_cmpint(m.u.motion.dx, ==, -5);
    g_assert_cmpint(m.u.motion.dy, ==, 7);
    g_assert_cmpuint(m.u.motion.buttons, ==, 1);
    check_short(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_MOTION, motion, 10);
    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_POSITION, pos, 11);
    g_assert_cmpuint(m.u.position.x, ==, 800);
    g_assert_cmpuint(m.u.position.y, ==, 600);
    g_assert_cmpuint(m.u.position.buttons, ==, 4);
    g_assert_cmpuint(m.u.position.display_id, ==, 1);
    check_short(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_POSITION, pos, 11);
    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_PRESS, press, 3);
    g_assert_cmpuint(m.u.button.button, ==, SPICE_MOUSE_BUTTON_LEFT);
    g_assert_cmpuint(m.u.button.buttons, ==, 1);
    m = parse_ok(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_RELEASE, press, 3);
    check_short(qs_inputs_msg_parse, SPICE_MSGC_INPUTS_MOUSE_RELEASE, press, 3);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/parse/base", test_base);
    g_test_add_func("/channels/parse/unknown", test_unknown);
    g_test_add_func("/channels/parse/main", test_main);
    g_test_add_func("/channels/parse/display", test_display);
    g_test_add_func("/channels/parse/inputs", test_inputs);
    return g_test_run();
}
