/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the server message builders, byte by byte against spice-protocol.md §2-§5. */
#include "wire/qs-msg.h"
#include "wire/qs-wire.h"

#include <lz4.h>
#include <spice/enums.h>
#include <string.h>

static const uint8_t *body(GBytes *b, gsize expect_len)
{
    gsize len;
    const uint8_t *p = g_bytes_get_data(b, &len);

    g_assert_cmpuint(len, ==, expect_len);
    return p;
}

static void test_base(void)
{
    g_autoptr(GBytes) ack = qs_msg_set_ack(7, 20);
    g_autoptr(GBytes) ping = qs_msg_ping(3, 0x0102030405060708ull);
    static const uint8_t ack_bytes[] = { 7, 0, 0, 0, 20, 0, 0, 0 };
    static const uint8_t ping_bytes[] = { 3, 0, 0, 0, 8, 7, 6, 5, 4, 3, 2, 1 };

    g_assert_cmpmem(body(ack, 8), 8, ack_bytes, 8);
    g_assert_cmpmem(body(ping, 12), 12, ping_bytes, 12);
}

static void test_main(void)
{
    QsMainInit init = { 0xdeadbeef, 1, 3, 2, 0, 10, 123456, 0 };
    QsChannelId ids[] = { { SPICE_CHANNEL_DISPLAY, 0 }, { SPICE_CHANNEL_INPUTS, 0 },
                          { SPICE_CHANNEL_CURSOR, 0 } };
    static const uint8_t list_bytes[] = { 3, 0, 0, 0, 2, 0, 3, 0, 4, 0 };
    static const uint8_t mode_bytes[] = { 3, 0, 2, 0 };
    static const uint8_t name_bytes[] = { 4, 0, 0, 0, 'v', 'm', '1', 0 };
    static const uint8_t uuid_expect[16] = { 0x12, 0x34, 0x56, 0x78, 0x9a, 0xbc, 0xde,
                                             0xf0, 0x01, 0x23, 0x45, 0x67, 0x89,
                                             0xab, 0xcd, 0xef };
    uint8_t uuid[16];
    g_autoptr(GBytes) m_init = qs_msg_main_init(&init);
    g_autoptr(GBytes) list = qs_msg_main_channels_list(ids, 3);
    g_autoptr(GBytes) mode = qs_msg_main_mouse_mode(3, 2);
    g_autoptr(GBytes) mm = qs_msg_main_multi_media_time(0x11223344);
    g_autoptr(GBytes) name = qs_msg_main_name("vm1");
    g_autoptr(GBytes) uuid_msg = NULL;
    const uint8_t *p = body(m_init, 32);

    g_assert_cmpuint(qs_wire_get_u32(p), ==, 0xdeadbeef);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, 1);
    g_assert_cmpuint(qs_wire_get_u32(p + 8), ==, 3);
    g_assert_cmpuint(qs_wire_get_u32(p + 12), ==, 2);
    g_assert_cmpuint(qs_wire_get_u32(p + 16), ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 20), ==, 10);
    g_assert_cmpuint(qs_wire_get_u32(p + 24), ==, 123456);
    g_assert_cmpuint(qs_wire_get_u32(p + 28), ==, 0);
    g_assert_cmpmem(body(list, 10), 10, list_bytes, 10);
    g_assert_cmpmem(body(mode, 4), 4, mode_bytes, 4);
    g_assert_cmpuint(qs_wire_get_u32(body(mm, 4)), ==, 0x11223344);
    g_assert_cmpmem(body(name, 8), 8, name_bytes, 8);

    g_assert_true(qs_uuid_parse("12345678-9abc-def0-0123-456789ABCDEF", uuid));
    g_assert_cmpmem(uuid, 16, uuid_expect, 16);
    uuid_msg = qs_msg_main_uuid(uuid);
    g_assert_cmpmem(body(uuid_msg, 16), 16, uuid_expect, 16);
    g_assert_false(qs_uuid_parse("12345678-9abc-def0-0123-456789ABCDE", uuid));
    g_assert_false(qs_uuid_parse("12345678-9abc-def0-0123-456789ABCDEF0", uuid));
    g_assert_false(qs_uuid_parse("1234567x-9abc-def0-0123-456789ABCDEF", uuid));
    g_assert_false(qs_uuid_parse("", uuid));
}

static void test_display_surface(void)
{
    g_autoptr(GBytes) create = qs_msg_surface_create(0, 1024, 768,
                                                     SPICE_SURFACE_FMT_32_xRGB,
                                                     SPICE_SURFACE_FLAGS_PRIMARY);
    g_autoptr(GBytes) destroy = qs_msg_surface_destroy(0);
    QsMonitor mon = { 0, 0, 1024, 768, 0, 0, 0 };
    g_autoptr(GBytes) monitors = qs_msg_monitors_config(&mon, 1, 1);
    const uint8_t *p = body(create, 20);

    g_assert_cmpuint(qs_wire_get_u32(p), ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, 1024);
    g_assert_cmpuint(qs_wire_get_u32(p + 8), ==, 768);
    g_assert_cmpuint(qs_wire_get_u32(p + 12), ==, 32);
    g_assert_cmpuint(qs_wire_get_u32(p + 16), ==, 1);
    g_assert_cmpuint(qs_wire_get_u32(body(destroy, 4)), ==, 0);
    p = body(monitors, 4 + 28);
    g_assert_cmpuint(qs_wire_get_u16(p), ==, 1);
    g_assert_cmpuint(qs_wire_get_u16(p + 2), ==, 1);
    g_assert_cmpuint(qs_wire_get_u32(p + 4), ==, 0);        /* monitor id */
    g_assert_cmpuint(qs_wire_get_u32(p + 8), ==, 0);        /* surface id */
    g_assert_cmpuint(qs_wire_get_u32(p + 12), ==, 1024);
    g_assert_cmpuint(qs_wire_get_u32(p + 16), ==, 768);
    g_assert_cmpuint(qs_wire_get_u32(p + 20), ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 24), ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 28), ==, 0);
}

/* The 57-byte DRAW_COPY head of spice-protocol.md §3.3. */
static void check_draw_copy_head(const uint8_t *p, int32_t x, int32_t y,
                                 uint32_t w, uint32_t h)
{
    g_assert_cmpuint(qs_wire_get_u32(p), ==, 0);                   /* surface */
    g_assert_cmpint(qs_wire_get_i32(p + 4), ==, y);                /* top */
    g_assert_cmpint(qs_wire_get_i32(p + 8), ==, x);                /* left */
    g_assert_cmpint(qs_wire_get_i32(p + 12), ==, y + (int32_t)h);  /* bottom */
    g_assert_cmpint(qs_wire_get_i32(p + 16), ==, x + (int32_t)w);  /* right */
    g_assert_cmpuint(p[20], ==, 0);                                 /* clip NONE */
    g_assert_cmpuint(qs_wire_get_u32(p + 21), ==, 57);             /* src_bitmap */
    g_assert_cmpint(qs_wire_get_i32(p + 25), ==, 0);
    g_assert_cmpint(qs_wire_get_i32(p + 29), ==, 0);
    g_assert_cmpint(qs_wire_get_i32(p + 33), ==, (int32_t)h);
    g_assert_cmpint(qs_wire_get_i32(p + 37), ==, (int32_t)w);
    g_assert_cmpuint(qs_wire_get_u16(p + 41), ==, 8);              /* rop PUT */
    g_assert_cmpuint(p[43], ==, 0);                                 /* scale */
    for (int i = 44; i < 57; i++) {
        g_assert_cmpuint(p[i], ==, 0);                              /* QMask */
    }
}

static void test_draw_copy(void)
{
    uint32_t w = 40, h = 30;
    size_t stride = (w + 2) * 4;
    g_autofree uint8_t *px = g_malloc0(stride * h);
    QsPixelRect rect = { px, stride, w, h };
    QsImageCodec used;
    g_autoptr(GBytes) bmp = NULL, lz4 = NULL;
    const uint8_t *p;
    gsize len;
    g_autofree uint8_t *dec = g_malloc(w * h * 4);

    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v = (x < 20) ? 0x00ff0000 : 0x000000ff + y;
            memcpy(px + y * stride + x * 4, &v, 4);
        }
    }

    bmp = qs_msg_draw_copy(0, 100, 200, &rect, QS_IMAGE_CODEC_BITMAP, 5, &used);
    g_assert_cmpint(used, ==, QS_IMAGE_CODEC_BITMAP);
    p = body(bmp, 57 + 36 + w * h * 4);
    check_draw_copy_head(p, 100, 200, w, h);
    g_assert_cmpuint(qs_wire_get_u64(p + 57), ==, 5);
    g_assert_cmpuint(p[57 + 8], ==, SPICE_IMAGE_TYPE_BITMAP);
    g_assert_cmpuint(p[57 + 18], ==, 8);
    g_assert_cmpuint(p[57 + 19], ==, 4);
    for (uint32_t y = 0; y < h; y++) {
        g_assert_cmpmem(p + 57 + 36 + y * w * 4, w * 4, px + y * stride, w * 4);
    }

    lz4 = qs_msg_draw_copy(0, 3, 4, &rect, QS_IMAGE_CODEC_LZ4, 6, &used);
    g_assert_cmpint(used, ==, QS_IMAGE_CODEC_LZ4);
    p = g_bytes_get_data(lz4, &len);
    check_draw_copy_head(p, 3, 4, w, h);
    g_assert_cmpuint(p[57 + 8], ==, SPICE_IMAGE_TYPE_LZ4);
    g_assert_cmpuint(qs_wire_get_u32(p + 57 + 18), ==, len - 57 - 22);
    g_assert_cmpuint(p[57 + 22], ==, 1);
    g_assert_cmpuint(p[57 + 23], ==, 8);
    {
        const uint8_t *blk = p + 57 + 24;
        uint32_t blen = ((uint32_t)blk[0] << 24) | (blk[1] << 16) | (blk[2] << 8) | blk[3];

        g_assert_cmpuint(57 + 24 + 4 + blen, ==, len);     /* one block here */
        g_assert_cmpint(LZ4_decompress_safe((const char *)blk + 4, (char *)dec,
                                            (int)blen, (int)(w * h * 4)), ==, (int)(w * h * 4));
    }
    for (uint32_t y = 0; y < h; y++) {
        g_assert_cmpmem(dec + y * w * 4, w * 4, px + y * stride, w * 4);
    }
}

static void test_cursor(void)
{
    uint8_t argb[2 * 3 * 4];
    g_autoptr(GBytes) data = NULL;
    QsSpiceCursor shape = { 0x99, 2, 3, 1, 7, NULL };
    g_autoptr(GBytes) init_none = qs_msg_cursor_init(10, -2, 0, 0, TRUE, NULL);
    g_autoptr(GBytes) init = NULL, set = NULL;
    g_autoptr(GBytes) move = qs_msg_cursor_move(50, 60);
    g_autoptr(GBytes) trail = qs_msg_cursor_trail(4, 5);
    static const uint8_t none_bytes[] = { 10, 0, 0xfe, 0xff, 0, 0, 0, 0, 0, 1, 0 };
    static const uint8_t move_bytes[] = { 50, 0, 60, 0 };
    static const uint8_t trail_bytes[] = { 4, 0, 5, 0 };
    const uint8_t *p;

    for (guint i = 0; i < sizeof(argb); i++) {
        argb[i] = (uint8_t)(i * 7);
    }
    data = g_bytes_new(argb, sizeof(argb));
    shape.argb = data;
    g_assert_true(qs_spice_cursor_valid(&shape));

    /* INIT with no shape: visible forced to 0, Cursor flags NONE. */
    g_assert_cmpmem(body(init_none, 11), 11, none_bytes, 11);
    g_assert_cmpmem(body(move, 4), 4, move_bytes, 4);
    g_assert_cmpmem(body(trail, 4), 4, trail_bytes, 4);

    init = qs_msg_cursor_init(1, 2, 0, 0, TRUE, &shape);
    p = body(init, 9 + 2 + 17 + sizeof(argb));
    g_assert_cmpuint(p[8], ==, 1);
    g_assert_cmpuint(qs_wire_get_u16(p + 9), ==, 0);           /* flags */
    g_assert_cmpuint(qs_wire_get_u64(p + 11), ==, 0x99);       /* unique */
    g_assert_cmpuint(p[19], ==, SPICE_CURSOR_TYPE_ALPHA);
    g_assert_cmpuint(qs_wire_get_u16(p + 20), ==, 2);
    g_assert_cmpuint(qs_wire_get_u16(p + 22), ==, 3);
    g_assert_cmpuint(qs_wire_get_u16(p + 24), ==, 1);          /* hot x */
    g_assert_cmpuint(qs_wire_get_u16(p + 26), ==, 2);          /* hot y clamped */
    g_assert_cmpmem(p + 28, sizeof(argb), argb, sizeof(argb));

    set = qs_msg_cursor_set(-1, 300, TRUE, &shape);
    p = body(set, 5 + 2 + 17 + sizeof(argb));
    g_assert_cmpint((int16_t)qs_wire_get_u16(p), ==, -1);
    g_assert_cmpuint(qs_wire_get_u16(p + 2), ==, 300);
    g_assert_cmpuint(p[4], ==, 1);
    g_assert_cmpuint(qs_wire_get_u16(p + 5), ==, 0);
    g_assert_cmpmem(p + 24, sizeof(argb), argb, sizeof(argb));

    shape.width = 3;            /* data no longer matches the size */
    g_assert_false(qs_spice_cursor_valid(&shape));
}

static void test_inputs(void)
{
    g_autoptr(GBytes) init = qs_msg_inputs_init(5);
    g_autoptr(GBytes) mods = qs_msg_inputs_key_modifiers(2);
    static const uint8_t five[] = { 5, 0 }, two[] = { 2, 0 };

    g_assert_cmpmem(body(init, 2), 2, five, 2);
    g_assert_cmpmem(body(mods, 2), 2, two, 2);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/msg/base", test_base);
    g_test_add_func("/channels/msg/main", test_main);
    g_test_add_func("/channels/msg/display-surface", test_display_surface);
    g_test_add_func("/channels/msg/draw-copy", test_draw_copy);
    g_test_add_func("/channels/msg/cursor", test_cursor);
    g_test_add_func("/channels/msg/inputs", test_inputs);
    return g_test_run();
}
