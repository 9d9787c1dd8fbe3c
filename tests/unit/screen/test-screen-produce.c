/* SPDX-License-Identifier: GPL-2.0-or-later */
/* Unit tests of the screen's producer side: argument checks, pixel copies,
 * formats, change detection, resize and disable. */

#include "screen-test-util.h"
#include "../test-cpu-time.h"

#define T0 10000000 /* fake clock start, us */

/* A screen with a w x h scanout of image `seed`. */
static QsScreen *screen_with(uint32_t w, uint32_t h, uint32_t seed)
{
    QsScreen *screen = qs_screen_new();
    g_autofree uint8_t *img = make_image(w, h, w * 4, seed);
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_screen_scanout(screen, w, h, w * 4, XRGB, img,
                                    (size_t)w * h * 4, T0, &error));
    g_assert_no_error(error);
    return screen;
}

/* Runs after a refused call: the call must have changed nothing. */
typedef struct {
    QsScreenInfo info;
    uint32_t *pixels;
} Snapshot;

static void snap(QsScreen *screen, Snapshot *s)
{
    qs_screen_get_info(screen, &s->info);
    s->pixels = s->info.enabled ? read_all(screen) : NULL;
}

static void assert_unchanged(QsScreen *screen, Snapshot *s)
{
    QsScreenInfo now;

    qs_screen_get_info(screen, &now);
    g_assert_cmpuint(now.serial, ==, s->info.serial);
    g_assert_cmpuint(now.commits, ==, s->info.commits);
    g_assert_cmpuint(now.width, ==, s->info.width);
    g_assert_cmpuint(now.height, ==, s->info.height);
    if (s->pixels) {
        g_autofree uint32_t *px = read_all(screen);

        g_assert_cmpmem(px, (size_t)now.width * now.height * 4, s->pixels,
                        (size_t)now.width * now.height * 4);
    }
    g_clear_pointer(&s->pixels, g_free);
}

#define EXPECT_FAIL(screen, code, call)                                   \
    do {                                                                  \
        g_autoptr(GError) err_ = NULL;                                    \
        Snapshot snap_;                                                   \
        GError **error = &err_;                                           \
        snap((screen), &snap_);                                           \
        g_assert_false(call);                                             \
        g_assert_error(err_, QS_SCREEN_ERROR, (code));                    \
        assert_unchanged((screen), &snap_);                               \
    } while (0)

static void test_validate_no_surface(void)
{
    g_autoptr(QsScreen) screen = qs_screen_new();
    uint8_t px[64] = { 0 };

    EXPECT_FAIL(screen, QS_SCREEN_ERROR_NO_SURFACE,
                qs_screen_update(screen, 0, 0, 1, 1, 4, XRGB, px, 4, T0,
                                 error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_NO_SURFACE,
                qs_screen_update_from_map(screen, px, 64, 4, 4, 16, XRGB, 0,
                                          0, 1, 1, T0, error));
    qs_screen_disable(screen);
}

static void test_validate_sizes(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 48, 1);
    uint8_t px[64] = { 0 };

    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, 0, 4, 16, XRGB, px, 64, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, 4, 0, 16, XRGB, px, 64, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, QS_SCREEN_MAX_SIDE + 1, 1,
                                  UINT32_MAX, XRGB, px, 64, T0, error));
    /* Both sides allowed, the area not. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, QS_SCREEN_MAX_SIDE,
                                  QS_SCREEN_MAX_SIDE, QS_SCREEN_MAX_SIDE * 4,
                                  XRGB, px, 64, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_resize(screen, 0, 10, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_resize(screen, 10, QS_SCREEN_MAX_SIDE + 1, T0,
                                 error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 0, 1, 4, XRGB, px, 64, T0,
                                 error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 1, -1, 4, XRGB, px, 64, T0,
                                 error));
}

static void test_validate_rect(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 48, 1);
    g_autofree uint8_t *px = make_image(64, 48, 256, 2);
    size_t size = 256 * 48;

    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, -1, 0, 4, 4, 16, XRGB, px, size, T0,
                                 error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, -16, 4, 4, 16, XRGB, px, size,
                                 T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 61, 0, 4, 4, 16, XRGB, px, size, T0,
                                 error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 45, 4, 4, 16, XRGB, px, size, T0,
                                 error));
    /* x + width overflows int32. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, INT32_MAX, 0, INT32_MAX, 1, 16, XRGB,
                                 px, size, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 1, 1, 64, 1, 256, XRGB, px, size, T0,
                                 error));
    /* The same rectangle from a map. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update_from_map(screen, px, size, 64, 48, 256, XRGB,
                                          60, 40, 8, 8, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update_from_map(screen, px, size, 64, 48, 256, XRGB,
                                          -8, 0, 8, 8, T0, error));
}

static void test_validate_buffer(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 48, 1);
    g_autofree uint8_t *px = make_image(64, 48, 256, 2);

    /* Stride too small. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, 64, 48, 252, XRGB, px, 256 * 48, T0,
                                  error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 8, 8, 31, XRGB, px, 256 * 48,
                                 T0, error));
    /* One byte short of the last row. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 8, 8, 32, XRGB, px,
                                 32 * 7 + 31, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, 64, 48, 256, XRGB, px,
                                  256 * 47 + 255, T0, error));
    /* No data at all. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 8, 8, 32, XRGB, NULL, 0, T0,
                                 error));
    /* stride * height far beyond 32 bits, tiny data. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_scanout(screen, 16384, 4096, UINT32_MAX, XRGB, px,
                                  256 * 48, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 64, 48, UINT32_MAX, XRGB, px,
                                 256 * 48, T0, error));
    /* A map whose size does not cover its rows, or of another size. */
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update_from_map(screen, px, 256 * 40, 64, 48, 256,
                                          XRGB, 0, 0, 8, 8, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update_from_map(screen, px, 256 * 48, 64, 47, 256,
                                          XRGB, 0, 0, 8, 8, T0, error));
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update_from_map(screen, px, 256 * 48, 64, 48, 200,
                                          XRGB, 0, 0, 8, 8, T0, error));
}

static void test_validate_format(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 48, 1);
    g_autofree uint8_t *px = make_image(64, 48, 256, 2);
    static const uint32_t bad[] = {
        0, 0x20020565u /* r5g6b5 */, 0x20010888u, 0x18020888u /* 24bpp */,
        0x20038888u /* a8b8g8r8 */, UINT32_MAX,
    };

    for (size_t i = 0; i < G_N_ELEMENTS(bad); i++) {
        EXPECT_FAIL(screen, QS_SCREEN_ERROR_UNSUPPORTED,
                    qs_screen_scanout(screen, 64, 48, 256, bad[i], px,
                                      256 * 48, T0, error));
        EXPECT_FAIL(screen, QS_SCREEN_ERROR_UNSUPPORTED,
                    qs_screen_update(screen, 0, 0, 8, 8, 256, bad[i], px,
                                     256 * 48, T0, error));
        EXPECT_FAIL(screen, QS_SCREEN_ERROR_UNSUPPORTED,
                    qs_screen_update_from_map(screen, px, 256 * 48, 64, 48,
                                              256, bad[i], 0, 0, 8, 8, T0,
                                              error));
    }
}

static void test_copy_scanout(void)
{
    g_autoptr(QsScreen) screen = qs_screen_new();
    g_autoptr(GError) error = NULL;
    /* Padded rows, and an odd address, as a D-Bus byte array can be. */
    g_autofree uint8_t *raw = g_malloc(300 * 37 + 1);
    g_autofree uint8_t *img = make_image(70, 37, 300, 7);

    memcpy(raw + 1, img, 300 * 37);
    g_assert_true(qs_screen_scanout(screen, 70, 37, 300, XRGB, raw + 1,
                                    300 * 36 + 280, T0, &error));
    g_assert_no_error(error);
    assert_screen_is(screen, img, 300);
}

static void test_copy_update(void)
{
    g_autoptr(QsScreen) screen = screen_with(100, 60, 1);
    g_autofree uint8_t *expect = make_image(100, 60, 400, 1);
    g_autofree uint8_t *rect = make_image(33, 21, 33 * 4, 9);
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_screen_update(screen, 45, 17, 33, 21, 33 * 4, XRGB, rect,
                                   33 * 21 * 4, T0 + 1000, &error));
    g_assert_no_error(error);
    for (uint32_t y = 0; y < 21; y++) {
        memcpy(expect + (size_t)(17 + y) * 400 + 45 * 4, rect + y * 33 * 4,
               33 * 4);
    }
    assert_screen_is(screen, expect, 400);
}

static void test_copy_map(void)
{
    g_autoptr(QsScreen) screen = screen_with(100, 60, 1);
    g_autofree uint8_t *expect = make_image(100, 60, 400, 1);
    g_autofree uint8_t *map = make_image(100, 60, 512, 3);
    g_autoptr(GError) error = NULL;

    g_assert_true(qs_screen_update_from_map(screen, map, 512 * 60, 100, 60,
                                            512, ARGB, 3, 50, 90, 10,
                                            T0 + 1000, &error));
    g_assert_no_error(error);
    for (uint32_t y = 50; y < 60; y++) {
        memcpy(expect + (size_t)y * 400 + 3 * 4, map + (size_t)y * 512 + 3 * 4,
               90 * 4);
    }
    assert_screen_is(screen, expect, 400);
}

/* The guest writes the shared map while we copy from it. Whatever we
 * stored, the damage must cover every pixel that changed: we compare what
 * we copied, and store exactly that. */
typedef struct {
    uint8_t *map;
    size_t len;
    gint stop;
} Scribbler;

/* Flips one pixel in each of a few blocks between two values as fast as it
 * can: a copy that read the map twice (once to compare, once to store)
 * would store a flip it never reported. */
static gpointer scribble(gpointer data)
{
    Scribbler *sc = data;
    static const size_t spots[] = { 0, 512 * 20 + 40 * 4, 512 * 50 + 100 * 4,
                                    512 * 95 + 127 * 4 };

    while (!g_atomic_int_get(&sc->stop)) {
        for (uint32_t v = 0; v < 2; v++) {
            for (size_t k = 0; k < G_N_ELEMENTS(spots); k++) {
                /* volatile: a guest's write, unseen by the compiler here. */
                *(volatile uint32_t *)(sc->map + spots[k]) = v ? 0xffffff : 0;
            }
        }
    }
    return NULL;
}

static void test_copy_map_racing(void)
{
    g_autoptr(QsScreen) screen = screen_with(128, 96, 1);
    g_autoptr(QsScreenWatch) watch = qs_screen_watch_new(screen);
    g_autoptr(QsScreenDamage) first = qs_screen_watch_take(watch);
    Scribbler sc = { make_image(128, 96, 512, 2), 512 * 96, 0 };
    GThread *writer = g_thread_new("guest", scribble, &sc);
    uint32_t changed = 0;

    g_assert_true(first->new_surface);
    int64_t deadline = g_get_monotonic_time() + 10 * G_USEC_PER_SEC;

    /* 2000 copies, and more until the writer has raced some (a loaded
     * machine may not run it at once). */
    for (int i = 0; i < 2000 || (changed < 100 &&
                                 g_get_monotonic_time() < deadline); i++) {
        g_autofree uint32_t *before = read_all(screen);
        g_autofree uint32_t *after = NULL;
        g_autoptr(QsScreenDamage) d = NULL;
        g_autoptr(GError) error = NULL;

        g_assert_true(qs_screen_update_from_map(screen, sc.map, sc.len, 128,
                                                96, 512, XRGB, 0, 0, 128, 96,
                                                T0 + i * 1000, &error));
        after = read_all(screen);
        d = qs_screen_watch_take(watch);
        for (uint32_t p = 0; p < 128 * 96; p++) {
            uint32_t b = (p / 128 / 16) * 8 + (p % 128) / 16;

            if (before[p] != after[p]) {
                g_assert_nonnull(d);
                g_assert_cmpuint(d->damaged[b], ==, 1);
                changed++;
            }
        }
    }
    g_atomic_int_set(&sc.stop, 1);
    g_thread_join(writer);
    g_free(sc.map);
    /* The writer really raced the copies. */
    g_assert_cmpuint(changed, >, 0);
}

/* a8r8g8b8 is stored as x8r8g8b8, and neither alpha nor padding is change. */
static void test_copy_alpha(void)
{
    g_autoptr(QsScreen) screen = qs_screen_new();
    g_autofree uint8_t *img = make_image(32, 32, 128, 5);
    g_autoptr(QsScreenWatch) watch = qs_screen_watch_new(screen);
    g_autoptr(QsScreenDamage) first = NULL;
    g_autoptr(GError) error = NULL;
    QsScreenInfo before, after;

    g_assert_true(qs_screen_scanout(screen, 32, 32, 128, ARGB, img, 128 * 32,
                                    T0, &error));
    assert_screen_is(screen, img, 128);
    first = qs_screen_watch_take(watch);
    g_assert_nonnull(first);
    for (uint32_t i = 3; i < 128 * 32; i += 4) {
        img[i] ^= 0x5a;  /* the top byte of every native-endian pixel... */
    }
    if (G_BYTE_ORDER == G_BIG_ENDIAN) {
        g_test_skip("not applicable here: the check flips the top byte of a little-endian pixel");
        return;
    }
    qs_screen_get_info(screen, &before);
    g_assert_true(qs_screen_scanout(screen, 32, 32, 128, XRGB, img, 128 * 32,
                                    T0 + 1000, &error));
    g_assert_true(qs_screen_update(screen, 0, 0, 32, 32, 128, ARGB, img,
                                   128 * 32, T0 + 2000, &error));
    g_assert_no_error(error);
    qs_screen_get_info(screen, &after);
    g_assert_cmpuint(after.commits, ==, before.commits);
    g_assert_null(qs_screen_watch_take(watch));
    assert_screen_is(screen, img, 128);
}

/* A full-plane flush with a small change reports only the changed blocks. */
static void test_diff_full_plane(void)
{
    g_autoptr(QsScreen) screen = screen_with(1280, 800, 11);
    g_autoptr(QsScreenWatch) watch = qs_screen_watch_new(screen);
    g_autofree uint8_t *img = make_image(1280, 800, 1280 * 4, 11);
    g_autoptr(QsScreenDamage) all = qs_screen_watch_take(watch);
    g_autoptr(QsScreenDamage) damage = NULL;
    g_autoptr(QsScreenHeat) heat = NULL;
    g_autoptr(GError) error = NULL;
    g_autoptr(GArray) rects = NULL;
    QsRect r;

    g_assert_true(all->new_surface);
    g_assert_cmpuint(all->n_damaged, ==, 80 * 50);
    /* The same frame again: nothing. */
    g_assert_true(qs_screen_scanout(screen, 1280, 800, 1280 * 4, XRGB, img,
                                    1280 * 800 * 4, T0 + 30000, &error));
    g_assert_null(qs_screen_watch_take(watch));
    /* A 3x2 change at 100,200 (block 6,12) and one pixel at 31,16, the last
     * column of block 1,1; flushed as the whole plane. */
    for (uint32_t y = 200; y < 202; y++) {
        for (uint32_t x = 100; x < 103; x++) {
            set_pixel(img, 1280 * 4, x, y, ~pixel_at(img, 1280 * 4, x, y));
        }
    }
    set_pixel(img, 1280 * 4, 31, 16, pixel_at(img, 1280 * 4, 31, 16) ^ 1);
    /* And 2x1 at the start of block 2,3. */
    set_pixel(img, 1280 * 4, 32, 48, pixel_at(img, 1280 * 4, 32, 48) ^ 0x80);
    set_pixel(img, 1280 * 4, 33, 48, pixel_at(img, 1280 * 4, 33, 48) ^ 0x80);
    g_assert_true(qs_screen_scanout(screen, 1280, 800, 1280 * 4, XRGB, img,
                                    1280 * 800 * 4, T0 + 60000, &error));
    g_assert_no_error(error);
    damage = qs_screen_watch_take(watch);
    g_assert_nonnull(damage);
    g_assert_false(damage->new_surface);
    g_assert_cmpuint(damage->n_damaged, ==, 3);
    g_assert_cmpuint(damage->damaged[12 * 80 + 6], ==, 1);
    g_assert_cmpuint(damage->damaged[1 * 80 + 1], ==, 1);
    g_assert_cmpuint(damage->damaged[3 * 80 + 2], ==, 1);
    g_assert_cmpint(damage->newest_us, ==, T0 + 60000);
    rects = qs_screen_damage_rects(damage);
    g_assert_cmpuint(rects->len, ==, 3);
    assert_screen_is(screen, img, 1280 * 4);
    /* The exact changed pixels within the blocks. */
    heat = qs_screen_heat_snapshot(screen, T0 + 60000);
    r = heat->changed[12 * 80 + 6];
    g_assert_cmpint(r.x, ==, 100);
    g_assert_cmpint(r.y, ==, 200);
    g_assert_cmpint(r.width, ==, 3);
    g_assert_cmpint(r.height, ==, 2);
    r = heat->changed[1 * 80 + 1];
    g_assert_cmpint(r.x, ==, 31);
    g_assert_cmpint(r.y, ==, 16);
    g_assert_cmpint(r.width, ==, 1);
    g_assert_cmpint(r.height, ==, 1);
    r = heat->changed[3 * 80 + 2];
    g_assert_cmpint(r.x, ==, 32);
    g_assert_cmpint(r.y, ==, 48);
    g_assert_cmpint(r.width, ==, 2);
    g_assert_cmpint(r.height, ==, 1);
    g_assert_cmpint(heat->changed[0].width, ==, 0);
    g_assert_cmpuint(heat->n_hot, ==, 0);
    /* When: the change, or the surface's creation for untouched blocks. */
    g_assert_cmpint(heat->last_change_us[12 * 80 + 6], ==, T0 + 60000);
    g_assert_cmpint(heat->last_change_us[0], ==, T0);
}

/* qemu 7.2's stale first Scanout: Updates for a larger console are refused
 * until the resize (from the property change) arrives. */
static void test_surface_stale_first_scanout(void)
{
    g_autoptr(QsScreen) screen = screen_with(640, 480, 1);
    g_autofree uint8_t *row = make_image(720, 16, 2880, 4);
    g_autoptr(GError) error = NULL;
    QsScreenInfo a, b;

    qs_screen_get_info(screen, &a);
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_INVALID,
                qs_screen_update(screen, 0, 0, 720, 16, 2880, XRGB, row,
                                 2880 * 16, T0, error));
    g_assert_true(qs_screen_resize(screen, 720, 400, T0, &error));
    qs_screen_get_info(screen, &b);
    g_assert_cmpuint(b.serial, !=, a.serial);
    g_assert_cmpuint(b.width, ==, 720);
    g_assert_cmpuint(b.height, ==, 400);
    for (int32_t y = 0; y < 400; y += 16) {
        g_assert_true(qs_screen_update(screen, 0, y, 720, 16, 2880, XRGB, row,
                                       2880 * 16, T0, &error));
        g_assert_no_error(error);
    }
}

static void test_surface_resize_disable(void)
{
    g_autoptr(QsScreen) screen = screen_with(64, 48, 1);
    g_autoptr(QsScreenWatch) watch = qs_screen_watch_new(screen);
    g_autoptr(QsScreenDamage) d1 = NULL;
    g_autoptr(QsScreenDamage) d2 = NULL;
    g_autoptr(QsScreenDamage) d3 = NULL;
    g_autoptr(GError) error = NULL;
    g_autofree uint8_t *black = g_malloc0(80 * 4 * 50);
    g_autofree uint8_t *img = make_image(80, 50, 320, 2);
    QsScreenInfo a, b;
    uint8_t px[4];

    g_clear_pointer(&d1, qs_screen_damage_free);
    d1 = qs_screen_watch_take(watch);
    qs_screen_get_info(screen, &a);
    /* Same size: kept as is. */
    g_assert_true(qs_screen_resize(screen, 64, 48, T0, &error));
    qs_screen_get_info(screen, &b);
    g_assert_cmpuint(a.serial, ==, b.serial);
    g_assert_null(qs_screen_watch_take(watch));
    /* New size: a black surface, a new serial, everything damaged. */
    g_assert_true(qs_screen_resize(screen, 80, 50, T0, &error));
    qs_screen_get_info(screen, &b);
    g_assert_cmpuint(a.serial, !=, b.serial);
    assert_screen_is(screen, black, 320);
    d2 = qs_screen_watch_take(watch);
    g_assert_true(d2->new_surface);
    g_assert_true(d2->enabled);
    g_assert_cmpuint(d2->n_damaged, ==, 5 * 4);
    g_assert_cmpuint(d2->serial, ==, b.serial);
    /* A read for the old serial is refused. */
    g_assert_false(qs_screen_read(screen, a.serial,
                                  &(QsRect){ 0, 0, 1, 1 }, px, 4,
                                  &error));
    g_assert_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_STALE);
    g_clear_error(&error);
    /* A scanout of the same size is a full-frame update, not a new surface. */
    g_assert_true(qs_screen_scanout(screen, 80, 50, 320, XRGB, img, 320 * 50,
                                    T0, &error));
    qs_screen_get_info(screen, &a);
    g_assert_cmpuint(a.serial, ==, b.serial);
    assert_screen_is(screen, img, 320);
    /* Disable: no surface, a new serial, updates refused. */
    qs_screen_disable(screen);
    qs_screen_get_info(screen, &b);
    g_assert_false(b.enabled);
    g_assert_cmpuint(b.serial, !=, a.serial);
    d3 = qs_screen_watch_take(watch);
    g_assert_true(d3->new_surface);
    g_assert_false(d3->enabled);
    g_assert_cmpuint(d3->n_damaged, ==, 0);
    EXPECT_FAIL(screen, QS_SCREEN_ERROR_NO_SURFACE,
                qs_screen_update(screen, 0, 0, 1, 1, 4, XRGB, img, 4, T0,
                                 error));
    g_assert_false(qs_screen_read(screen, b.serial,
                                  &(QsRect){ 0, 0, 1, 1 }, px, 4,
                                  &error));
    g_assert_error(error, QS_SCREEN_ERROR, QS_SCREEN_ERROR_STALE);
    /* Disabling twice changes nothing more. */
    qs_screen_disable(screen);
    qs_screen_get_info(screen, &a);
    g_assert_cmpuint(a.serial, ==, b.serial);
}

/* CPU per update of the busy guest's activity rectangle (640x480 on a
 * 1280x800 screen), every pixel changed as with the busy guest's noise, and
 * unchanged. The changed updates cycle through eight source images (20 MB),
 * so the source is mostly out of cache, as qemu's buffer is. `-m perf`. */
static void test_bench_apply(void)
{
    enum { W = 1280, H = 800, RW = 640, RH = 480, RX = 624, RY = 160,
           IMAGES = 8, N = 400 };
    g_autoptr(QsScreen) screen = screen_with(W, H, 1);
    uint8_t *src[IMAGES];
    g_autoptr(GError) error = NULL;
    double t0, changed_ms, same_ms;

    for (int i = 0; i < IMAGES; i++) {
        src[i] = make_image(RW, RH, W * 4, 7 + i);
    }
    t0 = qs_test_cpu_now();
    for (int i = 0; i < N; i++) {
        g_assert_true(qs_screen_update(screen, RX, RY, RW, RH, W * 4, XRGB,
                                       src[i % IMAGES], (size_t)W * 4 * RH,
                                       T0 + i, &error));
    }
    changed_ms = (qs_test_cpu_now() - t0) * 1000 / N;
    t0 = qs_test_cpu_now();
    for (int i = 0; i < N; i++) {
        g_assert_true(qs_screen_update(screen, RX, RY, RW, RH, W * 4, XRGB,
                                       src[(N - 1) % IMAGES],
                                       (size_t)W * 4 * RH, T0 + N + i, &error));
    }
    same_ms = (qs_test_cpu_now() - t0) * 1000 / N;
    for (int i = 0; i < IMAGES; i++) {
        g_free(src[i]);
    }
    g_test_minimized_result(changed_ms, "640x480 update, all changed: %.3f ms CPU",
                            changed_ms);
    g_test_minimized_result(same_ms, "640x480 update, unchanged: %.3f ms CPU",
                            same_ms);
}

int main(int argc, char **argv)
{
    g_test_init(&argc, &argv, NULL);
    g_test_add_func("/screen/validate/no-surface", test_validate_no_surface);
    g_test_add_func("/screen/validate/sizes", test_validate_sizes);
    g_test_add_func("/screen/validate/rect", test_validate_rect);
    g_test_add_func("/screen/validate/buffer", test_validate_buffer);
    g_test_add_func("/screen/validate/format", test_validate_format);
    g_test_add_func("/screen/copy/scanout", test_copy_scanout);
    g_test_add_func("/screen/copy/update", test_copy_update);
    g_test_add_func("/screen/copy/map", test_copy_map);
    g_test_add_func("/screen/copy/map-racing", test_copy_map_racing);
    g_test_add_func("/screen/copy/alpha", test_copy_alpha);
    g_test_add_func("/screen/diff/full-plane", test_diff_full_plane);
    g_test_add_func("/screen/surface/stale-first-scanout",
                    test_surface_stale_first_scanout);
    g_test_add_func("/screen/surface/resize-disable",
                    test_surface_resize_disable);
    if (g_test_perf()) {
        g_test_add_func("/screen/bench/apply", test_bench_apply);
    }
    return g_test_run();
}
