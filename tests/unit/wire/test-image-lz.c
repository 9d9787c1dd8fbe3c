/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the SPICE LZ image: exact round trips through a strict decoder, edges, bounds; speed beside LZ4 (-m perf). */
#include "wire/qs-image-msg.h"
#include "wire/qs-wire.h"
#include "lz-decode.h"

#include <spice/enums.h>
#include <string.h>

static void check_pixels(const QsPixelRect *rect, const uint8_t *dec)
{
    for (uint32_t y = 0; y < rect->height; y++) {
        for (uint32_t x = 0; x < rect->width; x++) {
            const uint8_t *s = rect->pixels + rect->stride * y + (size_t)x * 4;
            const uint8_t *d = dec + ((size_t)y * rect->width + x) * 4;

            if (memcmp(s, d, 3) != 0) {
                g_error("pixel (%u,%u) differs: %02x%02x%02x became %02x%02x%02x",
                        x, y, s[2], s[1], s[0], d[2], d[1], d[0]);
            }
        }
    }
}

/* The codec alone, without a limit; returns its size. */
static size_t round_trip(const QsPixelRect *rect)
{
    g_autoptr(GByteArray) out = g_byte_array_new();
    g_autofree uint8_t *dec = NULL;

    g_byte_array_append(out, (const guint8 *)"xy", 2);
    g_assert_true(qs_enc_lz_append(rect, G_MAXSIZE, out));
    g_assert_cmpmem(out->data, 2, "xy", 2);
    g_assert_cmpuint(out->len - 2, <=, qs_enc_lz_bound(rect->width, rect->height));
    dec = lz_decode(out->data + 2, out->len - 2, rect->width, rect->height);
    check_pixels(rect, dec);
    return out->len - 2;
}

typedef struct {
    uint8_t *buf;
    QsPixelRect rect;
} Picture;

typedef enum {
    FILL_DESKTOP, FILL_NOISE, FILL_SOLID, FILL_BLOCKS, FILL_TEXT, FILL_PAD_ZERO = 16
} Fill;

/* A rect inside a wider buffer when pad_px > 0 (stride > width * 4). The
 * pad byte of each pixel is random (it is not part of the picture) unless
 * `fill` has FILL_PAD_ZERO, as qemu's surfaces have it. */
static void picture_init(Picture *pic, uint32_t w, uint32_t h, uint32_t pad_px,
                         Fill fill, uint32_t seed)
{
    size_t stride = (size_t)(w + pad_px) * 4;
    GRand *rand = g_rand_new_with_seed(seed);
    uint32_t block = 1 + g_rand_int_range(rand, 1, 9);

    pic->buf = g_malloc(stride * h);
    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w + pad_px; x++) {
            uint32_t v = 0;

            switch (fill & ~FILL_PAD_ZERO) {
            case FILL_DESKTOP:
                /* A banded gradient with "text": rows of short dark marks. */
                v = (x / 16 % 256) | (y / 32 % 256) << 8 | 0x400000;
                if (y % 16 < 10 && (x * 7 + y * 3) % 11 < 4 && (x / 40) % 3 != 2) {
                    v = 0x101010;
                }
                break;
            case FILL_NOISE:
                v = g_rand_int(rand);
                break;
            case FILL_SOLID:
                v = 0x336699;
                break;
            case FILL_TEXT: {
                /* A terminal: 8x16 cells, each one of 96 pseudo-glyphs. */
                uint32_t glyph = ((x / 8) * 2654435761u ^ (y / 16) * 40503u) % 96;
                uint32_t bits = (glyph * 2246822519u ^ (y % 16) * 3266489917u) >> 24;

                v = (y % 16 < 13 && bits >> (x % 8) & 1) ? 0xd0d0d0 : 0x202830;
                break;
            }
            case FILL_BLOCKS:
                v = ((x / block) * 0x01f3a7u) ^ ((y / block) * 0x2b0401u);
                if (g_rand_int_range(rand, 0, 50) == 0) {
                    v = g_rand_int(rand);
                }
                break;
            }
            v = (v & 0xffffff) | (fill & FILL_PAD_ZERO ? 0 : g_rand_int(rand) & 0xff000000u);
            memcpy(pic->buf + stride * y + (size_t)x * 4, &v, 4);
        }
    }
    pic->rect = (QsPixelRect){ pic->buf, stride, w, h };
    g_rand_free(rand);
}

static void test_layout(void)
{
    Picture pic;
    g_autoptr(GByteArray) out = g_byte_array_new();
    g_autofree uint8_t *dec = NULL;
    const uint8_t *p;

    picture_init(&pic, 37, 11, 3, FILL_BLOCKS, 1);
    g_assert_true(qs_image_lz_append(&pic.rect, 0x1122334455667788ull, out));
    p = out->data;
    g_assert_cmpuint(qs_wire_get_u64(p), ==, 0x1122334455667788ull);
    g_assert_cmpuint(p[8], ==, SPICE_IMAGE_TYPE_LZ_RGB);
    g_assert_cmpuint(p[9], ==, 0);
    g_assert_cmpuint(qs_wire_get_u32(p + 10), ==, 37);
    g_assert_cmpuint(qs_wire_get_u32(p + 14), ==, 11);
    /* data_size counts LZ's header and codes, nothing else follows. */
    g_assert_cmpuint(qs_wire_get_u32(p + 18), ==, out->len - 22);
    g_assert_cmpuint(out->len, >=, QS_LZ_HEADER_SIZE);
    dec = lz_decode(p + 22, out->len - 22, 37, 11);
    check_pixels(&pic.rect, dec);
    g_free(pic.buf);
}

/* Sizes no multiple of anything, widths around the near/far distance
 * limit (the pixel above is 8191, 8192 or 9000 back), a single column. */
static void test_sizes(void)
{
    static const struct { uint32_t w, h, pad; } sizes[] = {
        { 1, 1, 0 }, { 2, 1, 0 }, { 1, 200, 0 }, { 3, 5, 1 }, { 7, 13, 0 },
        { 13, 7, 5 }, { 100, 37, 5 }, { 1023, 17, 0 }, { 8191, 3, 0 },
        { 8192, 3, 2 }, { 9000, 3, 0 }, { 16384, 2, 0 },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(sizes); i++) {
        for (Fill f = FILL_DESKTOP; f <= FILL_TEXT; f++) {
            Picture pic;

            picture_init(&pic, sizes[i].w, sizes[i].h, sizes[i].pad, f, (uint32_t)(i * 4 + f));
            round_trip(&pic.rect);
            g_free(pic.buf);
        }
    }
}

/* 256 pixels of noise repeated D pixels later: copies near (D <= 8191), far
 * from 8192 on, and not at all past 73727, the farthest the format reaches. */
static void test_distances(void)
{
    static const uint32_t distances[] = { 8190, 8191, 8192, 8193, 16384, 73727, 73728 };
    const uint32_t w = 16384, h = 6, from = 100;
    Picture pic;
    size_t plain;

    picture_init(&pic, w, h, 0, FILL_NOISE, 7);
    plain = round_trip(&pic.rect);
    for (size_t i = 0; i < G_N_ELEMENTS(distances); i++) {
        g_autofree uint8_t *copy = g_memdup2(pic.buf, (size_t)w * h * 4);
        QsPixelRect rect = { copy, (size_t)w * 4, w, h };
        size_t size;

        memcpy(copy + ((size_t)from + distances[i]) * 4, copy + (size_t)from * 4, 256 * 4);
        size = round_trip(&rect);
        g_test_message("distance %u: %zu bytes, %zu without the copy", distances[i], size, plain);
        if (distances[i] <= 73727) {
            /* 768 literal bytes became a copy of at most 6 bytes, after
             * some literals (noise is probed every 16th pixel, and the
             * hash table may have lost the first ones). */
            g_assert_cmpuint(size, <, plain - 600);
        } else {
            g_assert_cmpuint(size, >, plain - 10);
        }
    }
    g_free(pic.buf);
}

/* A run after one pixel, every length up to 700: lengths below 7 in the
 * control byte, 7 and up with 255-byte extensions (262 = 7 + 255 ends in a
 * zero byte). */
static void test_runs(void)
{
    for (uint32_t len = 0; len <= 700; len++) {
        uint32_t w = len + 2;
        g_autofree uint32_t *px = g_new(uint32_t, w);
        QsPixelRect rect = { (const uint8_t *)px, (size_t)w * 4, w, 1 };
        size_t size;

        px[0] = 0x00abcdef;
        for (uint32_t x = 1; x <= len + 1; x++) {
            px[x] = 0x00123456;
        }
        size = round_trip(&rect);
        /* Header, two literals (7 bytes), one copy: 2 bytes + 1 per 255. */
        if (len >= 1) {
            g_assert_cmpuint(size, <=, 28 + 7 + 3 + len / 255 + 1);
        }
    }
}

/* A solid 1024x768 screen: runs and copies, a few KB. */
static void test_solid(void)
{
    Picture pic;

    picture_init(&pic, 1024, 768, 0, FILL_SOLID, 3);
    g_assert_cmpuint(round_trip(&pic.rect), <, 4096);
    g_free(pic.buf);
}

/* Noise does not compress: LZ stays below the raw size (3 bytes a pixel
 * and a control byte per 32) and within its bound, and a limit below that
 * leaves `out` as it was. */
static void test_noise_and_limit(void)
{
    Picture pic;
    g_autoptr(GByteArray) out = g_byte_array_new();
    size_t size, bound = qs_enc_lz_bound(640, 480);

    picture_init(&pic, 640, 480, 4, FILL_NOISE, 4);
    size = round_trip(&pic.rect);
    g_assert_cmpuint(size, <=, bound);
    g_assert_cmpuint(size, >, bound * 9 / 10);
    g_assert_cmpuint(bound, <, qs_enc_raw_size(640, 480));
    g_byte_array_append(out, (const guint8 *)"head", 4);
    g_assert_false(qs_enc_lz_append(&pic.rect, size, out));
    g_assert_false(qs_enc_lz_append(&pic.rect, 10, out));
    g_assert_cmpuint(out->len, ==, 4);
    g_assert_true(qs_enc_lz_append(&pic.rect, size + 1, out));
    g_assert_cmpuint(out->len, ==, 4 + size);
    g_free(pic.buf);
}

/* The switch: LZ, but BITMAP for a few pixels of noise (LZ's 28-byte
 * header does not pay there); what was in `out` stays. */
static void test_dispatch(void)
{
    Picture pic;
    g_autoptr(GByteArray) out = g_byte_array_new();

    picture_init(&pic, 300, 90, 0, FILL_DESKTOP, 5);
    g_byte_array_append(out, (const guint8 *)"head", 4);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_LZ, &pic.rect, 9, out), ==,
                    QS_IMAGE_CODEC_LZ);
    g_assert_cmpmem(out->data, 4, "head", 4);
    g_assert_cmpuint(out->len - 4, <, qs_image_bitmap_size(300, 90) / 4);
    g_free(pic.buf);

    picture_init(&pic, 1, 1, 0, FILL_NOISE, 6);
    g_byte_array_set_size(out, 0);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_LZ, &pic.rect, 9, out), ==,
                    QS_IMAGE_CODEC_BITMAP);
    g_assert_cmpuint(out->len, ==, qs_image_bitmap_size(1, 1));
    g_assert_cmpstr(qs_image_codec_name(QS_IMAGE_CODEC_LZ), ==, "lz");
    g_free(pic.buf);

    picture_init(&pic, 3, 3, 0, FILL_NOISE, 6);
    g_byte_array_set_size(out, 0);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_LZ, &pic.rect, 9, out), ==,
                    QS_IMAGE_CODEC_BITMAP);
    g_free(pic.buf);

    picture_init(&pic, 8, 8, 0, FILL_NOISE, 6);
    g_byte_array_set_size(out, 0);
    g_assert_cmpint(qs_image_append(QS_IMAGE_CODEC_LZ, &pic.rect, 9, out), ==,
                    QS_IMAGE_CODEC_LZ);
    g_free(pic.buf);
}

/* Random pictures of random sizes: blocks, repeats and noise mixed. */
static void test_random(void)
{
    GRand *rand = g_rand_new_with_seed(20261202);

    for (int i = 0; i < 300; i++) {
        Picture pic;
        uint32_t w = (uint32_t)g_rand_int_range(rand, 1, 400);
        uint32_t h = (uint32_t)g_rand_int_range(rand, 1, 60);

        picture_init(&pic, w, h, (uint32_t)g_rand_int_range(rand, 0, 3),
                     (Fill)g_rand_int_range(rand, 0, 5), g_rand_int(rand));
        round_trip(&pic.rect);
        g_free(pic.buf);
    }
    g_rand_free(rand);
}

/* Figures, not a test (-m perf): MB/s of raw pixels in, on one core; the
 * median and best of the runs in a second, since the machine is shared. */
static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;

    return (x > y) - (x < y);
}

static void measure(const char *what, const QsPixelRect *rect, QsImageCodec codec)
{
    g_autoptr(GByteArray) out = g_byte_array_new();
    g_autoptr(GArray) times = g_array_new(FALSE, FALSE, sizeof(int64_t));
    double raw = (double)qs_enc_raw_size(rect->width, rect->height);
    int64_t t0 = g_get_monotonic_time(), med, best;

    while (g_get_monotonic_time() - t0 < 1000000 || times->len < 5) {
        int64_t t = g_get_monotonic_time();

        g_byte_array_set_size(out, 0);
        if (codec == QS_IMAGE_CODEC_LZ) {
            g_assert_true(qs_enc_lz_append(rect, G_MAXSIZE, out));
        } else {
            (void)qs_enc_lz4_append(rect, G_MAXSIZE, out);
        }
        t = MAX(g_get_monotonic_time() - t, 1);
        g_array_append_val(times, t);
    }
    qsort(times->data, times->len, sizeof(int64_t), cmp_i64);
    med = g_array_index(times, int64_t, times->len / 2);
    best = g_array_index(times, int64_t, 0);
    g_test_message("%s %s 1024x768: %.0f MB/s median, %.0f best (%.2f ms a frame), "
                   "%u bytes (%.1f:1)", what, qs_image_codec_name(codec), raw / (double)med,
                   raw / (double)best, (double)med / 1000, out->len,
                   raw / MAX(out->len, 1));
}

static void test_speed(void)
{
    static const struct { const char *name; Fill fill; } frames[] = {
        { "desktop", FILL_DESKTOP }, { "text", FILL_TEXT }, { "blocks", FILL_BLOCKS },
        { "noise", FILL_NOISE },
    };

    for (size_t i = 0; i < G_N_ELEMENTS(frames); i++) {
        Picture pic;

        picture_init(&pic, 1024, 768, 0, frames[i].fill | FILL_PAD_ZERO, 8);
        measure(frames[i].name, &pic.rect, QS_IMAGE_CODEC_LZ);
        measure(frames[i].name, &pic.rect, QS_IMAGE_CODEC_LZ4);
        g_free(pic.buf);
    }
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/channels/image/lz/layout", test_layout);
    g_test_add_func("/channels/image/lz/sizes", test_sizes);
    g_test_add_func("/channels/image/lz/distances", test_distances);
    g_test_add_func("/channels/image/lz/runs", test_runs);
    g_test_add_func("/channels/image/lz/solid", test_solid);
    g_test_add_func("/channels/image/lz/noise-and-limit", test_noise_and_limit);
    g_test_add_func("/channels/image/lz/dispatch", test_dispatch);
    g_test_add_func("/channels/image/lz/random", test_random);
    if (g_test_perf()) {
        g_test_add_func("/channels/image/lz/speed", test_speed);
    }
    return g_test_run();
}
