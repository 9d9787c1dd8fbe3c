/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Fuzz target: an input is a sequence of producer calls with arbitrary
 * arguments and pixels; the screen must never crash, refused calls must
 * change nothing, and pixels, damage and heat must match a simple model. */

#include "qs-screen.h"

#include <stdlib.h>
#include <string.h>

#define SIDE_LIMIT 72           /* model surfaces stay small (and runs fast) */
#define MAX_CALLS 16
#define MAX_PIXELS (1u << 16)   /* bytes of pixel data per call: enough */

/* Stops with the failed condition named, so a crash input explains itself. */
#define CHECK(cond)                                                       \
    do {                                                                  \
        if (!(cond)) {                                                    \
            g_error("fuzz-screen-args: check failed: %s", #cond);        \
        }                                                                 \
    } while (0)

typedef struct {
    const uint8_t *data;
    size_t size, pos;
} Input;

static uint32_t get_u8(Input *in)
{
    return in->pos < in->size ? in->data[in->pos++] : 0;
}

static uint32_t get_u16(Input *in)
{
    uint32_t lo = get_u8(in);

    return lo | get_u8(in) << 8;
}

static uint32_t get_u32(Input *in)
{
    uint32_t lo = get_u16(in);

    return lo | get_u16(in) << 16;
}

/* A side: usually small (0 included, which must be refused), sometimes a
 * value that validation must refuse without allocating anything. */
static uint32_t get_side(Input *in)
{
    static const uint32_t bad[] = { QS_SCREEN_MAX_SIDE + 1, UINT32_MAX,
                                    0x80000000u, 0 };
    uint32_t sel = get_u8(in);

    if (sel == 0xff) {
        return bad[get_u8(in) % 4];
    }
    return (sel | get_u8(in) << 8) % SIDE_LIMIT;
}

static int32_t get_coord(Input *in)
{
    uint32_t sel = get_u8(in);

    if (sel == 0xff) {
        return (int32_t)get_u32(in);
    }
    return (int32_t)((sel | get_u8(in) << 8) % (SIDE_LIMIT + 20)) - 10;
}

static uint32_t get_format(Input *in)
{
    uint32_t sel = get_u8(in);

    return sel < 120 ? QS_PIXMAN_X8R8G8B8 :
           sel < 240 ? QS_PIXMAN_A8R8G8B8 : get_u32(in);
}

/* A stride near the row size (some odd), or anything. */
static uint32_t get_stride(Input *in, uint32_t width)
{
    uint32_t sel = get_u8(in);

    if (sel == 0xff) {
        return get_u32(in);
    }
    return width * 4 + (sel % 16) * 4 - 8 + (sel & 0x80 ? 1 : 0);
}

/* Bytes of data for `want`: what is needed, or a few short of it. */
static size_t get_len(Input *in, uint64_t want)
{
    uint64_t len = MIN(want, MAX_PIXELS);
    uint64_t shorter = get_u8(in) % 8;

    return len - MIN(shorter, len);
}

/* The pixels, in a buffer of exactly `len` bytes so the sanitizer sees any
 * read past it: a seed, a count of bytes (at most 63) taken from the input,
 * then a pattern from the seed. */
static uint8_t *get_pixels(Input *in, size_t len)
{
    uint8_t *buf = malloc(len ? len : 1);
    uint32_t seed = get_u32(in);
    size_t raw = get_u8(in) % 64;

    CHECK(buf);
    for (size_t i = 0; i < len; i++) {
        buf[i] = i < raw ? (uint8_t)get_u8(in) :
                 (uint8_t)(((i * 2654435761u) >> 13) ^ seed);
    }
    return buf;
}

/* The model: what the screen must hold. */
typedef struct {
    gboolean enabled;
    gboolean new_surface;   /* since the last check */
    uint32_t w, h;
    uint32_t *px;
} Model;

static void model_copy(Model *m, int32_t x, int32_t y, int32_t w, int32_t h,
                       const uint8_t *src, size_t stride)
{
    for (int32_t r = 0; r < h; r++) {
        for (int32_t c = 0; c < w; c++) {
            uint32_t v;

            memcpy(&v, src + (size_t)r * stride + (size_t)c * 4, 4);
            m->px[(size_t)(y + r) * m->w + x + c] = v & 0x00ffffffu;
        }
    }
}

static void model_new(Model *m, uint32_t w, uint32_t h)
{
    free(m->px);
    m->enabled = TRUE;
    m->new_surface = TRUE;
    m->w = w;
    m->h = h;
    m->px = calloc((size_t)w * h, 4);
    CHECK(m->px);
}

/* Whether block bx,by has a pixel that differs between a and b. */
static gboolean block_differs(const Model *m, const uint32_t *a,
                              const uint32_t *b, uint32_t bx, uint32_t by)
{
    for (uint32_t y = by * 16; y < MIN(m->h, by * 16 + 16); y++) {
        for (uint32_t x = bx * 16; x < MIN(m->w, bx * 16 + 16); x++) {
            if (a[(size_t)y * m->w + x] != b[(size_t)y * m->w + x]) {
                return TRUE;
            }
        }
    }
    return FALSE;
}

static void check_heat(const QsScreenHeat *heat, const Model *m)
{
    uint32_t bx_n = (m->w + 15) / 16, by_n = (m->h + 15) / 16;

    CHECK(heat->blocks_x == bx_n && heat->blocks_y == by_n);
    for (uint32_t b = 0; b < bx_n * by_n; b++) {
        const QsRect *r = &heat->changed[b];
        int32_t bx = (int32_t)(b % bx_n) * 16, by = (int32_t)(b / bx_n) * 16;

        CHECK(heat->counts[b] <= 255 * QS_SCREEN_HEAT_BUCKETS);
        CHECK(!heat->hot[b] || heat->counts[b] >= QS_SCREEN_HEAT_HOT_COUNT);
        CHECK(r->width == 0 ||
              (r->x >= bx && r->y >= by && r->width > 0 && r->height > 0 &&
               r->x + r->width <= MIN(bx + 16, (int32_t)m->w) &&
               r->y + r->height <= MIN(by + 16, (int32_t)m->h)));
    }
}

/* Takes the damage and checks it, the pixels and the heat against the
 * model; `before` holds the pixels at the previous check. There is one call
 * between two checks, so no change can have been undone: the damage must be
 * exactly the blocks that differ. */
static void check(QsScreen *screen, QsScreenWatch *watch, Model *m,
                  uint32_t **before, int64_t now)
{
    g_autoptr(QsScreenDamage) d = qs_screen_watch_take(watch);
    g_autoptr(QsScreenHeat) heat = qs_screen_heat_snapshot(screen, now);
    uint32_t bx_n = (m->w + 15) / 16, by_n = (m->h + 15) / 16;
    QsScreenInfo info;
    uint32_t *got;

    qs_screen_get_info(screen, &info);
    CHECK(info.enabled == m->enabled);
    /* A new surface, and only then, shows in the damage. */
    CHECK(m->new_surface == (d && d->new_surface));
    m->new_surface = FALSE;
    if (!m->enabled) {
        CHECK(!heat->hot && (!d || (!d->enabled && !d->damaged)));
        g_clear_pointer(before, free);
        return;
    }
    CHECK(info.width == m->w && info.height == m->h);
    got = malloc((size_t)m->w * m->h * 4);
    CHECK(got);
    CHECK(qs_screen_read(screen, info.serial,
                         &(QsRect){ 0, 0, (int32_t)m->w, (int32_t)m->h },
                         (uint8_t *)got, m->w * 4, NULL));
    CHECK(memcmp(got, m->px, (size_t)m->w * m->h * 4) == 0);
    if (d && d->new_surface) {
        CHECK(d->enabled && d->n_damaged == bx_n * by_n);
    } else {
        CHECK(*before);
        CHECK(!d || (d->blocks_x == bx_n && d->blocks_y == by_n));
        for (uint32_t by = 0; by < by_n; by++) {
            for (uint32_t bx = 0; bx < bx_n; bx++) {
                CHECK(block_differs(m, *before, got, bx, by) ==
                      (d && d->damaged[by * bx_n + bx]));
            }
        }
    }
    check_heat(heat, m);
    free(*before);
    *before = got;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    Input in = { data, size, 0 };
    QsScreen *screen = qs_screen_new();
    QsScreenWatch *watch = qs_screen_watch_new(screen);
    Model m = { .new_surface = TRUE };  /* a first take reports the state */
    uint32_t *before = NULL;
    int64_t now = 0;

    for (int calls = 0; in.pos < in.size && calls < MAX_CALLS; calls++) {
        uint32_t op = get_u8(&in) % 5;
        GError *error = NULL;
        gboolean ok = FALSE;

        now += get_u16(&in) * 16;
        if (op == 0) {
            uint32_t w = get_side(&in), h = get_side(&in);
            uint32_t stride = get_stride(&in, w), fmt = get_format(&in);
            size_t len = get_len(&in, (uint64_t)stride * h);
            uint8_t *px = get_pixels(&in, len);

            ok = qs_screen_scanout(screen, w, h, stride, fmt, px, len, now,
                                   &error);
            if (ok) {
                if (!m.enabled || m.w != w || m.h != h) {
                    model_new(&m, w, h);
                }
                model_copy(&m, 0, 0, w, h, px, stride);
            }
            free(px);
        } else if (op == 1) {
            int32_t x = get_coord(&in), y = get_coord(&in);
            int32_t w = get_coord(&in), h = get_coord(&in);
            uint32_t stride = get_stride(&in, w > 0 ? w : 1);
            uint32_t fmt = get_format(&in);
            size_t len = get_len(&in, (uint64_t)stride * (h > 0 ? h : 1));
            uint8_t *px = get_pixels(&in, len);

            ok = qs_screen_update(screen, x, y, w, h, stride, fmt, px, len,
                                  now, &error);
            if (ok) {
                model_copy(&m, x, y, w, h, px, stride);
            }
            free(px);
        } else if (op == 2) {
            /* Usually a map of the surface's size, sometimes not. */
            uint32_t mw = get_u8(&in) < 240 ? m.w : get_side(&in);
            uint32_t mh = get_u8(&in) < 240 ? m.h : get_side(&in);
            uint32_t stride = get_stride(&in, mw), fmt = get_format(&in);
            int32_t x = get_coord(&in), y = get_coord(&in);
            int32_t w = get_coord(&in), h = get_coord(&in);
            size_t len = get_len(&in, (uint64_t)stride * mh);
            uint8_t *px = get_pixels(&in, len);

            ok = qs_screen_update_from_map(screen, px, len, mw, mh, stride,
                                           fmt, x, y, w, h, now, &error);
            if (ok) {
                model_copy(&m, x, y, w, h,
                           px + (size_t)y * stride + (size_t)x * 4, stride);
            }
            free(px);
        } else if (op == 3) {
            uint32_t w = get_side(&in), h = get_side(&in);

            ok = qs_screen_resize(screen, w, h, now, &error);
            if (ok && (!m.enabled || m.w != w || m.h != h)) {
                model_new(&m, w, h);
            }
        } else {
            qs_screen_disable(screen);
            m.new_surface |= m.enabled;
            m.enabled = FALSE;
            ok = TRUE;
        }
        /* Exactly one of: success, or an error. */
        CHECK(ok == (error == NULL));
        g_clear_error(&error);
        check(screen, watch, &m, &before, now);
    }
    free(before);
    free(m.px);
    qs_screen_watch_free(watch);
    qs_screen_free(screen);
    return 0;
}
