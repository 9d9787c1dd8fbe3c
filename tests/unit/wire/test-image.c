/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the BITMAP and LZ4 SPICE images: byte layout and pixel-exact round trips. */
#include "wire/qs-image-msg.h"
#include "wire/qs-wire.h"

#include <lz4.h>
#include <spice/enums.h>
#include <string.h>

typedef struct {
    uint8_t *buf;
    QsPixelRect rect;
} Picture;

/* A rect inside a wider buffer so the stride differs from width * 4. */
static void picture_init(Picture *pic, uint32_t w, uint32_t h, uint32_t pad_px,
                         gboolean noisy, uint32_t seed)
{
    size_t stride = (size_t)(w + pad_px) * 4;
    GRand *rand = g_rand_new_with_seed(seed);

    pic->buf = g_malloc(stride * h);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w + pad_px; x++) {
            uint32_t v = noisy ? g_rand_int(rand)
                               : ((x / 8) * 0x010203u) ^ ((y / 5) * 0x030100u);
            memcpy(pic->buf + stride * y + x * 4, &v, 4);
        }
    }
    pic->rect = (QsPixelRect){ pic->buf, stride, w, h };
    g_rand_free(rand);
}

static void check_descriptor(const uint8_t *p, uint8_t type, uint32_t w, uint32_t h)
{
    g_assert_cmpuint(qs_wire_get_u64(p), ==, 0x1122334455667788ull);
    g_assert_cmpuint(p[8], ==, type);
    g_assert_cmpuint(p[9], ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 10), ==, w);
    g_assert_cmpuint(qs_wire_get_u32(p + 14), ==, h);
}

static void test_bitmap_layout(void)
{
    Picture pic;
    g_autoptr(GByteArray) out = g_byte_array_new();
    const uint8_t *p;

    picture_init(&pic, 13, 7, 3, TRUE, 1);
    qs_image_bitmap_append(&pic.rect, 0x1122334455667788ull, out);
    g_assert_cmpuint(out->len, ==, qs_image_bitmap_size(13, 7));
    g_assert_cmpuint(out->len, ==, 36 + 13 * 7 * 4);
    p = out->data;
    check_descriptor(p, SPICE_IMAGE_TYPE_BITMAP, 13, 7);
    g_assert_cmpuint(p[18], ==, 8);             /* SPICE_BITMAP_FMT_32BIT */
    g_assert_cmpuint(p[19], ==, 4);             /* TOP_DOWN */
    g_assert_cmpuint(qs_wire_get_u32(p + 20), ==, 13);
    g_assert_cmpuint(qs_wire_get_u32(p + 24), ==, 7);
    g_assert_cmpuint(qs_wire_get_u32(p + 28), ==, 13 * 4);
    g_assert_cmpuint(qs_wire_get_u32(p + 32), ==, 0);
    for (uint32_t y = 0; y < 7; y++) {
        g_assert_cmpmem(p + 36 + y * 13 * 4, 13 * 4,
                        pic.buf + pic.rect.stride * y, 13 * 4);
    }
    g_free(pic.buf);
}

/* Decodes an LZ4 image the way spice-gtk's canvas does, checking each field. */
static void check_lz4_round_trip(const Picture *pic, const GByteArray *out)
{
    const uint8_t *p = out->data;
    uint32_t w = pic->rect.width, h = pic->rect.height;
    size_t row = (size_t)w * 4;
    g_autofree uint8_t *dec = g_malloc(row * h);
    size_t done = 0;
    uint32_t data_size;
    const uint8_t *q, *end;

    check_descriptor(p, SPICE_IMAGE_TYPE_LZ4, w, h);
    data_size = qs_wire_get_u32(p + 18);
    g_assert_cmpuint(22 + data_size, ==, out->len);
    g_assert_cmpuint(p[22], ==, 1);             /* top_down */
    g_assert_cmpuint(p[23], ==, 8);             /* SPICE_BITMAP_FMT_32BIT */
    q = p + 24;
    end = p + out->len;
    while (q < end) {
        uint32_t len;
        int n;

        g_assert_cmpint(end - q, >=, 4);
        len = ((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) |
              ((uint32_t)q[2] << 8) | q[3];
        q += 4;
        g_assert_cmpint(end - q, >=, (gint64)len);
        n = LZ4_decompress_safe((const char *)q, (char *)dec + done, (int)len,
                                (int)(row * h - done));
        g_assert_cmpint(n, >, 0);
        g_assert_cmpuint(n % row, ==, 0);      /* blocks hold whole rows */
        done += (size_t)n;
        q += len;
    }
    g_assert_cmpuint(done, ==, row * h);
    for (uint32_t y = 0; y < h; y++) {
        g_assert_cmpmem(dec + row * y, row, pic->rect.pixels + pic->rect.stride * y, row);
    }
}

static void test_lz4_round_trip(void)
{
    static const struct { uint32_t w, h, pad; } sizes[] = {
        { 1, 1, 0 }, { 64, 64, 0 }, { 100, 37, 5 }, { 1920, 136, 0 },
        { 640, 480, 16 }, { 16384, 3, 0 },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        Picture pic;
        g_autoptr(GByteArray) out = g_byte_array_new();

        picture_init(&pic, sizes[i].w, sizes[i].h, sizes[i].pad, FALSE, 2);
        /* Even one pixel pays: the LZ4 header is smaller than BITMAP's. */
        g_assert_true(qs_image_lz4_append(&pic.rect, 0x1122334455667788ull, out));
        g_assert_cmpuint(out->len, <, qs_image_bitmap_size(sizes[i].w, sizes[i].h));
        check_lz4_round_trip(&pic, out);
        g_free(pic.buf);
    }
}

/* Noise does not compress: the dispatcher must fall back to BITMAP, keep what
 * was already in `out`, and stay within the bitmap size. */
static void test_fallback_on_noise(void)
{
    Picture pic;
    g_autoptr(GByteArray) out = g_byte_array_new();
    QsImageCodec used;

    picture_init(&pic, 256, 200, 4, TRUE, 3);
    g_byte_array_append(out, (const guint8 *)"head", 4);
    used = qs_image_append(QS_IMAGE_CODEC_LZ4, &pic.rect, 0x1122334455667788ull, out);
    g_assert_cmpint(used, ==, QS_IMAGE_CODEC_BITMAP);
    g_assert_cmpmem(out->data, 4, "head", 4);
    g_assert_cmpuint(out->len, ==, 4 + qs_image_bitmap_size(256, 200));
    g_assert_cmpuint(out->data[4 + 8], ==, SPICE_IMAGE_TYPE_BITMAP);
    g_free(pic.buf);
}

static void test_dispatch_lz4(void)
{
    Picture pic;
    g_autoptr(GByteArray) out = g_byte_array_new();

    picture_init(&pic, 300, 90, 0, FALSE, 4);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_LZ4, &pic.rect,
                                    0x1122334455667788ull, out), ==, QS_IMAGE_CODEC_LZ4);
    check_lz4_round_trip(&pic, out);
    g_byte_array_set_size(out, 0);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_BITMAP, &pic.rect,
                                    0x1122334455667788ull, out), ==, QS_IMAGE_CODEC_BITMAP);
    g_assert_cmpuint(out->len, ==, qs_image_bitmap_size(300, 90));
    g_free(pic.buf);
}

static void test_rect_validation(void)
{
    uint8_t px[64] = { 0 };
    QsPixelRect ok = { px, 16, 4, 4 };
    QsPixelRect bad_stride = { px, 12, 4, 4 };
    QsPixelRect empty = { px, 16, 0, 4 };
    QsPixelRect huge = { px, 4 * 20000, 20000, 1 };

    g_assert_true(qs_pixel_rect_valid(&ok));
    g_assert_false(qs_pixel_rect_valid(&bad_stride));
    g_assert_false(qs_pixel_rect_valid(&empty));
    g_assert_false(qs_pixel_rect_valid(&huge));
    g_assert_false(qs_pixel_rect_valid(NULL));
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/image/bitmap/layout", test_bitmap_layout);
    g_test_add_func("/channels/image/lz4/round-trip", test_lz4_round_trip);
    g_test_add_func("/channels/image/lz4/fallback-on-noise", test_fallback_on_noise);
    g_test_add_func("/channels/image/dispatch/lz4-and-bitmap", test_dispatch_lz4);
    g_test_add_func("/channels/image/rect/validation", test_rect_validation);
    return g_test_run();
}
