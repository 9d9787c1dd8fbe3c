/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Small helpers shared by the screen unit tests: buffers and checks. */
#pragma once

#include "qs-screen.h"

#include <string.h>

#define XRGB QS_PIXMAN_X8R8G8B8
#define ARGB QS_PIXMAN_A8R8G8B8

/* A w x h image with rows `stride` bytes apart, pixels from `seed`. */
static inline uint8_t *make_image(uint32_t w, uint32_t h, uint32_t stride,
                                  uint32_t seed)
{
    uint8_t *buf = g_malloc0((size_t)stride * h);

    for (uint32_t y = 0; y < h; y++) {
        for (uint32_t x = 0; x < w; x++) {
            uint32_t v = (x * 2654435761u) ^ (y * 40503u) ^ seed;

            v = v * 2246822519u + seed;
            memcpy(buf + (size_t)y * stride + x * 4, &v, 4);
        }
    }
    return buf;
}

static inline uint32_t pixel_at(const uint8_t *buf, uint32_t stride,
                                uint32_t x, uint32_t y)
{
    uint32_t v;

    memcpy(&v, buf + (size_t)y * stride + x * 4, 4);
    return v;
}

static inline void set_pixel(uint8_t *buf, uint32_t stride, uint32_t x,
                             uint32_t y, uint32_t v)
{
    memcpy(buf + (size_t)y * stride + x * 4, &v, 4);
}

/* Reads the whole surface. */
static inline uint32_t *read_all(QsScreen *screen)
{
    QsScreenInfo info;
    g_autoptr(GError) error = NULL;
    uint32_t *out;

    qs_screen_get_info(screen, &info);
    g_assert_true(info.enabled);
    out = g_new(uint32_t, (size_t)info.width * info.height);
    g_assert_true(qs_screen_read(screen, info.serial,
                                 &(QsRect){ 0, 0, (int32_t)info.width,
                                                  (int32_t)info.height },
                                 (uint8_t *)out, info.width * 4, &error));
    g_assert_no_error(error);
    return out;
}

/* The surface equals `img` (rows `stride` apart) with the X byte cleared. */
static inline void assert_screen_is(QsScreen *screen, const uint8_t *img,
                                    uint32_t stride)
{
    QsScreenInfo info;
    g_autofree uint32_t *got = read_all(screen);

    qs_screen_get_info(screen, &info);
    for (uint32_t y = 0; y < info.height; y++) {
        for (uint32_t x = 0; x < info.width; x++) {
            uint32_t want = pixel_at(img, stride, x, y) & 0x00ffffffu;

            if (got[(size_t)y * info.width + x] != want) {
                g_error("pixel %u,%u: 0x%08x, want 0x%08x", x, y,
                        got[(size_t)y * info.width + x], want);
            }
        }
    }
}
