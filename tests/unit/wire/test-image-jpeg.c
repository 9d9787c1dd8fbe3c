/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the JPEG SPICE image: framing, TurboJPEG round trip, PSNR and size per quality. */
#include "wire/qs-image-msg.h"
#include "wire/qs-wire.h"

#include <math.h>
#include <spice/enums.h>
#include <string.h>
#include <turbojpeg.h>

/* Smooth "photographic" content: gradients plus a little noise, inside a
 * wider buffer so that stride != width * 4. */
static uint8_t *photo_new(uint32_t w, uint32_t h, uint32_t pad, uint32_t seed,
                          QsPixelRect *rect)
{
    size_t stride = (size_t)(w + pad) * 4;
    uint8_t *buf = g_malloc(stride * h);
    GRand *rand = g_rand_new_with_seed(seed);

    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w + pad; x++) {
            uint8_t *p = buf + stride * y + x * 4;
            int n = (int)g_rand_int_range(rand, -4, 5);

            p[0] = (uint8_t)CLAMP((int)(x * 255 / (w + pad)) + n, 0, 255);
            p[1] = (uint8_t)CLAMP((int)(y * 255 / h) + n, 0, 255);
            p[2] = (uint8_t)CLAMP(128 + (int)(100 * sin((x + y) / 23.0)) + n, 0, 255);
            p[3] = 0xa5;        /* X: must be ignored */
        }
    }
    g_rand_free(rand);
    *rect = (QsPixelRect){ buf, stride, w, h };
    return buf;
}

static double psnr_bgrx(const QsPixelRect *a, const uint8_t *b, size_t b_stride)
{
    double se = 0;
    uint64_t n = 0;

    for (uint32_t y = 0; y < a->height; y++) {
        for (uint32_t x = 0; x < a->width; x++) {
            for (int c = 0; c < 3; c++) {
                double d = (double)a->pixels[a->stride * y + x * 4 + c] -
                           (double)b[b_stride * y + x * 4 + c];
                se += d * d;
                n++;
            }
        }
    }
    return se == 0 ? 99.0 : 10 * log10(255.0 * 255.0 / (se / (double)n));
}

/* Checks the SPICE framing and decodes the JFIF as spice-gtk would. */
static double check_jpeg_image(const QsPixelRect *rect, const GByteArray *out,
                               int expect_subsamp)
{
    const uint8_t *p = out->data;
    uint32_t data_size;
    tjhandle tj = tjInitDecompress();
    int w = 0, h = 0, subsamp = -1, colorspace = -1;
    size_t stride = (size_t)rect->width * 4;
    g_autofree uint8_t *dec = g_malloc(stride * rect->height);
    double psnr;

    g_assert_nonnull(tj);
    g_assert_cmpuint(out->len, >, QS_JPEG_HEADER_SIZE);
    g_assert_cmpuint(qs_wire_get_u64(p), ==, 77);
    g_assert_cmpuint(p[8], ==, SPICE_IMAGE_TYPE_JPEG);
    g_assert_cmpuint(p[9], ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 10), ==, rect->width);
    g_assert_cmpuint(qs_wire_get_u32(p + 14), ==, rect->height);
    data_size = qs_wire_get_u32(p + 18);
    g_assert_cmpuint(data_size, ==, out->len - QS_JPEG_HEADER_SIZE);
    g_assert_cmpuint(p[22], ==, 0xff);      /* SOI */
    g_assert_cmpuint(p[23], ==, 0xd8);

    g_assert_cmpint(tjDecompressHeader3(tj, p + 22, data_size, &w, &h, &subsamp,
                                        &colorspace), ==, 0);
    /* canvas_get_jpeg asserts these equal the descriptor's. */
    g_assert_cmpint(w, ==, (int)rect->width);
    g_assert_cmpint(h, ==, (int)rect->height);
    g_assert_cmpint(subsamp, ==, expect_subsamp);
    g_assert_cmpint(tjDecompress2(tj, p + 22, data_size, dec, w, (int)stride, h,
                                  TJPF_BGRX, 0), ==, 0);
    tjDestroy(tj);
    psnr = psnr_bgrx(rect, dec, stride);
    return psnr;
}

static void test_jpeg_qualities(void)
{
    /* quality, subsampling, minimum PSNR on this content (measured values
     * are printed with --verbose; thresholds sit ~2 dB below them). */
    static const struct { int q; int samp; double min_psnr; } cases[] = {
        { 20, TJSAMP_420, 32.0 },
        { 50, TJSAMP_420, 35.0 },
        { 80, TJSAMP_420, 37.0 },
        { 90, TJSAMP_444, 38.5 },
        { 100, TJSAMP_444, 48.0 },
    };
    QsPixelRect rect;
    g_autofree uint8_t *buf = photo_new(321, 203, 7, 3, &rect);
    size_t prev = 0;

    for (guint i = 0; i < G_N_ELEMENTS(cases); i++) {
        g_autoptr(GByteArray) out = g_byte_array_new();
        double psnr;

        g_assert_true(qs_image_jpeg_append(&rect, 77, cases[i].q, out));
        psnr = check_jpeg_image(&rect, out, cases[i].samp);
        g_test_message("q%d: %u bytes (%.2f bit/px), PSNR %.2f dB", cases[i].q,
                       out->len, out->len * 8.0 / (321 * 203), psnr);
        g_assert_cmpfloat(psnr, >, cases[i].min_psnr);
        /* Sizes grow with quality and stay below the raw bitmap. */
        g_assert_cmpuint(out->len, >, prev);
        g_assert_cmpuint(out->len, <, qs_image_bitmap_size(321, 203));
        prev = out->len;
    }
}

/* An image appended after other bytes keeps them, and the codec switch
 * picks JPEG for photographic content. */
static void test_jpeg_via_switch(void)
{
    QsPixelRect rect;
    g_autofree uint8_t *buf = photo_new(64, 48, 0, 9, &rect);
    g_autoptr(GByteArray) out = g_byte_array_new();
    g_autoptr(GByteArray) image = g_byte_array_new();

    qs_wire_u32(out, 0xdeadbeef);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_JPEG, &rect, 77, out), ==,
                    QS_IMAGE_CODEC_JPEG);
    g_assert_cmpuint(qs_wire_get_u32(out->data), ==, 0xdeadbeef);
    g_byte_array_append(image, out->data + 4, out->len - 4);
    g_assert_cmpfloat(check_jpeg_image(&rect, image, TJSAMP_420), >, 30.0);
    g_assert_cmpstr(qs_image_codec_name(QS_IMAGE_CODEC_JPEG), ==, "jpeg");
}

/* A 1x1 JPEG is bigger than its 40-byte bitmap: the encoder declines,
 * leaves `out` alone, and the switch falls back to BITMAP. */
static void test_jpeg_falls_back(void)
{
    uint32_t px = 0x00123456;
    QsPixelRect rect = { (const uint8_t *)&px, 4, 1, 1 };
    g_autoptr(GByteArray) out = g_byte_array_new();

    qs_wire_u8(out, 1);
    g_assert_false(qs_image_jpeg_append(&rect, 1, 80, out));
    g_assert_cmpuint(out->len, ==, 1);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_JPEG, &rect, 1, out), ==,
                    QS_IMAGE_CODEC_BITMAP);
    g_assert_cmpuint(out->len, ==, 1 + qs_image_bitmap_size(1, 1));
}

/* Odd sizes (MCU padding) and a tall thin strip round-trip. */
static void test_jpeg_odd_sizes(void)
{
    static const uint32_t sizes[][2] = { { 33, 17 }, { 3, 301 }, { 1000, 8 } };

    for (guint i = 0; i < G_N_ELEMENTS(sizes); i++) {
        QsPixelRect rect;
        g_autofree uint8_t *buf = photo_new(sizes[i][0], sizes[i][1], 1, i, &rect);
        g_autoptr(GByteArray) out = g_byte_array_new();

        double psnr;

        g_assert_true(qs_image_jpeg_append(&rect, 77, 85, out));
        psnr = check_jpeg_image(&rect, out, TJSAMP_420);
        g_test_message("%ux%u: PSNR %.2f dB", sizes[i][0], sizes[i][1], psnr);
        /* Steep colour steps across 4 px lose chroma at 4:2:0; a wrong or
         * shifted picture would be near 10 dB. */
        g_assert_cmpfloat(psnr, >, 22.0);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/image/jpeg/qualities", test_jpeg_qualities);
    g_test_add_func("/channels/image/jpeg/via-switch", test_jpeg_via_switch);
    g_test_add_func("/channels/image/jpeg/falls-back", test_jpeg_falls_back);
    g_test_add_func("/channels/image/jpeg/odd-sizes", test_jpeg_odd_sizes);
    return g_test_run();
}
